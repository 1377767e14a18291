/*
 * jetstream.c - records into a JetStream stream; see jetstream.h.
 *
 * Threads: libnats calls the publish-ack handler on its own thread; the
 * handler only queues (stream key, seq, result) under a mutex and writes
 * the eventfd. Everything else runs on the collector's thread. A stream
 * is identified in results by a key, not a pointer, so a stream closed
 * while its publishes are in flight is simply not found.
 */
#include "recorder/net/jetstream.h"

#include <errno.h>
#include <nats/nats.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "format/base/opts.h"
#include "recorder/log.h"

#define MAX_URLS 16
/* A resend after a reconnect comes within minutes: the window in which
 * JetStream drops a message id it has seen (its default is 2 minutes). */
#define DUPLICATE_WINDOW_NS (10ll * 60 * 1000000000ll)
#define MAX_PENDING 4096
/* How long an asynchronous publish may wait for JetStream's answer, as a
 * multiple of the API timeout (5 s by default). Without a deadline libnats
 * waits forever for a message lost with its JetStream stream's leader
 * (kill -9 of a node): the stream never got past it and its recorder gave
 * up after --finish-timeout. At the deadline the stream fails, its
 * recorder is sent away and resends from what the JetStream stream holds
 * (message ids make the resend of anything that did land a no-op). Twice
 * the API timeout outlasts a JetStream leader's election (4-9 s) in most
 * cases. */
#define PUBLISH_WAIT_FACTOR 2
/* What may be sent to JetStream and not yet answered, per stream and in
 * all: the publish deadline counts from when libnats registers a publish,
 * and a healthy JetStream answers a record only after it stored every
 * one sent before it on the connection. With the bytes ahead of a
 * publish bounded, its deadline measures JetStream, not the length of
 * the queue: 32 MiB take well under a second to store. Records beyond
 * the bounds wait in the stream's queue (struct pending) and are sent as
 * answers come in. A recorder sends at most its spool unacknowledged
 * (64 MiB by default, sender.h): a queue above MAX_QUEUED fails its
 * stream (the recorder resends later) rather than let one peer fill the
 * collector's memory. */
#define MAX_INFLIGHT_STREAM (8u << 20)
#define MAX_INFLIGHT_TOTAL (32u << 20)
#define MAX_QUEUED (256u << 20)
/* Streams closed with records not known stored (struct hole) that the
 * collector remembers; beyond this the oldest is forgotten. */
#define MAX_HOLES 4096

struct result {
	uint64_t key, seq;
	size_t len;                  /* the record's bytes, now no longer in flight */
	uint64_t stream_seq;         /* where JetStream stored it */
	bool dup;                    /* stored before: a duplicate dropped */
	char err[160];               /* "" = stored */
};

/* The first record not known stored of a stream closed with records
 * unanswered or refused: JetStream may hold later ones (a hole below its
 * last record). The next hello of that stream resumes there, whatever
 * the recorder says: one older than Hello.resend_from says nothing, and
 * would otherwise be resumed after the last record, past the hole. */
struct hole {
	char host[65], id[65];
	uint64_t seq;
};

/* A record taken from the recorder and not yet sent to JetStream. */
struct pending {
	struct pending *next;
	uint64_t seq;
	enum prec_record_kind kind;
	size_t len;
	unsigned char data[];
};

struct rec_js_stream {
	struct rec_js *js;
	uint64_t key;
	char host[65], id[65];
	char subject[300];
	char origin[80];             /* Perfrec-Origin: read at open, then sent */
	uint64_t next_pub;           /* seq expected next from the recorder */
	uint64_t first_sent;         /* the lowest seq sent (0: none) */
	struct pending *qhead, *qtail;   /* taken, not sent yet (in seq order) */
	size_t queued;               /* their bytes */
	size_t inflight;             /* bytes sent and not answered */
	uint64_t stored;             /* every seq <= stored is in JetStream */
	uint64_t *done;              /* stored seqs above `stored`, sorted */
	size_t ndone, cdone;
	uint64_t fence;              /* expected last subject seq */
	uint64_t fence_at;           /* the record that carries it (see fence_ready()) */
	bool fenced;
	uint64_t reconnects;         /* the connection's count at the last check */
	char err[200];
	struct rec_js_stream *next;
};

struct rec_js {
	struct rec_js_opts o;
	char stream[64], urls[1024];
	natsConnection *nc;
	natsStatistics *stats;
	jsCtx *ctx;
	int efd;
	pthread_mutex_t lock;
	struct result *q;            /* results waiting for rec_js_poll() */
	size_t nq, cq;
	uint64_t next_key;
	size_t inflight;             /* every stream's, closed ones' included */
	struct hole *holes;          /* oldest first */
	size_t nholes;
	struct rec_js_stream *streams;
};

/* ---- names */

