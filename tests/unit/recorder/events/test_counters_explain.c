/*
 * test_counters_explain.c - recorder/groupopen.c: perf_event_open failures
 * become messages that name the event, the cause and the fix.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "recorder/events/groupopen.h"

static struct perf_event_attr attr(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	return a;
}

static void unsupported_hardware_names_the_pmu(void **state)
{
	struct perf_event_attr a = attr(PERF_TYPE_HARDWARE, 0);
	char buf[512];

	(void)state;
	rec_groupopen_explain(&a, "cycles", 0, -1, -ENOENT, buf, sizeof(buf));
	assert_string_equal(buf, "cycles: not supported on this host: no "
			    "hardware PMU (VM?)");
	a = attr(PERF_TYPE_HW_CACHE, 0);
	rec_groupopen_explain(&a, "L1-dcache-loads", -1, 2, -EOPNOTSUPP, buf,
			      sizeof(buf));
	assert_non_null(strstr(buf, "L1-dcache-loads: not supported on this "
			       "host: no hardware PMU"));
	a = attr(PERF_TYPE_RAW, 0x1a8);
	rec_groupopen_explain(&a, "r1a8", -1, 0, -ENODEV, buf, sizeof(buf));
	assert_non_null(strstr(buf, "no hardware PMU"));
}

static void unsupported_software_is_not_blamed_on_a_vm(void **state)
{
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, 99);
	char buf[512];

	(void)state;
	rec_groupopen_explain(&a, "weird", 0, -1, -ENOENT, buf, sizeof(buf));
	assert_non_null(strstr(buf, "weird: not supported on this host"));
	assert_null(strstr(buf, "VM"));
}

static void classification(void **state)
{
	(void)state;
	assert_true(rec_groupopen_unsupported(-ENOENT));
	assert_true(rec_groupopen_unsupported(-EOPNOTSUPP));
	assert_true(rec_groupopen_unsupported(-ENODEV));
	assert_false(rec_groupopen_unsupported(-EINVAL));
	assert_false(rec_groupopen_unsupported(-ENOSPC));
	assert_false(rec_groupopen_unsupported(-EACCES));
	assert_false(rec_groupopen_unsupported(-EMFILE));
}

static void refusals_and_limits(void **state)
{
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, 2);
	char buf[512];

	(void)state;
	rec_groupopen_explain(&a, "page-faults", 42, -1, -EACCES, buf,
			      sizeof(buf));
	assert_non_null(strstr(buf, "page-faults (pid 42): permission denied"));
	assert_non_null(strstr(buf, "perf_event_paranoid"));
	assert_non_null(strstr(buf, "CAP_PERFMON"));
	rec_groupopen_explain(&a, "page-faults", -1, 3, -EMFILE, buf,
			      sizeof(buf));
	assert_non_null(strstr(buf, "page-faults (cpu 3): too many open files"));
	assert_non_null(strstr(buf, "ulimit -n"));
	rec_groupopen_explain(&a, "page-faults", 7, -1, -ESRCH, buf,
			      sizeof(buf));
	assert_non_null(strstr(buf, "no such process"));
	rec_groupopen_explain(&a, "instructions", -1, 0, -ENOSPC, buf,
			      sizeof(buf));
	assert_non_null(strstr(buf, "kernel refused the group"));
	assert_non_null(strstr(buf, "split the group"));
	rec_groupopen_explain(&a, "x", -1, 0, -EINVAL, buf, sizeof(buf));
	assert_non_null(strstr(buf, "kernel refused the event"));
	rec_groupopen_explain(&a, "x", -1, 0, -EBUSY, buf, sizeof(buf));
	assert_non_null(strstr(buf, strerror(EBUSY)));
}

static void small_buffer_truncates(void **state)
{
	struct perf_event_attr a = attr(PERF_TYPE_HARDWARE, 0);
	char buf[8];

	(void)state;
	assert_ptr_equal(rec_groupopen_explain(&a, "cycles", 0, -1, -ENOENT,
					       buf, sizeof(buf)), buf);
	assert_string_equal(buf, "cycles:");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unsupported_hardware_names_the_pmu),
		cmocka_unit_test(unsupported_software_is_not_blamed_on_a_vm),
		cmocka_unit_test(classification),
		cmocka_unit_test(refusals_and_limits),
		cmocka_unit_test(small_buffer_truncates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
