/*
 * samplefmt.h - the record layout of opened events: what a decoder of
 * their kernel records (recorder/encode/decode.h) needs to know of them.
 *
 * The event set (evlist.h) fills these when it builds its attrs and hands
 * the decoder a rec_decode_ctx whose lookup maps a kernel id to its event's
 * format; the decoder reads them. They live here, below both, so the event
 * set never includes the decoder.
 */
#ifndef REC_SAMPLEFMT_H
#define REC_SAMPLEFMT_H

#include <stdbool.h>
#include <stdint.h>

/* What the decoder needs to know about one event. */
struct rec_sample_fmt {
	uint64_t sample_type;
	uint64_t read_format;
	bool bpf_output;       /* a bpf-output event: its raw data is a BPF
				* program's record (recorder/bpf) */
	uint64_t regs_user;    /* attr.sample_regs_user (PERF_SAMPLE_REGS_USER) */
};

struct rec_decode_ctx {
	/* sample_type bits shared by every event (they shape sample_id). */
	uint64_t sid_type;
	/* Format of the event with kernel id `id`, or NULL if unknown. */
	const struct rec_sample_fmt *(*lookup)(void *arg, uint64_t id);
	void *arg;
};

#endif