static size_t escape(const char *in, char *out, size_t len)
{
	size_t n = 0;

	for (; *in; in++) {
		const char *rep = *in == '_' ? "_u" : *in == '.' ? "_d" : NULL;
		size_t k = rep ? 2 : 1;

		if (n + k >= len)
			return 0;
		if (rep) {
			out[n++] = rep[0];
			out[n++] = rep[1];
		} else {
			out[n++] = *in;
		}
	}
	out[n] = '\0';
	return n;
}

size_t rec_js_subject(const char *stream, const char *host, const char *id,
		      char *buf, size_t len)
{
	char h[160], s[160];
	int n;

	if (!escape(host, h, sizeof(h)) || !escape(id, s, sizeof(s)))
		return 0;
	n = snprintf(buf, len, "%s.%s.%s", stream, h, s);
	return n < 0 || (size_t)n >= len ? 0 : (size_t)n;
}

size_t rec_js_msg_id(const char *host, const char *id, uint64_t seq,
		     char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s/%llu", host, id, (unsigned long long)seq);

	return n < 0 || (size_t)n >= len ? 0 : (size_t)n;
}

const char *rec_js_kind_name(enum prec_record_kind kind)
{
	switch (kind) {
	case PREC_RECORD_HEADER:
		return "header";
	case PREC_RECORD_FRAME:
		return "frame";
	case PREC_RECORD_INDEX:
		return "index";
	default:
		return "other";
	}
}

/* ---- connection */

static const char *js_error(natsStatus s, jsErrCode je, char *buf, size_t len)
{
	const char *t = nats_GetLastError(NULL);

	if (s == NATS_INSUFFICIENT_BUFFER) {
		/* what libnats says to a request while it reconnects, as we
		 * keep no reconnect buffer (see no_gap()) */
		snprintf(buf, len, "not connected to NATS (reconnecting)");
		return buf;
	}
	snprintf(buf, len, "%s%s%s (%d)", natsStatus_GetText(s), t ? ": " : "",
		 t ? t : "", (int)je);
	return buf;
}

static unsigned publish_wait_ms(const struct rec_js *js)
{
	return (js->o.timeout_ms ? js->o.timeout_ms : 5000) * PUBLISH_WAIT_FACTOR;
}

static void on_ack(jsCtx *ctx, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
	struct rec_js *js = closure;
	struct result r;
	const char *v = NULL;
	uint64_t one = 1;

	(void)ctx;
	memset(&r, 0, sizeof(r));
	if (natsMsgHeader_Get(msg, "Perfrec-Key", &v) == NATS_OK && v)
		r.key = strtoull(v, NULL, 10);
	if (natsMsgHeader_Get(msg, "Perfrec-Seq", &v) == NATS_OK && v)
		r.seq = strtoull(v, NULL, 10);
	r.len = (size_t)natsMsg_GetDataLength(msg);
	if (pa) {
		r.stream_seq = pa->Sequence;
		r.dup = pa->Duplicate;
	}
	if (!pa && pae && pae->Err == NATS_TIMEOUT)
		snprintf(r.err, sizeof(r.err), "JetStream did not acknowledge record %llu "
			 "within %u ms (a stream leader lost?): resend",
			 (unsigned long long)r.seq, publish_wait_ms(js));
	else if (!pa && pae)
		snprintf(r.err, sizeof(r.err), "JetStream refused record %llu: %s%s%s",
			 (unsigned long long)r.seq, natsStatus_GetText(pae->Err),
			 pae->ErrText ? ": " : "", pae->ErrText ? pae->ErrText : "");
	else if (!pa)
		snprintf(r.err, sizeof(r.err), "JetStream: no acknowledgement");
	natsMsg_Destroy(msg);
	pthread_mutex_lock(&js->lock);
	if (js->nq == js->cq) {
		size_t c = js->cq ? js->cq * 2 : 256;
		struct result *nq = realloc(js->q, c * sizeof(*nq));

		if (nq) {
			js->q = nq;
			js->cq = c;
		}
	}
	if (js->nq < js->cq)
		js->q[js->nq++] = r;
	pthread_mutex_unlock(&js->lock);
	if (write(js->efd, &one, sizeof(one)) < 0) {
		/* already signalled */
	}
}

/* JetStream answers "timeout" or "no responders" while its cluster
 * elects leaders (a node just died or started): worth waiting for. */
static bool transient(natsStatus s)
{
	return s == NATS_TIMEOUT || s == NATS_NO_RESPONDERS;
}

/* ... and a cluster that is still forming has a metadata leader before
 * it knows its peers: "no suitable peers for placement" for a while. */
static bool forming(natsStatus s, jsErrCode je)
{
	return transient(s) || je == JSClusterNoPeersErr;
}

#define RETRIES 10
#define RETRY_WAIT_US 500000

