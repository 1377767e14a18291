/*
 * js_archiver.c - JetStream records into archive files; see js_archiver.h.
 *
 * One loop: fetch a batch, append what is next for its file, then sync
 * every file touched and only then ack the batch's messages. A crash
 * between the sync and the acks costs redeliveries, which the files'
 * record counts turn into duplicates: nothing is written twice.
 *
 * Records that come before their turn (a hole in the JetStream stream:
 * a record stored after one that was lost, until the collector resends
 * it) are acknowledged unwritten: handed back, they stayed pending
 * against the consumer's MaxAckPending (4096), and one hole with that
 * many records behind it stopped the delivery of every session. The
 * JetStream stream keeps them; the file remembers the stream sequence of
 * the first one (<file>.catchup, synced before the ack), and once the
 * file has caught up to it, the records are read again from the stream's
 * subject from there (catch_up()).
 */
#include "recorder/net/js_archiver.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format/base/clock.h"
#include "format/base/opts.h"
#include "format/record.h"
#include "recorder/log.h"
#include "recorder/net/archive_file.h"
#include "recorder/net/archive_load.h"
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
	uint64_t catchup;         /* stream sequence of the first record acked
				   * before its turn; 0 = none */
	uint64_t caught_at;       /* a.next_seq after the last catch_up() that
				   * completed; 0 = try again */
	struct afile *next;
};

struct rec_js_archiver {
	struct rec_js_archiver_opts o;
	struct rec_js *js;
	struct rec_js_consumer *cons;
	struct afile *files;
	struct rec_archive_loader *loader;   /* NULL without load_clickhouse */
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
	if (a->o.load_clickhouse || a->o.load_clickhouse_file) {
		struct rec_archive_loader_opts lo = REC_ARCHIVE_LOADER_OPTS_INIT;

		lo.urls = a->o.load_clickhouse;
		lo.urls_file = a->o.load_clickhouse_file;
		lo.analyzer = a->o.analyzer;
		lo.jobs = a->o.load_jobs;
		ret = rec_archive_loader_new(&lo, &a->loader);
		if (ret < 0)
			goto err;
	}
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

static void catchup_path(const struct afile *f, char *buf, size_t len)
{
	snprintf(buf, len, "%s.catchup", f->a.path);
}

static uint64_t catchup_read(const struct afile *f)
{
	char path[4200], b[32] = "";
	FILE *fp;

	catchup_path(f, path, sizeof(path));
	fp = fopen(path, "re");
	if (!fp)
		return 0;
	if (!fgets(b, sizeof(b), fp))
		b[0] = '\0';
	fclose(fp);
	return strtoull(b, NULL, 10);
}

/* Records f->catchup (0: removes the record) durably. 0 or -errno. */
static int catchup_write(const struct afile *f)
{
	char path[4200], tmp[4220], b[32];
	int fd, n, ret = 0;

	catchup_path(f, path, sizeof(path));
	if (!f->catchup)
		return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	n = snprintf(b, sizeof(b), "%llu\n", (unsigned long long)f->catchup);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, b, (size_t)n) != n || fdatasync(fd) < 0)
		ret = -EIO;
	close(fd);
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/* The open file of host/stream, opened (or resumed) when needed; NULL
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
	f->catchup = catchup_read(f);
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
	if (m->seq > f->a.next_seq && m->stream_seq) {
		/* read again from the stream once the file is there */
		if (!f->catchup || m->stream_seq < f->catchup) {
			uint64_t old = f->catchup;

			f->catchup = m->stream_seq;
			ret = catchup_write(f);
			if (ret < 0) {
				rec_log(REC_LOG_ERROR, "archive: recording where %s resumes: %s",
					f->a.path, strerror(-ret));
				f->catchup = old;
				*delay = 5000;
				a->st.retried++;
				return REC_JS_RETRY;
			}
		}
		a->st.early++;
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
			/* closed first: the load reads a file no one writes */
			if (a->loader) {
				char path[sizeof(f->a.path)];

				memcpy(path, f->a.path, sizeof(path));
				close_file(a, f);
				rec_archive_loader_add(a->loader, path);
			} else {
				close_file(a, f);
			}
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

