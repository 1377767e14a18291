/*
 * test_tracks.c - analyzer/render/tracks: per-thread activity binned over
 * a window.
 *
 * Runs and off-CPU blocks are split at bin edges and clipped to the
 * window, so every bin holds the exact ns and the totals are the exact
 * sums; a bin's off-CPU state is its longest piece's; samples and losses
 * land in the bin of their time; threads group into processes, both
 * busiest first, a process named by its main thread.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "analyzer/render/tracks.h"

#define MS 1000000ull

/* Window of 100 ms from 1 s, 10 bins: 10 ms + 1 ns each. */
static struct ana_tracks *make(void)
{
	struct ana_tracks *tk = ana_tracks_new(1000 * MS, 1100 * MS, 10);
	assert_non_null(tk);
	assert_int_equal(ana_tracks_bin_ns(tk), 10 * MS + 1);
	return tk;
}

static void test_runs_exact(void **state)
{
	(void)state;
	struct ana_tracks *tk = make();
	/* 25 ms from 995 ms: clipped to 20 ms from the start, over bins 0-1 */
	assert_int_equal(ana_tracks_run(tk, 7, 8, "w", 995 * MS, 1020 * MS), 0);
	/* many short runs straddling the edge of bins 4 and 5 */
	for (int i = 0; i < 1000; i++)
		assert_int_equal(ana_tracks_run(tk, 7, 8, "w", 1050 * MS - 3000, 1050 * MS + 2000),
				 0);
	/* past the end: clipped to the window's end */
	assert_int_equal(ana_tracks_run(tk, 7, 8, "w", 1095 * MS, 1200 * MS), 0);
	/* empty and inverted: nothing */
	assert_int_equal(ana_tracks_run(tk, 7, 8, "w", 1060 * MS, 1060 * MS), 0);
	assert_int_equal(ana_tracks_run(tk, 7, 8, "w", 1061 * MS, 1060 * MS), 0);
	assert_int_equal(ana_tracks_sort(tk), 0);
	assert_int_equal(ana_tracks_nprocs(tk), 1);
	const struct ana_track_proc *p = ana_tracks_proc(tk, 0);
	assert_int_equal(p->nthreads, 1);
	const struct ana_track *t = p->threads[0];
	assert_int_equal(t->run_ns, 20 * MS + 1000 * 5000ull + 5 * MS);
	uint64_t sum = 0;
	for (size_t b = 0; b < 10; b++) {
		assert_true(t->run[b] <= ana_tracks_bin_ns(tk));
		sum += t->run[b];
	}
	assert_int_equal(sum, t->run_ns);
	assert_int_equal(t->run[0], 10 * MS + 1);
	assert_int_equal(t->run[1], 10 * MS - 1);
	/* bin 5 starts at 1050 ms + 5 ns: 3005 ns of each run before it */
	assert_int_equal(t->run[4], 1000 * 3005ull);
	assert_int_equal(t->run[5], 1000 * 1995ull);
	assert_int_equal(t->run[9], 5 * MS);
	/* switch-ins: each run that started inside the window (not the
	 * one clipped to its start), in its start's bin */
	assert_int_equal(t->ins[0], 0);
	assert_int_equal(t->ins[4], 1000);
	assert_int_equal(t->ins[5], 1);   /* the empty run: in and out at once */
	assert_int_equal(t->ins[6], 0);   /* the inverted one: nothing */
	assert_int_equal(t->ins[9], 1);
	assert_null(t->smp);
	assert_null(t->off);
	ana_tracks_free(tk);
}

