/*
 * test_evparse.c - event strings to attrs (recorder/evparse.c).
 *
 * Tracepoints need tracefs and are covered by the kernel tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <string.h>

#include "recorder/events/cpumap.h"
#include "recorder/events/evnames.h"
#include "recorder/events/evparse.h"
#include "lib/logcap.h"

static struct rec_evspecs parse_ok(const char *s)
{
	struct rec_evspecs l = REC_EVSPECS_INIT;
	int ret = rec_evspecs_parse(&l, s);

	if (ret != 0)
		fail_msg("parse '%s' failed: %d %s", s, ret, logcap_err());
	return l;
}

static void parse_fails(const char *s, const char *want_in_err)
{
	struct rec_evspecs l = REC_EVSPECS_INIT;
	int ret = rec_evspecs_parse(&l, s);

	if (ret >= 0)
		fail_msg("parse '%s' should fail", s);
	assert_int_equal(l.n, 0);
	assert_int_equal(l.ngroups, 0);
	if (!strstr(logcap_err(), want_in_err))
		fail_msg("error for '%s' is '%s', wanted '%s' in it", s, logcap_err(), want_in_err);
	rec_evspecs_release(&l);
}

static void test_named(void **state)
{
	struct rec_evspecs l = parse_ok("cpu-clock,page-faults,cs,cycles,task-clock");

	(void)state;
	assert_int_equal(l.n, 5);
	assert_int_equal(l.ev[0].attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(l.ev[0].attr.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_string_equal(l.ev[0].name, "cpu-clock");
	assert_int_equal(l.ev[1].attr.config, PERF_COUNT_SW_PAGE_FAULTS);
	assert_int_equal(l.ev[2].attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(l.ev[2].attr.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	assert_string_equal(l.ev[2].name, "cs");
	assert_int_equal(l.ev[3].attr.type, PERF_TYPE_HARDWARE);
	assert_int_equal(l.ev[3].attr.config, PERF_COUNT_HW_CPU_CYCLES);
	assert_int_equal(l.ev[4].attr.config, PERF_COUNT_SW_TASK_CLOCK);
	for (size_t i = 0; i < l.n; i++) {
		assert_int_equal(l.ev[i].group, -1);
		assert_int_equal(l.ev[i].attr.size, sizeof(struct perf_event_attr));
		assert_false(l.ev[i].tracepoint);
	}
	rec_evspecs_release(&l);
	assert_null(l.ev);
	assert_int_equal(l.n, 0);
}

static void test_hwcache_and_raw(void **state)
{
	struct rec_evspecs l = parse_ok("L1-dcache-load-misses,dTLB-stores,r1a8,rFF");

	(void)state;
	assert_int_equal(l.ev[0].attr.type, PERF_TYPE_HW_CACHE);
	assert_int_equal(l.ev[0].attr.config,
			 PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
			 (PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
	assert_int_equal(l.ev[1].attr.config,
			 PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_WRITE << 8) |
			 (PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16));
	assert_int_equal(l.ev[2].attr.type, PERF_TYPE_RAW);
	assert_int_equal(l.ev[2].attr.config, 0x1a8);
	assert_int_equal(l.ev[3].attr.config, 0xff);
	rec_evspecs_release(&l);
}

static void test_listing(void **state)
{
	char buf[64];
	uint64_t config;
	uint32_t type;
	const char *alias;
	size_t n = 0;

	(void)state;
	while (rec_evnames_hwcache(n, buf, sizeof(buf), &config))
		n++;
	assert_int_equal(n, 7 * 6);
	assert_string_equal(rec_evnames_hwcache(1, buf, sizeof(buf), &config),
			    "L1-dcache-load-misses");
	assert_int_equal(config, 0x10000);
	/* every listed name parses back to the same type and config */
	for (size_t i = 0; rec_evnames_named(i, &type, &config, &alias); i++) {
		const char *name = rec_evnames_named(i, NULL, NULL, NULL);
		struct rec_evspecs l = parse_ok(name);

		assert_int_equal(l.ev[0].attr.type, type);
		assert_int_equal(l.ev[0].attr.config, config);
		rec_evspecs_release(&l);
	}
	for (size_t i = 0; rec_evnames_hwcache(i, buf, sizeof(buf), &config); i++) {
		struct rec_evspecs l = parse_ok(buf);

		assert_int_equal(l.ev[0].attr.type, PERF_TYPE_HW_CACHE);
		assert_int_equal(l.ev[0].attr.config, config);
		rec_evspecs_release(&l);
	}
}

