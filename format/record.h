/*
 * record.h - split a .prec byte stream into whole records (collector side).
 *
 * A sender streams exactly the bytes of a file ("file = stream"); TCP cuts
 * them anywhere. A collector that archives, de-duplicates (by frame seq) or
 * forwards them needs record boundaries without decoding frames:
 *
 *   buffer the received bytes;
 *   while ((ret = prec_record_scan(buf + pos, have - pos, max, &rec)) > 0) {
 *       ... rec.kind, rec.len, rec.info (frames) ...
 *       append buf[pos, pos + rec.len) to the archive;
 *       pos += rec.len;
 *   }
 *   ret == 0: wait for more bytes; ret < 0: the stream is damaged (drop
 *   the connection, or resynchronize as SPEC.md section 8 describes).
 *
 * Only the metadata records are checked (magic, sizes, CRC); the zstd data
 * frame is taken by the size its info record states, not decompressed.
 * Nothing is allocated; buf is only read.
 */
#ifndef PREC_RECORD_H
#define PREC_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"

enum prec_record_kind {
	PREC_RECORD_HEADER = 0,   /* file header: version in major/minor */
	PREC_RECORD_FRAME = 1,    /* frame-info record + its zstd data frame */
	PREC_RECORD_INDEX = 2,    /* trailing index (ends a file) */
	PREC_RECORD_OTHER = 3,    /* a skippable kind this version does not use */
};

struct prec_record {
	enum prec_record_kind kind;
	size_t len;                  /* bytes of the whole record */
	uint16_t major, minor;       /* HEADER */
	/* FRAME: offset = 0 and data_offset relative to the record start */
	struct prec_frame_info info;
};

/* 1 and *rec when buf starts with a complete valid record; 0 when buf is a
 * proper prefix of one (read more); PREC_E_MAGIC (not a record start),
 * PREC_E_CHECKSUM, PREC_E_CORRUPT, PREC_E_VERSION (newer major) or
 * PREC_E_TOO_BIG (a record larger than max_len bytes; 0 = 64 MiB + 64 KiB)
 * otherwise. */
int prec_record_scan(const void *buf, size_t len, size_t max_len,
		     struct prec_record *rec);

#endif
