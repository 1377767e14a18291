/*
 * format_bench.c - encode/decode throughput of the .prec format library.
 *
 *   format_bench [MILLIONS] [--streams K] [--frame-size BYTES] [--stacks tree]
 *       writes MILLIONS (default 2) million synthetic samples into memory
 *       (monotonic times, 4000 distinct callchains of depth 5-30, 300 pids,
 *       K streams, default 4) and reads them back; prints packets/s for
 *       encode and decode, compressed bytes per packet and peak RSS.
 *       Times are thread CPU time. BENCH_LEVEL=N overrides the zstd level.
 *       The callchains are random addresses (no two share a caller, and
 *       the sample's ip is not the chain's leaf: the worst case for
 *       callchain nodes); --stacks tree draws them instead from one made-up
 *       program (paths of a random call tree of 3000 functions, a quarter
 *       with a kernel part from a kernel call tree), each sample's ip its
 *       chain's leaf, as the kernel writes them.
 *   format_bench [MILLIONS] --mix switch
 *       a --switch-events recording instead: 75% ContextSwitch, 20% Sample
 *       (callchains as above), 3% TaskEvent (interned comms), 2% Mmap
 *       (interned file names). Decode is also timed with a kinds mask that
 *       keeps only samples (prec_reader_set_kinds()); packets/s count every
 *       packet of the trace.
 *   format_bench --read FILE [--rounds N]
 *       decodes a real .prec file (page cache warm: read into memory
 *       first): all packets, then with kinds masks (samples only; what
 *       `sched` needs: switches and tasks); prints packets/s of CPU time
 *       over every packet of the file.
 *   format_bench --transcode IN OUT [--frame-size BYTES]
 *       rewrites a .prec file through this build's writer: the same
 *       packets on the same streams, strings and callchains interned
 *       again, frames cut where IN's frames end (with --frame-size: by
 *       size, and by packet time every PREC_DEFAULT_FLUSH_MS, or
 *       BENCH_FLUSH_MS, 0 = by size only); prints
 *       both files' bytes. Compares encodings on identical data (e.g. a
 *       file recorded before a format change). BENCH_LEVEL=N: zstd level.
 *       BENCH_SWITCH_ROWS=N: context switches per SwitchBatch (0: a
 *       ContextSwitch packet each, the 1.1 encoding).
 *   format_bench --write FILE
 *       writes a tiny sample file (header, comm, 4 samples with callchains)
 *       for tests/unit/format/test_protoc_decode.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "format/error.h"
#include "format/reader.h"
#include "format/sink.h"
#include "format/writer.h"

#define NCHAINS 4000
#define NPIDS 300

static uint64_t rng_state = 0x853c49e6748fea9bull;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, so runs compare */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

/* Thread CPU time, not wall time: the figures stay meaningful on a busy
 * machine (the bench is single-threaded). */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int write_tiny(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct prec_sink *sink;
	struct prec_writer *w;
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__FileHeader h = PERFREC__FILE_HEADER__INIT;
	Perfrec__TaskEvent te = PERFREC__TASK_EVENT__INIT;
	Perfrec__Sample s = PERFREC__SAMPLE__INIT;
	uint64_t ips[3] = { 0xffffffff81001234ull, 0x401100, 0x401200 };
	int ret;

	if (fd < 0) {
		fprintf(stderr, "format_bench: open %s: %s\n", path, strerror(errno));
		return 1;
	}
	sink = prec_sink_fd_new(fd, 1);
	w = sink ? prec_writer_new(sink, NULL) : NULL;
	if (!w) {
		fprintf(stderr, "format_bench: writer: %s\n", strerror(errno));
		return 1;
	}
	h.hostname = "bench-host";
	h.kernel_release = "6.1.0-bench";
	h.cpus_online = 2;
	pkt.data_case = PERFREC__PACKET__DATA_HEADER;
	pkt.header = &h;
	ret = prec_writer_append(w, 0, &pkt, 0);

	te.kind = PERFREC__TASK_EVENT__KIND__COMM;
	te.pid = te.tid = 4242;
	te.comm = prec_writer_intern_string(w, 1, "tiny-worker");
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_TASK;
	pkt.task = &te;
	if (!ret)
		ret = prec_writer_append(w, 1, &pkt, 1000000);

	for (int i = 0; i < 4 && !ret; i++) {
		/* the last in user mode, its callchain as the kernel gives it:
		 * written in the callers form (Sample.callchain_callers) */
		uint64_t user[3] = { (uint64_t)-512, 0x401234, 0x401200 };
		s.cpu = 0;
		s.pid = s.tid = 4242;
		s.ip = i < 3 ? 0x401100 + (uint64_t)i : 0x401234;
		s.misc = i < 3 ? 0 : 2;
		s.period = 100000;
		s.callchain = prec_writer_intern_callchain(w, 1, i < 3 ? ips : user, 3);
		perfrec__packet__init(&pkt);
		pkt.data_case = PERFREC__PACKET__DATA_SAMPLE;
		pkt.sample = &s;
		ret = prec_writer_append(w, 1, &pkt, 1000000 + 1000 * (uint64_t)(i + 1));
	}
	if (!ret)
		ret = prec_writer_close(w);
	prec_writer_free(w);
	prec_sink_free(sink);
	if (ret) {
		fprintf(stderr, "format_bench: write %s: %s\n", path, prec_strerror(ret));
		return 1;
	}
	return 0;
}

