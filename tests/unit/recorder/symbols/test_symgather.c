/*
 * test_symgather.c - recorder/symbols/symgather end to end: this test process's
 * real mappings (its own PIE binary, libc) and addresses of functions in
 * them are fed to the gatherer, the SymbolTable packets go through the
 * real format writer into memory, are read back with the format reader,
 * and then resolved by the analyzer's symbolizer: the names must come back
 * for the addresses we hit, and only the objects (and symbols) hit may be
 * in the trace. Also: kernel table from a synthetic kallsyms, a module
 * loaded later (kallsyms read again, bounded), kptr_restrict,
 * perf-PID.map, vanished objects, build-id mismatch, fork/exec, hits that
 * arrive before their mapping, incremental writes, chunking, the symbol
 * cache (the same tables from a warm cache as from the files), cost.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyzer/symbols/symbolize.h"
#include "format/reader.h"
#include "format/sink.h"
#include "format/writer.h"
#include "recorder/encode/decode.h"
#include "recorder/symbols/elfcfi.h"
#include "recorder/symbols/symgather.h"

#define KBASE 0xffffffff81000000ull

__attribute__((noinline)) int symgather_hot_target(int x);
__attribute__((noinline)) int symgather_hot_target(int x)
{
	volatile int v = x;

	return v * 3 + 1;
}

__attribute__((noinline)) int symgather_other_target(int x);
__attribute__((noinline)) int symgather_other_target(int x)
{
	volatile int v = x;

	return v * 5 + symgather_hot_target(x);
}

/* libc's own definition (under ASan, RTLD_DEFAULT finds interceptors) */
static uint64_t libc_sym(const char *name)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *p;

	assert_non_null(h);
	p = dlsym(h, name);
	dlclose(h);
	return (uint64_t)(uintptr_t)p;
}

static char tmpdir[256];
static char kallsyms_path[300];

struct map {
	uint64_t start, end, pgoff;
	char path[512];
};

static struct map maps[512];
static size_t nmaps;

static void read_self_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];

	assert_non_null(f);
	nmaps = 0;
	while (fgets(line, sizeof(line), f) && nmaps < 512) {
		unsigned long lo, hi, off;
		struct map *m = &maps[nmaps];

		m->path[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %511[^\n]", &lo, &hi,
			   &off, m->path) < 3)
			continue;
		m->start = lo;
		m->end = hi;
		m->pgoff = off;
		nmaps++;
	}
	fclose(f);
}

static const struct map *map_of(uint64_t ip)
{
	for (size_t i = 0; i < nmaps; i++)
		if (ip >= maps[i].start && ip < maps[i].end)
			return &maps[i];
	return NULL;
}

/* ---- a tiny trace in memory */

struct trace {
	struct prec_sink *sink;
	struct prec_writer *w;
};

static void trace_open(struct trace *t)
{
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;

	o.frame_size = 4096;   /* several frames: interning restarts */
	t->sink = prec_sink_mem_new();
	assert_non_null(t->sink);
	t->w = prec_writer_new(t->sink, &o);
	assert_non_null(t->w);
}

static void trace_close(struct trace *t)
{
	assert_int_equal(prec_writer_close(t->w), 0);
}

static void trace_free(struct trace *t)
{
	prec_writer_free(t->w);
	prec_sink_free(t->sink);
}

/* An Mmap packet, as the recorder writes it, for the analyzer side. */
static void write_mmap(struct trace *t, uint32_t pid, const struct map *m,
		       uint64_t time)
{
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__Mmap mm = PERFREC__MMAP__INIT;

	mm.pid = pid;
	mm.start = m->start;
	mm.len = m->end - m->start;
	mm.pgoff = m->pgoff;
	mm.filename = prec_writer_intern_string(t->w, 0, m->path[0] ? m->path : "//anon");
	assert_true(mm.filename != 0);
	pkt.data_case = PERFREC__PACKET__DATA_MMAP;
	pkt.mmap = &mm;
	assert_int_equal(prec_writer_append(t->w, 0, &pkt, time), 0);
}

static void feed_maps(struct rec_symgather *sc, struct trace *t, uint32_t pid)
{
	for (size_t i = 0; i < nmaps; i++) {
		struct rec_symgather_map m = { 0 };

		m.pid = pid;
		m.start = maps[i].start;
		m.len = maps[i].end - maps[i].start;
		m.pgoff = maps[i].pgoff;
		m.path = maps[i].path;
		if (sc)
			assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
		if (t)
			write_mmap(t, pid, &maps[i], 1000);
	}
}

/* What came back, table by table (chunks merged). */
struct rtab {
	int kind;
	char path[512];
	int32_t pid;
	size_t bid_len;
	char reason[256];
	size_t nsyms, nsegs;
	uint64_t starts[8192], sizes[8192];
	char names[8192][64];
};

static struct rtab rtabs[16];
static size_t nrtabs, npackets;

static struct rtab *rtab_get(int kind, const char *path, int32_t pid)
{
	for (size_t i = 0; i < nrtabs; i++)
		if (rtabs[i].kind == kind && rtabs[i].pid == pid &&
		    strcmp(rtabs[i].path, path) == 0)
			return &rtabs[i];
	return NULL;
}

static int rtab_has(const struct rtab *t, const char *name)
{
	for (size_t i = 0; t && i < t->nsyms; i++)
		if (strcmp(t->names[i], name) == 0)
			return 1;
	return 0;
}

/* Reads the trace back; feeds every packet to the symbolizer too. */
static struct ana_symbols *read_back(struct trace *t)
{
	struct ana_symbols *as = ana_symbols_new();
	struct prec_reader *r;
	struct prec_packet p;
	const void *buf;
	size_t len = 0;
	int ret;