static int ensure_stream(struct rec_js *js)
{
	jsStreamInfo *si = NULL;
	jsErrCode je = 0;
	natsStatus s = js_GetStreamInfo(&si, js->ctx, js->stream, NULL, &je);
	char why[300], subj[80];
	const char *subjects[1];
	jsStreamConfig sc;

	for (int i = 0; i < RETRIES && transient(s); i++) {
		usleep(RETRY_WAIT_US);
		je = 0;
		s = js_GetStreamInfo(&si, js->ctx, js->stream, NULL, &je);
	}

	if (s == NATS_OK) {
		jsStreamInfo_Destroy(si);
		return 0;
	}
	if (s != NATS_NOT_FOUND || !js->o.create) {
		rec_log(REC_LOG_ERROR, "JetStream stream %s at %s: %s", js->stream, js->urls,
			js_error(s, je, why, sizeof(why)));
		return -EIO;
	}
	snprintf(subj, sizeof(subj), "%s.>", js->stream);
	subjects[0] = subj;
	jsStreamConfig_Init(&sc);
	sc.Name = js->stream;
	sc.Subjects = subjects;
	sc.SubjectsLen = 1;
	sc.Storage = js_FileStorage;
	sc.Replicas = js->o.replicas ? js->o.replicas : 3;
	sc.DenyDelete = true;
	sc.DenyPurge = true;
	sc.Duplicates = DUPLICATE_WINDOW_NS;
	/* a record must fit one message: the servers' max_payload */
	sc.MaxMsgSize = (int32_t)rec_js_max_payload(js);
	je = 0;
	s = js_AddStream(&si, js->ctx, &sc, NULL, &je);
	for (int i = 0; i < RETRIES && s != NATS_OK && forming(s, je); i++) {
		if (!i)
			rec_log(REC_LOG_INFO, "JetStream at %s: %s; waiting for its servers",
				js->urls, js_error(s, je, why, sizeof(why)));
		usleep(RETRY_WAIT_US);
		je = 0;
		s = js_AddStream(&si, js->ctx, &sc, NULL, &je);
	}
	if (s != NATS_OK) {
		rec_log(REC_LOG_ERROR, "cannot create JetStream stream %s (%lld replicas) at "
			"%s: %s%s", js->stream, (long long)sc.Replicas, js->urls,
			js_error(s, je, why, sizeof(why)),
			je == 10074 || strstr(why, "insufficient") ?
			"; the cluster has fewer servers than --replicas" : "");
		return -EIO;
	}
	jsStreamInfo_Destroy(si);
	rec_log(REC_LOG_INFO, "JetStream stream %s created (subjects %s, file storage, %lld "
		"replicas, deny delete)", js->stream, subj, (long long)sc.Replicas);
	return 0;
}

int rec_js_connect(const struct rec_js_opts *o, struct rec_js **out)
{
	struct rec_js *js = calloc(1, sizeof(*js));
	natsOptions *no = NULL;
	jsOptions jo;
	const char *urls[MAX_URLS];
	char *copy = NULL, *tok, *save = NULL;
	int n = 0, ret = -EIO;
	natsStatus s;

	*out = NULL;
	if (!js)
		return -ENOMEM;
	js->efd = -1;
	pthread_mutex_init(&js->lock, NULL);
	if (prec_opts_copy(&js->o, sizeof(js->o), o) < 0 || !js->o.urls || !*js->o.urls) {
		rec_log(REC_LOG_ERROR, "JetStream: no server URL (--nats nats://HOST:PORT,...)");
		ret = -EINVAL;
		goto err;
	}
	snprintf(js->urls, sizeof(js->urls), "%s", js->o.urls);
	snprintf(js->stream, sizeof(js->stream), "%s",
		 js->o.stream ? js->o.stream : REC_JS_DEFAULT_STREAM);
	js->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	copy = strdup(js->urls);
	if (js->efd < 0 || !copy) {
		ret = -ENOMEM;
		goto err;
	}
	for (tok = strtok_r(copy, ",", &save); tok && n < MAX_URLS;
	     tok = strtok_r(NULL, ",", &save))
		urls[n++] = tok;
	if (natsOptions_Create(&no) != NATS_OK ||
	    natsOptions_SetServers(no, urls, n) != NATS_OK ||
	    natsOptions_SetTimeout(no, js->o.timeout_ms ? js->o.timeout_ms : 5000) != NATS_OK ||
	    natsOptions_SetMaxReconnect(no, -1) != NATS_OK ||
	    natsOptions_SetReconnectWait(no, 250) != NATS_OK ||
	    /* no publish is held back while reconnecting (see no_gap()) */
	    (js->o.no_reconnect_buffer &&
	     natsOptions_SetReconnectBufSize(no, 0) != NATS_OK) ||
	    natsStatistics_Create(&js->stats) != NATS_OK) {
		ret = -ENOMEM;
		goto err;
	}
	s = natsConnection_Connect(&js->nc, no);
	if (s != NATS_OK) {
		char why[300];

		rec_log(REC_LOG_ERROR, "cannot reach NATS at %s: %s (is nats-server running "
			"with JetStream enabled, -js?)", js->urls, js_error(s, 0, why, sizeof(why)));
		ret = -ECONNREFUSED;
		goto err;
	}
	jsOptions_Init(&jo);
	jo.Wait = js->o.timeout_ms ? js->o.timeout_ms : 5000;
	jo.PublishAsync.MaxPending = MAX_PENDING;
	jo.PublishAsync.AckHandler = on_ack;
	jo.PublishAsync.AckHandlerClosure = js;
	if (natsConnection_JetStream(&js->ctx, js->nc, &jo) != NATS_OK) {
		rec_log(REC_LOG_ERROR, "JetStream at %s: cannot open a context", js->urls);
		goto err;
	}
	ret = ensure_stream(js);
	if (ret < 0)
		goto err;
	natsOptions_Destroy(no);
	free(copy);
	*out = js;
	return 0;
err:
	natsOptions_Destroy(no);
	free(copy);
	rec_js_free(js);
	return ret;
}

