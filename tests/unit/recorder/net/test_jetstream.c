/*
 * test_jetstream.c - what the fleet path decides without a NATS server:
 * subject and message-id naming (recorder/net/jetstream.c: one session,
 * one subject token each, never two sessions on one subject), and the
 * archiver's batch step (recorder/net/js_archiver.c): redeliveries and
 * duplicates written once, early records retried, bad messages dropped,
 * files hit by disk damage resumed without cutting acknowledged records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <unistd.h>

#include "recorder/net/js_archiver.h"
#include "recorder/net/jetstream.h"
#include "lib/logcap.h"
#include "unit/recorder/net/streamtest.h"

static void test_subjects(void **state)
{
	char a[300], b[300], id[200];

	(void)state;
	assert_true(rec_js_subject("PERFREC", "web-01", "s1", a, sizeof(a)) > 0);
	assert_string_equal(a, "PERFREC.web-01.s1");
	/* dots would make more tokens; underscores must stay distinct */
	assert_true(rec_js_subject("PERFREC", "a.b", "x_y", a, sizeof(a)) > 0);
	assert_string_equal(a, "PERFREC.a_db.x_uy");
	assert_true(rec_js_subject("PERFREC", "a_b", "x.y", b, sizeof(b)) > 0);
	assert_string_equal(b, "PERFREC.a_ub.x_dy");
	assert_string_not_equal(a, b);
	/* exactly three tokens whatever the names */
	{
		size_t dots = 0;

		rec_js_subject("S", "h.o.s.t", "s.e.s", a, sizeof(a));
		for (const char *p = a; *p; p++)
			dots += *p == '.';
		assert_int_equal(dots, 2);
	}
	/* too long for the buffer: refused, not cut */
	assert_int_equal(rec_js_subject("PERFREC", "host", "session", a, 12), 0);
	assert_true(rec_js_msg_id("web-01", "s1", 42, id, sizeof(id)) > 0);
	assert_string_equal(id, "web-01/s1/42");
	assert_string_equal(rec_js_kind_name(PREC_RECORD_INDEX), "index");
	assert_string_equal(rec_js_kind_name(PREC_RECORD_HEADER), "header");
}

#define MAXREC 512

/* A message of record i (seq i + 1) of the trace. */
static struct rec_js_msg msg(const unsigned char *buf, const size_t *off, size_t i,
			     const char *host, const char *session)
{
	struct rec_js_msg m;

	memset(&m, 0, sizeof(m));
	m.host = host;
	m.id = session;
	m.seq = i + 1;
	m.kind = "frame";
	m.data = buf + off[i];
	m.len = off[i + 1] - off[i];
	return m;
}

static void test_archiver_batches(void **state)
{
	char *dir = st_tmpdir();
	struct prec_sink *t = st_trace(3000, 2048);
	size_t len, off[MAXREC], n;
	const unsigned char *buf = prec_sink_mem_data(t, &len);
	struct rec_js_archiver *a;
	struct rec_js_msg m[16];
	enum rec_js_verdict v[16];
	uint32_t delay[16];
	struct rec_js_archiver_stats st;
	char path[512];
	unsigned char *got;
	size_t glen;

	(void)state;
	n = st_records(buf, len, off, MAXREC);
	assert_true(n > 10);
	assert_int_equal(rec_js_archiver_new_local(dir, &a), 0);

	/* records 1..3 */
	for (int i = 0; i < 3; i++)
		m[i] = msg(buf, off, (size_t)i, "h", "s");
	rec_js_archiver_take(a, m, 3, v, delay);
	for (int i = 0; i < 3; i++)
		assert_int_equal(v[i], REC_JS_ACK);

	/* a redelivery of 2..3 (the acks were lost), then 4; 6 comes early */
	m[0] = msg(buf, off, 1, "h", "s");
	m[1] = msg(buf, off, 2, "h", "s");
	m[2] = msg(buf, off, 3, "h", "s");
	m[3] = msg(buf, off, 5, "h", "s");
	rec_js_archiver_take(a, m, 4, v, delay);
	assert_int_equal(v[0], REC_JS_ACK);
	assert_int_equal(v[1], REC_JS_ACK);
	assert_int_equal(v[2], REC_JS_ACK);
	assert_int_equal(v[3], REC_JS_RETRY);
	assert_true(delay[3] > 0);

	/* garbage: no headers; a record that is not one; a traversal name */
	memset(&m[0], 0, sizeof(m[0]));
	m[1] = msg(buf, off, 4, "h", "s");
	m[1].data = "nope";
	m[1].len = 4;
	m[2] = msg(buf, off, 4, "../etc", "s");
	rec_js_archiver_take(a, m, 3, v, delay);
	assert_int_equal(v[0], REC_JS_DROP);
	assert_int_equal(v[1], REC_JS_DROP);
	assert_int_equal(v[2], REC_JS_DROP);

	/* the rest, in order, some twice */
	size_t twice = 0;

	for (size_t i = 4; i < n; i++) {
		int k = 0;

		m[k++] = msg(buf, off, i, "h", "s");
		if (i % 3 == 0) {
			m[k++] = msg(buf, off, i, "h", "s");
			twice++;
		}
		rec_js_archiver_take(a, m, k, v, delay);
		for (int j = 0; j < k; j++)
			assert_int_equal(v[j], REC_JS_ACK);
	}
	rec_js_archiver_stats(a, &st);
	assert_int_equal(st.written, n);
	assert_int_equal(st.duplicates, 2 + twice);
	assert_int_equal(st.completed, 1);   /* the index closed the file */
	assert_int_equal(st.dropped, 3);
	snprintf(path, sizeof(path), "%s/h/s.prec", dir);
	got = st_slurp(path, &glen);
	assert_int_equal(glen, len);
	assert_memory_equal(got, buf, len);
	free(got);

	/* after its index, a session takes nothing more */
	m[0] = msg(buf, off, n - 1, "h", "s");
	m[0].seq = n + 1;
	rec_js_archiver_take(a, m, 1, v, delay);
	assert_int_not_equal(v[0], REC_JS_ACK);

	rec_js_archiver_free(a);
	prec_sink_free(t);
	st_rmdir(dir);
}

