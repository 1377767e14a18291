/*
 * test_js_fence.c - the collector's fence against a second writer of a
 * session's subject (recorder/net/jetstream.c), against a real
 * nats-server: after a rewind (the recorder resends from below what the
 * JetStream stream holds) the resent records are duplicates, which
 * JetStream drops before it looks at any expectation; the fence must be
 * on the first record that is new, so that a message another collector
 * appended since the hello makes that record fail, and the session
 * reconnect to learn the new resume point.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <nats/nats.h>

#include "lib/logcap.h"
#include "unit/recorder/net/natstest.h"

#define STREAM "FENCE"

static bool stored5(struct rec_js_stream *s)
{
	return rec_js_stream_stored(s) >= 5 || rec_js_stream_error(s);
}

static bool stored7(struct rec_js_stream *s)
{
	return rec_js_stream_stored(s) >= 7 || rec_js_stream_error(s);
}

static void publish(struct rec_js_stream *s, uint64_t from, uint64_t to)
{
	for (uint64_t q = from; q <= to; q++) {
		char b[32];

		snprintf(b, sizeof(b), "record %llu", (unsigned long long)q);
		assert_int_equal(rec_js_publish(s, q, q == 1 ? PREC_RECORD_HEADER :
						PREC_RECORD_FRAME, b, strlen(b)), 0);
	}
}

/* Another writer's message on the session's subject, with no message id
 * (as one past the duplicate window would be). */
static void append_foreign(const char *url, const char *host, const char *id)
{
	natsConnection *nc = NULL;
	jsCtx *ctx = NULL;
	natsMsg *m = NULL;
	jsPubAck *pa = NULL;
	char subj[300];

	assert_true(rec_js_subject(STREAM, host, id, subj, sizeof(subj)) > 0);
	assert_int_equal(natsConnection_ConnectTo(&nc, url), NATS_OK);
	assert_int_equal(natsConnection_JetStream(&ctx, nc, NULL), NATS_OK);
	assert_int_equal(natsMsg_Create(&m, subj, NULL, "other", 5), NATS_OK);
	assert_int_equal(natsMsgHeader_Set(m, "Perfrec-Seq", "6"), NATS_OK);
	assert_int_equal(js_PublishMsg(&pa, ctx, m, NULL, NULL), NATS_OK);
	jsPubAck_Destroy(pa);
	natsMsg_Destroy(m);
	jsCtx_Destroy(ctx);
	natsConnection_Destroy(nc);
}

static void test_fence_after_rewind(void **state)
{
	struct nt_server n = { 0 };
	struct rec_js_opts o = REC_JS_OPTS_INIT;
	struct rec_js *js;
	struct rec_js_stream *s;
	uint64_t next;
	bool complete;

	(void)state;
	if (!nt_start(&n))
		skip();
	logcap_install();
	o.urls = n.url;
	o.stream = STREAM;
	o.replicas = 1;
	o.no_reconnect_buffer = true;
	assert_int_equal(rec_js_connect(&o, &js), 0);

	/* two sessions hold records 1-5 */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rec_js_stream_open(js, "h", i ? "b" : "a", &s, &next,
						    &complete), 0);
		assert_int_equal(next, 1);
		publish(s, 1, 5);
		assert_true(nt_poll_until(js, s, stored5, 10000));
		assert_null(rec_js_stream_error(s));
		rec_js_stream_close(s);
	}

	/* nobody else wrote: a rewind to 3 resends 3-5 (duplicates) and
	 * appends 6-7 past the fence */
	assert_int_equal(rec_js_stream_open(js, "h", "a", &s, &next, &complete), 0);
	assert_int_equal(next, 6);
	rec_js_stream_rewind(s, 3);
	publish(s, 3, 7);
	assert_true(nt_poll_until(js, s, stored7, 10000));
	assert_null(rec_js_stream_error(s));
	assert_int_equal(rec_js_stream_stored(s), 7);
	rec_js_stream_close(s);

	/* another writer appended between the hello and record 6: record 6
	 * must fail on the fence, though 3-5 before it were duplicates */
	assert_int_equal(rec_js_stream_open(js, "h", "b", &s, &next, &complete), 0);
	assert_int_equal(next, 6);
	append_foreign(n.url, "h", "b");
	rec_js_stream_rewind(s, 3);
	publish(s, 3, 7);
	assert_true(nt_poll_until(js, s, stored7, 10000));
	if (!rec_js_stream_error(s))
		fail_msg("records 6-7 were stored after another writer's message: the fence "
			 "was not evaluated (stored up to %llu)",
			 (unsigned long long)rec_js_stream_stored(s));
	assert_non_null(strstr(rec_js_stream_error(s), "record 6"));
	assert_true(rec_js_stream_stored(s) < 6);
	rec_js_stream_close(s);

	rec_js_free(js);
	nt_stop(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fence_after_rewind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
