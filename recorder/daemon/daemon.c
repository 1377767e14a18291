/*
 * daemon.c - the control socket and the session supervisor; see daemon.h.
 *
 * One thread, one poll() loop over: the listening socket, a signalfd,
 * an inotify watch of the config directory, every client and every
 * session process's channel. Nothing blocks: clients and channels are
 * non-blocking with an output queue each; a session process that stops
 * answering delays only the clients waiting for it (until their own
 * deadline).
 *
 * A session's requests (stop, rotate, snapshot) are forwarded to its
 * process and queued (`pend`), oldest first: the process answers them in
 * order. status and list are answered from the status each process
 * pushes twice a second, so a busy session never slows them down.
 */
#include "recorder/daemon/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "recorder/daemon/config.h"
#include "recorder/daemon/ctlmsg.h"
#include "recorder/log.h"
#include "recorder/net/wire.h"
#include "recorder/opts.h"

typedef Perfrec__Control__SessionStatus Status;
typedef Perfrec__Control__Reply Reply;

#define ST(x) PERFREC__CONTROL__SESSION_STATUS__STATE__##x

#define MAX_CLIENTS 64
#define MAX_SESSIONS 256
#define CHAN_FD 3
#define BACKOFF_MIN_MS 1000u
#define BACKOFF_MAX_MS 60000u
#define STABLE_RUN_MS 60000u             /* a run this long resets the backoff */
#define ANSWER_MS 120000u                /* a session answers a request within */
#define RESCAN_DELAY_MS 300u             /* config changes come in bursts */
#define TICK_MS 1000

extern char **environ;

struct outq {
	unsigned char *b;
	size_t len, pos, cap;
};

enum pend_kind { P_STOP, P_ROTATE, P_SNAPSHOT };

struct pend {
	uint64_t client;                 /* 0: the client left or timed out */
	enum pend_kind kind;
	uint64_t deadline;
	struct pend *next;
};

struct dsess {
	char name[65];
	char origin[PATH_MAX];           /* "ctl" or the session file */
	char **args;                     /* NULL-ended, owned */
	int nargs;
	char **next_args;                /* the file changed: run these next */
	int next_nargs;
	bool trusted;
	Perfrec__Control__SessionStatus__State state;
	pid_t pid;
	int chan;
	struct rec_wire_in in;
	struct outq out;
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
	struct dsess *next;
};

struct client {
	uint64_t id;
	int fd;
	struct rec_wire_in in;
	struct outq out;
	uid_t uid;
	pid_t pid;
	bool trusted;
	uint64_t deadline;               /* a whole request by then; 0: waiting */
	bool waiting;                    /* a session owes it a reply */
	bool closing;                    /* close once out is sent */
	struct client *next;
};

struct rec_daemon {
	struct rec_daemon_opts o;
	char *sock_path, *lock_path, *config_dir, *exe;
	gid_t gid;
	bool have_gid;
	int lfd, lockfd, sfd, ifd;
	struct client *clients;
	unsigned nclients;
	uint64_t next_client_id;
	struct dsess *sessions;
	unsigned nsessions;
	uint64_t rescan_at;
	bool stopping;
	uint64_t stop_deadline;
	bool killed;
	sigset_t oldmask;
	bool masked;
};

