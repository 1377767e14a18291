/*
 * test_stree.c - analyzer/stree: the weighted stack tree behind the flame
 * graphs, and its pruned views.
 *
 * A view must keep every sum: for each node, its children's weights plus
 * its self weight equal its weight, placeholders included; the nodes a
 * view leaves out are counted; max_nodes bounds the view whatever the
 * tree; the view does not depend on the order stacks were added in; and
 * untrusted weights (periods near 2^64) saturate instead of wrapping.
 * A differential tree's base weights ride on the same nodes without
 * changing the profile's weights, counts or pruning. Trees merged (the
 * call trees of a dataset's traces) equal one tree of all their stacks.
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

#include "analyzer/render/stree.h"
#include "analyzer/read/strpool.h"

static struct ana_strpool pool;

static const char *S(const char *s)
{
	const char *r = ana_strpool_intern(&pool, s);
	assert_non_null(r);
	return r;
}

/* Adds "a;b;c" (outermost first) with weight. */
static void add(struct ana_stree *t, const char *stack, uint64_t w, int leaf_first)
{
	struct ana_stree_frame f[32];
	size_t n = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *save = NULL, *p = strtok_r(buf, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
		f[n].name = S(p);
		f[n].tag = p[0] == 'k' ? 2 : 1;
		n++;
	}
	assert_int_equal(ana_stree_add(t, f, n, leaf_first, w), 0);
}

/* Every node's children (up to the next node at its depth or above) plus
 * its self weight make its weight; the top level plus nothing makes the
 * root's (no stack ends at the root here). Also counts the nodes the
 * placeholders stand for. */
static uint64_t check_sums(const struct ana_stree_view *v)
{
	uint64_t pruned = 0, top = 0;
	for (size_t i = 0; i < v->n; i++) {
		const struct ana_stree_vnode *n = &v->nodes[i];
		uint64_t kids = 0;
		for (size_t j = i + 1; j < v->n && v->nodes[j].depth > n->depth; j++)
			if (v->nodes[j].depth == n->depth + 1)
				kids += v->nodes[j].weight;
		if (n->pruned) {
			assert_null(n->name);
			assert_int_equal(kids, 0);
			assert_int_equal(n->self, n->weight);
			pruned += n->pruned;
		} else {
			assert_int_equal(kids + n->self, n->weight);
		}
		if (n->depth == 0)
			top += n->weight;
		/* siblings heaviest first, a placeholder last */
		if (i && v->nodes[i - 1].depth == n->depth && !n->pruned)
			assert_true(v->nodes[i - 1].weight >= n->weight);
	}
	assert_int_equal(top, v->weight);
	assert_int_equal(pruned, v->pruned_nodes);
	return pruned;
}

static void test_tree_and_full_view(void **state)
{
	(void)state;
	struct ana_stree t;
	ana_stree_init(&t);
	add(&t, "main;a;x", 5, 0);
	add(&t, "main;a;y", 3, 0);
	add(&t, "main;a", 2, 0);
	add(&t, "main;b;x", 7, 0);
	add(&t, "main;a;x", 1, 0);
	assert_int_equal(ana_stree_nodes(&t), 6);   /* main a x y b x */
	assert_int_equal(t.weight, 18);
	assert_int_equal(t.count, 5);

	struct ana_stree_view v;
	assert_int_equal(ana_stree_view(&t, 0, 0, &v), 0);
	/* pre-order, heaviest first: main(18) a(11) x(6) y(3) b(7) x(7) */
	static const char *const names[] = { "main", "a", "x", "y", "b", "x" };
	static const uint32_t depth[] = { 0, 1, 2, 2, 1, 2 };
	static const uint64_t w[] = { 18, 11, 6, 3, 7, 7 }, self[] = { 0, 2, 6, 3, 0, 7 };
	static const uint64_t count[] = { 5, 4, 2, 1, 1, 1 };
	assert_int_equal(v.n, 6);
	for (size_t i = 0; i < v.n; i++) {
		assert_string_equal(v.nodes[i].name, names[i]);
		assert_int_equal(v.nodes[i].depth, depth[i]);
		assert_int_equal(v.nodes[i].weight, w[i]);
		assert_int_equal(v.nodes[i].self, self[i]);
		assert_int_equal(v.nodes[i].count, count[i]);
		assert_int_equal(v.nodes[i].pruned, 0);
	}
	assert_int_equal(check_sums(&v), 0);
	ana_stree_view_release(&v);
	ana_stree_release(&t);
}

