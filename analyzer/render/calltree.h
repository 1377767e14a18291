/*
 * calltree.h - a report entry's call chains printed as the tree
 * `perf report --stdio -g` prints under an entry (perf's default
 * graph,0.5,caller: outermost caller first, percentages of the whole
 * report's weight, branches under a threshold hidden).
 *
 * The chains are a stack tree (stree.h: paths added outermost frame
 * first). Printing joins the nodes of a path that neither forks nor ends
 * a chain into one branch, as perf's radix tree does, and puts siblings
 * heaviest first (stree's view: equal weights by name).
 *
 * How to use:
 *
 *   struct ana_stree t;  ana_stree_init(&t);
 *   for every chain of the entry:  ana_stree_add(&t, path, n, 0, weight);
 *   ana_calltree_print(&t, f, total, entry_weight, min_weight);
 *   ana_stree_release(&t);
 */
#ifndef ANA_CALLTREE_H
#define ANA_CALLTREE_H

#include <stdint.h>
#include <stdio.h>

struct ana_stree;

/* Writes the tree as text (names escaped as ana_text_str() does).
 * Percentages are of total; entry is the weight of the entry the tree
 * hangs under (a single branch holding all of it is printed without a
 * percentage, as perf does); branches lighter than min_weight are
 * hidden. Writes nothing for an empty tree, else ends with an empty
 * line. 0 or -ENOMEM. */
int ana_calltree_print(const struct ana_stree *t, FILE *f, uint64_t total,
		       uint64_t entry, uint64_t min_weight);

#endif
