/*
 * archiver.c - JetStream records into session files; see archiver.h.
 *
 * One loop: fetch a batch, append what is next for its file, then sync
 * every file touched and only then ack the batch's messages. A crash
 * between the sync and the acks costs redeliveries, which the files'
 * record counts turn into duplicates: nothing is written twice.
 */
#include "recorder/net/js_archiver.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/base/clock.h"
#include "format/base/opts.h"
#include "format/record.h"
#include "recorder/log.h"
#include "recorder/net/archive_file.h"
#include "recorder/net/jetstream.h"
#include "recorder/net/wire.h"

#define FETCH_WAIT_MS 500
#define MAX_BATCH 1024

/* A file whose damage hides its record count (rec_archive_file_open() says
 * -EUCLEAN) is not scanned again for every message: its messages are
 * handed back for this long, then the open is tried again (an operator
 * may have moved the file aside meanwhile). */
#define REFUSED_RETRY_MS 30000

struct afile {
	char host[65], id[65];
	struct rec_archive_file a;
	uint64_t last_use;
	uint64_t refused_until;   /* not open (a.fd < 0) until then */
	bool touched;
	struct afile *next;
};

struct rec_js_archiver {
	struct rec_js_archiver_opts o;
	struct rec_js *js;
	struct rec_js_consumer *cons;
	struct afile *files;
	volatile sig_atomic_t stop;
	struct rec_js_archiver_stats st;
	struct rec_js_msg msgs[MAX_BATCH];
	enum rec_js_verdict verdict[MAX_BATCH];
	uint32_t delay[MAX_BATCH];
};


int rec_js_archiver_new(const struct rec_js_archiver_opts *o, struct rec_js_archiver **out)
{
	struct rec_js_archiver *a = calloc(1, sizeof(*a));
	struct rec_js_opts jo = REC_JS_OPTS_INIT;
	int ret;

	*out = NULL;
	if (!a)
		return -ENOMEM;
	if (prec_opts_copy(&a->o, sizeof(a->o), o) < 0 || !a->o.dir) {
		free(a);
		return -EINVAL;
	}
	if (!a->o.batch || a->o.batch > MAX_BATCH)
		a->o.batch = a->o.batch > MAX_BATCH ? MAX_BATCH : 256;
	jo.urls = a->o.urls;
	jo.stream = a->o.stream;
	jo.replicas = a->o.replicas;
	ret = rec_js_connect(&jo, &a->js);
	if (ret < 0)
		goto err;
	ret = rec_js_consumer_open(a->js, a->o.durable ? a->o.durable : "perfrec-archive",
				   a->o.ack_wait_ms, &a->cons);
	if (ret < 0)
		goto err;
	*out = a;
	return 0;
err:
	rec_js_archiver_free(a);
	return ret;
}

static void close_file(struct rec_js_archiver *a, struct afile *f)
{
	struct afile **pp = &a->files;

	if (f->a.fd >= 0) {
		rec_archive_file_sync(&f->a);
		rec_archive_file_close(&f->a);
	}
	while (*pp && *pp != f)
		pp = &(*pp)->next;
	if (*pp)
		*pp = f->next;
	free(f);
}

/* The open file of host/session, opened (or resumed) when needed; NULL
 * and *delay (when to hand its message back) while another archiver
 * holds it or it cannot be resumed. */
static struct afile *file_of(struct rec_js_archiver *a, const char *host, const char *id,
			     uint32_t *delay)
{
	struct afile *f;
	int ret;

	*delay = 2000;
	for (f = a->files; f; f = f->next)
		if (!strcmp(f->host, host) && !strcmp(f->id, id))
			break;
	if (f && !f->refused_until)
		return f;
	if (f && prec_now_ms() < f->refused_until) {
		*delay = REFUSED_RETRY_MS;
		return NULL;
	}
	if (f)
		close_file(a, f);   /* its time is up: try again */
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	snprintf(f->host, sizeof(f->host), "%s", host);
	snprintf(f->id, sizeof(f->id), "%s", id);
	ret = rec_archive_file_open(a->o.dir, host, id, &f->a);
	if (ret == -EBUSY)
		*delay = 1000;   /* another archiver has it: later, maybe to it */
	if (ret < 0 && ret != -EUCLEAN) {
		free(f);
		return NULL;
	}
	f->next = a->files;
	a->files = f;
	if (ret == -EUCLEAN) {
		f->refused_until = prec_now_ms() + REFUSED_RETRY_MS;
		*delay = REFUSED_RETRY_MS;
		return NULL;
	}
	a->st.streams++;
	return f;
}