static void test_inverted(void **state)
{
	(void)state;
	struct ana_stree t;
	ana_stree_init(&t);
	add(&t, "main;a;x", 5, 1);
	add(&t, "main;b;x", 7, 1);
	add(&t, "main;a", 2, 1);
	struct ana_stree_view v;
	assert_int_equal(ana_stree_view(&t, 0, 0, &v), 0);
	/* callee first: x(12) { b(7) main, a(5) main }, a(2) main */
	static const char *const names[] = { "x", "b", "main", "a", "main", "a", "main" };
	static const uint32_t depth[] = { 0, 1, 2, 1, 2, 0, 1 };
	assert_int_equal(v.n, 7);
	for (size_t i = 0; i < v.n; i++) {
		assert_string_equal(v.nodes[i].name, names[i]);
		assert_int_equal(v.nodes[i].depth, depth[i]);
	}
	assert_int_equal(v.nodes[0].weight, 12);
	check_sums(&v);
	ana_stree_view_release(&v);
	ana_stree_release(&t);
}

static void test_pruning(void **state)
{
	(void)state;
	struct ana_stree t;
	ana_stree_init(&t);
	add(&t, "main;hot;leaf", 900, 0);
	add(&t, "main;warm", 60, 0);
	add(&t, "main;cold1;deep;deeper", 20, 0);
	add(&t, "main;cold2", 15, 0);
	add(&t, "main;hot;tiny", 5, 0);
	struct ana_stree_view v;
	/* 5%: keeps main, hot, leaf, warm; cold1 (3 nodes), cold2 and tiny
	 * are merged */
	assert_int_equal(ana_stree_view(&t, 0.05, 0, &v), 0);
	assert_int_equal(v.pruned_nodes, 5);
	assert_int_equal(check_sums(&v), 5);
	/* main hot leaf [tiny] warm [cold1 cold2] */
	assert_int_equal(v.n, 6);
	assert_string_equal(v.nodes[2].name, "leaf");
	assert_null(v.nodes[3].name);
	assert_int_equal(v.nodes[3].pruned, 1);
	assert_int_equal(v.nodes[3].weight, 5);
	assert_int_equal(v.nodes[3].depth, 2);
	assert_string_equal(v.nodes[4].name, "warm");
	assert_null(v.nodes[5].name);
	assert_int_equal(v.nodes[5].pruned, 4);
	assert_int_equal(v.nodes[5].weight, 35);
	assert_int_equal(v.nodes[5].count, 2);
	assert_true(v.fraction == 0.05);
	ana_stree_view_release(&v);
	ana_stree_release(&t);
}

/* Base stacks (html --diff): their weight per node and at the root, the
 * new profile's numbers untouched, base-only paths pruned with their
 * base summed into the placeholder. */
static void test_base_weights(void **state)
{
	(void)state;
	struct ana_stree t;
	ana_stree_init(&t);
	add(&t, "main;ping", 70, 0);
	add(&t, "main;pong", 30, 0);
	struct ana_stree_frame f[3] = { { S("main"), 1 }, { S("ping"), 1 }, { NULL, 0 } };
	assert_int_equal(ana_stree_add_base(&t, f, 2, 0, 20), 0);
	f[1].name = S("pong");
	assert_int_equal(ana_stree_add_base(&t, f, 2, 0, 75), 0);
	f[1].name = S("gone");   /* only in the base */
	assert_int_equal(ana_stree_add_base(&t, f, 2, 0, 5), 0);
	assert_int_equal(t.weight, 100);
	assert_int_equal(t.count, 2);
	assert_int_equal(t.base, 100);
	assert_int_equal(t.base_count, 3);
	struct ana_stree_view v;
	assert_int_equal(ana_stree_view(&t, 0.01, 0, &v), 0);
	assert_int_equal(check_sums(&v), 1);
	/* main ping pong [gone] */
	assert_int_equal(v.n, 4);
	assert_int_equal(v.base, 100);
	assert_string_equal(v.nodes[0].name, "main");
	assert_int_equal(v.nodes[0].weight, 100);
	assert_int_equal(v.nodes[0].base, 100);
	assert_int_equal(v.nodes[0].count, 2);
	assert_string_equal(v.nodes[1].name, "ping");
	assert_int_equal(v.nodes[1].weight, 70);
	assert_int_equal(v.nodes[1].base, 20);
	assert_int_equal(v.nodes[1].self, 70);
	assert_string_equal(v.nodes[2].name, "pong");
	assert_int_equal(v.nodes[2].base, 75);
	assert_null(v.nodes[3].name);
	assert_int_equal(v.nodes[3].weight, 0);
	assert_int_equal(v.nodes[3].base, 5);
	ana_stree_view_release(&v);
	ana_stree_release(&t);
}