struct bench {
	uint64_t n;
	uint64_t samples;   /* of n, set by encode_once() */
	int mix;            /* --mix switch */
	int tree;           /* --stacks tree */
	unsigned streams;
	struct prec_writer_opts wo;
	uint64_t *chains[NCHAINS];
	size_t depth[NCHAINS];
};

/* Writes b->n samples into a new memory sink; returns it (NULL on error)
 * with the CPU seconds spent in *secs and the writer's stats in *ws. */
static struct prec_sink *encode_once(struct bench *b, double *secs,
				     struct prec_writer_stats *ws)
{
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = sink ? prec_writer_new(sink, &b->wo) : NULL;
	uint64_t last_t[64] = { 0 }, t = 1000000000ull;
	double t0;
	int ret = 0;

	if (!w) {
		fprintf(stderr, "format_bench: writer: %s\n", strerror(errno));
		prec_sink_free(sink);
		return NULL;
	}
	rng_state = 0x853c49e6748fea9bull ^ 0x5555;   /* same data every round */
	b->samples = 0;
	t0 = now_s();
	for (uint64_t i = 0; i < b->n && !ret; i++) {
		Perfrec__Packet pkt = PERFREC__PACKET__INIT;
		Perfrec__Sample s = PERFREC__SAMPLE__INIT;
		Perfrec__ContextSwitch cs = PERFREC__CONTEXT_SWITCH__INIT;
		Perfrec__TaskEvent te = PERFREC__TASK_EVENT__INIT;
		Perfrec__Mmap mm = PERFREC__MMAP__INIT;
		uint32_t st = (uint32_t)(i % b->streams);
		/* skewed like real profiles: u^3 puts half the samples on
		 * the hottest ~12% of callchains, the rest on a long tail */
		uint64_t r = rnd();
		double u = (double)(r & 0xFFFFFF) / 16777216.0;
		uint32_t c = (uint32_t)(u * u * u * NCHAINS);
		uint32_t pid = 1000 + (uint32_t)((r >> 32) % NPIDS);
		t += 200 + (r >> 50) % 2000;   /* ~1 us apart overall */
		if (t <= last_t[st])
			t = last_t[st] + 1;
		last_t[st] = t;
		unsigned kind = b->mix ? (unsigned)((r >> 8) % 100) : 99;
		if (kind < 75) {
			/* a CPU-wide switch, as --switch-events records them */
			cs.id = 100 + st;
			cs.cpu = st;
			cs.pid = pid;
			cs.tid = pid + (uint32_t)((r >> 40) & 3);
			cs.out = (r >> 20) & 1;
			cs.preempt = cs.out && ((r >> 21) & 1);
			cs.cpu_wide = 1;
			cs.other_pid = 1000 + (uint32_t)((r >> 22) % NPIDS);
			cs.other_tid = cs.other_pid + (uint32_t)((r >> 44) & 3);
			pkt.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
			pkt.context_switch = &cs;
			ret = prec_writer_append(w, st + 1, &pkt, t);
			continue;
		}
		if (kind < 78) {
			char comm[32];
			snprintf(comm, sizeof(comm), "worker-%u", pid % 97);
			te.kind = (r >> 20) % 3;
			te.pid = pid;
			te.tid = pid + (uint32_t)((r >> 40) & 3);
			te.ppid = te.ptid = 1;
			te.comm = prec_writer_intern_string(w, st + 1, comm);
			te.exec = te.kind == PERFREC__TASK_EVENT__KIND__COMM;
			te.cpu = st;
			pkt.data_case = PERFREC__PACKET__DATA_TASK;
			pkt.task = &te;
			ret = prec_writer_append(w, st + 1, &pkt, t);
			continue;
		}
		if (kind < 80) {
			char path[64];
			snprintf(path, sizeof(path), "/usr/lib/x86_64-linux-gnu/libfoo%u.so.1", pid % 53);
			mm.pid = mm.tid = pid;
			mm.start = 0x7f0000000000ull + ((r >> 16) & 0xFFFFF) * 4096;
			mm.len = 0x21000;
			mm.pgoff = 0x1000;
			mm.maj = 8;
			mm.min = 1;
			mm.ino = 1000000 + pid % 53;
			mm.ino_generation = 7;
			mm.prot = 5;
			mm.flags = 2;
			mm.filename = prec_writer_intern_string(w, st + 1, path);
			mm.cpu = st;
			pkt.data_case = PERFREC__PACKET__DATA_MMAP;
			pkt.mmap = &mm;
			ret = prec_writer_append(w, st + 1, &pkt, t);
			continue;
		}
		b->samples++;
		s.id = 100 + st;
		s.cpu = st;
		s.pid = pid;
		s.tid = pid + (uint32_t)((r >> 40) & 3);
		s.ip = b->tree ? b->chains[c][1] : b->chains[c][b->depth[c] - 1];
		s.misc = b->tree ? (b->chains[c][0] == (uint64_t)-128 ? 1 : 2) : 0;
		s.period = 1000003;
		s.callchain = prec_writer_intern_callchain(w, st + 1, b->chains[c], b->depth[c]);
		pkt.data_case = PERFREC__PACKET__DATA_SAMPLE;
		pkt.sample = &s;
		ret = prec_writer_append(w, st + 1, &pkt, t);
	}
	if (!ret)
		ret = prec_writer_close(w);
	*secs = now_s() - t0;
	prec_writer_stats(w, ws);
	prec_writer_free(w);
	if (ret) {
		fprintf(stderr, "format_bench: encode: %s\n", prec_strerror(ret));
		prec_sink_free(sink);
		return NULL;
	}
	return sink;
}

