/*
 * kerntest.h - the gate every kernel counter test opens with: can this
 * host open a perf event at all, and if not, skip (or, under CI, fail).
 *
 * Header only (static functions) because tests are single files; call
 * kerntest_require_perf() from the cmocka setup.
 */
#ifndef TESTS_KERNTEST_H
#define TESTS_KERNTEST_H

#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "recorder/events/groupopen.h"

/* Whether a disabled counter of (type, config) opens on this thread. */
static bool kerntest_can_open(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = 1;
	return rec_groupopen_probe(&a);
}

/* Skips the test (a note on stderr naming it) when task-clock cannot be
 * opened (not root? perf_event_paranoid?); under CI (CI set, non-empty)
 * fails instead, so a CI host that lost perf does not pass quietly. */
static void kerntest_require_perf(const char *test)
{
	const char *ci;

	if (kerntest_can_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK))
		return;
	ci = getenv("CI");
	if (!ci || !*ci) {
		fprintf(stderr, "%s: perf_event_open unavailable (not root? "
			"perf_event_paranoid?), skipping\n", test);
		skip();
	}
	fail_msg("perf_event_open unavailable under CI");
}

#endif
