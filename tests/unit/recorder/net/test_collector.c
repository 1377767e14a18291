/*
 * test_collector.c - the collector's input path (recorder/net/collector.c
 * through rec_collector_feed, and net/archive_file.c): sessions archived record
 * by record, reconnects resumed without duplicates, and every kind of bad
 * peer refused without touching anything outside its session; a session's
 * file holds one recording, and exists only once it has a record.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/net/archive_file.h"
#include "recorder/net/collector.h"
#include "lib/logcap.h"
#include "unit/recorder/net/streamtest.h"

#define MAXREC 4096

struct fixture {
	char *dir;
	struct rec_collector *c;
	struct prec_sink *trace;
	const unsigned char *buf;
	size_t len, nrec;
	size_t off[MAXREC];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct rec_collector_opts o = REC_COLLECTOR_OPTS_INIT;

	f->dir = st_tmpdir();
	o.dir = f->dir;
	o.listen = "127.0.0.1:0";
	o.token = "s3cret";
	o.token_len = 6;
	assert_int_equal(rec_collector_new(&o, &f->c), 0);
	f->trace = st_trace(3000, 2048);
	f->buf = prec_sink_mem_data(f->trace, &f->len);
	f->nrec = st_records(f->buf, f->len, f->off, MAXREC);
	assert_true(f->nrec > 20);
	assert_int_equal(f->off[f->nrec], f->len);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	rec_collector_free(f->c);
	prec_sink_free(f->trace);
	st_rmdir(f->dir);
	free(f);
	return 0;
}

static void put_records(struct st_buf *sb, struct fixture *f, size_t from, size_t to)
{
	for (size_t i = from; i <= to; i++)   /* seq i = record i - 1 */
		st_put_frame(sb, i, f->buf + f->off[i - 1], f->off[i] - f->off[i - 1]);
}

static unsigned char *archived(struct fixture *f, const char *host, const char *id,
			       size_t *len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s/%s.prec", f->dir, host, id);
	return st_slurp(path, len);
}

/* A session in three connections, each resending some of what the
 * previous one sent: the archive is the trace, byte for byte. */
static void test_resume_without_duplicates(void **state)
{
	struct fixture *f = *state;
	struct rec_collector_stats st;
	struct st_buf a = { 0 }, b = { 0 }, c = { 0 };
	size_t mid = f->nrec / 2, len;
	unsigned char *got;

	st_put_hello(&a, REC_WIRE_VERSION, "h1", "s1", "s3cret");
	put_records(&a, f, 1, mid);
	assert_int_equal(rec_collector_feed(f->c, a.b, a.len), 0);
	got = archived(f, "h1", "s1", &len);
	assert_int_equal(len, f->off[mid]);
	free(got);

	/* the recorder did not see the acks: it sends from 3 again */
	st_put_hello(&b, REC_WIRE_VERSION, "h1", "s1", "s3cret");
	put_records(&b, f, 3, mid + 5);
	assert_int_equal(rec_collector_feed(f->c, b.b, b.len), 0);
	rec_collector_stats(f->c, &st);
	assert_int_equal(st.duplicates, mid - 2);

	st_put_hello(&c, REC_WIRE_VERSION, "h1", "s1", "s3cret");
	put_records(&c, f, mid + 6, f->nrec);
	assert_int_equal(rec_collector_feed(f->c, c.b, c.len), 0);
	got = archived(f, "h1", "s1", &len);
	assert_non_null(got);
	assert_int_equal(len, f->len);
	assert_memory_equal(got, f->buf, f->len);
	free(got);
	free(a.b);
	free(b.b);
	free(c.b);
}

/* A file cut mid-record (a collector killed while writing): the resume
 * cuts the torn tail and goes on from the last whole record. */
static void test_torn_tail_resumed(void **state)
{
	struct fixture *f = *state;
	struct st_buf a = { 0 }, b = { 0 };
	char path[512];
	size_t len, k = 10;
	unsigned char *got;
	int fd;

	st_put_hello(&a, REC_WIRE_VERSION, "h2", "s", "s3cret");
	put_records(&a, f, 1, k);
	assert_int_equal(rec_collector_feed(f->c, a.b, a.len), 0);
	snprintf(path, sizeof(path), "%s/h2/s.prec", f->dir);
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	/* half of record k + 1 */
	assert_true(write(fd, f->buf + f->off[k], (f->off[k + 1] - f->off[k]) / 2) > 0);
	close(fd);
	logcap_clear();
	st_put_hello(&b, REC_WIRE_VERSION, "h2", "s", "s3cret");
	put_records(&b, f, k + 1, f->nrec);
	assert_int_equal(rec_collector_feed(f->c, b.b, b.len), 0);
	assert_non_null(strstr(logcap_all(), "cut"));
	got = archived(f, "h2", "s", &len);
	assert_int_equal(len, f->len);
	assert_memory_equal(got, f->buf, f->len);
	free(got);
	free(a.b);
	free(b.b);
}

