/*
 * symprog.c - a workload with known function names for the symbol tests
 * (tests/kernel/test_symbols.sh). Built with frame pointers and -fno-inline
 * (tests/CMakeLists.txt), it spins for the given seconds (default 2) in
 * symprog_hot_loop(), which calls into libc (qsort with our comparator,
 * strtol, memfrob, strlen) and, every round, into the kernel (getppid and
 * a pipe write/read pair), so a sampled trace holds frames of the program,
 * of libc and of the kernel.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N 512

static volatile unsigned long sink;

__attribute__((noinline)) int symprog_compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

__attribute__((noinline)) void symprog_touch(int *v)
{
	sink += (unsigned long)v[0];
}

/* Not a leaf (it calls symprog_touch), so it sets up its frame pointer
 * even where the compiler omits it in leaf functions: samples in its loop
 * unwind as symprog_fill <- symprog_hot_loop <- main. */
__attribute__((noinline)) void symprog_fill(int *v, unsigned *seed)
{
	for (int r = 0; r < 4; r++) {
		for (int i = 0; i < N; i++) {
			*seed = *seed * 1103515245u + 12345u;
			v[i] = (int)(*seed >> 8);
		}
	}
	symprog_touch(v);
}

__attribute__((noinline)) unsigned long symprog_hot_loop(int *v, char *text,
							 int fds[2])
{
	unsigned seed = 1;
	unsigned long acc = 0;
	char c = 0;

	symprog_fill(v, &seed);
	qsort(v, N, sizeof(*v), symprog_compare);
	for (int i = 0; i < 64; i++) {
		char num[32];

		snprintf(num, sizeof(num), "%d", v[i]);
		acc += (unsigned long)strtol(num, NULL, 10);
	}
	memfrob(text, 4096);
	acc += strlen(text);
	acc += (unsigned long)getppid();
	if (write(fds[1], "x", 1) == 1 && read(fds[0], &c, 1) == 1)
		acc += (unsigned long)c;
	return acc;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0, end;
	static int v[N];
	static char text[4097];
	int fds[2];

	if (pipe(fds) != 0) {
		perror("pipe");
		return 1;
	}
	memset(text, 'a', 4096);
	end = now_s() + secs;
	while (now_s() < end)
		sink += symprog_hot_loop(v, text, fds);
	printf("symprog done %lu\n", sink);
	return 0;
}