int64_t rec_js_max_payload(const struct rec_js *js)
{
	return natsConnection_GetMaxPayload(js->nc);
}

const char *rec_js_stream_name(const struct rec_js *js)
{
	return js->stream;
}

int rec_js_pollfd(const struct rec_js *js)
{
	return js->efd;
}

static struct hole *find_hole(struct rec_js *js, const char *host, const char *id)
{
	for (size_t i = 0; i < js->nholes; i++)
		if (!strcmp(js->holes[i].host, host) && !strcmp(js->holes[i].id, id))
			return &js->holes[i];
	return NULL;
}

/* At close: a stream with records taken and not known stored leaves its
 * first one for the next hello; one that stored its remembered hole
 * clears it. */
static void remember_hole(struct rec_js_stream *s)
{
	struct rec_js *js = s->js;
	struct hole *h = find_hole(js, s->host, s->id);
	bool filled = h && s->first_sent && s->first_sent <= h->seq && s->stored >= h->seq;

	if (s->stored + 1 < s->next_pub) {
		if (h) {
			if (filled || s->stored + 1 < h->seq)
				h->seq = s->stored + 1;
			return;
		}
		if (js->nholes == MAX_HOLES) {
			memmove(js->holes, js->holes + 1, (MAX_HOLES - 1) * sizeof(*js->holes));
			js->nholes--;
		}
		if (!js->holes) {
			js->holes = calloc(MAX_HOLES, sizeof(*js->holes));
			if (!js->holes)
				return;
		}
		h = &js->holes[js->nholes++];
		snprintf(h->host, sizeof(h->host), "%s", s->host);
		snprintf(h->id, sizeof(h->id), "%s", s->id);
		h->seq = s->stored + 1;
	} else if (filled) {
		size_t i = (size_t)(h - js->holes);

		memmove(h, h + 1, (js->nholes - i - 1) * sizeof(*h));
		js->nholes--;
	}
}

static struct rec_js_stream *find_key(struct rec_js *js, uint64_t key)
{
	for (struct rec_js_stream *s = js->streams; s; s = s->next)
		if (s->key == key)
			return s;
	return NULL;
}

/* seq is stored: advance `stored` over every contiguous seq. */
static void mark_stored(struct rec_js_stream *s, uint64_t seq)
{
	size_t i;

	if (seq <= s->stored)
		return;
	if (seq == s->stored + 1) {
		s->stored = seq;
		/* absorb what was waiting for it */
		for (i = 0; i < s->ndone && s->done[i] == s->stored + 1; i++)
			s->stored++;
		if (i) {
			memmove(s->done, s->done + i, (s->ndone - i) * sizeof(*s->done));
			s->ndone -= i;
		}
		return;
	}
	if (s->ndone == s->cdone) {
		size_t c = s->cdone ? s->cdone * 2 : 64;
		uint64_t *nd = realloc(s->done, c * sizeof(*nd));

		if (!nd) {
			snprintf(s->err, sizeof(s->err), "out of memory");
			return;
		}
		s->done = nd;
		s->cdone = c;
	}
	for (i = s->ndone; i > 0 && s->done[i - 1] > seq; i--)
		s->done[i] = s->done[i - 1];
	s->done[i] = seq;
	s->ndone++;
}

/* sends what results made room for (defined with the publishing) */
static void pump(struct rec_js_stream *s);

