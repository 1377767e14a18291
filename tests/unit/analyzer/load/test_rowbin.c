/*
 * test_rowbin.c - the bytes of RowBinary rows (analyzer/load/rowbin.h) as
 * ClickHouse's documentation defines them: little-endian Int64 and
 * Float64, Strings as a LEB128 length and the bytes, so a hostile symbol
 * name (quotes, tabs, newlines, NULs, SQL) is carried as it is; lengths
 * at the LEB128 byte boundaries.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyzer/load/rowbin.h"

static void test_ints(void **state)
{
	(void)state;
	struct ana_rowbin b;
	ana_rowbin_init(&b);
	ana_rowbin_i64(&b, -2);
	ana_rowbin_i64(&b, 0x0102030405060708);
	ana_rowbin_f64(&b, 1.0);
	ana_rowbin_u8(&b, 7);
	static const unsigned char want[] = {
		0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
		0, 0, 0, 0, 0, 0, 0xf0, 0x3f,
		7,
	};
	assert_int_equal(ana_rowbin_error(&b), 0);
	assert_int_equal(b.len, sizeof(want));
	assert_memory_equal(b.buf, want, sizeof(want));
	ana_rowbin_reset(&b);
	assert_int_equal(b.len, 0);
	ana_rowbin_release(&b);
}

static void test_hostile_string(void **state)
{
	(void)state;
	static const char s[] = "x'); DROP TABLE files; --\t\n\0\"\\";
	size_t n = sizeof(s) - 1;   /* the NUL inside is data */
	struct ana_rowbin b;
	ana_rowbin_init(&b);
	ana_rowbin_str(&b, s, n);
	assert_int_equal(b.len, 1 + n);
	assert_int_equal(b.buf[0], n);
	assert_memory_equal(b.buf + 1, s, n);
	ana_rowbin_release(&b);
}

static void test_leb128(void **state)
{
	(void)state;
	static const struct { size_t n; unsigned char leb[3]; size_t k; } cases[] = {
		{ 0, { 0 }, 1 }, { 127, { 0x7f }, 1 }, { 128, { 0x80, 0x01 }, 2 },
		{ 300, { 0xac, 0x02 }, 2 }, { 16383, { 0xff, 0x7f }, 2 },
		{ 16384, { 0x80, 0x80, 0x01 }, 3 },
	};
	char *big = calloc(1, 16384);
	assert_non_null(big);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ana_rowbin b;
		ana_rowbin_init(&b);
		ana_rowbin_str(&b, big, cases[i].n);
		assert_int_equal(b.len, cases[i].k + cases[i].n);
		assert_memory_equal(b.buf, cases[i].leb, cases[i].k);
		ana_rowbin_release(&b);
	}
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ints),
		cmocka_unit_test(test_hostile_string),
		cmocka_unit_test(test_leb128),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