	assert_non_null(as);
	nrtabs = npackets = 0;
	buf = prec_sink_mem_data(t->sink, &len);
	r = prec_reader_open_mem(buf, len, NULL);
	assert_non_null(r);
	while ((ret = prec_reader_next_packet(r, &p)) > 0) {
		const Perfrec__SymbolTable *s;
		struct rtab *rt;
		uint64_t start = 0;

		assert_int_equal(ana_symbols_add(as, &p), 0);
		if (p.pkt->data_case != PERFREC__PACKET__DATA_SYMBOLS)
			continue;
		s = p.pkt->symbols;
		npackets++;
		rt = rtab_get(s->kind, s->path, s->pid);
		if (!rt) {
			assert_true(nrtabs < 16);
			rt = &rtabs[nrtabs++];
			memset(rt, 0, sizeof(*rt));
			rt->kind = s->kind;
			snprintf(rt->path, sizeof(rt->path), "%s", s->path);
			rt->pid = s->pid;
			rt->bid_len = s->build_id.len;
			snprintf(rt->reason, sizeof(rt->reason), "%s", s->reason);
		}
		rt->nsegs += s->n_load_offsets;
		assert_int_equal(s->n_starts, s->n_sizes);
		assert_int_equal(s->n_starts, s->n_names);
		for (size_t i = 0; i < s->n_starts; i++) {
			const char *n = prec_frame_string(p.frame, s->names[i]);

			assert_non_null(n);
			assert_true(rt->nsyms < 8192);
			start += s->starts[i];
			rt->starts[rt->nsyms] = start;
			rt->sizes[rt->nsyms] = s->sizes[i];
			snprintf(rt->names[rt->nsyms], 64, "%s", n);
			rt->nsyms++;
		}
	}
	assert_int_equal(ret, 0);
	prec_reader_free(r);
	assert_int_equal(ana_symbols_finish(as), 0);
	return as;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	char p[400];

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_symgather.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(kallsyms_path, sizeof(kallsyms_path), "%s/kallsyms", tmpdir);
	write_file(kallsyms_path,
		   "ffffffff81000000 T _stext\n"
		   "ffffffff81000100 T k_hot\n"
		   "ffffffff81000200 t k_cold\n"
		   "ffffffff81000300 D k_data\n"
		   "ffffffff81000400 T k_other\n"
		   "ffffffffc0001000 t m_fn\t[mymod]\n"
		   "ffffffffc0001100 t m_fn2\t[mymod]\n");
	snprintf(p, sizeof(p), "%s/hidden", tmpdir);
	write_file(p, "0000000000000000 T _stext\n0000000000000000 t x\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct rec_symgather *new_sc(int full, size_t chunk)
{
	struct rec_symgather_opts o = REC_SYMGATHER_OPTS_INIT;
	struct rec_symgather *sc;

	o.kallsyms_path = kallsyms_path;
	o.perfmap_dir = tmpdir;
	o.proc_maps = "";   /* only what the test feeds */
	o.debug_dir = "";   /* the host's -dbg packages must not matter */
	o.full_tables = full;
	if (chunk)
		o.chunk = chunk;
	sc = rec_symgather_new(&o);
	assert_non_null(sc);
	return sc;
}

/* The main path: own binary + libc + kernel, hits only. */
static void test_hits_roundtrip(void **state)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t hot = (uint64_t)(uintptr_t)&symgather_hot_target;
	uint64_t qs = (uint64_t)(uintptr_t)libc_sym("qsort");
	const struct map *mhot, *mqs;
	struct rec_symgather_stats st;
	struct rec_symgather *sc;
	struct ana_symbols *as;
	struct ana_sym out;
	struct trace t;
	struct rtab *rt;

	(void)state;
	read_self_maps();
	mhot = map_of(hot);
	mqs = map_of(qs);
	assert_non_null(mhot);
	assert_non_null(mqs);
	assert_true(qs != 0);
	trace_open(&t);
	sc = new_sc(0, 0);
	/* a hit before any mapping is known: kept, matched at write */
	assert_int_equal(rec_symgather_hit(sc, pid, hot + 2, 0), 0);
	feed_maps(sc, &t, pid);
	assert_int_equal(rec_symgather_hit(sc, pid, qs + 1, 0), 0);
	{
		/* callchain: kernel part, then user part */
		uint64_t cc[] = { (uint64_t)-128, KBASE + 0x150, KBASE + 0x101,
				  (uint64_t)-512, hot + 4, qs + 2 };

		assert_int_equal(rec_symgather_hit_callchain(sc, pid, cc, 6, 0), 0);
	}
	assert_true(rec_symgather_write(sc, t.w, 0, 2000) > 0);
	/* nothing new: nothing written */
	assert_int_equal(rec_symgather_write(sc, t.w, 0, 2100), 0);
	rec_symgather_stats(sc, &st);
	trace_close(&t);
	as = read_back(&t);

	/* the kernel table holds the hit symbol, not the others */
	rt = rtab_get(1, "[kernel.kallsyms]", 0);
	assert_non_null(rt);
	assert_int_equal(rt->nsyms, 1);
	assert_string_equal(rt->names[0], "k_hot");
	assert_int_equal(rt->starts[0], KBASE + 0x100);
	assert_int_equal(rt->sizes[0], 0x100);
	/* our binary: the hit function, exactly at nm's place */
	rt = rtab_get(0, mhot->path, 0);
	assert_non_null(rt);
	assert_true(rt->bid_len > 0);
	assert_true(rt->nsegs > 0);
	assert_true(rtab_has(rt, "symgather_hot_target"));
	assert_false(rtab_has(rt, "symgather_other_target"));
	assert_false(rtab_has(rt, "main"));
	/* libc (.dynsym only on Debian): qsort */
	rt = rtab_get(0, mqs->path, 0);
	assert_non_null(rt);
	assert_true(rtab_has(rt, "qsort"));
	assert_true(rt->nsyms <= 3);
	/* no other object was hit, so no other ELF table */
	for (size_t i = 0; i < nrtabs; i++)
		assert_true(rtabs[i].kind != 0 || !strcmp(rtabs[i].path, mhot->path) ||
			    !strcmp(rtabs[i].path, mqs->path));
	/* stats agree with what was read */
	assert_int_equal(st.tables, npackets);
	assert_int_equal(st.objects, 2);
	assert_int_equal(st.unavailable, 0);
	assert_true(st.bytes > 50);
	assert_true(st.time_ns > 0);
	assert_int_equal(st.kernel_status, 0);

	/* and the analyzer names everything from the trace alone */
	assert_int_equal(ana_symbols_resolve(as, pid, hot + 2, 0, 3000, &out), 1);
	assert_string_equal(out.sym, "symgather_hot_target");
	assert_int_equal(out.sym_off, 2);
	assert_string_equal(out.dso, mhot->path);
	assert_int_equal(ana_symbols_resolve(as, pid, qs + 1, 0, 3000, &out), 1);
	assert_string_equal(out.sym, "qsort");
	assert_string_equal(out.dso, mqs->path);
	assert_int_equal(ana_symbols_resolve(as, pid, KBASE + 0x150, 1, 3000, &out), 1);
	assert_string_equal(out.sym, "k_hot");
	assert_int_equal(out.sym_off, 0x50);
	assert_true(out.kernel);
	/* not hit, so not in the trace: object known, symbol not */
	assert_int_equal(ana_symbols_resolve(as, pid,
		(uint64_t)(uintptr_t)&symgather_other_target + 1, 0, 3000, &out), 0);
	assert_null(out.sym);
	assert_string_equal(out.dso, mhot->path);
	ana_symbols_free(as);
	rec_symgather_free(sc);
	trace_free(&t);
}

/* A later hit in an object already written adds just the new symbol. */
static void test_incremental(void **state)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t hot = (uint64_t)(uintptr_t)&symgather_hot_target;
	uint64_t other = (uint64_t)(uintptr_t)&symgather_other_target;
	struct rec_symgather *sc;
	struct ana_symbols *as;
	struct ana_sym out;
	struct trace t;
	struct rtab *rt;

