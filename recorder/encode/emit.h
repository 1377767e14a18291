/*
 * emit.h - kernel records (from a ring) into trace packets.
 *
 * How to use:
 *
 *   struct rec_emit e;
 *   rec_emit_init(&e, w, &decode_ctx, max_cpu);
 *   for each record of the ring of cpu c:
 *       ret = rec_emit_record(&e, 1 + c, c, hdr);  // < 0: the writer failed
 *   rec_emit_ring_error(&e, c, reason);             // a ring stopped
 *   ... e.st (totals) and e.cpu[c] (per CPU) for SessionEnd ...
 *   rec_emit_release(&e);
 *
 * Every record becomes exactly one packet: decoded types their own packet,
 * others (and records that fail to decode) a RawRecord, counted in
 * st.raw / st.bad. Nothing is dropped silently.
 *
 * Ownership: the writer and decode context are borrowed.
 */
#ifndef REC_EMIT_H
#define REC_EMIT_H

#include <linux/perf_event.h>
#include <stdint.h>

#include "format/writer.h"
#include "recorder/encode/decode.h"

struct rec_emit_stats {
	uint64_t records;      /* ring records seen */
	uint64_t samples;
	uint64_t switches;
	uint64_t tasks;        /* COMM/FORK/EXIT */
	uint64_t mmaps;
	uint64_t lost;         /* kernel LOST + LOST_SAMPLES counts */
	uint64_t lost_records; /* LOST records */
	uint64_t throttles;
	uint64_t raw;          /* kept raw: types we do not decode */
	uint64_t bad;          /* kept raw: records that did not decode */
	uint64_t ring_errors;
	uint64_t bytes;        /* ring bytes */
	uint64_t bpf;          /* samples of bpf-output events (BPF records) */
};

struct rec_emit_cpu {
	uint64_t records, samples, lost, bytes, switches;
};

struct rec_emit {
	struct prec_writer *w;
	const struct rec_decode_ctx *dctx;
	struct rec_emit_stats st;
	struct rec_emit_cpu *cpu;   /* [ncpu] */
	int ncpu;
	uint64_t *ips;              /* aligned copy of a callchain */
	size_t ips_cap;
	/* symbols (issue 6): optional observer of every decoded record but
	 * context switches (no addresses in them), e.g.
	 * rec_symcollect_observe (recorder/symcollect.h). */
	void (*observe)(void *ctx, const struct rec_record *r);
	void *observe_ctx;
	/* BPF (recorder/bpf/bpf.h): samples of bpf-output events are a BPF
	 * program's records, turned into packets by their owner (e.g.
	 * rec_bpf_emit) instead of Sample packets; NULL: kept raw. The
	 * hook writes through e->w and may call e->observe. */
	int (*bpf_output)(void *ctx, struct rec_emit *e, uint32_t stream,
			  const struct rec_record *r);
	void *bpf_ctx;
};

int rec_emit_init(struct rec_emit *e, struct prec_writer *w,
		  const struct rec_decode_ctx *dctx, int ncpu);
void rec_emit_release(struct rec_emit *e);

/* Decodes hdr (a whole record) and appends its packet to `stream`.
 * ring_cpu is the CPU whose ring held it (-1 if none). Returns 0 or the
 * writer's error. */
int rec_emit_record(struct rec_emit *e, uint32_t stream, int ring_cpu,
		    const struct perf_event_header *hdr);

/* Writes a Loss RING_ERROR packet for the ring of cpu. */
int rec_emit_ring_error(struct rec_emit *e, uint32_t stream, int cpu,
			uint64_t time_ns, const char *reason);

#endif