void rec_js_poll(struct rec_js *js)
{
	struct result *q;
	size_t n;
	uint64_t v;

	if (read(js->efd, &v, sizeof(v)) < 0) {
		/* nothing signalled: the queue may still hold results */
	}
	pthread_mutex_lock(&js->lock);
	q = js->q;
	n = js->nq;
	js->q = NULL;
	js->nq = js->cq = 0;
	pthread_mutex_unlock(&js->lock);
	for (size_t i = 0; i < n; i++) {
		struct rec_js_stream *s = find_key(js, q[i].key);

		js->inflight -= q[i].len < js->inflight ? q[i].len : js->inflight;
		if (!s)
			continue;   /* closed meanwhile */
		s->inflight -= q[i].len < s->inflight ? q[i].len : s->inflight;
		if (q[i].err[0]) {
			if (!s->err[0])
				snprintf(s->err, sizeof(s->err), "%s", q[i].err);
			continue;
		}
		/* a resent record that filled a hole is the subject's last
		 * message now: the fence expects it */
		if (!s->fenced && !q[i].dup && q[i].seq < s->fence_at &&
		    q[i].stream_seq > s->fence)
			s->fence = q[i].stream_seq;
		mark_stored(s, q[i].seq);
	}
	free(q);
	for (struct rec_js_stream *s = js->streams; s; s = s->next)
		pump(s);
}

static uint64_t reconnects(struct rec_js *js)
{
	uint64_t n = 0;

	if (natsConnection_GetStats(js->nc, js->stats) == NATS_OK)
		natsStatistics_GetCounts(js->stats, NULL, NULL, NULL, NULL, &n);
	return n;
}

/* A stream's records must reach JetStream as a prefix: its resume point
 * after a failure is the last record stored (rec_js_stream_open), so a
 * record stored after one that was lost would leave a hole the archiver
 * waits at for ever. Publishes are pipelined on one connection, where the
 * server stores in order: a hole needs publishes lost with one connection
 * and later ones sent on the next. So libnats holds nothing back while it
 * reconnects (a publish then fails), and a stream with publishes in
 * flight when the connection was re-established publishes nothing more:
 * it fails, its recorder reconnects and resends from what JetStream
 * holds. This only makes such a stream fail sooner: a hole also forms
 * on one connection (a JetStream leader lost in a cluster, a refused
 * publish with later ones pipelined behind it), and a reconnect can
 * complete between this check and the publish. What makes every hole
 * filled is the publish deadline (the stream fails) and the recorder's
 * Hello.resend_from (the resend starts at the hole). seq: the record
 * about to be sent. */
static int no_gap(struct rec_js_stream *s, uint64_t seq)
{
	uint64_t n = reconnects(s->js);

	if (n != s->reconnects) {
		if (seq - 1 > s->stored) {
			snprintf(s->err, sizeof(s->err), "the connection to NATS was "
				 "re-established with records %llu-%llu in flight: resend",
				 (unsigned long long)s->stored + 1,
				 (unsigned long long)seq - 1);
			return -EIO;
		}
		s->reconnects = n;
	}
	return 0;
}

int rec_js_stream_open(struct rec_js *js, const char *host, const char *id,
		       struct rec_js_stream **out, uint64_t *next_seq, bool *complete)
{
	struct rec_js_stream *s = calloc(1, sizeof(*s));
	struct hole *h;
	natsMsg *last = NULL;
	jsErrCode je = 0;
	natsStatus st;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->js = js;
	s->key = ++js->next_key;
	s->reconnects = reconnects(js);
	snprintf(s->host, sizeof(s->host), "%s", host);
	snprintf(s->id, sizeof(s->id), "%s", id);
	if (!rec_js_subject(js->stream, host, id, s->subject, sizeof(s->subject))) {
		free(s);
		return -ENAMETOOLONG;
	}
	*next_seq = 1;
	*complete = false;
	st = js_GetLastMsg(&last, js->ctx, js->stream, s->subject, NULL, &je);
	if (st == NATS_OK) {
		const char *v = NULL;
		uint64_t top;

		if (natsMsgHeader_Get(last, "Perfrec-Seq", &v) == NATS_OK && v)
			*next_seq = strtoull(v, NULL, 10) + 1;
		/* a record resent into a hole is the subject's last message
		 * while the records above it are older: resume above them */
		if (natsMsgHeader_Get(last, "Perfrec-Top", &v) == NATS_OK && v &&
		    (top = strtoull(v, NULL, 10)) >= *next_seq)
			*next_seq = top + 1;
		if (natsMsgHeader_Get(last, "Perfrec-Kind", &v) == NATS_OK && v &&
		    !strcmp(v, "index"))
			*complete = true;
		if (natsMsgHeader_Get(last, "Perfrec-Origin", &v) == NATS_OK && v)
			snprintf(s->origin, sizeof(s->origin), "%s", v);
		s->fence = natsMsg_GetSequence(last);
		natsMsg_Destroy(last);
	} else if (st != NATS_NOT_FOUND) {
		char why[300];

		rec_log(REC_LOG_ERROR, "JetStream: cannot read the last record of %s: %s",
			s->subject, js_error(st, je, why, sizeof(why)));
		free(s);
		return -EIO;
	}
	s->fence_at = *next_seq;
	h = find_hole(js, host, id);
	if (h && h->seq < *next_seq) {
		rec_log(REC_LOG_INFO, "JetStream: %s/%s resumes at record %llu, not stored "
			"when its last connection ended", host, id, (unsigned long long)h->seq);
		*next_seq = h->seq;
		*complete = false;
	}
	s->stored = *next_seq - 1;
	s->next_pub = *next_seq;
	s->next = js->streams;
	js->streams = s;
	*out = s;
	return 0;
}

