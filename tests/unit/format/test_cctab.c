/*
 * test_cctab.c - format/cctab.c, the reader's callchain table, fed what a
 * file may hold: whole chains, node runs (implicit and explicit iids,
 * escapes, a whole chain as parent), sample leaves; and what a hostile
 * file may hold: undefined and later parents, reserved iids, overflowing
 * ranges, a lone escape, chains past the depth bound, redefinitions,
 * leaf iids that are not leaves, an arena too small for an expansion.
 */
#define FMT_NO_BUILDER
#include "fmt_helpers.h"

#include "format/arena.h"
#include "format/cctab.h"
#include "format/varint.h"

struct tab {
	struct prec_arena a;
	struct prec_cctab t;
};

static int setup(void **state)
{
	struct tab *x = calloc(1, sizeof(*x));
	if (!x)
		return -1;
	prec_arena_init(&x->a, 0);
	prec_cctab_init(&x->t);
	prec_cctab_clear(&x->t, &x->a, 4096);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct tab *x = *state;
	prec_cctab_release(&x->t);
	prec_arena_release(&x->a);
	free(x);
	return 0;
}

/* Asserts that iid expands to want[0..n) (n = SIZE_MAX: undefined). */
static void expect(struct prec_cctab *t, uint64_t iid, const uint64_t *want, size_t n)
{
	size_t k = 12345;
	const uint64_t *ips = prec_cctab_get(t, iid, &k);
	if (n == SIZE_MAX) {
		assert_null(ips);
		assert_int_equal(k, 0);
		return;
	}
	assert_non_null(ips);
	assert_int_equal(k, n);
	if (n)
		assert_memory_equal(ips, want, n * sizeof(*ips));
	/* a second lookup gives the kept expansion */
	assert_ptr_equal(prec_cctab_get(t, iid, &k), ips);
}

#define Z(v) prec_zigzag((int64_t)(v))
#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_runs(void **state)
{
	struct prec_cctab *t = &((struct tab *)*state)->t;

	/* a whole chain (1.0), then a run under it and a root run */
	static const uint64_t whole[] = { 0x500, 0x600 };
	assert_int_equal(prec_cctab_add_chain(t, 3, whole, 2), 0);
	/* implicit: 4, 5 (parent 3, its first ip 0x500) */
	uint64_t r1[] = { Z(0x450 - 0x500), Z(0x440 - 0x450) };
	assert_int_equal(prec_cctab_add_run(t, 0, 3, r1, N(r1)), 0);
	expect(t, 4, (uint64_t[]){ 0x450, 0x500, 0x600 }, 3);
	expect(t, 5, (uint64_t[]){ 0x440, 0x450, 0x500, 0x600 }, 4);
	/* implicit 6..8: a root, a marker written as itself, a kernel ip
	 * after the marker by distance, and an escape for a distance of -1 */
	uint64_t r2[] = { Z(0x401000), 1, Z(-512), Z(0xffffffff81000000ull - (uint64_t)-512),
			  1, Z(0xffffffff80ffffffull) };
	assert_int_equal(prec_cctab_add_run(t, 0, 0, r2, N(r2)), 0);
	expect(t, 6, (uint64_t[]){ 0x401000 }, 1);
	expect(t, 7, (uint64_t[]){ (uint64_t)-512, 0x401000 }, 2);
	expect(t, 8, (uint64_t[]){ 0xffffffff81000000ull, (uint64_t)-512, 0x401000 }, 3);
	expect(t, 9, (uint64_t[]){ 0xffffffff80ffffffull, 0xffffffff81000000ull,
				   (uint64_t)-512, 0x401000 }, 4);
	/* explicit iid far above: the implicit numbering follows it */
	uint64_t r3[] = { Z(7) };
	assert_int_equal(prec_cctab_add_run(t, 100, 9, r3, 1), 0);
	assert_int_equal(prec_cctab_add_run(t, 0, 100, r3, 1), 0);
	expect(t, 101, (uint64_t[]){ 0xffffffff8100000dull, 0xffffffff81000006ull,
				     0xffffffff80ffffffull, 0xffffffff81000000ull,
				     (uint64_t)-512, 0x401000 }, 6);
	/* an empty whole chain as parent: its address is 0 */
	assert_int_equal(prec_cctab_add_chain(t, 200, NULL, 0), 0);
	expect(t, 200, NULL, 0);
	assert_int_equal(prec_cctab_add_run(t, 0, 200, r3, 1), 0);
	expect(t, 201, (uint64_t[]){ 7 }, 1);
	/* wrapping arithmetic both ways */
	uint64_t r4[] = { Z(-1 - 5), Z(10) };   /* root (uint64_t)-6, then +10 = 4 */
	assert_int_equal(prec_cctab_add_run(t, 0, 0, r4, 2), 0);
	expect(t, 203, (uint64_t[]){ 4, (uint64_t)-6 }, 2);
}

