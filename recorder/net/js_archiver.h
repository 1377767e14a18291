/*
 * js_archiver.h - `perfrec archive`: JetStream to files. A durable pull
 * consumer shared by every archiver (so several share the work) takes the
 * records collectors published and appends each to
 * DIR/<host>/<session>.prec (net/archive_file.h), acknowledging a message only
 * after its bytes are fdatasync'ed. A record delivered twice (a redelivery
 * after a crash, a duplicate in the stream) is written once: the file's
 * own record count is the truth. A record that comes before its
 * predecessors (a hole in the JetStream stream) is acknowledged unwritten
 * and read again from the stream once the file reaches it (see
 * js_archiver.c); one whose file another archiver holds is handed back. A file is closed once its index is in, or after it has
 * been idle, so another archiver can take the stream. A file resumes as
 * net/archive_file.h says (disk damage inside it kept and logged, never cut);
 * one whose damage hides its record count is not written: its messages
 * are handed back every 30 s until it is moved aside.
 *
 * With load_clickhouse(_file), each file is handed to a `perfrec-analyze load`
 * subprocess once complete and closed (net/archive_load.h), without
 * waiting for it.
 *
 * How to use:
 *   rec_js_archiver_new(&opts, &a);    // connects, binds the consumer
 *   rec_js_archiver_run(a);            // until rec_js_archiver_stop()
 *   rec_js_archiver_free(a);           // files synced and closed, loads
 *                                      // waited for (bounded)
 */
#ifndef REC_JS_ARCHIVER_H
#define REC_JS_ARCHIVER_H

#include <stddef.h>
#include <stdint.h>

struct rec_js_archiver_opts {
	size_t sz;                  /* sizeof(struct rec_js_archiver_opts) */
	const char *urls;           /* NATS servers, comma-separated */
	const char *stream;         /* NULL = "PERFREC" */
	const char *dir;            /* archive root */
	const char *durable;        /* consumer name; NULL = "perfrec-archive" */
	int replicas;               /* if the stream must be created; 0 = 3 */
	uint32_t ack_wait_ms;       /* redelivery of unacked messages; 0 = 30000 */
	uint32_t idle_close_ms;     /* close a quiet file after; 0 = 10000 */
	int batch;                  /* messages per fetch; 0 = 256 */
	/* Each completed file loaded into ClickHouse (net/archive_load.h)
	 * when load_clickhouse (its HTTP URLs) or load_clickhouse_file (a
	 * file of them) is set: */
	const char *load_clickhouse;
	const char *analyzer;       /* perfrec-analyze: a path, or a name in PATH */
	int load_jobs;              /* loads at once; 0 = 2 */
	const char *load_clickhouse_file;
};

#define REC_JS_ARCHIVER_OPTS_INIT { .sz = sizeof(struct rec_js_archiver_opts) }

struct rec_js_archiver;

int rec_js_archiver_new(const struct rec_js_archiver_opts *o, struct rec_js_archiver **out);
/* Serves until stopped: 0, or -errno when the consumer fails for good. */
int rec_js_archiver_run(struct rec_js_archiver *a);
void rec_js_archiver_stop(struct rec_js_archiver *a);   /* async-signal-safe */

struct rec_js_archiver_stats {
	uint64_t messages, written, bytes, duplicates, retried, dropped;
	uint64_t early;             /* acknowledged before their turn, read again later */
	uint64_t streams, completed;
	uint64_t loaded, load_failures, load_waiting;   /* with load_clickhouse */
};
void rec_js_archiver_stats(const struct rec_js_archiver *a, struct rec_js_archiver_stats *st);
void rec_js_archiver_free(struct rec_js_archiver *a);   /* NULL is fine */

/* ---- the batch step, without NATS (what run() does per fetch; tests) */

struct rec_js_msg;
enum rec_js_verdict;

/* An archiver with no connection, writing under dir. */
int rec_js_archiver_new_local(const char *dir, struct rec_js_archiver **out);
/* Takes a batch: appends what is next for each file, syncs the files
 * written, and says per message what to answer (verdicts[i], delays[i]):
 * acknowledge (written now or before), retry later (out of order, file
 * busy, disk error: nothing of a batch whose sync failed is acknowledged)
 * or drop (not a valid record message). */
void rec_js_archiver_take(struct rec_js_archiver *a, struct rec_js_msg *msgs, int n,
			  enum rec_js_verdict *verdicts, uint32_t *delays);

#endif
