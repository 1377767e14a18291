/*
 * statfmt.c - perf-stat style lines; see statfmt.h.
 */
#include "recorder/cli/statfmt.h"

#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>

#include "format/scale.h"
#include "recorder/events/counters.h"

bool rec_stat_is_clock(uint32_t type, uint64_t config)
{
	return type == PERF_TYPE_SOFTWARE &&
	       (config == PERF_COUNT_SW_TASK_CLOCK ||
		config == PERF_COUNT_SW_CPU_CLOCK);
}

size_t rec_stat_format_line(char *buf, size_t len, const char *prefix,
			    const char *name, bool supported, uint32_t type,
			    uint64_t config, uint64_t value, uint64_t enabled,
			    uint64_t running, uint64_t clock_ns,
			    uint64_t wall_ns)
{
	struct prec_scaled sc;
	char num[64], rate[64] = "", pct[32] = "";
	const char *unit = "";
	int st, n;

	if (!supported) {
		n = snprintf(buf, len, "%s%18s %-4s %s\n", prefix,
			     "<not supported>", "", name);
		return n < 0 ? 0 : (size_t)n;
	}
	st = prec_scale(value, enabled, running, &sc);
	if (st == PREC_SCALE_NOT_COUNTED) {
		n = snprintf(buf, len, "%s%18s %-4s %s\n", prefix,
			     "<not counted>", "", name);
		return n < 0 ? 0 : (size_t)n;
	}
	if (rec_stat_is_clock(type, config)) {
		unit = "msec";
		snprintf(num, sizeof(num), "%.2f", (double)sc.value / 1e6);
		if (wall_ns)
			snprintf(rate, sizeof(rate), "# %8.3f CPUs utilized",
				 (double)sc.value / (double)wall_ns);
	} else {
		double secs = (double)(clock_ns ? clock_ns : wall_ns) / 1e9;

		snprintf(num, sizeof(num), "%" PRIu64, sc.value);
		if (secs > 0) {
			double r = (double)sc.value / secs;
			const char *p = "";

			if (r >= 1e9) {
				r /= 1e9;
				p = "G";
			} else if (r >= 1e6) {
				r /= 1e6;
				p = "M";
			} else if (r >= 1e3) {
				r /= 1e3;
				p = "K";
			}
			snprintf(rate, sizeof(rate), "# %8.3f %s/sec", r, p);
		}
	}
	if (st == PREC_SCALE_MULTIPLEXED)
		snprintf(pct, sizeof(pct), "  (%.2f%%)", sc.running_pct);
	n = snprintf(buf, len, "%s%18s %-4s %-32s %-28s%s\n", prefix, num,
		     unit, name, rate, pct);
	return n < 0 ? 0 : (size_t)n;
}