	(void)state;
	read_self_maps();
	trace_open(&t);
	sc = new_sc(0, 0);
	feed_maps(sc, &t, pid);
	assert_int_equal(rec_symgather_hit(sc, pid, hot, 0), 0);
	assert_int_equal(rec_symgather_write(sc, t.w, 0, 2000), 1);
	assert_int_equal(rec_symgather_hit(sc, pid, hot + 1, 0), 0);
	assert_int_equal(rec_symgather_write(sc, t.w, 0, 2100), 0);
	assert_int_equal(rec_symgather_hit(sc, pid, other + 1, 0), 0);
	assert_int_equal(rec_symgather_write(sc, t.w, 0, 2200), 1);
	trace_close(&t);
	as = read_back(&t);
	assert_int_equal(npackets, 2);
	rt = rtab_get(0, map_of(hot)->path, 0);
	assert_non_null(rt);
	assert_int_equal(rt->nsyms, 2);   /* each once */
	assert_int_equal(ana_symbols_resolve(as, pid, other + 1, 0, 3000, &out), 1);
	assert_string_equal(out.sym, "symgather_other_target");
	ana_symbols_free(as);
	rec_symgather_free(sc);
	trace_free(&t);
}

/* Full tables in chunks of 7 symbols: many packets, merged by the reader. */
static void test_full_chunked(void **state)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t qs = (uint64_t)(uintptr_t)libc_sym("qsort");
	uint64_t sl = (uint64_t)(uintptr_t)libc_sym("strtol");
	struct rec_symgather_stats st;
	struct rec_symgather *sc;
	struct ana_symbols *as;
	struct ana_sym out;
	struct trace t;
	struct rtab *rt;

	(void)state;
	read_self_maps();
	trace_open(&t);
	sc = new_sc(1, 7);
	feed_maps(sc, &t, pid);
	assert_int_equal(rec_symgather_hit(sc, pid, qs, 0), 0);
	assert_int_equal(rec_symgather_hit(sc, pid, KBASE + 0x100, 1), 0);
	assert_true(rec_symgather_write(sc, t.w, 0, 2000) > 10);
	rec_symgather_stats(sc, &st);
	trace_close(&t);
	as = read_back(&t);
	rt = rtab_get(0, map_of(qs)->path, 0);
	assert_non_null(rt);
	assert_true(rt->nsyms > 500);   /* libc exports thousands */
	assert_true(rtab_has(rt, "strtol"));
	for (size_t i = 1; i < rt->nsyms; i++)
		assert_true(rt->starts[i - 1] < rt->starts[i]);
	/* the whole kernel table: 4 core text symbols + 2 in [mymod] */
	assert_int_equal(rtab_get(1, "[kernel.kallsyms]", 0)->nsyms, 4);
	assert_int_equal(rtab_get(2, "[mymod]", 0)->nsyms, 2);
	/* strtol was never hit but the full table names it */
	assert_int_equal(ana_symbols_resolve(as, pid, sl, 0, 3000, &out), 1);
	assert_string_equal(out.sym, "strtol");
	assert_int_equal(ana_symbols_resolve(as, pid, 0xffffffffc0001004ull, 1,
					     3000, &out), 1);
	assert_string_equal(out.sym, "m_fn");
	assert_string_equal(out.dso, "[mymod]");
	/* the very last kallsyms symbol has no known end: not guessed */
	assert_int_equal(ana_symbols_resolve(as, pid, 0xffffffffc0001104ull, 1,
					     3000, &out), 0);
	assert_string_equal(out.dso, "[kernel.kallsyms]");
	assert_int_equal(st.tables, npackets);
	assert_true(st.symbols > 500);
	ana_symbols_free(as);
	rec_symgather_free(sc);
	trace_free(&t);
}

/* Vanished objects, replaced files, JIT maps, fork and exec. */
static void test_unavailable_perfmap_fork_exec(void **state)
{
	uint32_t pid = 3999001, child = 3999002;
	uint64_t hot = (uint64_t)(uintptr_t)&symgather_hot_target;
	const struct map *mhot;
	struct rec_symgather_map m = { 0 };
	struct rec_symgather *sc;
	struct ana_symbols *as;
	struct trace t;
	struct rtab *rt;
	char p[400], bid[20];

	(void)state;
	read_self_maps();
	mhot = map_of(hot);
	snprintf(p, sizeof(p), "%s/perf-%u.map", tmpdir, child);
	write_file(p, "7f0000001000 100 jit_hot_fn\n7f0000002000 100 jit_cold_fn\n");
	trace_open(&t);
	sc = new_sc(0, 0);

	m.pid = pid;
	m.start = 0x10000000;
	m.len = 0x10000;
	m.path = "/nonexistent/libgone.so";
	assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
	/* our binary again, but the trace says another build-id */
	memset(bid, 0xab, sizeof(bid));
	m.start = 0x20000000;
	m.len = mhot->end - mhot->start;
	m.pgoff = mhot->pgoff;
	m.path = mhot->path;
	m.build_id = (const uint8_t *)bid;
	m.build_id_len = sizeof(bid);
	assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
	m.build_id = NULL;
	m.build_id_len = 0;
	/* JIT code lives in anonymous memory */
	m.start = 0x7f0000000000;
	m.len = 0x100000;
	m.pgoff = 0;
	m.path = "//anon";
	assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);

	/* the child sees all of it through fork */
	assert_int_equal(rec_symgather_fork(sc, child, pid), 0);
	assert_int_equal(rec_symgather_hit(sc, child, 0x10000010, 0), 0);
	assert_int_equal(rec_symgather_hit(sc, child, 0x20000000 + (hot - mhot->start), 0), 0);
	assert_int_equal(rec_symgather_hit(sc, child, 0x7f0000001010, 0), 0);
	/* after exec a new object at the same place wins */
	assert_int_equal(rec_symgather_exec(sc, pid), 0);
	m.pid = pid;
	m.start = 0x10000000;
	m.len = 0x1000;
	m.path = "/nonexistent/libnew.so";
	assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
	assert_int_equal(rec_symgather_hit(sc, pid, 0x10000020, 0), 0);
	/* a late sample from before the exec still finds the old space */
	assert_int_equal(rec_symgather_hit(sc, pid, 0x10008000, 0), 0);
	assert_true(rec_symgather_write(sc, t.w, 0, 2000) > 0);
	trace_close(&t);
	as = read_back(&t);

	rt = rtab_get(4, "/nonexistent/libgone.so", 0);
	assert_non_null(rt);
	assert_non_null(strstr(rt ? rt->reason : "", "No such file"));
	assert_non_null(rtab_get(4, "/nonexistent/libnew.so", 0));
	rt = rtab_get(4, mhot->path, 0);
	assert_non_null(rt);
	assert_non_null(strstr(rt ? rt->reason : "", "build-id mismatch"));
	assert_int_equal(rt->bid_len, 20);
	/* the table names the conventional path, whatever dir it came from */
	snprintf(p, sizeof(p), "/tmp/perf-%u.map", child);
	rt = rtab_get(3, p, (int32_t)child);
	assert_non_null(rt);
	assert_int_equal(rt->nsyms, 1);
	assert_string_equal(rt->names[0], "jit_hot_fn");
	/* no kernel hit: no kernel table */
	assert_null(rtab_get(1, "[kernel.kallsyms]", 0));
	ana_symbols_free(as);
	rec_symgather_free(sc);
	trace_free(&t);
}

