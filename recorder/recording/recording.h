/*
 * recording.h - a recording: perf events (or another source) drained from
 * per-CPU rings, decoded and written as trace packets into an output
 * (a prec_sink: file, memory, socket), for as long as its driver wants.
 *
 * Words: a *recording* is this object, from new to free; a *kernel
 * record* is one perf record read from a ring; an *output* is one sink the
 * recording writes a complete, self-contained trace into (rotation moves
 * to the next output). The daemon's named, restartable recordings are
 * *sessions* (daemon/).
 *
 * Threads: the recording is driven by one thread (poll/step model); a
 * drain thread of its own moves records from the kernel rings into spools
 * (ring/drain.h) so a slow step does not lose records.
 *
 * How to use:
 *
 *   struct rec_recording_opts o = REC_RECORDING_OPTS_INIT;
 *   o.evspecs = &evl; o.target = REC_TARGET_SYSTEM; ...
 *   rec_recording_new(&o, sink, "out.prec", &r);  // opens everything, writes
 *                                          // the output's first packets
 *   rec_recording_start(r);                // drain thread, enable / exec
 *   while ((ret = rec_recording_step(r, 100)) > 0) {
 *       ... the driver's own work: signals, status from
 *       rec_recording_stats(r, &st), rec_recording_rotate(r, next, name) ...
 *   }
 *   // ret == 0: the recording wants to stop (duration, command exited,
 *   //           targets gone): rec_recording_stats().stop_reason says why
 *   // ret < 0:  writing failed (logged); the output reads to its last frame
 *   rec_recording_stop(r, "signal");        // final drain, end, index, sync
 *   rec_recording_free(r);
 *
 * rec_recording_step() waits at most timeout_ms (less when counters or
 * flushes are due) for the drain thread, then decodes what the spools hold
 * and writes it. A signal interrupts the wait, so a driver that sets a
 * flag in its handler sees it at once. Drivers with their own event loop
 * poll rec_recording_pollfd() (readable when step has records to take)
 * and call step(r, 0), at least every 100 ms.
 *
 * Errors: every failing call logs its cause and fix (recorder/log.h) and
 * returns a negative errno or a format code (format/error.h). After a
 * write error the recording is FAILED: stop() only releases what it holds.
 *
 * Ownership: opts and everything it points to are read during new() only,
 * except opts->evspecs and opts->source, which must outlive the recording.
 * Sinks are borrowed: the one given to new() until rotate() returns or
 * free(); the caller frees them.
 */
#ifndef REC_RECORDING_H
#define REC_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/sink.h"
#include "recorder/encode/emit.h"
#include "recorder/bpf/bpf.h"
#include "recorder/encode/meta.h"
#include "recorder/events/evlist.h"
#include "recorder/events/evparse.h"
#include "recorder/recording/source.h"

struct rec_recording_opts {
	size_t sz;                         /* sizeof(struct rec_recording_opts) */
	/* what */
	const struct rec_evspecs *evspecs;   /* sampling events; may be empty
					    * when counters are given */
	struct rec_source *source;         /* NULL: perf events of evspecs
					    * opened with `events` */
	/* how the events are opened: freq (period 0: sample at freq Hz),
	 * period, callchain, switch_events, mmap_pages (per ring; 0 = auto:
	 * 4 MiB with CAP_IPC_LOCK, 256 MiB at most in all, else 128 pages
	 * like perf), off_cpu (off-CPU time with stacks, a BPF program),
	 * off_cpu_threshold (ns: blocks at least this long are intervals,
	 * shorter are summed; 0: every block an interval), filter (the
	 * in-kernel sample filter, or NULL), stack_user (below). inherit,
	 * enable_on_exec and regs_user are the recording's to set. The
	 * perf event source only. */
	struct rec_evlist_cfg events;
	/* the BPF programs' own settings (recorder/bpf/bpf.h): cgroup_root,
	 * force_raw_tp (the fallback program for kernels without BTF, even
	 * with BTF: tests); the recording sets the rest */
	struct rec_bpf_opts bpf;
	const char *const *counters;       /* counting groups ({a,b}) */
	size_t ncounters;
	uint64_t interval_ns;              /* counter snapshots; 0 = 1 s */
	/* where */
	enum rec_target target;
	const int *cpus;                   /* REC_TARGET_CPUS */
	size_t ncpus;
	const int *pids;                   /* REC_TARGET_PIDS / TIDS */
	size_t npids;
	char *const *argv;                 /* a command, NULL-ended: the target,
					    * or with CPU targets what decides
					    * how long the recording lasts */
	/* how */
	uint64_t spool_bytes;              /* per-CPU spool, 0 = default */
	bool no_symbols;                   /* no symbol tables */
	bool no_cut;                       /* frame-pointer chains kept whole
					    * (recorder/encode/emit.h) */
	uint64_t symbols_interval_ns;      /* symbols hit so far, written
					    * this often; 0 = every 30 s */
	const char *proc_root;             /* NULL = "/proc"; "" = no tasks and
					    * maps from /proc (tests) */
	uint64_t duration_ns;              /* 0 = until stopped */
	size_t frame_size;                 /* 0 = the format's default */
	uint32_t flush_ms;                 /* 0 = the format's default */
	int zstd_level;                    /* 0 = the format's default */
	int argc;                          /* the program's own argv, for */
	char **argv_self;                  /* the FileHeader */
	/* --call-graph dwarf: samples carry the user registers and
	 * events.stack_user bytes of user stack (0 = 8 KiB, as perf; at most
	 * REC_STACK_USER_MAX, a multiple of 8), unwound at record time into
	 * the callchain (recorder/encode/emit.h). raw_stacks: write the
	 * registers and stack bytes instead, with the unwind tables of the
	 * objects they go through, for the analyzer to unwind.
	 * events.callchain (frame pointers) is then ignored. */
	bool dwarf;
	bool raw_stacks;
};

