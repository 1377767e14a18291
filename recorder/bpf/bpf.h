/*
 * bpf.h - a recording's BPF programs (libbpf): off-CPU time with kernel and
 * user stacks (offcpu.bpf.c on sched_switch) and the in-kernel sample
 * filter (sfilter.bpf.c on the sampling events).
 *
 * Their output joins the recording's one timeline: off-CPU intervals are
 * written by the program through bpf-output perf events that belong to the
 * recording's event set (events/evlist.h: one per CPU, redirected into that
 * CPU's ring), so they carry CLOCK_MONOTONIC times and the kernel's LOST
 * records like every other record. What the programs keep in maps (sums of
 * short blocks, filter counts, their own losses) is read by tick() and
 * written as OffCpu, Filtered and Loss packets.
 *
 * How to use (the perf event source does this: recording/source.c):
 *
 *   struct rec_bpf *b;
 *   rec_bpf_new(&opts, &b);         // checks privileges, loads programs
 *   rec_evlist_open(&set, ...);      // the set has its bpf-output event
 *   rec_bpf_attach(b, &set);        // output fds into the program's map,
 *                                   // programs attached, filter on each
 *                                   // sampling fd
 *   ... the recording's emitter calls rec_bpf_emit() for every sample of
 *       the bpf-output event (rec_emit.bpf_output) ...
 *   rec_bpf_tick(b, e, now, false); // about every second
 *   rec_bpf_stop(b);                // before the events are disabled:
 *                                   // nothing new is measured
 *   ... final drain of the rings ...
 *   rec_bpf_tick(b, e, now, true);  // everything the maps still hold
 *   rec_bpf_free(b);
 *
 * Errors: every failing call logs (recorder/log.h) what is missing and
 * the fix - a privilege (CAP_BPF, CAP_PERFMON), a kernel feature, or a
 * build without BPF (nobpf.c) - and returns a negative errno. libbpf's own
 * messages go to the same channel (libbpf_set_print) at debug level.
 *
 * Ownership: the options' strings, arrays and events are read during
 * new() only (targets and cpus until attach()); the event set is borrowed
 * during attach().
 */
#ifndef REC_BPF_H
#define REC_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rec_evlist;
struct rec_evlist_cfg;
struct rec_emit;
struct rec_record;
struct rec_bpf;

/* Which tasks' off-CPU time is measured. */
enum rec_bpf_targets {
	REC_BPF_TARGET_ALL = 0,   /* every task (system-wide, -a, -C) */
	REC_BPF_TARGET_PIDS,      /* these processes (-p, a command) */
	REC_BPF_TARGET_TIDS,      /* these threads (-t) */
};

struct rec_bpf_opts {
	size_t sz;                    /* sizeof(struct rec_bpf_opts) */
	/* the event list's settings (events/evlist.h): off_cpu (measure
	 * off-CPU time), off_cpu_threshold (ns: longer blocks are
	 * intervals), filter (sample filter expression, or NULL) */
	const struct rec_evlist_cfg *events;
	enum rec_bpf_targets target;
	const int *targets;           /* pids or tids */
	size_t ntargets;
	bool follow;                  /* children of traced processes too */
	const int *cpus;              /* the recorded CPUs: blocks that end */
	size_t ncpus;                 /* elsewhere are not measured */
	const char *cgroup_root;      /* NULL: the cgroup v2 mount */
	bool force_raw_tp;            /* tests: the fallback for kernels
				       * without BTF */
};

#define REC_BPF_OPTS_INIT { .sz = sizeof(struct rec_bpf_opts) }

/* True when perfrec was built with BPF (PERFREC_BPF). */
bool rec_bpf_built(void);

/* Loads the programs o asks for. 0 and *out, or a negative errno
 * (logged: the missing privilege, kernel feature or build option). */
int rec_bpf_new(const struct rec_bpf_opts *o, struct rec_bpf **out);

/* Attaches to the opened event set: its bpf-output fds (off-CPU) and its
 * sampling events' fds (filter). 0 or a negative errno (logged). */
int rec_bpf_attach(struct rec_bpf *b, struct rec_evlist *s);

/* rec_emit's bpf_output hook (ctx: the rec_bpf): one sample of a
 * bpf-output event into an OffCpu packet on stream. 0 or the writer's
 * error; a record that does not parse is kept raw. */
int rec_bpf_emit(void *ctx, struct rec_emit *e, uint32_t stream,
		 const struct rec_record *r);

/* Writes what the maps hold (off-CPU sums, filter counts, BPF losses) on
 * stream 0, at most once a second unless final (then everything, and
 * each filtered event's count even when 0). 0 or the writer's error. */
int rec_bpf_tick(struct rec_bpf *b, struct rec_emit *e, uint64_t now_ns,
		 bool final);

/* Detaches the off-CPU programs: blocks that end from now on are not
 * measured. Call before disabling the events (a disabled output event
 * would refuse the last records). Idempotent. */
void rec_bpf_stop(struct rec_bpf *b);

/* What the programs counted so far, for summaries and tests. */
struct rec_bpf_stats {
	uint64_t intervals;        /* OffCpu interval packets written */
	uint64_t sums;             /* OffCpu aggregate packets written */
	uint64_t blocked_ns;       /* off-CPU time in both */
	uint64_t filtered, kept;   /* samples the filter dropped / kept */
	uint64_t losses;           /* BPF losses (map full, stacks, output) */
	bool raw_tp;               /* the fallback program runs */
};
void rec_bpf_stats(const struct rec_bpf *b, struct rec_bpf_stats *st);

void rec_bpf_free(struct rec_bpf *b);   /* NULL is fine */

#endif