/* Repeated hits skip the slow path through a cache; a mapping change in
 * between (mmap over the same range, fork, exec) must still send the same
 * address to the object mapped there now, also for a pid reused by a
 * fork from another parent. */
static void test_hit_cache_follows_remaps(void **state)
{
	uint32_t pid = 3999101, child = 3999102, reuse = 3999103, parent2 = 3999104;
	struct rec_symgather_map m = { 0 };
	struct rec_symgather *sc;
	struct ana_symbols *as;
	struct trace t;

	(void)state;
	trace_open(&t);
	sc = new_sc(0, 0);
	m.pid = pid;
	m.start = 0x30000000;
	m.len = 0x10000;
	m.path = "/nonexistent/cache-a.so";
	assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
	for (int i = 0; i < 3; i++)   /* the 2nd and 3rd are cache hits */
		assert_int_equal(rec_symgather_hit(sc, pid, 0x30000010, 0), 0);
	/* the same range mapped again, another file: no exec in between */
	m.path = "/nonexistent/cache-b.so";
	assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
	assert_int_equal(rec_symgather_hit(sc, pid, 0x30000010, 0), 0);
	/* a mapping elsewhere moves nothing: the cached hit stays valid */
	m.start = 0x40000000;
	m.path = "/nonexistent/cache-e.so";
	assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
	assert_int_equal(rec_symgather_hit(sc, pid, 0x30000010, 0), 0);
	m.start = 0x30000000;
	/* a fork, then the child maps a third file there */
	assert_int_equal(rec_symgather_fork(sc, child, pid), 0);
	m.pid = child;
	m.path = "/nonexistent/cache-c.so";
	assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
	assert_int_equal(rec_symgather_hit(sc, child, 0x30000010, 0), 0);
	/* an exec and a fourth file */
	assert_int_equal(rec_symgather_exec(sc, pid), 0);
	m.pid = pid;
	m.path = "/nonexistent/cache-d.so";
	assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
	assert_int_equal(rec_symgather_hit(sc, pid, 0x30000010, 0), 0);
	/* a reused pid: another parent's fork gives it that parent's space;
	 * its hit cached from before must not stand */
	m.pid = reuse;
	m.start = 0x50000000;
	m.path = "/nonexistent/cache-f.so";
	assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
	assert_int_equal(rec_symgather_hit(sc, reuse, 0x50000010, 0), 0);
	m.pid = parent2;
	m.path = "/nonexistent/cache-g.so";
	assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
	/* another process's changes in between leave reuse's entry alone,
	 * the fork replaces it */
	assert_int_equal(rec_symgather_exec(sc, child), 0);
	assert_int_equal(rec_symgather_hit(sc, reuse, 0x50000010, 0), 0);
	assert_int_equal(rec_symgather_fork(sc, reuse, parent2), 0);
	assert_int_equal(rec_symgather_hit(sc, reuse, 0x50000010, 0), 0);
	/* kernel hits repeat too (the test kallsyms) */
	for (int i = 0; i < 3; i++)
		assert_int_equal(rec_symgather_hit(sc, pid, KBASE + 0x100, 1), 0);
	assert_true(rec_symgather_write(sc, t.w, 0, 1000) > 0);
	trace_close(&t);
	as = read_back(&t);
	assert_non_null(rtab_get(4, "/nonexistent/cache-a.so", 0));
	assert_non_null(rtab_get(4, "/nonexistent/cache-b.so", 0));
	assert_non_null(rtab_get(4, "/nonexistent/cache-c.so", 0));
	assert_non_null(rtab_get(4, "/nonexistent/cache-d.so", 0));
	assert_null(rtab_get(4, "/nonexistent/cache-e.so", 0));   /* never hit */
	assert_non_null(rtab_get(4, "/nonexistent/cache-f.so", 0));
	assert_non_null(rtab_get(4, "/nonexistent/cache-g.so", 0));
	ana_symbols_free(as);
	rec_symgather_free(sc);
	trace_free(&t);
}

/* Addresses outside any ELF object are cached until the next write:
 * stack-scan junk (first page, beyond any user address space) is dropped
 * at once, an unmapped address waits in the pending list once however
 * often it repeats, and a JIT address hit again after a write is looked
 * up again in the perf map, which may have grown meanwhile. */
static void test_hit_cache_pending_and_jit(void **state)
{
	uint32_t pid = 3999201;
	struct rec_symgather_opts o = REC_SYMGATHER_OPTS_INIT;
	struct rec_symgather_map m = { 0 };
	struct rec_symgather_stats st;
	struct rec_symgather *sc;
	struct ana_symbols *as;
	struct trace t;
	struct rtab *rt;
	char p[400], mp[400];
	const uint64_t junk[] = { (uint64_t)-512 /* PERF_CONTEXT_USER */, 0, 0x30, 0xfff,
				  0x53fd894855544155ull, 1ull << 56 };
	const uint64_t unmapped[] = { 0x5000000, 0x6000000, 0x5000000,
				      0x6000000, 0x5000000 };

	(void)state;
	snprintf(p, sizeof(p), "%s/perf-%u.map", tmpdir, pid);
	write_file(p, "7f0000001000 100 jit_a\n");
	trace_open(&t);
	o.kallsyms_path = kallsyms_path;
	o.perfmap_dir = tmpdir;
	o.proc_maps = "";
	o.debug_dir = "";
	o.max_pending = 2;
	sc = rec_symgather_new(&o);
	assert_non_null(sc);
	m.pid = pid;
	m.start = 0x7f0000000000;
	m.len = 0x100000;
	m.path = "//anon";
	assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);

	assert_int_equal(rec_symgather_hit_callchain(sc, pid, junk, 6, 0), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(rec_symgather_hit(sc, pid, unmapped[i], 0), 0);
	assert_int_equal(rec_symgather_hit(sc, pid, 0x7f0000002010, 0), 0);
	rec_symgather_stats(sc, &st);
	assert_int_equal(st.pending_dropped, 0);   /* two addresses pending */
	/* the JIT function is not in the map yet */
	assert_int_equal(rec_symgather_write(sc, t.w, 0, 1000), 0);

	snprintf(mp, sizeof(mp), "7f0000001000 100 jit_a\n7f0000002000 100 jit_b\n");
	write_file(p, mp);
	assert_int_equal(rec_symgather_hit(sc, pid, 0x7f0000002010, 0), 0);
	/* the settled unmapped addresses are pending anew after the write:
	 * with a third the list (2) overflows */
	for (int i = 0; i < 4; i++)
		assert_int_equal(rec_symgather_hit(sc, pid, unmapped[i], 0), 0);
	assert_int_equal(rec_symgather_hit(sc, pid, 0x7000000, 0), 0);
	rec_symgather_stats(sc, &st);
	assert_int_equal(st.pending_dropped, 1);
	assert_true(rec_symgather_write(sc, t.w, 0, 2000) > 0);
	trace_close(&t);
	as = read_back(&t);
	snprintf(p, sizeof(p), "/tmp/perf-%u.map", pid);
	rt = rtab_get(3, p, (int32_t)pid);
	assert_non_null(rt);
	assert_int_equal(rt->nsyms, 1);
	assert_string_equal(rt->names[0], "jit_b");
	ana_symbols_free(as);
	rec_symgather_free(sc);
	trace_free(&t);
}