static void test_hostile_runs(void **state)
{
	struct prec_cctab *t = &((struct tab *)*state)->t;
	uint64_t one[] = { Z(0x10) };

	/* undefined parent (a later iid, "none" of another table...): the
	 * run defines nothing but still takes its iids for the numbering */
	assert_int_equal(prec_cctab_add_run(t, 0, 5, one, 1), 0);
	expect(t, 1, NULL, SIZE_MAX);
	assert_int_equal(prec_cctab_add_run(t, 0, 0, one, 1), 0);
	expect(t, 2, (uint64_t[]){ 0x10 }, 1);
	/* its own first iid as parent is not defined yet either */
	assert_int_equal(prec_cctab_add_run(t, 3, 3, one, 1), 0);
	expect(t, 3, NULL, SIZE_MAX);
	/* a lone escape at the end is no node */
	uint64_t esc[] = { Z(1), 1 };
	assert_int_equal(prec_cctab_add_run(t, 10, 2, esc, 2), 0);
	expect(t, 10, (uint64_t[]){ 0x11, 0x10 }, 2);
	expect(t, 11, NULL, SIZE_MAX);
	uint64_t lone[] = { 1 };
	assert_int_equal(prec_cctab_add_run(t, 20, 0, lone, 1), 0);
	expect(t, 20, NULL, SIZE_MAX);
	/* iids reaching 2^63 (reserved) or wrapping: nothing */
	uint64_t two[] = { Z(1), Z(2) };
	assert_int_equal(prec_cctab_add_run(t, PREC_CC_SYNTH - 1, 0, two, 2), 0);
	expect(t, PREC_CC_SYNTH - 1, NULL, SIZE_MAX);
	assert_int_equal(prec_cctab_add_run(t, UINT64_MAX, 0, one, 1), 0);
	assert_int_equal(prec_cctab_add_chain(t, PREC_CC_SYNTH | 4, one, 1), 0);
	expect(t, PREC_CC_SYNTH | 4, NULL, SIZE_MAX);
	assert_int_equal(prec_cctab_add_chain(t, 0, one, 1), 0);
	/* a parent in the reserved range */
	assert_int_equal(prec_cctab_add_run(t, 30, PREC_CC_SYNTH | 2, one, 1), 0);
	expect(t, 30, NULL, SIZE_MAX);
	/* an empty run */
	assert_int_equal(prec_cctab_add_run(t, 40, 0, NULL, 0), 0);
	expect(t, 40, NULL, SIZE_MAX);
	expect(t, 0, NULL, SIZE_MAX);
}

/* Redefinitions: the later iid wins for lookups; a node keeps the parent
 * its parent iid named when it was defined (no cycle can be made). */
static void test_redefinition(void **state)
{
	struct prec_cctab *t = &((struct tab *)*state)->t;
	uint64_t a[] = { Z(0x100) }, b[] = { Z(0x200) }, c[] = { Z(1) };

	assert_int_equal(prec_cctab_add_run(t, 1, 0, a, 1), 0);
	assert_int_equal(prec_cctab_add_run(t, 2, 1, c, 1), 0);       /* 0x101, 0x100 */
	assert_int_equal(prec_cctab_add_run(t, 1, 2, b, 1), 0);       /* 1 := 0x301 -> 2 */
	expect(t, 2, (uint64_t[]){ 0x101, 0x100 }, 2);
	expect(t, 1, (uint64_t[]){ 0x301, 0x101, 0x100 }, 3);
	assert_int_equal(prec_cctab_add_run(t, 3, 1, c, 1), 0);
	expect(t, 3, (uint64_t[]){ 0x302, 0x301, 0x101, 0x100 }, 4);
}

/* Sample leaves: [marker of cpumode, ip] + callers, shared by equal ones;
 * a leaf iid that is not a leaf reads as unknown. */
