/*
 * counters.h - counter-group snapshots (`perfrec-analyze counters`).
 *
 * GroupSnapshot packets hold raw values keyed by kernel id plus the
 * group's time_enabled/time_running; values are mapped to members by id
 * (EventDesc.ids), never by position. Scaling (value x enabled / running)
 * is done per instance (CPU or task) with format/scale.h and then summed.
 *
 * Final values: per instance the final snapshot (else its latest), summed
 * over instances. Rate per second divides by the longest time_enabled of
 * the instances (the wall time the group was enabled). Interval table:
 * snapshots taken at the same time form one tick; a row is the delta of
 * the sums from the previous tick (scaled by the deltas of the times), as
 * `perf stat -I` prints.
 */
#ifndef ANA_COUNTERS_H
#define ANA_COUNTERS_H

#include "analyzer/render/table.h"

struct ana_trace;

struct ana_counters_opts {
	int interval;          /* add the interval table */
	const char *ratio;     /* "A/B": event names, or NULL */
};

/* Sections "summary", "counters", with interval "intervals", with ratio
 * "ratio". -EINVAL (message in err) for a bad --ratio. */
int ana_counters_run(struct ana_trace *s, const struct ana_counters_opts *o,
		     struct ana_doc *doc, char *err, size_t errlen);

#endif
