/*
 * supervise.c - the daemon's sessions: one process each (`perfrec session`,
 * daemon/session_proc.h), its channel (requests forwarded in order, status,
 * errors), its end (answers owed, then stopped, finished, or restarted
 * after a backoff) and the session files that declare them. See daemon.h
 * for the rules, daemon_int.h for the state.
 *
 * daemon.c calls this file, never the reverse: a reply a session owes a
 * client is packed here (session_answer*) and handed back on d->answers;
 * the daemon's loop delivers it to the client if it is still there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/base/clock.h"
#include "recorder/daemon/config.h"
#include "recorder/daemon/ctlmsg.h"
#include "recorder/daemon/daemon_int.h"
#include "recorder/daemon/manifest.h"

extern char **environ;

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

void session_status(struct rec_daemon *d, struct session *s, Status *from, Status *st)
{
	uint64_t now = prec_now_ms();

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

Status *session_cached_status(struct session *s)
{
	return s->status ? perfrec__control__session_status__unpack(NULL, s->status_len,
								   s->status) : NULL;
}

int session_spawn(struct rec_daemon *d, struct session *s)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dflt;
	char **argv;
	int sv[2], ret;
	pid_t pid;

	argv = d->o.session_argv(d->o.ctx, s->name, s->nargs, s->args, s->trusted,
				 (uint32_t)s->owner);
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
	prec_msgbuf_release(&s->in);
	prec_msgbuf_init(&s->in, REC_CTL_MAX_EVENT);
	prec_outq_release(&s->out);
	s->state = ST(STARTING);
	s->run_start = prec_now_ms();
	s->running_seen = false;
	s->stop_wanted = false;
	s->errors[0] = '\0';
	s->stop_reason[0] = '\0';
	rec_log(REC_LOG_INFO, "session %s: started (pid %d)", s->name, (int)pid);
	return 0;
}

/* Spawns, or arms the backoff when even that fails. */
void session_launch(struct rec_daemon *d, struct session *s)
{
	int ret = session_spawn(d, s);

	if (ret < 0) {
		snprintf(s->last_error, sizeof(s->last_error), "cannot start its process: %s",
			 strerror(-ret));
		s->state = ST(BACKOFF);
		s->backoff = s->backoff ? s->backoff : BACKOFF_MIN_MS;
		s->restart_at = prec_now_ms() + s->backoff;
	}
}

struct session *session_new(struct rec_daemon *d, const char *name, const char *origin,
			char **args, int nargs, bool trusted, uid_t owner, const char *stem)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->origin, sizeof(s->origin), "%s", origin);
	s->args = args;
	s->nargs = nargs;
	s->trusted = trusted;
	s->owner = owner;
	daemon_set_str(s->stem, sizeof(s->stem), stem);
	s->chan = -1;
	s->pid = -1;
	s->next = d->sessions;
	d->sessions = s;
	d->nsessions++;
	return s;
}

void session_free(struct rec_daemon *d, struct session *s)
{
	struct session **pp = &d->sessions;

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
	prec_msgbuf_release(&s->in);
	prec_outq_release(&s->out);
	rec_words_free(s->args);
	rec_words_free(s->next_args);
	free(s->status);
	free(s);
}

/* ---- lookups */

struct session *session_find(struct rec_daemon *d, const char *name)
{
	for (struct session *s = d->sessions; s; s = s->next)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

const char *session_state_name(Perfrec__Control__SessionStatus__State st)
{
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
		&perfrec__control__session_status__state__descriptor, (int)st);

	return v ? v->name : "?";
}

/* ---- answers, handed back to the daemon's loop (daemon_int.h) */

int session_answer(struct rec_daemon *d, uint64_t client, Reply *rp)
{
	struct answer *a;

	if (!client)
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->client = client;
	rp->version = REC_CTL_VERSION;
	if (rec_ctl_pack(&rp->base, REC_CTL_MAX_EVENT, &a->msg, &a->len) < 0)
		a->msg = NULL;   /* the client is closed */
	if (d->answers_last)
		d->answers_last->next = a;
	else
		d->answers = a;
	d->answers_last = a;
	return 0;
}

int session_answer_error(struct rec_daemon *d, uint64_t client, const char *fmt, ...)
{
	Reply rp = PERFREC__CONTROL__REPLY__INIT;
	char msg[REC_LOG_MAX + 256];
	va_list ap;

	if (!client)
		return 0;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rp.error = msg;
	return session_answer(d, client, &rp);
}