/* rec_symgather_feed() with records as the decoder produces them, and
 * the lazy /proc/PID/maps read for a process met through a sample. */
static void test_feed_records(void **state)
{
	struct rec_symgather_opts o = REC_SYMGATHER_OPTS_INIT;
	uint32_t pid = (uint32_t)getpid();
	uint64_t hot = (uint64_t)(uintptr_t)&symgather_hot_target;
	uint64_t other = (uint64_t)(uintptr_t)&symgather_other_target;
	uint64_t qs = libc_sym("qsort");
	struct rec_symgather_stats st;
	struct rec_symgather *sc;
	struct ana_symbols *as;
	struct rec_record r;
	struct ana_sym out;
	struct trace t;
	/* unaligned on purpose, as ring records may be */
	uint8_t ccbuf[8 * 6 + 1];
	uint64_t cc[6] = { (uint64_t)-128, KBASE + 0x210, (uint64_t)-512,
			   other + 3, qs + 1, 0 };

	(void)state;
	read_self_maps();
	o.kallsyms_path = kallsyms_path;
	o.perfmap_dir = tmpdir;
	sc = rec_symgather_new(&o);
	assert_non_null(sc);
	trace_open(&t);
	feed_maps(NULL, &t, pid);   /* Mmap packets only, for the analyzer */

	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_SAMPLE;
	r.misc = 2;   /* PERF_RECORD_MISC_USER */
	r.sid.pid = r.sid.tid = pid;
	r.sample.ip = hot + 1;
	memcpy(ccbuf + 1, cc, 5 * 8);
	r.sample.ips = ccbuf + 1;
	r.sample.nr = 5;
	assert_int_equal(rec_symgather_feed(sc, &r), 0);
	/* a guest sample is not ours */
	r.misc = 5;
	r.sample.ip = KBASE + 0x410;
	r.sample.nr = 0;
	assert_int_equal(rec_symgather_feed(sc, &r), 0);
	/* kernel sample */
	r.misc = 1;
	assert_int_equal(rec_symgather_feed(sc, &r), 0);
	/* exec of a pid, then its mmap: a fresh space, no /proc read */
	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_COMM;
	r.misc = 1 << 13;
	r.comm.pid = r.comm.tid = 3999100;
	r.comm.comm = "x";
	assert_int_equal(rec_symgather_feed(sc, &r), 0);
	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_MMAP2;
	r.mmap2.pid = r.mmap2.tid = 3999100;
	r.mmap2.addr = 0x40000000;
	r.mmap2.len = 0x1000;
	r.mmap2.filename = "/nonexistent/exec-target";
	assert_int_equal(rec_symgather_feed(sc, &r), 0);
	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_SAMPLE;
	r.misc = 2;
	r.sid.pid = 3999100;
	r.sample.ip = 0x40000010;
	assert_int_equal(rec_symgather_feed(sc, &r), 0);
	assert_true(rec_symgather_write(sc, t.w, 0, 2000) > 0);
	rec_symgather_stats(sc, &st);
	assert_int_equal(st.procs_scanned, 1);   /* ours, once */
	assert_int_equal(st.unavailable, 1);     /* exec-target */
	trace_close(&t);
	as = read_back(&t);
	assert_true(rtab_has(rtab_get(0, map_of(hot)->path, 0), "symgather_hot_target"));
	assert_true(rtab_has(rtab_get(0, map_of(hot)->path, 0), "symgather_other_target"));
	assert_true(rtab_has(rtab_get(0, map_of(qs)->path, 0), "qsort"));
	assert_true(rtab_has(rtab_get(1, "[kernel.kallsyms]", 0), "k_cold"));
	assert_true(rtab_has(rtab_get(1, "[kernel.kallsyms]", 0), "k_other"));
	assert_int_equal(rtab_get(1, "[kernel.kallsyms]", 0)->nsyms, 2);
	assert_int_equal(ana_symbols_resolve(as, pid, other + 3, 0, 3000, &out), 1);
	assert_string_equal(out.sym, "symgather_other_target");
	ana_symbols_free(as);
	rec_symgather_free(sc);
	trace_free(&t);
}

/* rec_symgather_user_mapped(), the emitter's oracle for cutting
 * frame-pointer chains: mapped or not from the mappings fed so far,
 * final at once (the records come merged by time). */
static void test_user_mapped(void **state)
{
	struct rec_symgather_opts o = REC_SYMGATHER_OPTS_INIT;
	const uint64_t ms = 1000000;
	struct rec_symgather *sc;
	struct rec_record r;

	(void)state;
	o.kernel = 0;
	o.proc_maps = "";   /* only what the test feeds */
	sc = rec_symgather_new(&o);
	assert_non_null(sc);
	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_COMM;
	r.misc = 1 << 13;   /* exec */
	r.comm.pid = r.comm.tid = 4000;
	r.comm.comm = "x";
	r.sid.has_time = true;
	r.sid.time = 1000 * ms;
	assert_int_equal(rec_symgather_feed(sc, &r), 0);
	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_MMAP2;
	r.mmap2.pid = r.mmap2.tid = 4000;
	r.mmap2.addr = 0x40000000;
	r.mmap2.len = 0x1000;
	r.mmap2.filename = "/nonexistent/exec-target";
	r.sid.has_time = true;
	r.sid.time = 1001 * ms;
	assert_int_equal(rec_symgather_feed(sc, &r), 0);
	/* right after the mmap: records come merged by time, so the
	 * answer is final at once */
	assert_int_equal(rec_symgather_user_mapped(sc, 4000, 0x40000010, 1001 * ms), 1);
	assert_int_equal(rec_symgather_user_mapped(sc, 4000, 0x40000fff, 1001 * ms), 1);
	assert_int_equal(rec_symgather_user_mapped(sc, 4000, 0x40001000, 1001 * ms), 0);
	assert_int_equal(rec_symgather_user_mapped(sc, 4000, 0x5, 1001 * ms), 0);
	/* a fork child has its parent's maps */
	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_FORK;
	r.task.pid = r.task.tid = 4001;
	r.task.ppid = r.task.ptid = 4000;
	assert_int_equal(rec_symgather_feed(sc, &r), 0);
	assert_int_equal(rec_symgather_user_mapped(sc, 4001, 0x40000010, 1002 * ms), 1);
	assert_int_equal(rec_symgather_user_mapped(sc, 4001, 0x7000, 1002 * ms), 0);
	/* a pid never met, and no /proc to read: nothing mapped */
	assert_int_equal(rec_symgather_user_mapped(sc, 4002, 0x40000010, 2000 * ms), 0);
	assert_int_equal(rec_symgather_user_mapped(NULL, 4000, 0x40000010, 2000 * ms), -EINVAL);
	rec_symgather_free(sc);
}

