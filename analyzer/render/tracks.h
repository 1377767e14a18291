/*
 * tracks.h - per-thread activity over time, binned to a bounded size.
 *
 * The HTML page's tracks: under the per-CPU lanes, one track per process
 * (expandable into its threads) showing when it ran, how densely it was
 * sampled and why it was off the CPU. A trace holds millions of runs,
 * samples and off-CPU blocks; a page can show a few hundred points per
 * track. The window [t0, t1] is cut into nbins equal bins, and per thread
 * and bin this object keeps
 *   - run: ns on a CPU (from on-CPU intervals, split at bin edges: exact),
 *     and how many runs started in the bin (switch-ins; a run from the
 *     window start is taken as on before it, as sched takes a task first
 *     seen switching out, so a switch-in exactly at the start is missed);
 *   - samples: how many samples it took there;
 *   - off: ns off the CPU in intervals (record --off-cpu blocks of at
 *     least the threshold, split at bin edges: exact), and the state of
 *     the longest piece in the bin (the colour the page gives the bin);
 * and per bin the losses (records lost, by the Loss packets' times).
 * Memory is nbins x 33 bytes per thread that has data, whatever the trace
 * length; the page writes only the busiest processes and threads.
 *
 * Threads are keyed by tid; names (comm) are the caller's strings,
 * borrowed: they must outlive the object (a trace's pool does).
 *
 * How to use:
 *
 *   struct ana_tracks *tk = ana_tracks_new(t0, t1, 400);
 *   ana_tracks_run(tk, pid, tid, comm, start, end);     // any order
 *   ana_tracks_sample(tk, pid, tid, comm, time);
 *   ana_tracks_offcpu(tk, pid, tid, comm, state, start, end);
 *   ana_tracks_loss(tk, time, count);
 *   ana_tracks_sort(tk);       // processes and threads, busiest first
 *   for (i = 0; i < ana_tracks_nprocs(tk); i++) {
 *       const struct ana_track_proc *p = ana_tracks_proc(tk, i);
 *       p->threads[0..nthreads): busiest first
 *   }
 *   ana_tracks_free(tk);
 */
#ifndef ANA_TRACKS_H
#define ANA_TRACKS_H

#include <stddef.h>
#include <stdint.h>

/* OffCpu.State values 0..6 (unknown .. other) */
#define ANA_TK_NSTATES 7

struct ana_track {            /* one thread */
	uint32_t pid, tid;
	const char *comm;        /* its last name given */
	uint64_t run_ns, samples, off_ns;   /* totals in the window */
	uint64_t *run;           /* nbins: ns on a CPU; NULL: none */
	uint32_t *ins;           /* nbins: runs that started there (switch-ins);
				  * allocated with run */
	uint32_t *smp;           /* nbins: samples; NULL: none */
	uint64_t *off;           /* nbins: ns off-CPU; NULL: none */
	uint64_t *off_max;       /* nbins: the longest piece's ns */
	uint8_t *off_state;      /* nbins: the longest piece's state */
};

struct ana_track_proc {
	uint32_t pid;
	const char *comm;        /* the main thread's (tid = pid), else the busiest's */
	uint64_t run_ns, samples, off_ns;   /* sums over its threads */
	struct ana_track **threads;         /* busiest first; the object's */
	size_t nthreads;
};

struct ana_tracks;

/* Window [t0, t1] (absolute ns; t1 < t0 is taken as t0), nbins >= 1.
 * NULL with errno set on failure. */
struct ana_tracks *ana_tracks_new(uint64_t t0, uint64_t t1, size_t nbins);
void ana_tracks_free(struct ana_tracks *tk);   /* NULL is fine */

/* Each adds to thread tid of process pid (named comm), clipped to the
 * window; 0 or -ENOMEM. */
int ana_tracks_run(struct ana_tracks *tk, uint32_t pid, uint32_t tid, const char *comm,
		   uint64_t start, uint64_t end);
int ana_tracks_sample(struct ana_tracks *tk, uint32_t pid, uint32_t tid, const char *comm,
		      uint64_t time);
/* state: OffCpu.State (other values count as OTHER) */
int ana_tracks_offcpu(struct ana_tracks *tk, uint32_t pid, uint32_t tid, const char *comm,
		      int state, uint64_t start, uint64_t end);
void ana_tracks_loss(struct ana_tracks *tk, uint64_t time, uint64_t count);

/* Groups threads into processes, each list ordered by on-CPU time, then
 * samples, then off-CPU time (busiest first; ties by id). Call once after
 * the last add. 0 or -ENOMEM. */
int ana_tracks_sort(struct ana_tracks *tk);
size_t ana_tracks_nprocs(const struct ana_tracks *tk);
const struct ana_track_proc *ana_tracks_proc(const struct ana_tracks *tk, size_t i);
size_t ana_tracks_nthreads(const struct ana_tracks *tk);

uint64_t ana_tracks_t0(const struct ana_tracks *tk);
uint64_t ana_tracks_bin_ns(const struct ana_tracks *tk);
size_t ana_tracks_nbins(const struct ana_tracks *tk);
/* nbins loss counts (by the Loss packets' times). */
const uint64_t *ana_tracks_losses(const struct ana_tracks *tk);

#endif
