/*
 * source.h - where a recording's kernel records come from: a table of
 * functions (as format/sink.h is for where bytes go), so a recording runs
 * over perf events on a host or over rings a unit test fills itself.
 *
 * Call order (by the recording):
 *   open(targets)      fills rings, nrings, ring_cpu, dctx; errors logged
 *   describe(w)        EventDesc / GroupDesc packets (indexes 0..nevents-1
 *                      and 0..ngroups-1; counting groups follow them)
 *   enable()           unless the events start at a command's exec
 *   ... the recording drains rings[] (ring/drain.h) ...
 *   tick(e, now, 0)    now and then: what the source learned outside the
 *                      rings (BPF maps), written through the emitter
 *   disable()          before the final drain
 *   tick(e, now, 1)    after the final drain: everything left
 *   write_lost(w, ..)  per-event lost counts since the previous output's, at
 *                      the end of each output (a rotation or after the
 *                      final drain)
 *   free()
 *
 * A source that has nothing to say for describe or write_lost returns 0.
 * Rings may have fd < 0 (memory rings): the drain polls them.
 */
#ifndef REC_SOURCE_H
#define REC_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/writer.h"
#include "recorder/encode/decode.h"
#include "recorder/ring/ring.h"

struct rec_evspecs;
struct rec_evlist_cfg;
struct rec_bpf_opts;
struct rec_emit;

struct rec_source;

struct rec_source_ops {
	/* cpus: one ring each. pids NULL / npids 0: every task.
	 * enable_on_exec: the events start when the (held) task execs. */
	int (*open)(struct rec_source *src, const int *cpus, size_t ncpus,
		    const int *pids, size_t npids);
	int (*describe)(struct rec_source *src, struct prec_writer *w);
	int (*enable)(struct rec_source *src);
	int (*disable)(struct rec_source *src);
	int (*write_lost)(struct rec_source *src, struct prec_writer *w,
			  uint64_t now_ns, uint64_t *total);
	/* May be NULL. 0 or the writer's error. */
	int (*tick)(struct rec_source *src, struct rec_emit *e, uint64_t now_ns,
		    bool final);
	void (*free)(struct rec_source *src);
};

struct rec_source {
	const struct rec_source_ops *ops;
	/* Set by open; valid until free. */
	struct rec_ring *rings;          /* [nrings] */
	size_t nrings;
	const int *ring_cpu;             /* [nrings] */
	const struct rec_decode_ctx *dctx;
	uint32_t nevents, ngroups;       /* descriptions written */
	size_t ring_pages;               /* data pages per ring */
	size_t page_size;
	/* How open adjusted the events (e.g. kernel samples excluded by
	 * perf_event_paranoid), or "": the recording logs it as a warning
	 * and writes it into the trace as a Note. */
	const char *note;
	/* Set by open when the rings carry BPF programs' records: the
	 * emitter's bpf_output hook (recorder/encode/emit.h), or NULL. */
	int (*bpf_emit)(void *ctx, struct rec_emit *e, uint32_t stream,
			const struct rec_record *r);
	void *bpf_ctx;
};

/* perf events of evspecs (borrowed; outlives the source) with cfg, and
 * the BPF programs cfg asks for (off_cpu, filter) with bo's targets and
 * settings (bo->events is ignored: the programs read cfg; bo's strings
 * and arrays are borrowed until open). Returns NULL and sets errno
 * (EINVAL: bad cfg, ENOMEM). */
struct rec_source *rec_source_perf_new(const struct rec_evspecs *evspecs,
				       const struct rec_evlist_cfg *cfg,
				       const struct rec_bpf_opts *bo);

/* NULL is fine. */
void rec_source_free(struct rec_source *src);

#endif
