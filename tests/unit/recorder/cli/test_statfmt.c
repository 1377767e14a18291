/*
 * test_counters_statfmt.c - perf-stat style lines of `perfrec stat`
 * (rec_stat_format_line): scaling, multiplexing percentage, not counted,
 * not supported, units and rates, on synthetic values.
 */
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "recorder/cli/statfmt.h"

#define SW PERF_TYPE_SOFTWARE

static void multiplexed_value_scaled_with_percentage(void **state)
{
	char line[512];

	(void)state;
	/* Ran 25% of 4 s: 1000 raw events extrapolate to 4000. */
	rec_stat_format_line(line, sizeof(line), "", "L1-dcache-loads", true,
			     PERF_TYPE_HW_CACHE, 0, 1000, 4000000000ull,
			     1000000000ull, 2000000000ull, 4000000000ull);
	assert_non_null(strstr(line, " 4000 "));
	assert_null(strstr(line, " 1000 "));
	assert_non_null(strstr(line, "(25.00%)"));
	/* 4000 per 2 s of clock: 2.000 K/sec. */
	assert_non_null(strstr(line, "2.000 K/sec"));
}

static void exact_has_no_percentage(void **state)
{
	char line[512];

	(void)state;
	rec_stat_format_line(line, sizeof(line), "", "page-faults", true, SW,
			     PERF_COUNT_SW_PAGE_FAULTS, 5092, 100, 100,
			     16220000, 16531514);
	assert_non_null(strstr(line, " 5092 "));
	assert_non_null(strstr(line, "page-faults"));
	assert_null(strstr(line, "%)"));
	/* 5092 / 0.01622 s = 313.9 K/sec. */
	assert_non_null(strstr(line, "313.933 K/sec"));
}

static void not_counted_and_not_supported(void **state)
{
	char line[512];

	(void)state;
	rec_stat_format_line(line, sizeof(line), "", "context-switches", true,
			     SW, PERF_COUNT_SW_CONTEXT_SWITCHES, 77, 5000, 0,
			     1, 1);
	assert_non_null(strstr(line, "<not counted>"));
	assert_non_null(strstr(line, "context-switches"));
	assert_null(strstr(line, "77"));
	rec_stat_format_line(line, sizeof(line), "", "cycles", false,
			     PERF_TYPE_HARDWARE, 0, 0, 0, 0, 1, 1);
	assert_non_null(strstr(line, "<not supported>"));
	assert_non_null(strstr(line, "cycles"));
}

static void clock_in_msec_with_cpus_utilized(void **state)
{
	char line[512];

	(void)state;
	/* 16.22 ms of task-clock in 16.53 ms of wall time. */
	rec_stat_format_line(line, sizeof(line), "", "task-clock", true, SW,
			     PERF_COUNT_SW_TASK_CLOCK, 16220000, 1, 1,
			     16220000, 16531514);
	assert_non_null(strstr(line, "16.22 msec task-clock"));
	assert_non_null(strstr(line, "0.981 CPUs utilized"));
	/* Two CPUs busy for 1 s, cpu-clock multiplexed at 50%. */
	rec_stat_format_line(line, sizeof(line), "  1.000000000", "cpu-clock",
			     true, SW, PERF_COUNT_SW_CPU_CLOCK, 1000000000ull,
			     2, 1, 0, 1000000000ull);
	assert_non_null(strstr(line, "2000.00 msec cpu-clock"));
	assert_non_null(strstr(line, "2.000 CPUs utilized"));
	assert_non_null(strstr(line, "(50.00%)"));
	assert_int_equal(strncmp(line, "  1.000000000", 13), 0);
}

static void rates_prefixes(void **state)
{
	char line[512];

	(void)state;
	rec_stat_format_line(line, sizeof(line), "", "x", true, SW, 9, 12, 1,
			     1, 1000000000ull, 0);
	assert_non_null(strstr(line, "12.000 /sec"));
	rec_stat_format_line(line, sizeof(line), "", "x", true, SW, 9,
			     3500000, 1, 1, 1000000000ull, 0);
	assert_non_null(strstr(line, "3.500 M/sec"));
	rec_stat_format_line(line, sizeof(line), "", "x", true, SW, 9,
			     7000000000ull, 1, 1, 1000000000ull, 0);
	assert_non_null(strstr(line, "7.000 G/sec"));
	/* No clock and no wall time: no rate at all. */
	rec_stat_format_line(line, sizeof(line), "", "x", true, SW, 9, 5, 1,
			     1, 0, 0);
	assert_null(strstr(line, "/sec"));
}

static void saturated_scaling_does_not_wrap(void **state)
{
	char line[512];

	(void)state;
	/* 2^63 with enabled = 3 * running: clamps at UINT64_MAX. */
	rec_stat_format_line(line, sizeof(line), "", "x", true, SW, 9,
			     1ull << 63, 3000, 1000, 0, 0);
	assert_non_null(strstr(line, "18446744073709551615"));
	assert_non_null(strstr(line, "(33.33%)"));
}

static void truncates_safely(void **state)
{
	char line[16];
	size_t want;

	(void)state;
	want = rec_stat_format_line(line, sizeof(line), "", "page-faults",
				    true, SW, 2, 1, 1, 1, 1, 1);
	assert_true(want >= sizeof(line));
	assert_int_equal(strlen(line), sizeof(line) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(multiplexed_value_scaled_with_percentage),
		cmocka_unit_test(exact_has_no_percentage),
		cmocka_unit_test(not_counted_and_not_supported),
		cmocka_unit_test(clock_in_msec_with_cpus_utilized),
		cmocka_unit_test(rates_prefixes),
		cmocka_unit_test(saturated_scaling_does_not_wrap),
		cmocka_unit_test(truncates_safely),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