/* src into dst, cut to fit. */
static void set_str(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- output queues */

static int outq_add(struct outq *q, const void *b, size_t n)
{
	if (q->pos && q->pos == q->len)
		q->pos = q->len = 0;
	if (q->cap - q->len < n) {
		size_t cap = q->cap ? q->cap : 1024;
		unsigned char *nb;

		while (cap - q->len < n)
			cap *= 2;
		nb = realloc(q->b, cap);
		if (!nb)
			return -ENOMEM;
		q->b = nb;
		q->cap = cap;
	}
	memcpy(q->b + q->len, b, n);
	q->len += n;
	return 0;
}

/* 0 (all sent or EAGAIN) or -errno. */
static int outq_flush(struct outq *q, int fd)
{
	while (q->pos < q->len) {
		ssize_t k = send(fd, q->b + q->pos, q->len - q->pos, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EAGAIN ? 0 : -errno;
		q->pos += (size_t)k;
	}
	return 0;
}

static void outq_release(struct outq *q)
{
	free(q->b);
	memset(q, 0, sizeof(*q));
}

static int queue_msg(struct outq *q, int fd, const ProtobufCMessage *m)
{
	unsigned char *b;
	size_t n;
	int ret = rec_ctl_pack(m, REC_CTL_MAX_EVENT, &b, &n);

	if (ret < 0)
		return ret;
	ret = outq_add(q, b, n);
	free(b);
	return ret < 0 ? ret : outq_flush(q, fd);
}

/* ---- systemd: sd_notify's datagram, without libsystemd */

static void notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	socklen_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';   /* abstract namespace */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
		rec_log(REC_LOG_WARN, "cannot tell systemd %s: %s", state, strerror(errno));
	close(fd);
}

/* ---- messages logged while checking arguments become the reply */

struct capture {
	char *buf;
	size_t len;
	rec_print_fn prev;
	void *prev_ctx;
};

static void capture_print(enum rec_log_level level, const char *msg, void *ctx)
{
	struct capture *c = ctx;
	size_t have = strlen(c->buf);

	if (level == REC_LOG_ERROR && have + 2 < c->len)
		snprintf(c->buf + have, c->len - have, "%s%s", have ? "\n" : "", msg);
}

static void capture_begin(struct capture *c, char *buf, size_t len)
{
	c->buf = buf;
	c->len = len;
	buf[0] = '\0';
	c->prev = rec_log_set_print(capture_print, c, &c->prev_ctx);
}

static void capture_end(struct capture *c)
{
	rec_log_set_print(c->prev, c->prev_ctx, NULL);
}

/* ---- lookups */

static struct client *client_by_id(struct rec_daemon *d, uint64_t id)
{
	for (struct client *c = d->clients; c && id; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static struct dsess *sess_by_name(struct rec_daemon *d, const char *name)
{
	for (struct dsess *s = d->sessions; s; s = s->next)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

static const char *state_name(Perfrec__Control__SessionStatus__State st)
{
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
		&perfrec__control__session_status__state__descriptor, (int)st);

	return v ? v->name : "?";
}

/* ---- status: what the session's process said, with the daemon's own
 * fields (a shallow copy: pointers stay owned by their holders) */

static void status_of(struct rec_daemon *d, struct dsess *s, Status *from, Status *st)
{
	uint64_t now = now_ms();

	if (from) {
		*st = *from;
	} else {
		perfrec__control__session_status__init(st);
	}
	st->name = s->name;
	st->state = s->state;
	st->origin = s->origin;
	st->args = s->args;
	st->n_args = (size_t)s->nargs;
	st->restarts = s->restarts;
	st->last_error = s->last_error;
	st->pid = s->pid > 0 ? s->pid : 0;
	st->restart_in_ns = s->state == ST(BACKOFF) && s->restart_at > now ?
			    (s->restart_at - now) * 1000000ull : 0;
	if (s->stop_reason[0])
		st->stop_reason = s->stop_reason;
	(void)d;
}

static Status *cached_status(struct dsess *s)
{
	return s->status ? perfrec__control__session_status__unpack(NULL, s->status_len,
								   s->status) : NULL;
}

/* ---- replies */

/* Queues rp for c; a client that cannot take it is closed by the loop. */
static void reply_to(struct rec_daemon *d, struct client *c, Reply *rp)
{
	rp->version = REC_CTL_VERSION;
	if (queue_msg(&c->out, c->fd, &rp->base) < 0) {
		c->closing = true;
		c->out.pos = c->out.len;   /* nothing more goes out */
	}
	c->waiting = false;
	c->deadline = now_ms() + d->o.client_timeout_ms;
}

static void reply_error(struct rec_daemon *d, struct client *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void reply_error(struct rec_daemon *d, struct client *c, const char *fmt, ...)
{
	Reply rp = PERFREC__CONTROL__REPLY__INIT;
	char msg[REC_LOG_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rp.error = msg;
	reply_to(d, c, &rp);
}

/* ok, with the status of one session (or none). */
static void reply_session(struct rec_daemon *d, struct client *c, struct dsess *s,
			  const char *file)
{
	Reply rp = PERFREC__CONTROL__REPLY__INIT;
	Status st, *one[1], *cached = s ? cached_status(s) : NULL;

	rp.ok = true;
	rp.file = (char *)(file ? file : "");
	if (s) {
		status_of(d, s, cached, &st);
		one[0] = &st;
		rp.sessions = one;
		rp.n_sessions = 1;
	}
	reply_to(d, c, &rp);
	if (cached)
		perfrec__control__session_status__free_unpacked(cached, NULL);
}

/* ---- sessions */

static int spawn(struct rec_daemon *d, struct dsess *s)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dflt;
	char **argv;
	int sv[2], ret;
	pid_t pid;

	argv = d->o.session_argv(d->o.ctx, s->name, s->nargs, s->args, s->trusted);
	if (!argv)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		ret = -errno;
		rec_words_free(argv);
		return ret;
	}
	if (sv[1] == CHAN_FD) {
		/* dup2(3, 3) would keep close-on-exec */
		int fd = fcntl(sv[1], F_DUPFD_CLOEXEC, CHAN_FD + 1);

		close(sv[1]);
		sv[1] = fd;
	}
	sigemptyset(&none);
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGTERM);
	sigaddset(&dflt, SIGINT);
	sigaddset(&dflt, SIGHUP);
	sigaddset(&dflt, SIGCHLD);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], CHAN_FD);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dflt);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	ret = sv[1] >= 0 ? posix_spawn(&pid, d->exe, &fa, &at, argv, environ) : errno;
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	rec_words_free(argv);
	close(sv[1]);
	if (ret) {
		close(sv[0]);
		rec_log(REC_LOG_ERROR, "cannot start the process of session %s (%s): %s",
			s->name, d->exe, strerror(ret));
		return -ret;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	s->pid = pid;
	s->chan = sv[0];
	rec_wire_in_release(&s->in);
	rec_wire_in_init(&s->in, REC_CTL_MAX_EVENT);
	outq_release(&s->out);
	s->state = ST(STARTING);
	s->run_start = now_ms();
	s->running_seen = false;
	s->stop_wanted = false;
	s->errors[0] = '\0';
	s->stop_reason[0] = '\0';
	rec_log(REC_LOG_INFO, "session %s: started (pid %d)", s->name, (int)pid);
	return 0;
}

/* Spawns, or arms the backoff when even that fails. */
static void launch(struct rec_daemon *d, struct dsess *s)
{
	int ret = spawn(d, s);

	if (ret < 0) {
		snprintf(s->last_error, sizeof(s->last_error), "cannot start its process: %s",
			 strerror(-ret));
		s->state = ST(BACKOFF);
		s->backoff = s->backoff ? s->backoff : BACKOFF_MIN_MS;
		s->restart_at = now_ms() + s->backoff;
	}
}

static struct dsess *sess_new(struct rec_daemon *d, const char *name, const char *origin,
			      char **args, int nargs, bool trusted)
{
	struct dsess *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->origin, sizeof(s->origin), "%s", origin);
	s->args = args;
	s->nargs = nargs;
	s->trusted = trusted;
	s->chan = -1;
	s->pid = -1;
	s->next = d->sessions;
	d->sessions = s;
	d->nsessions++;
	return s;
}

static void sess_free(struct rec_daemon *d, struct dsess *s)
{
	struct dsess **pp = &d->sessions;

	while (*pp && *pp != s)
		pp = &(*pp)->next;
	if (*pp) {
		*pp = s->next;
		d->nsessions--;
	}
	if (s->chan >= 0)
		close(s->chan);
	while (s->pend) {
		struct pend *p = s->pend;

		s->pend = p->next;
		free(p);
	}
	rec_wire_in_release(&s->in);
	outq_release(&s->out);
	rec_words_free(s->args);
	rec_words_free(s->next_args);
	free(s->status);
	free(s);
}

static int send_request(struct dsess *s, Perfrec__Control__Request *rq)
{
	rq->version = REC_CTL_VERSION;
	return queue_msg(&s->out, s->chan, &rq->base);
}

static int forward(struct rec_daemon *d, struct dsess *s, struct client *c,
		   Perfrec__Control__Request *rq, enum pend_kind kind)
{
	struct pend *p = calloc(1, sizeof(*p)), **pp = &s->pend;
	int ret;

	if (!p)
		return -ENOMEM;
	ret = send_request(s, rq);
	if (ret < 0) {
		free(p);
		return ret;
	}
	p->client = c ? c->id : 0;
	p->kind = kind;
	p->deadline = now_ms() + ANSWER_MS;
	while (*pp)
		pp = &(*pp)->next;
	*pp = p;
	if (c) {
		c->waiting = true;
		c->deadline = 0;
	}
	(void)d;
	return 0;
}

