/*
 * child.c - the session process's loop; see child.h.
 *
 * One thread drives the session and the channel; log messages may also
 * come from a stream's finishing thread, so writes to the channel hold a
 * lock. The channel is blocking: messages are small and the daemon reads
 * them at once.
 */
#include "recorder/daemon/session_proc.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/base/clock.h"
#include "format/base/opts.h"
#include "recorder/daemon/ctlmsg.h"
#include "recorder/log.h"
#include "recorder/net/wire.h"

#define STATUS_EVERY_NS 500000000ull
#define LOOP_MS 100

struct rec_session_proc {
	int chan;
	struct rec_session_proc_opts o;
	struct rec_session_run *s;
	pthread_mutex_t lock;            /* channel writes */
	rec_print_fn prev;
	void *prev_ctx;
	char last_error[REC_LOG_MAX];    /* for a failed request's reply */
	bool chan_broken;
};

static void send_event(struct rec_session_proc *c, Perfrec__Control__SessionEvent *ev)
{
	pthread_mutex_lock(&c->lock);
	if (!c->chan_broken && rec_ctl_send(c->chan, &ev->base, REC_CTL_MAX_EVENT) < 0)
		c->chan_broken = true;   /* the daemon is gone: the loop sees EOF */
	pthread_mutex_unlock(&c->lock);
}

static void forward(enum rec_log_level level, const char *msg, void *ctx)
{
	struct rec_session_proc *c = ctx;

	if (level <= REC_LOG_WARN) {
		Perfrec__Control__SessionEvent ev = PERFREC__CONTROL__SESSION_EVENT__INIT;
		Perfrec__Control__LogMessage lm = PERFREC__CONTROL__LOG_MESSAGE__INIT;

		lm.level = (uint32_t)level;
		lm.text = (char *)msg;
		ev.body_case = PERFREC__CONTROL__SESSION_EVENT__BODY_LOG;
		ev.log = &lm;
		send_event(c, &ev);
		if (level == REC_LOG_ERROR) {
			pthread_mutex_lock(&c->lock);
			snprintf(c->last_error, sizeof(c->last_error), "%s", msg);
			pthread_mutex_unlock(&c->lock);
		}
	}
	if (c->prev)
		c->prev(level, msg, c->prev_ctx);
}

/* ---- status */

struct status_buf {
	Perfrec__Control__SessionStatus st;
	Perfrec__Control__FlightStatus fl;
	Perfrec__Control__CpuCounts *cpu;
	Perfrec__Control__CpuCounts **cpup;
};

static int status_fill(struct rec_session_proc *c, Perfrec__Control__SessionStatus__State state,
		       struct status_buf *b)
{
	struct rec_session_run_status ss;
	Perfrec__Control__SessionStatus *st = &b->st;

	perfrec__control__session_status__init(st);
	perfrec__control__flight_status__init(&b->fl);
	b->cpu = NULL;
	b->cpup = NULL;
	st->state = state;
	st->events = (char **)c->o.events;
	st->n_events = c->o.nevents;
	st->pid = (int32_t)getpid();
	if (!c->s)
		return 0;
	rec_session_run_status(c->s, &ss);
	st->target = (char *)ss.target;
	st->uptime_ns = ss.rs.elapsed_ns;
	st->records = ss.rs.st.records;
	st->lost = ss.rs.st.lost;
	st->samples = ss.rs.st.samples;
	st->switches = ss.rs.st.switches;
	st->bytes_written = ss.rs.bytes_written;
	st->bytes_raw = ss.rs.bytes_raw;
	st->current_file = (char *)ss.current_file;
	st->outputs = ss.rs.outputs;
	st->to = (char *)ss.to;
	st->stop_reason = (char *)ss.rs.stop_reason;
	if (ss.flight) {
		b->fl.size = ss.fl.max_bytes;
		b->fl.held_bytes = ss.fl.held_bytes;
		b->fl.frames = ss.fl.frames;
		b->fl.dropped_frames = ss.fl.dropped_frames;
		b->fl.dropped_bytes = ss.fl.dropped_bytes;
		b->fl.dropped_packets = ss.fl.dropped_packets;
		b->fl.snapshots = ss.snapshots;
		st->flight = &b->fl;
	}
	if (ss.rs.nrings && ss.rs.cpu) {
		b->cpu = calloc(ss.rs.nrings, sizeof(*b->cpu));
		b->cpup = calloc(ss.rs.nrings, sizeof(*b->cpup));
		if (!b->cpu || !b->cpup)
			return -ENOMEM;
		for (size_t i = 0; i < ss.rs.nrings; i++) {
			int cpu = ss.rs.ring_cpu[i];

			perfrec__control__cpu_counts__init(&b->cpu[i]);
			b->cpu[i].cpu = cpu;
			b->cpu[i].records = ss.rs.cpu[cpu].records;
			b->cpu[i].lost = ss.rs.cpu[cpu].lost;
			b->cpup[i] = &b->cpu[i];
		}
		st->cpus = b->cpup;
		st->n_cpus = ss.rs.nrings;
	}
	return 0;
}

