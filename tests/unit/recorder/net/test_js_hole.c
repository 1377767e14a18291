/*
 * test_js_hole.c - a record JetStream did not store, with later ones
 * stored after it, against a real nats-server (recorder/net/jetstream.c).
 * A recorder whose hello says no resend_from (one older than that field)
 * is resumed from what the collector opens the session at; after the
 * failed publish that must be the first record not stored, which the
 * collector remembers, not the record after the JetStream stream's last
 * one (the archiver would wait at the hole for ever). The hole is made as
 * test_js_lost_ack.sh makes it: a JetStream stream created beforehand
 * with a small max_msg_size refuses a big record and stores the small one
 * after it; the limit is then lifted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <nats/nats.h>

#include "lib/logcap.h"
#include "unit/recorder/net/natstest.h"

#define STREAM "HOLE"

static void set_max_msg_size(const char *url, int32_t size, bool create)
{
	natsConnection *nc = NULL;
	jsCtx *ctx = NULL;
	jsStreamConfig sc;
	jsStreamInfo *si = NULL;
	const char *subjects[] = { STREAM ".>" };

	assert_int_equal(natsConnection_ConnectTo(&nc, url), NATS_OK);
	assert_int_equal(natsConnection_JetStream(&ctx, nc, NULL), NATS_OK);
	jsStreamConfig_Init(&sc);
	sc.Name = STREAM;
	sc.Subjects = subjects;
	sc.SubjectsLen = 1;
	sc.Storage = js_FileStorage;
	sc.Duplicates = 10ll * 60 * 1000000000ll;
	sc.MaxMsgSize = size;
	if (create)
		assert_int_equal(js_AddStream(&si, ctx, &sc, NULL, NULL), NATS_OK);
	else
		assert_int_equal(js_UpdateStream(&si, ctx, &sc, NULL, NULL), NATS_OK);
	jsStreamInfo_Destroy(si);
	jsCtx_Destroy(ctx);
	natsConnection_Destroy(nc);
}

static bool failed(struct rec_js_stream *s)
{
	return rec_js_stream_error(s) != NULL;
}

static bool stored4(struct rec_js_stream *s)
{
	return rec_js_stream_stored(s) >= 4 || rec_js_stream_error(s);
}

static bool never(struct rec_js_stream *s)
{
	(void)s;
	return false;
}

static void test_hole_remembered(void **state)
{
	struct nt_server n = { 0 };
	struct rec_js_opts o = REC_JS_OPTS_INIT;
	struct rec_js *js;
	struct rec_js_stream *s;
	static unsigned char big[2000];
	uint64_t next;
	bool complete;

	(void)state;
	if (!nt_start(&n))
		skip();
	logcap_install();
	set_max_msg_size(n.url, 1000, true);
	o.urls = n.url;
	o.stream = STREAM;
	o.replicas = 1;
	o.no_reconnect_buffer = true;
	assert_int_equal(rec_js_connect(&o, &js), 0);

	assert_int_equal(rec_js_stream_open(js, "h", "s", &s, &next, &complete), 0);
	assert_int_equal(next, 1);
	assert_int_equal(rec_js_publish(s, 1, PREC_RECORD_HEADER, "hdr", 3), 0);
	assert_int_equal(rec_js_publish(s, 2, PREC_RECORD_FRAME, big, sizeof(big)), 0);
	assert_int_equal(rec_js_publish(s, 3, PREC_RECORD_FRAME, "small", 5), 0);
	assert_true(nt_poll_until(js, s, failed, 10000));
	assert_non_null(strstr(rec_js_stream_error(s), "record 2"));
	nt_poll_until(js, s, never, 500);   /* record 3's answer: stored */
	assert_int_equal(rec_js_stream_stored(s), 1);
	rec_js_stream_close(s);   /* the recorder was sent away */

	/* it comes back saying nothing of what it resends: the session
	 * resumes at the hole */
	set_max_msg_size(n.url, -1, false);
	assert_int_equal(rec_js_stream_open(js, "h", "s", &s, &next, &complete), 0);
	if (next != 2)
		fail_msg("resumed at record %llu after the JetStream stream's last record, "
			 "not at the hole at record 2", (unsigned long long)next);
	assert_false(complete);
	assert_int_equal(rec_js_publish(s, 2, PREC_RECORD_FRAME, big, sizeof(big)), 0);
	assert_int_equal(rec_js_publish(s, 3, PREC_RECORD_FRAME, "small", 5), 0);
	assert_int_equal(rec_js_publish(s, 4, PREC_RECORD_FRAME, "more", 4), 0);
	assert_true(nt_poll_until(js, s, stored4, 10000));
	assert_null(rec_js_stream_error(s));
	rec_js_stream_close(s);

	/* filled: the next session opens after the last record again */
	assert_int_equal(rec_js_stream_open(js, "h", "s", &s, &next, &complete), 0);
	assert_int_equal(next, 5);
	rec_js_stream_close(s);
	rec_js_free(js);
	nt_stop(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hole_remembered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