/* Sends record seq to JetStream now (asynchronously). 0, or -EIO with
 * s->err set. */
static int send_record(struct rec_js_stream *s, uint64_t seq, enum prec_record_kind kind,
		       const void *data, size_t len)
{
	struct rec_js *js = s->js;
	natsMsg *m = NULL;
	jsPubOptions po;
	char id[200], num[24], key[24], top[24];
	jsErrCode je = 0;
	natsStatus st;

	if (no_gap(s, seq) < 0)
		return -EIO;
	if (js->o.no_reconnect_buffer &&
	    natsConnection_Status(js->nc) != NATS_CONN_STATUS_CONNECTED) {
		/* nats.h documents a reconnect buffer size of 0 as "the
		 * default" (8 MB): the no_gap() rule does not rest on libnats
		 * taking it literally. A reconnect that starts after this
		 * check meets the zero buffer. */
		snprintf(s->err, sizeof(s->err), "not connected to NATS (reconnecting): "
			 "resend from record %llu", (unsigned long long)s->stored + 1);
		return -EIO;
	}
	rec_js_msg_id(s->host, s->id, seq, id, sizeof(id));
	snprintf(num, sizeof(num), "%llu", (unsigned long long)seq);
	snprintf(key, sizeof(key), "%llu", (unsigned long long)s->key);
	/* below what the subject held at open (a hole being filled): say
	 * how far it reached, for the next open to read past this record */
	snprintf(top, sizeof(top), "%llu", (unsigned long long)(s->fence_at - 1));
	if (natsMsg_Create(&m, s->subject, NULL, data, (int)len) != NATS_OK ||
	    natsMsgHeader_Set(m, "Perfrec-Host", s->host) != NATS_OK ||
	    natsMsgHeader_Set(m, "Perfrec-Session", s->id) != NATS_OK ||
	    natsMsgHeader_Set(m, "Perfrec-Seq", num) != NATS_OK ||
	    natsMsgHeader_Set(m, "Perfrec-Kind", rec_js_kind_name(kind)) != NATS_OK ||
	    natsMsgHeader_Set(m, "Perfrec-Key", key) != NATS_OK ||
	    (seq < s->fence_at && natsMsgHeader_Set(m, "Perfrec-Top", top) != NATS_OK) ||
	    (s->origin[0] && natsMsgHeader_Set(m, "Perfrec-Origin", s->origin) != NATS_OK)) {
		natsMsg_Destroy(m);
		snprintf(s->err, sizeof(s->err), "out of memory");
		return -EIO;
	}
	jsPubOptions_Init(&po);
	po.MsgId = id;
	po.MaxWait = publish_wait_ms(js);
	if (!s->fenced && seq >= s->fence_at) {
		/* nobody appended to this stream since we read its end */
		if (s->fence)
			po.ExpectLastSubjectSeq = s->fence;
		else
			po.ExpectNoMessage = true;
		s->fenced = true;
	}
	st = js_PublishMsgAsync(js->ctx, &m, &po);
	if (st != NATS_OK) {
		char why[300];

		natsMsg_Destroy(m);
		snprintf(s->err, sizeof(s->err), "JetStream publish: %.150s",
			 js_error(st, je, why, sizeof(why)));
		return -EIO;
	}
	s->inflight += len;
	js->inflight += len;
	if (!s->first_sent || seq < s->first_sent)
		s->first_sent = seq;
	return 0;
}

/* The fence (the subject's last sequence as read at open, ExpectLastSubjectSeq)
 * goes on the first record above what the stream held then: after a
 * rewind, the records below it are resent and mostly duplicates, which
 * JetStream drops before it evaluates any expectation. That record waits
 * until every one below it is answered, so that the fence counts the
 * resent records that filled holes (each became the subject's last
 * message). */
static bool fence_ready(const struct rec_js_stream *s, uint64_t seq)
{
	return s->fenced || seq < s->fence_at || s->stored + 1 >= seq;
}

/* Whether record seq, len bytes, may be sent now: within the bounds, or
 * the only one in flight (a record is never held back for good), and
 * not the fence's record before its time. */
static bool room(const struct rec_js_stream *s, uint64_t seq, size_t len)
{
	if (!fence_ready(s, seq))
		return false;
	return !s->inflight || (s->inflight + len <= MAX_INFLIGHT_STREAM &&
				s->js->inflight + len <= MAX_INFLIGHT_TOTAL);
}