/* Asks the session's process to stop (it finishes its files). */
static void sess_stop(struct rec_daemon *d, struct dsess *s, struct client *c)
{
	Perfrec__Control__Request rq = PERFREC__CONTROL__REQUEST__INIT;
	Perfrec__Control__StopRequest sr = PERFREC__CONTROL__STOP_REQUEST__INIT;

	s->stop_wanted = true;
	if (s->state == ST(STARTING) || s->state == ST(RUNNING))
		s->state = ST(STOPPING);
	rq.body_case = PERFREC__CONTROL__REQUEST__BODY_STOP;
	rq.stop = &sr;
	sr.name = s->name;
	if (forward(d, s, c, &rq, P_STOP) < 0 && s->pid > 0)
		kill(s->pid, SIGTERM);   /* the channel failed: the signal also stops it cleanly */
}

static void take_status(struct rec_daemon *d, struct dsess *s, const Status *st,
			const unsigned char *raw, size_t len)
{
	unsigned char *copy = malloc(len ? len : 1);

	if (copy) {
		memcpy(copy, raw, len);
		free(s->status);
		s->status = copy;
		s->status_len = len;
	}
	if (st->state == ST(RUNNING) && !s->running_seen) {
		struct client *c = client_by_id(d, s->start_client);

		s->running_seen = true;
		if (s->state == ST(STARTING))
			s->state = ST(RUNNING);
		s->start_client = 0;
		if (c)
			reply_session(d, c, s, NULL);
	}
}

/* A Reply from the session's process answers its oldest forwarded
 * request. */
static void take_reply(struct rec_daemon *d, struct dsess *s, Reply *from)
{
	struct pend *p = s->pend;
	struct client *c;
	Reply rp = PERFREC__CONTROL__REPLY__INIT;
	Status st, *one[1];

	if (!p)
		return;   /* nothing asked: ignore */
	s->pend = p->next;
	c = client_by_id(d, p->client);
	if (c) {
		rp.ok = from->ok;
		rp.error = from->error;
		rp.file = from->file;
		status_of(d, s, from->n_sessions ? from->sessions[0] : NULL, &st);
		if (p->kind == P_STOP && from->n_sessions)
			st.state = from->sessions[0]->state;   /* stopped: files finished */
		one[0] = &st;
		rp.sessions = one;
		rp.n_sessions = 1;
		reply_to(d, c, &rp);
	}
	free(p);
}

static void take_event(struct rec_daemon *d, struct dsess *s, const unsigned char *m,
		       size_t n)
{
	Perfrec__Control__SessionEvent *ev =
		perfrec__control__session_event__unpack(NULL, n, m);

	if (!ev) {
		rec_log(REC_LOG_WARN, "session %s: a message that does not decode (%zu "
			"bytes): ignored", s->name, n);
		return;
	}
	switch (ev->body_case) {
	case PERFREC__CONTROL__SESSION_EVENT__BODY_LOG:
		if (ev->log->level == REC_LOG_ERROR) {
			size_t have = strlen(s->errors);

			snprintf(s->last_error, sizeof(s->last_error), "%s", ev->log->text);
			if (have + 2 < sizeof(s->errors))
				snprintf(s->errors + have, sizeof(s->errors) - have, "%s%s",
					 have ? "\n" : "", ev->log->text);
		}
		break;
	case PERFREC__CONTROL__SESSION_EVENT__BODY_STATUS: {
		/* the status alone, packed again: what status replies use */
		size_t len = perfrec__control__session_status__get_packed_size(ev->status);
		unsigned char *raw = malloc(len ? len : 1);

		if (raw) {
			perfrec__control__session_status__pack(ev->status, raw);
			take_status(d, s, ev->status, raw, len);
			free(raw);
		}
		break;
	}
	case PERFREC__CONTROL__SESSION_EVENT__BODY_REPLY:
		take_reply(d, s, ev->reply);
		break;
	default:
		break;
	}
	perfrec__control__session_event__free_unpacked(ev, NULL);
}

/* Reads what the channel holds; false when it closed. */
static bool read_chan(struct rec_daemon *d, struct dsess *s)
{
	for (;;) {
		const unsigned char *m;
		size_t room, n;
		void *p = rec_wire_in_space(&s->in, &room);
		ssize_t k;
		int ret;

		if (!p)
			return true;
		k = read(s->chan, p, room);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EAGAIN;
		if (k == 0)
			return false;
		rec_wire_in_commit(&s->in, (size_t)k);
		while ((ret = rec_wire_in_next(&s->in, &m, &n)) > 0)
			take_event(d, s, m, n);
		if (ret < 0) {
			rec_log(REC_LOG_WARN, "session %s: a message of %zu bytes: too "
				"large, channel closed", s->name, n);
			return false;
		}
	}
}

static void exit_words(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "ended (status 0x%x)", status);
}