static void test_samples_offcpu_losses(void **state)
{
	(void)state;
	struct ana_tracks *tk = make();
	assert_int_equal(ana_tracks_sample(tk, 7, 8, "w", 1000 * MS), 0);
	assert_int_equal(ana_tracks_sample(tk, 7, 8, "w", 1100 * MS), 0);   /* the end: last bin */
	assert_int_equal(ana_tracks_sample(tk, 7, 8, "w", 1101 * MS), 0);   /* outside */
	assert_int_equal(ana_tracks_sample(tk, 7, 8, "w", 999 * MS), 0);
	/* bin 2: 2 ms sleeping, then 5 ms on disk: disk is the colour */
	assert_int_equal(ana_tracks_offcpu(tk, 7, 8, "w", 2, 1021 * MS, 1023 * MS), 0);
	assert_int_equal(ana_tracks_offcpu(tk, 7, 8, "w", 3, 1024 * MS, 1029 * MS), 0);
	/* bins 3-4: 15 ms runnable; a state out of range counts as other */
	assert_int_equal(ana_tracks_offcpu(tk, 7, 8, "w", 1, 1035 * MS, 1050 * MS), 0);
	assert_int_equal(ana_tracks_offcpu(tk, 7, 8, "w", 99, 1090 * MS, 1091 * MS), 0);
	ana_tracks_loss(tk, 1000 * MS, 3);
	ana_tracks_loss(tk, 1099 * MS, 4);
	ana_tracks_loss(tk, 1200 * MS, 5);   /* outside */
	assert_int_equal(ana_tracks_sort(tk), 0);
	const struct ana_track *t = ana_tracks_proc(tk, 0)->threads[0];
	assert_int_equal(t->samples, 2);
	assert_int_equal(t->smp[0], 1);
	assert_int_equal(t->smp[9], 1);
	assert_int_equal(t->off_ns, 23 * MS);
	assert_int_equal(t->off[2], 7 * MS);
	assert_int_equal(t->off_state[2], 3);
	assert_int_equal(t->off[3] + t->off[4], 15 * MS);
	assert_int_equal(t->off_state[3], 1);
	assert_int_equal(t->off_state[9], ANA_TK_NSTATES - 1);
	assert_null(t->run);
	const uint64_t *loss = ana_tracks_losses(tk);
	assert_int_equal(loss[0], 3);
	assert_int_equal(loss[9], 4);
	uint64_t all = 0;
	for (size_t b = 0; b < ana_tracks_nbins(tk); b++)
		all += loss[b];
	assert_int_equal(all, 7);
	ana_tracks_free(tk);
}

static void test_order(void **state)
{
	(void)state;
	struct ana_tracks *tk = make();
	/* process 10: main 10 ("srv") 5 ms, worker 11 ("srv-w") 30 ms;
	 * process 20: one thread 20 ms; process 30: samples only; 40: off-CPU only */
	assert_int_equal(ana_tracks_run(tk, 10, 11, "srv-w", 1000 * MS, 1030 * MS), 0);
	assert_int_equal(ana_tracks_run(tk, 20, 20, "db", 1000 * MS, 1020 * MS), 0);
	assert_int_equal(ana_tracks_run(tk, 10, 10, "srv", 1040 * MS, 1045 * MS), 0);
	assert_int_equal(ana_tracks_sample(tk, 30, 30, "bg", 1040 * MS), 0);
	assert_int_equal(ana_tracks_offcpu(tk, 40, 40, "idle", 2, 1040 * MS, 1041 * MS), 0);
	assert_int_equal(ana_tracks_sort(tk), 0);
	assert_int_equal(ana_tracks_sort(tk), 0);   /* once is enough; twice is harmless */
	assert_int_equal(ana_tracks_nthreads(tk), 5);
	assert_int_equal(ana_tracks_nprocs(tk), 4);
	const struct ana_track_proc *p = ana_tracks_proc(tk, 0);
	assert_int_equal(p->pid, 10);
	assert_string_equal(p->comm, "srv");
	assert_int_equal(p->run_ns, 35 * MS);
	assert_int_equal(p->nthreads, 2);
	assert_int_equal(p->threads[0]->tid, 11);
	assert_int_equal(p->threads[1]->tid, 10);
	assert_int_equal(ana_tracks_proc(tk, 1)->pid, 20);
	assert_int_equal(ana_tracks_proc(tk, 2)->pid, 30);
	assert_int_equal(ana_tracks_proc(tk, 3)->pid, 40);
	assert_null(ana_tracks_proc(tk, 4));
	ana_tracks_free(tk);
	ana_tracks_free(NULL);
	errno = 0;
	assert_null(ana_tracks_new(0, 1, 0));
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs_exact),
		cmocka_unit_test(test_samples_offcpu_losses),
		cmocka_unit_test(test_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