static void test_leaves(void **state)
{
	struct prec_cctab *t = &((struct tab *)*state)->t;
	uint64_t r[] = { Z(0x401000), Z(0x10) };
	int err = 0;

	assert_int_equal(prec_cctab_add_run(t, 0, 0, r, 2), 0);   /* 1: 0x401000, 2: 0x401010 */
	uint64_t l = prec_cctab_leaf(t, 2, 0x401234, 2, &err);
	assert_true(l & PREC_CC_SYNTH);
	expect(t, l, (uint64_t[]){ (uint64_t)-512, 0x401234, 0x401010, 0x401000 }, 4);
	assert_int_equal(prec_cctab_leaf(t, 2, 0x401234, 2, &err), l);
	uint64_t k = prec_cctab_leaf(t, 2, 0x401234, 1, &err);
	assert_true(k != l);
	expect(t, k, (uint64_t[]){ (uint64_t)-128, 0x401234, 0x401010, 0x401000 }, 4);
	/* no callers; a cpumode without marker */
	uint64_t m = prec_cctab_leaf(t, 0, 0x77, 2, &err);
	expect(t, m, (uint64_t[]){ (uint64_t)-512, 0x77 }, 2);
	uint64_t u = prec_cctab_leaf(t, 1, 0x88, 0, &err);
	expect(t, u, (uint64_t[]){ 0x88, 0x401000 }, 2);
	assert_int_equal(prec_cctab_leaf(t, 1, 0x88, 7, &err), u);
	/* undefined or reserved callers: no leaf */
	assert_int_equal(prec_cctab_leaf(t, 9, 0x88, 2, &err), 0);
	assert_int_equal(prec_cctab_leaf(t, l, 0x88, 2, &err), 0);
	assert_int_equal(err, 0);
	/* a synthetic iid that is no leaf, or past the table */
	expect(t, PREC_CC_SYNTH | 0, NULL, SIZE_MAX);
	expect(t, PREC_CC_SYNTH | ((l & ~PREC_CC_SYNTH) - 1), NULL, SIZE_MAX);
	expect(t, PREC_CC_SYNTH | 100000, NULL, SIZE_MAX);
	/* many leaves (the table grows) all stay right */
	for (uint64_t i = 0; i < 3000; i++) {
		uint64_t x = prec_cctab_leaf(t, 1 + i % 2, 0x500000 + i, 1 + i % 5, &err);
		size_t n;
		const uint64_t *ips = prec_cctab_get(t, x, &n);
		assert_non_null(ips);
		assert_int_equal(n, 3 + i % 2);
		assert_int_equal(ips[1], 0x500000 + i);
	}
	for (uint64_t i = 0; i < 3000; i += 7) {
		size_t n;
		uint64_t x = prec_cctab_leaf(t, 1 + i % 2, 0x500000 + i, 1 + i % 5, &err);
		const uint64_t *ips = prec_cctab_get(t, x, &n);
		assert_int_equal(ips[0], prec_cc_marker(1 + i % 5));
	}
}

/* Depth: nodes past 2^20 entries are undefined; a chain just within
 * the bound expands (when the arena allows it), and a small arena makes
 * the lookup fail, not crash. */
static void test_depth(void **state)
{
	struct tab *x = *state;
	struct prec_cctab *t = &x->t;
	size_t n = PREC_CC_MAX_DEPTH + 3;
	uint64_t *v = malloc(n * sizeof(*v));
	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = Z(i ? 1 : 1000);
	assert_int_equal(prec_cctab_add_run(t, 0, 0, v, n), 0);
	size_t k;
	const uint64_t *ips = prec_cctab_get(t, PREC_CC_MAX_DEPTH, &k);
	assert_non_null(ips);
	assert_int_equal(k, PREC_CC_MAX_DEPTH);
	assert_int_equal(ips[0], 1000 + PREC_CC_MAX_DEPTH - 1);
	assert_int_equal(ips[k - 1], 1000);
	expect(t, PREC_CC_MAX_DEPTH + 1, NULL, SIZE_MAX);
	expect(t, PREC_CC_MAX_DEPTH + 3, NULL, SIZE_MAX);
	/* a leaf on the deepest node still is one (two entries more) */
	int err = 0;
	assert_int_equal(prec_cctab_leaf(t, PREC_CC_MAX_DEPTH, 5, 2, &err) & PREC_CC_SYNTH,
			 PREC_CC_SYNTH);
	/* a new frame with a small arena: expansions fail cleanly */
	prec_arena_release(&x->a);
	prec_arena_init(&x->a, 64 * 1024);
	prec_cctab_clear(t, &x->a, 100);
	assert_int_equal(prec_cctab_add_run(t, 0, 0, v, 100000), 0);
	assert_null(prec_cctab_get(t, 100000, &k));
	assert_int_equal(k, 0);
	assert_non_null(prec_cctab_get(t, 100, &k));   /* a short one still fits */
	assert_int_equal(k, 100);
	free(v);
}

/* The table restarts empty in every frame. */
static void test_clear(void **state)
{
	struct tab *x = *state;
	uint64_t r[] = { Z(0x10) };
	int err = 0;

	assert_int_equal(prec_cctab_add_run(&x->t, 0, 0, r, 1), 0);
	uint64_t l = prec_cctab_leaf(&x->t, 1, 5, 2, &err);
	prec_arena_reset(&x->a);
	prec_cctab_clear(&x->t, &x->a, 4096);
	expect(&x->t, 1, NULL, SIZE_MAX);
	expect(&x->t, l, NULL, SIZE_MAX);
	assert_int_equal(prec_cctab_add_run(&x->t, 0, 0, r, 1), 0);   /* numbered from 1 again */
	expect(&x->t, 1, (uint64_t[]){ 0x10 }, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_redefinition, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leaves, setup, teardown),
		cmocka_unit_test_setup_teardown(test_depth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clear, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
