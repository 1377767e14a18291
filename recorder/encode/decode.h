/*
 * decode.h - one perf record (bytes from a ring) into a C struct.
 *
 * The layout of a PERF_RECORD_SAMPLE depends on its event's sample_type,
 * so the decoder reads the event id first (PERF_SAMPLE_IDENTIFIER puts it
 * right after the header) and asks the caller for that event's format.
 * Every other record type ends with a sample_id block (sample_id_all)
 * whose layout is the same for all events of a recording (ctx->sid_type), so
 * its id is the last u64.
 *
 * Nothing in the record is trusted: every count and size is checked against
 * the record's size; strings must be NUL-terminated inside the record.
 *
 * Ownership: pointers in struct rec_record (callchain, raw, read, user
 * registers and stack, strings, payload) point into the record bytes the caller passed and live as long
 * as they do (for a ring: until the next rec_ring_next()).
 */
#ifndef REC_DECODE_H
#define REC_DECODE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recorder/events/samplefmt.h"

/* Record types newer than some installed headers. */
#ifndef PERF_RECORD_LOST_SAMPLES
#define PERF_RECORD_LOST_SAMPLES 13
#endif
#ifndef PERF_RECORD_SWITCH
#define PERF_RECORD_SWITCH 14
#define PERF_RECORD_SWITCH_CPU_WIDE 15
#endif

/* sample_id fields (or the same fields of a sample). has_* say which were
 * present. */
struct rec_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
	bool has_tid, has_time, has_id, has_stream_id, has_cpu;
};

struct rec_record {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	struct rec_sample_id sid;
	union {
		struct {
			uint64_t ip, addr, period;
			const void *ips;       /* callchain: nr u64s, maybe unaligned */
			uint64_t nr;
			/* entries the emitter cut from the end of ips (nr is
			 * then what it kept: recorder/encode/emit.h) */
			uint32_t cut;
			const void *raw;
			uint32_t raw_size;
			const void *read;      /* read_format bytes */
			size_t read_len;
			uint64_t read_format;
			uint64_t sample_type;
			bool bpf_output;       /* rec_sample_fmt.bpf_output */
			/* PERF_SAMPLE_REGS_USER: regs_abi (PERF_SAMPLE_REGS_ABI_*;
			 * NONE for a kernel thread, then nregs = 0) and one u64
			 * per bit of regs_mask (the event's sample_regs_user),
			 * lowest bit first, maybe unaligned */
			uint64_t regs_abi, regs_mask;
			const void *regs;
			uint32_t nregs;
			/* PERF_SAMPLE_STACK_USER: stack_size bytes copied from the
			 * user stack pointer up, of which the first stack_dyn
			 * (<= stack_size) are valid (stack_size 0: none) */
			const void *stack;
			uint64_t stack_size, stack_dyn;
		} sample;
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint32_t prot, flags;
			const char *filename;
			uint8_t build_id[20];
			uint8_t build_id_size;  /* misc & PERF_RECORD_MISC_MMAP_BUILD_ID */
		} mmap2;
		struct {
			uint32_t pid, tid;
			const char *comm;
		} comm;
		struct {               /* FORK and EXIT */
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} task;
		struct {               /* SWITCH_CPU_WIDE (zero for SWITCH) */
			uint32_t next_prev_pid, next_prev_tid;
		} sw;
		struct {
			uint64_t id, lost;
		} lost;
		struct {
			uint64_t lost;
		} lost_samples;
		struct {
			uint64_t time, id, stream_id;
		} throttle;
	};
	/* Bytes after the header, for records kept raw. */
	const void *payload;
	size_t payload_len;
};

/* Decodes rec (len bytes, len >= header.size) into out. Only the fields of
 * the record's own type are set (and the common ones: type, misc, size,
 * sid, payload); other members of the union may hold anything. Returns 1 when the
 * type was decoded, 0 for a type kept raw (out->payload set, sample_id
 * parsed when possible), or a negative error: -EINVAL for a malformed
 * record, -ENOENT for a sample of an unknown event id, -EOPNOTSUPP for
 * sample_type bits this decoder does not handle. */
int rec_decode(const struct rec_decode_ctx *ctx, const void *rec, size_t len,
	       struct rec_record *out);

/* The time of record h (h->size bytes), read without decoding the rest:
 * what orders the records of several rings. 0 and *t, -ENOENT when the
 * record has none (no TIME, or a sample of an unknown event), -EINVAL when
 * it is too short to hold one. */
int rec_decode_time(const struct rec_decode_ctx *ctx,
		    const struct perf_event_header *h, uint64_t *t);

/* Bytes of a sample_id block for sample_type st. */
size_t rec_sample_id_size(uint64_t st);

#endif