/* A wide tree: max_nodes holds whatever it takes; the sums stay. */
static void test_max_nodes(void **state)
{
	(void)state;
	struct ana_stree t;
	ana_stree_init(&t);
	char stack[128];
	for (unsigned i = 0; i < 3000; i++) {
		snprintf(stack, sizeof(stack), "main;f%u;g%u;h%u", i % 97, i % 13, i);
		add(&t, stack, 1 + i % 7, 0);
	}
	size_t all = ana_stree_nodes(&t);
	assert_true(all > 3000);
	struct ana_stree_view v;
	assert_int_equal(ana_stree_view(&t, 0, 0, &v), 0);
	assert_int_equal(v.n, all);
	ana_stree_view_release(&v);
	static const size_t caps[] = { 1000, 100, 10, 1 };
	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		assert_int_equal(ana_stree_view(&t, 0.0001, caps[c], &v), 0);
		assert_true(v.n <= caps[c]);
		assert_true(v.n >= 1);
		assert_true(v.fraction > 0.0001);
		uint64_t pruned = check_sums(&v);
		size_t placeholders = 0;
		for (size_t i = 0; i < v.n; i++)
			placeholders += v.nodes[i].pruned != 0;
		/* kept real nodes + the ones placeholders stand for = all */
		assert_int_equal(v.n - placeholders + pruned, all);
		ana_stree_view_release(&v);
	}
	ana_stree_release(&t);
}

/* The same stacks in another order give the same view. */
static void test_order_independent(void **state)
{
	(void)state;
	struct ana_stree a, b;
	ana_stree_init(&a);
	ana_stree_init(&b);
	static const char *const stacks[] = { "m;x;y", "m;z", "m;x", "n;x;y", "m;z;q", "m;y" };
	for (size_t i = 0; i < 6; i++) {
		add(&a, stacks[i], 4, 0);
		add(&b, stacks[5 - i], 4, 0);
	}
	struct ana_stree_view va, vb;
	assert_int_equal(ana_stree_view(&a, 0, 0, &va), 0);
	assert_int_equal(ana_stree_view(&b, 0, 0, &vb), 0);
	assert_int_equal(va.n, vb.n);
	for (size_t i = 0; i < va.n; i++) {
		assert_ptr_equal(va.nodes[i].name, vb.nodes[i].name);
		assert_int_equal(va.nodes[i].depth, vb.nodes[i].depth);
		assert_int_equal(va.nodes[i].weight, vb.nodes[i].weight);
	}
	ana_stree_view_release(&va);
	ana_stree_view_release(&vb);
	ana_stree_release(&a);
	ana_stree_release(&b);
}

/* Two trees merged (names from another pool, as a trace's are) equal
 * one tree of all their stacks: names, depths, weights, self weights,
 * counts and bases, and the root's sums. */
static void test_merge(void **state)
{
	(void)state;
	static const char *const stacks[] = { "m;x;y", "m;z", "m;x", "n;x;y", "m;z;q", "m;y", "k;m" };
	struct ana_strpool other;
	ana_strpool_init(&other);
	struct ana_stree all, part[2], merged;
	ana_stree_init(&all);
	ana_stree_init(&part[0]);
	ana_stree_init(&part[1]);
	ana_stree_init(&merged);
	for (size_t i = 0; i < 7; i++) {
		add(&all, stacks[i], i + 1, 0);
		add(&part[i % 2], stacks[i], i + 1, 0);
	}
	assert_int_equal(ana_stree_merge(&merged, &part[0], &other), 0);
	assert_int_equal(ana_stree_merge(&merged, &part[1], &other), 0);
	assert_int_equal(merged.weight, all.weight);
	assert_int_equal(merged.count, all.count);
	struct ana_stree_view va, vm;
	assert_int_equal(ana_stree_view(&all, 0, 0, &va), 0);
	assert_int_equal(ana_stree_view(&merged, 0, 0, &vm), 0);
	assert_int_equal(va.n, vm.n);
	for (size_t i = 0; i < va.n; i++) {
		assert_string_equal(va.nodes[i].name, vm.nodes[i].name);
		/* the merged tree's names are the pool's given to merge */
		assert_ptr_equal(vm.nodes[i].name, ana_strpool_intern(&other, va.nodes[i].name));
		assert_int_equal(va.nodes[i].depth, vm.nodes[i].depth);
		assert_int_equal(va.nodes[i].tag, vm.nodes[i].tag);
		assert_int_equal(va.nodes[i].weight, vm.nodes[i].weight);
		assert_int_equal(va.nodes[i].self, vm.nodes[i].self);
		assert_int_equal(va.nodes[i].count, vm.nodes[i].count);
	}
	ana_stree_view_release(&va);
	ana_stree_view_release(&vm);
	ana_stree_release(&all);
	ana_stree_release(&part[0]);
	ana_stree_release(&part[1]);
	ana_stree_release(&merged);
	ana_strpool_release(&other);
}