/* Reads every packet back, resolving each sample's callchain. Returns the
 * number of samples, or -1 on error; CPU seconds in *secs. */
static int64_t decode_once(const void *data, size_t len, uint64_t kinds,
			   double *secs, uint64_t *check)
{
	struct prec_reader *rd = prec_reader_open_mem(data, len, NULL);
	struct prec_reader_stats rs;
	struct prec_packet p;
	uint64_t got = 0;
	double t0;
	int ret;

	if (!rd) {
		fprintf(stderr, "format_bench: reader: %s\n", strerror(errno));
		return -1;
	}
	*check = 0;
	prec_reader_set_kinds(rd, kinds);
	t0 = now_s();
	while ((ret = prec_reader_next_packet(rd, &p)) > 0) {
		const Perfrec__Packet *k = p.pkt;
		/* touch what an analyzer would, so unpacking is not for free */
		if (k->data_case == PERFREC__PACKET__DATA_CONTEXT_SWITCH) {
			*check += k->context_switch->other_tid ^ p.time;
			continue;
		}
		if (k->data_case == PERFREC__PACKET__DATA_TASK) {
			const char *c = prec_frame_string(p.frame, k->task->comm);
			*check += c ? (uint8_t)c[0] : 1;
			continue;
		}
		if (k->data_case == PERFREC__PACKET__DATA_MMAP) {
			const char *c = prec_frame_string(p.frame, k->mmap->filename);
			*check += c ? (uint8_t)c[0] : 1;
			continue;
		}
		if (k->data_case != PERFREC__PACKET__DATA_SAMPLE)
			continue;
		size_t nips;
		const uint64_t *ips = prec_frame_callchain(p.frame, p.pkt->sample->callchain, &nips);
		if (!ips) {
			fprintf(stderr, "format_bench: unresolved callchain\n");
			ret = -1;
			break;
		}
		*check += ips[nips - 1] ^ p.time;
		got++;
	}
	*secs = now_s() - t0;
	prec_reader_stats(rd, &rs);
	prec_reader_free(rd);
	if (ret < 0 || rs.damaged_frames) {
		fprintf(stderr, "format_bench: decode: %s\n", prec_strerror(ret));
		return -1;
	}
	return (int64_t)got;
}