static void poke(const char *path, size_t at, const void *bytes, size_t n)
{
	FILE *fp = fopen(path, "r+b");

	assert_non_null(fp);
	assert_int_equal(fseek(fp, (long)at, SEEK_SET), 0);
	assert_int_equal(fwrite(bytes, 1, n, fp), n);
	fclose(fp);
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* An archiver restarted on a file whose acknowledged bytes were hit by
 * disk damage goes on after them (nothing cut, no record twice); one
 * whose damage hides the record count is left alone, scanned once, and
 * its messages handed back for later. */
static void test_archiver_resumes_damaged(void **state)
{
	char *dir = st_tmpdir();
	struct prec_sink *t = st_trace(3000, 2048);
	size_t len, off[MAXREC], n, k, mid, glen;
	const unsigned char *buf = prec_sink_mem_data(t, &len);
	unsigned char zeros[80] = { 0 }, *got, b;
	struct rec_js_archiver *a;
	struct rec_js_msg m[4];
	enum rec_js_verdict v[4];
	uint32_t delay[4];
	struct rec_js_archiver_stats st;
	char path[512];

	(void)state;
	logcap_install();
	n = st_records(buf, len, off, MAXREC);
	k = n / 2;
	mid = k / 2;
	assert_true(n > 10);
	assert_int_equal(rec_js_archiver_new_local(dir, &a), 0);
	for (size_t i = 0; i < k; i++) {
		m[0] = msg(buf, off, i, "h", "d");
		m[1] = msg(buf, off, i, "h", "u");
		rec_js_archiver_take(a, m, 2, v, delay);
		assert_int_equal(v[0], REC_JS_ACK);
		assert_int_equal(v[1], REC_JS_ACK);
	}
	rec_js_archiver_free(a);

	/* one flipped byte in an acknowledged frame info of "d" */
	snprintf(path, sizeof(path), "%s/h/d.prec", dir);
	b = buf[off[mid] + 20] ^ 0x20;
	poke(path, off[mid] + 20, &b, 1);
	assert_int_equal(rec_js_archiver_new_local(dir, &a), 0);
	m[0] = msg(buf, off, k - 1, "h", "d");   /* a redelivery */
	rec_js_archiver_take(a, m, 1, v, delay);
	assert_int_equal(v[0], REC_JS_ACK);
	for (size_t i = k; i < n; i++) {
		m[0] = msg(buf, off, i, "h", "d");
		rec_js_archiver_take(a, m, 1, v, delay);
		assert_int_equal(v[0], REC_JS_ACK);
	}
	rec_js_archiver_stats(a, &st);
	assert_int_equal(st.written, n - k);
	assert_int_equal(st.duplicates, 1);
	assert_int_equal(st.completed, 1);
	got = st_slurp(path, &glen);
	assert_int_equal(glen, len);
	assert_int_equal(got[off[mid] + 20], b);
	got[off[mid] + 20] = buf[off[mid] + 20];
	assert_memory_equal(got, buf, len);
	free(got);

	/* "u": two neighbouring frame infos gone, the count unknown */
	snprintf(path, sizeof(path), "%s/h/u.prec", dir);
	poke(path, off[mid], zeros, sizeof(zeros));
	poke(path, off[mid + 1], zeros, sizeof(zeros));
	logcap_clear();
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 3; i++)
			m[i] = msg(buf, off, k + (size_t)i, "h", "u");
		rec_js_archiver_take(a, m, 3, v, delay);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(v[i], REC_JS_RETRY);
			assert_true(delay[i] >= 30000);
		}
	}
	assert_int_equal(count_of(logcap_all(), "cannot resume"), 1);
	assert_non_null(strstr(logcap_err(), path));
	got = st_slurp(path, &glen);
	assert_int_equal(glen, off[k]);
	free(got);
	rec_js_archiver_free(a);
	prec_sink_free(t);
	st_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_subjects),
		cmocka_unit_test(test_archiver_resumes_damaged),
		cmocka_unit_test(test_archiver_batches),
	};

	logcap_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
