/*
 * test_arena.c - the decoded-packet arena keeps one chunk across resets,
 * sized to what a round handed out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "format/arena.h"

/* n blocks of 1000 bytes, each written (as a decoder writes them) */
static void fill(struct prec_arena *a, int n)
{
	for (int i = 0; i < n; i++) {
		unsigned char *p = prec_arena_alloc(a, 1000);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 16, 0);
		memset(p, i, 1000);
	}
}

/* A round that outgrew the first chunk leaves one chunk of at least what
 * it handed out (not the doubling's sum); the same round again then
 * fits it: no new chunk, the same bytes reused. */
static void test_reset_compacts(void **state)
{
	(void)state;
	struct prec_arena a;
	prec_arena_init(&a, 0);
	fill(&a, 2000);   /* ~2 MB: 256K, 512K, 1M chunks and more */
	size_t total = a.total;
	assert_true(total >= 2000 * 1000);
	prec_arena_reset(&a);
	assert_int_equal(a.used, 0);
	assert_int_equal(a.total, 0);
	assert_true(a.cap >= total);
	assert_true(a.cap <= total + total / 8 + 256 * 1024);
	unsigned char *base = a.base;
	size_t cap = a.cap;
	fill(&a, 2000);
	assert_ptr_equal(a.base, base);
	assert_int_equal(a.cap, cap);
	/* a round that fits keeps its chunk as it is */
	prec_arena_reset(&a);
	fill(&a, 10);
	prec_arena_reset(&a);
	assert_ptr_equal(a.base, base);
	assert_int_equal(a.cap, cap);
	prec_arena_release(&a);
	assert_null(a.base);
}

/* The kept chunk never exceeds the arena's limit. */
static void test_reset_within_limit(void **state)
{
	(void)state;
	struct prec_arena a;
	prec_arena_init(&a, 600 * 1000);
	fill(&a, 590);   /* 590 x 1008 bytes: under the limit, two chunks */
	assert_null(prec_arena_alloc(&a, 20000));   /* past the limit */
	prec_arena_reset(&a);
	assert_true(a.cap <= 600 * 1000);
	fill(&a, 590);
	prec_arena_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reset_compacts),
		cmocka_unit_test(test_reset_within_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