/* The session's process ended: answer who waits, then decide what next. */
static void sess_exited(struct rec_daemon *d, struct dsess *s, int status)
{
	bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	uint64_t now = now_ms();
	char how[96];
	Status *cached;

	if (s->chan >= 0) {
		read_chan(d, s);   /* its last words: final status, stop reply */
		close(s->chan);
		s->chan = -1;
	}
	s->pid = -1;
	exit_words(status, how, sizeof(how));
	cached = cached_status(s);
	if (cached && cached->stop_reason && cached->stop_reason[0] && !s->stop_reason[0])
		snprintf(s->stop_reason, sizeof(s->stop_reason), "%s", cached->stop_reason);
	if (cached)
		perfrec__control__session_status__free_unpacked(cached, NULL);
	/* requests it did not answer */
	while (s->pend) {
		struct pend *p = s->pend;
		struct client *c = client_by_id(d, p->client);

		s->pend = p->next;
		if (c && p->kind == P_STOP && s->stop_wanted) {
			s->state = ST(STOPPED);
			reply_session(d, c, s, NULL);
		} else if (c) {
			reply_error(d, c, "session %s ended before answering (%s)%s%s", s->name,
				    how, s->last_error[0] ? ": " : "", s->last_error);
		}
		free(p);
	}
	if (s->start_client) {
		struct client *c = client_by_id(d, s->start_client);

		s->start_client = 0;
		if (c)
			reply_error(d, c, "%s", s->errors[0] ? s->errors :
				    clean ? "the session ended before it started recording" : how);
		if (!strcmp(s->origin, "ctl") && !s->running_seen) {
			rec_log(REC_LOG_INFO, "session %s: could not start (%s)", s->name, how);
			sess_free(d, s);
			return;
		}
	}
	if (d->stopping || s->remove_after) {
		rec_log(REC_LOG_INFO, "session %s: ended (%s)", s->name, how);
		sess_free(d, s);
		return;
	}
	if (s->next_args) {
		/* its file changed: the new arguments run now */
		rec_words_free(s->args);
		s->args = s->next_args;
		s->nargs = s->next_nargs;
		s->next_args = NULL;
		s->backoff = 0;
		rec_log(REC_LOG_INFO, "session %s: restarting with the changed %s", s->name,
			s->origin);
		launch(d, s);
		return;
	}
	if (s->stop_wanted) {
		s->state = ST(STOPPED);
		if (!s->stop_reason[0])
			snprintf(s->stop_reason, sizeof(s->stop_reason), "stopped by request");
		rec_log(REC_LOG_INFO, "session %s: stopped", s->name);
		return;
	}
	if (clean && s->running_seen) {
		s->state = ST(FINISHED);
		rec_log(REC_LOG_INFO, "session %s: finished (%s)", s->name,
			s->stop_reason[0] ? s->stop_reason : "ended by itself");
		return;
	}
	/* failed: again after a delay */
	if (s->running_seen && now - s->run_start >= STABLE_RUN_MS)
		s->backoff = BACKOFF_MIN_MS;
	else
		s->backoff = s->backoff ? s->backoff * 2 : BACKOFF_MIN_MS;
	if (s->backoff > BACKOFF_MAX_MS)
		s->backoff = BACKOFF_MAX_MS;
	s->state = ST(BACKOFF);
	s->restart_at = now + s->backoff;
	if (!s->last_error[0] || !s->errors[0])
		snprintf(s->last_error, sizeof(s->last_error), "its process %s", how);
	rec_log(REC_LOG_WARN, "session %s: %s%s%s; restarting in %.0f s", s->name, how,
		s->errors[0] ? ": " : "", s->errors[0] ? s->last_error : "",
		(double)s->backoff / 1000.0);
}

static void reap(struct rec_daemon *d)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (struct dsess *s = d->sessions; s; s = s->next) {
			if (s->pid == pid) {
				sess_exited(d, s, status);
				break;
			}
		}
	}
}

/* ---- session files */

/* argv equal? */
static bool same_args(char **a, int na, char **b, int nb)
{
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return true;
}

/* Checks args with the caller's check(); the messages into why. */
static int check_args(struct rec_daemon *d, const char *name, char **args, int nargs,
		      bool trusted, char *why, size_t len)
{
	struct capture cap;
	int ret;

	capture_begin(&cap, why, len);
	ret = d->o.check(d->o.ctx, name, nargs, args, trusted);
	capture_end(&cap);
	if (ret < 0 && !why[0])
		snprintf(why, len, "bad session arguments: %s", strerror(-ret));
	return ret;
}

/* One session file: new, changed or the same. */
static void scan_file(struct rec_daemon *d, const char *path, const char *name)
{
	struct dsess *s = sess_by_name(d, name);
	char why[REC_LOG_MAX * 2];
	char **args;
	int nargs, ret;
	struct capture cap;

	capture_begin(&cap, why, sizeof(why));
	ret = rec_session_file_read(path, &args, &nargs);
	capture_end(&cap);
	if (ret < 0) {
		if (s && !strcmp(s->origin, path)) {
			s->state = s->pid > 0 ? s->state : ST(INVALID);
			set_str(s->last_error, sizeof(s->last_error), why);
		}
		rec_log(REC_LOG_ERROR, "%s", why);
		return;
	}
	if (s && strcmp(s->origin, path)) {
		rec_log(REC_LOG_WARN, "%s: a session named %s already runs (from %s): "
			"this file waits until it ends", path, name, s->origin);
		rec_words_free(args);
		return;
	}
	if (s && same_args(s->args, s->nargs, args, nargs) && s->state != ST(INVALID)) {
		rec_words_free(args);
		return;
	}
	ret = check_args(d, name, args, nargs, true, why, sizeof(why));
	if (!s) {
		if (d->nsessions >= MAX_SESSIONS) {
			rec_log(REC_LOG_ERROR, "%s: too many sessions (%d)", path, MAX_SESSIONS);
			rec_words_free(args);
			return;
		}
		s = sess_new(d, name, path, args, nargs, true);
		if (!s) {
			rec_words_free(args);
			return;
		}
	} else if (s->pid > 0) {
		/* changed while running: stop it, the new arguments follow */
		rec_words_free(s->next_args);
		s->next_args = ret < 0 ? NULL : args;
		s->next_nargs = nargs;
		if (ret < 0)
			rec_words_free(args);
		rec_log(REC_LOG_INFO, "session %s: %s changed", name, path);
		if (ret < 0) {
			set_str(s->last_error, sizeof(s->last_error), why);
			rec_log(REC_LOG_ERROR, "%s: %s (the session keeps running with the "
				"previous file)", path, why);
			return;
		}
		sess_stop(d, s, NULL);
		return;
	} else {
		rec_words_free(s->args);
		s->args = args;
		s->nargs = nargs;
		s->backoff = 0;
	}
	if (ret < 0) {
		s->state = ST(INVALID);
		set_str(s->last_error, sizeof(s->last_error), why);
		rec_log(REC_LOG_ERROR, "session %s (%s): %s", name, path, why);
		return;
	}
	s->last_error[0] = '\0';
	launch(d, s);
}

