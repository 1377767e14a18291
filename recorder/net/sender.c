/*
 * sender.c - records to a collector, resent until acknowledged; see
 * sender.h.
 *
 * The spool is a list of records in seq order: the writer's thread
 * appends at the tail (under the lock); the sender's thread sends from
 * `next` and frees from the head as acks arrive. A record's bytes never
 * change once queued, so the thread writes them without the lock.
 */
#include "recorder/net/sender.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "format/base/clock.h"
#include "format/base/opts.h"
#include "format/record.h"
#include "recorder/log.h"
#include "recorder/net/conn.h"
#include "recorder/net/wire.h"

#ifndef PERFREC_VERSION
#define PERFREC_VERSION "0"
#endif

#define SPOOL_DEFAULT (64ull << 20)
#define PING_MS 10000
#define BACKOFF_MIN_MS 100
#define STREAM_ID_BYTES 16
/* The longest refusal reason the log gets (a collector's text). */
#define REASON_MAX 200

struct entry {
	struct entry *next;
	uint64_t seq;
	size_t len;
	bool sent;                  /* went out on some connection */
	unsigned char data[];
};

struct rec_sender {
	struct rec_sender_opts o;    /* strings below are our copies */
	char to[256], host[65], session[65], boot_id[64];
	uint8_t stream_id[STREAM_ID_BYTES];   /* this recording, in every hello */
	char addr[8][128];           /* the collectors of `to`, tried in turn */
	int naddr, cur;
	unsigned char *token;
	struct prec_sink sink;

	pthread_mutex_t lock;
	pthread_cond_t cond;         /* acks arrived / the thread ended */
	struct entry *head, *tail;   /* unacknowledged, seq order */
	uint64_t last_seq;           /* seq of the newest queued record */
	uint64_t acked_seq;          /* <= sent_seq: never what was not sent */
	uint64_t sent_seq;           /* the highest seq written whole to any
				      * connection: what a collector can hold
				      * (the sender's thread only) */
	bool finishing, finished, stop, lost_records;
	bool refused;                /* a definitive refusal ended the stream */
	bool answered;               /* a first connection attempt ended */
	bool reached;                /* a connection reached the collector */
	uint64_t frame_bytes;        /* what the hello tells */
	bool adapts;                 /* not fixed yet (the hello says so) */
	uint64_t max_frame;          /* the last Welcome's limit, 0 = none */
	char refusal[REASON_MAX + 64];   /* its reason */
	struct rec_sender_stats st;
	struct rec_sender_drops drops;

	int wakefd;
	pthread_t th;
	bool started;
	unsigned seed;
};


static void wake(struct rec_sender *s)
{
	uint64_t one = 1;

	if (write(s->wakefd, &one, sizeof(one)) < 0) {
		/* already pending */
	}
}

/* ---- the sink side (the writer's thread) */

