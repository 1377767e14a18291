/*
 * test_opts.c - format/base/opts.h: older (shorter) callers get the
 * defaults for what they do not know, newer callers are accepted only
 * when their extra bytes are zero, a size below the size field is
 * refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/opts.h"

struct v1 { size_t sz; long a; };
struct v2 { size_t sz; long a; long b; };
struct v3 { size_t sz; long a; long b; long c; };

static void test_copy(void **state)
{
	struct v2 d = { 0, 1, 2 };
	struct v1 old = { sizeof(old), 7 };
	struct v3 newer;

	(void)state;
	/* older: a copied, b keeps its default, sz is ours */
	assert_int_equal(prec_opts_copy(&d, sizeof(d), &old), 0);
	assert_int_equal(d.a, 7);
	assert_int_equal(d.b, 2);
	assert_int_equal(d.sz, sizeof(d));
	/* newer with nothing set past what we know: fine */
	memset(&newer, 0, sizeof(newer));
	newer.sz = sizeof(newer);
	newer.b = 9;
	assert_true(prec_opts_valid(&newer, sizeof(d)));
	assert_int_equal(prec_opts_copy(&d, sizeof(d), &newer), 0);
	assert_int_equal(d.b, 9);
	/* newer with a field we do not know set: refused, d untouched */
	newer.c = 1;
	assert_false(prec_opts_valid(&newer, sizeof(d)));
	assert_int_equal(prec_opts_copy(&d, sizeof(d), &newer), -EINVAL);
	assert_int_equal(d.b, 9);
	/* a size smaller than its own field */
	old.sz = 0;
	assert_int_equal(prec_opts_copy(&d, sizeof(d), &old), -EINVAL);
}

/* A kept string option: a copy (not the caller's storage), NULL for
 * NULL, and *err left alone when nothing failed. */
static void test_strdup(void **state)
{
	char src[] = "web-01";
	int err = 0;
	char *d = prec_opts_strdup(src, &err);

	(void)state;
	assert_non_null(d);
	assert_ptr_not_equal(d, src);
	src[0] = 'x';
	assert_string_equal(d, "web-01");
	assert_int_equal(err, 0);
	free(d);
	assert_null(prec_opts_strdup(NULL, &err));
	assert_int_equal(err, 0);
	err = -EINVAL;   /* an earlier failure stays */
	d = prec_opts_strdup("a", &err);
	assert_int_equal(err, -EINVAL);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_strdup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
