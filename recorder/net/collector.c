/*
 * collector.c - the archive collector's event loop; see collector.h.
 *
 * Per connection: HELLO (waiting for the hello, with a deadline) ->
 * STREAM (frames in seq order) -> closed. Per stream (host + session id,
 * at most one connection at a time: a reconnect of the same recording
 * takes the stream over, another recording is refused): its archive
 * file, opened at the hello when it exists, created with the first record
 * otherwise. After each epoll turn every stream that received frames is
 * fdatasync'ed once and its connection gets one cumulative Ack: many
 * frames, one sync.
 */
#include "recorder/net/collector.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/base/clock.h"
#include "format/base/opts.h"
#include "format/base/outq.h"
#include "recorder/log.h"
#include "recorder/net/archive_file.h"
#include "recorder/net/conn.h"
#include "recorder/net/jetstream.h"
#include "format/record.h"
#include "recorder/net/wire.h"

#define MAX_LISTEN 4
/* epoll tags that are not connections (those carry their pointer) */
#define TAG_STOP 1u
#define TAG_JS 2u
#define TAG_LISTEN 3u                   /* + listener index */

#ifndef PERFREC_VERSION
#define PERFREC_VERSION "0"
#endif
/* Bytes read from one connection per turn, so one fast sender cannot
 * starve the others. */
#define READ_BUDGET (8u << 20)
#define TICK_MS 100

enum cstate { C_HELLO, C_STREAM, C_CLOSING };

struct stream;

struct cconn {
	struct rec_conn io;
	struct prec_msgbuf in;
	enum cstate state;
	struct prec_outq out;        /* replies not yet sent */
	uint64_t hello_deadline;
	uint64_t partial_since;      /* a message has been incomplete since */
	uint64_t last_msg;
	struct stream *stream;
	bool fake;                   /* rec_collector_feed(): no socket */
	uint32_t events;             /* registered with epoll */
	char peer[64];
	struct cconn *next;
};

/* A stream's records go to its archive file (--dir), to JetStream
 * (--nats), or both; a record is durable once every store has it. */
struct stream {
	char host[65], id[65];
	char origin[2 * REC_WIRE_MAX_STREAM_ID + 1];   /* Hello.stream_id in hex,
							 * "" = not said */
	bool has_file;
	struct rec_archive_file a;
	struct rec_js_stream *js;
	uint64_t next_seq;           /* the record the recorder sends next */
	bool complete;               /* the index is in */
	uint64_t acked;              /* the last Ack sent */
	struct cconn *owner;
	bool need_ack;               /* frames (or duplicates) since the last ack */
	uint64_t finish_seq;         /* Finish received: the last seq */
	uint64_t end_seq;            /* > 0: JetStream holds this stream
				      * whole up to its index, below end_seq;
				      * only holes below it are taken again */
	struct stream *next;
};

struct rec_collector {
	struct rec_collector_opts o;
	int ep, stopfd;
	int lfd[MAX_LISTEN];
	int nlisten;
	int port;
	struct cconn *conns;
	unsigned nconns;
	struct stream *streams;
	unsigned nstreams;
	struct prec_msgbuf_budget budget;   /* every connection's input */
	struct rec_collector_stats st;
};


/* ---- replies */

static int queue_bytes(struct cconn *k, const void *b, size_t n)
{
	if (k->fake)
		return 0;
	return prec_outq_add(&k->out, b, n);
}

static int queue_msg(struct cconn *k, const Perfrec__Control__StreamMessage *m)
{
	unsigned char *b;
	size_t n;
	int ret = rec_wire_pack(m, &b, &n);

	if (ret < 0)
		return ret;
	ret = queue_bytes(k, b, n);
	free(b);
	return ret;
}

/* Sends what is queued; 0, -EAGAIN (the rest waits for EPOLLOUT) or an
 * error. */
static int flush_out(struct cconn *k)
{
	while (prec_outq_pending(&k->out)) {
		size_t len;
		const void *b = prec_outq_peek(&k->out, &len);
		ssize_t n = rec_conn_write(&k->io, b, len);

		if (n < 0)
			return (int)n;
		prec_outq_consume(&k->out, (size_t)n);
	}
	return 0;
}

/* Refuses the peer: the reason goes to it and to the log; the connection
 * closes once the reply is out. definitive: no reconnect can change the
 * answer (the recorder stops streaming). */
static void vrefuse(struct rec_collector *c, struct cconn *k, bool definitive,
		    const char *fmt, va_list ap)
{
	Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
	Perfrec__Control__Refusal r = PERFREC__CONTROL__REFUSAL__INIT;
	char reason[512];

	if (k->state == C_CLOSING)
		return;
	vsnprintf(reason, sizeof(reason), fmt, ap);
	rec_log(REC_LOG_WARN, "collect: %s%s%s: %s", k->peer,
		k->stream ? " " : "", k->stream ? k->stream->id : "", reason);
	r.reason = reason;
	r.version = REC_WIRE_VERSION;
	r.definitive = definitive;
	m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_REFUSAL;
	m.refusal = &r;
	queue_msg(k, &m);
	k->state = C_CLOSING;
	c->st.refused++;
}

