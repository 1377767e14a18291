/*
 * stree.h - a weighted stack tree: stacks in, a bounded flame graph out.
 *
 * Any weighted stack aggregates here: samples (weight = period), and any
 * later kind of stack with a weight (off-CPU time in ns, allocations in
 * bytes) without a change to the tree. A stack is a path of frames from
 * the root down, each a name (an interned string: equal names must be equal
 * pointers, as the trace's string pool gives them) and a small tag the
 * tree keeps without reading (the HTML page colors by it). Equal paths
 * share nodes; every node counts the weight and the number of stacks that
 * went through it (total) and that ended in it (self).
 *
 * Memory grows with distinct paths, never with the number of stacks.
 * ana_stree_view() then cuts the tree down for display: nodes whose total
 * is below a fraction of the root's are pruned, and each kept node with
 * pruned children gets one placeholder child holding their sum, so every
 * weight still adds up.
 *
 * How to use:
 *
 *   struct ana_stree t;
 *   ana_stree_init(&t);
 *   for each stack:  ana_stree_add(&t, path, n, 0, weight);  // root first
 *   struct ana_stree_view v;
 *   ana_stree_view(&t, 0.0005, 16384, &v);   // pre-order, heaviest first
 *   for (i = 0; i < v.n; i++) v.nodes[i] ...
 *   ana_stree_view_release(&v);
 *   ana_stree_release(&t);
 *
 * The names are borrowed: they must outlive the tree and its views.
 */
#ifndef ANA_STREE_H
#define ANA_STREE_H

#include <stddef.h>
#include <stdint.h>

#include "format/base/hashmap.h"

/* One step of a path. */
struct ana_stree_frame {
	const char *name;   /* interned; borrowed */
	uint32_t tag;       /* caller's own meaning; part of the node's key */
};

struct ana_stree {
	struct prec_hashmap nodes;   /* {parent, tag, name} -> counts; node i = entry i */
	uint64_t weight, count; /* the root: every stack added */
	uint64_t base, base_count;   /* the root's of ana_stree_add_base() */
	/* The previous stack's path, frame by frame: consecutive stacks
	 * (same thread) share prefixes, found here without a lookup. */
	struct ana_stree_step { const char *name; uint32_t tag, node; } *last;
	size_t nlast, last_cap;
};

void ana_stree_init(struct ana_stree *t);
void ana_stree_release(struct ana_stree *t);

/* Adds one stack of n frames with weight. path[0] is the outermost frame
 * (the root's child) unless leaf_first, then path[n - 1] is: the same
 * frames give the caller tree one way and the callee (inverted) tree the
 * other. n = 0 charges the root itself. 0 or -ENOMEM. */
int ana_stree_add(struct ana_stree *t, const struct ana_stree_frame *path,
		  size_t n, int leaf_first, uint64_t weight);

/* A differential tree (html --diff) holds a second profile, the base,
 * on the same nodes: its stacks add to each node's base weight only, so
 * weight, self, count and the view's pruning stay those of the profile
 * added with ana_stree_add(). A path only the base has makes nodes of
 * weight 0 (pruned from views like any light node, their base summed
 * into the placeholder). Same arguments and returns as ana_stree_add(). */
int ana_stree_add_base(struct ana_stree *t, const struct ana_stree_frame *path,
		       size_t n, int leaf_first, uint64_t weight);

/* Adds every stack of `from` to `to`, its names interned in pool (so
 * `from` and the pool its names come from may go once merged): the
 * trees of several traces made one. Counts, weights and base add up as
 * if each stack had been added to `to`. 0 or -ENOMEM (then `to` holds
 * part of `from`). */
struct ana_strpool;
int ana_stree_merge(struct ana_stree *to, const struct ana_stree *from,
		    struct ana_strpool *pool);

/* Distinct nodes so far, the root excluded. */
size_t ana_stree_nodes(const struct ana_stree *t);

/* The node the last stack added ended in (its leaf; node numbers are
 * 0 .. ana_stree_nodes() - 1, in order of creation, a parent before its
 * children), or ANA_STREE_ROOT when it had no frame or failed. For a
 * caller that keeps per-stack data (when, which thread) beside the tree,
 * and maps it to view nodes with ana_stree_view's map. */
uint32_t ana_stree_last_node(const struct ana_stree *t);

#define ANA_STREE_ROOT UINT32_MAX   /* parent of the top-level nodes */

/* A node of a view. Pruned placeholders have name NULL and pruned = how
 * many nodes (whole subtrees counted node by node) they stand for. */
struct ana_stree_vnode {
	const char *name;
	uint32_t tag;
	uint32_t depth;     /* 0 = the root's children */
	uint64_t weight, self, count;
	uint64_t base;      /* ana_stree_add_base() weight through the node */
	uint64_t pruned;
};

struct ana_stree_view {
	struct ana_stree_vnode *nodes;   /* pre-order; siblings heaviest first */
	size_t n;
	double fraction;                 /* the fraction finally used */
	uint64_t weight, count;          /* the root */
	uint64_t base, base_count;       /* the root's base */
	uint64_t pruned_nodes;           /* nodes left out in all */
	/* Tree node -> the view node that holds its weight: itself when
	 * kept, else the placeholder under its last kept ancestor
	 * (ana_stree_nodes() entries, at the view's making). */
	uint32_t *map;
	size_t nmap;
};

/* Builds the display view: a node is kept when its weight is at least
 * fraction x the root's weight (every node when fraction <= 0) and its
 * parent is kept. When more than max_nodes nodes (placeholders included;
 * 0 = no limit) would be kept, the fraction is doubled until they fit.
 * Ties among siblings are ordered by name, so a view depends only on the
 * stacks added, not on their order. 0 or -ENOMEM; v owns its nodes array. */
int ana_stree_view(const struct ana_stree *t, double fraction, size_t max_nodes,
		   struct ana_stree_view *v);
void ana_stree_view_release(struct ana_stree_view *v);

#endif
