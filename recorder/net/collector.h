/*
 * collector.h - `perfrec collect`: the server recorders stream to. One
 * thread, non-blocking sockets, epoll; every stream's frames are appended
 * to its archive file (net/archive_file.h) and/or published to a JetStream
 * stream (net/jetstream.h), and acknowledged only once every store holds
 * them durably (fdatasync, JetStream's publish ack), so an acknowledged
 * frame survives a kill -9.
 *
 * How to use:
 *
 *   struct rec_collector_opts o = REC_COLLECTOR_OPTS_INIT;
 *   o.listen = "127.0.0.1:7777"; o.dir = "/srv/traces";
 *   rec_collector_new(&o, &c);        // binds and listens (errors logged)
 *   rec_collector_run(c);             // until rec_collector_stop()
 *   rec_collector_free(c);            // every open archive synced, closed
 *
 * rec_collector_stop() is async-signal-safe (a SIGTERM handler may call
 * it). Untrusted peers: a connection must say a valid hello within
 * hello_timeout_ms, and is read no further than a hello can be (4 KiB)
 * until then; after it a message is at most a file record (64 MiB) and
 * its bytes must keep coming (idle_timeout_ms); what all connections
 * buffer together stays within max_buffer (the one that would pass it is
 * refused); names are checked before they become paths; the token is
 * compared in constant time. A refused peer gets a Refusal with the
 * reason, and the collector logs it and goes on.
 *
 * Origins: a stream (host + session id) carries one recording. The hello
 * names it (stream_id); a hello of another recording is refused while the
 * stream is being sent, and when its store already holds records of another
 * one: the archive's DIR/<host>/.<session>.origin (written before the
 * file's first record), or JetStream's Perfrec-Origin header. The archive
 * file itself is created with its first record, not at the hello.
 */
#ifndef REC_COLLECTOR_H
#define REC_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rec_tls;
struct rec_js;

struct rec_collector_opts {
	size_t sz;                  /* sizeof(struct rec_collector_opts) */
	const char *listen;         /* "ADDR:PORT"; port 0 = any free port */
	const char *dir;            /* archive root, or NULL (JetStream only) */
	struct rec_js *js;          /* JetStream store (borrowed), or NULL */
	const void *token;          /* required from every hello, or NULL */
	size_t token_len;
	struct rec_tls *tls;        /* server TLS, or NULL (plain TCP) */
	unsigned max_streams;      /* at once; 0 = 256 */
	unsigned max_conns;         /* at once; 0 = 1024 */
	uint32_t hello_timeout_ms;  /* 0 = 5000 */
	uint32_t idle_timeout_ms;   /* a message must complete within; 0 = 60000 */
	size_t max_buffer;          /* bytes every connection's input together
				     * may hold; 0 = REC_COLLECTOR_MAX_BUFFER */
};

/* Room for 16 recorders each in the middle of a 64 MiB frame, or 1000 in
 * the middle of a default (1 MiB) one. */
#define REC_COLLECTOR_MAX_BUFFER ((size_t)1 << 30)

#define REC_COLLECTOR_OPTS_INIT { .sz = sizeof(struct rec_collector_opts) }

struct rec_collector;

/* The most streams (sessions) nofile open files serve, and the
 * connections (*conns) to allow with them: a stream holds its connection
 * and, with an archive directory, its file; connections still saying
 * hello, or replacing one that dropped, get an eighth more and 16; 64
 * files stay for the listening sockets, epoll, NATS and logs. At most
 * REC_COLLECTOR_STREAMS_CAP, at least 1. */
unsigned rec_collector_fit_streams(uint64_t nofile, bool dir, unsigned *conns);

/* Beyond this many sessions one collector's loop, which answers hellos
 * one at a time, is the limit rather than its files: more collectors
 * (docs/fleet.md). */
#define REC_COLLECTOR_STREAMS_CAP 16384u

int rec_collector_new(const struct rec_collector_opts *o, struct rec_collector **out);
/* The port it listens on (useful after port 0). */
int rec_collector_port(const struct rec_collector *c);
/* Serves until stopped. 0, or -errno when epoll itself fails. */
int rec_collector_run(struct rec_collector *c);
void rec_collector_stop(struct rec_collector *c);

struct rec_collector_stats {
	uint64_t accepted, refused, streams, open_streams;
	uint64_t frames, bytes, duplicates, acks, syncs;
	uint64_t buffered, buffered_peak;   /* bytes of connections' input
					     * buffers: now, and the most */
};
void rec_collector_stats(const struct rec_collector *c, struct rec_collector_stats *st);

void rec_collector_free(struct rec_collector *c);   /* NULL is fine */

/* For the fuzzer and tests: feeds bytes as if received on a fresh plain
 * connection (no socket; replies discarded), through hello, frames and
 * refusals, into c's directory. Returns how the connection ended: 0 still
 * open, 1 refused/closed. */
int rec_collector_feed(struct rec_collector *c, const void *bytes, size_t len);

#endif
