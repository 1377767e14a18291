/*
 * calltree.c - a report entry's call chains as perf's caller graph.
 *
 * Layout, per branch at depth d (d >= 1), each line after a margin of
 * 12 spaces (15 under a "---" first line):
 *   a separator line: for each level i < d, "|" and 10 spaces while level
 *   i has branches to come, else 11 spaces;
 *   the branch's first frame: for each level i < d, "|" or " ", then
 *   "--P%--" at the last level, 10 spaces before it; then the name;
 *   its other frames (the path goes on without a fork): the same with
 *   10 spaces instead of the percentage.
 */
#include "analyzer/render/calltree.h"

#include <errno.h>
#include <stdlib.h>

#include "analyzer/render/stree.h"
#include "analyzer/render/table.h"

#define NONE SIZE_MAX

struct printer {
	const struct ana_stree_vnode *v;   /* the view, pre-order */
	size_t n;
	FILE *f;
	uint64_t total;
	int left;                /* extra margin after a "---" first line */
	unsigned char *bar;      /* bar[i]: level i still has branches to come */
};

/* The first child of view node i (NONE = the root), and the next
 * sibling of c: placeholders (pruned branches) included. */
static size_t first_child(const struct printer *p, size_t i)
{
	size_t c = i == NONE ? 0 : i + 1;
	uint32_t d = i == NONE ? 0 : p->v[i].depth + 1;
	return c < p->n && p->v[c].depth == d ? c : NONE;
}

static size_t next_sibling(const struct printer *p, size_t c)
{
	size_t j = c + 1;
	while (j < p->n && p->v[j].depth > p->v[c].depth)
		j++;
	return j < p->n && p->v[j].depth == p->v[c].depth ? j : NONE;
}

/* c, or the first sibling after it that is not a placeholder. */
static size_t next_kept(const struct printer *p, size_t c)
{
	while (c != NONE && !p->v[c].name)
		c = next_sibling(p, c);
	return c;
}

/* The node after i on the same branch: its only child when no chain
 * ends at i and nothing under it was pruned, else NONE. */
static size_t run_next(const struct printer *p, size_t i)
{
	size_t c = first_child(p, i);
	if (p->v[i].self || c == NONE || !p->v[c].name || next_sibling(p, c) != NONE)
		return NONE;
	return c;
}

static void margin(const struct printer *p)
{
	fprintf(p->f, "            %*s", p->left, "");
}

static void name(const struct printer *p, size_t i)
{
	ana_text_str(p->f, p->v[i].name);
	fputc('\n', p->f);
}

/* The branches under node i at depth (>= 1): whether any was written. */
static int print_level(struct printer *p, size_t i, int depth)
{
	size_t c = next_kept(p, first_child(p, i));
	if (c == NONE)
		return 0;
	while (c != NONE) {
		size_t next = next_kept(p, next_sibling(p, c)), end = c;
		/* the separator keeps the bars of the branches above */
		margin(p);
		for (int d = 0; d < depth; d++)
			fputs(p->bar[d] ? "|          " : "           ", p->f);
		fputc('\n', p->f);
		if (next == NONE)
			p->bar[depth - 1] = 0;
		for (size_t r = c; r != NONE; r = run_next(p, r)) {
			margin(p);
			for (int d = 0; d < depth; d++) {
				fputc(p->bar[d] ? '|' : ' ', p->f);
				if (r == c && d == depth - 1)
					fprintf(p->f, "--%.2f%%--", p->total ? 100.0 *
						(double)p->v[c].weight / (double)p->total : 0.0);
				else
					fputs("          ", p->f);
			}
			name(p, r);
			end = r;
		}
		p->bar[depth] = 1;
		print_level(p, end, depth + 1);
		c = next;
	}
	return 1;
}

int ana_calltree_print(const struct ana_stree *t, FILE *f, uint64_t total,
		       uint64_t entry, uint64_t min_weight)
{
	struct ana_stree_view v;
	if (!t->weight)
		return 0;
	/* kept: weight >= fraction x the root's */
	int ret = ana_stree_view(t, (double)min_weight / (double)t->weight, 0, &v);
	if (ret < 0)
		return ret;
	struct printer p = { .v = v.nodes, .n = v.n, .f = f, .total = total };
	uint32_t depth = 0;
	for (size_t i = 0; i < v.n; i++)
		if (v.nodes[i].depth > depth)
			depth = v.nodes[i].depth;
	if (!(p.bar = calloc((size_t)depth + 3, 1))) {
		ana_stree_view_release(&v);
		return -ENOMEM;
	}
	int printed = 0;
	size_t start = NONE, top = next_kept(&p, first_child(&p, NONE));
	if (top != NONE && next_kept(&p, next_sibling(&p, top)) == NONE &&
	    v.nodes[top].weight == entry) {
		/* One branch holds the whole entry: no percentage, and the
		 * tree starts one level in. */
		fputs("            |\n            ---", f);
		name(&p, top);
		p.left = 3;
		start = top;
		for (size_t r = run_next(&p, top); r != NONE; r = run_next(&p, r)) {
			margin(&p);
			name(&p, r);
			start = r;
		}
		printed = 1;
	}
	p.bar[0] = 1;
	printed |= print_level(&p, start, 1);
	if (printed)
		fputc('\n', f);
	free(p.bar);
	ana_stree_view_release(&v);
	return 0;
}
