/*
 * jetstream.h - the collector's way into NATS JetStream (libnats): each
 * record a recorder streams becomes one message of a replicated JetStream
 * stream, and the recorder is acknowledged only once JetStream has stored
 * it. "Stream" alone is a recorder's (struct rec_js_stream: host and
 * session id, one subject); the JetStream stream that holds them all is
 * named by rec_js_opts.stream (rec_js_stream_name()).
 *
 * Naming (tested in tests/unit/recorder/net/test_jetstream.c):
 *   subject  <JetStream stream>.<host>.<session>, each name escaped into one NATS
 *            token: '_' -> "_u", '.' -> "_d" (so "a.b" and "a_b" never
 *            share a subject, and the subject's per-subject sequence is
 *            one stream's)
 *   msg id   <host>/<session>/<seq> (JetStream drops a message whose id
 *            it stored within the duplicate window: a record resent after
 *            a reconnect, or published by two collectors)
 *   headers  Perfrec-Host, Perfrec-Session, Perfrec-Seq, Perfrec-Kind
 *            (header | frame | index): what an archiver needs, without
 *            parsing the subject; Perfrec-Origin: the recording's
 *            stream id in hex (Hello.stream_id), absent when its recorder did not
 *            say one, so a stream's last message names the recording
 *            its records belong to
 *
 * Fencing: the first record above what the JetStream stream held at the
 * hello carries the expected last subject sequence the collector read
 * then (records resent below it are mostly duplicates, which JetStream
 * drops unevaluated); a second collector that appended in between makes
 * it fail, and the recorder is sent away to reconnect and learn the new
 * resume point.
 *
 * Publishing is asynchronous (libnats' own threads): results come back
 * through an eventfd (rec_js_pollfd) and rec_js_poll() applies them on
 * the caller's thread: per stream, the highest seq below which every
 * record is stored.
 *
 * How to use (collector):
 *   rec_js_connect(&o, &js);                   // URLs, JetStream stream
 *   rec_js_stream_open(js, host, id, &s, &next, &complete);
 *   rec_js_publish(s, seq, kind, bytes, len);   // per frame
 *   on rec_js_pollfd(js) readable: rec_js_poll(js);
 *       rec_js_stream_stored(s): ack the recorder up to it
 *       rec_js_stream_error(s): non-NULL: stop acking, send it away
 *   rec_js_stream_close(s);   rec_js_free(js);
 */
#ifndef REC_JETSTREAM_H
#define REC_JETSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/record.h"

#define REC_JS_DEFAULT_STREAM "PERFREC"

struct rec_js_opts {
	size_t sz;                 /* sizeof(struct rec_js_opts) */
	const char *urls;          /* "nats://h1:4222,nats://h2:4222" */
	const char *stream;        /* NULL = REC_JS_DEFAULT_STREAM */
	int replicas;              /* when the JetStream stream is made; 0 = 3 */
	bool create;               /* create the JetStream stream when missing */
	uint32_t timeout_ms;       /* connect and API calls; 0 = 5000 */
	/* Publishes and requests fail at once while the connection is
	 * re-established, instead of waiting in libnats' reconnect buffer:
	 * for the collector, whose streams must reach the JetStream stream as a
	 * prefix (see jetstream.c); an archiver waits out an outage. */
	bool no_reconnect_buffer;
};

#define REC_JS_OPTS_INIT { .sz = sizeof(struct rec_js_opts), .create = true }

struct rec_js;
struct rec_js_stream;

/* Connects (trying every URL) and makes sure the JetStream stream exists.
 * 0, or a negative errno after logging what failed and the URLs tried. */
int rec_js_connect(const struct rec_js_opts *o, struct rec_js **out);
/* The largest message the servers take (their max_payload). */
int64_t rec_js_max_payload(const struct rec_js *js);
const char *rec_js_stream_name(const struct rec_js *js);
int rec_js_pollfd(const struct rec_js *js);
/* Applies the publish results that came in. */
void rec_js_poll(struct rec_js *js);
void rec_js_free(struct rec_js *js);   /* NULL is fine */

/* A stream's resume point: after the JetStream stream's last message,
 * or, when this stream's last connection ended with records not known
 * stored, the first of them (rec_js_stream_close() remembers it, per
 * host and session, until a later connection stored it): JetStream may
 * hold later records, and a recorder whose hello says no resend_from
 * would otherwise leave the hole for ever. 0, or a negative errno
 * (logged). */