/* A stripped library plus its debug file under DIR/.build-id: the local
 * function the .dynsym lacks is named from the debug file. */
static void test_debug_dir(void **state)
{
	char cmd[1600], lib[400], dbgdir[400], hex[64] = "";
	unsigned long long hidden = 0;
	FILE *f;

	(void)state;
	snprintf(cmd, sizeof(cmd),
		 "cd %s && printf '%%s\n' "
		 "'__attribute__((noinline)) static int lib_hidden(int x) { return x * 5; }' "
		 "'int lib_exported(int x) { return lib_hidden(x) + 1; }' > lib.c && "
		 "cc -O1 -g -shared -fPIC lib.c -o libfull.so && "
		 "objcopy --only-keep-debug libfull.so lib.debug && "
		 "strip -o libstripped.so libfull.so", tmpdir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "nm %s/libfull.so | awk '$3==\"lib_hidden\"{print $1}'",
		 tmpdir);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%llx", &hidden), 1);
	pclose(f);
	snprintf(cmd, sizeof(cmd), "readelf -n %s/libstripped.so | "
		 "sed -n 's/.*Build ID: //p'", tmpdir);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%63s", hex), 1);
	pclose(f);
	snprintf(dbgdir, sizeof(dbgdir), "%s/dbg", tmpdir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/.build-id/%.2s && cp %s/lib.debug "
		 "%s/.build-id/%.2s/%s.debug", dbgdir, hex, tmpdir, dbgdir, hex,
		 hex + 2);
	assert_int_equal(system(cmd), 0);
	snprintf(lib, sizeof(lib), "%s/libstripped.so", tmpdir);

	for (int with = 0; with < 2; with++) {
		struct rec_symgather_opts o = REC_SYMGATHER_OPTS_INIT;
		struct rec_symgather_map m = { 0 };
		struct rec_symgather *sc;
		struct ana_symbols *as;
		struct trace t;
		struct rtab *rt;

		o.kernel = 0;
		o.proc_maps = "";
		o.debug_dir = with ? dbgdir : "";
		sc = rec_symgather_new(&o);
		assert_non_null(sc);
		trace_open(&t);
		/* the whole file mapped at 0x50000000 (offset == vaddr) */
		m.pid = 3999200;
		m.start = 0x50000000;
		m.len = 0x10000;
		m.path = lib;
		assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
		assert_int_equal(rec_symgather_hit(sc, m.pid, m.start + hidden + 1, 0), 0);
		assert_int_equal(rec_symgather_write(sc, t.w, 0, 1000), 1);
		trace_close(&t);
		as = read_back(&t);
		rt = rtab_get(0, lib, 0);
		assert_non_null(rt);
		assert_int_equal(rtab_has(rt, "lib_hidden"), with);
		ana_symbols_free(as);
		rec_symgather_free(sc);
		trace_free(&t);
	}
}

/* [vdso] hits are named from the gatherer's own vDSO image. */
static void test_vdso(void **state)
{
	uint32_t pid = 3999300;
	const struct map *v = NULL;
	struct rec_symgather *sc;
	struct rec_symgather_map m = { 0 };
	struct prec_elf e;
	const struct prec_elf_sym *cg = NULL;
	struct ana_symbols *as;
	struct ana_sym out;
	struct trace t;

	(void)state;
	read_self_maps();
	for (size_t i = 0; i < nmaps; i++)
		if (strcmp(maps[i].path, "[vdso]") == 0)
			v = &maps[i];
	if (!v)
		skip();   /* a kernel without a vDSO */
	assert_int_equal(prec_elf_parse((const void *)(uintptr_t)v->start,
					     v->end - v->start, &e), 0);
	for (size_t i = 0; i < e.nsyms; i++)
		if (strstr(e.syms[i].name, "clock_gettime"))
			cg = &e.syms[i];
	assert_non_null(cg);
	sc = new_sc(0, 0);
	trace_open(&t);
	m.pid = pid;
	m.start = 0x7ffff0000000ull;
	m.len = v->end - v->start;
	m.path = "[vdso]";
	assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
	write_mmap(&t, pid, &(struct map){ m.start, m.start + m.len, 0, "[vdso]" }, 1000);
	assert_int_equal(rec_symgather_hit(sc, pid, m.start + cg->start + 1, 0), 0);
	assert_int_equal(rec_symgather_write(sc, t.w, 0, 2000), 1);
	trace_close(&t);
	as = read_back(&t);
	assert_true(rtab_has(rtab_get(0, "[vdso]", 0), cg->name));
	assert_int_equal(ana_symbols_resolve(as, pid, m.start + cg->start + 1, 0,
					     3000, &out), 1);
	assert_string_equal(out.sym, cg->name);
	assert_string_equal(out.dso, "[vdso]");
	ana_symbols_free(as);
	prec_elf_release(&e);
	rec_symgather_free(sc);
	trace_free(&t);
}

static uint64_t nm_addr(const char *file, const char *sym)
{
	char cmd[600];
	unsigned long long a = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3==\"%s\"{print $1}'", file, sym);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%llx", &a), 1);
	pclose(f);
	return a;
}

/* A file replaced between two writes (package upgrade): the second write
 * must not name new hits from the other binary. */
static void test_replaced_file(void **state)
{
	char cmd[1200], lib[400];
	struct rec_symgather_map m = { 0 };
	struct rec_symgather *sc;
	struct trace t;

	(void)state;
	snprintf(lib, sizeof(lib), "%s/libswap.so", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && printf '%%s\n' 'int f1(int x) { return x + 1; }' "
		 "'int f2(int x) { return x * 3; }' > swap.c && "
		 "cc -O1 -shared -fPIC swap.c -o libswap.so && "
		 "cc -O2 -shared -fPIC -DOTHER swap.c -Wl,--build-id=sha1 -o libother.so",
		 tmpdir);
	assert_int_equal(system(cmd), 0);
	sc = new_sc(0, 0);
	trace_open(&t);
	m.pid = 3999400;
	m.start = 0x60000000;
	m.len = 0x10000;
	m.path = lib;
	assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
	assert_int_equal(rec_symgather_hit(sc, m.pid, m.start + nm_addr(lib, "f1"), 0), 0);
	assert_true(rec_symgather_write(sc, t.w, 0, 1000) == 1);
	/* the file is replaced by another build; a hit in its f2 */
	snprintf(cmd, sizeof(cmd), "cp %s/libother.so %s", tmpdir, lib);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(rec_symgather_hit(sc, m.pid, m.start + nm_addr(lib, "f2"), 0), 0);
	assert_int_equal(rec_symgather_write(sc, t.w, 0, 2000), 0);
	trace_close(&t);
	rec_symgather_free(sc);
	trace_free(&t);
}