static void refuse(struct rec_collector *c, struct cconn *k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void refuse_definitive(struct rec_collector *c, struct cconn *k,
			      const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void refuse(struct rec_collector *c, struct cconn *k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vrefuse(c, k, false, fmt, ap);
	va_end(ap);
}

static void refuse_definitive(struct rec_collector *c, struct cconn *k,
			      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vrefuse(c, k, true, fmt, ap);
	va_end(ap);
}

/* ---- streams */

static struct stream *find_stream(struct rec_collector *c, const char *host,
				  const char *id)
{
	for (struct stream *s = c->streams; s; s = s->next)
		if (!strcmp(s->host, host) && !strcmp(s->id, id))
			return s;
	return NULL;
}

static void drop_stream(struct rec_collector *c, struct stream *s)
{
	struct stream **pp = &c->streams;

	if (s->has_file) {
		int ret = rec_archive_file_sync(&s->a);

		if (ret < 0)
			rec_log(REC_LOG_ERROR, "collect: syncing %s failed: %s", s->a.path,
				strerror(-ret));
		rec_archive_file_close(&s->a);
	}
	rec_js_stream_close(s->js);
	while (*pp && *pp != s)
		pp = &(*pp)->next;
	if (*pp)
		*pp = s->next;
	c->nstreams--;
	free(s);
}

/* ---- connections */

static void close_conn(struct rec_collector *c, struct cconn *k)
{
	struct cconn **pp = &c->conns;

	if (k->stream) {
		/* the stream's file is released: a reconnect (here or at
		 * another collector) resumes it from disk */
		k->stream->owner = NULL;
		drop_stream(c, k->stream);
		k->stream = NULL;
	}
	if (!k->fake)
		epoll_ctl(c->ep, EPOLL_CTL_DEL, k->io.fd, NULL);
	rec_conn_release(&k->io);
	prec_msgbuf_release(&k->in);
	prec_outq_release(&k->out);
	while (*pp && *pp != k)
		pp = &(*pp)->next;
	if (*pp)
		*pp = k->next;
	c->nconns--;
	free(k);
}

/* ---- origins: which recording a stream's stores hold */

/* Hello.stream_id in hex ("" when the recorder did not say). */
static void origin_hex(const ProtobufCBinaryData *id, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < id->len && i < REC_WIRE_MAX_STREAM_ID; i++) {
		out[2 * i] = digits[id->data[i] >> 4];
		out[2 * i + 1] = digits[id->data[i] & 15];
	}
	out[2 * i] = '\0';
}

/* An origin for a message: its first 16 digits, or "none". */
static const char *origin_name(const char *origin, char *buf, size_t len)
{
	snprintf(buf, len, "%.16s", origin[0] ? origin : "none");
	return buf;
}

/* DIR/<host>/<session>.prec (SPEC.md section 10), and beside it the
 * origin of its records, DIR/<host>/.<session>.origin: a hidden name that
 * no stream can have (names do not start with '.'), which `collect
 * --list` does not show. */
static void archive_path(const struct rec_collector *c, const struct stream *s,
			 bool origin, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/%s%s%s", c->o.dir, s->host, origin ? "." : "", s->id,
		 origin ? ".origin" : ".prec");
}

/* The origin recorded beside s's archive into out ("" when none is: a
 * file written before origins were, or by a recorder that does not say
 * its own). 0 or -errno. */