static void status_release(struct status_buf *b)
{
	free(b->cpu);
	free(b->cpup);
}

static void send_status(struct rec_session_proc *c, Perfrec__Control__SessionStatus__State state)
{
	Perfrec__Control__SessionEvent ev = PERFREC__CONTROL__SESSION_EVENT__INIT;
	struct status_buf b;

	if (status_fill(c, state, &b) == 0) {
		ev.body_case = PERFREC__CONTROL__SESSION_EVENT__BODY_STATUS;
		ev.status = &b.st;
		send_event(c, &ev);
	}
	status_release(&b);
}

/* One Reply: ok, or the last error logged; with the status when asked. */
static void send_reply(struct rec_session_proc *c, int ret, const char *file,
		       const Perfrec__Control__SessionStatus__State *state)
{
	Perfrec__Control__SessionEvent ev = PERFREC__CONTROL__SESSION_EVENT__INIT;
	Perfrec__Control__Reply rp = PERFREC__CONTROL__REPLY__INIT;
	Perfrec__Control__SessionStatus *one[1];
	struct status_buf b = { .cpu = NULL, .cpup = NULL };
	char err[REC_LOG_MAX];

	rp.version = REC_CTL_VERSION;
	rp.ok = ret >= 0;
	if (ret < 0) {
		pthread_mutex_lock(&c->lock);
		snprintf(err, sizeof(err), "%s", c->last_error[0] ? c->last_error :
			 strerror(-ret));
		pthread_mutex_unlock(&c->lock);
		rp.error = err;
	}
	if (file && file[0])
		rp.file = (char *)file;
	if (state && status_fill(c, *state, &b) == 0) {
		one[0] = &b.st;
		rp.sessions = one;
		rp.n_sessions = 1;
	}
	ev.body_case = PERFREC__CONTROL__SESSION_EVENT__BODY_REPLY;
	ev.reply = &rp;
	send_event(c, &ev);
	status_release(&b);
}

/* ---- requests */

enum { GO_ON, STOP_ASKED };

static int handle(struct rec_session_proc *c, const unsigned char *msg, size_t len)
{
	static const Perfrec__Control__SessionStatus__State running =
		PERFREC__CONTROL__SESSION_STATUS__STATE__RUNNING;
	Perfrec__Control__Request *rq;
	char why[256], file[PATH_MAX] = "";
	int ret, what = GO_ON;

	c->last_error[0] = '\0';
	rq = rec_ctl_request_decode(msg, len, why, sizeof(why));
	if (!rq) {
		rec_log(REC_LOG_ERROR, "session: %s", why);
		send_reply(c, -EBADMSG, NULL, NULL);
		return GO_ON;
	}
	switch (rq->body_case) {
	case PERFREC__CONTROL__REQUEST__BODY_STOP:
		what = STOP_ASKED;   /* answered once the files are finished */
		break;
	case PERFREC__CONTROL__REQUEST__BODY_STATUS:
		send_reply(c, 0, NULL, &running);
		break;
	case PERFREC__CONTROL__REQUEST__BODY_ROTATE:
		ret = rec_session_run_rotate(c->s, file, sizeof(file));
		send_reply(c, ret, file, &running);
		send_status(c, running);
		break;
	case PERFREC__CONTROL__REQUEST__BODY_SNAPSHOT:
		ret = rec_session_run_snapshot(c->s, rq->snapshot->output && rq->snapshot->output[0] ?
					   rq->snapshot->output : NULL, file, sizeof(file));
		send_reply(c, ret, file, &running);
		send_status(c, running);
		break;
	default:
		rec_log(REC_LOG_ERROR, "a session does not take %s requests",
			rec_ctl_request_name(rq));
		send_reply(c, -EINVAL, NULL, NULL);
		break;
	}
	rec_ctl_request_free(rq);
	return what;
}