int session_answer_status(struct rec_daemon *d, uint64_t client, struct session *s,
			 const char *file)
{
	Reply rp = PERFREC__CONTROL__REPLY__INIT;
	Status st, *one[1], *cached;
	int ret;

	if (!client)
		return 0;
	cached = s ? session_cached_status(s) : NULL;
	rp.ok = true;
	rp.file = (char *)(file ? file : "");
	if (s) {
		session_status(d, s, cached, &st);
		one[0] = &st;
		rp.sessions = one;
		rp.n_sessions = 1;
	}
	ret = session_answer(d, client, &rp);
	if (cached)
		perfrec__control__session_status__free_unpacked(cached, NULL);
	return ret;
}

static int send_request(struct session *s, Perfrec__Control__Request *rq)
{
	rq->version = REC_CTL_VERSION;
	return rec_ctl_queue(&s->out, s->chan, &rq->base, REC_CTL_MAX_EVENT);
}

int session_forward(struct rec_daemon *d, struct session *s, struct client *c,
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
	p->deadline = prec_now_ms() + ANSWER_MS;
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
void session_stop(struct rec_daemon *d, struct session *s, struct client *c)
{
	Perfrec__Control__Request rq = PERFREC__CONTROL__REQUEST__INIT;
	Perfrec__Control__StopRequest sr = PERFREC__CONTROL__STOP_REQUEST__INIT;

	s->stop_wanted = true;
	if (s->state == ST(STARTING) || s->state == ST(RUNNING))
		s->state = ST(STOPPING);
	rq.body_case = PERFREC__CONTROL__REQUEST__BODY_STOP;
	rq.stop = &sr;
	sr.name = s->name;
	if (session_forward(d, s, c, &rq, P_STOP) < 0 && s->pid > 0)
		kill(s->pid, SIGTERM);   /* the channel failed: the signal also stops it cleanly */
}

static void take_status(struct rec_daemon *d, struct session *s, const Status *st,
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
		uint64_t client = s->start_client;

		s->running_seen = true;
		if (s->state == ST(STARTING))
			s->state = ST(RUNNING);
		s->start_client = 0;
		session_answer_status(d, client, s, NULL);
	}
}

/* A Reply from the session's process answers its oldest forwarded
 * request. */
static void take_reply(struct rec_daemon *d, struct session *s, Reply *from)
{
	struct pend *p = s->pend;
	Reply rp = PERFREC__CONTROL__REPLY__INIT;
	Status st, *one[1];

	if (!p)
		return;   /* nothing asked: ignore */
	s->pend = p->next;
	if (p->client) {
		rp.ok = from->ok;
		rp.error = from->error;
		rp.file = from->file;
		session_status(d, s, from->n_sessions ? from->sessions[0] : NULL, &st);
		if (p->kind == P_STOP && from->n_sessions)
			st.state = from->sessions[0]->state;   /* stopped: files finished */
		one[0] = &st;
		rp.sessions = one;
		rp.n_sessions = 1;
		session_answer(d, p->client, &rp);
	}
	free(p);
}

