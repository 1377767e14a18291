/*
 * test_timeline.c - analyzer/timeline: per-CPU runs downsampled with
 * exact totals, and the timeline the sched pass feeds.
 *
 * Whatever the number of runs, a lane holds at most nbuckets buckets and
 * a bounded number of spans, and its busy time (spans + buckets) is the
 * exact sum of the runs given, clipped to the window. On the golden trace
 * (tests/lib/tracegen.c), the timeline fed by ana_sched_run's on_interval
 * hook has CPU0 busy 48 ms and CPU1 30 ms, as the sched table says.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyzer/reports/sched.h"
#include "analyzer/read/trace.h"
#include "analyzer/render/table.h"
#include "analyzer/render/timeline.h"
#include "lib/anatest.h"
#include "lib/tracegen.h"

#define MS 1000000ull

static uint64_t lane_sum(struct ana_timeline *tl, const struct ana_tl_lane *l)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < l->nspans; i++) {
		assert_true(l->spans[i].end - l->spans[i].start >= ana_timeline_bucket_ns(tl));
		sum += l->spans[i].end - l->spans[i].start;
	}
	for (size_t i = 0; l->buckets && i < ana_timeline_nbuckets(tl); i++) {
		const struct ana_tl_bucket *b = &l->buckets[i];
		uint64_t slots = 0;
		for (uint32_t s = 0; s < b->nslots; s++)
			slots += b->ns[s];
		assert_true(slots <= b->busy);
		sum += b->busy;
	}
	return sum;
}

/* Many short runs and some long ones on 3 CPUs: exact busy per lane. */
static void test_exact_totals(void **state)
{
	(void)state;
	uint64_t t0 = 5000 * MS, t1 = t0 + 1000 * MS;
	struct ana_timeline *tl = ana_timeline_new(t0, t1, 100, 16);   /* 10 ms buckets */
	assert_non_null(tl);
	assert_int_equal(ana_timeline_bucket_ns(tl), 10 * MS + 1);
	uint64_t want[3] = { 0 };
	unsigned seed = 7;
	for (uint32_t cpu = 0; cpu < 3; cpu++) {
		uint64_t t = t0;
		while (t < t1) {
			seed = seed * 1103515245u + 12345u;
			/* mostly 5 us - 2 ms runs, sometimes 10-40 ms */
			uint64_t d = (seed >> 8) % 7 == 0 ? (10 + (seed >> 12) % 30) * MS
							  : 5000 + (seed >> 10) % (2 * MS);
			uint64_t gap = (seed >> 4) % (1 * MS);
			uint64_t end = t + d > t1 ? t1 : t + d;
			assert_int_equal(ana_timeline_add(tl, 2 - cpu, (seed >> 16) % 9, t, end), 0);
			want[2 - cpu] += end - t;
			t = end + gap;
		}
	}
	assert_int_equal(ana_timeline_lanes(tl), 3);
	for (size_t i = 0; i < 3; i++) {
		const struct ana_tl_lane *l = ana_timeline_lane(tl, i);
		assert_int_equal(l->cpu, i);   /* sorted by CPU */
		assert_int_equal(l->busy, want[i]);
		assert_int_equal(lane_sum(tl, l), want[i]);
		assert_true(l->nspans > 0 && l->nspans <= 100);
		assert_non_null(l->buckets);
	}
	assert_null(ana_timeline_lane(tl, 3));
	ana_timeline_free(tl);
}

/* A run crossing bucket edges is split between them; the task that ran
 * longest in a bucket is its top; runs are clipped to the window. */
static void test_split_and_top(void **state)
{
	(void)state;
	struct ana_timeline *tl = ana_timeline_new(1000, 1999, 10, 4);   /* 100 ns buckets */
	assert_non_null(tl);
	assert_int_equal(ana_timeline_bucket_ns(tl), 100);
	assert_int_equal(ana_timeline_add(tl, 0, 7, 1050, 1130), 0);   /* 50 + 30 */
	assert_int_equal(ana_timeline_add(tl, 0, 8, 1130, 1150), 0);
	assert_int_equal(ana_timeline_add(tl, 0, 8, 1160, 1190), 0);
	assert_int_equal(ana_timeline_add(tl, 0, 9, 900, 1010), 0);    /* clipped: 10 */
	assert_int_equal(ana_timeline_add(tl, 0, 9, 1990, 2500), 0);   /* clipped: 9 */
	assert_int_equal(ana_timeline_add(tl, 0, 9, 1500, 1500), 0);   /* empty */
	assert_int_equal(ana_timeline_add(tl, 0, 9, 1600, 1400), 0);   /* inverted */
	assert_int_equal(ana_timeline_add(tl, 0, 5, 1300, 1500), 0);   /* a span */
	const struct ana_tl_lane *l = ana_timeline_lane(tl, 0);
	assert_int_equal(l->busy, 80 + 20 + 30 + 10 + 9 + 200);
	assert_int_equal(l->intervals, 6);
	assert_int_equal(l->nspans, 1);
	assert_int_equal(l->spans[0].start, 1300);
	assert_int_equal(l->spans[0].task, 5);
	const struct ana_tl_bucket *b0 = &l->buckets[0], *b1 = &l->buckets[1];
	assert_int_equal(b0->busy, 60);
	assert_int_equal(b0->n, 2);
	assert_int_equal(b0->task[ana_tl_bucket_top(b0)], 7);
	assert_int_equal(b1->busy, 80);
	assert_int_equal(b1->n, 3);
	assert_int_equal(b1->task[ana_tl_bucket_top(b1)], 8);   /* 50 ns against 7's 30 */
	assert_int_equal(l->buckets[9].busy, 9);
	assert_int_equal(ana_tl_bucket_top(&l->buckets[5]), -1);
	assert_int_equal(lane_sum(tl, l), l->busy);
	ana_timeline_free(tl);
}