/* Reads what the channel holds: GO_ON, STOP_ASKED, or -ECONNRESET when
 * the daemon's end closed. */
static int read_channel(struct rec_session_proc *c, struct prec_msgbuf *in)
{
	const unsigned char *m;
	size_t room, n;
	void *p = prec_msgbuf_space(in, &room);
	ssize_t k;
	int ret, what = GO_ON;

	if (!p)
		return -ENOMEM;
	k = read(c->chan, p, room);
	if (k < 0)
		return errno == EINTR || errno == EAGAIN ? GO_ON : -errno;
	if (k == 0)
		return -ECONNRESET;
	prec_msgbuf_commit(in, (size_t)k);
	while ((ret = prec_msgbuf_next(in, &m, &n)) > 0)
		if (handle(c, m, n) == STOP_ASKED)
			what = STOP_ASKED;
	return ret < 0 ? ret : what;
}

struct rec_session_proc *rec_session_proc_new(int chan)
{
	struct rec_session_proc *c = calloc(1, sizeof(*c));

	if (!c) {
		close(chan);
		errno = ENOMEM;
		return NULL;
	}
	c->chan = chan;
	pthread_mutex_init(&c->lock, NULL);
	c->prev = rec_log_set_print(forward, c, &c->prev_ctx);
	return c;
}

void rec_session_proc_free(struct rec_session_proc *c)
{
	if (!c)
		return;
	rec_log_set_print(c->prev, c->prev_ctx, NULL);
	close(c->chan);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int rec_session_proc_run(struct rec_session_proc *c, const struct rec_session_proc_opts *opts)
{
	struct prec_msgbuf in;
	uint64_t next_status = 0;
	const char *reason = "stopped";
	bool stop_asked = false, finished = false;
	int ret, code = 1;

	if (prec_opts_copy(&c->o, sizeof(c->o), opts) < 0 || !c->o.run) {
		rec_log(REC_LOG_ERROR, "session process: bad options");
		return 1;
	}
	prec_msgbuf_init(&in, REC_CTL_MAX_MSG);
	ret = rec_session_run_new(c->o.run, &c->s);
	if (ret < 0)
		goto out;
	ret = rec_session_run_start(c->s);
	if (ret < 0)
		goto out;
	for (;;) {
		struct pollfd pfd[2] = {
			{ c->chan, POLLIN, 0 },
			{ rec_session_run_pollfd(c->s), POLLIN, 0 },
		};
		uint64_t now = prec_now_ns();

		if (now >= next_status) {
			send_status(c, PERFREC__CONTROL__SESSION_STATUS__STATE__RUNNING);
			next_status = now + STATUS_EVERY_NS;
		}
		if (c->o.stop && *c->o.stop) {
			reason = "signal";
			break;
		}
		if (poll(pfd, 2, LOOP_MS) > 0 && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			ret = read_channel(c, &in);
			if (ret == -ECONNRESET || (ret < 0 && ret != -ENOMEM)) {
				reason = "the daemon went away";
				break;
			}
			if (ret == STOP_ASKED) {
				stop_asked = true;
				reason = "stopped by request";
				break;
			}
		}
		ret = rec_session_run_step(c->s, 0);
		if (ret == 0) {
			finished = true;   /* -d elapsed, targets exited */
			break;
		}
		if (ret < 0)
			goto out;
	}
	send_status(c, PERFREC__CONTROL__SESSION_STATUS__STATE__STOPPING);
	ret = rec_session_run_stop(c->s, reason);
	{
		Perfrec__Control__SessionStatus__State end = finished ?
			PERFREC__CONTROL__SESSION_STATUS__STATE__FINISHED :
			PERFREC__CONTROL__SESSION_STATUS__STATE__STOPPED;

		send_status(c, end);
		if (stop_asked)   /* with the file (or stream) it finished */
			send_reply(c, ret, rec_session_run_output_name(c->s), &end);
	}
	code = ret < 0 ? 1 : 0;
out:
	rec_session_run_free(c->s);
	c->s = NULL;
	prec_msgbuf_release(&in);
	return code;
}