static void take_event(struct rec_daemon *d, struct session *s, const unsigned char *m,
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
bool session_read_chan(struct rec_daemon *d, struct session *s)
{
	for (;;) {
		const unsigned char *m;
		size_t room, n;
		void *p = prec_msgbuf_space(&s->in, &room);
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
		prec_msgbuf_commit(&s->in, (size_t)k);
		while ((ret = prec_msgbuf_next(&s->in, &m, &n)) > 0)
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
static void sess_exited(struct rec_daemon *d, struct session *s, int status)
{
	bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	uint64_t now = prec_now_ms();
	char how[96];
	Status *cached;

	if (s->chan >= 0) {
		session_read_chan(d, s);   /* its last words: final status, stop reply */
		close(s->chan);
		s->chan = -1;
	}
	s->pid = -1;
	exit_words(status, how, sizeof(how));
	cached = session_cached_status(s);
	if (cached && cached->stop_reason && cached->stop_reason[0] && !s->stop_reason[0])
		snprintf(s->stop_reason, sizeof(s->stop_reason), "%s", cached->stop_reason);
	/* requests it did not answer */
	while (s->pend) {
		struct pend *p = s->pend;

		s->pend = p->next;
		if (p->client && p->kind == P_STOP && s->stop_wanted) {
			s->state = ST(STOPPED);
			/* the file it last said it was writing */
			session_answer_status(d, p->client, s, cached ? cached->current_file : NULL);
		} else {
			session_answer_error(d, p->client, "session %s ended before answering (%s)%s%s", s->name,
				    how, s->last_error[0] ? ": " : "", s->last_error);
		}
		free(p);
	}
	if (cached)
		perfrec__control__session_status__free_unpacked(cached, NULL);
	if (s->start_client) {
		uint64_t client = s->start_client;

		s->start_client = 0;
		session_answer_error(d, client, "%s", s->errors[0] ? s->errors :
				    clean ? "the session ended before it started recording" : how);
		if (!strcmp(s->origin, "ctl") && !s->running_seen) {
			rec_log(REC_LOG_INFO, "session %s: could not start (%s)", s->name, how);
			session_free(d, s);
			return;
		}
	}
	if (d->stopping || s->remove_after) {
		rec_log(REC_LOG_INFO, "session %s: ended (%s)", s->name, how);
		session_free(d, s);
		return;
	}
	if (s->next_args) {
		/* its file changed: the new arguments run now */
		rec_words_free(s->args);
		s->args = s->next_args;
		s->nargs = s->next_nargs;
		s->next_args = NULL;
		memcpy(s->stem, s->next_stem, sizeof(s->stem));
		s->next_stem[0] = '\0';
		s->backoff = 0;
		rec_log(REC_LOG_INFO, "session %s: restarting with the changed %s", s->name,
			s->origin);
		session_launch(d, s);
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

void session_reap(struct rec_daemon *d)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (struct session *s = d->sessions; s; s = s->next) {
			if (s->pid == pid) {
				sess_exited(d, s, status);
				break;
			}
		}
	}
}

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
int session_check_args(struct rec_daemon *d, const char *name, char **args, int nargs,
		     bool trusted, char *stem, char *why, size_t len)
{
	struct capture cap;
	int ret;

	stem[0] = '\0';
	capture_begin(&cap, why, len);
	ret = d->o.check(d->o.ctx, name, nargs, args, trusted, stem, PATH_MAX);
	capture_end(&cap);
	if (ret < 0 && !why[0])
		snprintf(why, len, "bad session arguments: %s", strerror(-ret));
	return ret;
}

/* Does a session in the table hold stem: it runs, or will run again? */
static struct session *stem_holder(struct rec_daemon *d, const char *name, const char *stem)
{
	for (struct session *s = d->sessions; s; s = s->next) {
		bool live = s->pid > 0 || s->state == ST(BACKOFF) || s->state == ST(STARTING);

		if (strcmp(s->name, name) && live &&
		    (!strcmp(s->stem, stem) || !strcmp(s->next_stem, stem)))
			return s;
	}
	return NULL;
}

/* The first file of m still on disk, of stem (NULL: any stem). */
static const struct rec_manifest_file *live_file(const struct rec_manifest *m,
						 const char *stem)
{
	for (size_t i = 0; i < m->n; i++)
		if ((!stem || !strcmp(m->files[i].stem, stem)) &&
		    rec_manifest_live(&m->files[i]))
			return &m->files[i];
	return NULL;
}

int session_check_stem(struct rec_daemon *d, const char *name, const char *stem,
		     uid_t uid, bool trusted, char *why, size_t len)
{
	struct rec_manifest m;
	struct session *o;
	struct dirent *de;
	DIR *dir;
	int fd, ret = 0;

	if (!stem[0])
		return 0;
	o = stem_holder(d, name, stem);
	if (o) {
		snprintf(why, len, "the output %s.* is session %s's (%s, from %s): two "
			 "sessions never share files; give -o another name", stem, o->name,
			 session_state_name(o->state), o->origin);
		return -EEXIST;
	}
	if (d->mfd < 0)
		return 0;
	/* the same name by another uid: its earlier files are not this one's */
	if (!trusted && rec_manifest_load(d->mfd, name, &m) == 0) {
		const struct rec_manifest_file *f = live_file(&m, NULL);

		if (f && m.owner_uid != (uint32_t)uid) {
			snprintf(why, len, "session %s's earlier files (%s ...) were made by "
				 "uid %u: start it under another name, or ask root", name,
				 f->path, (unsigned)m.owner_uid);
			ret = -EEXIST;
		}
		rec_manifest_release(&m);
		if (ret < 0)
			return ret;
	}
	fd = dup(d->mfd);
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		snprintf(why, len, "cannot read the manifests of the sessions' files: %s",
			 strerror(errno));
		return -EIO;   /* no way to tell whose files are there: refuse */
	}
	rewinddir(dir);
	while (!ret && (de = readdir(dir))) {
		size_t n = strlen(de->d_name), k = strlen(REC_MANIFEST_SUFFIX);
		char other[65];
		const struct rec_manifest_file *f;

		if (n <= k || n - k >= sizeof(other) || strcmp(de->d_name + n - k,
								REC_MANIFEST_SUFFIX))
			continue;
		memcpy(other, de->d_name, n - k);
		other[n - k] = '\0';
		if (!strcmp(other, name) || rec_manifest_load(d->mfd, other, &m) < 0)
			continue;   /* ours, or not a manifest (never trusted) */
		f = live_file(&m, stem);
		if (f) {
			snprintf(why, len, "the output %s.* holds files of session %s (%s ...): "
				 "two sessions never share files; give -o another name (or "
				 "remove those files)", stem, other, f->path);
			ret = -EEXIST;
		}
		rec_manifest_release(&m);
	}
	closedir(dir);
	return ret;
}

/* One session file: new, changed or the same. */
static void scan_file(struct rec_daemon *d, const char *path, const char *name)
{
	struct session *s = session_find(d, name);
	char why[REC_LOG_MAX * 2], stem[PATH_MAX];
	char **args;
	int nargs, ret;
	struct capture cap;

	capture_begin(&cap, why, sizeof(why));
	ret = rec_session_file_read(path, &args, &nargs);
	capture_end(&cap);
	if (ret == -ENOENT)
		return;   /* gone since the directory was read */
	if (ret < 0) {
		if (!why[0])
			snprintf(why, sizeof(why), "%.1024s: %s", path, strerror(-ret));
		rec_log(REC_LOG_ERROR, "%s", why);
		if (!s && d->nsessions < MAX_SESSIONS) {
			/* listed, so status shows why it does not run */
			args = calloc(1, sizeof(*args));
			s = args ? session_new(d, name, path, args, 0, true, 0, "") : NULL;
			if (!s) {
				free(args);
				return;
			}
			s->state = ST(INVALID);
		}
		if (s && !strcmp(s->origin, path)) {
			s->state = s->pid > 0 ? s->state : ST(INVALID);
			daemon_set_str(s->last_error, sizeof(s->last_error), why);
		}
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
	ret = session_check_args(d, name, args, nargs, true, stem, why, sizeof(why));
	if (!ret)
		ret = session_check_stem(d, name, stem, 0, true, why, sizeof(why));
	if (!s) {
		if (d->nsessions >= MAX_SESSIONS) {
			rec_log(REC_LOG_ERROR, "%s: too many sessions (%d)", path, MAX_SESSIONS);
			rec_words_free(args);
			return;
		}
		s = session_new(d, name, path, args, nargs, true, 0, ret < 0 ? "" : stem);
		if (!s) {
			rec_words_free(args);
			return;
		}
	} else if (s->pid > 0) {
		/* changed while running: stop it, the new arguments follow */
		rec_words_free(s->next_args);
		s->next_args = ret < 0 ? NULL : args;
		s->next_nargs = nargs;
		if (ret == 0)
			daemon_set_str(s->next_stem, sizeof(s->next_stem), stem);
		if (ret < 0)
			rec_words_free(args);
		rec_log(REC_LOG_INFO, "session %s: %s changed", name, path);
		if (ret < 0) {
			daemon_set_str(s->last_error, sizeof(s->last_error), why);
			rec_log(REC_LOG_ERROR, "%s: %s (the session keeps running with the "
				"previous file)", path, why);
			return;
		}
		session_stop(d, s, NULL);
		return;
	} else {
		rec_words_free(s->args);
		s->args = args;
		s->nargs = nargs;
		s->backoff = 0;
		daemon_set_str(s->stem, sizeof(s->stem), ret < 0 ? "" : stem);
	}
	if (ret < 0) {
		s->state = ST(INVALID);
		daemon_set_str(s->last_error, sizeof(s->last_error), why);
		rec_log(REC_LOG_ERROR, "session %s (%s): %s", name, path, why);
		return;
	}
	s->last_error[0] = '\0';
	session_launch(d, s);
}

void session_scan_config(struct rec_daemon *d)
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
	for (struct session *s = d->sessions, *next; s; s = next) {
		next = s->next;
		if (!strcmp(s->origin, "ctl") || access(s->origin, F_OK) == 0)
			continue;
		rec_log(REC_LOG_INFO, "session %s: %s removed", s->name, s->origin);
		if (s->pid > 0) {
			s->remove_after = true;
			session_stop(d, s, NULL);
		} else {
			session_free(d, s);
		}
	}
}