/* Reads every packet of data with `kinds`, touching what a report would.
 * Returns the packets in the file (stats), -1 on error. */
static int64_t read_pass(const void *data, size_t len, uint64_t kinds,
			 double *secs, uint64_t *check)
{
	struct prec_reader *rd = prec_reader_open_mem(data, len, NULL);
	struct prec_reader_stats rs;
	struct prec_packet p;
	double t0;
	int ret;

	if (!rd)
		return -1;
	prec_reader_set_kinds(rd, kinds);
	t0 = now_s();
	while ((ret = prec_reader_next_packet(rd, &p)) > 0) {
		const Perfrec__Packet *k = p.pkt;
		*check += p.time;
		if (k->data_case == PERFREC__PACKET__DATA_CONTEXT_SWITCH)
			*check += k->context_switch->other_tid;
		else if (k->data_case == PERFREC__PACKET__DATA_SAMPLE) {
			size_t n;
			const uint64_t *ips = prec_frame_callchain(p.frame, k->sample->callchain, &n);
			*check += ips && n ? ips[n - 1] : 0;
		}
	}
	*secs = now_s() - t0;
	prec_reader_stats(rd, &rs);
	prec_reader_free(rd);
	return ret < 0 ? -1 : (int64_t)(rs.packets + rs.unknown_packets);
}