static void scan_config(struct rec_daemon *d)
{
	char path[PATH_MAX], name[65];
	struct dirent *de;
	DIR *dir;

	if (!d->config_dir || d->stopping)
		return;
	dir = opendir(d->config_dir);
	if (!dir) {
		if (errno != ENOENT)
			rec_log(REC_LOG_WARN, "cannot read the session files in %s: %s",
				d->config_dir, strerror(errno));
	} else {
		while ((de = readdir(dir))) {
			if (!rec_session_file_name(de->d_name, name))
				continue;
			snprintf(path, sizeof(path), "%s/%s", d->config_dir, de->d_name);
			scan_file(d, path, name);
		}
		closedir(dir);
	}
	/* files that went: their sessions stop */
	for (struct dsess *s = d->sessions, *next; s; s = next) {
		next = s->next;
		if (!strcmp(s->origin, "ctl") || access(s->origin, F_OK) == 0)
			continue;
		rec_log(REC_LOG_INFO, "session %s: %s removed", s->name, s->origin);
		if (s->pid > 0) {
			s->remove_after = true;
			sess_stop(d, s, NULL);
		} else {
			sess_free(d, s);
		}
	}
}

/* ---- requests */

static void do_start(struct rec_daemon *d, struct client *c,
		     Perfrec__Control__StartRequest *sr)
{
	struct dsess *s;
	char why[REC_LOG_MAX * 2];
	char **args;

	if (!rec_wire_name_ok(sr->name)) {
		reply_error(d, c, "bad session name '%.64s': 1 to 64 of [A-Za-z0-9._-], "
			    "not starting with '.' or '-'", sr->name ? sr->name : "");
		return;
	}
	if (d->stopping) {
		reply_error(d, c, "the daemon is stopping");
		return;
	}
	s = sess_by_name(d, sr->name);
	if (s && (s->pid > 0 || strcmp(s->origin, "ctl") || s->state == ST(BACKOFF))) {
		reply_error(d, c, "session %s exists (%s, from %s): stop it first", s->name,
			    state_name(s->state), s->origin);
		return;
	}
	if (!s && d->nsessions >= MAX_SESSIONS) {
		reply_error(d, c, "too many sessions (%d)", MAX_SESSIONS);
		return;
	}
	if (sr->n_args > 1000) {
		reply_error(d, c, "too many arguments (%zu)", sr->n_args);
		return;
	}
	if (check_args(d, sr->name, sr->args, (int)sr->n_args, c->trusted, why,
		       sizeof(why)) < 0) {
		reply_error(d, c, "%s", why);
		return;
	}
	args = calloc(sr->n_args + 1, sizeof(*args));
	for (size_t i = 0; args && i < sr->n_args; i++) {
		args[i] = strdup(sr->args[i]);
		if (!args[i]) {
			rec_words_free(args);
			args = NULL;
		}
	}
	if (!args) {
		reply_error(d, c, "out of memory");
		return;
	}
	if (s)
		sess_free(d, s);   /* a finished or stopped one of the same name */
	s = sess_new(d, sr->name, "ctl", args, (int)sr->n_args, c->trusted);
	if (!s) {
		rec_words_free(args);
		reply_error(d, c, "out of memory");
		return;
	}
	if (spawn(d, s) < 0) {
		reply_error(d, c, "cannot start the process of session %s", s->name);
		sess_free(d, s);
		return;
	}
	s->start_client = c->id;
	s->start_deadline = now_ms() + d->o.start_timeout_ms;
	c->waiting = true;
	c->deadline = 0;
}

static void do_status(struct rec_daemon *d, struct client *c, const char *name, bool list)
{
	Reply rp = PERFREC__CONTROL__REPLY__INIT;
	Status *st = NULL, **ptrs = NULL, **cached = NULL;
	size_t n = 0;

	if (name && name[0] && !sess_by_name(d, name)) {
		reply_error(d, c, "no session named %.64s", name);
		return;
	}
	if (d->nsessions) {
		st = calloc(d->nsessions, sizeof(*st));
		ptrs = calloc(d->nsessions, sizeof(*ptrs));
		cached = calloc(d->nsessions, sizeof(*cached));
		if (!st || !ptrs || !cached) {
			free(st);
			free(ptrs);
			free(cached);
			reply_error(d, c, "out of memory");
			return;
		}
	}
	for (struct dsess *s = d->sessions; s; s = s->next) {
		if (name && name[0] && strcmp(name, s->name))
			continue;
		cached[n] = list ? NULL : cached_status(s);
		status_of(d, s, cached[n], &st[n]);
		if (list) {
			Status keep = st[n];

			perfrec__control__session_status__init(&st[n]);
			st[n].name = keep.name;
			st[n].state = keep.state;
			st[n].origin = keep.origin;
			st[n].args = keep.args;
			st[n].n_args = keep.n_args;
			st[n].pid = keep.pid;
			st[n].restarts = keep.restarts;
		}
		ptrs[n] = &st[n];
		n++;
	}
	rp.ok = true;
	rp.sessions = ptrs;
	rp.n_sessions = n;
	reply_to(d, c, &rp);
	for (size_t i = 0; i < n; i++)
		if (cached[i])
			perfrec__control__session_status__free_unpacked(cached[i], NULL);
	free(st);
	free(ptrs);
	free(cached);
}

static void do_session_request(struct rec_daemon *d, struct client *c,
			       Perfrec__Control__Request *rq)
{
	const char *name = rq->body_case == PERFREC__CONTROL__REQUEST__BODY_STOP ? rq->stop->name :
			   rq->body_case == PERFREC__CONTROL__REQUEST__BODY_ROTATE ? rq->rotate->name :
			   rq->snapshot->name;
	struct dsess *s = sess_by_name(d, name ? name : "");

	if (!s) {
		reply_error(d, c, "no session named %.64s", name ? name : "");
		return;
	}
	if (rq->body_case == PERFREC__CONTROL__REQUEST__BODY_STOP) {
		if (s->pid > 0) {
			if (strcmp(s->origin, "ctl") == 0)
				s->remove_after = false;   /* keep it listed as STOPPED */
			sess_stop(d, s, c);
			return;
		}
		/* not running: it just leaves the table (a file session stays
		 * listed, stopped, until its file changes) */
		if (!strcmp(s->origin, "ctl")) {
			s->state = ST(STOPPED);
			reply_session(d, c, s, NULL);
			sess_free(d, s);
		} else {
			s->state = ST(STOPPED);
			snprintf(s->stop_reason, sizeof(s->stop_reason), "stopped by request");
			reply_session(d, c, s, NULL);
		}
		return;
	}
	if (s->state != ST(RUNNING)) {
		reply_error(d, c, "session %s is not running (%s)%s%s", s->name,
			    state_name(s->state), s->last_error[0] ? ": " : "", s->last_error);
		return;
	}
	if (rq->body_case == PERFREC__CONTROL__REQUEST__BODY_SNAPSHOT) {
		const char *out = rq->snapshot->output;

		if (out && out[0] && !c->trusted && (strchr(out, '/') || out[0] == '.')) {
			reply_error(d, c, "snapshot -o '%.200s': only root names a path; give "
				    "a file name (it is written in the daemon's output "
				    "directory)", out);
			return;
		}
		if (forward(d, s, c, rq, P_SNAPSHOT) < 0)
			reply_error(d, c, "session %s cannot be reached", s->name);
		return;
	}
	if (forward(d, s, c, rq, P_ROTATE) < 0)
		reply_error(d, c, "session %s cannot be reached", s->name);
}

