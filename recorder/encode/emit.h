/*
 * emit.h - kernel records (from a ring) into trace packets.
 *
 * How to use:
 *
 *   struct rec_emit e;
 *   rec_emit_init(&e, w, &decode_ctx, max_cpu);
 *   for each record of the ring of cpu c:
 *       ret = rec_emit_record(&e, stream, c, hdr);  // < 0: the writer failed
 *   rec_emit_ring_error(&e, c, reason);             // a ring stopped
 *   ... e.st (totals) and e.cpu[c] (per CPU) for SessionEnd ...
 *   rec_emit_release(&e);
 *
 * Every record becomes exactly one packet: decoded types their own packet,
 * others (and records that fail to decode) a RawRecord, counted in
 * st.raw / st.bad. Nothing is dropped silently.
 *
 * Samples with a user stack copy (--call-graph dwarf: PERF_SAMPLE_REGS_USER
 * + STACK_USER): with an unwinder set (e.unwind) the user part of the
 * callchain is unwound here and written the way the kernel writes
 * frame-pointer chains, [kernel part..., PERF_CONTEXT_USER, pc, return
 * addresses...]; the registers and stack bytes are dropped. With
 * e.raw_stacks, or without an unwinder, the sample keeps its registers and
 * stack bytes (a prefix of them: what an unwind reads) and the analyzer
 * unwinds offline; the callchain then holds the kernel part only.
 *
 * Frame-pointer chains (with e.mapped set) lose their junk end before the
 * observer sees them: the Sample says how many entries went
 * (callchain_cut), st.cut_chains / st.cut_frames count them.
 *
 * Ownership: the writer and decode context are borrowed.
 */
#ifndef REC_EMIT_H
#define REC_EMIT_H

#include <linux/perf_event.h>
#include <stdint.h>

#include "format/writer.h"
#include "recorder/encode/decode.h"

/* The streams a recording writes (format/SPEC.md section 6): by kind of
 * packet, not by CPU, so frames fill up (and compress, and share interned
 * callchains) whatever the CPU count, the writer keeps four open frames on
 * any host, and a pass reads only the frames of the kinds it needs. */
enum rec_stream {
	REC_STREAM_META = 0,      /* header, descriptions, tasks and maps from
				   * /proc, symbols, counters, losses found
				   * by perfrec, the end */
	REC_STREAM_SAMPLES = 1,   /* samples of every CPU */
	REC_STREAM_SWITCHES = 2,  /* context switches of every CPU and the
				   * off-CPU records of the BPF program */
	REC_STREAM_SIDEBAND = 3,  /* the kernel's task, mmap, loss, throttle
				   * and unknown records */
};

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
	/* user stacks (--call-graph dwarf) */
	uint64_t ustacks;      /* samples with user registers and stack */
	uint64_t ustack_unwound;   /* of those, unwound here (>= 1 address) */
	uint64_t ustack_frames;    /* user addresses those gave */
	uint64_t ustack_raw;       /* written with their stack bytes */
	uint64_t ustack_raw_bytes; /* stack bytes written */
	uint64_t ustack_ns;        /* time spent unwinding */
	uint64_t ustack_stops[8];  /* how unwinds ended (enum prec_unwind_stop) */
	/* frame-pointer chains cut at their junk end (e.mapped) */
	uint64_t cut_chains;       /* samples cut */
	uint64_t cut_frames;       /* entries cut */
};

struct rec_emit_cpu {
	uint64_t records, samples, lost, bytes, switches;
};

struct rec_emit {
	struct prec_writer *w;
	/* Streams by kind (0: the stream passed to rec_emit_record): context
	 * switches with BPF off-CPU records, and side-band records (tasks, maps, losses, throttles, raw
	 * records) go apart from samples, so a reader that needs one kind
	 * skips the others' frames unread, and frames fill up by kind rather
	 * than by CPU. */
	uint32_t switch_stream, side_stream;
	const struct rec_decode_ctx *dctx;
	struct rec_emit_stats st;
	struct rec_emit_cpu *cpu;   /* [ncpu] */
	int ncpu;
	uint64_t *ips;              /* aligned copy of a callchain */
	size_t ips_cap;
	/* symbol tables in the trace: optional observer of every decoded
	 * record but context switches (no addresses in them), e.g.
	 * rec_symgather_observe (recorder/symbols/symgather.h). */
	void (*observe)(void *ctx, const struct rec_record *r);
	void *observe_ctx;
	/* BPF (recorder/bpf/bpf.h): samples of bpf-output events are a BPF
	 * program's records, turned into packets by their owner (e.g.
	 * rec_bpf_emit) instead of Sample packets; NULL: kept raw. The
	 * hook writes through e->w and may call e->observe. */
	int (*bpf_output)(void *ctx, struct rec_emit *e, uint32_t stream,
			  const struct rec_record *r);
	void *bpf_ctx;
	/* --call-graph dwarf: the unwinder of user stacks, e.g.
	 * rec_symgather_unwind_sample (symbols/symgather.h). Writes up to
	 * max user addresses of sample r to ips (its user pc first) and
	 * returns how many (0: none), or < 0 on error (the sample keeps its
	 * stack then). raw: the stack is written with the sample; *keep is
	 * then how many of its bytes an offline unwind reads. *stop: enum
	 * prec_unwind_stop (counted in st.ustack_stops). */
	int (*unwind)(void *ctx, const struct rec_record *r, int raw,
		      uint64_t *ips, size_t max, size_t *keep, int *stop);
	void *unwind_ctx;
	int raw_stacks;             /* keep stacks even when unwinding works */
	/* Frame-pointer chains cut at their junk end (emit.c says the rule),
	 * e.g. rec_symgather_user_mapped (symbols/symgather.h): 1 when a
	 * mapping of process pid holds addr at time, 0 when none does,
	 * < 0 when it cannot answer: the chain is then kept. NULL: chains
	 * kept whole. */
	int (*mapped)(void *ctx, uint32_t pid, uint64_t addr, uint64_t time);
	void *mapped_ctx;
	uint64_t *regs;             /* aligned copy of a sample's registers */
	size_t regs_cap;
};

/* Most user addresses an unwind adds to one callchain (the analyzer's
 * offline unwind takes as many). */
#define REC_EMIT_USTACK_MAX 256

int rec_emit_init(struct rec_emit *e, struct prec_writer *w,
		  const struct rec_decode_ctx *dctx, int ncpu);
void rec_emit_release(struct rec_emit *e);

/* Decodes hdr (a whole record) and appends its packet to `stream` (a
 * context switch or BPF record to e->switch_stream, a side-band record to
 * e->side_stream, when those are set).
 * ring_cpu is the CPU whose ring held it (-1 if none). Returns 0 or the
 * writer's error. */
int rec_emit_record(struct rec_emit *e, uint32_t stream, int ring_cpu,
		    const struct perf_event_header *hdr);

/* Writes a Loss RING_ERROR packet for the ring of cpu. */
int rec_emit_ring_error(struct rec_emit *e, uint32_t stream, int cpu,
			uint64_t time_ns, const char *reason);

#endif
