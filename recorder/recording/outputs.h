/*
 * outputs.h - where a recording (recording.h) goes, one output at a time:
 * the one object `perfrec record` and the daemon's sessions
 * (daemon/session_run.h) both write through.
 *
 *   file     either one file, path (or "-": standard output), touched
 *            only once the recording has started (until then its bytes
 *            are held in memory, so a start that fails leaves an existing
 *            file as it was); the previous file is kept as PATH.old;
 *            or named files STEM.<UTC yyyymmdd-hhmmss>.<NNNN>.prec,
 *            created with O_EXCL (never overwriting, never following a
 *            symlink), a new one at each rotation: by size (rotate_bytes),
 *            by age (rotate_ns) or on request; beyond the newest `keep`
 *            such files (earlier runs' the driver lists, then those this
 *            object made), older ones are deleted (the current one
 *            never), each only while its path still holds the file that
 *            was made.
 *   stream   to a collector, through the stream the driver gives
 *            (struct rec_outputs_stream: net/sendout.h's sender, so the
 *            outputs know no network); each output is a stream of its
 *            own, with named files or a NAME named <STEM's file name or
 *            NAME>.<time>.<NNNN>; with a file too, both carry the same
 *            bytes (a tee). Frames the stream drops become Loss packets
 *            in the trace (rec_outputs_step()).
 *   flight   memory only (format/flight.h): the output's first packets
 *            and its newest frames within flight_bytes. A snapshot ends
 *            the output into a file (FLIGHT_DROPPED loss written first
 *            when frames were dropped) and continues into a fresh buffer.
 *
 * Rotation opens the next output first (a file that cannot be created
 * leaves the recording running into the old one), moves the recording
 * over (rec_recording_rotate(): no gap, no overlap), then releases the old
 * output; a finished stream waits for its acknowledgements in a thread of
 * its own so the recording is never held up by the network.
 *
 * Files made: hooks.created(ctx, fd, path) is called for every named file
 * (outputs and snapshots) just after it is created, before anything is
 * written into it (the daemon lists it in its manifest there). keep runs
 * over one list, oldest first: the files of earlier runs the driver gives
 * (opts.earlier: the daemon's manifest; `perfrec record` has none), then
 * the outputs this object made. A file whose path no longer holds it
 * leaves the list (it does not count); then the oldest beyond `keep` are
 * deleted. hooks.forgotten(ctx, path) is told of each file that left the
 * list either way (the daemon drops it from its manifest).
 *
 * How to use (one thread):
 *
 *   struct rec_outputs_opts oo = REC_OUTPUTS_OPTS_INIT; oo.path = "x.prec";
 *   rec_outputs_new(&oo, &out);
 *   ro.frame_size = rec_outputs_frame_size(out, ro.frame_size);
 *   rec_recording_new(&ro, rec_outputs_sink(out), rec_outputs_name(out), &r);
 *   rec_recording_start(r);
 *   rec_outputs_started(out);               // commit the file, arm flight
 *   while (rec_recording_step(r, 100) > 0)
 *       rec_outputs_step(out, r);           // drops, rotation when due
 *   rec_recording_stop(r, "signal");
 *   rec_outputs_finish(out);                // acks of the streams
 *   rec_recording_free(r); rec_outputs_free(out);
 *
 * Errors are logged (recorder/log.h) and returned as negative errno.
 * Ownership: strings are copied by new(); the stream (to) is borrowed and
 * must outlive the object.
 */
#ifndef REC_OUTPUTS_H
#define REC_OUTPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/flight.h"
#include "format/sink.h"
#include "recorder/recording/recording.h"

/* A stream, made by the driver: every output of a recording with a
 * stream opens one of its own, and the outputs free it once it has
 * finished (its acknowledgements waited for in a thread of its own when
 * a rotation ended it). */
struct rec_outputs_stream {
	void *ctx;
	/* where it goes ("HOST:PORT"): the output's name when a stream
	 * alone has no name of its own */
	const char *where;
	/* A stream for one output, named id (NULL: the stream's own name).
	 * 0 and *stream, or -errno (logged). */
	int (*open)(void *ctx, const char *id, void **stream);
	/* What the recording writes into (owned by the stream). */
	struct prec_sink *(*sink)(void *stream);
	/* The name it streams under. */
	const char *(*id)(void *stream);
	/* Writes what it dropped since the last call into r as a Loss: 1
	 * (and why, for a warning), 0 when nothing was dropped, or the
	 * recording's error. */
	int (*record_drops)(void *stream, struct rec_recording *r, char *why,
			    size_t len);
	/* NULL, or the frame size (packet bytes per frame) the stream can
	 * carry, 0 = any: asked once, for the first output, before the
	 * recording cuts a frame (it may wait, bounded, for the collector's
	 * answer); the streams of later outputs carry that size. */
	size_t (*frame_size)(void *ctx, void *stream);
	/* NULL, or 1 and why (the collector's reason) once it has ended for
	 * good (a refusal no reconnect can change): it takes no more records,
	 * and its finish() fails. 0 while it streams or retries. */
	int (*ended)(void *stream, char *why, size_t len);
	/* Sends the rest, waits at most timeout_ms for the acknowledgements
	 * (one thread per stream). 0 or -errno (logged). */
	int (*finish)(void *stream, uint32_t timeout_ms);
	void (*free)(void *stream);
};

