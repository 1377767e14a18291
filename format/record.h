/*
 * record.h - split a .prec byte stream into whole records (collector side).
 * A record is a file record, as SPEC.md names them: the file header, one
 * frame (its frame-info record and zstd data frame) or the index; the
 * unit a stream sends and an archive file appends. (What a perf ring
 * holds is a kernel record, never a bare "record".)
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

/*
 * Recovery of a stored file's records. A file that was appended one
 * whole record at a time (a collector's or an archiver's, SPEC.md section
 * 10 "Resuming a file") is resumed from what is on disk: the next record
 * it needs is its record count + 1, so that count must be right even
 * when disk damage hit bytes inside the file, and the only bytes that may
 * be cut are a torn tail, the part of one record an interrupted write
 * left at the end. prec_record_recover() walks buf:
 *
 *   - a record prec_record_scan() takes is counted (a data frame whose
 *     zstd block structure does not fill its csize is reported, and
 *     counted: the frame is lost alone, readers skip it);
 *   - a record whose bytes are damaged is measured from what is left
 *     intact: its frame-info CRC (found by trying every info size, so a
 *     damaged size or magic field does not matter), else the structure of
 *     its zstd data frame, else (the index) the trailer at the end that
 *     points at it; the length counts when a record (or the end) follows;
 *   - when none of these measures it, the walk resynchronizes on the next
 *     frame-info record that passes its CRC (or the index) as SPEC.md
 *     section 8 does for readers; the damaged stretch held exactly one
 *     record when the frame numbers around it (frame-info seq) leave room
 *     for no more, or when a valid index says how many frames the file
 *     has; otherwise its record count is unknown and out->certain is 0;
 *   - the tail is torn only when it is a proper prefix of a record
 *     (prec_record_scan() returns 0) that no reading above makes whole and
 *     no valid record follows, or when it is all zero bytes (a file
 *     extended by a crash before its data reached the disk).
 *
 * Content checksums are not checked (that needs decompressing every
 * frame; readers and `perfrec-analyze verify` do it). Nothing is
 * allocated; buf is only read. Damage is reported through on_damage (may
 * be NULL) in file order.
 */
struct prec_record_damage {
	uint64_t offset;        /* first damaged byte */
	uint64_t len;           /* bytes, up to the next record or the end */
	uint64_t records;       /* records those bytes held, when known */
	int known;              /* records is certain */
	int err;                /* PREC_E_CHECKSUM, PREC_E_CORRUPT, PREC_E_MAGIC, ... */
};

struct prec_record_recovery {
	uint64_t records;       /* records in [0, end), damaged ones included;
				 * a lower bound when !certain */
	uint64_t end;           /* buffer length minus the torn tail */
	int complete;           /* the last record is the index */
	int certain;            /* every damaged stretch's record count is known */
	uint64_t damaged;       /* damaged stretches reported */
	uint64_t first_damage;  /* offset of the first (when damaged) */
	uint64_t first_unknown; /* offset of the first of unknown count (!certain) */
	uint64_t t_min, t_max;  /* time range of the frames read (0 when none) */
};

/* 0 and *out, or PREC_E_CORRUPT for bad arguments. */
int prec_record_recover(const void *buf, size_t len,
			void (*on_damage)(void *ctx, const struct prec_record_damage *d),
			void *ctx, struct prec_record_recovery *out);

#endif
