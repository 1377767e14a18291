/*
 * test_js_reconnect.c - the collector's publishes while its connection to
 * NATS is being re-established (recorder/net/jetstream.c, no reconnect
 * buffer), against a real nats-server killed with -9: a publish must
 * fail at once, never wait in libnats' buffer to be sent on the next
 * connection behind records lost with the old one (a hole). nats.h
 * documents a reconnect buffer size of 0 as "the default" (8 MB), so this
 * holds only while libnats takes 0 literally or the collector refuses to
 * publish while it is not connected.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "lib/logcap.h"
#include "unit/recorder/net/natstest.h"

static bool stored1(struct rec_js_stream *s)
{
	return rec_js_stream_stored(s) >= 1 || rec_js_stream_error(s);
}

static void test_publish_fails_while_reconnecting(void **state)
{
	struct nt_server n = { 0 };
	struct rec_js_opts o = REC_JS_OPTS_INIT;
	struct rec_js *js;
	struct rec_js_stream *s, *s2;
	uint64_t next;
	bool complete;
	int ret = 0;

	(void)state;
	if (!nt_start(&n))
		skip();
	logcap_install();
	o.urls = n.url;
	o.stream = "RECONNECT";
	o.replicas = 1;
	o.no_reconnect_buffer = true;
	assert_int_equal(rec_js_connect(&o, &js), 0);
	assert_int_equal(rec_js_stream_open(js, "h", "s", &s, &next, &complete), 0);
	assert_int_equal(rec_js_stream_open(js, "h", "t", &s2, &next, &complete), 0);
	assert_int_equal(rec_js_publish(s, 1, PREC_RECORD_HEADER, "hdr", 3), 0);
	assert_true(nt_poll_until(js, s, stored1, 10000));
	assert_null(rec_js_stream_error(s));

	/* the server is gone: libnats reconnects (every 250 ms, for ever) */
	nt_kill(&n);
	usleep(300000);
	/* a session with nothing in flight publishes its first record */
	ret = rec_js_publish(s2, 1, PREC_RECORD_HEADER, "hdr", 3);
	if (ret == 0)
		fail_msg("a publish was taken while the connection to NATS was down: "
			 "it waits in a reconnect buffer");
	assert_int_equal(ret, -EIO);
	assert_non_null(strstr(rec_js_stream_error(s2), "not connected"));
	rec_js_stream_close(s2);
	rec_js_stream_close(s);
	rec_js_free(js);
	nt_stop(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_publish_fails_while_reconnecting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
