/*
 * writer.h - appends packets to a .prec stream of independent zstd frames.
 *
 * How to use:
 *
 *   struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
 *   struct prec_writer *w = prec_writer_new(sink, &o);
 *   for each packet, on stream s (0 = session metadata, 1 + cpu per CPU ...):
 *       iid = prec_writer_intern_string(w, s, "comm");        // optional
 *       cc  = prec_writer_intern_callchain(w, s, ips, n);     // optional
 *       ... fill a Perfrec__Packet using those iids ...
 *       prec_writer_append(w, s, &pkt, time_ns);
 *   now and then (e.g. every loop turn): prec_writer_flush_due(w, now_ns);
 *   prec_writer_close(w);   // flushes all frames, writes index, syncs
 *   prec_writer_free(w);
 *
 * Frames. Each stream has its own open frame; packets of one frame all
 * belong to one stream. A frame is cut when its packet bytes reach
 * opts.frame_size, when prec_writer_flush_due() finds it older than
 * opts.flush_ms (by the monotonic clock value passed in), or on
 * prec_writer_flush()/close. A cut frame is compressed (zstd, content
 * checksum on) and written to the sink preceded by its frame-info
 * skippable frame, in one sink write.
 *
 * Interning. An iid returned by prec_writer_intern_*() is valid only for
 * the packets appended on the same stream until the next frame cut. Cuts
 * happen only inside prec_writer_append() *after* the packet is stored,
 * or in prec_writer_flush*(), so "intern, then append the packet using the
 * iid" is always safe. The writer emits the InternedData packet into the
 * frame itself the first time a value is seen in that frame.
 *
 * Callchains are written as a tree of nodes shared by the callchains of
 * the frame (format/SPEC.md, 1.1), and a Sample whose callchain starts
 * with its own cpumode's context marker and ip names only its callers.
 * So the id prec_writer_intern_callchain() returns is a handle that the
 * writer resolves when the packet is appended: put it in Sample.callchain
 * or OffCpu.callchain, nowhere else. The caller's packet is left as it
 * was (the writer puts its own values back after encoding). Ids are not
 * to be kept: after a cut that followed the stream's last append they are
 * stale, and append refuses a stale handle with -EINVAL (the writer goes
 * on). An id interned and then cut off by a flush before its append stays
 * valid (the tree is written again in the new frame).
 *
 * Context switches. With opts.switch_rows (the default), the ContextSwitch
 * packets appended on a stream are held as rows of a SwitchBatch packet,
 * which is written when a packet of another kind is appended on that
 * stream, when it is full, or when its frame is cut (so a frame never
 * ends with rows unwritten); a run of fewer than PREC_SWBATCH_MIN_ROWS
 * (8) that is not a full batch is written as ContextSwitch packets. Readers of this library give the rows back
 * as ContextSwitch packets, in order, with their times.
 *
 * Time. `time_ns` is CLOCK_MONOTONIC; the writer sets pkt->dt to the delta
 * from the stream's previous packet in the frame. Pass 0 for packets with
 * no time of their own (they then inherit the previous time).
 *
 * Errors. After a sink error (e.g. -ENOSPC) the writer is failed: every
 * further call returns that error; everything written before it is a valid
 * file that reads to its last frame. One exception is not sticky: a single
 * packet larger than 16 MiB encoded is refused with PREC_E_TOO_BIG and the
 * writer goes on (the packet is not stored, the stream's clock unchanged).
 * After a clean close every call returns PREC_E_CLOSED.
 *
 * Counting. stats.packets and the per-frame packet counts are the
 * `Trace.packet` fields written: they include the InternedData packets
 * the writer adds, and count a SwitchBatch as one.
 *
 * Threads: one writer is used by one thread at a time.
 */
#ifndef PREC_WRITER_H
#define PREC_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "perfrec.pb-c.h"
#include "format/sink.h"

struct prec_writer;

struct prec_writer_opts {
	size_t sz;              /* sizeof(struct prec_writer_opts) */
	size_t frame_size;      /* packet bytes per frame before a cut */
	uint32_t flush_ms;      /* max age of an open frame; 0 = only by size */
	int zstd_level;
	int write_index;        /* write the trailing index on close */
	/* Context switches per SwitchBatch packet (format 1.2, SPEC.md
	 * section 6): a stream's consecutive ContextSwitch packets are
	 * written as one batch of columns, up to this many rows (at most
	 * PREC_SWBATCH_MAX_ROWS, 65536). 0: one ContextSwitch packet each,
	 * as 1.1 writers did (readers of 1.1 skip batches). */
	unsigned switch_rows;
};

#define PREC_DEFAULT_FRAME_SIZE (256u * 1024u)
#define PREC_DEFAULT_FLUSH_MS 1000u
/* Level 1, like `perf record -z`: on trace data level 3 costs ~1.5x the
 * CPU for ~5% fewer bytes (tests/bench/format_bench), and the recorder
 * runs on the production host. */
#define PREC_DEFAULT_ZSTD_LEVEL 1

/* A batch of 4096 rows is ~25 KB, a tenth of a default frame: its two
 * tables cost a few bytes a row at most, and a frame is never more than
 * one batch past its size. */
#define PREC_DEFAULT_SWITCH_ROWS 4096u

#define PREC_WRITER_OPTS_INIT { sizeof(struct prec_writer_opts), \
	PREC_DEFAULT_FRAME_SIZE, PREC_DEFAULT_FLUSH_MS, PREC_DEFAULT_ZSTD_LEVEL, 1, \
	PREC_DEFAULT_SWITCH_ROWS }

struct prec_writer_stats {
	uint64_t packets;
	uint64_t frames;
	uint64_t bytes_raw;       /* packet bytes before compression */
	uint64_t bytes_written;   /* bytes handed to the sink */
};

/* Writes the file-magic skippable frame to the sink at once. Borrows sink.
 * NULL opts = defaults. Returns NULL and sets errno on failure. */
struct prec_writer *prec_writer_new(struct prec_sink *sink,
				    const struct prec_writer_opts *opts);

/* Returns an iid >= 1, or 0: the writer has failed (a bad argument, no
 * memory, a callchain too long for any packet, or an earlier error) or is
 * closed, and prec_writer_error() says which (never 0 after a 0 iid). */
uint64_t prec_writer_intern_string(struct prec_writer *w, uint32_t stream,
				   const char *s);
uint64_t prec_writer_intern_callchain(struct prec_writer *w, uint32_t stream,
				      const uint64_t *ips, size_t n);

/* Encodes pkt into the stream's open frame. Sets pkt->dt (the only field
 * written); the caller keeps ownership of pkt. */
int prec_writer_append(struct prec_writer *w, uint32_t stream,
		       Perfrec__Packet *pkt, uint64_t time_ns);

/* Cuts every frame opened before now_ns - flush_ms. */
int prec_writer_flush_due(struct prec_writer *w, uint64_t now_ns);
/* Cuts every open frame now. */
int prec_writer_flush(struct prec_writer *w);
/* Flush, write the index (if enabled), sync the sink. Idempotent. */
int prec_writer_close(struct prec_writer *w);
void prec_writer_free(struct prec_writer *w);   /* NULL is fine; does not close */

void prec_writer_stats(const struct prec_writer *w, struct prec_writer_stats *st);
/* The error that failed the writer, PREC_E_CLOSED after a clean close,
 * 0 while it can be written. */
int prec_writer_error(const struct prec_writer *w);

#endif
