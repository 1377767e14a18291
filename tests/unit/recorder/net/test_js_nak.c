/*
 * test_js_nak.c - a session with a hole in the JetStream stream must not
 * stop the archiving of the others (recorder/net/js_archiver.c), against
 * a real nats-server: session a holds record 1, then 3 to 5002 (2 was
 * lost), published before a healthy session b. The archivers' consumer
 * lets MaxAckPending (4096) messages be delivered and not acknowledged;
 * an archiver that handed a's early records back (NAK) kept them pending,
 * and b was never delivered. Then a's hole is filled (record 2 resent;
 * 3-5002 come again as duplicates, which JetStream drops): a's archive
 * must hold all 5002 records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include "lib/logcap.h"
#include "recorder/net/js_archiver.h"
#include "unit/recorder/net/natstest.h"
#include "unit/recorder/net/streamtest.h"

#define STREAM "NAK"
#define HOLE_AFTER 5000   /* records of a after its hole */
#define MAXREC 512

struct run {
	struct rec_js_archiver *a;
	int ret;
};

static void *archive(void *arg)
{
	struct run *r = arg;

	r->ret = rec_js_archiver_run(r->a);
	return NULL;
}

static bool settled(struct rec_js_stream *s)
{
	(void)s;
	return false;
}

/* Waits up to timeout_ms for path to hold size bytes. */
static bool file_has(const char *path, off_t size, int timeout_ms)
{
	uint64_t end = nt_now_ms() + (uint64_t)timeout_ms;
	struct stat st;

	while (nt_now_ms() < end) {
		if (stat(path, &st) == 0 && st.st_size >= size)
			return st.st_size == size;
		usleep(100000);
	}
	return false;
}

static void publish_a(struct rec_js *js, const unsigned char *buf, const size_t *off,
		      uint64_t from)
{
	struct rec_js_stream *s;
	uint64_t next;
	bool complete;

	assert_int_equal(rec_js_stream_open(js, "h", "a", &s, &next, &complete), 0);
	assert_int_equal(next, from);
	if (from == 1)
		assert_int_equal(rec_js_publish(s, 1, PREC_RECORD_HEADER, buf, off[1]), 0);
	for (uint64_t q = from == 1 ? 3 : from; q <= 2 + HOLE_AFTER; q++) {
		assert_int_equal(rec_js_publish(s, q, PREC_RECORD_FRAME, buf + off[1],
						off[2] - off[1]), 0);
		if (q % 500 == 0)
			nt_poll_until(js, s, settled, 50);
	}
	nt_poll_until(js, s, settled, 2000);
	assert_null(rec_js_stream_error(s));
	assert_int_equal(rec_js_stream_stored(s), from == 1 ? 1 : 2 + HOLE_AFTER);
	rec_js_stream_close(s);
}

static void test_hole_does_not_stall_others(void **state)
{
	struct nt_server n = { 0 };
	struct rec_js_opts o = REC_JS_OPTS_INIT;
	struct rec_js_archiver_opts ao = REC_JS_ARCHIVER_OPTS_INIT;
	struct prec_sink *t = st_trace(3000, 2048);
	size_t len, off[MAXREC], nrec;
	const unsigned char *buf = prec_sink_mem_data(t, &len);
	char *dir = st_tmpdir(), path[4200];
	struct rec_js *js;
	struct rec_js_stream *s;
	struct run r = { 0 };
	pthread_t th;
	uint64_t next;
	bool complete;

	(void)state;
	if (!nt_start(&n))
		skip();
	logcap_install();
	nrec = st_records(buf, len, off, MAXREC);
	assert_true(nrec > 3);
	o.urls = n.url;
	o.stream = STREAM;
	o.replicas = 1;
	o.no_reconnect_buffer = true;
	assert_int_equal(rec_js_connect(&o, &js), 0);

	publish_a(js, buf, off, 1);
	assert_int_equal(rec_js_stream_open(js, "h", "b", &s, &next, &complete), 0);
	for (size_t i = 0; i < nrec; i++)
		assert_int_equal(rec_js_publish(s, i + 1, i ? i + 1 == nrec ?
						PREC_RECORD_INDEX : PREC_RECORD_FRAME :
						PREC_RECORD_HEADER, buf + off[i],
						off[i + 1] - off[i]), 0);
	nt_poll_until(js, s, settled, 1000);
	assert_int_equal(rec_js_stream_stored(s), nrec);
	rec_js_stream_close(s);

	ao.urls = n.url;
	ao.stream = STREAM;
	ao.dir = dir;
	ao.replicas = 1;
	assert_int_equal(rec_js_archiver_new(&ao, &r.a), 0);
	assert_int_equal(pthread_create(&th, NULL, archive, &r), 0);

	snprintf(path, sizeof(path), "%s/h/b.prec", dir);
	if (!file_has(path, (off_t)len, 20000))
		fail_msg("the healthy session was not archived within 20 s behind %d "
			 "messages of a session with a hole", HOLE_AFTER);

	/* a's hole filled: the collector resumes a at record 2 */
	publish_a(js, buf, off, 2);
	snprintf(path, sizeof(path), "%s/h/a.prec", dir);
	if (!file_has(path, (off_t)(off[1] + (2 + HOLE_AFTER - 1) * (off[2] - off[1])), 30000))
		fail_msg("the session whose hole was filled was not archived whole");
	/* nothing left to read again from the stream */
	strcat(path, ".catchup");
	for (int i = 0; i < 50 && access(path, F_OK) == 0; i++)
		usleep(100000);
	assert_int_not_equal(access(path, F_OK), 0);

	rec_js_archiver_stop(r.a);
	pthread_join(th, NULL);
	assert_int_equal(r.ret, 0);
	rec_js_archiver_free(r.a);
	rec_js_free(js);
	prec_sink_free(t);
	nt_stop(&n);
	st_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hole_does_not_stall_others),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