struct rec_outputs_hooks {
	void *ctx;
	/* a named file was created (fd open, nothing written yet) */
	void (*created)(void *ctx, int fd, const char *path);
	/* a file left keep's list: deleted, or its path no longer holds it */
	void (*forgotten)(void *ctx, const char *path);
};

/* A named output file an earlier run made, for keep. */
struct rec_outputs_file {
	const char *path;
	uint64_t dev, ino;                  /* its fstat() when made */
};

struct rec_outputs_opts {
	size_t sz;                          /* sizeof(struct rec_outputs_opts) */
	const char *name;                   /* stream ids without a file */
	const char *path;                   /* one file ("-": standard output) */
	const char *stem;                   /* named files (instead of path) */
	uint64_t rotate_bytes;              /* 0: not by size (named files) */
	uint64_t rotate_ns;                 /* 0: not by age (named files) */
	unsigned keep;                      /* 0: keep every file */
	const struct rec_outputs_file *earlier; /* [nearlier], oldest first: */
	size_t nearlier;                    /* earlier runs' outputs of this
					     * stem, counted by keep (copied) */
	uint64_t flight_bytes;              /* > 0: flight recorder (no file,
					     * no stream; stem names snapshots) */
	const struct rec_outputs_stream *to; /* NULL: no stream (borrowed) */
	uint32_t finish_timeout_ms;         /* acks wait; 0 = 10 s */
	bool warn_drops_once;               /* sender drops: one warning */
	struct rec_outputs_hooks hooks;
};

#define REC_OUTPUTS_OPTS_INIT { .sz = sizeof(struct rec_outputs_opts) }

struct rec_outputs;

/* Checks what the first output needs and opens it (a single file is
 * only checked: it is written at rec_outputs_started()). 0 and *out, or
 * -errno (logged). */
int rec_outputs_new(const struct rec_outputs_opts *o, struct rec_outputs **out);
/* The recording's frame size (rec_recording_opts.frame_size) given want,
 * the one asked for: the lower of want and what the stream can carry
 * (stream.frame_size). Call once, before rec_recording_new(). */
size_t rec_outputs_frame_size(struct rec_outputs *o, size_t want);
/* What the recording writes into now. */
struct prec_sink *rec_outputs_sink(const struct rec_outputs *o);
/* The current output's name: its file, "standard output", its stream's
 * id, or "flight buffer". Borrowed until the next call on o. */
const char *rec_outputs_name(const struct rec_outputs *o);
/* The recording started (its first packets are out): a single file is
 * created now, a flight buffer keeps what it holds as the preamble, keep
 * is applied. 0 or -errno (logged). */
int rec_outputs_started(struct rec_outputs *o);
/* After each rec_recording_step(): stream drops into the trace, rotation
 * when the size or age is reached (a next file that cannot be created is
 * tried again after the same size or age). A stream that ended for good
 * (stream.ended) is logged as an error once: with a file the recording
 * goes on into it (and rec_outputs_finish() fails at the end); a stream
 * alone fails the recording with -ECONNREFUSED. 0 or -errno (the
 * recording failed). */
int rec_outputs_step(struct rec_outputs *o, struct rec_recording *r);
/* The stream part of step() (drops, the end of a stream), alone (before
 * the stop). 0 or -errno. */
int rec_outputs_note_drops(struct rec_outputs *o, struct rec_recording *r);
/* Ends the current output and goes on in a new one; *done gets the
 * finished file's path (or stream's id). 0 or -errno (-EINVAL: a flight
 * recorder, or a single file: nothing to rotate to). */
int rec_outputs_rotate(struct rec_outputs *o, struct rec_recording *r,
		       char *done, size_t len);
/* Flight recorder: writes the buffer to path (NULL: STEM.<time>.<NNNN>
 * .snapshot.prec; never overwrites a file) and goes on in a fresh buffer;
 * *written gets the path. 0 or -errno (-EINVAL: not a flight recorder). */
int rec_outputs_snapshot(struct rec_outputs *o, struct rec_recording *r,
			 const char *path, char *written, size_t len);
/* Stops the recording (rec_recording_stop()); a flight recorder's buffer,
 * its end included, then goes into a snapshot file named as above (the
 * loss of the frames it dropped written first). 0 or -errno. */
int rec_outputs_stop_snapshot(struct rec_outputs *o, struct rec_recording *r,
			      const char *reason, char *written, size_t len);
/* After rec_recording_stop(): syncs the file, waits for the streams'
 * acknowledgements (finish_timeout_ms). 0 or -errno. */
int rec_outputs_finish(struct rec_outputs *o);

struct rec_outputs_status {
	const char *current_file;           /* "" when none */
	bool flight;
	struct prec_flight_stats fl;        /* the current buffer */
	uint32_t snapshots;
	void *stream;                       /* the current stream (as the
					     * stream's open() made it), or NULL */
	bool have_file;
};

/* Pointers are borrowed until the next call on o. */
void rec_outputs_status(const struct rec_outputs *o, struct rec_outputs_status *st);
/* Syncs what a failed recording wrote (its frames stay valid). */
void rec_outputs_sync(struct rec_outputs *o);
void rec_outputs_free(struct rec_outputs *o);   /* NULL is fine */

#endif
