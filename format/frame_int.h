/*
 * frame_int.h - body of struct prec_frame, shared by frame.c and reader.c
 * (internal to format/). The reader loads frames and sets their stream,
 * offset and end-of-frame callback; the frame never calls the reader by
 * name, so frame.c sits below reader.c.
 */
#ifndef PREC_FRAME_INT_H
#define PREC_FRAME_INT_H

#include <stddef.h>
#include <stdint.h>

#include <zstd.h>

#include "format/arena.h"
#include "format/cctab.h"
#include "format/frame.h"

/* iid -> value, open addressing; iid 0 ("none") is never stored. */
struct prec_iid_slot {
	uint64_t iid;
	const void *p;
	size_t n;
};

struct prec_iid_table {
	struct prec_iid_slot *slots;
	size_t nslots;    /* power of two, or 0 */
	size_t count;
};

struct prec_frame {
	ZSTD_DCtx *dctx;
	unsigned char *raw;        /* decompressed packets */
	size_t raw_len, raw_cap;
	unsigned char *zbuf;       /* compressed bytes read from an fd source */
	size_t zcap;
	size_t pos;                /* next byte of raw to decode */
	uint64_t time;             /* time of the last packet decoded */
	int err;                   /* sticky decode error of this frame */
	int loaded;
	int fast;                  /* prec_packet_fast_ok() */
	uint64_t kinds;            /* prec_frame_set_kinds(); kept across loads */

	/* filled by prec_reader_load_frame(); 0 after a bare prec_frame_load() */
	uint32_t stream;
	uint64_t offset;
	/* called once with the frame's counts when it is read to its end or
	 * to a damaged packet (the reader adds them to its stats) */
	void (*on_end)(void *ctx, uint64_t packets, uint64_t unknown);
	void *on_end_ctx;
	int accounted;

	uint64_t packets;          /* read so far (InternedData included; a
				    * SwitchBatch once, not per row) */
	uint64_t seen_kinds;       /* PREC_KIND() of the packets read so far */
	uint64_t unknown;          /* skipped: oneof not set / unknown Trace field */

	/* rows of the SwitchBatch being returned (arena memory) */
	Perfrec__Packet *rows;
	size_t nrows, row;

	struct prec_arena arena;
	struct prec_iid_table strings;
	struct prec_cctab chains;     /* callchains, expanded on lookup */
};

/* frame.c: prec_frame_load() of a frame whose content size must be want
 * (UINT64_MAX: any), checked before anything is decompressed:
 * PREC_E_CORRUPT when it differs. */
int prec_frame_load_sized(struct prec_frame *f, const void *zbuf, size_t zlen,
			  size_t max_raw, uint64_t want);

#endif
