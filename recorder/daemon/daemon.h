/*
 * daemon.h - `perfrec daemon`: serves control requests (proto/control.proto)
 * on a Unix socket and supervises sessions, each in a process of its own
 * (daemon/session_proc.h), so one that crashes or cannot open its events takes
 * neither the daemon nor the other sessions down.
 *
 * The socket: one daemon per path, held by a lock file PATH.lock (flock)
 * that also names the holder's pid: a second daemon is refused with that
 * pid; a socket left by a crashed daemon (no lock holder) is replaced.
 * Mode 0600, or 0660 with opts.group. Every connection's peer credentials
 * (SO_PEERCRED, SO_PEERGROUPS) are checked: root, the daemon's own user,
 * or a member of opts.group; anyone else gets an error reply and is
 * closed. Root (and session files) are *trusted*: only they may name
 * paths (opts.check enforces that for arguments, the daemon for snapshot
 * names).
 *
 * Files: two sessions never share an output stem. A start is refused
 * (naming the other session) when its stem is that of another session in
 * the table that runs or will run again, when another session's manifest
 * (opts.state_dir) lists files of that stem still on disk, or, for a
 * client that is not trusted, when an earlier run of the same name by
 * another uid left files its manifest lists. So a session's --keep
 * (daemon/session_run.h) only ever meets files it made itself.
 *
 * Clients: at most MAX_CLIENTS at once, and MAX_CLIENTS_PER_UID of one
 * uid. A connection beyond a limit evicts the oldest idle client (one no
 * session owes a reply) of its own uid or, when the table is full, of the
 * uid that holds the most; the evicted one gets an error reply. So silent
 * connections never lock a real request out: a flood costs its own uid
 * its oldest connections. Each must send a whole request within
 * client_timeout_ms of connecting or of its last reply, else it gets an
 * error reply and is closed. Every request gets exactly one reply, in
 * order; a bad request (bytes that do not decode, unknown fields, an
 * oversized length) gets an error reply and nothing else changes.
 *
 * Sessions: from ctl start (arguments checked by opts.check first; the
 * reply waits until the session runs, or carries its recorder's error
 * messages verbatim when it cannot start) and from CONFIG/NAME.session
 * files (started with the daemon, restarted when the file changes,
 * stopped when it goes; inotify, or SIGHUP). A session process that fails
 * after it ran (or a file session that cannot start) is started again
 * after a delay that doubles from 1 s to 60 s (back to 1 s after a run of
 * a minute). A session that ends by itself (-d) is FINISHED, not
 * restarted.
 *
 * Signals: rec_daemon_run() blocks SIGTERM, SIGINT, SIGHUP and SIGCHLD and
 * reads them from a signalfd. SIGTERM/SIGINT stop every session cleanly
 * (SIGTERM to each process: files finished with their index), wait for
 * them (stop_timeout_ms, then SIGKILL), remove the socket and return.
 * Under systemd ($NOTIFY_SOCKET) it says READY=1 once serving and
 * STOPPING=1 when stopping.
 *
 * How to use:
 *
 *   struct rec_daemon_opts o = REC_DAEMON_OPTS_INIT;
 *   o.socket_path = ...; o.config_dir = ...; o.check = ...; o.session_argv = ...;
 *   rec_daemon_new(&o, &d);     // lock, socket (errors logged)
 *   rec_daemon_run(d);          // until SIGTERM / SIGINT
 *   rec_daemon_free(d);
 */
#ifndef REC_DAEMON_H
#define REC_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rec_daemon_opts {
	size_t sz;                      /* sizeof(struct rec_daemon_opts) */
	const char *socket_path;
	const char *config_dir;         /* NULL: no session files */
	const char *group;              /* socket group and allowed peers; NULL */
	const char *exe;                /* what session processes run;
					 * NULL = /proc/self/exe */
	uint32_t client_timeout_ms;     /* 0 = 5000 */
	uint32_t start_timeout_ms;      /* a session must run within; 0 = 30000 */
	uint32_t stop_timeout_ms;       /* at SIGTERM; 0 = 60000 */
	/* The manifests of the sessions' files (daemon/manifest.h), made
	 * 0700 when missing; NULL: none kept (then no start is refused for
	 * files of another session on disk, only for a live one's stem). */
	const char *state_dir;
	/* Checks a session's arguments before anything starts: 0, or < 0
	 * after logging why (the daemon sends what was logged as the
	 * reply). trusted: root or a session file. *stem gets the absolute
	 * output stem its files are named from, "" when it makes none. */
	int (*check)(void *ctx, const char *name, int argc, char **argv,
		     bool trusted, char *stem, size_t stem_len);
	/* The argv of a session's process, exec'ed from exe with its channel
	 * as fd 3: a malloc'ed NULL-ended array of malloc'ed strings, or
	 * NULL (no memory). owner: the uid that started it (0 for session
	 * files), for its manifest. */
	char **(*session_argv)(void *ctx, const char *name, int argc,
			       char **argv, bool trusted, uint32_t owner);
	/* Called once the socket serves; may be NULL. */
	void (*ready)(void *ctx);
	void *ctx;
};

#define REC_DAEMON_OPTS_INIT { .sz = sizeof(struct rec_daemon_opts) }

struct rec_daemon;

/* Takes the lock, binds the socket. 0 and *out, or -errno (logged; -EBUSY
 * when another daemon serves the path: its pid is in the message). */
int rec_daemon_new(const struct rec_daemon_opts *o, struct rec_daemon **out);
/* Serves until SIGTERM or SIGINT. 0, or -errno when the loop itself
 * fails. */
int rec_daemon_run(struct rec_daemon *d);
/* Sessions still running are killed (SIGKILL); the socket is removed.
 * NULL is fine. */
void rec_daemon_free(struct rec_daemon *d);

#endif