static int origin_read(const struct rec_collector *c, const struct stream *s,
		       char *out, size_t len)
{
	char path[4200];
	ssize_t n;
	int fd;

	out[0] = '\0';
	archive_path(c, s, true, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	n = read(fd, out, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/* Records s's origin beside its archive, which holds no record yet and
 * is locked by s: synced, and its name too, before the first record goes
 * in, so a file with records always has its origin. 0 or -errno. */
static int origin_write(const struct rec_collector *c, const struct stream *s)
{
	char path[4200], line[sizeof(s->origin) + 1];
	size_t n = (size_t)snprintf(line, sizeof(line), "%s\n", s->origin);
	int fd, ret = 0;

	archive_path(c, s, true, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (fd < 0)
		return -errno;
	if (write(fd, line, n) != (ssize_t)n || fsync(fd) < 0)
		ret = errno ? -errno : -EIO;
	close(fd);
	if (!ret) {
		*strrchr(path, '/') = '\0';
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || fsync(fd) < 0)
			ret = -errno;
		if (fd >= 0)
			close(fd);
	}
	return ret;
}

/* Opens s's archive, or creates it. 0, or < 0 after the peer was
 * refused. */
static int archive_open(struct rec_collector *c, struct stream *s, struct cconn *k)
{
	int ret = rec_archive_file_open(c->o.dir, s->host, s->id, &s->a);

	if (ret < 0) {
		refuse(c, k, "cannot open the archive of %s/%s: %s", s->host, s->id,
		       ret == -EBUSY ? "another collector is writing it" : strerror(-ret));
		return ret;
	}
	s->has_file = true;
	return 0;
}

static void archive_close(struct stream *s)
{
	if (s->has_file)
		rec_archive_file_close(&s->a);
	s->has_file = false;
}

/* Refuses the peer when a store holding records of s (resume point next
 * > 1) got them from another recording (stored origin). */
static int check_origin(struct rec_collector *c, struct stream *s, struct cconn *k,
			const char *what, uint64_t next, const char *stored)
{
	char a[20], b[20];

	if (next <= 1 || !strcmp(stored, s->origin))
		return 0;
	refuse_definitive(c, k, "%s holds %llu records of another recording (stream %s, this "
	       "one %s): give each recording its own --session", what,
	       (unsigned long long)(next - 1), origin_name(stored, a, sizeof(a)),
	       origin_name(s->origin, b, sizeof(b)));
	return -EEXIST;
}

/* The stream's file and/or JetStream subject; its resume point is the
 * lower of theirs (each store skips what it has). A file that does not
 * exist yet is created with the stream's first record (on_frame): a
 * hello alone leaves nothing behind. 0, or < 0 after the peer was
 * refused. */
static int open_stores(struct rec_collector *c, struct stream *s,
		       const Perfrec__Control__Hello *h, struct cconn *k)
{
	uint64_t next = UINT64_MAX;
	bool complete = true;
	int ret;

	if (c->o.dir) {
		char path[4200], stored[sizeof(s->origin)];
		struct stat st;

		archive_path(c, s, false, path, sizeof(path));
		if (lstat(path, &st) < 0 && errno == ENOENT) {
			next = 1;
			complete = false;
		} else {
			ret = archive_open(c, s, k);
			if (ret < 0)
				return ret;
			ret = origin_read(c, s, stored, sizeof(stored));
			if (ret < 0) {
				refuse(c, k, "cannot read the origin of %s: %s", s->a.path,
				       strerror(-ret));
			} else {
				char what[160];

				snprintf(what, sizeof(what), "the archive of %s/%s", s->host,
					 s->id);
				ret = check_origin(c, s, k, what, s->a.next_seq, stored);
			}
			if (ret < 0) {
				archive_close(s);
				return ret;
			}
			next = s->a.next_seq;
			complete = s->a.complete;
		}
	}
	if (c->o.js) {
		char what[200];
		uint64_t jn;
		bool jc;

		ret = rec_js_stream_open(c->o.js, s->host, s->id, &s->js, &jn, &jc);
		if (ret < 0) {
			archive_close(s);
			refuse(c, k, "JetStream is not available now; try again later");
			return ret;
		}
		snprintf(what, sizeof(what), "JetStream stream %s for %s/%s",
			 rec_js_stream_name(c->o.js), s->host, s->id);
		ret = check_origin(c, s, k, what, jn, rec_js_stream_origin(s->js));
		if (ret < 0) {
			rec_js_stream_close(s->js);
			s->js = NULL;
			archive_close(s);
			return ret;
		}
		rec_js_stream_set_origin(s->js, s->origin);
		/* the recorder's own account wins where it is lower: the
		 * stream may hold a hole below its last record */
		if (h->resend_from && h->resend_from < jn) {
			rec_js_stream_rewind(s->js, h->resend_from);
			if (jc)
				s->end_seq = jn;
			jn = h->resend_from;
			jc = false;
		}
		if (jn < next)
			next = jn;
		complete = complete && jc;
	}
	s->next_seq = next;
	s->complete = complete;
	s->acked = next - 1;
	return 0;
}

/* Before the archive's first record: the file is created (when the hello
 * found none) and the stream's origin recorded beside it. 0, or < 0
 * after the peer was refused. */
static int archive_begin(struct rec_collector *c, struct stream *s, struct cconn *k)
{
	int ret;

	if (!s->has_file) {
		ret = archive_open(c, s, k);
		if (ret < 0)
			return ret;
		if (s->a.next_seq != 1) {
			refuse(c, k, "%s was written by another collector since the hello: "
			       "reconnect", s->a.path);
			archive_close(s);
			return -EBUSY;
		}
	}
	ret = origin_write(c, s);
	if (ret < 0)
		refuse(c, k, "cannot record the origin of %s: %s", s->a.path, strerror(-ret));
	return ret;
}

/* Hello's texts that reach the log: printable ASCII, bounded. */
static bool text_ok(const char *t)
{
	size_t n = 0;

	for (; t && t[n]; n++)
		if (n >= REC_WIRE_MAX_TEXT || (unsigned char)t[n] < 0x20 ||
		    (unsigned char)t[n] > 0x7e)
			return false;
	return true;
}

static void on_hello(struct rec_collector *c, struct cconn *k,
		     const Perfrec__Control__Hello *h, const unsigned char *msg, size_t len)
{
	static const char *const text_names[] = { [2] = "host name", [3] = "boot id",
						  [4] = "session id",
						  [5] = "recorder version" };
	char origin[sizeof(((struct stream *)0)->origin)];
	unsigned nul;
	Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
	Perfrec__Control__Welcome w = PERFREC__CONTROL__WELCOME__INIT;
	struct stream *s;
	uint64_t max_frame;
	int ret;

	if (h->version != REC_WIRE_VERSION) {
		refuse_definitive(c, k, "protocol version %u is not supported: this collector "
		       "speaks version %u", h->version, REC_WIRE_VERSION);
		return;
	}
	if (c->o.token && !rec_wire_token_equal(h->token.data, h->token.len,
						c->o.token, c->o.token_len)) {
		refuse_definitive(c, k, "bad token (see --token-file)");
		return;
	}
	/* an adapting recorder cuts its frames to the Welcome's limit;
	 * others (explicit --frame-size, older recorders) must fit it */
	max_frame = rec_wire_frame_limit(c->o.js ? (uint64_t)rec_js_max_payload(c->o.js) :
					 REC_WIRE_MAX_RECORD);
	if (h->frame_bytes > max_frame && !h->frame_adapts) {
		if (c->o.js)
			refuse_definitive(c, k, "frames of %llu bytes do not fit the NATS "
					  "servers' max_payload of %lld bytes: record with "
					  "--frame-size %lluk or less (or without --frame-size), "
					  "or raise max_payload (at most 64MB) on every server",
					  (unsigned long long)h->frame_bytes,
					  (long long)rec_js_max_payload(c->o.js),
					  (unsigned long long)(max_frame >> 10));
		else
			refuse_definitive(c, k, "frames of %llu bytes are larger than this "
					  "collector takes: record with --frame-size %lluk or "
					  "less", (unsigned long long)h->frame_bytes,
					  (unsigned long long)(max_frame >> 10));
		return;
	}
	nul = rec_wire_hello_nul(msg, len);
	if (nul) {
		refuse_definitive(c, k, "bad %s: it holds a NUL byte", text_names[nul]);
		return;
	}
	if (!text_ok(h->boot_id) || !text_ok(h->recorder_version)) {
		refuse_definitive(c, k, "bad %s: at most %u printable ASCII characters",
		       text_ok(h->boot_id) ? "recorder version" : "boot id", REC_WIRE_MAX_TEXT);
		return;
	}
	if (h->stream_id.len > REC_WIRE_MAX_STREAM_ID) {
		refuse_definitive(c, k, "bad stream id: %zu bytes, at most %u", h->stream_id.len,
		       REC_WIRE_MAX_STREAM_ID);
		return;
	}
	origin_hex(&h->stream_id, origin);
	if (!rec_wire_name_ok(h->host)) {
		refuse_definitive(c, k, "bad host name '%.64s': 1 to 64 of [A-Za-z0-9._-], "
		       "not starting with '.' or '-'", h->host);
		return;
	}
	if (!rec_wire_name_ok(h->session_id)) {
		refuse_definitive(c, k, "bad session id '%.64s': 1 to 64 of [A-Za-z0-9._-], "
		       "not starting with '.' or '-'", h->session_id);
		return;
	}
	s = find_stream(c, h->host, h->session_id);
	if (s && s->owner && strcmp(s->origin, origin)) {
		char a[20], b[20];

		/* definitive too: the owner's records reach the stores, after
		 * which check_origin() refuses this recording for good */
		refuse_definitive(c, k, "session %s/%s is being streamed by another recording "
		       "(stream %s, this one %s): give each recording its own --session",
		       s->host, s->id, origin_name(s->origin, a, sizeof(a)),
		       origin_name(origin, b, sizeof(b)));
		return;
	}
	if (s && s->owner) {
		/* the recorder reconnected before we saw the old connection
		 * die: the new one takes over. The stream starts afresh from
		 * its stores: what this one received is not all stored yet
		 * (publishes in flight, some maybe lost), and the Welcome must
		 * not tell the recorder to drop any of it. */
		struct cconn *old = s->owner;

		s->owner = NULL;
		old->stream = NULL;
		refuse(c, old, "replaced by a newer connection of the same session");
		drop_stream(c, s);
		s = NULL;
	}
	if (!s) {
		unsigned max = c->o.max_streams ? c->o.max_streams : 256;

		if (c->nstreams >= max) {
			refuse(c, k, "too many sessions at once (%u): raise --max-sessions, whose "
			       "default follows the open-file limit (ulimit -n)", max);
			return;
		}
		s = calloc(1, sizeof(*s));
		if (!s) {
			refuse(c, k, "out of memory");
			return;
		}
		snprintf(s->host, sizeof(s->host), "%s", h->host);
		snprintf(s->id, sizeof(s->id), "%s", h->session_id);
		snprintf(s->origin, sizeof(s->origin), "%s", origin);
		ret = open_stores(c, s, h, k);
		if (ret < 0) {
			free(s);
			return;
		}
		s->next = c->streams;
		c->streams = s;
		c->nstreams++;
		c->st.streams++;
	}
	s->owner = k;
	k->stream = s;
	k->state = C_STREAM;
	k->in.max = REC_WIRE_MAX_MSG;   /* frames from now on */
	w.version = REC_WIRE_VERSION;
	w.next_seq = s->next_seq;
	w.complete = s->complete;
	w.max_frame_bytes = max_frame;
	w.collector = (char *)"perfrec collect " PERFREC_VERSION;
	m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_WELCOME;
	m.welcome = &w;
	queue_msg(k, &m);
	rec_log(REC_LOG_INFO, "collect: %s: session %s/%s from record %llu (%s)",
		k->peer, s->host, s->id, (unsigned long long)s->next_seq,
		h->recorder_version ? h->recorder_version : "?");
}

static void on_frame(struct rec_collector *c, struct cconn *k, uint64_t seq,
		     const unsigned char *data, size_t len)
{
	struct stream *s = k->stream;
	struct prec_record rec;
	bool past_end;
	int ret;

	if (seq < s->next_seq) {
		/* sent again after a reconnect: stored already */
		c->st.duplicates++;
		s->need_ack = true;
		return;
	}
	if (seq > s->next_seq) {
		refuse(c, k, "frame %llu out of order: record %llu comes next",
		       (unsigned long long)seq, (unsigned long long)s->next_seq);
		return;
	}
	past_end = s->complete || (s->end_seq && seq >= s->end_seq);
	if (past_end || prec_record_scan(data, len, 0, &rec) != 1 || rec.len != len ||
	    (seq == 1) != (rec.kind == PREC_RECORD_HEADER)) {
		refuse(c, k, "frame %llu is not %s", (unsigned long long)seq,
		       past_end ? "expected: the session's index is in already" :
		       "one whole file record (SPEC.md section 10)");
		return;
	}
	if (c->o.dir && seq == 1 && (!s->has_file || s->a.next_seq == 1) &&
	    archive_begin(c, s, k) < 0)
		return;
	if (s->has_file && seq == s->a.next_seq) {
		ret = rec_archive_file_append(&s->a, data, len);
		if (ret < 0) {
			refuse(c, k, "cannot write %s: %s", s->a.path, strerror(-ret));
			return;
		}
	}
	if (s->js) {
		ret = rec_js_publish(s->js, seq, rec.kind, data, len);
		if (ret == -EMSGSIZE) {
			/* the record is what it is: no resend fits it */
			refuse_definitive(c, k, "%s: record with a smaller --frame-size, or "
					  "raise the servers' max_payload",
					  rec_js_stream_error(s->js));
			return;
		}
		if (ret < 0) {
			refuse(c, k, "%s", rec_js_stream_error(s->js) ?
			       rec_js_stream_error(s->js) : "JetStream publish failed");
			return;
		}
	}
	s->next_seq++;
	if (rec.kind == PREC_RECORD_INDEX)
		s->complete = true;
	s->need_ack = true;
	c->st.frames++;
	c->st.bytes += len;
}

static void on_message(struct rec_collector *c, struct cconn *k,
		       const unsigned char *msg, size_t len)
{
	Perfrec__Control__StreamMessage *m;
	const unsigned char *data;
	size_t dlen;
	uint64_t seq;
	int f = rec_wire_parse_frame(msg, len, &seq, &data, &dlen);

	k->last_msg = prec_now_ms();
	if (f < 0) {
		refuse(c, k, "garbage: not a protocol message (a malformed frame)");
		return;
	}
	if (f > 0) {
		if (k->state != C_STREAM)
			refuse(c, k, "a frame before the hello");
		else
			on_frame(c, k, seq, data, dlen);
		return;
	}
	if (len > REC_WIRE_MAX_SMALL) {
		refuse(c, k, "a %zu-byte message that is not a frame", len);
		return;
	}
	m = rec_wire_unpack(msg, len);
	if (!m) {
		refuse(c, k, "garbage: not a protocol message (is this a perfrec "
		       "recorder?)");
		return;
	}
	if (k->state == C_HELLO) {
		if (m->body_case == PERFREC__CONTROL__STREAM_MESSAGE__BODY_HELLO)
			on_hello(c, k, m->hello, msg, len);
		else
			refuse(c, k, "expected a hello first");
	} else {
		switch (m->body_case) {
		case PERFREC__CONTROL__STREAM_MESSAGE__BODY_FINISH:
			if (m->finish->last_seq + 1 != k->stream->next_seq) {
				refuse(c, k, "finish at %llu but the session has %llu records",
				       (unsigned long long)m->finish->last_seq,
				       (unsigned long long)(k->stream->next_seq - 1));
				break;
			}
			k->stream->finish_seq = m->finish->last_seq;
			k->stream->need_ack = true;
			break;
		case PERFREC__CONTROL__STREAM_MESSAGE__BODY_PING:
			break;
		default:
			refuse(c, k, "unexpected message %d", (int)m->body_case);
			break;
		}
	}
	perfrec__control__stream_message__free_unpacked(m, NULL);
}

/* prec_msgbuf_space() found no room (errno says why). */
static void refuse_no_room(struct rec_collector *c, struct cconn *k)
{
	if (errno == ENOBUFS)
		refuse(c, k, "the collector holds %zu MiB of messages being received, "
		       "its limit (--max-buffer %zu MiB): try again later",
		       c->budget.used >> 20, c->budget.max >> 20);
	else
		refuse(c, k, "out of memory");
}

/* Takes every whole message the input holds. */
static void take_messages(struct rec_collector *c, struct cconn *k)
{
	const unsigned char *msg;
	size_t len;
	int ret;

	while (k->state != C_CLOSING && (ret = prec_msgbuf_next(&k->in, &msg, &len)) != 0) {
		if (ret < 0 && k->state == C_HELLO) {
			refuse(c, k, "a %zu-byte message before the hello is larger than "
			       "any hello (%u bytes at most)", len, REC_WIRE_MAX_HELLO);
			return;
		}
		if (ret < 0) {
			refuse(c, k, "a %zu-byte message is larger than any record "
			       "(%u bytes at most)", len, REC_WIRE_MAX_MSG);
			return;
		}
		on_message(c, k, msg, len);
	}
	if (prec_msgbuf_partial(&k->in)) {
		if (!k->partial_since)
			k->partial_since = prec_now_ms();
	} else {
		k->partial_since = 0;
	}
}

static void set_events(struct rec_collector *c, struct cconn *k)
{
	struct epoll_event ev;
	uint32_t want = EPOLLIN | EPOLLRDHUP;

	if (k->fake)
		return;
	if (prec_outq_pending(&k->out) || (k->io.ssl && rec_conn_want(&k->io) == POLLOUT))
		want |= EPOLLOUT;
	if (want == k->events)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.events = want;
	ev.data.ptr = k;
	epoll_ctl(c->ep, EPOLL_CTL_MOD, k->io.fd, &ev);
	k->events = want;
}

/* Readable (or writable for a TLS read in progress). false: close it. */
static bool on_readable(struct rec_collector *c, struct cconn *k)
{
	size_t budget = READ_BUDGET;

	if (!k->io.handshaken) {
		int ret = rec_conn_handshake(&k->io);

		if (ret == -EAGAIN)
			return true;
		if (ret < 0) {
			rec_log(REC_LOG_WARN, "collect: %s: TLS handshake failed: %s",
				k->peer, ret == -EPROTO ? rec_conn_error(&k->io) : strerror(-ret));
			c->st.refused++;
			return false;
		}
	}
	while (budget && k->state != C_CLOSING) {
		size_t room;
		void *p = prec_msgbuf_space(&k->in, &room);
		ssize_t n;

		if (!p) {
			refuse_no_room(c, k);
			break;
		}
		if (room > budget)
			room = budget;
		n = rec_conn_read(&k->io, p, room);
		if (n == -EAGAIN)
			break;
		if (n <= 0) {
			if (n < 0 && n != -ECONNRESET)
				rec_log(REC_LOG_WARN, "collect: %s: %s", k->peer,
					n == -EPROTO ? rec_conn_error(&k->io) : strerror((int)-n));
			return false;   /* closed by the peer */
		}
		prec_msgbuf_commit(&k->in, (size_t)n);
		budget -= (size_t)n;
		take_messages(c, k);
	}
	return true;
}

static void accept_conns(struct rec_collector *c, int lfd)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		unsigned max = c->o.max_conns ? c->o.max_conns : 1024;
		struct epoll_event ev;
		struct cconn *k;
		char host[48], port[8];
		int one = 1;

		if (fd < 0)
			return;
		c->st.accepted++;
		if (getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), port,
				sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
			snprintf(host, sizeof(host), "?");
		if (c->nconns >= max) {
			rec_log(REC_LOG_WARN, "collect: %s: refused: %u connections open "
				"already", host, max);
			c->st.refused++;
			close(fd);
			continue;
		}
		k = calloc(1, sizeof(*k));
		if (!k || rec_conn_init(&k->io, fd, c->o.tls, NULL) < 0) {
			free(k);
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		snprintf(k->peer, sizeof(k->peer), "%s:%s", host, port);
		prec_msgbuf_init(&k->in, REC_WIRE_MAX_HELLO);
		k->in.budget = &c->budget;
		k->hello_deadline = prec_now_ms() + (c->o.hello_timeout_ms ? c->o.hello_timeout_ms : 5000);
		k->last_msg = prec_now_ms();
		memset(&ev, 0, sizeof(ev));
		ev.events = k->events = EPOLLIN | EPOLLRDHUP;
		ev.data.ptr = k;
		if (epoll_ctl(c->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			rec_conn_release(&k->io);
			prec_msgbuf_release(&k->in);
			free(k);
			continue;
		}
		k->next = c->conns;
		c->conns = k;
		c->nconns++;
	}
}

/* After a turn: sync every stream that took frames, then ack what every
 * store holds durably. */
static void sync_and_ack(struct rec_collector *c)
{
	for (struct stream *s = c->streams; s; s = s->next) {
		Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
		Perfrec__Control__Ack a = PERFREC__CONTROL__ACK__INIT;
		uint64_t durable = s->next_seq - 1;
		int ret;

		if (!s->owner)
			continue;
		if (s->js && rec_js_stream_error(s->js)) {
			/* stop acking: the recorder keeps its spool and resends */
			refuse(c, s->owner, "%s", rec_js_stream_error(s->js));
			continue;
		}
		if (s->has_file) {
			if (s->a.synced_seq + 1 != s->a.next_seq)
				c->st.syncs++;
			ret = rec_archive_file_sync(&s->a);
			if (ret < 0) {
				refuse(c, s->owner, "cannot sync %s: %s", s->a.path,
				       strerror(-ret));
				continue;
			}
			if (s->a.synced_seq < durable)
				durable = s->a.synced_seq;
		}
		if (s->js && rec_js_stream_stored(s->js) < durable)
			durable = rec_js_stream_stored(s->js);
		if (!s->need_ack && durable <= s->acked)
			continue;
		s->need_ack = false;
		s->acked = durable > s->acked ? durable : s->acked;
		a.seq = s->acked;
		m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_ACK;
		m.ack = &a;
		queue_msg(s->owner, &m);
		c->st.acks++;
		if (s->finish_seq && s->finish_seq == s->acked) {
			rec_log(REC_LOG_INFO, "collect: session %s/%s finished: %llu records, "
				"%s%s%s", s->host, s->id, (unsigned long long)s->acked,
				s->complete ? "with its index" : "no index",
				s->has_file ? ", " : "", s->has_file ? s->a.path : "");
			s->finish_seq = 0;
		}
	}
}

static void check_deadlines(struct rec_collector *c)
{
	uint64_t now = prec_now_ms();
	uint32_t idle = c->o.idle_timeout_ms ? c->o.idle_timeout_ms : 60000;

	for (struct cconn *k = c->conns; k; k = k->next) {
		int waiting = 0;

		/* Bytes the peer sent that this loop has not read yet (it was
		 * busy: every hello reads its stream's end from JetStream,
		 * one round trip at a time, so a thousand recorders
		 * reconnecting at once wait in line) are our lateness, not
		 * theirs: the next read takes them. */
		if (k->state == C_HELLO && now > k->hello_deadline &&
		    ioctl(k->io.fd, FIONREAD, &waiting) == 0 && waiting > 0)
			continue;
		if (k->state == C_HELLO && now > k->hello_deadline)
			refuse(c, k, "no hello within %u ms", c->o.hello_timeout_ms ?
			       c->o.hello_timeout_ms : 5000);
		else if (k->state == C_STREAM && k->partial_since &&
			 now - k->partial_since > idle)
			refuse(c, k, "a message did not complete within %u ms", idle);
		else if (k->state == C_STREAM && now - k->last_msg > idle)
			refuse(c, k, "silent for %u ms", idle);
	}
}

/* Sends queued replies; closes connections that are done or failed. */
static void flush_all(struct rec_collector *c)
{
	struct cconn *k = c->conns, *next;

	for (; k; k = next) {
		int ret = 0;

		next = k->next;
		if (k->fake)
			continue;
		if (prec_outq_pending(&k->out) && k->io.handshaken)
			ret = flush_out(k);
		if ((ret < 0 && ret != -EAGAIN) ||
		    (k->state == C_CLOSING && (ret == 0 || !prec_outq_pending(&k->out)))) {
			close_conn(c, k);
			continue;
		}
		set_events(c, k);
	}
}

/* ---- setup */

static int listen_on(struct rec_collector *c, const char *spec)
{
	char host[256], *colon;
	struct addrinfo hints, *ai, *p;
	int ret;

	snprintf(host, sizeof(host), "%s", spec);
	colon = strrchr(host, ':');
	if (!colon || !colon[1]) {
		rec_log(REC_LOG_ERROR, "bad --listen '%s': ADDR:PORT, e.g. 127.0.0.1:7878",
			spec);
		return -EINVAL;
	}
	*colon = '\0';
	if (host[0] == '[' && colon[-1] == ']') {   /* [::1]:port */
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	ret = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
	if (ret) {
		rec_log(REC_LOG_ERROR, "bad --listen '%s': %s", spec, gai_strerror(ret));
		return -EINVAL;
	}
	for (p = ai; p && c->nlisten < MAX_LISTEN; p = p->ai_next) {
		int fd = socket(p->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		int one = 1;
		struct epoll_event ev;
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);

		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, p->ai_addr, p->ai_addrlen) < 0 || listen(fd, 128) < 0) {
			ret = -errno;
			rec_log(REC_LOG_ERROR, "cannot listen on %s: %s%s", spec, strerror(-ret),
				ret == -EADDRINUSE ? " (another collector? choose another "
				"port)" : "");
			close(fd);
			freeaddrinfo(ai);
			return ret;
		}
		if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
			c->port = ntohs(ss.ss_family == AF_INET6 ?
					((struct sockaddr_in6 *)&ss)->sin6_port :
					((struct sockaddr_in *)&ss)->sin_port);
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.u64 = TAG_LISTEN + (uint64_t)c->nlisten;
		epoll_ctl(c->ep, EPOLL_CTL_ADD, fd, &ev);
		c->lfd[c->nlisten++] = fd;
		break;   /* the first address that works */
	}
	freeaddrinfo(ai);
	if (!c->nlisten) {
		rec_log(REC_LOG_ERROR, "cannot listen on %s: no usable address", spec);
		return -EADDRNOTAVAIL;
	}
	return 0;
}

int rec_collector_new(const struct rec_collector_opts *o, struct rec_collector **out)
{
	struct rec_collector *c = calloc(1, sizeof(*c));
	struct epoll_event ev;
	int ret;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->ep = c->stopfd = -1;
	if (prec_opts_copy(&c->o, sizeof(c->o), o) < 0) {
		free(c);
		return -EINVAL;
	}
	c->budget.max = c->o.max_buffer ? c->o.max_buffer : REC_COLLECTOR_MAX_BUFFER;
	c->ep = epoll_create1(EPOLL_CLOEXEC);
	c->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->ep < 0 || c->stopfd < 0) {
		ret = -errno;
		goto err;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = TAG_STOP;
	epoll_ctl(c->ep, EPOLL_CTL_ADD, c->stopfd, &ev);
	if (c->o.js) {
		ev.events = EPOLLIN;
		ev.data.u64 = TAG_JS;
		epoll_ctl(c->ep, EPOLL_CTL_ADD, rec_js_pollfd(c->o.js), &ev);
	}
	if (!c->o.dir && !c->o.js) {
		rec_log(REC_LOG_ERROR, "collect: nowhere to store: give --dir DIR and/or "
			"--nats URL");
		ret = -EINVAL;
		goto err;
	}
	ret = listen_on(c, c->o.listen ? c->o.listen : "127.0.0.1:0");
	if (ret < 0)
		goto err;
	*out = c;
	return 0;
err:
	rec_collector_free(c);
	return ret;
}

int rec_collector_port(const struct rec_collector *c)
{
	return c->port;
}

int rec_collector_run(struct rec_collector *c)
{
	struct epoll_event evs[64];

	for (;;) {
		int n = epoll_wait(c->ep, evs, 64, TICK_MS);

		if (n < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;
			struct cconn *k;

			if (tag == TAG_STOP)
				return 0;
			if (tag == TAG_JS) {
				rec_js_poll(c->o.js);
				continue;
			}
			if (tag >= TAG_LISTEN && tag < TAG_LISTEN + MAX_LISTEN) {
				accept_conns(c, c->lfd[tag - TAG_LISTEN]);
				continue;
			}
			k = evs[i].data.ptr;
			if (k->state == C_CLOSING)
				continue;
			if ((evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) ||
			    (k->io.ssl && rec_conn_want(&k->io) == POLLOUT &&
			     (evs[i].events & EPOLLOUT))) {
				if (!on_readable(c, k))
					k->state = C_CLOSING, prec_outq_drop(&k->out);
			}
		}
		sync_and_ack(c);
		check_deadlines(c);
		flush_all(c);
	}
}

void rec_collector_stop(struct rec_collector *c)
{
	uint64_t one = 1;

	if (write(c->stopfd, &one, sizeof(one)) < 0) {
		/* already signalled */
	}
}

void rec_collector_stats(const struct rec_collector *c, struct rec_collector_stats *st)
{
	*st = c->st;
	st->open_streams = c->nstreams;
	st->buffered = c->budget.used;
	st->buffered_peak = c->budget.peak;
}

unsigned rec_collector_fit_streams(uint64_t nofile, bool dir, unsigned *conns)
{
	const uint64_t reserve = 64 + 16, per = dir ? 2 : 1;
	uint64_t n = nofile > reserve ? (nofile - reserve) * 8 / (8 * per + 1) : 1;

	if (n > REC_COLLECTOR_STREAMS_CAP)
		n = REC_COLLECTOR_STREAMS_CAP;
	if (!n)
		n = 1;
	*conns = (unsigned)(n + n / 8 + 16);
	return (unsigned)n;
}

int rec_collector_feed(struct rec_collector *c, const void *bytes, size_t len)
{
	struct cconn *k = calloc(1, sizeof(*k));
	size_t off = 0;
	int closed;

	if (!k)
		return -ENOMEM;
	k->fake = true;
	k->io.fd = -1;
	snprintf(k->peer, sizeof(k->peer), "feed");
	prec_msgbuf_init(&k->in, REC_WIRE_MAX_HELLO);
	k->in.budget = &c->budget;
	k->next = c->conns;
	c->conns = k;
	c->nconns++;
	while (off < len && k->state != C_CLOSING) {
		size_t room;
		void *p = prec_msgbuf_space(&k->in, &room);

		if (!p) {
			refuse_no_room(c, k);
			break;
		}
		if (room > len - off)
			room = len - off;
		memcpy(p, (const char *)bytes + off, room);
		prec_msgbuf_commit(&k->in, room);
		off += room;
		take_messages(c, k);
	}
	sync_and_ack(c);
	closed = k->state == C_CLOSING;
	close_conn(c, k);
	return closed;
}

void rec_collector_free(struct rec_collector *c)
{
	if (!c)
		return;
	while (c->conns)
		close_conn(c, c->conns);
	while (c->streams)
		drop_stream(c, c->streams);
	for (int i = 0; i < c->nlisten; i++)
		close(c->lfd[i]);
	if (c->ep >= 0)
		close(c->ep);
	if (c->stopfd >= 0)
		close(c->stopfd);
	free(c);
}
