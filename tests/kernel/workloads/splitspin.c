/*
 * splitspin.c - a workload whose CPU time splits between two functions in
 * a given ratio, for the diff tests (tests/kernel/test_diff.sh).
 *
 *   splitspin PCT [SECS [GO]]
 *
 * Each round calls split_a for PCT units of work and split_b for 100 - PCT
 * (the same loop in both, so a unit costs the same in either), until SECS
 * CPU seconds (default 2) have gone. The work is counted, not timed, so
 * the split is that of the program, whatever the load: PCT% of the CPU
 * time in split_a. The clock is read once per round (a few ms), so
 * nothing else shows. With GO (a fifo), it first waits for a byte from
 * it, so that recorders can attach before the work starts. Prints the
 * rounds done and the CPU time.
 */
#define _GNU_SOURCE
#include "workload.h"

/* KEEP (workload.h), each function starting its own cache line */
#define KEEP64 KEEP __attribute__((aligned(64)))

#define UNIT 2000   /* loop iterations per unit: ~3 us */

static volatile unsigned sink;

#define SPIN(units)                                                        \
	do {                                                               \
		unsigned x = (units);                                      \
		for (unsigned i = 0; i < (units) * UNIT; i++)              \
			x = x * 1103515245u + 12345u + (x >> 7);           \
		sink += x;                                                 \
	} while (0)

KEEP64 void split_a(unsigned units)
{
	SPIN(units);
}

KEEP64 void split_b(unsigned units)
{
	SPIN(units);
}

int main(int argc, char **argv)
{
	int pct = argc > 1 ? atoi(argv[1]) : -1;
	double secs = argc > 2 ? atof(argv[2]) : 2.0, t0;
	long rounds = 0;

	if (pct < 0 || pct > 100) {
		fprintf(stderr, "usage: splitspin PCT [SECS [GO]]\n");
		return 2;
	}
	if (argc > 3)
		wait_go(argv[3]);
	t0 = cpu_s();
	do {
		/* 10 rounds between clock reads: ~3 ms of work */
		for (int r = 0; r < 10; r++) {
			split_a((unsigned)pct);
			split_b((unsigned)(100 - pct));
		}
		rounds += 10;
	} while (cpu_s() - t0 < secs);
	printf("splitspin: %d%% in split_a, %ld rounds, cpu_s %.3f\n", pct, rounds,
	       cpu_s() - t0);
	return 0;
}
