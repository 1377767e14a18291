/*
 * napper - a known off-CPU workload for the --off-cpu kernel tests.
 *
 *   napper [NAPS [MS]]
 *
 * Sleeps NAPS times MS milliseconds (default 100 x 10) in napper_nap(),
 * called from napper_loop(), called from main(). The sleep is the
 * nanosleep system call made from napper_nap itself (inline assembly on
 * x86-64 and arm64; libc's syscall() elsewhere), so the user stack the
 * kernel walks by frame pointers at the switch-out starts in napper_nap:
 * through libc's wrapper (built without frame pointers) the walk would
 * skip the function that called it. napper_nap also calls a function
 * after the system call: a leaf function gets no frame of its own from
 * gcc even with -fno-omit-frame-pointer, and its caller would be skipped
 * instead. Prints the total time asleep in nanoseconds, measured with
 * CLOCK_MONOTONIC around each nap.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile int naps_done;

__attribute__((noinline)) void napper_count(void)
{
	naps_done++;
}

__attribute__((noinline)) void napper_nap(const struct timespec *ts)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall" : "=a"(ret)
			 : "0"((long)SYS_nanosleep), "D"(ts), "S"(0L)
			 : "rcx", "r11", "memory");
	(void)ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_nanosleep;
	register long x0 __asm__("x0") = (long)ts;
	register long x1 __asm__("x1") = 0;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1) : "memory");
#else
	syscall(SYS_nanosleep, ts, NULL);
#endif
	napper_count();
}

__attribute__((noinline)) long long napper_loop(int naps, long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	long long asleep = 0;

	for (int i = 0; i < naps; i++) {
		long long t0 = now_ns();

		napper_nap(&ts);
		asleep += now_ns() - t0;
	}
	return asleep;
}

int main(int argc, char **argv)
{
	int naps = argc > 1 ? atoi(argv[1]) : 100;
	long ms = argc > 2 ? atol(argv[2]) : 10;

	printf("napper: pid %ld asleep_ns %lld\n", (long)getpid(), napper_loop(naps, ms));
	return 0;
}
