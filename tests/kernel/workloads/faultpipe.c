/*
 * faultpipe.c - a workload with known counts for counter tests.
 *
 *   faultpipe PAGES ROUNDTRIPS
 *
 * 1. Touches PAGES fresh pages of an anonymous mapping (huge pages off), so
 *    the process takes at least PAGES page faults.
 * 2. Does ROUNDTRIPS pipe round trips with a forked child: parent writes a
 *    byte, child reads it and writes it back, parent reads it. Both are
 *    pinned to one CPU first, so every blocking read is a context switch:
 *    at least 2 * ROUNDTRIPS switches between them.
 * Exits 0 on success, 3 when the child answered wrong, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int pin_to_current_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		cpu = 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static int touch_pages(long pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	volatile char *p;

	p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	/* One fault per page: a transparent huge page would map 512 at once. */
	madvise((void *)p, (size_t)(pages * psz), MADV_NOHUGEPAGE);
	for (long i = 0; i < pages; i++)
		p[i * psz] = (char)i;
	munmap((void *)p, (size_t)(pages * psz));
	return 0;
}

static int round_trips(long n)
{
	int down[2], up[2], status;
	pid_t pid;

	if (pipe(down) < 0 || pipe(up) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char b;

		close(down[1]);
		close(up[0]);
		while (read(down[0], &b, 1) == 1)
			if (write(up[1], &b, 1) != 1)
				_exit(1);
		_exit(0);
	}
	close(down[0]);
	close(up[1]);
	for (long i = 0; i < n; i++) {
		char b = (char)i, r;

		if (write(down[1], &b, 1) != 1 || read(up[0], &r, 1) != 1 ||
		    r != b)
			return -1;
	}
	close(down[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	close(up[0]);
	return 0;
}

int main(int argc, char **argv)
{
	long pages, trips;

	if (argc != 3) {
		fprintf(stderr, "usage: faultpipe PAGES ROUNDTRIPS\n");
		return 2;
	}
	pages = atol(argv[1]);
	trips = atol(argv[2]);
	if (pages < 0 || trips < 0) {
		fprintf(stderr, "faultpipe: counts must be >= 0\n");
		return 2;
	}
	/* Best effort: unpinned, a round trip may cost fewer switches. */
	if (pin_to_current_cpu() < 0)
		perror("faultpipe: warning: cannot pin to one cpu");
	if (pages && touch_pages(pages) < 0) {
		perror("faultpipe: mmap");
		return 3;
	}
	if (trips && round_trips(trips) < 0) {
		perror("faultpipe: round trips");
		return 3;
	}
	printf("faultpipe: pages=%ld roundtrips=%ld\n", pages, trips);
	return 0;
}