static void test_modifiers(void **state)
{
	struct rec_evspecs l = parse_ok("cpu-clock:u,cpu-clock:k,cpu-clock:uk,cpu-clock:ppD,cpu-clock");

	(void)state;
	assert_int_equal(l.ev[0].attr.exclude_user, 0);
	assert_int_equal(l.ev[0].attr.exclude_kernel, 1);
	assert_int_equal(l.ev[0].attr.exclude_hv, 1);
	assert_int_equal(l.ev[1].attr.exclude_user, 1);
	assert_int_equal(l.ev[1].attr.exclude_kernel, 0);
	assert_int_equal(l.ev[2].attr.exclude_user, 0);
	assert_int_equal(l.ev[2].attr.exclude_kernel, 0);
	assert_int_equal(l.ev[2].attr.exclude_hv, 1);
	assert_int_equal(l.ev[3].attr.precise_ip, 2);
	assert_int_equal(l.ev[3].attr.pinned, 1);
	assert_int_equal(l.ev[4].attr.exclude_user, 0);
	assert_int_equal(l.ev[4].attr.exclude_kernel, 0);
	assert_string_equal(l.ev[0].name, "cpu-clock:u");
	rec_evspecs_release(&l);
}

static void test_groups(void **state)
{
	struct rec_evspecs l = parse_ok("cpu-clock,{task-clock,page-faults}:Su,{cs,minor-faults},dummy");

	(void)state;
	assert_int_equal(l.n, 6);
	assert_int_equal(l.ngroups, 2);
	assert_int_equal(l.ev[0].group, -1);
	assert_int_equal(l.ev[1].group, 0);
	assert_int_equal(l.ev[1].member, 0);
	assert_int_equal(l.ev[2].group, 0);
	assert_int_equal(l.ev[2].member, 1);
	assert_true(l.ev[1].leader_sample);
	/* group modifiers apply to every member */
	assert_int_equal(l.ev[2].attr.exclude_kernel, 1);
	assert_int_equal(l.ev[1].attr.exclude_kernel, 1);
	assert_string_equal(l.groups[0].name, "{task-clock,page-faults}:Su");
	assert_int_equal(l.groups[0].first, 1);
	assert_int_equal(l.groups[0].n, 2);
	assert_true(l.groups[0].leader_sample);
	assert_int_equal(l.ev[3].group, 1);
	assert_int_equal(l.ev[4].member, 1);
	assert_false(l.groups[1].leader_sample);
	assert_int_equal(l.groups[1].first, 3);
	assert_int_equal(l.ev[5].group, -1);
	assert_int_equal(l.ev[5].attr.config, PERF_COUNT_SW_DUMMY);

	/* a second -e appends, group indices continue */
	{

		assert_int_equal(rec_evspecs_parse(&l, "{cs,faults}"), 0);
		assert_int_equal(l.ngroups, 3);
		assert_int_equal(l.ev[6].group, 2);
		assert_int_equal(l.groups[2].first, 6);
	}
	rec_evspecs_release(&l);
}