static void dispatch(struct rec_daemon *d, struct client *c, const unsigned char *m, size_t n)
{
	Perfrec__Control__Request *rq;
	char why[256];

	rq = rec_ctl_request_decode(m, n, why, sizeof(why));
	if (!rq) {
		rec_log(REC_LOG_WARN, "client pid %d: %s", (int)c->pid, why);
		reply_error(d, c, "%s", why);
		return;
	}
	switch (rq->body_case) {
	case PERFREC__CONTROL__REQUEST__BODY_START:
		do_start(d, c, rq->start);
		break;
	case PERFREC__CONTROL__REQUEST__BODY_STATUS:
		do_status(d, c, rq->status->name, false);
		break;
	case PERFREC__CONTROL__REQUEST__BODY_LIST:
		do_status(d, c, NULL, true);
		break;
	default:
		do_session_request(d, c, rq);
		break;
	}
	rec_ctl_request_free(rq);
}

/* ---- clients */

static void client_close(struct rec_daemon *d, struct client *c)
{
	struct client **pp = &d->clients;

	while (*pp && *pp != c)
		pp = &(*pp)->next;
	if (*pp)
		*pp = c->next;
	d->nclients--;
	/* sessions forget the replies they owe it (ids are never reused) */
	close(c->fd);
	rec_wire_in_release(&c->in);
	outq_release(&c->out);
	free(c);
}

static bool in_group(int fd, gid_t gid, gid_t primary)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);

	if (primary == gid)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == gid)
			return true;
	return false;
}

static void accept_clients(struct rec_daemon *d)
{
	for (;;) {
		struct ucred cr;
		socklen_t len = sizeof(cr);
		struct client *c;
		int fd = accept4(d->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			return;
		}
		c->id = ++d->next_client_id;
		c->fd = fd;
		rec_wire_in_init(&c->in, REC_CTL_MAX_MSG);
		c->deadline = now_ms() + d->o.client_timeout_ms;
		c->next = d->clients;
		d->clients = c;
		d->nclients++;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
			reply_error(d, c, "cannot read your credentials: %s", strerror(errno));
			c->closing = true;
			continue;
		}
		c->uid = cr.uid;
		c->pid = cr.pid;
		c->trusted = cr.uid == 0 || cr.uid == geteuid();
		if (!c->trusted && !(d->have_gid && in_group(fd, d->gid, cr.gid))) {
			rec_log(REC_LOG_WARN, "refused a client: uid %u (pid %d) is not root%s%s",
				(unsigned)cr.uid, (int)cr.pid, d->have_gid ? " nor in group " : "",
				d->have_gid ? d->o.group : "");
			reply_error(d, c, "permission denied: uid %u is not root%s%s",
				    (unsigned)cr.uid, d->have_gid ? " nor in group " : "",
				    d->have_gid ? d->o.group : "");
			c->closing = true;
			continue;
		}
		if (d->nclients > MAX_CLIENTS) {
			reply_error(d, c, "too many clients at once (%d): try again", MAX_CLIENTS);
			c->closing = true;
		}
	}
}

static void read_client(struct rec_daemon *d, struct client *c)
{
	const unsigned char *m;
	size_t room, n;
	void *p = rec_wire_in_space(&c->in, &room);
	ssize_t k;
	int ret;

	if (!p) {
		client_close(d, c);
		return;
	}
	k = read(c->fd, p, room);
	if (k < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (k <= 0) {
		client_close(d, c);
		return;
	}
	rec_wire_in_commit(&c->in, (size_t)k);
	/* one request at a time: the next is read once this one is answered */
	while (!c->waiting && !c->closing && (ret = rec_wire_in_next(&c->in, &m, &n)) != 0) {
		if (ret < 0) {
			rec_log(REC_LOG_WARN, "client pid %d: a request of %zu bytes announced "
				"(at most %u): closed", (int)c->pid, n, REC_CTL_MAX_MSG);
			reply_error(d, c, "request too large: %zu bytes announced, at most %u",
				    n, REC_CTL_MAX_MSG);
			c->closing = true;
			return;
		}
		dispatch(d, c, m, n);
	}
}

/* ---- timers */

static void timers(struct rec_daemon *d)
{
	uint64_t now = now_ms();

	for (struct client *c = d->clients; c; c = c->next) {
		if (c->deadline && now >= c->deadline && !c->closing && !c->waiting) {
			reply_error(d, c, "no whole request within %u ms: closing",
				    d->o.client_timeout_ms);
			c->closing = true;
		}
	}
	for (struct dsess *s = d->sessions, *next; s; s = next) {
		next = s->next;
		for (struct pend *p = s->pend; p; p = p->next) {
			struct client *c;

			if (!p->client || now < p->deadline)
				continue;
			c = client_by_id(d, p->client);
			p->client = 0;   /* its late answer goes nowhere */
			if (c)
				reply_error(d, c, "session %s did not answer within %u s", s->name,
					    ANSWER_MS / 1000);
		}
		if (s->start_client && now >= s->start_deadline && s->pid > 0) {
			struct client *c = client_by_id(d, s->start_client);

			s->start_client = 0;
			if (c)
				reply_error(d, c, "session %s did not start within %u ms%s%s",
					    s->name, d->o.start_timeout_ms,
					    s->errors[0] ? ": " : "", s->errors);
			s->remove_after = !strcmp(s->origin, "ctl");
			kill(s->pid, SIGTERM);
		}
		if (s->state == ST(BACKOFF) && s->pid < 0 && now >= s->restart_at && !d->stopping) {
			s->restarts++;
			rec_log(REC_LOG_INFO, "session %s: restart %u", s->name, s->restarts);
			launch(d, s);
		}
	}
	if (d->rescan_at && now >= d->rescan_at) {
		d->rescan_at = 0;
		scan_config(d);
	}
	if (d->stopping && !d->killed && now >= d->stop_deadline) {
		d->killed = true;
		for (struct dsess *s = d->sessions; s; s = s->next) {
			if (s->pid > 0) {
				rec_log(REC_LOG_WARN, "session %s did not stop within %u ms: "
					"killed (its file reads to its last frame)", s->name,
					d->o.stop_timeout_ms);
				kill(s->pid, SIGKILL);
			}
		}
	}
}

/* ---- stopping */

static void begin_stop(struct rec_daemon *d, int sig)
{
	if (d->stopping)
		return;
	d->stopping = true;
	d->stop_deadline = now_ms() + d->o.stop_timeout_ms;
	notify("STOPPING=1");
	rec_log(REC_LOG_INFO, "daemon: %s: stopping %u sessions", strsignal(sig),
		d->nsessions);
	if (d->lfd >= 0) {
		close(d->lfd);
		d->lfd = -1;
		unlink(d->sock_path);
	}
	for (struct dsess *s = d->sessions, *next; s; s = next) {
		next = s->next;
		if (s->pid > 0) {
			s->stop_wanted = true;
			s->state = ST(STOPPING);
			kill(s->pid, SIGTERM);
		} else {
			sess_free(d, s);
		}
	}
}

static void read_signals(struct rec_daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			reap(d);
			break;
		case SIGHUP:
			rec_log(REC_LOG_INFO, "daemon: SIGHUP: reading %s again",
				d->config_dir ? d->config_dir : "(no config directory)");
			scan_config(d);
			break;
		default:
			begin_stop(d, (int)si.ssi_signo);
			break;
		}
	}
	reap(d);   /* SIGCHLDs merge */
}