/* Sends what waits in the queue, in order, while there is room. */
static void pump(struct rec_js_stream *s)
{
	struct pending *p;

	while ((p = s->qhead) && !s->err[0] && room(s, p->seq, p->len)) {
		if (send_record(s, p->seq, p->kind, p->data, p->len) < 0)
			return;
		s->qhead = p->next;
		if (!s->qhead)
			s->qtail = NULL;
		s->queued -= p->len;
		free(p);
	}
}

static void drop_queue(struct rec_js_stream *s)
{
	while (s->qhead) {
		struct pending *p = s->qhead;

		s->qhead = p->next;
		free(p);
	}
	s->qtail = NULL;
	s->queued = 0;
}

int rec_js_publish(struct rec_js_stream *s, uint64_t seq, enum prec_record_kind kind,
		   const void *data, size_t len)
{
	struct rec_js *js = s->js;
	struct pending *p;

	if (seq < s->next_pub)
		return 0;   /* stored already (or in flight) */
	if (s->err[0])
		return -EIO;
	if ((int64_t)len > rec_js_max_payload(js)) {
		snprintf(s->err, sizeof(s->err), "record %llu is %zu bytes, above the NATS "
			 "servers' max_payload of %lld bytes", (unsigned long long)seq, len,
			 (long long)rec_js_max_payload(js));
		return -EMSGSIZE;
	}
	if (!s->qhead && room(s, seq, len)) {
		if (send_record(s, seq, kind, data, len) < 0)
			return -EIO;
		s->next_pub = seq + 1;
		return 0;
	}
	if (s->queued + len > MAX_QUEUED) {
		snprintf(s->err, sizeof(s->err), "JetStream takes records slower than they "
			 "come: %zu bytes wait to be sent; resend later", s->queued);
		return -EIO;
	}
	p = malloc(sizeof(*p) + len);
	if (!p) {
		snprintf(s->err, sizeof(s->err), "out of memory");
		return -EIO;
	}
	p->next = NULL;
	p->seq = seq;
	p->kind = kind;
	p->len = len;
	memcpy(p->data, data, len);
	if (s->qtail)
		s->qtail->next = p;
	else
		s->qhead = p;
	s->qtail = p;
	s->queued += len;
	s->next_pub = seq + 1;
	return 0;
}

const char *rec_js_stream_origin(const struct rec_js_stream *s)
{
	return s->origin;
}

void rec_js_stream_set_origin(struct rec_js_stream *s, const char *origin)
{
	snprintf(s->origin, sizeof(s->origin), "%s", origin);
}

void rec_js_stream_rewind(struct rec_js_stream *s, uint64_t seq)
{
	if (!seq || seq >= s->next_pub)
		return;
	drop_queue(s);   /* called at the hello: nothing was queued */
	s->next_pub = seq;
	if (s->stored >= seq)
		s->stored = seq - 1;
	s->ndone = 0;
}

uint64_t rec_js_stream_stored(const struct rec_js_stream *s)
{
	return s->stored;
}

const char *rec_js_stream_error(const struct rec_js_stream *s)
{
	return s->err[0] ? s->err : NULL;
}

