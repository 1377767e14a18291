/*
 * test_ctlmsg.c - control requests (recorder/daemon/ctlmsg.c): what the
 * decoder accepts and why it refuses the rest (bytes that are not a
 * Request, unknown fields at any depth, another version, no body), and the
 * blocking framing helpers over a socket pair (round trip, deadline,
 * oversized length, peer gone).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "recorder/daemon/ctlmsg.h"
#include "lib/logcap.h"

/* rq packed (without prefix) into buf; returns its length. */
static size_t pack(const Perfrec__Control__Request *rq, unsigned char *buf)
{
	return perfrec__control__request__pack(rq, buf);
}

static void test_decode_good(void **state)
{
	Perfrec__Control__Request rq = PERFREC__CONTROL__REQUEST__INIT, *out;
	Perfrec__Control__StartRequest st = PERFREC__CONTROL__START_REQUEST__INIT;
	char *args[] = { (char *)"-a", (char *)"--flight", (char *)"64m" };
	unsigned char buf[256];
	char why[256] = "";
	size_t n;

	(void)state;
	rq.version = REC_CTL_VERSION;
	rq.body_case = PERFREC__CONTROL__REQUEST__BODY_START;
	rq.start = &st;
	st.name = (char *)"web";
	st.args = args;
	st.n_args = 3;
	n = pack(&rq, buf);
	out = rec_ctl_request_decode(buf, n, why, sizeof(why));
	assert_non_null(out);
	assert_string_equal(rec_ctl_request_name(out), "start");
	assert_string_equal(out->start->name, "web");
	assert_int_equal(out->start->n_args, 3);
	assert_string_equal(out->start->args[2], "64m");
	rec_ctl_request_free(out);
}

static void refused(const unsigned char *b, size_t n, const char *reason)
{
	char why[256] = "";

	assert_null(rec_ctl_request_decode(b, n, why, sizeof(why)));
	if (!strstr(why, reason))
		fail_msg("why = '%s', expected '%s'", why, reason);
}

static void test_decode_refused(void **state)
{
	/* version 1 (08 01), status {} (22 00) */
	static const unsigned char top[] = { 0x08, 0x01, 0x22, 0x00, 0xb8, 0x06, 0x07 };
	static const unsigned char nested[] = { 0x08, 0x01, 0x22, 0x02, 0x48, 0x01 };
	static const unsigned char deeper[] = { 0x08, 0x01, 0x12, 0x04, 0x0a, 0x00, 0x18, 0x05 };
	static const unsigned char newkind[] = { 0x08, 0x01, 0x62, 0x00 };
	static const unsigned char noversion[] = { 0x22, 0x00 };
	static const unsigned char v2[] = { 0x08, 0x02, 0x22, 0x00 };
	static const unsigned char empty[] = { 0x08, 0x01 };
	static const unsigned char garbage[] = { 0xff, 0xff, 0xff, 0xff, 0xff };
	static const unsigned char truncated[] = { 0x08, 0x01, 0x22, 0x05, 0x0a };
	/* a field numbered 0 (key 80 00): kept by protobuf-c as unknown */
	static const unsigned char zero[] = { 0x08, 0x01, 0x80, 0x00, 0x04, 0x22, 0x00 };

	(void)state;
	refused(top, sizeof(top), "unknown field 103 in Request");
	refused(nested, sizeof(nested), "unknown field 9 in StatusRequest");
	refused(deeper, sizeof(deeper), "unknown field 3 in StartRequest");
	refused(newkind, sizeof(newkind), "unknown field 12 in Request");
	refused(noversion, sizeof(noversion), "version 0 is not spoken");
	refused(v2, sizeof(v2), "version 2 is not spoken");
	refused(empty, sizeof(empty), "empty request");
	refused(garbage, sizeof(garbage), "malformed request");
	refused(truncated, sizeof(truncated), "malformed request");
	refused(zero, sizeof(zero), "unknown field 0 in Request");
}

static void test_send_recv(void **state)
{
	Perfrec__Control__Reply rp = PERFREC__CONTROL__REPLY__INIT, *got;
	unsigned char *msg;
	size_t len;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	rp.ok = true;
	rp.file = (char *)"/var/lib/perfrec/x.prec";
	assert_int_equal(rec_ctl_send(sv[0], &rp.base, REC_CTL_MAX_MSG), 0);
	assert_int_equal(rec_ctl_recv(sv[1], REC_CTL_MAX_MSG, 1000, &msg, &len), 0);
	got = perfrec__control__reply__unpack(NULL, len, msg);
	assert_non_null(got);
	assert_true(got->ok);
	assert_string_equal(got->file, rp.file);
	perfrec__control__reply__free_unpacked(got, NULL);
	free(msg);

	/* nothing comes: the deadline */
	assert_int_equal(rec_ctl_recv(sv[1], REC_CTL_MAX_MSG, 50, &msg, &len), -ETIMEDOUT);
	/* an announced length above the limit */
	assert_int_equal(write(sv[0], "\x00\x10\x00\x00", 4), 4);
	assert_int_equal(rec_ctl_recv(sv[1], 1024, 1000, &msg, &len), -EMSGSIZE);
	/* a message larger than what may be sent */
	assert_int_equal(rec_ctl_send(sv[0], &rp.base, 4), -EMSGSIZE);
	/* the peer goes mid-message */
	assert_int_equal(write(sv[1], "\x00\x00\x00\x09" "ab", 6), 6);
	close(sv[1]);
	assert_int_equal(rec_ctl_recv(sv[0], 1024, 1000, &msg, &len), -ECONNRESET);
	close(sv[0]);
}

static void test_connect_refusals(void **state)
{
	Perfrec__Control__Request rq = PERFREC__CONTROL__REQUEST__INIT;
	Perfrec__Control__Reply *rp;

	(void)state;
	logcap_install();
	assert_int_equal(rec_ctl_call("/nonexistent/perfrec.sock", &rq, 100, &rp), -ENOENT);
	assert_non_null(strstr(logcap_err(), "no perfrec daemon at /nonexistent/perfrec.sock"));
	assert_null(rp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_good),
		cmocka_unit_test(test_decode_refused),
		cmocka_unit_test(test_send_recv),
		cmocka_unit_test(test_connect_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
