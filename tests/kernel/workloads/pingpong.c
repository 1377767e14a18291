/*
 * pingpong - a known workload for the recorder's kernel tests.
 *
 *   pingpong [ROUNDS [SPIN_MS [EXIT_CODE [ROUND_US]]]]
 *
 * Spins SPIN_MS milliseconds of its own CPU time (so cpu-clock samples
 * land in it: SPIN_MS x the frequency of them however loaded the machine),
 * then two threads named "pp-ping" and "pp-pong" pass one byte back and
 * forth over two pipes ROUNDS times: every round blocks each thread in
 * read(2) once, so each round costs context switches. With ROUND_US each
 * thread also spins that many microseconds per round before it passes the
 * byte on (so each block of the other lasts at least that long). Prints
 * the thread ids and exits with EXIT_CODE (to check that it is
 * propagated).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int to_pong[2], to_ping[2];
static long rounds = 10000;
static volatile long ping_tid, pong_tid;
static double round_ms;

static double clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ms on clock: CLOCK_MONOTONIC for wall time, CLOCK_THREAD_CPUTIME_ID for
 * this thread's CPU time however long the machine makes it take */
static void spin(clockid_t clock, double ms)
{
	double end = clock_ms(clock) + ms;
	volatile unsigned long x = 0;

	while (clock_ms(clock) < end)
		for (int i = 0; i < 1000; i++)
			x += (unsigned long)i;
}

static void *ping(void *arg)
{
	char c = 'p';

	(void)arg;
	prctl(PR_SET_NAME, "pp-ping");
	ping_tid = syscall(SYS_gettid);
	for (long i = 0; i < rounds; i++) {
		if (round_ms > 0)
			spin(CLOCK_MONOTONIC, round_ms);
		if (write(to_pong[1], &c, 1) != 1 || read(to_ping[0], &c, 1) != 1) {
			perror("pingpong: ping");
			exit(2);
		}
	}
	return NULL;
}

static void *pong(void *arg)
{
	char c;

	(void)arg;
	prctl(PR_SET_NAME, "pp-pong");
	pong_tid = syscall(SYS_gettid);
	for (long i = 0; i < rounds; i++) {
		if (read(to_pong[0], &c, 1) != 1)
			goto fail;
		if (round_ms > 0)
			spin(CLOCK_MONOTONIC, round_ms);
		if (write(to_ping[1], &c, 1) != 1) {
fail:
			perror("pingpong: pong");
			exit(2);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double spin_ms = argc > 2 ? atof(argv[2]) : 100;
	int code = argc > 3 ? atoi(argv[3]) : 0;

	round_ms = argc > 4 ? atof(argv[4]) / 1000 : 0;
	pthread_t a, b;

	if (argc > 1)
		rounds = atol(argv[1]);
	spin(CLOCK_THREAD_CPUTIME_ID, spin_ms);
	if (pipe(to_pong) < 0 || pipe(to_ping) < 0) {
		perror("pingpong: pipe");
		return 2;
	}
	if (pthread_create(&b, NULL, pong, NULL) || pthread_create(&a, NULL, ping, NULL)) {
		fprintf(stderr, "pingpong: pthread_create failed\n");
		return 2;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("pingpong: %ld rounds, pid %ld, ping tid %ld, pong tid %ld\n",
	       rounds, (long)getpid(), ping_tid, pong_tid);
	fflush(stdout);
	return code;
}
