/*
 * test_outq.c - format/base/outq.c: bytes leave in the order they came,
 * partial sends keep the rest, an emptied queue starts over, drop forgets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "format/base/outq.h"

static void test_order(void **state)
{
	struct prec_outq q = { 0 };
	unsigned char big[5000];
	const unsigned char *p;
	size_t n;

	(void)state;
	p = prec_outq_peek(&q, &n);
	assert_int_equal(n, 0);
	assert_int_equal(prec_outq_add(&q, "abc", 3), 0);
	assert_int_equal(prec_outq_add(&q, "def", 3), 0);
	p = prec_outq_peek(&q, &n);
	assert_int_equal(n, 6);
	assert_memory_equal(p, "abcdef", 6);
	prec_outq_consume(&q, 2);             /* a partial send */
	p = prec_outq_peek(&q, &n);
	assert_int_equal(n, 4);
	assert_memory_equal(p, "cdef", 4);
	/* growing keeps what waits */
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)i;
	assert_int_equal(prec_outq_add(&q, big, sizeof(big)), 0);
	assert_int_equal(prec_outq_pending(&q), 4 + sizeof(big));
	p = prec_outq_peek(&q, &n);
	assert_memory_equal(p, "cdef", 4);
	assert_memory_equal(p + 4, big, sizeof(big));
	prec_outq_consume(&q, n);
	assert_int_equal(prec_outq_pending(&q), 0);
	/* an emptied queue starts at its beginning */
	assert_int_equal(prec_outq_add(&q, "x", 1), 0);
	p = prec_outq_peek(&q, &n);
	assert_ptr_equal(p, q.b);
	prec_outq_drop(&q);
	assert_int_equal(prec_outq_pending(&q), 0);
	prec_outq_release(&q);
	assert_null(q.b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
