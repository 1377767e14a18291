/*
 * test_chreply.c - ClickHouse's replies as the loader reads them
 * (analyzer/load/chreply.h): the message of an error body in 18.x's and
 * newer servers' shapes and of a body that is no ClickHouse error at all,
 * cut and cleaned of control characters; integer columns in TabSeparated,
 * with the edges of Int64 and every malformed row refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyzer/load/chreply.h"

static void test_error_18(void **state)
{
	(void)state;
	/* what clickhouse-server 18.16.1 answers a bad statement, byte for byte */
	static const char body[] = "Code: 47, e.displayText() = DB::Exception: Unknown identifier: bad. "
				   "Note that there is no tables (FROM clause) in your query, "
				   "e.what() = DB::Exception\n";
	char msg[256];
	int code;
	size_t n = ana_chreply_error(body, strlen(body), msg, sizeof(msg), &code);
	assert_int_equal(code, 47);
	assert_string_equal(msg, "Unknown identifier: bad. Note that there is no tables "
				 "(FROM clause) in your query");
	assert_int_equal(n, strlen(msg));
}

static void test_error_newer(void **state)
{
	(void)state;
	static const char body[] = "Code: 60. DB::Exception: Table default.profile doesn't exist. "
				   "(UNKNOWN_TABLE) (version 23.3.1.1)\n";
	char msg[256];
	int code;
	ana_chreply_error(body, strlen(body), msg, sizeof(msg), &code);
	assert_int_equal(code, 60);
	assert_string_equal(msg, "Table default.profile doesn't exist");
}

static void test_error_other(void **state)
{
	(void)state;
	/* a proxy's page: kept, control characters made spaces, cut to fit */
	static const char body[] = "<html>\r\nBad\tGateway\x1b[0m</html>\n";
	char msg[16];
	int code = 5;
	size_t n = ana_chreply_error(body, strlen(body), msg, sizeof(msg), &code);
	assert_int_equal(code, -1);
	assert_int_equal(n, 15);
	assert_string_equal(msg, "<html>  Bad Gat");
	/* empty body, and NULs inside one */
	assert_int_equal(ana_chreply_error("", 0, msg, sizeof(msg), NULL), 0);
	assert_string_equal(msg, "");
	ana_chreply_error("a\0b", 3, msg, sizeof(msg), NULL);
	assert_string_equal(msg, "a b");
}

static void test_ints(void **state)
{
	(void)state;
	static const char body[] = "0\n42\n-7\n9223372036854775807\n-9223372036854775808\n";
	int64_t *v;
	size_t n;
	assert_int_equal(ana_chreply_ints(body, strlen(body), &v, &n), 0);
	assert_int_equal(n, 5);
	assert_true(v[0] == 0 && v[1] == 42 && v[2] == -7);
	assert_true(v[3] == INT64_MAX && v[4] == INT64_MIN);
	free(v);
	assert_int_equal(ana_chreply_ints("", 0, &v, &n), 0);
	assert_int_equal(n, 0);
	assert_null(v);
}

static void test_ints_bad(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"9223372036854775808\n",       /* one past INT64_MAX */
		"-9223372036854775809\n",
		"99999999999999999999999\n",   /* past UINT64_MAX */
		"12",                          /* no newline: a cut reply */
		"1\t2\n",                      /* two columns */
		"-\n", "\n", "x\n", "1\n\n", " 1\n", "+1\n", "1.5\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t *v = (int64_t *)1;
		size_t n = 99;
		assert_int_equal(ana_chreply_ints(bad[i], strlen(bad[i]), &v, &n), -EBADMSG);
		assert_null(v);
		assert_int_equal(n, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_18),
		cmocka_unit_test(test_error_newer),
		cmocka_unit_test(test_error_other),
		cmocka_unit_test(test_ints),
		cmocka_unit_test(test_ints_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