/* perf's default user stack copy, and the most a sample can hold (its
 * record size is 16 bits; perf allows the same). */
#define REC_STACK_USER_DEFAULT 8192u
#define REC_STACK_USER_MAX 65528u

#define REC_RECORDING_OPTS_INIT { .sz = sizeof(struct rec_recording_opts), \
	.bpf = REC_BPF_OPTS_INIT }

enum rec_recording_state {
	REC_RECORDING_READY,     /* new() done, not started */
	REC_RECORDING_RUNNING,
	REC_RECORDING_ENDING,    /* step() returned 0: waiting for stop() */
	REC_RECORDING_STOPPED,   /* stop() finished the output */
	REC_RECORDING_FAILED,    /* a write failed; output valid to its last
				  * complete frame */
};

struct rec_recording;

/* Resolves the targets, forks the command (held before exec), opens the
 * events and counters, and writes the output's first packets (header,
 * event descriptions). output_name is used in messages ("disk full while
 * writing NAME"). Returns 0 and *out, or a negative errno (logged). */
int rec_recording_new(const struct rec_recording_opts *opts,
		      struct prec_sink *sink, const char *output_name,
		      struct rec_recording **out);

/* Starts the drain thread, enables the events (or lets the command exec),
 * writes the tasks and maps that exist from /proc. 0 or -errno (logged). */
int rec_recording_start(struct rec_recording *r);

/* See the how-to above: > 0 running, 0 wants to stop, < 0 failed. */
int rec_recording_step(struct rec_recording *r, int timeout_ms);

/* An fd to poll for readability between steps. */
int rec_recording_pollfd(const struct rec_recording *r);

/* Finishes the recording: disables the events, ends a command still
 * running (SIGTERM), drains what the rings hold, writes the per-event lost
 * counts, final counter values, symbols, SessionEnd and the index, and
 * syncs. reason goes into SessionEnd unless the recording stopped itself
 * (step() returned 0). Idempotent. 0 or the error (logged). */
int rec_recording_stop(struct rec_recording *r, const char *reason);

/* Ends the current output as stop() would (without disabling anything)
 * and continues into next: its first packets describe the host, events,
 * tasks and maps again, so each output analyzes alone, and every kernel
 * record goes to exactly one output (no gap, no overlap). Counter values
 * stay cumulative from the recording's start; each output begins with a
 * snapshot. 0 or the error (logged; a failure to end the old output fails
 * the recording, a failure to start the new one too). */
int rec_recording_rotate(struct rec_recording *r, struct prec_sink *next,
			 const char *output_name);

/* A loss the driver learned of outside the kernel rings (e.g. the
 * streaming sender dropped frames): a Loss packet of kind
 * (Perfrec__Loss__Kind) with count and reason in the current output, now.
 * 0 or the writer's error (the recording then fails). */
int rec_recording_write_loss(struct rec_recording *r, int kind, uint64_t count,
			     const char *reason);

struct rec_recording_stats {
	enum rec_recording_state state;
	const char *stop_reason;          /* "" until it stops */
	uint64_t elapsed_ns;
	struct rec_emit_stats st;         /* every output so far */
	size_t nrings;
	const int *ring_cpu;              /* [nrings] */
	const struct rec_emit_cpu *cpu;   /* indexed by cpu id */
	uint64_t bytes_written;           /* every output so far */
	uint64_t bytes_raw;               /* packet bytes before compression */
	uint64_t output_bytes;            /* the current output */
	uint32_t outputs;                 /* 1 + rotations */
	const char *output_name;
	uint64_t wakeups;                 /* drain thread woken by a ring */
	uint64_t spool_full;              /* the encoder fell behind */
	uint64_t event_lost;              /* per-event lost counts, all outputs */
	uint64_t bpf_records;             /* off-CPU records from the rings */
	size_t mmap_pages;                /* data pages per ring */
	bool switch_events;               /* asked for (opts) */
	bool have_workload;
	pid_t workload_pid;
	int workload_exit;                /* exit code, 128 + signal, or -1 */
};

/* Pointers in st are borrowed until the next call on r. */
void rec_recording_stats(const struct rec_recording *r,
			 struct rec_recording_stats *st);

/* "N samples, M switch events, L lost (x.x%)" into buf; the switch
 * events only when they were asked for (or came anyway). */
const char *rec_recording_summary(const struct rec_recording_stats *st,
				  char *buf, size_t len);

/* Stops without finishing the output if still running (the output reads
 * to its last complete frame), kills a command not yet started, frees.
 * NULL is fine. */
void rec_recording_free(struct rec_recording *r);

#endif