/* ---- setup */

/* The lock file: held for the daemon's life; names its pid. */
static int take_lock(struct rec_daemon *d)
{
	char pid[32] = "";
	ssize_t n;
	int fd = open(d->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600), e;

	if (fd < 0) {
		e = -errno;
		rec_log(REC_LOG_ERROR, "cannot open the lock file %s: %s", d->lock_path,
			strerror(-e));
		return e;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		e = -errno;
		n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		close(fd);
		if (e == -EWOULDBLOCK) {
			rec_log(REC_LOG_ERROR, "another perfrec daemon (pid %s) serves %s: stop "
				"it first, or give this one another --socket",
				pid[0] ? pid : "?", d->sock_path);
			return -EBUSY;
		}
		rec_log(REC_LOG_ERROR, "cannot lock %s: %s", d->lock_path, strerror(-e));
		return e;
	}
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, strlen(pid), 0) < 0)
		rec_log(REC_LOG_WARN, "cannot write the pid into %s: %s", d->lock_path,
			strerror(errno));
	d->lockfd = fd;
	return 0;
}

static int listen_socket(struct rec_daemon *d)
{
	struct sockaddr_un sa;
	struct stat st;
	mode_t old;
	int fd, e;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(d->sock_path) >= sizeof(sa.sun_path)) {
		rec_log(REC_LOG_ERROR, "socket path too long (at most %zu bytes): %s",
			sizeof(sa.sun_path) - 1, d->sock_path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, d->sock_path, strlen(d->sock_path));
	/* we hold the lock: whatever is there was left by a crashed daemon */
	if (lstat(d->sock_path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			rec_log(REC_LOG_ERROR, "%s exists and is not a socket: not replacing it",
				d->sock_path);
			return -EEXIST;
		}
		rec_log(REC_LOG_INFO, "daemon: replacing the stale socket %s", d->sock_path);
		unlink(d->sock_path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	old = umask(0177);   /* 0600 from the start: no window */
	e = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	umask(old);
	if (!e && d->have_gid &&
	    (chown(d->sock_path, (uid_t)-1, d->gid) < 0 || chmod(d->sock_path, 0660) < 0))
		e = -errno;
	if (!e && listen(fd, 64) < 0)
		e = -errno;
	if (e) {
		rec_log(REC_LOG_ERROR, "cannot serve on %s: %s", d->sock_path, strerror(-e));
		close(fd);
		return e;
	}
	d->lfd = fd;
	return 0;
}

static char *dup_str(const char *s, int *err)
{
	char *r = s ? strdup(s) : NULL;

	if (s && !r)
		*err = -ENOMEM;
	return r;
}

int rec_daemon_new(const struct rec_daemon_opts *opts, struct rec_daemon **out)
{
	struct rec_daemon *d = calloc(1, sizeof(*d));
	int ret = 0;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->lfd = d->lockfd = d->sfd = d->ifd = -1;
	if (rec_opts_copy(&d->o, sizeof(d->o), opts) < 0 || !d->o.socket_path ||
	    !d->o.check || !d->o.session_argv) {
		rec_log(REC_LOG_ERROR, "daemon options: socket_path, check and "
			"session_argv are needed (and no unknown fields)");
		ret = -EINVAL;
		goto err;
	}
	if (!d->o.client_timeout_ms)
		d->o.client_timeout_ms = 5000;
	if (!d->o.start_timeout_ms)
		d->o.start_timeout_ms = 30000;
	if (!d->o.stop_timeout_ms)
		d->o.stop_timeout_ms = 60000;
	d->sock_path = dup_str(d->o.socket_path, &ret);
	d->config_dir = dup_str(d->o.config_dir, &ret);
	d->exe = dup_str(d->o.exe ? d->o.exe : "/proc/self/exe", &ret);
	if (!ret && asprintf(&d->lock_path, "%s.lock", d->sock_path) < 0)
		ret = -ENOMEM;
	if (ret < 0)
		goto err;
	if (d->o.group && d->o.group[0]) {
		struct group *g = getgrnam(d->o.group);

		if (!g) {
			rec_log(REC_LOG_ERROR, "group '%s' (daemon.conf) does not exist: "
				"create it (groupadd %s) or remove the setting",
				d->o.group, d->o.group);
			ret = -ENOENT;
			goto err;
		}
		d->gid = g->gr_gid;
		d->have_gid = true;
	}
	ret = take_lock(d);
	if (ret < 0)
		goto err;
	ret = listen_socket(d);
	if (ret < 0)
		goto err;
	*out = d;
	return 0;
err:
	rec_daemon_free(d);
	return ret;
}

static int setup_loop(struct rec_daemon *d)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, &d->oldmask) < 0)
		return -errno;
	d->masked = true;
	d->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->sfd < 0)
		return -errno;
	if (d->config_dir) {
		d->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (d->ifd >= 0 &&
		    inotify_add_watch(d->ifd, d->config_dir, IN_CLOSE_WRITE | IN_MOVED_TO |
				      IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_ATTRIB) < 0) {
			rec_log(REC_LOG_WARN, "cannot watch %s (%s): session files are read "
				"again on SIGHUP only", d->config_dir, strerror(errno));
			close(d->ifd);
			d->ifd = -1;
		}
	}
	return 0;
}