/* Periods are trace bytes: sums saturate, children never outweigh their
 * parent, pruning still works; zero weights prune by count; an empty
 * tree gives an empty view. */
static void test_odd_weights(void **state)
{
	(void)state;
	struct ana_stree t;
	ana_stree_init(&t);
	add(&t, "a;b", UINT64_MAX - 1, 0);
	add(&t, "a;b", UINT64_MAX / 2, 0);
	add(&t, "a;c", 1, 0);
	assert_int_equal(t.weight, UINT64_MAX);
	struct ana_stree_view v;
	assert_int_equal(ana_stree_view(&t, 0.01, 0, &v), 0);
	assert_int_equal(v.nodes[0].weight, UINT64_MAX);
	assert_string_equal(v.nodes[1].name, "b");
	assert_int_equal(v.nodes[1].weight, UINT64_MAX);
	assert_int_equal(v.pruned_nodes, 1);   /* c */
	ana_stree_view_release(&v);
	ana_stree_release(&t);

	ana_stree_init(&t);
	for (int i = 0; i < 99; i++)
		add(&t, "a;b", 0, 0);
	add(&t, "a;c", 0, 0);
	assert_int_equal(ana_stree_view(&t, 0.05, 0, &v), 0);
	assert_int_equal(v.pruned_nodes, 1);
	assert_int_equal(v.n, 3);   /* a b [c] */
	ana_stree_view_release(&v);
	ana_stree_release(&t);

	ana_stree_init(&t);
	assert_int_equal(ana_stree_add(&t, NULL, 0, 0, 10), 0);   /* root only */
	assert_int_equal(ana_stree_view(&t, 0.5, 8, &v), 0);
	assert_int_equal(v.n, 0);
	assert_int_equal(v.weight, 10);
	ana_stree_view_release(&v);
	ana_stree_release(&t);
}

static int setup(void **state)
{
	(void)state;
	ana_strpool_init(&pool);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ana_strpool_release(&pool);
	return 0;
}

/* Each stack's leaf, mapped through the view, lands on a view node:
 * itself when kept, the placeholder under its last kept ancestor when
 * pruned; the stacks' weights summed per view node are the view's self
 * weights, exactly (what the HTML page's selection sums). */
static void test_leaf_map(void **state)
{
	(void)state;
	struct ana_stree t;
	ana_stree_init(&t);
	static const struct { const char *stack; uint64_t w; } st[] = {
		{ "main;a;b", 500 }, { "main;a", 300 }, { "main;a;tiny1", 1 },
		{ "main;tiny2;deep", 1 }, { "main;tiny2", 1 }, { "other", 197 }, { "main", 0 },
	};
	uint32_t leaf[7];
	for (size_t i = 0; i < 7; i++) {
		add(&t, st[i].stack, st[i].w, 0);
		leaf[i] = ana_stree_last_node(&t);
		assert_true(leaf[i] < ana_stree_nodes(&t));
	}
	assert_int_equal(leaf[6], 0);   /* "main": the first node made */
	struct ana_stree_view v;
	assert_int_equal(ana_stree_view(&t, 0.01, 0, &v), 0);   /* 1% = 10: tiny* pruned */
	assert_int_equal(v.nmap, ana_stree_nodes(&t));
	uint64_t *self = calloc(v.n, sizeof(*self));
	assert_non_null(self);
	for (size_t i = 0; i < 7; i++) {
		uint32_t m = v.map[leaf[i]];
		assert_true(m < v.n);
		self[m] += st[i].w;
		if (i >= 2 && i <= 4)
			assert_true(v.nodes[m].pruned > 0);
		else
			assert_null(v.nodes[m].pruned ? "pruned" : NULL);
	}
	/* tiny2 and its child share main's placeholder; tiny1 is in a's */
	assert_int_equal(v.map[leaf[3]], v.map[leaf[4]]);
	assert_true(v.map[leaf[2]] != v.map[leaf[3]]);
	for (size_t i = 0; i < v.n; i++)
		assert_int_equal(self[i], v.nodes[i].self);
	free(self);
	ana_stree_view_release(&v);
	assert_null(v.map);
	struct ana_stree_frame none;
	assert_int_equal(ana_stree_add(&t, &none, 0, 0, 5), 0);
	assert_int_equal(ana_stree_last_node(&t), ANA_STREE_ROOT);
	ana_stree_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_and_full_view),
		cmocka_unit_test(test_inverted),
		cmocka_unit_test(test_pruning),
		cmocka_unit_test(test_base_weights),
		cmocka_unit_test(test_max_nodes),
		cmocka_unit_test(test_order_independent),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_odd_weights),
		cmocka_unit_test(test_leaf_map),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
