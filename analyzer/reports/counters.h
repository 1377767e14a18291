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

#include <stdint.h>

#include "analyzer/render/table.h"

struct ana_trace;

/* One row of the interval table, as the on_tick hook gets it: the
 * scaled delta of one member over one tick. The strings are the
 * trace's (valid while it is open). */
struct ana_counter_tick {
	const char *group, *event;
	uint64_t time;      /* the tick's snapshot time, trace clock ns */
	uint64_t from;      /* the previous tick's (the trace start for the first) */
	uint64_t delta;     /* scaled; 0 when !counted */
	int counted;        /* 0: "<not counted>" in the table */
};

struct ana_counters_opts {
	int interval;          /* add the interval table */
	const char *ratio;     /* "A/B": event names, or NULL */
	/* Called for each interval row in the table's order (group, time,
	 * member), with or without the table; a negative return stops
	 * render, which returns it. */
	int (*on_tick)(void *ctx, const struct ana_counter_tick *t);
	void *ctx;
};

/* The rotated files of one recording, one at a time: counter values are
 * cumulative from the recording's start (format/SPEC.md section 13) and
 * its kernel ids stay the same, so the snapshots of all its files read as
 * one recording's (the latest or final read of each instance, ticks on
 * one timeline). Files of different recordings must not be mixed (their
 * ids mean other counters): the caller gives one session.
 *
 *   struct ana_counters *c = ana_counters_new();    // NULL: ENOMEM
 *   for each file: ana_counters_add(c, s); keep the last s, free others
 *   ana_counters_render(c, last_s, "what was read", &opts, doc, err, errlen);
 *   ana_counters_free(c);
 *
 * render names events and groups from `s` (the session's files describe
 * the same ones); file (NULL: s's path) is the summary's "file". */
struct ana_counters;
struct ana_counters *ana_counters_new(void);
int ana_counters_add(struct ana_counters *c, struct ana_trace *s);
int ana_counters_render(struct ana_counters *c, struct ana_trace *s, const char *file,
			const struct ana_counters_opts *o, struct ana_doc *doc,
			char *err, size_t errlen);
void ana_counters_free(struct ana_counters *c);   /* NULL is fine */

/* One trace. Sections "summary", "counters", with interval "intervals",
 * with ratio "ratio". -EINVAL (message in err) for a bad --ratio. */
int ana_counters_run(struct ana_trace *s, const struct ana_counters_opts *o,
		     struct ana_doc *doc, char *err, size_t errlen);

#endif