/* What a pollfd of the loop belongs to. */
struct slot {
	uint64_t client;                 /* a client's id, or 0 */
	struct dsess *s;                 /* a session's channel, or NULL */
};

int rec_daemon_run(struct rec_daemon *d)
{
	struct pollfd *pfd = NULL;
	struct slot *slot = NULL;
	size_t cap = 0;
	int ret;

	ret = setup_loop(d);
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "daemon: cannot set up signals: %s", strerror(-ret));
		return ret;
	}
	scan_config(d);
	rec_log(REC_LOG_INFO, "daemon: serving on %s (%s), %u sessions from %s",
		d->sock_path, d->have_gid ? "0660" : "0600", d->nsessions,
		d->config_dir ? d->config_dir : "no config directory");
	notify("READY=1");
	if (d->o.ready)
		d->o.ready(d->o.ctx);
	while (!d->stopping || d->nsessions) {
		size_t n = 0, need = 3 + d->nclients + d->nsessions;
		int timeout = TICK_MS;
		uint64_t now = now_ms();

		if (need > cap) {
			struct pollfd *np = realloc(pfd, need * sizeof(*np));
			struct slot *ns = np ? realloc(slot, need * sizeof(*ns)) : NULL;

			if (np)
				pfd = np;
			if (!ns) {
				ret = -ENOMEM;
				break;
			}
			slot = ns;
			cap = need;
		}
		memset(slot, 0, need * sizeof(*slot));
		pfd[n++] = (struct pollfd){ d->sfd, POLLIN, 0 };
		pfd[n++] = (struct pollfd){ d->lfd, POLLIN, 0 };
		pfd[n++] = (struct pollfd){ d->ifd, POLLIN, 0 };
		for (struct client *c = d->clients; c; c = c->next) {
			short ev = (c->waiting || c->closing) ? 0 : POLLIN;

			if (c->out.pos < c->out.len)
				ev |= POLLOUT;
			slot[n].client = c->id;
			pfd[n++] = (struct pollfd){ c->fd, ev, 0 };
			if (c->deadline && c->deadline - now < (uint64_t)timeout)
				timeout = c->deadline > now ? (int)(c->deadline - now) : 0;
		}
		for (struct dsess *s = d->sessions; s; s = s->next) {
			short ev = POLLIN;

			if (s->out.pos < s->out.len)
				ev |= POLLOUT;
			slot[n].s = s;
			pfd[n++] = (struct pollfd){ s->chan, s->chan >= 0 ? ev : 0, 0 };
			if (s->state == ST(BACKOFF) && s->restart_at - now < (uint64_t)timeout)
				timeout = s->restart_at > now ? (int)(s->restart_at - now) : 0;
		}
		if (d->rescan_at && d->rescan_at - now < (uint64_t)timeout)
			timeout = d->rescan_at > now ? (int)(d->rescan_at - now) : 0;
		if (poll(pfd, n, timeout) < 0 && errno != EINTR) {
			ret = -errno;
			rec_log(REC_LOG_ERROR, "daemon: poll failed: %s", strerror(-ret));
			break;
		}
		/* channels first (nothing is freed before): a process's last
		 * words come before its exit is handled */
		for (size_t i = 3; i < n; i++) {
			struct dsess *s = slot[i].s;

			if (!s || s->chan < 0)
				continue;
			if (pfd[i].revents & POLLOUT)
				outq_flush(&s->out, s->chan);
			if ((pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) && !read_chan(d, s)) {
				close(s->chan);
				s->chan = -1;   /* its exit follows (SIGCHLD) */
			}
		}
		if (pfd[0].revents & POLLIN)
			read_signals(d);
		if (d->lfd >= 0 && (pfd[1].revents & POLLIN))
			accept_clients(d);
		if (d->ifd >= 0 && (pfd[2].revents & POLLIN)) {
			char buf[4096];

			while (read(d->ifd, buf, sizeof(buf)) > 0)
				;
			d->rescan_at = now_ms() + RESCAN_DELAY_MS;
		}
		for (size_t i = 3; i < n; i++) {
			struct client *c = slot[i].client ? client_by_id(d, slot[i].client) : NULL;

			if (!c)
				continue;
			if (pfd[i].revents & POLLIN)
				read_client(d, c);
			else if (pfd[i].revents & (POLLHUP | POLLERR))
				c->closing = true;
		}
		for (struct client *c = d->clients, *next; c; c = next) {
			next = c->next;
			if (c->out.pos < c->out.len && outq_flush(&c->out, c->fd) < 0)
				client_close(d, c);
			else if (c->closing && c->out.pos == c->out.len)
				client_close(d, c);
		}
		timers(d);
	}
	/* the replies owed were sent as the sessions ended: flush them */
	for (struct client *c = d->clients; c; c = c->next)
		outq_flush(&c->out, c->fd);
	free(pfd);
	free(slot);
	rec_log(REC_LOG_INFO, "daemon: stopped");
	return ret;
}

void rec_daemon_free(struct rec_daemon *d)
{
	if (!d)
		return;
	while (d->sessions) {
		struct dsess *s = d->sessions;

		if (s->pid > 0) {
			kill(s->pid, SIGKILL);
			waitpid(s->pid, NULL, 0);
		}
		sess_free(d, s);
	}
	while (d->clients)
		client_close(d, d->clients);
	if (d->lfd >= 0) {
		close(d->lfd);
		unlink(d->sock_path);
	}
	if (d->lockfd >= 0)
		close(d->lockfd);   /* the lock goes with it; the file stays */
	if (d->sfd >= 0)
		close(d->sfd);
	if (d->ifd >= 0)
		close(d->ifd);
	if (d->masked)
		sigprocmask(SIG_SETMASK, &d->oldmask, NULL);
	free(d->sock_path);
	free(d->lock_path);
	free(d->config_dir);
	free(d->exe);
	free(d);
}
