/*
 * calltree.c - the perf-shaped commands' workload (tests/kernel/
 * test_perfshape.sh). Built with frame pointers (tests/CMakeLists.txt), so
 * `record -g` gives whole chains, and every round does a fixed amount of
 * work in each branch:
 *
 *   main -> calltree_round -> calltree_alpha -> calltree_spin (1 unit)
 *                          -> calltree_beta  -> calltree_spin (2 units)
 *                                            -> calltree_gamma -> calltree_spin (3 units)
 *
 * so calltree_spin holds nearly all the samples, and its callers split
 * them about 1:2:3 (alpha, beta itself, gamma); the exact split moves with
 * the CPU, which is why tools are compared on the same run. No call is a
 * tail call (each caller uses the result), so every caller keeps its frame.
 *
 *   calltree [SECS [GO]]
 *
 * runs for SECS CPU seconds (default 2). With GO (a fifo), it first waits
 * for a byte from it, so that recorders can attach before the work starts.
 */
#define _GNU_SOURCE
#include "workload.h"

#define UNIT 40000u

static volatile unsigned sink;

KEEP void calltree_touch(unsigned x)
{
	sink += x;
}

/* Not a leaf (it calls calltree_touch), so it sets up its frame pointer
 * even where the compiler omits it in leaf functions: a leaf without one
 * hides its caller from a frame-pointer walk. The store through sink also
 * keeps the compiler from hoisting the rounds out of main's loop. */
KEEP unsigned calltree_spin(unsigned rounds)
{
	unsigned x = rounds;

	for (unsigned i = 0; i < rounds; i++)
		x = x * 1103515245u + 12345u + (x >> 7);
	calltree_touch(x);
	return x;
}

KEEP unsigned calltree_alpha(void)
{
	return calltree_spin(UNIT) + 1;
}

KEEP unsigned calltree_gamma(void)
{
	return calltree_spin(3 * UNIT) + 3;
}

KEEP unsigned calltree_beta(void)
{
	unsigned r = calltree_spin(2 * UNIT);

	return r + calltree_gamma() + 2;
}

KEEP unsigned calltree_round(void)
{
	unsigned r = calltree_alpha();

	return r ^ calltree_beta();
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0, t0;
	long rounds = 0;

	if (argc > 2)
		wait_go(argv[2]);
	t0 = cpu_s();
	do {
		sink += calltree_round();
		rounds++;
	} while (cpu_s() - t0 < secs);
	printf("calltree: %ld rounds\n", rounds);
	return sink == 12345;
}
