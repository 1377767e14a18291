/*
 * test_log.c - recorder/log.c: every message reaches the print function
 * escaped (a peer's or a trace's string in a message can neither forge a
 * log line nor drive a terminal), NULs inside the message included, a trailing
 * newline kept, and rec_log_escape() for cli/ code that prints itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "format/strescape.h"
#include "lib/logcap.h"
#include "recorder/log.h"

/* The hostile text a forged Hello or a refusal could carry. */
static const char hostile[] = "v1\x1b]0;owned\x07\r\n2024-01-01 collector: "
			      "session accepted\x1b[2J\x9b" "31m\xc2\x9b" "1m\xff\x7f";

static char last[REC_LOG_MAX];

static void keep(enum rec_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	snprintf(last, sizeof(last), "%s", msg);
}

/* No byte a terminal acts on (the final newline is the one exception). */
static void assert_clean(const char *s, int newline_at_end)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = prec_utf8_char(s + i, n - i, &cp);
		if (!k || (prec_is_control(cp) && cp != '\n'))
			fail_msg("raw byte 0x%02x at %zu in: %s", (unsigned char)s[i], i, s);
		/* a newline ends the message, or the next line is indented:
		 * nothing can pass for a log line of its own */
		if (cp == '\n' && !(newline_at_end && i == n - 1) &&
		    !(i + 1 < n && (s[i + 1] == ' ' || s[i + 1] == '\t')))
			fail_msg("a line at column 0 after %zu in: %s", i, s);
		i += k;
	}
}

static void test_messages_escaped(void **state)
{
	(void)state;
	rec_log_set_print(keep, NULL, NULL);
	rec_log(REC_LOG_WARN, "collector: hello from recorder %s refused", hostile);
	assert_clean(last, 0);
	assert_string_equal(last, "collector: hello from recorder v1\\x1b]0;owned\\x07\\x0d"
			    "\n  2024-01-01 collector: session accepted\\x1b[2J\\x9b31m"
			    "\\xc2\\x9b1m\\xff\\x7f refused");
	/* a message over lines (a caret under an expression) keeps them */
	rec_log(REC_LOG_ERROR, "bad --filter: unknown field\n  pid=1 && x=1\n%s",
		"           ^");
	assert_clean(last, 0);
	assert_string_equal(last, "bad --filter: unknown field\n  pid=1 && x=1\n"
			    "           ^");
	/* a NUL inside the formatted message (a %c of a peer's byte) is
	 * escaped, not where the message ends; printf's %s itself stops
	 * at a string's first NUL */
	rec_log(REC_LOG_ERROR, "name 'ab%ccd'", 0);
	assert_string_equal(last, "name 'ab\\x00cd'");
	rec_log(REC_LOG_ERROR, "name '%.*s'", 5, "ab\0cd");
	assert_string_equal(last, "name 'ab'");
	/* a trailing newline stays the message's end */
	rec_log(REC_LOG_DEBUG, "libbpf: %s\n", "line");
	assert_string_equal(last, "libbpf: line\n");
	/* valid UTF-8 is not touched */
	rec_log(REC_LOG_INFO, "h\xc3\xb4te %s", "\xe2\x82\xac");
	assert_string_equal(last, "h\xc3\xb4te \xe2\x82\xac");
	rec_log_set_print(NULL, NULL, NULL);
}

/* A long hostile message is cut at a whole escape, within REC_LOG_MAX. */
static void test_long_message(void **state)
{
	(void)state;
	char big[3 * REC_LOG_MAX];
	memset(big, '\x1b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	rec_log_set_print(keep, NULL, NULL);
	rec_log(REC_LOG_ERROR, "x%s", big);
	assert_clean(last, 0);
	assert_true(strlen(last) < REC_LOG_MAX);
	assert_int_equal((strlen(last) - 1) % 4, 0);
	rec_log_set_print(NULL, NULL, NULL);
}

static void test_logcap_sees_escaped(void **state)
{
	(void)state;
	logcap_install();
	rec_log(REC_LOG_ERROR, "refused: %s", hostile);
	assert_clean(logcap_err(), 0);
	assert_non_null(strstr(logcap_err(), "\\x0d\n  2024-01-01"));
	rec_log_set_print(NULL, NULL, NULL);
}

static void test_rec_log_escape(void **state)
{
	(void)state;
	char buf[256];
	assert_ptr_equal(rec_log_escape(buf, sizeof(buf), hostile), buf);
	assert_clean(buf, 0);
	assert_non_null(strstr(buf, "v1\\x1b]0;owned\\x07"));
	assert_string_equal(rec_log_escape(buf, sizeof(buf), NULL), "");
	assert_string_equal(rec_log_escape(buf, 4, "abc\x1b"), "abc");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_messages_escaped),
		cmocka_unit_test(test_long_message),
		cmocka_unit_test(test_logcap_sees_escaped),
		cmocka_unit_test(test_rec_log_escape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