int rec_js_stream_open(struct rec_js *js, const char *host, const char *id,
		       struct rec_js_stream **out, uint64_t *next_seq, bool *complete);
/* The origin (Perfrec-Origin) of the stream's last stored message, ""
 * when it has none or the stream holds nothing. */
const char *rec_js_stream_origin(const struct rec_js_stream *s);
/* The origin the stream's publishes carry from now on (copied; "" =
 * none). */
void rec_js_stream_set_origin(struct rec_js_stream *s, const char *origin);
/* Takes records again from seq (below the resume point the stream was
 * opened at): a hole JetStream may hold below its last record is
 * filled; records already stored come back as duplicates and are dropped
 * (message ids), or skipped by the archiver past the duplicate window. */
void rec_js_stream_rewind(struct rec_js_stream *s, uint64_t seq);
/* Publishes record seq (asynchronously). 0 or a negative errno:
 * -EMSGSIZE when the record is larger than the servers' max_payload (no
 * resend of it can succeed), -EIO otherwise (rec_js_stream_error()). */
int rec_js_publish(struct rec_js_stream *s, uint64_t seq, enum prec_record_kind kind,
		   const void *data, size_t len);
/* Every record <= this seq is stored in the JetStream stream. */
uint64_t rec_js_stream_stored(const struct rec_js_stream *s);
/* Why publishing failed, or NULL: acks must stop, the recorder reconnect. */
const char *rec_js_stream_error(const struct rec_js_stream *s);
void rec_js_stream_close(struct rec_js_stream *s);

/* ---- the archiver's side: a durable pull consumer shared by every
 * archiver (a work queue over the JetStream stream), acks explicit. */

struct rec_js_consumer;

struct rec_js_msg {
	const char *host, *id;           /* from the headers (untrusted) */
	uint64_t seq;
	uint64_t stream_seq;             /* where JetStream holds it; 0 = unknown */
	uint64_t pending;                /* messages after it for its consumer */
	const char *kind;
	const void *data;
	size_t len;
	void *handle;                   /* for ack / nak / free */
	bool no_answer;                 /* from a subject reader: freed only */
};

/* Binds to (creating when missing) the durable consumer of the JetStream stream.
 * ack_wait_ms: how long a delivered message waits for its ack before it
 * is delivered again (an archiver killed mid-batch). 0 or -errno. */
int rec_js_consumer_open(struct rec_js *js, const char *durable, uint32_t ack_wait_ms,
			 struct rec_js_consumer **out);
/* A reader of one stream's messages (its subject) from JetStream stream
 * sequence `from` on, in order: an ephemeral consumer with no acks, for
 * rec_js_fetch() (answers to its messages are ignored) and
 * rec_js_consumer_close(). 0 or -errno (logged). */
int rec_js_subject_reader(struct rec_js *js, const char *host, const char *id,
			  uint64_t from, struct rec_js_consumer **out);
/* Up to max messages into msgs, waiting at most timeout_ms. Returns the
 * count (0: none came), or -errno (logged). Each message must be given to
 * rec_js_msg_done(). */
int rec_js_fetch(struct rec_js_consumer *c, struct rec_js_msg *msgs, int max,
		 int timeout_ms);
enum rec_js_verdict {
	REC_JS_ACK,          /* stored (or already stored): never again */
	REC_JS_RETRY,        /* not now: deliver it again after delay_ms */
	REC_JS_DROP,         /* malformed: never again, not stored */
};
/* Answers for a message and frees it. */
void rec_js_msg_done(struct rec_js_msg *m, enum rec_js_verdict v, uint32_t delay_ms);
void rec_js_consumer_close(struct rec_js_consumer *c);

/* Names (exposed for tests and the archiver). "PERFREC.web_d01.s1" into
 * buf; returns its length, or 0 when it does not fit. */
size_t rec_js_subject(const char *stream, const char *host, const char *id,
		      char *buf, size_t len);
/* "web-01/s1/42" into buf. */
size_t rec_js_msg_id(const char *host, const char *id, uint64_t seq,
		     char *buf, size_t len);
const char *rec_js_kind_name(enum prec_record_kind kind);

#endif