struct bad_case {
	const char *what;
	void (*build)(struct st_buf *sb, struct fixture *f);
	const char *reason;
};

static void b_garbage(struct st_buf *sb, struct fixture *f)
{
	unsigned char g[300];

	(void)f;
	for (size_t i = 0; i < sizeof(g); i++)
		g[i] = (unsigned char)(i * 37 + 11);
	g[0] = g[1] = 0;   /* a plausible small length */
	g[2] = 0;
	g[3] = 40;
	st_put(sb, g, sizeof(g));
}

static void b_oversized(struct st_buf *sb, struct fixture *f)
{
	const unsigned char len[4] = { 0x40, 0, 0, 0 };   /* 1 GiB */

	(void)f;
	st_put(sb, len, 4);
}

static void b_traversal(struct st_buf *sb, struct fixture *f)
{
	(void)f;
	st_put_hello(sb, REC_WIRE_VERSION, "../../etc", "x", "s3cret");
}

static void b_hidden_session(struct st_buf *sb, struct fixture *f)
{
	(void)f;
	st_put_hello(sb, REC_WIRE_VERSION, "h", ".bashrc", "s3cret");
}

static void b_token(struct st_buf *sb, struct fixture *f)
{
	st_put_hello(sb, REC_WIRE_VERSION, "h", "t", "wrong");
	st_put_frame(sb, 1, f->buf, f->off[1]);
}

static void b_version(struct st_buf *sb, struct fixture *f)
{
	(void)f;
	st_put_hello(sb, 2, "h", "v", "s3cret");
}

static void b_frame_first(struct st_buf *sb, struct fixture *f)
{
	st_put_frame(sb, 1, f->buf, f->off[1]);
}

static void b_out_of_order(struct st_buf *sb, struct fixture *f)
{
	st_put_hello(sb, REC_WIRE_VERSION, "h", "o", "s3cret");
	st_put_frame(sb, 1, f->buf, f->off[1]);
	st_put_frame(sb, 3, f->buf + f->off[2], f->off[3] - f->off[2]);
}

static void b_not_a_record(struct st_buf *sb, struct fixture *f)
{
	st_put_hello(sb, REC_WIRE_VERSION, "h", "n", "s3cret");
	st_put_frame(sb, 1, f->buf, f->off[1]);
	st_put_frame(sb, 2, "not a record at all", 19);
}

static void b_header_twice(struct st_buf *sb, struct fixture *f)
{
	st_put_hello(sb, REC_WIRE_VERSION, "h", "d", "s3cret");
	st_put_frame(sb, 1, f->buf, f->off[1]);
	st_put_frame(sb, 2, f->buf, f->off[1]);
}

static void b_oversized_frame(struct st_buf *sb, struct fixture *f)
{
	const unsigned char len[4] = { 0x40, 0, 0, 0 };   /* 1 GiB */

	(void)f;
	st_put_hello(sb, REC_WIRE_VERSION, "h", "big", "s3cret");
	st_put(sb, len, 4);
}

/* "h\0evil": protobuf-c's C string would be "h" */
static void b_nul_host(struct st_buf *sb, struct fixture *f)
{
	size_t at = sb->len;
	unsigned char *x;

	(void)f;
	st_put_hello(sb, REC_WIRE_VERSION, "hXevil", "nul", "s3cret");
	x = memchr(sb->b + at, 'X', sb->len - at);
	*x = 0;
}

static void b_nul_session(struct st_buf *sb, struct fixture *f)
{
	size_t at = sb->len;
	unsigned char *x;

	(void)f;
	st_put_hello(sb, REC_WIRE_VERSION, "h", "sXevil", "s3cret");
	x = memchr(sb->b + at, 'X', sb->len - at);
	*x = 0;
}

/* a version string that forges a log line and a terminal escape */
static void b_forged_version(struct st_buf *sb, struct fixture *f)
{
	Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
	Perfrec__Control__Hello h = PERFREC__CONTROL__HELLO__INIT;

	(void)f;
	h.version = REC_WIRE_VERSION;
	h.host = (char *)"h";
	h.session_id = (char *)"fv";
	h.recorder_version = (char *)"1)\nperfrec: collect: all good\x1b[2J";
	h.token.data = (uint8_t *)"s3cret";
	h.token.len = 6;
	m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_HELLO;
	m.hello = &h;
	st_put_msg(sb, &m);
}

