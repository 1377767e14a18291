/*
 * sender.h - `perfrec record --to`: a sink (format/sink.h) that streams
 * the records a file would hold to a collector, and never loses or
 * duplicates one across reconnects.
 *
 * The recording's writer writes into rec_sender_sink() as it would into a
 * file; each record (header, frame, index) is copied into a bounded spool
 * of unacknowledged records and numbered (seq 1 = the header). A thread of
 * the sender's own connects (jittered backoff), says hello, resends from
 * the collector's resume point (Welcome.next_seq) and frees records as the
 * collector acknowledges them (after its fdatasync). The writer is never
 * blocked by the network: when the spool is full, the new record is
 * dropped and counted (rec_sender_take_drops(): the recording writes that
 * loss into the trace); the file header is always kept. A stream that lost
 * records ends without its index (its offsets would not match).
 *
 * How to use:
 *
 *   rec_sender_new(&opts, &s);                    // starts the thread
 *   w = prec_writer_new(rec_sender_sink(s), ...); // or a tee with a file
 *   ... record; now and then rec_sender_take_drops(s, &d) ...
 *   prec_writer_close(w);                         // the index goes out
 *   rec_sender_finish(s, timeout_ms);             // waits for the acks
 *   rec_sender_stats(s, &st);                     // for the summary
 *   rec_sender_free(s);
 *
 * Thread safety: the sink is written by one thread (the writer's); stats,
 * take_drops and finish may be called from that thread or another.
 *
 * Ownership: the options' strings and token are copied by new(); the TLS
 * context is borrowed and must outlive the sender.
 */
#ifndef REC_SENDER_H
#define REC_SENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/sink.h"

struct rec_tls;

struct rec_sender_opts {
	size_t sz;                   /* sizeof(struct rec_sender_opts) */
	const char *to;              /* "HOST:PORT" of the collector, or a
				      * comma-separated list: on failure the
				      * next one is tried (collectors that
				      * share a store, e.g. JetStream) */
	const char *host;            /* this host's name; NULL = hostname,
				      * made safe for a path */
	const char *session_id;      /* NULL = generated (UTC time + random) */
	const void *token;           /* sent in the hello, or NULL */
	size_t token_len;
	struct rec_tls *tls;         /* client TLS, or NULL (plain TCP) */
	uint64_t spool_bytes;        /* unacknowledged bytes kept; 0 = 64 MiB */
	uint32_t connect_timeout_ms; /* 0 = 5000 */
	uint32_t backoff_max_ms;     /* reconnect delay cap; 0 = 5000 */
	uint64_t frame_bytes;        /* the writer's frame size (told in the
				      * hello), 0 = not told */
	bool frame_adapts;           /* frame_bytes is a default: the writer
				      * takes rec_sender_frame_size()'s */
};

#define REC_SENDER_OPTS_INIT { .sz = sizeof(struct rec_sender_opts) }

struct rec_sender;

/* 0 and *out (the thread is connecting), or -errno (logged). */
int rec_sender_new(const struct rec_sender_opts *o, struct rec_sender **out);
/* The sink the writer writes into. Owned by the sender. */
struct prec_sink *rec_sender_sink(struct rec_sender *s);
/* The session id in use (generated or given). */
const char *rec_sender_session(const struct rec_sender *s);

/* The frame size the writer is to use, called once before the
 * recording cuts its first frame. With opts.frame_adapts, it waits up to
 * reach_ms for the first connection to reach the collector (TCP
 * connected; a collector that does not answer a SYN, or a dead address
 * of --to, costs the recording's start no more), then up to wait_ms in
 * all for the collector's first answer (a Welcome, a refusal, a failed
 * connection: whichever comes first), and returns the lower of
 * frame_bytes and the Welcome's max_frame_bytes; with no Welcome by then,
 * the lower of frame_bytes and REC_WIRE_FRAME_UNHEARD. The size is then
 * fixed: every later hello tells it, not adapting, and a Welcome that
 * arrives later with a lower limit ends the stream as a definitive
 * refusal would. Without frame_adapts: opts.frame_bytes, at once. */
uint64_t rec_sender_frame_size(struct rec_sender *s, uint32_t reach_ms,
			       uint32_t wait_ms);

/* Sends what is left, then Finish; waits until the collector has
 * acknowledged everything, for at most timeout_ms. 0, -ETIMEDOUT
 * (records still unacknowledged: they are lost when the process ends;
 * logged with the count) or -ECONNREFUSED (a definitive refusal ended the
 * stream: rec_sender_refused() gives the reason; not logged here). */
int rec_sender_finish(struct rec_sender *s, uint32_t timeout_ms);

struct rec_sender_stats {
	uint64_t records, bytes;          /* handed to the sink */
	uint64_t sent, sent_bytes;        /* sent at least once */
	uint64_t acked, acked_bytes;      /* acknowledged by the collector */
	uint64_t resent;                  /* sent again after a reconnect */
	uint64_t dropped, dropped_bytes;  /* not kept: the spool was full */
	uint64_t connects;                /* connections that got a welcome */
	uint64_t spool_used, spool_peak;  /* unacknowledged bytes */
	bool connected;
	char last_error[256];             /* why the last connection ended */
};
void rec_sender_stats(struct rec_sender *s, struct rec_sender_stats *st);

/* A refusal that no reconnect can change (Refusal.definitive: bad token,
 * frame size, names, protocol version) ends the stream at once: the
 * thread stops, the spool is freed, and the sink takes every further
 * record without keeping it (the writer, and a file it tees into, go on).
 * Transient refusals and lost connections are retried with the backoff.
 * true and the reason ("refused by the collector: ...") once that
 * happened. */
bool rec_sender_refused(struct rec_sender *s, char *why, size_t len);

struct rec_sender_drops {
	uint64_t records, bytes, packets;
	uint64_t t_min, t_max;            /* the dropped frames' time range */
};
/* Drops since the last call: true and *d when there were some. */
bool rec_sender_take_drops(struct rec_sender *s, struct rec_sender_drops *d);

void rec_sender_free(struct rec_sender *s);   /* NULL is fine */

#endif
