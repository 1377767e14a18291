/*
 * test_calltree.c - analyzer/render/calltree: report -g's trees in the
 * layout of `perf report --stdio -g` (graph,0.5,caller).
 *
 * The expected texts are perf 6.1's own output for the calltree workload
 * (tests/kernel/workloads/calltree.c), with the weights rescaled to round
 * numbers: the entry whose one branch holds all its weight (no
 * percentage, "---" first line), the leaf's entry whose whole chains do
 * not (a percentage on the first branch), a branch cut by the threshold
 * (the bars above it end with the last branch shown), paths that run on
 * without a fork on one branch, and a trace's control bytes escaped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyzer/read/strpool.h"
#include "analyzer/render/calltree.h"
#include "analyzer/render/stree.h"

static struct ana_strpool pool;

/* Adds "a;b;c" (outermost first) with weight. */
static void add(struct ana_stree *t, const char *stack, uint64_t w)
{
	struct ana_stree_frame f[32];
	size_t n = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *save, *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		f[n].name = ana_strpool_intern(&pool, tok);
		assert_non_null(f[n].name);
		f[n++].tag = 0;
	}
	assert_int_equal(ana_stree_add(t, f, n, 0, w), 0);
}

static void expect(const struct ana_stree *t, uint64_t total, uint64_t entry, uint64_t min,
		   const char *want)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(ana_calltree_print(t, f, total, entry, min), 0);
	assert_int_equal(fclose(f), 0);
	if (strcmp(text, want))
		fprintf(stderr, "got:\n%s\nwant:\n%s\n", text, want);
	assert_string_equal(text, want);
	free(text);
}

/* calltree_round's entry (children mode): its chains down to the leaf. */
static void test_one_branch(void **state)
{
	(void)state;
	struct ana_stree t;
	ana_stree_init(&t);
	add(&t, "calltree_round;calltree_beta;calltree_gamma;calltree_spin", 4989);
	/* under the 0.5% threshold: cut, and calltree_spin ends its path */
	add(&t, "calltree_round;calltree_beta;calltree_gamma;calltree_spin;calltree_touch", 1);
	add(&t, "calltree_round;calltree_beta;calltree_spin", 3289);
	add(&t, "calltree_round;calltree_alpha;calltree_spin", 1678);
	expect(&t, 10000, 9957, 50,
	       "            |\n"
	       "            ---calltree_round\n"
	       "               |          \n"
	       "               |--82.79%--calltree_beta\n"
	       "               |          |          \n"
	       "               |          |--49.90%--calltree_gamma\n"
	       "               |          |          calltree_spin\n"
	       "               |          |          \n"
	       "               |           --32.89%--calltree_spin\n"
	       "               |          \n"
	       "                --16.78%--calltree_alpha\n"
	       "                          calltree_spin\n"
	       "\n");
	/* --percent-limit 20: alpha's branch goes, beta's is the last */
	expect(&t, 10000, 9957, 2000,
	       "            |\n"
	       "            ---calltree_round\n"
	       "               |          \n"
	       "                --82.79%--calltree_beta\n"
	       "                          |          \n"
	       "                          |--49.90%--calltree_gamma\n"
	       "                          |          calltree_spin\n"
	       "                          |          \n"
	       "                           --32.89%--calltree_spin\n"
	       "\n");
	/* everything under the threshold: nothing at all */
	expect(&t, 10000, 9957, 9999, "");
	ana_stree_release(&t);
}

/* calltree_spin's entry: its own samples' whole chains (98.63% of the
 * total) are not all of its children weight (99.58%). */
static void test_leaf_entry(void **state)
{
	(void)state;
	struct ana_stree t;
	ana_stree_init(&t);
	add(&t, "__libc_start_call_main;main;calltree_round;calltree_beta;calltree_gamma;"
	     "calltree_spin", 4983);
	add(&t, "__libc_start_call_main;main;calltree_round;calltree_beta;calltree_spin", 3287);
	add(&t, "__libc_start_call_main;main;calltree_round;calltree_alpha;calltree_spin", 1668);
	add(&t, "calltree_spin;calltree_touch", 20);
	expect(&t, 10000, 9958, 50,
	       "            |          \n"
	       "             --99.38%--__libc_start_call_main\n"
	       "                       main\n"
	       "                       calltree_round\n"
	       "                       |          \n"
	       "                       |--82.70%--calltree_beta\n"
	       "                       |          |          \n"
	       "                       |          |--49.83%--calltree_gamma\n"
	       "                       |          |          calltree_spin\n"
	       "                       |          |          \n"
	       "                       |           --32.87%--calltree_spin\n"
	       "                       |          \n"
	       "                        --16.68%--calltree_alpha\n"
	       "                                  calltree_spin\n"
	       "\n");
	ana_stree_release(&t);
}

/* Names come from the trace: a newline in one stays on its line. */
static void test_escaped(void **state)
{
	(void)state;
	struct ana_stree t;
	ana_stree_init(&t);
	add(&t, "main;evil\nname", 10);
	expect(&t, 10, 10, 0,
	       "            |\n"
	       "            ---main\n"
	       "               evil\\x0aname\n"
	       "\n");
	ana_stree_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_branch),
		cmocka_unit_test(test_leaf_entry),
		cmocka_unit_test(test_escaped),
	};
	ana_strpool_init(&pool);
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	ana_strpool_release(&pool);
	return r;
}