static void b_long_boot_id(struct st_buf *sb, struct fixture *f)
{
	Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
	Perfrec__Control__Hello h = PERFREC__CONTROL__HELLO__INIT;
	char id[200];

	(void)f;
	memset(id, 'b', sizeof(id) - 1);
	id[sizeof(id) - 1] = '\0';
	h.version = REC_WIRE_VERSION;
	h.host = (char *)"h";
	h.session_id = (char *)"lb";
	h.boot_id = id;
	h.token.data = (uint8_t *)"s3cret";
	h.token.len = 6;
	m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_HELLO;
	m.hello = &h;
	st_put_msg(sb, &m);
}

static const struct bad_case bad[] = {
	{ "garbage", b_garbage, "garbage" },
	{ "oversized length", b_oversized, "larger than any hello" },
	{ "path traversal", b_traversal, "bad host name" },
	{ "hidden file", b_hidden_session, "bad session id" },
	{ "wrong token", b_token, "bad token" },
	{ "version 2", b_version, "version 2 is not supported: this collector speaks version 1" },
	{ "frame first", b_frame_first, "before the hello" },
	{ "out of order", b_out_of_order, "out of order" },
	{ "not a record", b_not_a_record, "not one whole file record" },
	{ "header twice", b_header_twice, "not one whole file record" },
	{ "oversized frame", b_oversized_frame, "larger than any record" },
	{ "NUL in host", b_nul_host, "bad host name: it holds a NUL byte" },
	{ "NUL in session", b_nul_session, "bad session id: it holds a NUL byte" },
	{ "forged version", b_forged_version, "bad recorder version: at most 64 printable" },
	{ "long boot id", b_long_boot_id, "bad boot id" },
};

static void test_bad_peers(void **state)
{
	struct fixture *f = *state;
	struct stat st;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct st_buf sb = { 0 };

		logcap_clear();
		bad[i].build(&sb, f);
		if (rec_collector_feed(f->c, sb.b, sb.len) != 1 ||
		    !strstr(logcap_all(), bad[i].reason))
			fail_msg("%s: not refused with '%s': %s", bad[i].what, bad[i].reason,
				 logcap_all());
		free(sb.b);
	}
	/* nothing was written outside the directory or for refused hellos */
	assert_int_not_equal(stat("/tmp/etc", &st), 0);
	{
		char p[512];

		snprintf(p, sizeof(p), "%s/h/t.prec", f->dir);
		assert_int_not_equal(stat(p, &st), 0);
		snprintf(p, sizeof(p), "%s/h/.bashrc.prec", f->dir);
		assert_int_not_equal(stat(p, &st), 0);
		/* nor for the host a NUL would have cut "h\0evil" to */
		snprintf(p, sizeof(p), "%s/h/nul.prec", f->dir);
		assert_int_not_equal(stat(p, &st), 0);
	}
	/* and the collector still takes a good session */
	{
		struct st_buf sb = { 0 };
		unsigned char *got;
		size_t len;

		st_put_hello(&sb, REC_WIRE_VERSION, "good", "after", "s3cret");
		put_records(&sb, f, 1, f->nrec);
		assert_int_equal(rec_collector_feed(f->c, sb.b, sb.len), 0);
		got = archived(f, "good", "after", &len);
		assert_int_equal(len, f->len);
		free(got);
		free(sb.b);
	}
}

static int count_entry(const struct rec_archive_entry *e, void *ctx)
{
	struct rec_archive_entry *out = ctx;

	if (!strcmp(e->id, "full"))
		out[0] = *e;
	if (!strcmp(e->id, "part"))
		out[1] = *e;
	return 0;
}

/* --list: a whole file is complete, one without its index torn; times
 * come from the frames and the header. */
static void test_list(void **state)
{
	struct fixture *f = *state;
	struct rec_archive_entry e[2];
	struct st_buf a = { 0 }, b = { 0 };

	memset(e, 0, sizeof(e));
	st_put_hello(&a, REC_WIRE_VERSION, "lh", "full", "s3cret");
	put_records(&a, f, 1, f->nrec);
	st_put_hello(&b, REC_WIRE_VERSION, "lh", "part", "s3cret");
	put_records(&b, f, 1, f->nrec - 3);
	assert_int_equal(rec_collector_feed(f->c, a.b, a.len), 0);
	assert_int_equal(rec_collector_feed(f->c, b.b, b.len), 0);
	assert_int_equal(rec_archive_list(f->dir, count_entry, e), 0);
	assert_string_equal(e[0].host, "lh");
	assert_int_equal(e[0].status, REC_ARCHIVE_COMPLETE);
	assert_int_equal(e[0].bytes, f->len);
	assert_int_equal(e[0].records, f->nrec);
	assert_true(e[0].duration_ns > 2000000);   /* 3000 samples 1 us apart */
	assert_int_equal(e[1].status, REC_ARCHIVE_TORN);
	assert_int_equal(e[1].records, f->nrec - 3);
	free(a.b);
	free(b.b);
}

