/*
 * statfmt.h - one line of `perfrec stat` output, as perf stat prints it.
 * Pure formatting, so tests check it without counters.
 */
#ifndef REC_CLI_STATFMT_H
#define REC_CLI_STATFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether (type, config) is a clock (task-clock, cpu-clock): shown in
 * msec, and the base of the other events' rates. */
bool rec_stat_is_clock(uint32_t type, uint64_t config);

/* One perf-stat style line for an event into buf (always terminated,
 * truncated to len), returns the length it wanted. value/enabled/running
 * are raw (or deltas of an interval); they are scaled with prec_scale():
 * "(xx.xx%)" ends the line when running < enabled, "<not counted>" stands
 * for the value when running == 0, "<not supported>" when !supported.
 * Clocks (task-clock, cpu-clock) print msec and "CPUs utilized" against
 * wall_ns; other events a rate per second of clock_ns (or of wall_ns when
 * no clock was counted). Exposed for tests. */
size_t rec_stat_format_line(char *buf, size_t len, const char *prefix,
			    const char *name, bool supported, uint32_t type,
			    uint64_t config, uint64_t value, uint64_t enabled,
			    uint64_t running, uint64_t clock_ns,
			    uint64_t wall_ns);

#endif