static void test_kernel_hidden(void **state)
{
	struct rec_symgather_opts o = REC_SYMGATHER_OPTS_INIT;
	struct rec_symgather_stats st;
	struct rec_symgather *sc;
	struct ana_symbols *as;
	struct trace t;
	char p[400];
	struct rtab *rt;

	(void)state;
	snprintf(p, sizeof(p), "%s/hidden", tmpdir);
	o.kallsyms_path = p;
	sc = rec_symgather_new(&o);
	assert_non_null(sc);
	rec_symgather_stats(sc, &st);
	assert_int_equal(st.kernel_status, 1);   /* REC_KALLSYMS_HIDDEN */
	trace_open(&t);
	assert_int_equal(rec_symgather_hit(sc, 1, KBASE, 1), 0);
	assert_int_equal(rec_symgather_write(sc, t.w, 0, 1000), 2);
	/* said once */
	assert_int_equal(rec_symgather_write(sc, t.w, 0, 1100), 0);
	trace_close(&t);
	as = read_back(&t);
	rt = rtab_get(4, "[kernel.kallsyms]", 0);
	assert_non_null(rt);
	assert_non_null(strstr(rt ? rt->reason : "", "kptr_restrict"));
	ana_symbols_free(as);
	rec_symgather_free(sc);
	trace_free(&t);
}

/* A module loaded after the start: its addresses are unknown to the
 * kallsyms read at new(), so the gatherer reads kallsyms again (at most
 * every kallsyms_reload_ms, twice as long after a read that named
 * nothing, never while the file is unchanged) and then names them;
 * symbols written before are not repeated. */
