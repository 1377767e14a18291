/*
 * child.h - the session process: runs one session (daemon/session_run.h) and
 * talks to the daemon over a socket pair (proto/control.proto: it reads
 * Request, it writes SessionEvent).
 *
 * What it sends: every error and warning its recorder logs, verbatim (so
 * `perfrec ctl start` shows "cycles: not supported on this host ..." as
 * the recorder said it); its status twice a second and after each change
 * (the first RUNNING status tells the daemon the session started); one
 * Reply per request, in order. It stops cleanly (files finished with
 * their index) on a Stop request, when *stop becomes non-zero (the
 * caller's SIGTERM handler) and when the daemon's end of the pair closes.
 *
 * How to use (in the session process):
 *
 *   c = rec_session_proc_new(3);          // from now on errors go to the daemon too
 *   ... parse the session's options (their errors reach the daemon) ...
 *   struct rec_session_proc_opts o = REC_SESSION_PROC_OPTS_INIT;
 *   o.run = &so; o.events = ...; o.stop = &stop_flag;
 *   code = rec_session_proc_run(c, &o);   // the process's exit status
 *   rec_session_proc_free(c);
 */
#ifndef REC_SESSION_PROC_H
#define REC_SESSION_PROC_H

#include <signal.h>
#include <stddef.h>

#include "recorder/daemon/session_run.h"

struct rec_session_proc_opts {
	size_t sz;                          /* sizeof(struct rec_session_proc_opts) */
	const struct rec_session_run_opts *run;
	const char *const *events;          /* as given, for status */
	size_t nevents;
	volatile sig_atomic_t *stop;        /* may be NULL */
};

#define REC_SESSION_PROC_OPTS_INIT { .sz = sizeof(struct rec_session_proc_opts) }

struct rec_session_proc;

/* Takes chan (closed by free) and installs a log print function that
 * forwards errors and warnings to the daemon, then calls the one installed
 * before. NULL and errno when out of memory. */
struct rec_session_proc *rec_session_proc_new(int chan);
/* Runs the session until it ends. Returns the exit status the daemon
 * reads: 0 the session ended cleanly (stopped, or finished by itself), 1
 * it failed (to start, or while running). */
int rec_session_proc_run(struct rec_session_proc *c, const struct rec_session_proc_opts *o);
/* Restores the print function, closes the channel. NULL is fine. */
void rec_session_proc_free(struct rec_session_proc *c);

#endif