/* What to answer for one message. */
static enum rec_js_verdict take(struct rec_js_archiver *a, struct rec_js_msg *m,
				uint32_t *delay)
{
	struct afile *f;
	int ret;

	*delay = 0;
	a->st.messages++;
	if (!m->host || !m->id || !rec_wire_name_ok(m->host) ||
	    !rec_wire_name_ok(m->id) || !m->seq) {
		rec_log(REC_LOG_WARN, "archive: a message without valid Perfrec headers "
			"(host, session, seq): dropped");
		a->st.dropped++;
		return REC_JS_DROP;
	}
	f = file_of(a, m->host, m->id, delay);
	if (!f) {
		a->st.retried++;
		return REC_JS_RETRY;
	}
	*delay = 0;
	f->last_use = prec_now_ms();
	if (m->seq < f->a.next_seq) {
		a->st.duplicates++;
		return REC_JS_ACK;
	}
	if (m->seq > f->a.next_seq) {
		*delay = 200;   /* its predecessors are on their way */
		a->st.retried++;
		return REC_JS_RETRY;
	}
	ret = rec_archive_file_append(&f->a, m->data, m->len);
	if (ret == -EBADMSG) {
		rec_log(REC_LOG_WARN, "archive: %s/%s record %llu is not a file record: "
			"dropped (the file stops before it)", m->host, m->id,
			(unsigned long long)m->seq);
		a->st.dropped++;
		return REC_JS_DROP;
	}
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "archive: writing %s: %s", f->a.path, strerror(-ret));
		*delay = 5000;
		a->st.retried++;
		return REC_JS_RETRY;
	}
	f->touched = true;
	a->st.written++;
	a->st.bytes += m->len;
	return REC_JS_ACK;
}

/* Syncs every file the batch wrote; false when one failed (then nothing
 * of the batch is acknowledged: it comes again). */
static bool sync_touched(struct rec_js_archiver *a)
{
	bool ok = true;

	for (struct afile *f = a->files; f; f = f->next) {
		int ret;

		if (!f->touched)
			continue;
		f->touched = false;
		ret = rec_archive_file_sync(&f->a);
		if (ret < 0) {
			rec_log(REC_LOG_ERROR, "archive: syncing %s: %s", f->a.path,
				strerror(-ret));
			ok = false;
		}
	}
	return ok;
}

/* Complete files are done; idle ones are released for other archivers. */
static void close_done(struct rec_js_archiver *a)
{
	uint64_t idle = a->o.idle_close_ms ? a->o.idle_close_ms : 10000, now = prec_now_ms();
	struct afile *f = a->files, *next;

	for (; f; f = next) {
		next = f->next;
		if (f->refused_until) {
			continue;   /* file_of() retries it when its time is up */
		} else if (f->a.complete) {
			rec_log(REC_LOG_INFO, "archive: %s complete (%llu records)", f->a.path,
				(unsigned long long)(f->a.next_seq - 1));
			a->st.completed++;
			close_file(a, f);
		} else if (now - f->last_use > idle) {
			close_file(a, f);
		}
	}
}

int rec_js_archiver_new_local(const char *dir, struct rec_js_archiver **out)
{
	struct rec_js_archiver *a = calloc(1, sizeof(*a));

	*out = NULL;
	if (!a)
		return -ENOMEM;
	a->o.sz = sizeof(a->o);
	a->o.dir = dir;
	a->o.batch = 256;
	*out = a;
	return 0;
}

void rec_js_archiver_take(struct rec_js_archiver *a, struct rec_js_msg *msgs, int n,
		       enum rec_js_verdict *verdicts, uint32_t *delays)
{
	bool synced;

	for (int i = 0; i < n; i++)
		verdicts[i] = take(a, &msgs[i], &delays[i]);
	synced = sync_touched(a);
	for (int i = 0; i < n; i++)
		if (!synced && verdicts[i] == REC_JS_ACK) {
			verdicts[i] = REC_JS_RETRY;
			delays[i] = 1000;
		}
	close_done(a);
}

int rec_js_archiver_run(struct rec_js_archiver *a)
{
	int failures = 0;

	while (!a->stop) {
		int n = rec_js_fetch(a->cons, a->msgs, a->o.batch, FETCH_WAIT_MS);

		if (n < 0) {
			/* the servers are reconnecting: keep trying */
			if (++failures > 600)
				return n;
			struct timespec t = { 0, 100 * 1000000L };

			nanosleep(&t, NULL);
			continue;
		}
		failures = 0;
		rec_js_archiver_take(a, a->msgs, n, a->verdict, a->delay);
		for (int i = 0; i < n; i++)
			rec_js_msg_done(&a->msgs[i], a->verdict[i],
					a->delay[i] ? a->delay[i] : 1000);
	}
	return 0;
}

void rec_js_archiver_stop(struct rec_js_archiver *a)
{
	a->stop = 1;
}

void rec_js_archiver_stats(const struct rec_js_archiver *a, struct rec_js_archiver_stats *st)
{
	*st = a->st;
}

void rec_js_archiver_free(struct rec_js_archiver *a)
{
	if (!a)
		return;
	while (a->files)
		close_file(a, a->files);
	rec_js_consumer_close(a->cons);
	rec_js_free(a->js);
	free(a);
}