static void test_kernel_module_loaded_later(void **state)
{
	static const char before[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 T k_hot\n"
		"ffffffff81000200 t k_cold\n"
		"ffffffffc0001000 t m_fn\t[mymod]\n"
		"ffffffffc0001100 t m_fn2\t[mymod]\n";
	const uint64_t nm = 0xffffffffc0100010ull;   /* in [newmod] */
	struct rec_symgather_opts o = REC_SYMGATHER_OPTS_INIT;
	struct rec_symgather_stats st;
	struct rec_symgather *sc;
	struct ana_symbols *as;
	struct ana_sym out;
	struct trace t;
	char p[400], text[1024];
	struct rtab *rt;

	(void)state;
	snprintf(p, sizeof(p), "%s/kallsyms-mod", tmpdir);
	write_file(p, before);
	o.kallsyms_path = p;
	o.proc_maps = "";
	/* long enough that no preemption of this test (ASan, a parallel
	 * ctest job) makes the second read below due early */
	o.kallsyms_reload_ms = 100;
	sc = rec_symgather_new(&o);
	assert_non_null(sc);
	trace_open(&t);
	assert_int_equal(rec_symgather_hit(sc, 1, KBASE + 0x100, 1), 0);   /* k_hot */
	assert_int_equal(rec_symgather_write(sc, t.w, 0, 1000), 1);
	/* kallsyms changed since new() (here: a blank line more, so the
	 * size differs); past m_fn2's bounded end: unknown; the first one
	 * reads at once */
	snprintf(text, sizeof(text), "%s\n", before);
	write_file(p, text);
	assert_int_equal(rec_symgather_hit(sc, 1, nm, 1), 0);
	rec_symgather_stats(sc, &st);
	assert_int_equal(st.kernel_unknown, 1);
	assert_int_equal(st.kallsyms_reads, 1);
	/* nothing new: the next read waits 200 ms */
	assert_int_equal(rec_symgather_hit(sc, 1, nm + 0x40, 1), 0);
	rec_symgather_stats(sc, &st);
	assert_int_equal(st.kallsyms_reads, 1);
	assert_int_equal(st.kernel_unknown, 2);
	/* due, but the file did not change since: not read (the wait
	 * doubles again, to 400 ms) */
	usleep(250000);
	assert_int_equal(rec_symgather_write(sc, t.w, 0, 1500), 0);
	rec_symgather_stats(sc, &st);
	assert_int_equal(st.kallsyms_reads, 1);
	assert_int_equal(st.kallsyms_unchanged, 1);
	/* the module is loaded; the next write reads kallsyms again */
	snprintf(text, sizeof(text), "%s"
		 "ffffffffc0100000 t nm_fn\t[newmod]\n"
		 "ffffffffc0100100 t nm_fn2\t[newmod]\n", before);
	write_file(p, text);
	usleep(450000);
	assert_true(rec_symgather_write(sc, t.w, 0, 2000) >= 1);
	rec_symgather_stats(sc, &st);
	assert_int_equal(st.kallsyms_reads, 2);
	trace_close(&t);
	as = read_back(&t);
	rt = rtab_get(2, "[newmod]", 0);
	assert_non_null(rt);
	assert_int_equal(rt->nsyms, 1);
	assert_true(rtab_has(rt, "nm_fn"));
	/* k_hot went out once, before the new read */
	rt = rtab_get(1, "[kernel.kallsyms]", 0);
	assert_non_null(rt);
	assert_int_equal(rt->nsyms, 1);
	assert_int_equal(ana_symbols_resolve(as, 1, nm, 1, 3000, &out), 1);
	assert_string_equal(out.sym, "nm_fn");
	assert_string_equal(out.dso, "[newmod]");
	ana_symbols_free(as);
	rec_symgather_free(sc);
	trace_free(&t);

	/* bounded: unknown addresses after a read wait for the interval */
	write_file(p, before);
	o.kallsyms_reload_ms = 60000;
	sc = rec_symgather_new(&o);
	assert_non_null(sc);
	snprintf(text, sizeof(text), "%s\n", before);
	write_file(p, text);   /* changed since new(), as above */
	for (uint64_t i = 0; i < 100; i++)
		assert_int_equal(rec_symgather_hit(sc, 1, nm + 64 * i, 1), 0);
	rec_symgather_stats(sc, &st);
	assert_int_equal(st.kallsyms_reads, 1);
	assert_int_equal(st.kernel_unknown, 100);
	rec_symgather_free(sc);
	/* a user address in a kernel-mode sample is no unknown kernel
	 * address: kallsyms is not read again for it */
	o.kallsyms_reload_ms = 1;
	sc = rec_symgather_new(&o);
	assert_non_null(sc);
	assert_int_equal(rec_symgather_hit(sc, 1, 0x5625bdb653d0ull, 1), 0);
	usleep(3000);
	assert_int_equal(rec_symgather_hit(sc, 1, 0x7f0000001000ull, 1), 0);
	rec_symgather_stats(sc, &st);
	assert_int_equal(st.kernel_unknown, 0);
	assert_int_equal(st.kallsyms_reads, 0);
	rec_symgather_free(sc);
	/* 0: never */
	o.kallsyms_reload_ms = 0;
	sc = rec_symgather_new(&o);
	assert_non_null(sc);
	assert_int_equal(rec_symgather_hit(sc, 1, nm, 1), 0);
	rec_symgather_stats(sc, &st);
	assert_int_equal(st.kallsyms_reads, 0);
	rec_symgather_free(sc);
}

/* One pass of test_symcache_same_tables: a new gatherer on the cache dir,
 * every 4099th byte of libc's and this binary's code hit, its tables
 * written and read back into rtabs; the stats returned. */
static void cache_pass(const char *dir, struct rec_symgather_stats *st)
{
	struct rec_symgather_opts o = REC_SYMGATHER_OPTS_INIT;
	uint32_t pid = (uint32_t)getpid();
	uint64_t own = (uint64_t)(uintptr_t)&symgather_hot_target;
	const struct map *ml = map_of(libc_sym("qsort")), *mo = map_of(own);
	struct rec_symgather *sc;
	struct ana_symbols *as;
	struct trace t;

	assert_non_null(ml);
	assert_non_null(mo);
	o.kallsyms_path = kallsyms_path;
	o.perfmap_dir = tmpdir;
	o.proc_maps = "";
	o.debug_dir = "";
	o.kernel = 0;
	o.symcache_dir = dir;
	sc = rec_symgather_new(&o);
	assert_non_null(sc);
	feed_maps(sc, NULL, pid);
	for (uint64_t ip = ml->start; ip < ml->end; ip += 4099)
		assert_int_equal(rec_symgather_hit(sc, pid, ip, 0), 0);
	for (uint64_t ip = mo->start; ip < mo->end; ip += 4099) {
		uint64_t chain[3] = { (uint64_t)-512, ip, ip + 7 };

		assert_int_equal(rec_symgather_hit_callchain(sc, pid, chain, 3, 0), 0);
	}
	trace_open(&t);
	assert_true(rec_symgather_write(sc, t.w, 0, 1000) >= 2);
	trace_close(&t);
	as = read_back(&t);
	rec_symgather_stats(sc, st);
	ana_symbols_free(as);
	rec_symgather_free(sc);
	trace_free(&t);
}

static void *read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	b = malloc((size_t)n);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* The symbol cache: for the same hits, a gatherer that finds the tables
 * in the cache writes exactly what one that read the files wrote (libc
 * is stripped on Debian, so most of its hits become FDE ranges, which
 * the cache carries too; this binary has a .symtab); a damaged entry is
 * ignored, read from the file again and rewritten byte for byte. */
static void test_symcache_same_tables(void **state)
{
	struct rec_symgather_stats st;
	struct rtab *cold;
	char dir[400], entry[700], cmd[800];
	size_t ncold, len0, len1;
	uint8_t *e0, *e1;
	FILE *ls;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/symcache", tmpdir);
	cache_pass(dir, &st);
	assert_int_equal(st.symcache_hits, 0);
	assert_true(st.symcache_misses >= 2);
	assert_int_equal(st.symcache_stores, st.symcache_misses);
	assert_true(st.fde_ranges > 0);   /* the cache must carry them too */
	cold = malloc(sizeof(rtabs));
	assert_non_null(cold);
	memcpy(cold, rtabs, sizeof(rtabs));
	ncold = nrtabs;

	/* warm: every table from the cache, the same tables out */
	cache_pass(dir, &st);
	assert_true(st.symcache_hits >= 2);
	assert_int_equal(st.symcache_misses, 0);
	assert_int_equal(st.symcache_stores, 0);
	assert_int_equal(nrtabs, ncold);
	assert_memory_equal(rtabs, cold, sizeof(rtabs));

	/* one entry damaged in the middle: ignored, rebuilt, same tables */
	snprintf(cmd, sizeof(cmd), "ls -S %s/*.sym | head -1", dir);
	ls = popen(cmd, "r");
	assert_non_null(ls);
	assert_non_null(fgets(entry, sizeof(entry), ls));
	pclose(ls);
	entry[strcspn(entry, "\n")] = 0;
	e0 = read_whole(entry, &len0);
	e0[len0 / 2] ^= 0x40;
	{
		FILE *f = fopen(entry, "wb");

		assert_non_null(f);
		assert_int_equal(fwrite(e0, 1, len0, f), len0);
		fclose(f);
	}
	e0[len0 / 2] ^= 0x40;
	cache_pass(dir, &st);
	assert_int_equal(st.symcache_misses, 1);
	assert_int_equal(st.symcache_damaged, 1);
	assert_int_equal(st.symcache_stores, 1);
	assert_memory_equal(rtabs, cold, sizeof(rtabs));
	e1 = read_whole(entry, &len1);
	assert_int_equal(len1, len0);
	assert_memory_equal(e1, e0, len0);
	free(e0);
	free(e1);
	free(cold);
}

/* Cost on this host: libc in full plus the whole real kernel table. */
static void test_cost_figure(void **state)
{
	struct rec_symgather_opts o = REC_SYMGATHER_OPTS_INIT;
	struct rec_symgather_stats st;
	uint32_t pid = (uint32_t)getpid();
	uint64_t qs = (uint64_t)(uintptr_t)libc_sym("qsort");
	struct rec_symgather *sc;
	struct trace t;
	struct prec_writer_stats ws;

	(void)state;
	read_self_maps();
	o.full_tables = 1;
	sc = rec_symgather_new(&o);
	assert_non_null(sc);
	trace_open(&t);
	feed_maps(sc, NULL, pid);
	assert_int_equal(rec_symgather_hit(sc, pid, qs, 0), 0);
	assert_int_equal(rec_symgather_hit(sc, pid, (uint64_t)(uintptr_t)
					   &symgather_hot_target, 0), 0);
	assert_true(rec_symgather_write(sc, t.w, 0, 1000) > 0);
	trace_close(&t);
	rec_symgather_stats(sc, &st);
	prec_writer_stats(t.w, &ws);
	print_message("symgather cost (full tables: libc + test binary + "
		      "kernel, kernel_status %d): %.1f ms, %llu symbols, "
		      "%llu packets, %llu bytes raw, %llu bytes compressed file\n",
		      st.kernel_status, st.time_ns / 1e6,
		      (unsigned long long)st.symbols,
		      (unsigned long long)st.tables,
		      (unsigned long long)st.bytes,
		      (unsigned long long)ws.bytes_written);
	assert_true(st.bytes > 0);
	rec_symgather_free(sc);
	trace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hits_roundtrip),
		cmocka_unit_test(test_incremental),
		cmocka_unit_test(test_full_chunked),
		cmocka_unit_test(test_unavailable_perfmap_fork_exec),
		cmocka_unit_test(test_hit_cache_pending_and_jit),
		cmocka_unit_test(test_hit_cache_follows_remaps),
		cmocka_unit_test(test_feed_records),
		cmocka_unit_test(test_user_mapped),
		cmocka_unit_test(test_debug_dir),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_replaced_file),
		cmocka_unit_test(test_kernel_hidden),
		cmocka_unit_test(test_kernel_module_loaded_later),
		cmocka_unit_test(test_symcache_same_tables),
		cmocka_unit_test(test_cost_figure),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
