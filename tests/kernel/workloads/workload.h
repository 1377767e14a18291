/*
 * workload.h - what the CPU-bound workloads share (calltree.c,
 * splitspin.c, chain_nofp.c, execspin.c): their clock, their start signal
 * and KEEP, for the functions each sample must be named by.
 *
 *   WORKLOAD SECS... [GO]
 *
 * With GO (a fifo) a workload first waits for a byte from it, so that
 * recorders can attach before the work starts; it then spins until it
 * has used SECS of CPU time (cpu_s()), however busy the machine is.
 */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* one function, one frame: never inlined, never cloned (gcc) */
#ifdef __clang__
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noclone))
#endif

/* CPU seconds this process has used. */
static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Blocks until a byte comes through the fifo at path. */
static void wait_go(const char *path)
{
	char c;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || read(fd, &c, 1) != 1) {
		perror(path);
		exit(2);
	}
	close(fd);
}

#endif
