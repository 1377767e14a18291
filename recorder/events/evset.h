/*
 * session.h - the sampling events of a recording: attrs, fds, rings, ids.
 *
 * How to use:
 *
 *   struct rec_session s;
 *   rec_session_init(&s, &evlist, &cfg);      // builds every attr
 *   rec_session_open(&s, cpus, ncpus, pids, npids, err, len);
 *   rec_session_describe(&s, w);              // EventDesc + GroupDesc packets
 *   rec_session_enable(&s);                   // unless cfg.enable_on_exec
 *   ... drain s.rings[i] (rec_ring_*) with s.dctx as decode context ...
 *   rec_session_disable(&s);                  // before the final drain
 *   rec_session_release(&s);
 *
 * Layout: for every CPU (cpus[i]) and every target task (pids[], or -1 for
 * all tasks) every event is opened with cpu = that CPU, so there is exactly
 * one ring per CPU: the first fd opened on CPU i owns rings[i] and every
 * other fd on that CPU is redirected into it (PERF_EVENT_IOC_SET_OUTPUT).
 * Side-band records (comm, fork/exit, mmap2, context switches) are enabled
 * on the first event only, once per (CPU, task), so they are not repeated.
 *
 * Ownership: the session borrows the evlist (it must outlive the session)
 * and owns fds, rings and attrs.
 */
#ifndef REC_SESSION_H
#define REC_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/writer.h"
#include "recorder/encode/decode.h"
#include "recorder/events/evparse.h"
#include "recorder/ring/ring.h"

struct rec_session_cfg {
	uint64_t freq;          /* sample_freq when period == 0 */
	uint64_t period;        /* fixed sample_period, 0 = use freq */
	bool callchain;         /* -g */
	bool switch_events;     /* --switch-events */
	bool inherit;           /* task targets: follow new threads/children */
	bool enable_on_exec;    /* command target */
	size_t mmap_pages;      /* data pages per ring, power of two */
};

struct rec_evsel_fd {
	int fd;
	int cpu;
	int pid;
	uint64_t id;
};

struct rec_evsel {
	const struct rec_event *ev;     /* borrowed from the evlist */
	struct perf_event_attr attr;
	struct rec_sample_fmt fmt;
	struct rec_evsel_fd *fds;
	size_t nfds;
};

struct rec_id_map {
	uint64_t id;
	uint32_t sel;
};

struct rec_session {
	const struct rec_evlist *evlist;
	struct rec_session_cfg cfg;
	struct rec_evsel *sel;          /* [evlist->n] */
	size_t nsel;
	struct rec_ring *rings;         /* [nrings], rings[i] is cpus[i]'s */
	size_t nrings;
	int *ring_cpu;                  /* [nrings] */
	struct rec_id_map *ids;         /* sorted by id */
	size_t nids;
	struct rec_decode_ctx dctx;
	size_t page_size;
	bool have_lost;                 /* read_format LOST is accepted */
	char note[256];                 /* a non-fatal remark from open, or "" */
};

int rec_session_init(struct rec_session *s, const struct rec_evlist *l,
		     const struct rec_session_cfg *cfg);
/* pids == NULL / npids == 0: every task on the CPUs (system-wide).
 * Returns 0 or -errno with a message naming the event, cause and fix. */
int rec_session_open(struct rec_session *s, const int *cpus, size_t ncpus,
		     const int *pids, size_t npids, char *err, size_t errlen);
int rec_session_describe(struct rec_session *s, struct prec_writer *w);
int rec_session_enable(struct rec_session *s);
int rec_session_disable(struct rec_session *s);
void rec_session_release(struct rec_session *s);

/* After the final drain: reads every fd's per-event lost count
 * (PERF_FORMAT_LOST, Linux >= 6.0) and writes a Loss EVENT_LOST packet on
 * stream 0 for each non-zero one. *total = their sum. Returns 0 or the
 * writer's error. */
int rec_session_write_lost(struct rec_session *s, struct prec_writer *w,
			   uint64_t now_ns, uint64_t *total);

/* The evsel index of kernel id, or -1. */
int rec_session_find_id(const struct rec_session *s, uint64_t id);

/* The sample_type bits every event shares (the sample_id layout). */
#define REC_SID_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | \
		      PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

#endif
