/*
 * main.c - hotprog: calls libhot.so's hot_run for argv[1] seconds of its
 * own CPU time (default 1), then prints the result (built at test time,
 * linked against libhot.so).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
uint64_t hot_run(uint64_t seed);
int main(int argc, char **argv)
{
	struct timespec t0, t;
	double secs = argc > 1 ? atof(argv[1]) : 1;
	uint64_t x = 1;
	/* CPU time, so that a loaded host does not starve the samples */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 64; i++)
			x = hot_run(x);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("%llu\n", (unsigned long long)x);
	return 0;
}
