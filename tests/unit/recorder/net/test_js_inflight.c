/*
 * test_js_inflight.c - a backlog of large publishes against a real
 * nats-server (recorder/net/jetstream.c): the publish deadline must count
 * from when a record was sent to JetStream, not from when the collector
 * took it, so that a session whose records wait behind megabytes of
 * others is not failed (and its recorder sent away) while JetStream is
 * healthy and storing as fast as it can. The deadline is made short here
 * (twice the API timeout) so that a backlog a test can send in seconds
 * outlasts it, and the server is reached through a slow link with a
 * deep buffer (tests/unit/recorder/net/natstest.h): the records pile up
 * between the collector and JetStream as they do in front of a busy
 * cluster.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/logcap.h"
#include "unit/recorder/net/natstest.h"

#define RECORDS 100
#define LINK_RATE (40u << 20)   /* bytes per second */
#define RECORD_BYTES (900u << 10)

static bool all_stored(struct rec_js_stream *s)
{
	return rec_js_stream_stored(s) >= RECORDS || rec_js_stream_error(s);
}

static void test_backlog_not_timed_out(void **state)
{
	struct nt_server n = { 0 };
	struct nt_link l = { 0 };
	struct rec_js_opts o = REC_JS_OPTS_INIT;
	struct rec_js *js;
	struct rec_js_stream *s;
	unsigned char *b = malloc(RECORD_BYTES);
	uint64_t next, t0;
	bool complete;

	(void)state;
	if (!nt_start(&n))
		skip();
	logcap_install();
	assert_non_null(b);
	memset(b, 0x5a, RECORD_BYTES);
	nt_link_start(&l, n.port, LINK_RATE);
	o.urls = l.url;
	o.stream = "BACKLOG";
	o.replicas = 1;
	o.no_reconnect_buffer = true;
	o.timeout_ms = 500;   /* a publish deadline of 1 s */
	assert_int_equal(rec_js_connect(&o, &js), 0);
	assert_int_equal(rec_js_stream_open(js, "h", "s", &s, &next, &complete), 0);
	assert_int_equal(next, 1);

	/* 92 MB taken at once, as from a recorder's spool after a reconnect:
	 * 2.3 s through the link, 0.2 s for the 8 MiB in flight at a time */
	t0 = nt_now_ms();
	for (uint64_t q = 1; q <= RECORDS; q++)
		assert_int_equal(rec_js_publish(s, q, q == 1 ? PREC_RECORD_HEADER :
						PREC_RECORD_FRAME, b, RECORD_BYTES), 0);
	assert_true(nt_poll_until(js, s, all_stored, 120000));
	if (rec_js_stream_error(s))
		fail_msg("healthy publishes failed after %llu ms, %llu of %d stored: %s",
			 (unsigned long long)(nt_now_ms() - t0),
			 (unsigned long long)rec_js_stream_stored(s), RECORDS,
			 rec_js_stream_error(s));
	assert_int_equal(rec_js_stream_stored(s), RECORDS);
	print_message("%d records of %u bytes stored in %llu ms\n", RECORDS, RECORD_BYTES,
		      (unsigned long long)(nt_now_ms() - t0));
	rec_js_stream_close(s);
	rec_js_free(js);
	nt_link_stop(&l);
	free(b);
	nt_stop(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backlog_not_timed_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
