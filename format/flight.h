/*
 * flight.h - a flight-recorder sink: keeps only the newest bytes of a
 * .prec stream in memory and writes them out, on request, as a file that
 * reads alone (SPEC.md section 11).
 *
 * The stream is split into records (format/record.h): the file header,
 * frames (frame-info record + zstd data frame), the index. Three parts:
 *
 *   preamble  everything written before prec_flight_arm(): the header and
 *             the frames that describe the recording (host, events, tasks
 *             and maps). Always kept.
 *   window    frames written after arm: when preamble + window exceed
 *             max_bytes, the oldest window frames are dropped whole (and
 *             counted), never the newest one.
 *   end       frames written after prec_flight_seal() (the output's
 *             symbols, final counters, SessionEnd): never dropped.
 *
 * The writer's own index is not kept (its offsets are those of the whole
 * stream); prec_flight_save() writes header, preamble, window and end,
 * then an index rebuilt for the saved file's offsets. Frames keep their
 * seq, so a reader sees where frames were dropped.
 *
 * How to use (a recording's output, recorder/daemon/session_run.c):
 *
 *   s = prec_flight_new(64 << 20);
 *   w = prec_writer_new(s, ...);   ... first packets ...; prec_writer_flush(w);
 *   prec_flight_arm(s);
 *   ... write for as long as wanted ...
 *   prec_flight_seal(s);           // the output is about to end
 *   prec_writer_close(w);          // end packets and index go into s
 *   prec_flight_save(s, file_sink);
 *   prec_sink_free(s);
 *
 * Errors: a write that is not a valid .prec record stream fails with the
 * format's code (PREC_E_MAGIC, PREC_E_CORRUPT ...) and the sink stays
 * failed; allocation failures are -ENOMEM. Not thread-safe: one writer.
 */
#ifndef PREC_FLIGHT_H
#define PREC_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "format/sink.h"

/* A flight sink holding at most max_bytes (preamble included, but at
 * least the preamble and the newest frame). NULL and errno on failure. */
struct prec_sink *prec_flight_new(uint64_t max_bytes);

/* What was written so far is the preamble. 0, or -EINVAL when s is not a
 * flight sink. */
int prec_flight_arm(struct prec_sink *s);
/* Nothing written from now on is dropped. 0 or -EINVAL. */
int prec_flight_seal(struct prec_sink *s);

struct prec_flight_stats {
	uint64_t max_bytes;
	uint64_t held_bytes;        /* preamble + window + end */
	uint64_t preamble_bytes;
	uint64_t frames;            /* frames held */
	uint64_t dropped_frames;    /* window frames dropped so far */
	uint64_t dropped_bytes;
	uint64_t dropped_packets;
	uint64_t dropped_t_min;     /* the dropped frames' time range */
	uint64_t dropped_t_max;
	uint64_t window_t_min;      /* the oldest kept window frame's t_min */
};

/* 0, or -EINVAL when s is not a flight sink. */
int prec_flight_stats(const struct prec_sink *s, struct prec_flight_stats *st);

/* Writes the held records to out as one file: header, preamble, window,
 * end, rebuilt index; then syncs out. Borrows out. Returns 0 or the
 * sink's error; -EINVAL when nothing (no header) was written yet. */
int prec_flight_save(const struct prec_sink *s, struct prec_sink *out);

#endif