static int read_file(const char *path, int rounds)
{
	static const struct {
		const char *name;
		uint64_t kinds;
	} passes[] = {
		{ "all kinds", PREC_KINDS_ALL },
		{ "samples only", PREC_KIND(PERFREC__PACKET__DATA_SAMPLE) },
		{ "switch+task", PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH) |
				 PREC_KIND(PERFREC__PACKET__DATA_TASK) },
	};
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, n;
	uint64_t check = 0;

	if (!f) {
		fprintf(stderr, "format_bench: %s: %s\n", path, strerror(errno));
		return 1;
	}
	do {
		if (len == cap) {
			unsigned char *nb = realloc(buf, cap = cap ? 2 * cap : 1 << 20);
			if (!nb) {
				fclose(f);
				free(buf);
				return 1;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	for (size_t i = 0; i < sizeof(passes) / sizeof(passes[0]); i++) {
		double best = 1e30, secs = 0;
		int64_t pk = 0;
		for (int r = 0; r < rounds; r++) {
			pk = read_pass(buf, len, passes[i].kinds, &secs, &check);
			if (pk < 0) {
				fprintf(stderr, "format_bench: %s: decode error\n", path);
				free(buf);
				return 1;
			}
			if (secs < best)
				best = secs;
		}
		printf("decode %-13s %lld packets, %.2f M packets/s (%.3f s CPU, best of %d)\n",
		       passes[i].name, (long long)pk, pk / best / 1e6, best, rounds);
	}
	printf("checksum         %016llx\n", (unsigned long long)check);
	free(buf);
	return 0;
}

/* Takes a packet of another file's frame and re-interns its iids on w's
 * stream st (the packet's own arrays and fields are rewritten: it belongs
 * to the reader, which is done with it after this). */
static int reintern(struct prec_writer *w, uint32_t st, const struct prec_packet *p,
		    Perfrec__Packet *k, uint64_t **names, size_t *ncap)
{
	const uint64_t *ips;
	size_t n;

	switch (k->data_case) {
	case PERFREC__PACKET__DATA_SAMPLE:
		if (k->sample->callchain) {
			ips = prec_frame_callchain(p->frame, k->sample->callchain, &n);
			k->sample->callchain = ips ? prec_writer_intern_callchain(w, st, ips, n) : 0;
		}
		break;
	case PERFREC__PACKET__DATA_OFF_CPU:
		if (k->off_cpu->callchain) {
			ips = prec_frame_callchain(p->frame, k->off_cpu->callchain, &n);
			k->off_cpu->callchain = ips ? prec_writer_intern_callchain(w, st, ips, n) : 0;
		}
		break;
	case PERFREC__PACKET__DATA_TASK:
		if (k->task->comm) {
			const char *c = prec_frame_string(p->frame, k->task->comm);
			k->task->comm = c ? prec_writer_intern_string(w, st, c) : 0;
		}
		break;
	case PERFREC__PACKET__DATA_MMAP:
		if (k->mmap->filename) {
			const char *c = prec_frame_string(p->frame, k->mmap->filename);
			k->mmap->filename = c ? prec_writer_intern_string(w, st, c) : 0;
		}
		break;
	case PERFREC__PACKET__DATA_SYMBOLS: {
		Perfrec__SymbolTable *t = k->symbols;
		if (t->n_names > *ncap) {
			uint64_t *nn = realloc(*names, t->n_names * sizeof(*nn));
			if (!nn)
				return -ENOMEM;
			*names = nn;
			*ncap = t->n_names;
		}
		for (size_t i = 0; i < t->n_names; i++) {
			const char *c = prec_frame_string(p->frame, t->names[i]);
			(*names)[i] = c ? prec_writer_intern_string(w, st, c) : 0;
		}
		t->names = *names;
		break;
	}
	default:
		break;
	}
	return prec_writer_error(w);
}

static int transcode(const char *in, const char *out, const struct prec_writer_opts *wo,
		     int by_size)
{
	int err = 0, fd, ret;
	struct prec_reader *rd = prec_reader_open_err(in, NULL, &err);
	struct prec_reader_stats rs;
	struct prec_writer_stats ws;
	struct prec_frame_info fi;
	struct prec_frame *f = prec_frame_new();
	struct prec_sink *sink = NULL;
	struct prec_writer *w = NULL;
	struct prec_packet p;
	uint64_t *names = NULL, interned_in = 0;
	size_t ncap = 0;

	if (!rd || !f) {
		fprintf(stderr, "format_bench: %s: %s\n", in, prec_strerror(err ? err : -errno));
		return 1;
	}
	struct prec_writer_opts o = *wo;
	if (!by_size)
		o.frame_size = 16u << 20;   /* the writer's cap: cut where IN does */
	else if (getenv("BENCH_FLUSH_MS"))
		o.flush_ms = (uint32_t)atoi(getenv("BENCH_FLUSH_MS"));
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	sink = fd >= 0 ? prec_sink_fd_new(fd, 1) : NULL;
	w = sink ? prec_writer_new(sink, &o) : NULL;
	if (!w) {
		fprintf(stderr, "format_bench: %s: %s\n", out, strerror(errno));
		return 1;
	}
	ret = 0;
	while (!ret && prec_reader_next_frame(rd, &fi) > 0) {
		uint32_t st = fi.stream == PREC_STREAM_UNKNOWN ? 0 : fi.stream;
		if (prec_reader_load_frame(rd, &fi, f) < 0)
			continue;   /* damaged: not copied */
		while (!ret && prec_frame_next(f, &p) > 0) {
			Perfrec__Packet *k = (Perfrec__Packet *)p.pkt;
			if (k->data_case == PERFREC__PACKET__DATA_INTERNED) {
				interned_in++;
				continue;
			}
			ret = reintern(w, st, &p, k, &names, &ncap);
			if (!ret)
				ret = prec_writer_append(w, st, k, p.time);
			if (!ret && by_size && p.time)
				ret = prec_writer_flush_due(w, p.time);
		}
		if (!ret && !by_size)
			ret = prec_writer_flush(w);
	}
	if (!ret)
		ret = prec_writer_close(w);
	prec_writer_stats(w, &ws);
	prec_reader_stats(rd, &rs);
	printf("in   %s: %llu bytes, %llu frames, %llu packets (%llu interned), %llu raw\n", in,
	       (unsigned long long)rs.file_size, (unsigned long long)rs.frames,
	       (unsigned long long)rs.packets, (unsigned long long)interned_in,
	       (unsigned long long)rs.bytes_raw);
	/* the writer's count is of Trace.packet fields: InternedData it
	 * adds, and a SwitchBatch once for its rows */
	printf("out  %s: %llu bytes, %llu frames, %llu packet fields, %llu raw\n", out,
	       (unsigned long long)ws.bytes_written, (unsigned long long)ws.frames,
	       (unsigned long long)ws.packets, (unsigned long long)ws.bytes_raw);
	printf("out/in %.4f\n", (double)ws.bytes_written / (double)rs.file_size);
	prec_writer_free(w);
	prec_sink_free(sink);
	prec_frame_free(f);
	prec_reader_free(rd);
	free(names);
	if (ret) {
		fprintf(stderr, "format_bench: transcode: %s\n", prec_strerror(ret));
		return 1;
	}
	return 0;
}

/* 4000 random chains (see the top of this file) */
static int random_chains(struct bench *b)
{
	for (int i = 0; i < NCHAINS; i++) {
		b->depth[i] = 5 + rnd() % 26;
		b->chains[i] = malloc(b->depth[i] * sizeof(uint64_t));
		if (!b->chains[i])
			return 1;
		/* kernel part then user part, as perf gives them */
		size_t k = b->depth[i] / 3;
		b->chains[i][0] = (uint64_t)-128;   /* PERF_CONTEXT_KERNEL */
		for (size_t j = 1; j < b->depth[i]; j++)
			b->chains[i][j] = j <= k ? 0xffffffff81000000ull + (rnd() % 0x800000)
					       : 0x400000 + (rnd() % 0x200000);
	}
	return 0;
}

/* 4000 chains of one made-up program (--stacks tree): function f has a
 * caller below it (a random recursive tree, ~20 deep) and an address; a
 * chain is [PERF_CONTEXT_USER, an ip in f, f's callers...], a quarter
 * with a kernel part first from a kernel call tree of 500 functions. */
#define NFUNC 3000
#define NKFUNC 500
static int tree_chains(struct bench *b)
{
	static int caller[NFUNC], kcaller[NKFUNC];
	static uint64_t addr[NFUNC], kaddr[NKFUNC];
	uint64_t tmp[256];

	for (int f = 0; f < NFUNC; f++) {
		caller[f] = f ? (int)(rnd() % (uint64_t)f) : -1;
		addr[f] = 0x400000 + rnd() % 0x2000000;
	}
	for (int f = 0; f < NKFUNC; f++) {
		kcaller[f] = f ? (int)(rnd() % (uint64_t)f) : -1;
		kaddr[f] = 0xffffffff81000000ull + rnd() % 0x1000000;
	}
	for (int i = 0; i < NCHAINS; i++) {
		size_t n = 0;
		int f = (int)(rnd() % NFUNC);
		if (rnd() % 4 == 0) {
			int k = (int)(rnd() % NKFUNC);
			tmp[n++] = (uint64_t)-128;   /* PERF_CONTEXT_KERNEL */
			tmp[n++] = kaddr[k] + rnd() % 256;
			for (k = kcaller[k]; k >= 0 && n < 100; k = kcaller[k])
				tmp[n++] = kaddr[k] + 0x40;
			tmp[n++] = (uint64_t)-512;   /* PERF_CONTEXT_USER */
			tmp[n++] = addr[f] + 0x20;   /* the system call's return */
		} else {
			tmp[n++] = (uint64_t)-512;
			tmp[n++] = addr[f] + rnd() % 512;
		}
		for (f = caller[f]; f >= 0 && n < 200; f = caller[f])
			tmp[n++] = addr[f] + 0x40;
		b->depth[i] = n;
		b->chains[i] = malloc(n * sizeof(uint64_t));
		if (!b->chains[i])
			return 1;
		memcpy(b->chains[i], tmp, n * sizeof(uint64_t));
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct bench b;
	double millions = 2, enc = 1e30, dec = 1e30, decs = 1e30;
	int rounds = 3;
	const char *read_path = NULL, *tc_in = NULL, *tc_out = NULL;
	int by_size = 0;
	struct prec_writer_opts wo = PREC_WRITER_OPTS_INIT;
	struct prec_writer_stats ws;
	struct rusage ru;
	uint64_t check = 0;
	size_t len = 0;

	b.streams = 4;
	b.wo = wo;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--write") && i + 1 < argc)
			return write_tiny(argv[i + 1]);
		else if (!strcmp(argv[i], "--read") && i + 1 < argc)
			read_path = argv[++i];
		else if (!strcmp(argv[i], "--transcode") && i + 2 < argc)
			tc_in = argv[i + 1], tc_out = argv[i + 2], i += 2;
		else if (!strcmp(argv[i], "--streams") && i + 1 < argc)
			b.streams = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--frame-size") && i + 1 < argc)
			b.wo.frame_size = (size_t)atol(argv[++i]), by_size = 1;
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--mix") && i + 1 < argc && !strcmp(argv[i + 1], "switch"))
			b.mix = 1, i++;
		else if (!strcmp(argv[i], "--mix") && i + 1 < argc && !strcmp(argv[i + 1], "samples"))
			b.mix = 0, i++;
		else if (!strcmp(argv[i], "--stacks") && i + 1 < argc && !strcmp(argv[i + 1], "tree"))
			b.tree = 1, i++;
		else
			millions = atof(argv[i]);
	}
	if (read_path)
		return read_file(read_path, rounds);
	if (getenv("BENCH_LEVEL"))
		b.wo.zstd_level = atoi(getenv("BENCH_LEVEL"));
	if (getenv("BENCH_SWITCH_ROWS"))
		b.wo.switch_rows = (unsigned)atoi(getenv("BENCH_SWITCH_ROWS"));
	if (tc_in)
		return transcode(tc_in, tc_out, &b.wo, by_size);
	if (millions <= 0 || b.streams < 1 || b.streams > 64 || rounds < 1) {
		fprintf(stderr, "usage: format_bench [MILLIONS] [--streams 1-64] [--frame-size N] [--rounds N] [--mix samples|switch] [--stacks tree] | --read FILE | --transcode IN OUT | --write FILE\n");
		return 2;
	}
	b.n = (uint64_t)(millions * 1e6);

	if (b.tree ? tree_chains(&b) : random_chains(&b))
		return 1;

	/* best of `rounds`: the figures of a shared machine are noisy */
	for (int round = 0; round < rounds; round++) {
		double e = 0, d = 0;
		struct prec_sink *sink = encode_once(&b, &e, &ws);
		if (!sink)
			return 1;
		const void *data = prec_sink_mem_data(sink, &len);
		int64_t got = decode_once(data, len, PREC_KINDS_ALL, &d, &check);
		uint64_t check_s;
		double ds = 0;
		int64_t got_s = b.mix ? decode_once(data, len,
						   PREC_KIND(PERFREC__PACKET__DATA_SAMPLE),
						   &ds, &check_s) : got;
		prec_sink_free(sink);
		if (got != (int64_t)b.samples || got_s != got) {
			fprintf(stderr, "format_bench: %lld (%lld with a mask) of %llu samples read back\n",
				(long long)got, (long long)got_s, (unsigned long long)b.samples);
			return 1;
		}
		if (e < enc)
			enc = e;
		if (d < dec)
			dec = d;
		if (ds < decs)
			decs = ds;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("packets          %llu (%llu samples) on %u streams, %llu frames, %llu packet "
	       "fields (InternedData added, a SwitchBatch once)\n",
	       (unsigned long long)b.n, (unsigned long long)b.samples, b.streams,
	       (unsigned long long)ws.frames, (unsigned long long)ws.packets);
	printf("encode           %.2f M packets/s (%.3f s CPU, best of %d)\n", b.n / enc / 1e6, enc, rounds);
	printf("decode           %.2f M packets/s (%.3f s CPU, best of %d)\n", b.n / dec / 1e6, dec, rounds);
	if (b.mix)
		printf("decode samples   %.2f M packets/s (%.3f s CPU, kinds mask = samples only)\n",
		       b.n / decs / 1e6, decs);
	printf("raw bytes/packet %.2f\n", (double)ws.bytes_raw / b.n);
	printf("file bytes/packet %.2f (%zu bytes)\n", (double)len / b.n, len);
	printf("peak RSS         %.1f MiB\n", ru.ru_maxrss / 1024.0);
	printf("checksum         %016llx\n", (unsigned long long)check);
	for (int i = 0; i < NCHAINS; i++)
		free(b.chains[i]);
	return 0;
}
