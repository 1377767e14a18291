/*
 * session.h - a daemon session: a named recording (recording/recording.h)
 * with the outputs a service needs. It runs in a process of its own (the
 * daemon starts one per session, daemon/session_proc.h), so a session that
 * crashes takes nothing else down.
 *
 * Its outputs are recording/outputs.h's (one at a time; every output a
 * complete trace that analyzes alone, consecutive ones joined without a
 * gap or an overlap), named from STEM: files STEM.<UTC time>.<NNNN>.prec,
 * streams with the session id <STEM's file name or NAME>.<time>.<NNNN>,
 * or a flight buffer whose snapshots are STEM.<time>.<NNNN>.snapshot.prec.
 * What the session adds:
 *
 *   keep     only files this session made are ever deleted: those of this
 *            run, and those its manifest lists from earlier runs
 *            (manifest_dir), each only while its path still holds the
 *            file that was made. Every file the outputs create is listed
 *            before anything is written into it.
 *   flight   symbols are written only when an output ends (the snapshot),
 *            so no dropped frame held them; stopping discards the buffer.
 *
 * How to use (one thread):
 *
 *   struct rec_session_run_opts o = REC_SESSION_RUN_OPTS_INIT; o.name = ...; o.rec = &ro;
 *   rec_session_run_new(&o, &s);              // opens events and the first output
 *   rec_session_run_start(s);
 *   while ((ret = rec_session_run_step(s, 100)) > 0) {   // rotates when due
 *       ... rec_session_run_rotate(s, done, sizeof(done)) ...
 *       ... rec_session_run_snapshot(s, NULL, path, sizeof(path)) ...
 *       ... rec_session_run_status(s, &st) ...
 *   }
 *   rec_session_run_stop(s, "stopped");       // ends the output, waits for acks
 *   rec_session_run_free(s);
 *
 * Errors are logged (recorder/log.h) and returned as negative errno.
 * Ownership: opts and what it points to are read during new() (strings
 * and the token are copied), except rec->evspecs, rec->source and
 * to->tls, which must outlive the session.
 */
#ifndef REC_SESSION_RUN_H
#define REC_SESSION_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/flight.h"
#include "recorder/net/sender.h"
#include "recorder/recording/recording.h"

struct rec_session_run_opts {
	size_t sz;                          /* sizeof(struct rec_session_run_opts) */
	const char *name;                   /* [A-Za-z0-9._-] */
	const struct rec_recording_opts *rec;
	const char *stem;                   /* files: STEM.<time>.<NNNN>.prec;
					     * NULL: no file */
	uint64_t rotate_bytes;              /* 0: not by size */
	uint64_t rotate_ns;                 /* 0: not by age */
	unsigned keep;                      /* 0: keep every file */
	uint64_t flight_bytes;              /* > 0: flight recorder (no file,
					     * no stream; stem names snapshots) */
	const struct rec_sender_opts *to;   /* NULL: no stream; its session_id
					     * is chosen per output */
	uint32_t finish_timeout_ms;         /* acks wait at the end; 0 = 10 s */
	/* The daemon's state directory (daemon/manifest.h): the files this
	 * session makes are listed in its NAME.manifest there, with those
	 * of its earlier runs. NULL: this run's files only, in memory. */
	const char *manifest_dir;
	uint32_t owner_uid;                 /* who started this run (manifest) */
};

#define REC_SESSION_RUN_OPTS_INIT { .sz = sizeof(struct rec_session_run_opts) }

struct rec_session_run;

struct rec_session_run_status {
	struct rec_recording_stats rs;      /* pointers borrowed */
	const char *target;
	const char *current_file;           /* "" when none */
	const char *to;                     /* "" when none */
	bool flight;
	struct prec_flight_stats fl;        /* the current buffer */
	uint32_t snapshots;
};

/* 0 and *out, or -errno (logged: the recorder's own message, e.g. an
 * event this host does not support). */
int rec_session_run_new(const struct rec_session_run_opts *o, struct rec_session_run **out);
int rec_session_run_start(struct rec_session_run *s);
int rec_session_run_pollfd(const struct rec_session_run *s);
/* rec_recording_step(), then writes sender drops as losses and rotates
 * when the size or age is reached. > 0 running, 0 the recording ended by
 * itself (stop() next), < 0 failed. */
int rec_session_run_step(struct rec_session_run *s, int timeout_ms);
/* Ends the current file and continues into a new one; *done gets the
 * finished file's path (or the finished stream's id). 0 or -errno
 * (-EINVAL: a flight session, or one without outputs to rotate). */
int rec_session_run_rotate(struct rec_session_run *s, char *done, size_t len);
/* Flight sessions: writes the buffer to path (NULL: STEM.<time>.<NNNN>
 * .snapshot.prec; never overwrites a file) and goes on in a fresh
 * buffer; *written gets the path. 0 or -errno (-EINVAL: not a flight
 * session). */
int rec_session_run_snapshot(struct rec_session_run *s, const char *path,
			 char *written, size_t len);
/* The current output's name: its file, or its stream's id when there is
 * no file; "" for a flight buffer. Borrowed until the next call on s. */
const char *rec_session_run_output_name(const struct rec_session_run *s);
/* Finishes the output (index, sync) and streams (acks, finish timeout).
 * Idempotent. 0 or -errno. */
int rec_session_run_stop(struct rec_session_run *s, const char *reason);
/* Pointers are borrowed until the next call on s. */
void rec_session_run_status(const struct rec_session_run *s, struct rec_session_run_status *st);
void rec_session_run_free(struct rec_session_run *s);   /* NULL is fine */

#endif
