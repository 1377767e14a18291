/*
 * test_msgbuf.c - format/base/msgbuf.c: the prefix's bytes, messages found
 * however the bytes are cut, an oversized length refused before anything
 * is allocated for it, and a shared budget that stops growth. (The stream
 * protocol's own checks, frames through these buffers, are test_wire's.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "format/base/msgbuf.h"

static void test_prefix(void **state)
{
	unsigned char p[PREC_MSGBUF_PREFIX];

	(void)state;
	prec_msgbuf_put_len(p, 0x01020304u);
	assert_memory_equal(p, "\x01\x02\x03\x04", 4);
	prec_msgbuf_put_len(p, 5);
	assert_memory_equal(p, "\0\0\0\x05", 4);
}

/* "hello" and "" and "abc", fed one byte at a time. */
static void test_bytewise(void **state)
{
	static const unsigned char s[] = "\0\0\0\x05hello\0\0\0\0\0\0\0\x03" "abc";
	const char *want[] = { "hello", "", "abc" };
	struct prec_msgbuf in;
	int got = 0;

	(void)state;
	prec_msgbuf_init(&in, 16);
	for (size_t i = 0; i < sizeof(s) - 1; i++) {
		size_t room, len;
		const unsigned char *msg;
		unsigned char *p = prec_msgbuf_space(&in, &room);

		assert_non_null(p);
		assert_true(room >= 1);
		*p = s[i];
		prec_msgbuf_commit(&in, 1);
		while (prec_msgbuf_next(&in, &msg, &len) > 0) {
			assert_int_equal(len, strlen(want[got]));
			assert_memory_equal(msg, want[got], len);
			got++;
		}
	}
	assert_int_equal(got, 3);
	assert_int_equal(prec_msgbuf_partial(&in), 0);
	prec_msgbuf_release(&in);
}

static void test_limits(void **state)
{
	struct prec_msgbuf_budget b = { 0, 100 * 1024, 0 };
	struct prec_msgbuf in;
	const unsigned char *msg;
	size_t room, len;
	unsigned char *p;

	(void)state;
	/* above max: refused with what was announced */
	prec_msgbuf_init(&in, 16);
	p = prec_msgbuf_space(&in, &room);
	prec_msgbuf_put_len(p, 17);
	prec_msgbuf_commit(&in, 4);
	assert_int_equal(prec_msgbuf_next(&in, &msg, &len), -EMSGSIZE);
	assert_int_equal(len, 17);
	prec_msgbuf_release(&in);

	/* a budget stops growth: the first 64 KiB fit, the next step not */
	prec_msgbuf_init(&in, 1u << 20);
	in.budget = &b;
	p = prec_msgbuf_space(&in, &room);
	assert_non_null(p);
	prec_msgbuf_put_len(p, 1u << 20);
	memset(p + 4, 0, room - 4);
	prec_msgbuf_commit(&in, room);
	assert_int_equal(b.used, in.cap);
	errno = 0;
	assert_null(prec_msgbuf_space(&in, &room));
	assert_int_equal(errno, ENOBUFS);
	prec_msgbuf_release(&in);
	assert_int_equal(b.used, 0);
	assert_true(b.peak >= 64 * 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefix),
		cmocka_unit_test(test_bytewise),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
