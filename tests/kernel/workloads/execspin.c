/*
 * execspin - a short-lived process for the tests of record-time order
 * across CPU rings (tests/kernel/test_ring_order.sh).
 *
 *   execspin [MS]
 *
 * Spins MS milliseconds of CPU time (default 20) in 32 stages, one
 * function each (execspin_stage00 ... execspin_stage73, octal-like
 * names: tens 0-7, units 0-3), called in order from main(), then exits. Run many
 * times in a row (a shell loop exec'ing it), each run's samples fall right
 * after its exec and the mmaps of its loader: on another CPU than those
 * records when the scheduler moved it meanwhile. The work is counted in
 * CPU time, so a loaded machine stretches a run but not its work.
 */
#define _GNU_SOURCE
#include "workload.h"

static volatile unsigned sink;

/* Stage N spins its share of the CPU time in its own function, so each
 * stage's samples are the only hits on that function's addresses in this
 * run of this binary: a sample whose address the recorder could not place
 * leaves the stage unnamed, rather than hidden by the stages after it. */
#define STAGE(n)                                                           \
	KEEP void execspin_stage##n(double secs)                           \
	{                                                                  \
		double t0 = cpu_s();                                       \
		unsigned x = n;                                            \
		while (cpu_s() - t0 < secs)                                \
			for (unsigned i = 0; i < 20000; i++)               \
				x = x * 1103515245u + 12345u + (x >> 7);   \
		sink += x;                                                 \
	}
#define STAGES4(a) STAGE(a##0) STAGE(a##1) STAGE(a##2) STAGE(a##3)
STAGES4(0) STAGES4(1) STAGES4(2) STAGES4(3)
STAGES4(4) STAGES4(5) STAGES4(6) STAGES4(7)

#define REF4(a) execspin_stage##a##0, execspin_stage##a##1, \
	execspin_stage##a##2, execspin_stage##a##3
static void (*const stages[])(double) = {
	REF4(0), REF4(1), REF4(2), REF4(3), REF4(4), REF4(5), REF4(6), REF4(7),
};
#define NSTAGES (sizeof(stages) / sizeof(stages[0]))

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 20.0;

	if (ms <= 0 || ms > 10000) {
		fprintf(stderr, "usage: execspin [MS]\n");
		return 2;
	}
	for (size_t i = 0; i < NSTAGES; i++)
		stages[i](ms / 1000.0 / NSTAGES);
	return 0;
}