static void test_pmu(void **state)
{
	/* the software PMU exists on every Linux with perf events */
	struct rec_evspecs l = parse_ok("software/config=3/,software/config=0x2/:u");

	(void)state;
	assert_int_equal(l.ev[0].attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(l.ev[0].attr.config, 3);
	assert_string_equal(l.ev[0].pmu, "software");
	assert_int_equal(l.ev[1].attr.config, 2);
	assert_int_equal(l.ev[1].attr.exclude_kernel, 1);
	rec_evspecs_release(&l);

	/* commas inside a PMU's terms do not split events */
	l = parse_ok("{software/config=1,config1=5/,cs}");
	assert_int_equal(l.n, 2);
	assert_int_equal(l.ev[0].attr.config, 1);
	assert_int_equal(l.ev[0].attr.config1, 5);
	rec_evspecs_release(&l);

	parse_fails("nopmu/config=1/", "unknown PMU 'nopmu'");
	parse_fails("software/bogus=1/", "unknown term 'bogus'");
	parse_fails("software/config=1", "closing '/'");
	parse_fails("software/config=zz/", "bad value 'zz'");
}

static void test_breakpoints(void **state)
{
	struct rec_evspecs l = parse_ok("mem:0x1000,mem:0x2000/8:w,mem:0x3000:x,mem:4096:r:u");

	(void)state;
	assert_int_equal(l.ev[0].attr.type, PERF_TYPE_BREAKPOINT);
	assert_int_equal(l.ev[0].attr.bp_addr, 0x1000);
	assert_int_equal(l.ev[0].attr.bp_type, HW_BREAKPOINT_R | HW_BREAKPOINT_W);
	assert_int_equal(l.ev[0].attr.bp_len, 4);
	assert_int_equal(l.ev[1].attr.bp_addr, 0x2000);
	assert_int_equal(l.ev[1].attr.bp_len, 8);
	assert_int_equal(l.ev[1].attr.bp_type, HW_BREAKPOINT_W);
	assert_int_equal(l.ev[2].attr.bp_type, HW_BREAKPOINT_X);
	assert_int_equal(l.ev[2].attr.bp_len, sizeof(long));
	assert_int_equal(l.ev[3].attr.bp_addr, 4096);
	assert_int_equal(l.ev[3].attr.bp_type, HW_BREAKPOINT_R);
	assert_int_equal(l.ev[3].attr.exclude_kernel, 1);
	rec_evspecs_release(&l);

	parse_fails("mem:zz", "bad breakpoint address 'zz'");
	parse_fails("mem:0x10/3", "bad breakpoint length '3'");
	parse_fails("mem:0x10:rx", "cannot be combined");
}

static void test_errors_point_at_bad_part(void **state)
{
	(void)state;
	parse_fails("cpu-clock,cpu-clok", "unknown event 'cpu-clok'");
	parse_fails("cpu-clock,cpu-clok", "(at 'cpu-clok')");
	parse_fails("cpu-clock:q", "unknown modifier 'q'");
	parse_fails("", "empty event list");
	parse_fails("cpu-clock,", "trailing ','");
	parse_fails(",cpu-clock", "empty event name");
	parse_fails("{cpu-clock,page-faults", "missing its closing '}'");
	parse_fails("cpu-clock}", "unexpected '}'");
	parse_fails("{cpu-clock,{cs}}", "cannot be nested");
	parse_fails("cpu-clock:S", "':S' applies to groups");
	parse_fails("{cpu-clock}:S", "at least two events");
	parse_fails("{}", "empty");
	parse_fails("{cs}x", "':modifiers' after '}'");
	parse_fails("rxyz", "unknown event 'rxyz'");
	parse_fails("r12345678901234567", "unknown event");
}

static void test_failed_parse_keeps_list(void **state)
{
	struct rec_evspecs l = parse_ok("cpu-clock,{cs,faults}");

	(void)state;
	assert_true(rec_evspecs_parse(&l, "task-clock,{page-faults,nope}") < 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.ngroups, 1);
	assert_non_null(strstr(logcap_err(), "'nope'"));
	rec_evspecs_release(&l);
}

static void test_cpumap(void **state)
{
	struct rec_cpumap m = REC_CPUMAP_INIT;

	(void)state;
	assert_int_equal(rec_cpumap_parse(&m, "3,0-2,2,8-9\n"), 0);
	assert_int_equal(m.n, 6);
	assert_int_equal(m.cpu[0], 0);
	assert_int_equal(m.cpu[3], 3);
	assert_int_equal(m.cpu[5], 9);
	assert_int_equal(rec_cpumap_max(&m), 10);
	assert_int_equal(rec_cpumap_index(&m, 8), 4);
	assert_int_equal(rec_cpumap_index(&m, 7), -1);
	rec_cpumap_release(&m);
	assert_int_equal(rec_cpumap_parse(&m, "3-1"), -EINVAL);
	assert_int_equal(rec_cpumap_parse(&m, "a"), -EINVAL);
	assert_int_equal(rec_cpumap_parse(&m, ""), -EINVAL);
	assert_int_equal(rec_cpumap_parse(&m, "1,,2"), -EINVAL);
	assert_int_equal(rec_cpumap_parse(&m, "70000"), -EINVAL);
	assert_int_equal(rec_cpumap_online(&m), 0);
	assert_true(m.n >= 1);
	rec_cpumap_release(&m);
}

int main(void)
{
	logcap_install();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named),
		cmocka_unit_test(test_hwcache_and_raw),
		cmocka_unit_test(test_listing),
		cmocka_unit_test(test_modifiers),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_pmu),
		cmocka_unit_test(test_breakpoints),
		cmocka_unit_test(test_errors_point_at_bad_part),
		cmocka_unit_test(test_failed_parse_keeps_list),
		cmocka_unit_test(test_cpumap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
