/*
 * chain_nofp.c - the --call-graph dwarf workload (tests/kernel/
 * test_callgraph_dwarf.sh, tests/bench/dwarf_vs_perf.sh). Built WITHOUT
 * frame pointers (-O2 -fomit-frame-pointer: the "_nofp" suffix, see
 * tests/CMakeLists.txt), like most of a production host's code, so only
 * DWARF CFI unwinds it:
 *
 *   main -> chain_one -> chain_two -> chain_three -> qsort (libc)
 *                                                 -> chain_compare
 *                        chain_two -> chain_spin
 *
 * Every round does a fixed amount of work in each branch, yet how the CPU
 * time splits between them depends on the CPU and its load (~35% under
 * qsort, ~65% in chain_spin on the CI VM, 10 points apart between two busy
 * runs): tools are compared on the same run. No call is a tail call (each
 * caller uses the result), so every caller keeps its frame.
 *
 *   chain_nofp [SECS [GO]]
 *
 * runs for SECS CPU seconds (default 2) and prints its own CPU time at the
 * end ("cpu_s X", for benchmarks that subtract it from a recorder's). With
 * GO (a fifo), it first waits for a byte from it, so that recorders can
 * attach before the work starts; SECS count from then.
 */
#define _GNU_SOURCE
#include <sys/resource.h>

#include "workload.h"

#define N 2048

static volatile unsigned sink;

KEEP int chain_compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	for (int i = 0; i < 8; i++)   /* some work of its own */
		sink += (unsigned)(x ^ i);
	return (x > y) - (x < y);
}

KEEP int chain_three(int *v, int n)
{
	for (int i = 0; i < n; i++)
		v[i] = (i * 7919) % n;
	qsort(v, (size_t)n, sizeof(*v), chain_compare);
	return v[n / 2];
}

KEEP unsigned chain_spin(unsigned rounds)
{
	unsigned x = rounds;

	for (unsigned i = 0; i < rounds; i++)
		x = x * 1103515245u + 12345u + (x >> 7);
	return x;
}

KEEP int chain_two(int *v, int n)
{
	int r = chain_three(v, n);

	sink += chain_spin(150000);
	return r + 1;
}

KEEP int chain_one(int *v, int n)
{
	int r = chain_two(v, n);

	__asm__ volatile("" ::: "memory");
	return r + 2;
}

int main(int argc, char **argv)
{
	static int v[N];
	double secs = argc > 1 ? atof(argv[1]) : 2.0, t0;
	struct rusage ru;
	long rounds = 0;
	int r = 0;

	if (argc > 2)
		wait_go(argv[2]);
	t0 = cpu_s();
	do {
		r += chain_one(v, N);
		rounds++;
	} while (cpu_s() - t0 < secs);
	getrusage(RUSAGE_SELF, &ru);
	printf("chain_nofp: %ld rounds, cpu_s %.3f\n", rounds,
	       (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	return r == 12345;
}
