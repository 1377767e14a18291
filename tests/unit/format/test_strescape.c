/*
 * test_strescape.c - format/strescape.c: which bytes are escaped (C0,
 * DEL, C1 in both spellings, invalid UTF-8), that valid UTF-8 passes
 * whole, NULs inside the length, and cutting at a whole escape.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "format/strescape.h"

static void check(const char *in, size_t n, const char *want)
{
	char out[256];
	size_t need = prec_strescape(out, sizeof(out), in, n);

	assert_string_equal(out, want);
	assert_int_equal(need, strlen(want));
	/* measuring alone gives the same length */
	assert_int_equal(prec_strescape(NULL, 0, in, n), need);
}

static void test_escapes(void **state)
{
	(void)state;
	check("plain text, \\ and \"quotes\"", 26, "plain text, \\ and \"quotes\"");
	check("", 0, "");
	/* C0, including NUL inside the length, and DEL */
	check("a\x1b[31mb\nc\rd\te\x07\x7f", 15,
	      "a\\x1b[31mb\\x0ac\\x0dd\\x09e\\x07\\x7f");
	check("x\0y", 3, "x\\x00y");
	/* C1: 8-bit CSI as a lone byte, and U+009B in UTF-8 */
	check("\x9b" "1m", 3, "\\x9b1m");
	check("\xc2\x9b" "1m", 4, "\\xc2\\x9b1m");
	/* valid UTF-8 is kept: 2, 3 and 4 bytes, and U+00A0 just above C1 */
	check("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc2\xa0", 11,
	      "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc2\xa0");
	/* not UTF-8: overlong '/', a surrogate, above U+10FFFF, 0xff, a
	 * sequence cut short, a stray continuation byte */
	check("\xc0\xaf", 2, "\\xc0\\xaf");
	check("\xed\xa0\x80", 3, "\\xed\\xa0\\x80");
	check("\xf4\x90\x80\x80", 4, "\\xf4\\x90\\x80\\x80");
	check("\xff", 1, "\\xff");
	check("\xe2\x82", 2, "\\xe2\\x82");
	check("a\x80z", 3, "a\\x80z");
	/* an escape sequence whose introducer is cut: the rest stays text */
	check("\xe2\x82" "A", 3, "\\xe2\\x82A");
}

static void test_cut(void **state)
{
	(void)state;
	char out[8];
	/* "ab" + \x1b (4) fits 6 of 7; the next escape does not: cut before it */
	size_t need = prec_strescape(out, sizeof(out), "ab\x1b\x1b", 4);
	assert_int_equal(need, 10);
	assert_string_equal(out, "ab\\x1b");
	/* a multibyte character is not split either */
	need = prec_strescape(out, 4, "ab\xe2\x82\xac", 5);
	assert_int_equal(need, 5);
	assert_string_equal(out, "ab");
	/* nothing more is written once one piece did not fit */
	need = prec_strescape(out, 4, "a\x1bz", 3);
	assert_string_equal(out, "a");
	assert_int_equal(need, 6);
	need = prec_strescape(out, 1, "abc", 3);
	assert_string_equal(out, "");
	assert_int_equal(need, 3);
}

static void test_utf8_char(void **state)
{
	(void)state;
	uint32_t cp = 0;
	assert_int_equal(prec_utf8_char("A", 1, &cp), 1);
	assert_int_equal(cp, 'A');
	assert_int_equal(prec_utf8_char("\xe2\x82\xac", 3, &cp), 3);
	assert_int_equal(cp, 0x20ac);
	assert_int_equal(prec_utf8_char("\xe2\x82\xac", 2, &cp), 0);
	assert_int_equal(prec_utf8_char("\xe0\x80\x80", 3, &cp), 0);   /* overlong */
	assert_int_equal(prec_utf8_char("", 0, &cp), 0);
	assert_true(prec_is_control(0x1b) && prec_is_control(0x7f) && prec_is_control(0x9f));
	assert_false(prec_is_control(' ') || prec_is_control(0xa0) || prec_is_control(0x7e));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_utf8_char),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