/* Lanes past max_lanes are dropped and counted; more tasks in a bucket
 * than it has slots still count in its busy time; lanes may be created
 * empty. */
static void test_bounds(void **state)
{
	(void)state;
	struct ana_timeline *tl = ana_timeline_new(0, 999, 1, 2);
	assert_non_null(tl);
	assert_int_equal(ana_timeline_lane_add(tl, 40), 0);
	for (uint32_t task = 0; task < 10; task++)
		assert_int_equal(ana_timeline_add(tl, 3, task, task * 10, task * 10 + 5), 0);
	assert_int_equal(ana_timeline_add(tl, 99, 0, 0, 10), 0);   /* third CPU */
	assert_int_equal(ana_timeline_dropped(tl), 1);
	assert_int_equal(ana_timeline_lanes(tl), 2);
	const struct ana_tl_lane *l = ana_timeline_lane(tl, 0);
	assert_int_equal(l->cpu, 3);
	assert_int_equal(l->buckets[0].busy, 50);
	assert_int_equal(l->buckets[0].n, 10);
	assert_int_equal(l->buckets[0].nslots, ANA_TL_SLOTS);
	l = ana_timeline_lane(tl, 1);
	assert_int_equal(l->cpu, 40);
	assert_int_equal(l->busy, 0);
	assert_null(l->buckets);
	ana_timeline_free(tl);

	/* spans are capped at 2 x nbuckets + 16 even when runs overlap (lost
	 * records): the rest go to buckets, the busy time stays exact */
	tl = ana_timeline_new(0, 99999, 10, 1);
	for (int i = 0; i < 100; i++)
		assert_int_equal(ana_timeline_add(tl, 0, 1, 0, 50000), 0);
	l = ana_timeline_lane(tl, 0);
	assert_int_equal(l->nspans, 36);
	assert_int_equal(l->busy, 100 * 50000ull);
	assert_int_equal(lane_sum(tl, l), l->busy);
	ana_timeline_free(tl);

	/* a window at the end of time: no overflow at bucket edges */
	tl = ana_timeline_new(UINT64_MAX - 1000, UINT64_MAX, 3, 1);
	assert_int_equal(ana_timeline_add(tl, 0, 1, UINT64_MAX - 10, UINT64_MAX), 0);
	l = ana_timeline_lane(tl, 0);
	assert_int_equal(l->busy, 10);
	assert_int_equal(lane_sum(tl, l), 10);
	ana_timeline_free(tl);

	errno = 0;
	assert_null(ana_timeline_new(0, 1, 0, 1));
	assert_int_equal(errno, EINVAL);
}

struct feed {
	struct ana_timeline *tl;
	uint64_t calls;
};

static int on_interval(void *ctx, const struct ana_sched_interval *iv)
{
	struct feed *f = ctx;
	f->calls++;
	assert_true(iv->start <= iv->end);
	return ana_timeline_add(f->tl, iv->cpu, iv->tid, iv->start, iv->end);
}

/* The golden trace: the timeline agrees with sched's busy times. */
static void test_sched_hook(void **state)
{
	(void)state;
	const char *dir = anatest_tmpdir("timeline");
	char path[512];
	snprintf(path, sizeof(path), "%s/golden.prec", dir);
	assert_int_equal(tracegen_write(path, NULL), 0);
	struct ana_trace_opts so = { .jobs = 2 };
	struct ana_trace *s;
	assert_int_equal(ana_trace_open(&s, path, &so), 0);
	struct feed f = { ana_timeline_new(s->start, s->end->end_time, 4096, 8), 0 };
	assert_non_null(f.tl);
	struct ana_sched_opts o = { .jobs = 2, .on_interval = on_interval, .ctx = &f };
	struct ana_doc *doc = ana_doc_new();
	assert_int_equal(ana_sched_run(s, &o, doc), 0);
	/* runs: CPU0 100 0-10, 101 12-20, 200 20-30, 100 30-40, 101 50-60;
	 * CPU1 200 0-5, 101 35-45, 100 55-70 */
	assert_int_equal(f.calls, 8);
	assert_int_equal(ana_timeline_lanes(f.tl), 2);
	const struct ana_tl_lane *c0 = ana_timeline_lane(f.tl, 0), *c1 = ana_timeline_lane(f.tl, 1);
	assert_int_equal(c0->busy, 48 * MS);
	assert_int_equal(c1->busy, 30 * MS);
	assert_int_equal(c0->nspans, 5);   /* all longer than a 17 us bucket */
	assert_int_equal(c1->spans[0].task, 200);
	assert_int_equal(c1->spans[0].start, s->start);
	assert_int_equal(c1->spans[0].end, s->start + 5 * MS);
	ana_doc_free(doc);
	ana_timeline_free(f.tl);
	ana_trace_free(s);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_totals),
		cmocka_unit_test(test_split_and_top),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_sched_hook),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
