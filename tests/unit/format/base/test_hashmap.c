/*
 * test_hashmap.c - format/base/hashmap: the map against a plain array
 * (insertion order, growth, clear keeping the sizes), and the slot table
 * alone over a caller's entries, as format/intern.c uses it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/base/hashmap.h"

struct key {
	uint32_t a;
	uint16_t b;   /* padding after it: keys are memset before filling */
};

static void test_map_order_and_growth(void **state)
{
	struct prec_hashmap m;
	int created;

	(void)state;
	prec_hashmap_init(&m, sizeof(struct key), sizeof(uint64_t));
	for (int round = 0; round < 2; round++) {
		for (uint32_t i = 0; i < 5000; i++) {
			struct key k;
			uint64_t *v;

			memset(&k, 0, sizeof(k));
			k.a = i * 7919u;
			k.b = (uint16_t)(i & 3);
			v = prec_hashmap_get(&m, &k, &created);
			assert_non_null(v);
			assert_int_equal(created, round == 0);
			*v += i;
			assert_int_equal(prec_hashmap_index(&m, v), i);
		}
	}
	assert_int_equal(prec_hashmap_count(&m), 5000);
	for (size_t i = 0; i < prec_hashmap_count(&m); i++) {
		const struct key *k = prec_hashmap_key(&m, i);

		assert_int_equal(k->a, (uint32_t)i * 7919u);
		assert_int_equal(*(uint64_t *)prec_hashmap_val(&m, i), 2 * i);
	}
	prec_hashmap_clear(&m);
	assert_int_equal(prec_hashmap_count(&m), 0);
	{
		struct key k;

		memset(&k, 0, sizeof(k));
		assert_null(prec_hashmap_find(&m, &k));
		assert_non_null(prec_hashmap_get(&m, &k, &created));
		assert_int_equal(created, 1);
		assert_non_null(prec_hashmap_find(&m, &k));
	}
	prec_hashmap_release(&m);
	prec_hashmap_release(&m);   /* released twice is fine */
}

struct ents {
	uint64_t *keys;
	size_t n;
};

static uint64_t ent_hash(const void *ctx, size_t i)
{
	const struct ents *e = ctx;

	return prec_hash_u64(e->keys[i]);
}

/* Finds or adds key the way intern.c does: reserve, probe, fill. */
static size_t idx_put(struct prec_hashidx *x, struct ents *e, uint64_t key)
{
	size_t s;

	assert_int_equal(prec_hashidx_reserve(x, e->n, 16, ent_hash, e), 0);
	for (s = prec_hashidx_start(x, prec_hash_u64(key)); x->slots[s];
	     s = prec_hashidx_next(x, s))
		if (e->keys[x->slots[s] - 1] == key)
			return x->slots[s] - 1;
	e->keys[e->n] = key;
	x->slots[s] = (uint32_t)(e->n + 1);
	return e->n++;
}

static void test_idx(void **state)
{
	struct prec_hashidx x = { 0 };
	struct ents e = { calloc(1000, sizeof(uint64_t)), 0 };

	(void)state;
	assert_non_null(e.keys);
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(idx_put(&x, &e, i << 12), i);
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(idx_put(&x, &e, i << 12), i);
	assert_true(x.nslots >= 2 * 1000);
	/* drop the first half, move the rest down, rebuild */
	memmove(e.keys, e.keys + 500, 500 * sizeof(*e.keys));
	e.n = 500;
	prec_hashidx_rebuild(&x, e.n, ent_hash, &e);
	assert_int_equal(idx_put(&x, &e, 999u << 12), 499);
	assert_int_equal(idx_put(&x, &e, 1u << 12), 500);
	prec_hashidx_release(&x);
	free(e.keys);
}

static void test_sort_null(void **state)
{
	(void)state;
	prec_sort(NULL, 0, 8, NULL);   /* no qsort call at all */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_order_and_growth),
		cmocka_unit_test(test_idx),
		cmocka_unit_test(test_sort_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
