/*
 * scale_bench.c - bytes per sample and writer memory against the number
 * of CPUs, for the two ways of mapping CPUs to streams.
 *
 *   scale_bench [--cpus 2,16,128] [--rates 99,4000] [--seconds S]
 *
 * Simulates a recording: every CPU samples at RATE Hz (per CPU) with deep
 * callchains (paths of depth 8-40 in a call tree of 2000 functions, so
 * callchains share their callers), for S simulated seconds (default 5).
 * Every 10 ms of simulated time the recorder drains each CPU's ring in
 * turn, appending that CPU's samples, then calls prec_writer_flush_due()
 * (frames are cut at frame_size or after 1 s, the recorder's defaults).
 * The samples go either
 *   per-cpu:  to stream 1 + cpu (perfrec 1.0: one open frame per CPU), or
 *   by-kind:  all to stream 1 (perfrec since format 1.1),
 * into a writer on /dev/null. For every (cpus, rate, layout) it prints
 * samples, frames, average frame bytes (raw), compressed bytes per sample
 * and the writer's peak heap (malloc'd bytes in use, glibc mallinfo2,
 * above what the bench held before the writer existed), and the encoder's
 * CPU time per sample. Each combination runs in a child process so one
 * run's heap does not count in the next.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/error.h"
#include "format/sink.h"
#include "format/writer.h"

#define NFUNCS 2000
#define NCHAINS 6000
#define MAXDEPTH 40
#define MS 1000000ull

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1Dull;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

/* Callchains as a real program's: leaf first, each a walk from main down
 * a call tree (function f's callees are a few functions above it), so
 * chains share their outer frames. 3 kernel frames on a quarter of them. */
struct chains {
	uint64_t ips[NCHAINS][MAXDEPTH + 3];
	size_t n[NCHAINS];
};

static void make_chains(struct chains *c)
{
	uint64_t fn_addr[NFUNCS];
	for (size_t i = 0; i < NFUNCS; i++)
		fn_addr[i] = 0x400000 + i * 0x240 + (rnd() % 0x100);
	for (size_t k = 0; k < NCHAINS; k++) {
		size_t depth = 8 + rnd() % (MAXDEPTH - 7), f = 0, m = 0;
		uint64_t walk[MAXDEPTH];
		for (size_t d = 0; d < depth; d++) {
			walk[d] = fn_addr[f] + 0x10 + (rnd() % 8) * 4;   /* return address */
			f = (f + 1 + rnd() % 5 + (d > 3 ? rnd() % 40 : 0)) % NFUNCS;
		}
		if (k % 4 == 0) {
			c->ips[k][m++] = 0xfffffffffffffe00ull;   /* PERF_CONTEXT_KERNEL */
			c->ips[k][m++] = 0xffffffff81000000ull + (rnd() % 64) * 0x40;
			c->ips[k][m++] = 0xffffffff81200000ull;
			c->ips[k][m++] = 0xfffffffffffffe00ull + 0x200;   /* PERF_CONTEXT_USER */
		}
		for (size_t d = depth; d-- > 0 && m < MAXDEPTH + 3;)
			c->ips[k][m++] = walk[d];
		c->n[k] = m;
	}
}

struct result {
	uint64_t samples, frames, bytes_raw, bytes_written;
	size_t peak_heap;
	double cpu;
	int err;
};

/* A skewed pick: most samples hit a few hundred hot chains. */
static size_t pick_chain(void)
{
	uint64_t r = rnd();
	return (r & 3) ? (r >> 8) % 300 : (r >> 8) % NCHAINS;
}

