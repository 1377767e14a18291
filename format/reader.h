/*
 * reader.h - reads .prec files: frame index, frame iteration, packets.
 *
 * How to use (sequential, simplest):
 *
 *   struct prec_reader *r = prec_reader_open(path, NULL);
 *   struct prec_packet p;
 *   while ((ret = prec_reader_next_packet(r, &p)) > 0)
 *       ... p.pkt, p.time, prec_frame_string(p.frame, iid) ...
 *   // ret == 0: end of file. Damaged frames and a torn tail do not stop the
 *   // iteration: they are reported through opts.on_damage and counted in
 *   // prec_reader_stats(); the next good frame follows.
 *   prec_reader_free(r);
 *
 * Parallel decoding: take the frame list from prec_reader_index() (call
 * it before starting threads: building the index is not thread-safe),
 * hand frames to workers; each worker owns a struct prec_frame and calls
 * prec_reader_load_frame() (thread-safe: positional reads only) and then
 * prec_frame_next(). Frames never depend on each other. Such callers
 * report load errors with prec_reader_note_damage() and take the walk's
 * structural damage from prec_reader_damage() and stats.torn.
 *
 * Stats: frames/bytes_* count successful loads (any path); packets and
 * unknown_packets are added when a frame is read to its end (or to a
 * damaged packet) with prec_frame_next().
 *
 * Nothing read from the file is trusted: every size is checked against the
 * file size, opts.max_frame_raw and PREC_MAX_RATIO times the frame's
 * compressed size before anything is allocated or decompressed, and bad
 * bytes give a PREC_E_* code, never a crash.
 *
 * A concatenation of .prec files is read as one file made of parts
 * (prec_reader_parts()), each with its own header and index.
 *
 * A damaged file header does not stop reading when a whole frame follows
 * it: the header is then damage at offset 0 (PREC_E_HEADER, reported
 * and listed like the rest, stats.header_damaged set) and the version is
 * what the frame-info records imply.
 */
#ifndef PREC_READER_H
#define PREC_READER_H

#include <stddef.h>
#include <stdint.h>

#include "perfrec.pb-c.h"
#include "format/frame.h"

struct prec_reader;

struct prec_reader_opts {
	size_t sz;                 /* sizeof(struct prec_reader_opts) */
	size_t max_frame_raw;      /* refuse frames that decompress larger */
	/* Called once per damaged frame / torn tail, in file order. May be NULL. */
	void (*on_damage)(void *ctx, uint64_t offset, int err);
	void *ctx;
};

#define PREC_DEFAULT_MAX_FRAME_RAW (64u * 1024u * 1024u)
#define PREC_READER_OPTS_INIT { sizeof(struct prec_reader_opts), \
	PREC_DEFAULT_MAX_FRAME_RAW, NULL, NULL }

/* One data frame, as listed by the index (or found by walking the file). */
struct prec_frame_info {
	uint64_t offset;          /* file offset of the frame's info record */
	uint64_t data_offset;     /* file offset of the zstd data frame */
	uint32_t compressed_size; /* bytes of the zstd data frame */
	uint32_t raw_size;        /* bytes of packets after decompression */
	uint32_t stream;
	uint32_t packets;
	uint64_t t_min;           /* CLOCK_MONOTONIC ns; 0,0 = no timed packet */
	uint64_t t_max;
	uint64_t seq;             /* frame number in write order */
	uint64_t kinds;           /* PREC_KIND() bits of the packet kinds in the
				   * frame (InternedData included); 0 when not
				   * recorded (a minor-0 file): any kind */
};

/* A data frame found by walking the file whose info record was damaged:
 * its stream, packet count, times and seq are unknown (stream and seq take
 * these values, packets/t_min/t_max are 0), its bytes still decode. */
#define PREC_STREAM_UNKNOWN UINT32_MAX
#define PREC_SEQ_UNKNOWN UINT64_MAX

/* Structural damage found while building the index (see
 * prec_reader_damage()). */
struct prec_damage {
	uint64_t offset;          /* first damaged byte (a record start) */
	int err;                  /* PREC_E_CHECKSUM, PREC_E_CORRUPT,
				   * PREC_E_HEADER (at 0: the file header) */
};

struct prec_reader_stats {
	uint64_t file_size;
	uint32_t version_major, version_minor;
	uint64_t frames;           /* good data frames seen so far */
	uint64_t damaged_frames;   /* checksum / decode / structure damage */
	uint64_t packets;
	uint64_t unknown_packets;  /* packets of a kind this reader does not know */
	uint64_t bytes_compressed; /* data-frame bytes of good frames */
	uint64_t bytes_raw;        /* packet bytes of good frames */
	int torn;                  /* file ends inside a frame */
	uint64_t torn_offset;      /* where the torn tail starts */
	int index_present;         /* a valid trailing index was found */
	int index_rebuilt;         /* the index was rebuilt by walking frames */
	int header_damaged;        /* the file header did not check; read on */
};

/* One file of a concatenation (`cat a.prec b.prec > all.prec`, SPEC.md
 * section 8, "Concatenated files"): the bytes from one file header to the
 * next (or to the end). A single file is one part covering all of it.
 * Its frames are frames[first_frame .. first_frame + nframes) of
 * prec_reader_index(), its damage the entries of prec_reader_damage()
 * within [offset, end). */
