/*
 * daemon.c - the control socket, its clients and their requests, the loop;
 * see daemon.h. The session table is supervise.c, below it (it calls
 * supervise.c; replies supervise.c owes clients come back on d->answers).
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
#include <poll.h>
#include <stdarg.h>
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
#include <unistd.h>

#include "format/base/clock.h"
#include "format/base/opts.h"
#include "format/base/outq.h"
#include "recorder/daemon/config.h"
#include "recorder/daemon/ctlmsg.h"
#include "recorder/daemon/daemon_int.h"
#include "recorder/daemon/manifest.h"

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

/* ---- lookups */

static struct client *daemon_client(struct rec_daemon *d, uint64_t id)
{
	for (struct client *c = d->clients; c && id; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

/* ---- status: what the session's process said, with the daemon's own
 * fields (a shallow copy: pointers stay owned by their holders) */

/* ---- replies */

/* c has its reply (queued: sent false when it cannot take it, and the
 * loop closes it); its next request may come. */
static void answered(struct rec_daemon *d, struct client *c, bool sent)
{
	if (!sent) {
		c->closing = true;
		prec_outq_drop(&c->out);   /* nothing more goes out */
	}
	c->waiting = false;
	c->since = prec_now_ms();
	c->deadline = c->since + d->o.client_timeout_ms;
}

/* Hands the answers supervise.c queued (and daemon_reply's) to their
 * clients, in order; a client that left gets none, one that cannot take
 * its reply is closed by the loop. */
static void deliver(struct rec_daemon *d)
{
	while (d->answers) {
		struct answer *a = d->answers;
		struct client *c = daemon_client(d, a->client);

		d->answers = a->next;
		if (!d->answers)
			d->answers_last = NULL;
		if (c)
			answered(d, c, a->msg && prec_outq_add(&c->out, a->msg, a->len) == 0 &&
				 rec_ctl_flush(&c->out, c->fd) == 0);
		free(a->msg);
		free(a);
	}
}

/* Replies to c now. */
static void daemon_reply(struct rec_daemon *d, struct client *c, Reply *rp)
{
	if (session_answer(d, c->id, rp) < 0)
		answered(d, c, false);
	deliver(d);
}

/* ok, with the status of one session (or none). */
static void daemon_reply_session(struct rec_daemon *d, struct client *c, struct session *s,
				 const char *file)
{
	if (session_answer_status(d, c->id, s, file) < 0)
		answered(d, c, false);
	deliver(d);
}

static void daemon_reply_error(struct rec_daemon *d, struct client *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void daemon_reply_error(struct rec_daemon *d, struct client *c, const char *fmt, ...)
{
	Reply rp = PERFREC__CONTROL__REPLY__INIT;
	char msg[REC_LOG_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rp.error = msg;
	daemon_reply(d, c, &rp);
}


/* ---- sessions */

/* ---- session files */

/* ---- requests */

static void do_start(struct rec_daemon *d, struct client *c,
		     Perfrec__Control__StartRequest *sr)
{
	struct session *s;
	char why[REC_LOG_MAX * 2], stem[PATH_MAX];
	char **args;

	if (!rec_wire_name_ok(sr->name)) {
		daemon_reply_error(d, c, "bad session name '%.64s': 1 to 64 of [A-Za-z0-9._-], "
			    "not starting with '.' or '-'", sr->name ? sr->name : "");
		return;
	}
	if (d->stopping) {
		daemon_reply_error(d, c, "the daemon is stopping");
		return;
	}
	s = session_find(d, sr->name);
	if (s && (s->pid > 0 || strcmp(s->origin, "ctl") || s->state == ST(BACKOFF))) {
		daemon_reply_error(d, c, "session %s exists (%s, from %s): stop it first", s->name,
			    session_state_name(s->state), s->origin);
		return;
	}
	if (!s && d->nsessions >= MAX_SESSIONS) {
		daemon_reply_error(d, c, "too many sessions (%d)", MAX_SESSIONS);
		return;
	}
	if (sr->n_args > 1000) {
		daemon_reply_error(d, c, "too many arguments (%zu)", sr->n_args);
		return;
	}
	if (session_check_args(d, sr->name, sr->args, (int)sr->n_args, c->trusted, stem, why,
			     sizeof(why)) < 0 ||
	    session_check_stem(d, sr->name, stem, c->uid, c->trusted, why, sizeof(why)) < 0) {
		daemon_reply_error(d, c, "%s", why);
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
		daemon_reply_error(d, c, "out of memory");
		return;
	}
	if (s)
		session_free(d, s);   /* a finished or stopped one of the same name */
	s = session_new(d, sr->name, "ctl", args, (int)sr->n_args, c->trusted, c->uid, stem);
	if (!s) {
		rec_words_free(args);
		daemon_reply_error(d, c, "out of memory");
		return;
	}
	if (session_spawn(d, s) < 0) {
		daemon_reply_error(d, c, "cannot start the process of session %s", s->name);
		session_free(d, s);
		return;
	}
	s->start_client = c->id;
	s->start_deadline = prec_now_ms() + d->o.start_timeout_ms;
	c->waiting = true;
	c->deadline = 0;
}

static void do_status(struct rec_daemon *d, struct client *c, const char *name, bool list)
{
	Reply rp = PERFREC__CONTROL__REPLY__INIT;
	Status *st = NULL, **ptrs = NULL, **cached = NULL;
	size_t n = 0;

	if (name && name[0] && !session_find(d, name)) {
		daemon_reply_error(d, c, "no session named %.64s", name);
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
			daemon_reply_error(d, c, "out of memory");
			return;
		}
	}
	for (struct session *s = d->sessions; s; s = s->next) {
		if (name && name[0] && strcmp(name, s->name))
			continue;
		cached[n] = list ? NULL : session_cached_status(s);
		session_status(d, s, cached[n], &st[n]);
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
	daemon_reply(d, c, &rp);
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
	struct session *s = session_find(d, name ? name : "");

	if (!s) {
		daemon_reply_error(d, c, "no session named %.64s", name ? name : "");
		return;
	}
	if (rq->body_case == PERFREC__CONTROL__REQUEST__BODY_STOP) {
		if (s->pid > 0) {
			if (strcmp(s->origin, "ctl") == 0)
				s->remove_after = false;   /* keep it listed as STOPPED */
			session_stop(d, s, c);
			return;
		}
		/* not running: it just leaves the table (a file session stays
		 * listed, stopped, until its file changes) */
		if (!strcmp(s->origin, "ctl")) {
			s->state = ST(STOPPED);
			daemon_reply_session(d, c, s, NULL);
			session_free(d, s);
		} else {
			s->state = ST(STOPPED);
			snprintf(s->stop_reason, sizeof(s->stop_reason), "stopped by request");
			daemon_reply_session(d, c, s, NULL);
		}
		return;
	}
	if (s->state != ST(RUNNING)) {
		daemon_reply_error(d, c, "session %s is not running (%s)%s%s", s->name,
			    session_state_name(s->state), s->last_error[0] ? ": " : "", s->last_error);
		return;
	}
	if (rq->body_case == PERFREC__CONTROL__REQUEST__BODY_SNAPSHOT) {
		const char *out = rq->snapshot->output;

		if (out && out[0] && !c->trusted && (strchr(out, '/') || out[0] == '.')) {
			daemon_reply_error(d, c, "snapshot -o '%.200s': only root names a path; give "
				    "a file name (it is written in the daemon's output "
				    "directory)", out);
			return;
		}
		if (session_forward(d, s, c, rq, P_SNAPSHOT) < 0)
			daemon_reply_error(d, c, "session %s cannot be reached", s->name);
		return;
	}
	if (session_forward(d, s, c, rq, P_ROTATE) < 0)
		daemon_reply_error(d, c, "session %s cannot be reached", s->name);
}

static void dispatch(struct rec_daemon *d, struct client *c, const unsigned char *m, size_t n)
{
	Perfrec__Control__Request *rq;
	char why[256];

	rq = rec_ctl_request_decode(m, n, why, sizeof(why));
	if (!rq) {
		rec_log(REC_LOG_WARN, "client pid %d: %s", (int)c->pid, why);
		daemon_reply_error(d, c, "%s", why);
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
	/* the replies sessions owe it go nowhere (ids are never reused) */
	for (struct session *s = d->sessions; s; s = s->next)
		for (struct pend *p = s->pend; p; p = p->next)
			if (p->client == c->id)
				p->client = 0;
	close(c->fd);
	prec_msgbuf_release(&c->in);
	prec_outq_release(&c->out);
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

/* Clients of uid that count against the limits (not closing). */
static unsigned clients_of(struct rec_daemon *d, uid_t uid, bool any_uid)
{
	unsigned n = 0;

	for (struct client *c = d->clients; c; c = c->next)
		n += !c->closing && (any_uid || c->uid == uid);
	return n;
}

/* The oldest idle client of uid (no session owes it a reply), not c. */
static struct client *oldest_idle(struct rec_daemon *d, uid_t uid, struct client *c)
{
	struct client *best = NULL;

	for (struct client *o = d->clients; o; o = o->next)
		if (o != c && o->uid == uid && !o->closing && !o->waiting &&
		    (!best || o->since <= best->since))
			best = o;
	return best;
}

/* c was just accepted: within the limits, or an idle client of its own
 * uid (over MAX_CLIENTS_PER_UID), else of the uid holding the most (the
 * table is full), is evicted for it; c is refused only when none is
 * idle. A flood of silent connections thus evicts itself. */
static void make_room(struct rec_daemon *d, struct client *c)
{
	struct client *victim = NULL;
	unsigned mine = clients_of(d, c->uid, false);

	if (mine > MAX_CLIENTS_PER_UID) {
		victim = oldest_idle(d, c->uid, c);
	} else if (clients_of(d, 0, true) > MAX_CLIENTS) {
		unsigned most = 0;

		for (struct client *o = d->clients; o; o = o->next) {
			unsigned k = o->closing || o->waiting ? 0 : clients_of(d, o->uid, false);

			if (o != c && k > most && oldest_idle(d, o->uid, c)) {
				most = k;
				victim = oldest_idle(d, o->uid, c);
			}
		}
	} else {
		return;
	}
	if (!victim) {
		daemon_reply_error(d, c, "too many clients at once (%u of uid %u, %d in all), "
				   "each waiting for a session: try again", mine,
				   (unsigned)c->uid, MAX_CLIENTS);
		c->closing = true;
		return;
	}
	rec_log(REC_LOG_WARN, "too many clients (uid %u: %u, in all %u): closing the "
		"oldest idle one, of uid %u (pid %d)", (unsigned)c->uid, mine,
		clients_of(d, 0, true), (unsigned)victim->uid, (int)victim->pid);
	daemon_reply_error(d, victim, "closed: too many clients at once (at most %d, %d "
			   "per uid), and this one was the oldest idle", MAX_CLIENTS,
			   MAX_CLIENTS_PER_UID);
	victim->closing = true;
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
		prec_msgbuf_init(&c->in, REC_CTL_MAX_MSG);
		c->since = prec_now_ms();
		c->deadline = c->since + d->o.client_timeout_ms;
		c->next = d->clients;
		d->clients = c;
		d->nclients++;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
			daemon_reply_error(d, c, "cannot read your credentials: %s", strerror(errno));
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
			daemon_reply_error(d, c, "permission denied: uid %u is not root%s%s",
				    (unsigned)cr.uid, d->have_gid ? " nor in group " : "",
				    d->have_gid ? d->o.group : "");
			c->closing = true;
			continue;
		}
		make_room(d, c);
	}
}

/* Answers the whole requests c has sent, one at a time: the next waits
 * while a session owes c a reply, or while c does not read its replies. */
static void client_pump(struct rec_daemon *d, struct client *c)
{
	const unsigned char *m;
	size_t n;
	int ret;

	while (!c->waiting && !c->closing && prec_outq_pending(&c->out) < OUT_BACKLOG &&
	       (ret = prec_msgbuf_next(&c->in, &m, &n)) != 0) {
		if (ret < 0) {
			rec_log(REC_LOG_WARN, "client pid %d: a request of %zu bytes announced "
				"(at most %u): closed", (int)c->pid, n, REC_CTL_MAX_MSG);
			daemon_reply_error(d, c, "request too large: %zu bytes announced, at most %u",
				    n, REC_CTL_MAX_MSG);
			c->closing = true;
			return;
		}
		dispatch(d, c, m, n);
	}
}

static void read_client(struct rec_daemon *d, struct client *c)
{
	size_t room;
	void *p = prec_msgbuf_space(&c->in, &room);
	ssize_t k;

	if (!p) {
		c->closing = true;
		return;
	}
	k = read(c->fd, p, room);
	if (k < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (k == 0) {
		/* it sent all it will: answer that, then close */
		c->eof = true;
		client_pump(d, c);
		return;
	}
	if (k < 0) {
		c->closing = true;
		prec_outq_drop(&c->out);   /* nobody reads what is queued */
		return;
	}
	prec_msgbuf_commit(&c->in, (size_t)k);
	client_pump(d, c);
}

/* ---- timers */

static void timers(struct rec_daemon *d)
{
	uint64_t now = prec_now_ms();

	for (struct client *c = d->clients; c; c = c->next) {
		if (c->deadline && now >= c->deadline && !c->closing && !c->waiting) {
			daemon_reply_error(d, c, "no whole request within %u ms: closing",
				    d->o.client_timeout_ms);
			c->closing = true;
		}
	}
	for (struct session *s = d->sessions, *next; s; s = next) {
		next = s->next;
		for (struct pend *p = s->pend; p; p = p->next) {
			struct client *c;

			if (!p->client || now < p->deadline)
				continue;
			c = daemon_client(d, p->client);
			p->client = 0;   /* its late answer goes nowhere */
			if (c)
				daemon_reply_error(d, c, "session %s did not answer within %u s", s->name,
					    ANSWER_MS / 1000);
		}
		if (s->start_client && now >= s->start_deadline && s->pid > 0) {
			struct client *c = daemon_client(d, s->start_client);

			s->start_client = 0;
			if (c)
				daemon_reply_error(d, c, "session %s did not start within %u ms%s%s",
					    s->name, d->o.start_timeout_ms,
					    s->errors[0] ? ": " : "", s->errors);
			s->remove_after = !strcmp(s->origin, "ctl");
			kill(s->pid, SIGTERM);
		}
		if (s->state == ST(BACKOFF) && s->pid < 0 && now >= s->restart_at && !d->stopping) {
			s->restarts++;
			rec_log(REC_LOG_INFO, "session %s: restart %u", s->name, s->restarts);
			session_launch(d, s);
		}
	}
	if (d->rescan_at && now >= d->rescan_at) {
		d->rescan_at = 0;
		session_scan_config(d);
	}
	if (d->stopping && !d->killed && now >= d->stop_deadline) {
		d->killed = true;
		for (struct session *s = d->sessions; s; s = s->next) {
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
	d->stop_deadline = prec_now_ms() + d->o.stop_timeout_ms;
	notify("STOPPING=1");
	rec_log(REC_LOG_INFO, "%s: stopping %u sessions", strsignal(sig),
		d->nsessions);
	if (d->lfd >= 0) {
		close(d->lfd);
		d->lfd = -1;
		unlink(d->sock_path);
	}
	for (struct session *s = d->sessions, *next; s; s = next) {
		next = s->next;
		if (s->pid > 0) {
			s->stop_wanted = true;
			s->state = ST(STOPPING);
			kill(s->pid, SIGTERM);
		} else {
			session_free(d, s);
		}
	}
}

static void read_signals(struct rec_daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			session_reap(d);
			break;
		case SIGHUP:
			rec_log(REC_LOG_INFO, "SIGHUP: reading %s again",
				d->config_dir ? d->config_dir : "(no config directory)");
			session_scan_config(d);
			break;
		default:
			begin_stop(d, (int)si.ssi_signo);
			break;
		}
	}
	session_reap(d);   /* SIGCHLDs merge */
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
		rec_log(REC_LOG_INFO, "replacing the stale socket %s", d->sock_path);
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
	d->lfd = d->lockfd = d->sfd = d->ifd = d->mfd = -1;
	if (prec_opts_copy(&d->o, sizeof(d->o), opts) < 0 || !d->o.socket_path ||
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
	if (d->o.state_dir) {
		ret = rec_manifest_dir_open(d->o.state_dir);
		if (ret < 0)
			goto err;
		d->mfd = ret;
	}
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
			if (errno != ENOENT)
				rec_log(REC_LOG_WARN, "cannot watch %s (%s): session files are "
					"read again on SIGHUP only", d->config_dir, strerror(errno));
			close(d->ifd);
			d->ifd = -1;
		}
	}
	return 0;
}

/* What a pollfd of the loop belongs to. */
struct slot {
	uint64_t client;                 /* a client's id, or 0 */
	struct session *s;                 /* a session's channel, or NULL */
};

int rec_daemon_run(struct rec_daemon *d)
{
	struct pollfd *pfd = NULL;
	struct slot *slot = NULL;
	size_t cap = 0;
	int ret;

	ret = setup_loop(d);
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "cannot set up signals: %s", strerror(-ret));
		return ret;
	}
	session_scan_config(d);
	rec_log(REC_LOG_INFO, "serving on %s (%s), %u sessions from %s",
		d->sock_path, d->have_gid ? "0660" : "0600", d->nsessions,
		d->config_dir ? d->config_dir : "no config directory");
	notify("READY=1");
	if (d->o.ready)
		d->o.ready(d->o.ctx);
	while (!d->stopping || d->nsessions) {
		size_t n = 0, need = 3 + d->nclients + d->nsessions;
		int timeout = TICK_MS;
		uint64_t now = prec_now_ms();

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
			short ev = (c->waiting || c->closing || c->eof ||
				    prec_outq_pending(&c->out) >= OUT_BACKLOG) ? 0 : POLLIN;

			if (prec_outq_pending(&c->out))
				ev |= POLLOUT;
			slot[n].client = c->id;
			pfd[n++] = (struct pollfd){ c->fd, ev, 0 };
			if (c->deadline && c->deadline - now < (uint64_t)timeout)
				timeout = c->deadline > now ? (int)(c->deadline - now) : 0;
		}
		for (struct session *s = d->sessions; s; s = s->next) {
			short ev = POLLIN;

			if (prec_outq_pending(&s->out))
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
			rec_log(REC_LOG_ERROR, "poll failed: %s", strerror(-ret));
			break;
		}
		/* channels first (nothing is freed before): a process's last
		 * words come before its exit is handled */
		for (size_t i = 3; i < n; i++) {
			struct session *s = slot[i].s;

			if (!s || s->chan < 0)
				continue;
			if (pfd[i].revents & POLLOUT)
				rec_ctl_flush(&s->out, s->chan);
			if ((pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) && !session_read_chan(d, s)) {
				close(s->chan);
				s->chan = -1;   /* its exit follows (SIGCHLD) */
			}
		}
		if (pfd[0].revents & POLLIN)
			read_signals(d);
		/* what the sessions answered goes out before any client is
		 * read again */
		deliver(d);
		if (d->ifd >= 0 && (pfd[2].revents & POLLIN)) {
			char buf[4096];

			while (read(d->ifd, buf, sizeof(buf)) > 0)
				;
			d->rescan_at = prec_now_ms() + RESCAN_DELAY_MS;
		}
		for (size_t i = 3; i < n; i++) {
			struct client *c = slot[i].client ? daemon_client(d, slot[i].client) : NULL;

			if (!c)
				continue;
			if (pfd[i].revents & POLLIN)
				read_client(d, c);
			else if (pfd[i].revents & (POLLHUP | POLLERR))
				c->closing = true;
		}
		/* after the requests that came: a new connection may evict an
		 * idle client, never one whose request is here already */
		if (d->lfd >= 0 && (pfd[1].revents & POLLIN))
			accept_clients(d);
		for (struct client *c = d->clients, *next; c; c = next) {
			next = c->next;
			client_pump(d, c);   /* requests that waited for a reply */
			if (prec_outq_pending(&c->out) && rec_ctl_flush(&c->out, c->fd) < 0)
				client_close(d, c);
			else if ((c->closing || (c->eof && !c->waiting)) && !prec_outq_pending(&c->out))
				client_close(d, c);
		}
		timers(d);
		deliver(d);
	}
	/* the replies owed were queued as the sessions ended: flush them */
	deliver(d);
	for (struct client *c = d->clients; c; c = c->next)
		rec_ctl_flush(&c->out, c->fd);
	free(pfd);
	free(slot);
	rec_log(REC_LOG_INFO, "stopped");
	return ret;
}

void rec_daemon_free(struct rec_daemon *d)
{
	if (!d)
		return;
	while (d->sessions) {
		struct session *s = d->sessions;

		if (s->pid > 0) {
			kill(s->pid, SIGKILL);
			waitpid(s->pid, NULL, 0);
		}
		session_free(d, s);
	}
	while (d->clients)
		client_close(d, d->clients);
	deliver(d);   /* nobody left: frees what was not delivered */
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
	if (d->mfd >= 0)
		close(d->mfd);
	if (d->masked)
		sigprocmask(SIG_SETMASK, &d->oldmask, NULL);
	free(d->sock_path);
	free(d->lock_path);
	free(d->config_dir);
	free(d->exe);
	free(d);
}
