/*
 * timeline.h - per-CPU run intervals, downsampled to a bounded size.
 *
 * The per-CPU timeline of the HTML page: which task ran on which CPU when.
 * A long trace holds millions of on-CPU intervals; a page can show a few
 * thousand per lane. The window [t0, t1] is cut into nbuckets equal
 * buckets per lane (about a pixel each on a wide screen):
 *   - an interval at least one bucket long is kept exactly as a span;
 *   - shorter intervals are summed into the buckets they touch (split at
 *     bucket edges): per bucket the exact busy time, how many intervals
 *     touched it, and the tasks that ran longest in it (the first
 *     ANA_TL_SLOTS distinct tasks to arrive are tracked exactly, the rest
 *     count only in busy).
 * So a lane never holds more than nbuckets buckets plus (at most
 * 2 x nbuckets + 16) spans, and its busy time (spans + buckets) is exact.
 *
 * Tasks are the caller's numbers (an index into its own task table).
 *
 * How to use:
 *
 *   struct ana_timeline *tl = ana_timeline_new(t0, t1, 4096, 256);
 *   ana_timeline_add(tl, cpu, task, start, end);   // any order
 *   for (i = 0; i < ana_timeline_lanes(tl); i++) {
 *       const struct ana_tl_lane *l = ana_timeline_lane(tl, i);  // by CPU
 *       l->spans[0..nspans), l->buckets[0..tl nbuckets) (NULL: none)
 *   }
 *   ana_timeline_free(tl);
 */
#ifndef ANA_TIMELINE_H
#define ANA_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#define ANA_TL_SLOTS 4

struct ana_tl_span {
	uint64_t start, end;   /* absolute ns, within [t0, t1] */
	uint32_t task;
};

struct ana_tl_bucket {
	uint64_t busy;         /* ns of short intervals in this bucket */
	uint32_t n;            /* short intervals that touched it */
	uint32_t nslots;
	uint32_t task[ANA_TL_SLOTS];
	uint64_t ns[ANA_TL_SLOTS];
};

struct ana_tl_lane {
	uint32_t cpu;
	uint64_t busy;                  /* every interval's ns, exact */
	uint64_t intervals;
	struct ana_tl_span *spans;      /* in arrival order */
	size_t nspans, cap;
	struct ana_tl_bucket *buckets;  /* nbuckets of them, or NULL if none used */
};

struct ana_timeline;

/* Window [t0, t1] (absolute ns; t1 < t0 is taken as t0), nbuckets >= 1
 * per lane, at most max_lanes CPUs (more are dropped and counted).
 * NULL with errno set on failure. */
struct ana_timeline *ana_timeline_new(uint64_t t0, uint64_t t1, size_t nbuckets,
				      size_t max_lanes);
void ana_timeline_free(struct ana_timeline *tl);   /* NULL is fine */

/* Adds task's on-CPU interval [start, end) on cpu, clipped to the window
 * (an empty or inverted interval adds nothing). 0 or -ENOMEM. */
int ana_timeline_add(struct ana_timeline *tl, uint32_t cpu, uint32_t task,
		     uint64_t start, uint64_t end);
/* Makes sure cpu has a lane even if nothing ran on it. 0 or -ENOMEM. */
int ana_timeline_lane_add(struct ana_timeline *tl, uint32_t cpu);

/* Lanes sorted by CPU number; pointers valid until the next add. */
size_t ana_timeline_lanes(struct ana_timeline *tl);
const struct ana_tl_lane *ana_timeline_lane(struct ana_timeline *tl, size_t i);

uint64_t ana_timeline_t0(const struct ana_timeline *tl);
uint64_t ana_timeline_t1(const struct ana_timeline *tl);
uint64_t ana_timeline_bucket_ns(const struct ana_timeline *tl);
size_t ana_timeline_nbuckets(const struct ana_timeline *tl);
/* Intervals dropped because they were on CPUs past max_lanes. */
uint64_t ana_timeline_dropped(const struct ana_timeline *tl);

/* The task that ran longest in a bucket (its slot index; -1 if none). */
int ana_tl_bucket_top(const struct ana_tl_bucket *b);

#endif