static int queue_record(struct rec_sender *s, const unsigned char *b, size_t n,
			const struct prec_record *rec)
{
	struct entry *e;

	pthread_mutex_lock(&s->lock);
	if (s->refused) {
		/* the stream has ended: the recording goes on without it */
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	if (rec->kind == PREC_RECORD_INDEX && s->lost_records) {
		/* its offsets count records the collector never got */
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	if (rec->kind != PREC_RECORD_HEADER &&
	    s->st.spool_used + n > s->o.spool_bytes) {
		s->st.dropped++;
		s->st.dropped_bytes += n;
		s->drops.records++;
		s->drops.bytes += n;
		if (rec->kind == PREC_RECORD_FRAME) {
			s->drops.packets += rec->info.packets;
			if (rec->info.t_min && (!s->drops.t_min || rec->info.t_min < s->drops.t_min))
				s->drops.t_min = rec->info.t_min;
			if (rec->info.t_max > s->drops.t_max)
				s->drops.t_max = rec->info.t_max;
		}
		s->lost_records = true;
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	pthread_mutex_unlock(&s->lock);
	e = malloc(sizeof(*e) + n);
	if (!e)
		return -ENOMEM;
	memcpy(e->data, b, n);
	e->len = n;
	e->sent = false;
	e->next = NULL;
	pthread_mutex_lock(&s->lock);
	if (s->refused) {
		pthread_mutex_unlock(&s->lock);
		free(e);
		return 0;
	}
	e->seq = ++s->last_seq;
	if (s->tail)
		s->tail->next = e;
	else
		s->head = e;
	s->tail = e;
	s->st.records++;
	s->st.bytes += n;
	s->st.spool_used += n;
	if (s->st.spool_used > s->st.spool_peak)
		s->st.spool_peak = s->st.spool_used;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static int sink_write(struct prec_sink *sink, const void *buf, size_t n)
{
	struct rec_sender *s = sink->priv;
	const unsigned char *b = buf;
	size_t off = 0;
	int ret = 0;

	/* the writer hands over whole records (one per write); split anyway */
	while (off < n) {
		struct prec_record rec;

		if (prec_record_scan(b + off, n - off, 0, &rec) != 1) {
			rec_log(REC_LOG_ERROR, "stream: the writer produced bytes that are "
				"not a whole record (a bug): %zu bytes not sent", n - off);
			return -EINVAL;
		}
		ret = queue_record(s, b + off, rec.len, &rec);
		if (ret < 0)
			return ret;
		off += rec.len;
	}
	wake(s);
	return 0;
}

static const struct prec_sink_ops sender_sink_ops = {
	.write = sink_write,
	.sync = NULL,       /* durability is the collector's ack */
	.destroy = NULL,
};

/* ---- the connection (the sender's thread) */

struct link {
	struct rec_conn io;
	struct prec_msgbuf in;
	bool open, welcomed, finish_sent;
	bool acked;                  /* an Ack took records off the spool */
	struct entry *next;          /* the record being sent, or NULL */
	uint64_t sent_seq;           /* last record fully written on this link */
	size_t hdr_len, hdr_pos, data_pos;   /* progress within `next` */
	unsigned char hdr[REC_WIRE_FRAME_HDR_MAX];
	unsigned char *ctl;          /* a control message being sent */
	size_t ctl_len, ctl_pos;
	uint64_t last_io;
};

static void set_error(struct rec_sender *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_error(struct rec_sender *s, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&s->lock);
	/* say it once per distinct failure, not once per retry */
	if (strcmp(msg, s->st.last_error))
		rec_log(REC_LOG_WARN, "stream to %s: %s", s->o.to, msg);
	snprintf(s->st.last_error, sizeof(s->st.last_error), "%s", msg);
	pthread_mutex_unlock(&s->lock);
}

static void link_close(struct rec_sender *s, struct link *l)
{
	if (l->open)
		rec_conn_release(&l->io);
	prec_msgbuf_release(&l->in);
	free(l->ctl);
	memset(l, 0, sizeof(*l));
	pthread_mutex_lock(&s->lock);
	s->st.connected = false;
	pthread_mutex_unlock(&s->lock);
}

/* A non-blocking TCP connection to the current collector address within
 * the timeout; a failure moves on to the next address. */
static int tcp_connect(struct rec_sender *s, char *server, size_t slen)
{
	char host[256], *colon;
	struct addrinfo hints, *ai, *p;
	int ret, fd = -1;
	uint32_t tmo = s->o.connect_timeout_ms ? s->o.connect_timeout_ms : 5000;

	snprintf(host, sizeof(host), "%s", s->addr[s->cur]);
	s->cur = (s->cur + 1) % s->naddr;   /* the next attempt tries the next */
	colon = strrchr(host, ':');
	if (!colon)
		return -EINVAL;
	*colon = '\0';
	if (host[0] == '[' && colon[-1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	snprintf(server, slen, "%s", host);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	ret = getaddrinfo(host, colon + 1, &hints, &ai);
	if (ret) {
		set_error(s, "cannot resolve %s: %s", host, gai_strerror(ret));
		return -EHOSTUNREACH;
	}
	ret = -ECONNREFUSED;
	for (p = ai; p; p = p->ai_next) {
		struct pollfd pfd;
		int err = 0, one = 1;
		socklen_t el = sizeof(err);

		fd = socket(p->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(fd, p->ai_addr, p->ai_addrlen) < 0 && errno != EINPROGRESS) {
			ret = -errno;
			close(fd);
			fd = -1;
			continue;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, (int)tmo) <= 0) {
			ret = -ETIMEDOUT;
			close(fd);
			fd = -1;
			continue;
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) {
			ret = -err;
			close(fd);
			fd = -1;
			continue;
		}
		break;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		set_error(s, "cannot connect to %s:%s: %s", host, colon + 1, strerror(-ret));
	else
		s->cur = (s->cur + s->naddr - 1) % s->naddr;   /* stay while it works */
	return fd >= 0 ? fd : ret;
}

static int send_ctl(struct link *l, const Perfrec__Control__StreamMessage *m)
{
	free(l->ctl);
	l->ctl = NULL;
	l->ctl_pos = 0;
	return rec_wire_pack(m, &l->ctl, &l->ctl_len);
}

static int link_open(struct rec_sender *s, struct link *l)
{
	Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
	Perfrec__Control__Hello h = PERFREC__CONTROL__HELLO__INIT;
	char server[256];
	int fd = tcp_connect(s, server, sizeof(server)), ret;

	if (fd < 0)
		return fd;
	memset(l, 0, sizeof(*l));
	ret = rec_conn_init(&l->io, fd, s->o.tls, server);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	l->open = true;
	prec_msgbuf_init(&l->in, REC_WIRE_MAX_SMALL);
	pthread_mutex_lock(&s->lock);
	if (!s->reached) {
		s->reached = true;
		pthread_cond_broadcast(&s->cond);   /* rec_sender_frame_size() */
	}
	pthread_mutex_unlock(&s->lock);
	h.version = REC_WIRE_VERSION;
	h.host = s->host;
	h.boot_id = s->boot_id;
	h.session_id = s->session;
	h.recorder_version = (char *)"perfrec " PERFREC_VERSION;
	h.stream_id.data = s->stream_id;
	h.stream_id.len = sizeof(s->stream_id);
	pthread_mutex_lock(&s->lock);
	h.frame_bytes = s->frame_bytes;
	h.frame_adapts = s->adapts;
	h.resend_from = s->acked_seq + 1;
	pthread_mutex_unlock(&s->lock);
	if (s->o.token) {
		h.token.data = (uint8_t *)s->o.token;
		h.token.len = s->o.token_len;
	}
	m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_HELLO;
	m.hello = &h;
	l->last_io = prec_now_ms();
	return send_ctl(l, &m);
}

/* Frees every record up to seq (acknowledged; seq <= s->sent_seq).
 * Returns whether it acknowledged records not acknowledged before. */
static bool take_ack(struct rec_sender *s, uint64_t seq)
{
	bool progress;

	pthread_mutex_lock(&s->lock);
	progress = seq > s->acked_seq;
	while (s->head && s->head->seq <= seq) {
		struct entry *e = s->head;

		s->head = e->next;
		if (!s->head)
			s->tail = NULL;
		s->st.acked++;
		s->st.acked_bytes += e->len;
		s->st.spool_used -= e->len;
		free(e);
	}
	if (seq > s->acked_seq)
		s->acked_seq = seq;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return progress;
}

/* The first record at or after seq, or NULL. */
static struct entry *record_from(struct rec_sender *s, uint64_t seq)
{
	struct entry *e;

	pthread_mutex_lock(&s->lock);
	for (e = s->head; e && e->seq < seq; e = e->next)
		;
	pthread_mutex_unlock(&s->lock);
	return e;
}

/* A collector that says it holds records this sender never sent (what
 * a second recording under the same host and session would be told): a
 * protocol error, never taken as an acknowledgement. */
static bool beyond_sent(struct rec_sender *s, const char *what, uint64_t seq)
{
	if (seq <= s->sent_seq)
		return false;
	set_error(s, "the collector's %s says it holds record %llu, but this recorder "
		  "sent records up to %llu only (a protocol error: does another "
		  "recording stream as %s/%s?)", what, (unsigned long long)seq,
		  (unsigned long long)s->sent_seq, s->host, s->session);
	return true;
}

/* A refusal no reconnect can change: the thread stops, the spool is
 * freed and the sink takes no more records. */
static void end_stream(struct rec_sender *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void end_stream(struct rec_sender *s, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&s->lock);
	va_start(ap, fmt);
	vsnprintf(s->refusal, sizeof(s->refusal), fmt, ap);
	va_end(ap);
	s->refused = true;
	while (s->head) {
		struct entry *e = s->head;

		s->head = e->next;
		free(e);
	}
	s->tail = NULL;
	s->st.spool_used = 0;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* The first answer of the collector came (rec_sender_frame_size()
 * waits for it). */
static void answered(struct rec_sender *s)
{
	pthread_mutex_lock(&s->lock);
	if (!s->answered) {
		s->answered = true;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
}

/* A Welcome's frame limit (0: not said) against the frame size: false
 * when the frames already cut cannot be forwarded (the stream ends). */
static bool welcome_frames(struct rec_sender *s, uint64_t max_frame)
{
	uint64_t fb;
	bool adapts;

	pthread_mutex_lock(&s->lock);
	s->max_frame = max_frame;
	fb = s->frame_bytes;
	adapts = s->adapts;
	pthread_mutex_unlock(&s->lock);
	if (!max_frame || adapts || fb <= max_frame)
		return true;
	end_stream(s, "the collector forwards frames of at most %llu bytes, and this "
		   "recording's are %llu: record with --frame-size %lluk or less",
		   (unsigned long long)max_frame, (unsigned long long)fb,
		   (unsigned long long)(max_frame >> 10));
	set_error(s, "%s", s->refusal);
	return false;
}

/* One message from the collector. false: close the link. */
static bool on_message(struct rec_sender *s, struct link *l,
		       const unsigned char *msg, size_t len)
{
	Perfrec__Control__StreamMessage *m = rec_wire_unpack(msg, len);
	bool ok = true;

	if (!m) {
		set_error(s, "the collector sent garbage");
		return false;
	}
	switch (m->body_case) {
	case PERFREC__CONTROL__STREAM_MESSAGE__BODY_WELCOME:
		if (l->welcomed || m->welcome->version != REC_WIRE_VERSION) {
			set_error(s, "unexpected welcome (collector protocol version %u, "
				  "ours %u)", m->welcome->version, REC_WIRE_VERSION);
			ok = false;
			break;
		}
		if (!m->welcome->next_seq) {
			set_error(s, "the collector's welcome names record 0 (a protocol "
				  "error: records count from 1)");
			ok = false;
			break;
		}
		if (beyond_sent(s, "welcome", m->welcome->next_seq - 1)) {
			ok = false;
			break;
		}
		if (!welcome_frames(s, m->welcome->max_frame_bytes)) {
			ok = false;
			break;
		}
		l->welcomed = true;
		/* below next_seq the collector has it all */
		if (m->welcome->next_seq > 1)
			take_ack(s, m->welcome->next_seq - 1);
		l->sent_seq = m->welcome->next_seq - 1;
		l->next = NULL;
		pthread_mutex_lock(&s->lock);
		s->st.connects++;
		s->st.connected = true;
		pthread_mutex_unlock(&s->lock);
		answered(s);
		rec_log(REC_LOG_INFO, "stream to %s: session %s/%s, from record %llu",
			s->o.to, s->host, s->session,
			(unsigned long long)m->welcome->next_seq);
		break;
	case PERFREC__CONTROL__STREAM_MESSAGE__BODY_ACK:
		if (!l->welcomed || beyond_sent(s, "ack", m->ack->seq)) {
			if (!l->welcomed)
				set_error(s, "the collector acknowledged records before "
					  "its welcome (a protocol error)");
			ok = false;
			break;
		}
		if (take_ack(s, m->ack->seq))
			l->acked = true;
		break;
	case PERFREC__CONTROL__STREAM_MESSAGE__BODY_REFUSAL:
		set_error(s, "refused by the collector: %.*s", REASON_MAX,
			  m->refusal->reason ? m->refusal->reason : "");
		/* a collector of another protocol version refuses every
		 * reconnect alike, whether or not it says so */
		if (m->refusal->definitive || m->refusal->version != REC_WIRE_VERSION)
			end_stream(s, "refused by the collector: %.*s", REASON_MAX,
				   m->refusal->reason ? m->refusal->reason : "");
		ok = false;
		break;
	case PERFREC__CONTROL__STREAM_MESSAGE__BODY_PING:
		break;
	default:
		set_error(s, "unexpected message %d from the collector", (int)m->body_case);
		ok = false;
		break;
	}
	perfrec__control__stream_message__free_unpacked(m, NULL);
	return ok;
}

/* Writes what is pending: a control message, then records. 0, -EAGAIN or
 * an error. */
static int pump_out(struct rec_sender *s, struct link *l)
{
	for (;;) {
		ssize_t n;

		if (l->ctl) {
			n = rec_conn_write(&l->io, l->ctl + l->ctl_pos, l->ctl_len - l->ctl_pos);
			if (n < 0)
				return (int)n;
			l->ctl_pos += (size_t)n;
			if (l->ctl_pos < l->ctl_len)
				continue;
			free(l->ctl);
			l->ctl = NULL;
			l->last_io = prec_now_ms();
			continue;
		}
		if (!l->welcomed)
			return 0;
		if (!l->next)
			l->next = record_from(s, l->sent_seq + 1);
		if (!l->next)
			return 0;   /* all sent; the writer wakes us for more */
		if (!l->hdr_len) {
			l->hdr_len = rec_wire_frame_header(l->next->seq, l->next->len, l->hdr);
			l->hdr_pos = l->data_pos = 0;
		}
		if (l->hdr_pos < l->hdr_len)
			n = rec_conn_write(&l->io, l->hdr + l->hdr_pos, l->hdr_len - l->hdr_pos);
		else
			n = rec_conn_write(&l->io, l->next->data + l->data_pos,
					   l->next->len - l->data_pos);
		if (n < 0)
			return (int)n;
		if (l->hdr_pos < l->hdr_len)
			l->hdr_pos += (size_t)n;
		else
			l->data_pos += (size_t)n;
		if (l->hdr_pos == l->hdr_len && l->data_pos == l->next->len) {
			struct entry *e = l->next;

			pthread_mutex_lock(&s->lock);
			if (e->sent) {
				s->st.resent++;
			} else {
				e->sent = true;
				s->st.sent++;
				s->st.sent_bytes += e->len;
			}
			pthread_mutex_unlock(&s->lock);
			l->sent_seq = e->seq;
			if (e->seq > s->sent_seq)
				s->sent_seq = e->seq;
			l->next = NULL;
			l->hdr_len = 0;
			l->last_io = prec_now_ms();
		}
	}
}

/* When to connect again after a connection failed or ended: somewhere in
 * [backoff/2, backoff] (full jitter), and the backoff doubles up to its
 * cap. Only records acknowledged bring it back to BACKOFF_MIN_MS (never a
 * welcome alone): a collector that welcomes and then refuses, say with a
 * full disk, is asked ever more rarely, not ten times a second. */
static uint64_t retry_time(struct rec_sender *s, uint64_t *backoff)
{
	uint64_t cap = s->o.backoff_max_ms ? s->o.backoff_max_ms : 5000;
	uint64_t at = prec_now_ms() + *backoff / 2 + (uint64_t)rand_r(&s->seed) % (*backoff / 2 + 1);

	*backoff = *backoff * 2 > cap ? cap : *backoff * 2;
	return at;
}

/* The sender's thread runs these steps in a loop until everything is
 * acknowledged and Finish is written (or stop): connect, send, wait,
 * receive. A step that sent something or dropped the link starts the
 * loop over; a dropped link is retried after the backoff. */

/* A failed link: closed, retried after the backoff. */
static void link_fail(struct rec_sender *s, struct link *l, uint64_t *retry_at,
		      uint64_t *backoff)
{
	answered(s);
	link_close(s, l);
	*retry_at = retry_time(s, backoff);
}

/* Step 1: a link, opened when there is none and the backoff is over.
 * false: none yet. */
static bool step_connect(struct rec_sender *s, struct link *l, uint64_t *retry_at,
			 uint64_t *backoff)
{
	uint64_t now;

	if (l->open)
		return true;
	now = prec_now_ms();
	if (now < *retry_at) {
		struct pollfd pfd = { s->wakefd, POLLIN, 0 };

		poll(&pfd, 1, (int)(*retry_at - now));
		return false;
	}
	if (link_open(s, l) < 0) {
		answered(s);
		*retry_at = retry_time(s, backoff);
		if (l->open)
			link_close(s, l);
		return false;
	}
	return true;
}

/* Finish{last_seq}: every record is sent. */
static void send_finish(struct rec_sender *s, struct link *l)
{
	Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
	Perfrec__Control__Finish f = PERFREC__CONTROL__FINISH__INIT;

	pthread_mutex_lock(&s->lock);
	f.last_seq = s->last_seq;
	pthread_mutex_unlock(&s->lock);
	m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_FINISH;
	m.finish = &f;
	if (send_ctl(l, &m) == 0)
		l->finish_sent = true;
}

static void send_ping(struct link *l)
{
	Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
	Perfrec__Control__Ping p = PERFREC__CONTROL__PING__INIT;

	m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_PING;
	m.ping = &p;
	send_ctl(l, &m);
}

/* Step 2: the TLS handshake, then records, then Finish when finishing,
 * or a ping on an idle link. true: something was sent or the link
 * failed (start over); false: wait, *ret -EAGAIN when the socket is
 * full. */
static bool step_send(struct rec_sender *s, struct link *l, bool finishing,
		      uint64_t *retry_at, uint64_t *backoff, int *ret)
{
	*ret = 0;
	if (!l->io.handshaken) {
		*ret = rec_conn_handshake(&l->io);
		if (*ret < 0 && *ret != -EAGAIN) {
			set_error(s, "TLS handshake failed: %s", *ret == -EPROTO ?
				  rec_conn_error(&l->io) : strerror(-*ret));
			link_fail(s, l, retry_at, backoff);
			return true;
		}
	}
	if (!l->io.handshaken)
		return false;
	*ret = pump_out(s, l);
	if (*ret < 0 && *ret != -EAGAIN) {
		set_error(s, "connection lost: %s", strerror(-*ret));
		link_fail(s, l, retry_at, backoff);
		return true;
	}
	if (finishing && l->welcomed && !l->next && !l->ctl && !l->finish_sent &&
	    !record_from(s, l->sent_seq + 1)) {
		send_finish(s, l);
		return true;
	}
	if (!l->ctl && prec_now_ms() - l->last_io >= PING_MS) {
		send_ping(l);
		return true;
	}
	return false;
}

/* Step 3: waits for the link (what it wants, given step 2's ret) or a
 * wakeup. The link's revents, or -1 when poll failed. */
static int step_wait(struct rec_sender *s, struct link *l, int ret)
{
	struct pollfd pfd[2];

	pfd[0].fd = l->io.fd;
	pfd[0].events = POLLIN;
	if (!l->io.handshaken)
		pfd[0].events = rec_conn_want(&l->io);
	else if (l->ctl || l->next || ret == -EAGAIN)
		pfd[0].events |= POLLOUT;
	pfd[1].fd = s->wakefd;
	pfd[1].events = POLLIN;
	pfd[0].revents = pfd[1].revents = 0;
	if (poll(pfd, 2, PING_MS) < 0 && errno != EINTR)
		return -1;
	if (pfd[1].revents & POLLIN) {
		uint64_t v;

		if (read(s->wakefd, &v, sizeof(v)) < 0) {
			/* nothing to clear */
		}
	}
	return pfd[0].revents;
}

/* Step 4: what the collector sent (acks, refusals). false: the link
 * failed. An ack resets the backoff. */
static bool step_receive(struct rec_sender *s, struct link *l, uint64_t *backoff)
{
	bool ok = true;

	for (;;) {
		size_t room;
		void *p = prec_msgbuf_space(&l->in, &room);
		const unsigned char *msg;
		size_t len;
		ssize_t n;
		int r;

		if (!p) {
			ok = false;
			break;
		}
		n = rec_conn_read(&l->io, p, room);
		if (n == -EAGAIN)
			break;
		if (n <= 0) {
			set_error(s, "the collector closed the connection%s",
				  n < 0 ? " abruptly" : "");
			ok = false;
			break;
		}
		prec_msgbuf_commit(&l->in, (size_t)n);
		while (ok && (r = prec_msgbuf_next(&l->in, &msg, &len)) != 0) {
			if (r < 0) {
				set_error(s, "the collector sent an oversized message");
				ok = false;
				break;
			}
			ok = on_message(s, l, msg, len);
		}
		if (!ok)
			break;
	}
	if (l->acked) {
		*backoff = BACKOFF_MIN_MS;
		l->acked = false;
	}
	return ok;
}

static void *sender_main(void *arg)
{
	struct rec_sender *s = arg;
	struct link l;
	uint64_t backoff = BACKOFF_MIN_MS, retry_at = 0;

	memset(&l, 0, sizeof(l));
	for (;;) {
		bool stop, finishing, done;
		int ret, revents;

		pthread_mutex_lock(&s->lock);
		stop = s->stop || s->refused;
		finishing = s->finishing;
		done = finishing && s->acked_seq == s->last_seq && !s->head;
		pthread_mutex_unlock(&s->lock);
		if (stop || (done && l.finish_sent && !l.ctl))
			break;   /* everything acknowledged, Finish written */
		if (!step_connect(s, &l, &retry_at, &backoff))
			continue;
		if (step_send(s, &l, finishing, &retry_at, &backoff, &ret))
			continue;
		revents = step_wait(s, &l, ret);
		if (revents < 0)
			break;
		if (l.io.handshaken && (revents & (POLLIN | POLLHUP | POLLERR)) &&
		    !step_receive(s, &l, &backoff))
			link_fail(s, &l, &retry_at, &backoff);
	}
	if (l.open)
		link_close(s, &l);
	pthread_mutex_lock(&s->lock);
	s->finished = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* ---- setup */

static void safe_name(const char *in, char *out, size_t len)
{
	size_t n = 0;

	for (; in && in[n] && n + 1 < len && n < 64; n++) {
		char c = in[n];

		out[n] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-') ? c : '_';
	}
	out[n] = '\0';
	if (!n || out[0] == '.' || out[0] == '-')
		out[0] = n ? '_' : 'h', out[n ? n : 1] = '\0';
}

int rec_sender_new(const struct rec_sender_opts *o, struct rec_sender **out)
{
	struct rec_sender *s = calloc(1, sizeof(*s));
	int ret;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	if (prec_opts_copy(&s->o, sizeof(s->o), o) < 0 || !s->o.to || !strchr(s->o.to, ':')) {
		rec_log(REC_LOG_ERROR, "bad --to '%s': HOST:PORT of a collector",
			s->o.to ? s->o.to : "");
		free(s);
		return -EINVAL;
	}
	if (!s->o.spool_bytes)
		s->o.spool_bytes = SPOOL_DEFAULT;
	snprintf(s->to, sizeof(s->to), "%s", s->o.to);
	s->o.to = s->to;
	{
		char copy[256], *tok, *save = NULL;

		snprintf(copy, sizeof(copy), "%s", s->to);
		for (tok = strtok_r(copy, ",", &save); tok && s->naddr < 8;
		     tok = strtok_r(NULL, ",", &save)) {
			if (!strchr(tok, ':')) {
				rec_log(REC_LOG_ERROR, "bad --to address '%s': HOST:PORT", tok);
				free(s);
				return -EINVAL;
			}
			snprintf(s->addr[s->naddr++], sizeof(s->addr[0]), "%s", tok);
		}
	}
	if (s->o.token) {
		s->token = malloc(s->o.token_len ? s->o.token_len : 1);
		if (!s->token) {
			free(s);
			return -ENOMEM;
		}
		memcpy(s->token, s->o.token, s->o.token_len);
		s->o.token = s->token;
	}
	if (s->o.host) {
		snprintf(s->host, sizeof(s->host), "%s", s->o.host);
	} else {
		char h[256] = "";

		gethostname(h, sizeof(h) - 1);
		safe_name(h, s->host, sizeof(s->host));
	}
	if (s->o.session_id) {
		snprintf(s->session, sizeof(s->session), "%s", s->o.session_id);
	} else {
		time_t t = time(NULL);
		struct tm tm;
		uint32_t rnd = 0;

		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			rnd = (uint32_t)prec_now_ms() ^ (uint32_t)getpid();
		gmtime_r(&t, &tm);
		snprintf(s->session, sizeof(s->session), "%04d%02d%02dT%02d%02d%02dZ-%08x",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			 tm.tm_min, tm.tm_sec, rnd);
	}
	if (!rec_wire_name_ok(s->host) || !rec_wire_name_ok(s->session)) {
		rec_log(REC_LOG_ERROR, "bad host or session name '%s'/'%s': 1 to 64 of "
			"[A-Za-z0-9._-]", s->host, s->session);
		free(s);
		return -EINVAL;
	}
	{
		FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

		if (f) {
			if (fgets(s->boot_id, sizeof(s->boot_id), f))
				s->boot_id[strcspn(s->boot_id, "\n")] = '\0';
			fclose(f);
		}
	}
	s->seed = (unsigned)prec_now_ms() ^ (unsigned)getpid();
	if (getrandom(s->stream_id, sizeof(s->stream_id), GRND_NONBLOCK) != sizeof(s->stream_id)) {
		/* no entropy pool yet (early boot): time, pid and address differ
		 * between two recordings of one host as well */
		uint64_t mix[2] = { (uint64_t)prec_now_ms() << 20 ^ (uint64_t)getpid(),
				    (uint64_t)(uintptr_t)s ^ (uint64_t)time(NULL) };

		memcpy(s->stream_id, mix, sizeof(s->stream_id));
	}
	s->frame_bytes = s->o.frame_bytes;
	s->adapts = s->o.frame_adapts;
	s->sink.ops = &sender_sink_ops;
	s->sink.priv = s;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wakefd < 0) {
		ret = -errno;
		rec_sender_free(s);
		return ret;
	}
	ret = pthread_create(&s->th, NULL, sender_main, s);
	if (ret) {
		rec_sender_free(s);
		return -ret;
	}
	s->started = true;
	*out = s;
	return 0;
}

struct prec_sink *rec_sender_sink(struct rec_sender *s)
{
	return &s->sink;
}

const char *rec_sender_session(const struct rec_sender *s)
{
	return s->session;
}

/* CLOCK_REALTIME timeout_ms from now, for pthread_cond_timedwait(). */
static struct timespec deadline(uint32_t timeout_ms)
{
	struct timespec dl;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	return dl;
}

uint64_t rec_sender_frame_size(struct rec_sender *s, uint32_t reach_ms,
			       uint32_t wait_ms)
{
	struct timespec reach = deadline(reach_ms < wait_ms ? reach_ms : wait_ms);
	struct timespec dl = deadline(wait_ms);
	uint64_t fb;
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	while (s->adapts && !s->reached && !s->answered && !s->refused && ret == 0)
		ret = pthread_cond_timedwait(&s->cond, &s->lock, &reach);
	while (s->adapts && s->reached && !s->answered && !s->refused && ret == 0)
		ret = pthread_cond_timedwait(&s->cond, &s->lock, &dl);
	if (s->adapts) {
		uint64_t lim = s->max_frame ? s->max_frame : REC_WIRE_FRAME_UNHEARD;

		if (!s->frame_bytes || s->frame_bytes > lim) {
			rec_log(REC_LOG_INFO, "stream to %s: frames of %llu bytes (%s)",
				s->o.to, (unsigned long long)lim, s->max_frame ?
				"the largest the collector forwards" :
				"no answer from the collector yet: what NATS's default "
				"max_payload holds");
			s->frame_bytes = lim;
		}
		s->adapts = false;
	}
	fb = s->frame_bytes;
	pthread_mutex_unlock(&s->lock);
	return fb;
}

int rec_sender_finish(struct rec_sender *s, uint32_t timeout_ms)
{
	struct timespec dl = deadline(timeout_ms);
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	s->finishing = true;
	pthread_mutex_unlock(&s->lock);
	wake(s);
	pthread_mutex_lock(&s->lock);
	while (!s->finished && ret == 0)
		ret = pthread_cond_timedwait(&s->cond, &s->lock, &dl);
	if (s->refused) {
		/* said once, by whoever asks rec_sender_refused() */
		pthread_mutex_unlock(&s->lock);
		return -ECONNREFUSED;
	}
	if (!s->finished) {
		uint64_t left = s->last_seq - s->acked_seq;

		rec_log(REC_LOG_ERROR, "stream to %s: %llu records (%llu bytes) not "
			"acknowledged after %u ms (%s): they are not archived",
			s->o.to, (unsigned long long)left,
			(unsigned long long)s->st.spool_used, timeout_ms,
			s->st.last_error[0] ? s->st.last_error : "no answer");
		pthread_mutex_unlock(&s->lock);
		return -ETIMEDOUT;
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void rec_sender_stats(struct rec_sender *s, struct rec_sender_stats *st)
{
	pthread_mutex_lock(&s->lock);
	*st = s->st;
	pthread_mutex_unlock(&s->lock);
}

bool rec_sender_refused(struct rec_sender *s, char *why, size_t len)
{
	bool refused;

	pthread_mutex_lock(&s->lock);
	refused = s->refused;
	if (refused && why && len)
		snprintf(why, len, "%s", s->refusal);
	pthread_mutex_unlock(&s->lock);
	return refused;
}

bool rec_sender_take_drops(struct rec_sender *s, struct rec_sender_drops *d)
{
	bool any;

	pthread_mutex_lock(&s->lock);
	any = s->drops.records > 0;
	*d = s->drops;
	memset(&s->drops, 0, sizeof(s->drops));
	pthread_mutex_unlock(&s->lock);
	return any;
}

void rec_sender_free(struct rec_sender *s)
{
	if (!s)
		return;
	if (s->started) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_mutex_unlock(&s->lock);
		wake(s);
		pthread_join(s->th, NULL);
	}
	while (s->head) {
		struct entry *e = s->head;

		s->head = e->next;
		free(e);
	}
	if (s->wakefd >= 0)
		close(s->wakefd);
	free(s->token);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
}