struct prec_part {
	uint64_t offset;          /* its file header (0 for the first part) */
	uint64_t end;             /* one past its last byte */
	uint64_t data_start;      /* first byte after its file header */
	uint32_t version_major, version_minor;
	int header_damaged;       /* its file header did not check: damage
				   * PREC_E_HEADER at offset, frames read on */
	int index_present;        /* its own trailing index was valid and used */
	int torn;                 /* it ends inside a record */
	uint64_t torn_offset;     /* where that record starts */
	size_t first_frame, nframes;
	uint64_t t_min, t_max;    /* over its frames' time ranges; 0,0: none */
};

/* NULL opts = defaults. Returns NULL and sets errno (EINVAL for a file
 * that is not .prec; see prec_reader_open_error()). */
struct prec_reader *prec_reader_open(const char *path,
				     const struct prec_reader_opts *opts);
/* Reads from memory; buf is borrowed and must outlive the reader. */
struct prec_reader *prec_reader_open_mem(const void *buf, size_t len,
					 const struct prec_reader_opts *opts);
/* Like the above but returns the precise cause (PREC_E_MAGIC ...) in *err. */
struct prec_reader *prec_reader_open_err(const char *path,
					 const struct prec_reader_opts *opts,
					 int *err);
struct prec_reader *prec_reader_open_mem_err(const void *buf, size_t len,
					     const struct prec_reader_opts *opts,
					     int *err);
void prec_reader_free(struct prec_reader *r);   /* NULL is fine */

/* The list of frames, from the trailing index when it is present and
 * consistent, else rebuilt by walking the file (a killed writer leaves no
 * index). The array is owned by the reader. Returns 0 or < 0. */
int prec_reader_index(struct prec_reader *r,
		      const struct prec_frame_info **frames, size_t *n);

/* Damage the index walk found between frames (damaged info records,
 * unparseable bytes; in a concatenation a damaged file header
 * (PREC_E_HEADER) and a torn part before another (PREC_E_TRUNCATED)), in
 * file order; builds the index first. The torn tail of the file is not
 * listed here: see stats.torn / torn_offset. prec_reader_next_frame()
 * reports these through on_damage as it passes them; parallel readers that
 * only use prec_reader_index() + load_frame() take them from here. The
 * array is owned by the reader. Returns 0 or < 0. */
int prec_reader_damage(struct prec_reader *r, const struct prec_damage **d,
		       size_t *n);

/* The file's parts, in file order (builds the index first): one for a
 * single file. stats.index_present is set when every part's index was
 * used, stats.torn when the last part is torn; a torn part before
 * another is damage PREC_E_TRUNCATED at its torn_offset in
 * prec_reader_damage() (reported, not counted as a damaged frame). The
 * array is owned by the reader. Returns 0 or < 0. */
int prec_reader_parts(struct prec_reader *r, const struct prec_part **parts,
		      size_t *n);

/* Walks the file's records as a reader without an index does (SPEC.md
 * section 8), whatever the trailer says, reading record headers only: to
 * check a trailing index against the records it names (verify). Returns
 * 0 with the frames found (*frames) and the damage between them
 * (*damage, as prec_reader_damage() lists it but without the damage of
 * the file header at offset 0),
 * both malloc'ed and the caller's to free, and where a torn tail starts
 * (*torn_offset, UINT64_MAX when the file ends on a whole record); or
 * < 0. Thread-safe (positional reads only). */
int prec_reader_walk(struct prec_reader *r, struct prec_frame_info **frames,
		     size_t *nframes, struct prec_damage **damage, size_t *ndamage,
		     uint64_t *torn_offset);

/* Restrict prec_reader_next_frame/next_packet to frames whose time range
 * meets [t0, t1] (monotonic ns). Frames with no timed packet always pass. */
void prec_reader_set_window(struct prec_reader *r, uint64_t t0, uint64_t t1);
/* Restart sequential iteration from the first frame. */
void prec_reader_rewind(struct prec_reader *r);

/* Sequential frame walk in file order: 1 and *fi filled, 0 at the end.
 * Damage is reported (on_damage, stats) and skipped, never returned:
 * structural damage found by the index walk as the walk passes its offset,
 * the torn tail after the last frame. Damage inside a frame's bytes shows
 * only when the frame is loaded (prec_reader_next_packet() reports it).
 * Each damage is reported once per reader, also across rewinds. */
int prec_reader_next_frame(struct prec_reader *r, struct prec_frame_info *fi);

/* Reads and decompresses the frame fi into f (thread-safe). Returns 0 or
 * PREC_E_*; on error the damage is NOT counted by the reader (the caller
 * reports it, e.g. with prec_reader_note_damage). */
int prec_reader_load_frame(struct prec_reader *r,
			   const struct prec_frame_info *fi,
			   struct prec_frame *f);
/* Count and report damage found by a caller (thread-safe). */
void prec_reader_note_damage(struct prec_reader *r, uint64_t offset, int err);

/* Sequential packets of the whole file, frame after frame. */
int prec_reader_next_packet(struct prec_reader *r, struct prec_packet *p);

/* Packet-kind filter of prec_reader_next_packet(): the reader's own frame
 * gets prec_frame_set_kinds(mask) (same semantics, see below). Call any
 * time; it applies from the next packet on. Default PREC_KINDS_ALL. */
void prec_reader_set_kinds(struct prec_reader *r, uint64_t mask);

void prec_reader_stats(const struct prec_reader *r, struct prec_reader_stats *st);

#endif