/* One pass over f's subject from f->catchup to its last message (the
 * consumer's pending count reaches 0), appending each record that is
 * next. *first_early: the stream sequence of the first record left for
 * being early, 0 = none. 0, or -EIO when the pass did not complete (NATS
 * unreachable, a fetch that timed out, a write that failed). */
static int catch_up_pass(struct rec_js_archiver *a, struct afile *f, uint64_t *first_early)
{
	struct rec_js_consumer *r;
	bool failed = false, end = false;

	*first_early = 0;
	if (rec_js_subject_reader(a->js, f->host, f->id, f->catchup, &r) < 0)
		return -EIO;
	while (!end && !failed) {
		int n = rec_js_fetch(r, a->msgs, a->o.batch, FETCH_WAIT_MS);

		failed = n <= 0;
		for (int i = 0; i < n; i++) {
			struct rec_js_msg *m = &a->msgs[i];

			if (failed || end || m->seq < f->a.next_seq) {
				/* past what this pass takes, or in the file */
			} else if (m->seq > f->a.next_seq) {
				if (!*first_early)
					*first_early = m->stream_seq;
			} else if (rec_archive_file_append(&f->a, m->data, m->len) < 0) {
				failed = true;
			} else {
				a->st.written++;
				a->st.bytes += m->len;
			}
			end = end || !m->pending;
			rec_js_msg_done(m, REC_JS_ACK, 0);
		}
	}
	rec_js_consumer_close(r);
	return rec_archive_file_sync(&f->a) < 0 || failed ? -EIO : 0;
}

/* Appends f's records acknowledged early, read again from the JetStream
 * stream: passes from f->catchup while they make progress (the stream's
 * order is not the records' where holes were filled), each starting at
 * the first record the last one left. catchup ends at the first record
 * still early (another hole), or 0. A pass that did not complete leaves
 * catchup where it was, tried again after the next fetch. */
static void catch_up(struct rec_js_archiver *a, struct afile *f)
{
	uint64_t before, first_early;

	f->caught_at = 0;
	do {
		before = f->a.next_seq;
		if (catch_up_pass(a, f, &first_early) < 0) {
			rec_log(REC_LOG_WARN, "archive: %s: catching up from the JetStream "
				"stream did not complete; trying again", f->a.path);
			return;
		}
		f->catchup = first_early;
	} while (first_early && f->a.next_seq != before);
	if (catchup_write(f) < 0)
		rec_log(REC_LOG_WARN, "archive: %s: cannot update %s.catchup", f->a.path,
			f->a.path);
	f->caught_at = f->a.next_seq;
}

/* Files whose record before the ones acknowledged early came in. */
static void catch_up_all(struct rec_js_archiver *a)
{
	for (struct afile *f = a->files; f; f = f->next)
		if (f->catchup && f->a.fd >= 0 && f->a.next_seq != f->caught_at)
			catch_up(a, f);
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
		catch_up_all(a);
		if (a->loader)
			rec_archive_loader_poll(a->loader);
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
	if (a->loader) {
		struct rec_archive_loader_stats ls;

		rec_archive_loader_stats(a->loader, &ls);
		st->loaded = ls.loaded;
		st->load_failures = ls.failed;
		st->load_waiting = ls.queued - ls.loaded - ls.abandoned;
	}
}

void rec_js_archiver_free(struct rec_js_archiver *a)
{
	if (!a)
		return;
	while (a->files)
		close_file(a, a->files);
	rec_archive_loader_free(a->loader);
	rec_js_consumer_close(a->cons);
	rec_js_free(a->js);
	free(a);
}