void rec_js_stream_close(struct rec_js_stream *s)
{
	struct rec_js_stream **pp;

	if (!s)
		return;
	remember_hole(s);
	for (pp = &s->js->streams; *pp && *pp != s; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = s->next;
	drop_queue(s);
	free(s->done);
	free(s);
}

void rec_js_free(struct rec_js *js)
{
	if (!js)
		return;
	while (js->streams)
		rec_js_stream_close(js->streams);
	if (js->ctx) {
		jsPubOptions po;

		jsPubOptions_Init(&po);
		po.MaxWait = 2000;
		js_PublishAsyncComplete(js->ctx, &po);
		jsCtx_Destroy(js->ctx);
	}
	if (js->nc) {
		natsConnection_Close(js->nc);
		natsConnection_Destroy(js->nc);
	}
	if (js->efd >= 0)
		close(js->efd);
	natsStatistics_Destroy(js->stats);
	free(js->q);
	free(js->holes);
	pthread_mutex_destroy(&js->lock);
	free(js);
}

/* ---- consumer */

struct rec_js_consumer {
	struct rec_js *js;
	natsSubscription *sub;
	natsMsgList list;
	bool no_ack;                 /* a subject reader's */
};

int rec_js_consumer_open(struct rec_js *js, const char *durable, uint32_t ack_wait_ms,
			 struct rec_js_consumer **out)
{
	struct rec_js_consumer *c = calloc(1, sizeof(*c));
	jsSubOptions so;
	jsErrCode je = 0;
	char subj[80], why[300];
	natsStatus st;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->js = js;
	snprintf(subj, sizeof(subj), "%s.>", js->stream);
	jsSubOptions_Init(&so);
	so.Stream = js->stream;
	so.ManualAck = true;
	so.Config.AckPolicy = js_AckExplicit;
	so.Config.AckWait = (int64_t)(ack_wait_ms ? ack_wait_ms : 30000) * 1000000;
	so.Config.MaxAckPending = 4096;
	so.Config.Durable = durable;
	st = js_PullSubscribe(&c->sub, js->ctx, subj, durable, NULL, &so, &je);
	for (int i = 0; i < RETRIES && st != NATS_OK && forming(st, je); i++) {
		usleep(RETRY_WAIT_US);
		je = 0;
		st = js_PullSubscribe(&c->sub, js->ctx, subj, durable, NULL, &so, &je);
	}
	if (st != NATS_OK) {
		rec_log(REC_LOG_ERROR, "JetStream consumer %s on %s at %s: %s", durable,
			js->stream, js->urls, js_error(st, je, why, sizeof(why)));
		free(c);
		return -EIO;
	}
	*out = c;
	return 0;
}

int rec_js_subject_reader(struct rec_js *js, const char *host, const char *id,
			  uint64_t from, struct rec_js_consumer **out)
{
	struct rec_js_consumer *c = calloc(1, sizeof(*c));
	jsSubOptions so;
	jsErrCode je = 0;
	char subj[300], why[300];
	natsStatus st;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	if (!rec_js_subject(js->stream, host, id, subj, sizeof(subj))) {
		free(c);
		return -ENAMETOOLONG;
	}
	c->js = js;
	c->no_ack = true;
	jsSubOptions_Init(&so);
	so.Stream = js->stream;
	so.Config.AckPolicy = js_AckNone;
	so.Config.DeliverPolicy = js_DeliverByStartSequence;
	so.Config.OptStartSeq = from;
	st = js_PullSubscribe(&c->sub, js->ctx, subj, NULL, NULL, &so, &je);
	if (st != NATS_OK) {
		rec_log(REC_LOG_WARN, "JetStream: cannot read %s from %llu at %s: %s", subj,
			(unsigned long long)from, js->urls, js_error(st, je, why, sizeof(why)));
		free(c);
		return -EIO;
	}
	*out = c;
	return 0;
}

static const char *header(natsMsg *m, const char *key)
{
	const char *v = NULL;

	return natsMsgHeader_Get(m, key, &v) == NATS_OK ? v : NULL;
}

int rec_js_fetch(struct rec_js_consumer *c, struct rec_js_msg *msgs, int max,
		 int timeout_ms)
{
	jsErrCode je = 0;
	natsStatus st;
	int n = 0;

	memset(&c->list, 0, sizeof(c->list));
	st = natsSubscription_Fetch(&c->list, c->sub, max, timeout_ms, &je);
	if (st == NATS_TIMEOUT)
		return 0;
	if (st != NATS_OK) {
		char why[300];

		rec_log(REC_LOG_WARN, "JetStream fetch at %s: %s", c->js->urls,
			js_error(st, je, why, sizeof(why)));
		natsMsgList_Destroy(&c->list);
		return -EIO;
	}
	for (int i = 0; i < c->list.Count && n < max; i++) {
		natsMsg *m = c->list.Msgs[i];
		const char *seq = header(m, "Perfrec-Seq");
		jsMsgMetaData *meta = NULL;

		c->list.Msgs[i] = NULL;   /* ours now: freed by rec_js_msg_done */
		msgs[n].host = header(m, "Perfrec-Host");
		msgs[n].id = header(m, "Perfrec-Session");
		msgs[n].kind = header(m, "Perfrec-Kind");
		msgs[n].seq = seq ? strtoull(seq, NULL, 10) : 0;
		msgs[n].data = natsMsg_GetData(m);
		msgs[n].len = (size_t)natsMsg_GetDataLength(m);
		msgs[n].handle = m;
		msgs[n].no_answer = c->no_ack;
		msgs[n].stream_seq = 0;
		msgs[n].pending = 0;
		if (natsMsg_GetMetaData(&meta, m) == NATS_OK) {
			msgs[n].stream_seq = meta->Sequence.Stream;
			msgs[n].pending = meta->NumPending;
			jsMsgMetaData_Destroy(meta);
		}
		n++;
	}
	natsMsgList_Destroy(&c->list);
	return n;
}

void rec_js_msg_done(struct rec_js_msg *m, enum rec_js_verdict v, uint32_t delay_ms)
{
	natsMsg *nm = m->handle;

	if (!nm)
		return;
	if (!m->no_answer && v == REC_JS_ACK)   /* a subject reader's take none */
		natsMsg_Ack(nm, NULL);
	else if (!m->no_answer && v == REC_JS_RETRY)
		natsMsg_NakWithDelay(nm, (int64_t)delay_ms, NULL);
	else if (!m->no_answer)
		natsMsg_Term(nm, NULL);
	natsMsg_Destroy(nm);
	m->handle = NULL;
}

void rec_js_consumer_close(struct rec_js_consumer *c)
{
	if (!c)
		return;
	if (c->no_ack)   /* a reader's consumer is ephemeral: removed now */
		natsSubscription_Unsubscribe(c->sub);
	natsSubscription_Destroy(c->sub);
	free(c);
}
