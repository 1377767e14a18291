/*
 * test_counters_api.c - recorder/counters.c without the kernel: spec
 * parsing into groups, refusals, and calls out of order.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "recorder/events/counters.h"
#include "lib/logcap.h"

static void groups_and_singletons(void **state)
{
	struct rec_counters *c = rec_counters_new();

	(void)state;
	assert_non_null(c);
	assert_int_equal(rec_counters_ngroups(c), 0);
	assert_int_equal(rec_counters_add(c, "{task-clock,page-faults,"
					  "context-switches}"), 0);
	assert_int_equal(rec_counters_ngroups(c), 1);
	assert_int_equal(rec_counters_nevents(c), 3);
	/* A second --counters flag adds a group; events outside braces are
	 * groups of one each. */
	assert_int_equal(rec_counters_add(c, "{cpu-clock,minor-faults}"), 0);
	assert_int_equal(rec_counters_add(c, "page-faults,cpu-migrations"), 0);
	assert_int_equal(rec_counters_ngroups(c), 4);
	assert_int_equal(rec_counters_nevents(c), 7);
	assert_string_equal(rec_counters_event_name(c, 1), "page-faults");
	assert_string_equal(rec_counters_event_name(c, 4), "minor-faults");
	assert_null(rec_counters_event_name(c, 7));
	rec_counters_set_interval(c, 250000000ull);
	assert_true(rec_counters_interval_ns(c) == 250000000ull);
	rec_counters_free(c);
}

static void refusals(void **state)
{
	struct rec_counters *c = rec_counters_new();

	(void)state;
	/* Leader sampling is for -e, not for counting groups. */
	assert_int_equal(rec_counters_add(c, "{cpu-clock,page-faults}:S"), -EINVAL);
	assert_non_null(strstr(logcap_err(), "leader sampling"));
	rec_counters_free(c);

	c = rec_counters_new();
	logcap_clear();
	assert_true(rec_counters_add(c, "{task-clock,bogus-event}") < 0);
	assert_non_null(strstr(logcap_err(), "bogus-event"));
	rec_counters_free(c);
}

static void out_of_order_calls(void **state)
{
	struct rec_counters *c = rec_counters_new();
	struct rec_counter_value v;
	int cpu = 0;

	(void)state;
	/* Nothing opened yet: every later step refuses cleanly. */
	assert_int_equal(rec_counters_enable(c), -EINVAL);
	assert_int_equal(rec_counters_snapshot(c, NULL, 0, true), -EINVAL);
	assert_int_equal(rec_counters_describe(c, NULL, 0, 0), -EINVAL);
	assert_int_equal(rec_counters_event_value(c, 0, &v), -EINVAL);
	assert_false(rec_counters_event_opened(c, 0));
	assert_null(rec_counters_event_error(c, 0));
	assert_int_equal(rec_counters_event_fd(c, 0, 0), -1);
	assert_false(rec_counters_group_never_ran(c, 0));
	/* No events, or no target: open refuses with a message. */
	assert_int_equal(rec_counters_open(c, &cpu, 1, NULL, 0, false), -EINVAL);
	assert_non_null(strstr(logcap_err(), "no events"));
	assert_int_equal(rec_counters_add(c, "task-clock"), 0);
	assert_int_equal(rec_counters_open(c, NULL, 0, NULL, 0, false), -EINVAL);
	assert_non_null(strstr(logcap_err(), "no cpu or pid"));
	rec_counters_free(c);
	rec_counters_free(NULL);
}

int main(void)
{
	logcap_install();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(groups_and_singletons),
		cmocka_unit_test(refusals),
		cmocka_unit_test(out_of_order_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