static void run_one(const struct chains *c, unsigned cpus, unsigned rate, unsigned seconds,
		    int by_kind, struct result *res)
{
	memset(res, 0, sizeof(*res));
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	size_t base = heap_in_use();
	struct prec_sink *sink = fd >= 0 ? prec_sink_fd_new(fd, 1) : NULL;
	struct prec_writer_opts wo = PREC_WRITER_OPTS_INIT;
	struct prec_writer *w = sink ? prec_writer_new(sink, &wo) : NULL;
	if (!w) {
		res->err = -ENOMEM;
		return;
	}
	double c0 = cpu_s();
	uint64_t t0 = 1000 * MS, tick = 10 * MS;
	double per_tick = (double)rate * 0.010, owed[1024] = { 0 };
	uint32_t pid_of_cpu[1024];
	for (unsigned k = 0; k < cpus && k < 1024; k++)
		pid_of_cpu[k] = 1000 + (uint32_t)(rnd() % 300);
	for (uint64_t t = t0; t < t0 + (uint64_t)seconds * 1000 * MS && !res->err; t += tick) {
		for (unsigned cpu = 0; cpu < cpus && !res->err; cpu++) {
			owed[cpu] += per_tick;
			unsigned n = (unsigned)owed[cpu];
			owed[cpu] -= n;
			uint32_t stream = by_kind ? 1 : 1 + cpu;
			if (rnd() % 50 == 0)   /* a context switch to another process */
				pid_of_cpu[cpu] = 1000 + (uint32_t)(rnd() % 300);
			for (unsigned i = 0; i < n; i++) {
				Perfrec__Packet p = PERFREC__PACKET__INIT;
				Perfrec__Sample s = PERFREC__SAMPLE__INIT;
				size_t k = pick_chain();
				s.cpu = cpu;
				s.pid = pid_of_cpu[cpu];
				s.tid = s.pid + (uint32_t)(rnd() % 4);
				s.ip = c->ips[k][0];
				s.period = 1000000000ull / rate;
				s.callchain = prec_writer_intern_callchain(w, stream, c->ips[k], c->n[k]);
				if (!s.callchain) {
					res->err = prec_writer_error(w);
					break;
				}
				p.data_case = PERFREC__PACKET__DATA_SAMPLE;
				p.sample = &s;
				uint64_t when = t + (uint64_t)i * tick / n + rnd() % 1000;
				int ret = prec_writer_append(w, stream, &p, when);
				if (ret < 0) {
					res->err = ret;
					break;
				}
				res->samples++;
			}
		}
		if (!res->err)
			res->err = prec_writer_flush_due(w, t + tick);
		size_t h = heap_in_use();
		if (h > base && h - base > res->peak_heap)
			res->peak_heap = h - base;
	}
	if (!res->err)
		res->err = prec_writer_close(w);
	res->cpu = cpu_s() - c0;
	struct prec_writer_stats st;
	prec_writer_stats(w, &st);
	res->frames = st.frames;
	res->bytes_raw = st.bytes_raw;
	res->bytes_written = st.bytes_written;
	prec_writer_free(w);
	prec_sink_free(sink);
}

static int parse_list(const char *s, unsigned *out, int max)
{
	int n = 0;
	while (*s && n < max) {
		char *end;
		unsigned long v = strtoul(s, &end, 10);
		if (end == s || v == 0 || v > 1024)
			return -1;
		out[n++] = (unsigned)v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return n;
}

static void usage(void)
{
	fprintf(stderr, "usage: scale_bench [--cpus 2,16,128] [--rates 99,4000] [--seconds S]\n"
		"  CPUs at most 1024, rates in Hz per CPU, S simulated seconds (default 5)\n");
}

int main(int argc, char **argv)
{
	unsigned cpus[16] = { 2, 16, 128 }, rates[16] = { 99, 4000 }, seconds = 5;
	int ncpus = 3, nrates = 2;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cpus") && i + 1 < argc) {
			ncpus = parse_list(argv[++i], cpus, 16);
		} else if (!strcmp(argv[i], "--rates") && i + 1 < argc) {
			nrates = parse_list(argv[++i], rates, 16);
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			seconds = (unsigned)atoi(argv[++i]);
		} else {
			usage();
			return 2;
		}
		if (ncpus <= 0 || nrates <= 0 || seconds == 0 || seconds > 3600) {
			usage();
			return 2;
		}
	}
	struct chains *c = malloc(sizeof(*c));
	if (!c)
		return 1;
	make_chains(c);
	printf("%5s %6s %-8s %9s %7s %10s %9s %10s %9s\n", "cpus", "Hz", "layout", "samples",
	       "frames", "frame KiB", "B/sample", "heap MiB", "us/sample");
	for (int r = 0; r < nrates; r++) {
		for (int k = 0; k < ncpus; k++) {
			for (int by_kind = 0; by_kind < 2; by_kind++) {
				int pfd[2];
				struct result res;
				if (pipe(pfd))
					return 1;
				fflush(stdout);
				pid_t pid = fork();
				if (pid < 0)
					return 1;
				if (pid == 0) {
					close(pfd[0]);
					run_one(c, cpus[k], rates[r], seconds, by_kind, &res);
					ssize_t wr = write(pfd[1], &res, sizeof(res));
					_exit(wr == (ssize_t)sizeof(res) ? 0 : 1);
				}
				close(pfd[1]);
				ssize_t got = read(pfd[0], &res, sizeof(res));
				close(pfd[0]);
				int status;
				waitpid(pid, &status, 0);
				if (got != (ssize_t)sizeof(res) || res.err) {
					fprintf(stderr, "scale_bench: %u cpus %u Hz failed: %s\n",
						cpus[k], rates[r],
						res.err ? prec_strerror(res.err) : "child died");
					return 1;
				}
				printf("%5u %6u %-8s %9llu %7llu %10.1f %9.2f %10.2f %9.2f\n",
				       cpus[k], rates[r], by_kind ? "by-kind" : "per-cpu",
				       (unsigned long long)res.samples,
				       (unsigned long long)res.frames,
				       res.frames ? (double)res.bytes_raw / (double)res.frames / 1024 : 0,
				       res.samples ? (double)res.bytes_written / (double)res.samples : 0,
				       (double)res.peak_heap / (1024.0 * 1024.0),
				       res.samples ? res.cpu * 1e6 / (double)res.samples : 0);
			}
		}
	}
	free(c);
	return 0;
}