/* An archive held open by one collector is busy for another and listed
 * as open. */
static void test_lock(void **state)
{
	struct fixture *f = *state;
	struct rec_archive_file a, b;
	struct rec_archive_entry e[2];

	memset(e, 0, sizeof(e));
	assert_int_equal(rec_archive_file_open(f->dir, "lk", "full", &a), 0);
	assert_int_equal(rec_archive_file_open(f->dir, "lk", "full", &b), -EBUSY);
	assert_int_equal(rec_archive_list(f->dir, count_entry, e), 0);
	assert_int_equal(e[0].status, REC_ARCHIVE_OPEN);
	rec_archive_file_close(&a);
}

/* A session's archive holds one recording: a hello of another one (its
 * stream id differs) is refused with the reason and the file is left as
 * it was; the recording that owns it resumes it; a recorder that does not
 * say its stream id is another one too. */
static void test_origin_archive(void **state)
{
	struct fixture *f = *state;
	struct st_buf a = { 0 }, b = { 0 }, old = { 0 }, a2 = { 0 };
	size_t k = 10, len;
	unsigned char *got;
	char path[512];

	st_put_hello_id(&a, REC_WIRE_VERSION, "oh", "same", "s3cret", "recording-A");
	put_records(&a, f, 1, k);
	assert_int_equal(rec_collector_feed(f->c, a.b, a.len), 0);

	logcap_clear();
	st_put_hello_id(&b, REC_WIRE_VERSION, "oh", "same", "s3cret", "recording-B");
	put_records(&b, f, 1, f->nrec);
	if (rec_collector_feed(f->c, b.b, b.len) != 1 ||
	    !strstr(logcap_all(), "holds 10 records of another recording") ||
	    !strstr(logcap_all(), "give each recording its own --session"))
		fail_msg("a second recording was not refused: %s", logcap_all());
	st_put_hello(&old, REC_WIRE_VERSION, "oh", "same", "s3cret");
	put_records(&old, f, 1, f->nrec);
	assert_int_equal(rec_collector_feed(f->c, old.b, old.len), 1);
	got = archived(f, "oh", "same", &len);
	assert_int_equal(len, f->off[k]);
	free(got);

	/* the owner comes back and finishes */
	st_put_hello_id(&a2, REC_WIRE_VERSION, "oh", "same", "s3cret", "recording-A");
	put_records(&a2, f, k + 1, f->nrec);
	assert_int_equal(rec_collector_feed(f->c, a2.b, a2.len), 0);
	got = archived(f, "oh", "same", &len);
	assert_int_equal(len, f->len);
	assert_memory_equal(got, f->buf, f->len);
	free(got);
	snprintf(path, sizeof(path), "%s/oh/.same.origin", f->dir);
	got = st_slurp(path, &len);
	assert_non_null(got);
	assert_int_equal(len, 2 * strlen("recording-A") + 1);
	assert_memory_equal(got, "7265636f7264696e672d41\n", len);
	free(got);
	free(a.b);
	free(b.b);
	free(old.b);
	free(a2.b);
}

static int count_all(const struct rec_archive_entry *e, void *ctx)
{
	(void)e;
	++*(int *)ctx;
	return 0;
}

/* Hellos without frames (a connection flood, recorders that give up)
 * leave no file behind; the file appears with the first record. */
static void test_no_file_without_frames(void **state)
{
	struct fixture *f = *state;
	struct st_buf sb = { 0 };
	char path[512];
	struct stat st;
	int n = 0;

	for (int i = 0; i < 20; i++) {
		char id[16];
		struct st_buf h = { 0 };

		snprintf(id, sizeof(id), "s%d", i);
		st_put_hello_id(&h, REC_WIRE_VERSION, "fh", id, "s3cret", "rec");
		assert_int_equal(rec_collector_feed(f->c, h.b, h.len), 0);
		free(h.b);
	}
	assert_int_equal(rec_archive_list(f->dir, count_all, &n), 0);
	assert_int_equal(n, 0);
	snprintf(path, sizeof(path), "%s/fh/s0.prec", f->dir);
	assert_int_not_equal(stat(path, &st), 0);

	st_put_hello_id(&sb, REC_WIRE_VERSION, "fh", "s0", "s3cret", "rec");
	put_records(&sb, f, 1, 3);
	assert_int_equal(rec_collector_feed(f->c, sb.b, sb.len), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal((size_t)st.st_size, f->off[3]);
	n = 0;
	assert_int_equal(rec_archive_list(f->dir, count_all, &n), 0);
	assert_int_equal(n, 1);
	free(sb.b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_resume_without_duplicates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_tail_resumed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_peers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_origin_archive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_file_without_frames, setup, teardown),
	};

	logcap_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
