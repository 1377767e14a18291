/*
 * evlist.h - the opened perf event list of a recording, as libperf's
 * evlist: one evsel per parsed event (attr, fds, kernel ids), one ring per
 * CPU, the id -> event map the decoder needs. The events come from a
 * rec_evspecs (evparse.h: the event strings parsed, nothing opened).
 *
 * How to use:
 *
 *   struct rec_evlist s;
 *   rec_evlist_init(&s, &evspecs, &cfg);      // builds every attr
 *   rec_evlist_open(&s, cpus, ncpus, pids, npids);   // errors are logged
 *   rec_evlist_describe(&s, w);              // EventDesc + GroupDesc packets
 *   rec_evlist_enable(&s);                   // unless cfg.enable_on_exec
 *   ... drain s.rings[i] (rec_ring_*) with s.dctx as decode context ...
 *   rec_evlist_disable(&s);                  // before the final drain
 *   rec_evlist_release(&s);
 *
 * Layout: for every CPU (cpus[i]) and every target task (pids[], or -1 for
 * all tasks) every event is opened with cpu = that CPU, so there is exactly
 * one ring per CPU: the first fd opened on CPU i owns rings[i] and every
 * other fd on that CPU is redirected into it (PERF_EVENT_IOC_SET_OUTPUT).
 * Side-band records (comm, fork/exit, mmap2, context switches) are enabled
 * on the first event only, once per (CPU, task), so they are not repeated.
 *
 * Ownership: the evlist borrows the evspecs (they must outlive it) and owns
 * fds, rings and attrs.
 */
#ifndef REC_EVLIST_H
#define REC_EVLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/writer.h"
#include "recorder/events/evparse.h"
#include "recorder/events/samplefmt.h"
#include "recorder/ring/ring.h"

/* How the events are opened: the command line parses straight into this
 * (rec_recording_opts.events), and the BPF programs read their settings
 * from it too (rec_bpf_opts.events), so each option lives here once. The
 * recording sets inherit, enable_on_exec and regs_user from its target
 * and architecture, and the defaults (mmap_pages, stack_user) when 0. */
struct rec_evlist_cfg {
	uint64_t freq;          /* sample_freq when period == 0 */
	uint64_t period;        /* fixed sample_period, 0 = use freq */
	bool callchain;         /* -g */
	bool switch_events;     /* --switch-events */
	bool inherit;           /* task targets: follow new threads/children */
	bool enable_on_exec;    /* command target */
	size_t mmap_pages;      /* data pages per ring, power of two */
	/* What the BPF programs (recorder/bpf/bpf.h, loaded by the perf
	 * event source) need of the event set. off_cpu (--off-cpu) runs the
	 * off-CPU program and adds a bpf-output event after the parsed ones:
	 * opened once per CPU for every task (pid -1), into that CPU's ring,
	 * enabled from the start; its samples are the program's records,
	 * blocks of at least off_cpu_threshold ns as intervals. filter: the
	 * sample filter attached to the sampling events (borrowed; written
	 * into their descriptions), or NULL. */
	bool off_cpu;
	uint64_t off_cpu_threshold;
	const char *filter;
	/* --call-graph dwarf: samples also carry the user registers of
	 * regs_user (sample_regs_user) and stack_user bytes of user stack
	 * (sample_stack_user, a multiple of 8); the kernel's callchain then
	 * holds its kernel part only (exclude_callchain_user, as perf sets
	 * it). 0: none. */
	uint32_t stack_user;
	uint64_t regs_user;
	/* --max-stack: the most entries the kernel puts in a callchain
	 * (sample_max_stack; markers count). Its walk of frame pointers
	 * through code built without them reads junk up to this depth in
	 * the sampling interrupt, on the workload's CPU time. 0: the
	 * kernel's limit (kernel.perf_event_max_stack, 127 by default). */
	uint16_t max_stack;
};

struct rec_evsel_fd {
	int fd;
	int cpu;
	int pid;
	uint64_t id;
	uint64_t lost_written;          /* read_format LOST written so far */
};

struct rec_evsel {
	const struct rec_event *ev;     /* borrowed from the evspecs */
	struct perf_event_attr attr;
	struct rec_sample_fmt fmt;
	struct rec_evsel_fd *fds;
	size_t nfds;
};

struct rec_id_map {
	uint64_t id;
	uint32_t sel;
};

struct rec_evlist {
	const struct rec_evspecs *evspecs;
	struct rec_evlist_cfg cfg;
	struct rec_evsel *sel;          /* [nsel]: the parsed events', then the
					 * bpf-output event (cfg.off_cpu) */
	size_t nsel;
	struct rec_event bpf_ev;        /* sel[nsel - 1].ev with off_cpu */
	struct rec_ring *rings;         /* [nrings], rings[i] is cpus[i]'s */
	size_t nrings;
	int *ring_cpu;                  /* [nrings] */
	struct rec_id_map *ids;         /* sorted by id */
	size_t nids;
	struct rec_decode_ctx dctx;
	size_t page_size;
	bool have_lost;                 /* read_format LOST is accepted */
	/* How open had to adjust the events (e.g. kernel samples excluded
	 * by perf_event_paranoid), or "". Trace content, not a message: the
	 * recording logs it and writes it into the file as a Note. */
	char note[256];
};

int rec_evlist_init(struct rec_evlist *s, const struct rec_evspecs *l,
		     const struct rec_evlist_cfg *cfg);
/* pids == NULL / npids == 0: every task on the CPUs (system-wide).
 * Returns 0 or -errno after logging a message naming the event, cause and
 * fix. */
int rec_evlist_open(struct rec_evlist *s, const int *cpus, size_t ncpus,
		    const int *pids, size_t npids);
int rec_evlist_describe(struct rec_evlist *s, struct prec_writer *w);
int rec_evlist_enable(struct rec_evlist *s);
int rec_evlist_disable(struct rec_evlist *s);
void rec_evlist_release(struct rec_evlist *s);

/* At the end of each output (after the final drain, or at a rotation):
 * reads every fd's per-event lost count (PERF_FORMAT_LOST, Linux >= 6.0)
 * and writes a Loss EVENT_LOST packet on stream 0 for each one that grew
 * since the previous output's, with the growth as its count, so that every
 * output holds its own share. *total grows by their sum. Returns 0 or the
 * writer's error. */
int rec_evlist_write_lost(struct rec_evlist *s, struct prec_writer *w,
			   uint64_t now_ns, uint64_t *total);

/* Whether e is the bpf-output event of cfg.off_cpu. */
bool rec_evlist_is_bpf_output(const struct rec_evlist *s, const struct rec_evsel *e);
/* Whether a sample filter (cfg.filter) applies to e: a sampling
 * event other than a tracepoint or probe (their BPF programs are of
 * another type) or the bpf-output event. */
bool rec_evlist_filterable(const struct rec_evlist *s, const struct rec_evsel *e);

/* The evsel index of kernel id, or -1. */
int rec_evlist_find_id(const struct rec_evlist *s, uint64_t id);

/* The sample_type bits every event shares (the sample_id layout). */
#define REC_SID_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | \
		      PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

#endif
