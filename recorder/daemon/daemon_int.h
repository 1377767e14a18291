/*
 * daemon_int.h - the daemon's state, shared by daemon.c (the socket, the
 * clients, the requests, the loop) and supervise.c (the session table:
 * processes, their channels, restarts, session files). Not part of the
 * interface: see daemon.h.
 */
#ifndef REC_DAEMON_INT_H
#define REC_DAEMON_INT_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "control.pb-c.h"
#include "format/base/outq.h"
#include "recorder/daemon/daemon.h"
#include "recorder/log.h"
#include "recorder/net/wire.h"

typedef Perfrec__Control__SessionStatus Status;
typedef Perfrec__Control__Reply Reply;

#define ST(x) PERFREC__CONTROL__SESSION_STATUS__STATE__##x

#define MAX_CLIENTS 64
#define MAX_CLIENTS_PER_UID 16           /* ctl uses one; a few scripts at once */
#define MAX_SESSIONS 256
#define CHAN_FD 3
#define BACKOFF_MIN_MS 1000u
#define BACKOFF_MAX_MS 60000u
#define STABLE_RUN_MS 60000u             /* a run this long resets the backoff */
#define ANSWER_MS 120000u                /* a session answers a request within */
#define RESCAN_DELAY_MS 300u             /* config changes come in bursts */
#define TICK_MS 1000
/* Replies a client has not read: beyond this, its next requests wait. */
#define OUT_BACKLOG (1u << 20)

enum pend_kind { P_STOP, P_ROTATE, P_SNAPSHOT };

struct pend {
	uint64_t client;                 /* 0: the client left or timed out */
	enum pend_kind kind;
	uint64_t deadline;
	struct pend *next;
};

struct session {
	char name[65];
	char origin[PATH_MAX];           /* "ctl" or the session file */
	char **args;                     /* NULL-ended, owned */
	int nargs;
	char **next_args;                /* the file changed: run these next */
	int next_nargs;
	char stem[PATH_MAX];             /* its files' absolute stem, or "" */
	char next_stem[PATH_MAX];        /* that of next_args */
	bool trusted;
	uid_t owner;                     /* who started it (0: a session file) */
	Perfrec__Control__SessionStatus__State state;
	pid_t pid;
	int chan;
	struct prec_msgbuf in;
	struct prec_outq out;
	unsigned char *status;           /* the last status its process sent */
	size_t status_len;
	char last_error[REC_LOG_MAX];
	char errors[4096];               /* this run's errors, for a start reply */
	char stop_reason[128];
	uint32_t restarts;
	uint64_t run_start, restart_at, backoff;
	bool running_seen;               /* this run reached RUNNING */
	bool stop_wanted, remove_after;
	uint64_t start_client, start_deadline;
	struct pend *pend;
	struct session *next;
};

struct client {
	uint64_t id;
	int fd;
	struct prec_msgbuf in;
	struct prec_outq out;
	uid_t uid;
	pid_t pid;
	bool trusted;
	uint64_t deadline;               /* a whole request by then; 0: waiting */
	uint64_t since;                  /* accepted, or its last reply (ms) */
	bool waiting;                    /* a session owes it a reply */
	bool closing;                    /* close once out is sent */
	bool eof;                        /* it shut its sending side */
	struct client *next;
};

/* A reply packed for a client (msg NULL: it could not be packed, and the
 * client is closed). */
struct answer {
	uint64_t client;
	unsigned char *msg;
	size_t len;
	struct answer *next;
};

struct rec_daemon {
	struct rec_daemon_opts o;
	char *sock_path, *lock_path, *config_dir, *exe;
	gid_t gid;
	bool have_gid;
	int lfd, lockfd, sfd, ifd;
	int mfd;                         /* the manifests' directory, or -1 */
	struct client *clients;
	unsigned nclients;
	uint64_t next_client_id;
	struct session *sessions;
	unsigned nsessions;
	struct answer *answers, *answers_last;   /* not yet delivered, in order */
	uint64_t rescan_at;
	bool stopping;
	uint64_t stop_deadline;
	bool killed;
	sigset_t oldmask;
	bool masked;
};

/* src into dst, cut to fit. */
static inline void daemon_set_str(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* ---- supervise.c (daemon.c calls it; it never calls daemon.c) */

struct session *session_find(struct rec_daemon *d, const char *name);   /* NULL: none */
const char *session_state_name(Perfrec__Control__SessionStatus__State st);
/* Answers for clients are handed back, not sent: each is packed and
 * queued on d->answers for client id (0: nobody, dropped), and the
 * daemon's loop gives them to the clients still there, in order, before
 * it reads any client again. 0 or -ENOMEM (the reply is lost). */
int session_answer(struct rec_daemon *d, uint64_t client, Reply *rp);
int session_answer_error(struct rec_daemon *d, uint64_t client, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* ok, with the status of s (NULL: none) and file. */
int session_answer_status(struct rec_daemon *d, uint64_t client, struct session *s,
			 const char *file);

/* The status of s to send out: what its process said last (from, may be
 * NULL) with the daemon's own fields. A shallow copy into *st: pointers
 * stay owned by s and from. */
void session_status(struct rec_daemon *d, struct session *s, Status *from, Status *st);
/* The last status s's process sent, decoded (free_unpacked), or NULL. */
Status *session_cached_status(struct session *s);
/* A session in the table (args owned from now on); NULL: no memory. */
struct session *session_new(struct rec_daemon *d, const char *name, const char *origin,
			char **args, int nargs, bool trusted, uid_t owner, const char *stem);
void session_free(struct rec_daemon *d, struct session *s);
/* Starts s's process. 0 or -errno (logged). */
int session_spawn(struct rec_daemon *d, struct session *s);
/* session_spawn(), or the backoff when even that fails. */
void session_launch(struct rec_daemon *d, struct session *s);
/* Sends rq to s's process; c (may be NULL) waits for its answer. */
int session_forward(struct rec_daemon *d, struct session *s, struct client *c,
		  Perfrec__Control__Request *rq, enum pend_kind kind);
/* Asks s's process to stop (it finishes its files); c waits for it. */
void session_stop(struct rec_daemon *d, struct session *s, struct client *c);
/* Takes what s's channel holds; false when it closed. */
bool session_read_chan(struct rec_daemon *d, struct session *s);
/* Every session process that ended: answers, then restart or not. */
void session_reap(struct rec_daemon *d);
/* opts.check() on args, its messages into why, the output stem into
 * stem (PATH_MAX bytes). 0 or < 0. */
int session_check_args(struct rec_daemon *d, const char *name, char **args, int nargs,
		     bool trusted, char *stem, char *why, size_t len);
/* May session name (started by uid, trusted or not) write files named
 * from stem? 0, or -EEXIST with the reason (naming the session that
 * holds them) in why. See daemon.h, "Files". */
int session_check_stem(struct rec_daemon *d, const char *name, const char *stem,
		     uid_t uid, bool trusted, char *why, size_t len);
/* Reads CONFIG/NAME.session files: starts new ones, restarts changed
 * ones, stops the sessions of removed ones. */
void session_scan_config(struct rec_daemon *d);

#endif
