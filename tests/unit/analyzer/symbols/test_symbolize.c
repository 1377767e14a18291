/*
 * test_symbolize.c - analyzer/symbolize on synthetic traces written with
 * the real format writer and read back with the real reader: time-aware
 * remaps, fork inheritance, exec, threads, ELF tables by path and by
 * build-id with PT_LOAD segment math, zero-size symbols, chunked tables,
 * kernel and module tables, perf maps, unknown addresses, --symfs by
 * build-id and by path (overriding the embedded table).
 */
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
#include "unit/elfimage.h"

struct tw {
	struct prec_sink *sink;
	struct prec_writer *w;
};

static void tw_open(struct tw *t)
{
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;

	o.frame_size = 512;   /* many frames: interning restarts often */
	t->sink = prec_sink_mem_new();
	assert_non_null(t->sink);
	t->w = prec_writer_new(t->sink, &o);
	assert_non_null(t->w);
}

static void tw_free(struct tw *t)
{
	prec_writer_free(t->w);
	prec_sink_free(t->sink);
}

static void put(struct tw *t, Perfrec__Packet *pkt, uint64_t time)
{
	assert_int_equal(prec_writer_append(t->w, 0, pkt, time), 0);
}

static void mmap_pkt(struct tw *t, uint32_t pid, uint64_t start, uint64_t len,
		     uint64_t pgoff, const char *path, const uint8_t *bid,
		     size_t bid_len, uint64_t time)
{
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__Mmap m = PERFREC__MMAP__INIT;

	m.pid = pid;
	m.tid = pid;
	m.start = start;
	m.len = len;
	m.pgoff = pgoff;
	m.filename = prec_writer_intern_string(t->w, 0, path);
	m.build_id.data = (uint8_t *)bid;
	m.build_id.len = bid_len;
	pkt.data_case = PERFREC__PACKET__DATA_MMAP;
	pkt.mmap = &m;
	put(t, &pkt, time);
}

static void task_pkt(struct tw *t, int kind, uint32_t pid, uint32_t ppid,
		     int exec, uint64_t time)
{
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__TaskEvent e = PERFREC__TASK_EVENT__INIT;

	e.kind = kind;
	e.pid = pid;
	e.tid = pid;
	e.ppid = ppid;
	e.ptid = ppid;
	e.exec = exec;
	e.comm = prec_writer_intern_string(t->w, 0, "comm");
	pkt.data_case = PERFREC__PACKET__DATA_TASK;
	pkt.task = &e;
	put(t, &pkt, time);
}

struct tsym {
	uint64_t start, size;
	const char *name;
};

struct tab_opts {
	const uint8_t *bid;
	size_t bid_len;
	int32_t pid;
	uint64_t load_bias;
	size_t nsegs;
	const uint64_t *seg_off, *seg_vaddr, *seg_size;
	const char *reason;
};

static void symtab_pkt(struct tw *t, int kind, const char *path,
		       const struct tab_opts *o, const struct tsym *syms,
		       size_t n)
{
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__SymbolTable s = PERFREC__SYMBOL_TABLE__INIT;
	uint64_t starts[64], sizes[64], names[64], prev = 0;

	assert_true(n <= 64);
	for (size_t i = 0; i < n; i++) {
		starts[i] = syms[i].start - prev;
		prev = syms[i].start;
		sizes[i] = syms[i].size;
		names[i] = prec_writer_intern_string(t->w, 0, syms[i].name);
	}
	s.kind = kind;
	s.path = (char *)path;
	if (o) {
		s.build_id.data = (uint8_t *)o->bid;
		s.build_id.len = o->bid_len;
		s.pid = o->pid;
		s.load_bias = o->load_bias;
		s.n_load_offsets = s.n_load_vaddrs = s.n_load_sizes = o->nsegs;
		s.load_offsets = (uint64_t *)o->seg_off;
		s.load_vaddrs = (uint64_t *)o->seg_vaddr;
		s.load_sizes = (uint64_t *)o->seg_size;
		if (o->reason)
			s.reason = (char *)o->reason;
	}
	s.n_starts = s.n_sizes = s.n_names = n;
	s.starts = starts;
	s.sizes = sizes;
	s.names = names;
	pkt.data_case = PERFREC__PACKET__DATA_SYMBOLS;
	pkt.symbols = &s;
	put(t, &pkt, 0);
}

/* Closes the trace and feeds every packet to a new symbolizer. */
static struct ana_symbols *load(struct tw *t, const char *symfs)
{
	struct ana_symbols *s = ana_symbols_new();
	struct prec_reader *r;
	struct prec_packet p;
	const void *buf;
	size_t len = 0;
	int ret;

	assert_non_null(s);
	if (symfs)
		assert_int_equal(ana_symbols_set_symfs(s, symfs), 0);
	assert_int_equal(prec_writer_close(t->w), 0);
	buf = prec_sink_mem_data(t->sink, &len);
	r = prec_reader_open_mem(buf, len, NULL);
	assert_non_null(r);
	while ((ret = prec_reader_next_packet(r, &p)) > 0)
		assert_int_equal(ana_symbols_add(s, &p), 0);
	assert_int_equal(ret, 0);
	prec_reader_free(r);
	assert_int_equal(ana_symbols_finish(s), 0);
	return s;
}

static const char *dso_at(struct ana_symbols *s, uint32_t pid, uint64_t ip,
			  uint64_t time)
{
	struct ana_sym o;

	ana_symbols_resolve(s, pid, ip, 0, time, &o);
	return o.dso;
}

static void test_maps_over_time(void **state)
{
	struct ana_symbols *s;
	struct tw t;

	(void)state;
	tw_open(&t);
	mmap_pkt(&t, 100, 0x1000, 0x1000, 0, "/bin/a", NULL, 0, 10);
	mmap_pkt(&t, 100, 0x1000, 0x1000, 0, "/lib/b", NULL, 0, 50);
	/* a partial remap: only [0x1800, 0x2000) changes */
	mmap_pkt(&t, 100, 0x1800, 0x800, 0, "/lib/half", NULL, 0, 90);
	/* thread creation: same address space, no effect */
	task_pkt(&t, PERFREC__TASK_EVENT__KIND__FORK, 100, 100, 0, 55);
	/* fork at 30: the child sees /bin/a, never /lib/b */
	task_pkt(&t, PERFREC__TASK_EVENT__KIND__FORK, 200, 100, 0, 30);
	mmap_pkt(&t, 200, 0x5000, 0x1000, 0, "/lib/c", NULL, 0, 45);
	/* the child execs at 70 and maps a new binary at 75 */
	task_pkt(&t, PERFREC__TASK_EVENT__KIND__COMM, 200, 0, 1, 70);
	mmap_pkt(&t, 200, 0x9000, 0x1000, 0, "/bin/new", NULL, 0, 75);
	/* a plain comm change is not an exec */
	task_pkt(&t, PERFREC__TASK_EVENT__KIND__COMM, 100, 0, 0, 80);
	s = load(&t, NULL);

	assert_string_equal(dso_at(s, 100, 0x1010, 20), "/bin/a");
	assert_string_equal(dso_at(s, 100, 0x1fff, 49), "/bin/a");
	assert_string_equal(dso_at(s, 100, 0x1010, 50), "/lib/b");
	assert_string_equal(dso_at(s, 100, 0x1010, 60), "/lib/b");
	/* before any mapping: the first one that comes (start-up skew) */
	assert_string_equal(dso_at(s, 100, 0x1010, 5), "/bin/a");
	assert_null(dso_at(s, 100, 0x2000, 60));
	assert_null(dso_at(s, 100, 0x0fff, 60));
	assert_string_equal(dso_at(s, 100, 0x1900, 95), "/lib/half");
	assert_string_equal(dso_at(s, 100, 0x1700, 95), "/lib/b");
	/* fork */
	assert_string_equal(dso_at(s, 200, 0x1010, 40), "/bin/a");
	assert_string_equal(dso_at(s, 200, 0x1010, 65), "/bin/a");
	assert_string_equal(dso_at(s, 200, 0x5010, 65), "/lib/c");
	assert_null(dso_at(s, 100, 0x5010, 65));
	/* exec: nothing of the old space survives */
	assert_null(dso_at(s, 200, 0x1010, 80));
	assert_null(dso_at(s, 200, 0x5010, 80));
	assert_string_equal(dso_at(s, 200, 0x9010, 80), "/bin/new");
	assert_null(dso_at(s, 200, 0x9010, 65));
	/* an unknown pid */
	assert_null(dso_at(s, 999, 0x1010, 60));
	ana_symbols_free(s);
	tw_free(&t);
}

static void test_elf_tables(void **state)
{
	static const uint8_t bid_b[4] = { 0xde, 0xad, 0xbe, 0xef };
	static const uint64_t so[2] = { 0x0, 0x1000 };
	static const uint64_t sv[2] = { 0x400000, 0x402000 };   /* lld-like */
	static const uint64_t ss[2] = { 0x1000, 0x1000 };
	struct tsym a1[] = { { 0x402000, 0x20, "fa" }, { 0x402100, 0, "fb_zero" } };
	struct tsym a2[] = { { 0x402200, 0x10, "fc" }, { 0x402300, 0x10, "fd_nest" },
			     { 0x402308, 0x4, "fe_inner" } };
	struct tsym b[] = { { 0x100, 0x40, "b_func" } };
	struct tsym c[] = { { 0x3100, 0x40, "c_func" } };
	struct tab_opts oa = { 0 }, ob = { 0 }, oc = { 0 }, ou = { 0 };
	struct ana_symbols *s;
	struct ana_sym o;
	struct tw t;

	(void)state;
	tw_open(&t);
	oa.nsegs = 2;
	oa.seg_off = so;
	oa.seg_vaddr = sv;
	oa.seg_size = ss;
	oa.load_bias = 0x400000;
	ob.bid = bid_b;
	ob.bid_len = 4;
	oc.load_bias = 0x2000;   /* no segments: bias only */
	ou.reason = "open: No such file or directory";
	/* the tables come before and after the mappings, chunked */
	symtab_pkt(&t, PERFREC__SYMBOL_TABLE__KIND__ELF, "/bin/a", &oa, a1, 2);
	mmap_pkt(&t, 1, 0x555000, 0x1000, 0x1000, "/bin/a", NULL, 0, 10);
	mmap_pkt(&t, 1, 0x7000, 0x1000, 0, "/lib/b.so", bid_b, 4, 10);
	mmap_pkt(&t, 1, 0x9000, 0x1000, 0x1000, "/lib/c.so", NULL, 0, 10);
	mmap_pkt(&t, 1, 0xb000, 0x1000, 0, "/lib/gone.so", NULL, 0, 10);
	/* found by build-id although the table names another path */
	symtab_pkt(&t, PERFREC__SYMBOL_TABLE__KIND__ELF, "/elsewhere/b.so", &ob, b, 1);
	symtab_pkt(&t, PERFREC__SYMBOL_TABLE__KIND__ELF, "/lib/c.so", &oc, c, 1);
	symtab_pkt(&t, PERFREC__SYMBOL_TABLE__KIND__UNAVAILABLE, "/lib/gone.so", &ou,
		   NULL, 0);
	/* second chunk of /bin/a: same key, merged */
	oa.nsegs = 0;
	symtab_pkt(&t, PERFREC__SYMBOL_TABLE__KIND__ELF, "/bin/a", &oa, a2, 3);
	s = load(&t, NULL);

	/* ip 0x555010: file_off 0x1010, 2nd segment -> 0x402010 */
	assert_int_equal(ana_symbols_resolve(s, 1, 0x555010, 0, 20, &o), 1);
	assert_string_equal(o.sym, "fa");
	assert_int_equal(o.sym_off, 0x10);
	assert_int_equal(o.dso_off, 0x402010);
	assert_string_equal(o.dso, "/bin/a");
	assert_false(o.kernel);
	/* zero size: runs to the next symbol */
	assert_int_equal(ana_symbols_resolve(s, 1, 0x5551ff, 0, 20, &o), 1);
	assert_string_equal(o.sym, "fb_zero");
	/* chunk 2, delta-coded from its own first start */
	assert_int_equal(ana_symbols_resolve(s, 1, 0x55520f, 0, 20, &o), 1);
	assert_string_equal(o.sym, "fc");
	/* nested: the inner symbol, and the outer around it */
	assert_int_equal(ana_symbols_resolve(s, 1, 0x555309, 0, 20, &o), 1);
	assert_string_equal(o.sym, "fe_inner");
	assert_int_equal(ana_symbols_resolve(s, 1, 0x55530e, 0, 20, &o), 1);
	assert_string_equal(o.sym, "fd_nest");
	/* a gap inside the object: dso known, no symbol */
	assert_int_equal(ana_symbols_resolve(s, 1, 0x555210, 0, 20, &o), 0);
	assert_null(o.sym);
	assert_string_equal(o.dso, "/bin/a");
	assert_int_equal(o.dso_off, 0x402210);
	/* by build-id */
	assert_int_equal(ana_symbols_resolve(s, 1, 0x7120, 0, 20, &o), 1);
	assert_string_equal(o.sym, "b_func");
	assert_string_equal(o.dso, "/lib/b.so");
	/* load bias only: 0x9100 -> off 0x1100 -> 0x3100 */
	assert_int_equal(ana_symbols_resolve(s, 1, 0x9101, 0, 20, &o), 1);
	assert_string_equal(o.sym, "c_func");
	assert_int_equal(o.sym_off, 1);
	/* unavailable object: its name, no symbol, file offset */
	assert_int_equal(ana_symbols_resolve(s, 1, 0xb123, 0, 20, &o), 0);
	assert_string_equal(o.dso, "/lib/gone.so");
	assert_int_equal(o.dso_off, 0x123);
	assert_null(o.sym);
	/* nothing mapped */
	assert_int_equal(ana_symbols_resolve(s, 1, 0x123456789, 0, 20, &o), 0);
	assert_null(o.dso);
	assert_null(o.sym);
	ana_symbols_free(s);
	tw_free(&t);
}

/* Mappings keep each file (path and build-id) once: processes that map
 * one path with two different build-ids (an upgrade between their starts)
 * still name each its own table, and the ones that share a file share
 * its symbols, over many frames (where the path's string iid changes). */
static void test_shared_files(void **state)
{
	static const uint8_t v1[4] = { 1, 2, 3, 4 }, v2[4] = { 1, 2, 3, 5 };
	struct tsym s1[] = { { 0x100, 0x40, "old_func" } };
	struct tsym s2[] = { { 0x100, 0x40, "new_func" } };
	struct tab_opts o1 = { 0 }, o2 = { 0 };
	struct ana_symbols *s;
	struct ana_sym o;
	struct tw t;

	(void)state;
	tw_open(&t);
	o1.bid = v1;
	o1.bid_len = 4;
	o2.bid = v2;
	o2.bid_len = 4;
	symtab_pkt(&t, PERFREC__SYMBOL_TABLE__KIND__ELF, "/lib/x.so", &o1, s1, 1);
	symtab_pkt(&t, PERFREC__SYMBOL_TABLE__KIND__ELF, "/lib/x.so", &o2, s2, 1);
	for (uint32_t pid = 1; pid <= 40; pid++) {
		mmap_pkt(&t, pid, 0x7000, 0x1000, 0, "/lib/x.so", pid % 2 ? v1 : v2, 4, 10);
		mmap_pkt(&t, pid, 0x9000, 0x1000, 0, pid % 3 ? "/lib/y.so" : "/lib/z.so",
			 NULL, 0, 10);
	}
	s = load(&t, NULL);
	for (uint32_t pid = 1; pid <= 40; pid++) {
		assert_int_equal(ana_symbols_resolve(s, pid, 0x7110, 0, 20, &o), 1);
		assert_string_equal(o.sym, pid % 2 ? "old_func" : "new_func");
		assert_string_equal(o.dso, "/lib/x.so");
		assert_int_equal(ana_symbols_resolve(s, pid, 0x9010, 0, 20, &o), 0);
		assert_string_equal(o.dso, pid % 3 ? "/lib/y.so" : "/lib/z.so");
		assert_int_equal(o.dso_off, 0x10);
	}
	ana_symbols_free(s);
	tw_free(&t);
}

static void test_kernel_and_perfmap(void **state)
{
	struct tsym k[] = { { 0xffffffff81000000ull, 0x100, "_stext" },
			    { 0xffffffff81000100ull, 0x80, "schedule" } };
	struct tsym m[] = { { 0xffffffffc0001000ull, 0x40, "kvm_fn" } };
	struct tsym j[] = { { 0x7f0000001000ull, 0x100, "jit_fn" } };
	struct tab_opts oj = { 0 };
	struct ana_symbols *s;
	struct ana_sym o;
	struct tw t;

	(void)state;
	tw_open(&t);
	oj.pid = 42;
	symtab_pkt(&t, PERFREC__SYMBOL_TABLE__KIND__KERNEL, "[kernel.kallsyms]",
		   NULL, k, 2);
	symtab_pkt(&t, PERFREC__SYMBOL_TABLE__KIND__KERNEL_MODULE, "[kvm]", NULL, m, 1);
	symtab_pkt(&t, PERFREC__SYMBOL_TABLE__KIND__PERF_MAP, "/tmp/perf-42.map",
		   &oj, j, 1);
	mmap_pkt(&t, 42, 0x7f0000000000ull, 0x100000, 0, "//anon", NULL, 0, 1);
	s = load(&t, NULL);

	assert_int_equal(ana_symbols_resolve(s, 42, 0xffffffff81000110ull, 1, 5, &o), 1);
	assert_string_equal(o.sym, "schedule");
	assert_int_equal(o.sym_off, 0x10);
	assert_string_equal(o.dso, "[kernel.kallsyms]");
	assert_true(o.kernel);
	assert_int_equal(ana_symbols_resolve(s, 7, 0xffffffffc0001004ull, 1, 5, &o), 1);
	assert_string_equal(o.sym, "kvm_fn");
	assert_string_equal(o.dso, "[kvm]");
	/* kernel address outside every symbol */
	assert_int_equal(ana_symbols_resolve(s, 42, 0xffffffff80000000ull, 1, 5, &o), 0);
	assert_null(o.sym);
	assert_string_equal(o.dso, "[kernel.kallsyms]");
	assert_int_equal(o.dso_off, 0xffffffff80000000ull);
	/* JIT: named through perf-42.map, dso stays the mapping */
	assert_int_equal(ana_symbols_resolve(s, 42, 0x7f0000001050ull, 0, 5, &o), 1);
	assert_string_equal(o.sym, "jit_fn");
	assert_int_equal(o.sym_off, 0x50);
	assert_string_equal(o.dso, "//anon");
	/* the map belongs to pid 42 only */
	assert_int_equal(ana_symbols_resolve(s, 43, 0x7f0000001050ull, 0, 5, &o), 0);
	ana_symbols_free(s);
	tw_free(&t);
}

static void write_bytes(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
}

/* --symfs: by build-id (DIR/.build-id/11/2233...debug), overriding the
 * embedded table; by path (DIR/<path>) for an object the trace lacks. */
static void test_symfs(void **state)
{
	char dir[] = "/tmp/test_symbolize.XXXXXX", p[512], cmd[600];
	uint8_t bid[20];
	struct tsym emb[] = { { ELFIMG_VADDR + 0x100, 0x20, "embedded_name" } };
	struct tab_opts ob = { 0 };
	struct ana_symbols *s;
	struct ana_sym o;
	struct tw t;
	size_t len = 0;
	uint8_t *img = elfimg_build(1, 0, &len);

	(void)state;
	assert_non_null(img);
	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < 20; i++)
		bid[i] = (uint8_t)(0x11 * (i + 1));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/.build-id/11 %s/opt/x", dir, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(p, sizeof(p), "%s/.build-id/11/2233445566778899aabbccddeeff1021324354.debug",
		 dir);
	write_bytes(p, img, len);
	snprintf(p, sizeof(p), "%s/opt/x/libpath.so", dir);
	write_bytes(p, img, len);

	for (int with_symfs = 0; with_symfs < 2; with_symfs++) {
		tw_open(&t);
		ob.bid = bid;
		ob.bid_len = 20;
		ob.load_bias = ELFIMG_VADDR - ELFIMG_LOAD_OFF;
		symtab_pkt(&t, PERFREC__SYMBOL_TABLE__KIND__ELF, "/usr/lib/libsynth.so",
			   &ob, emb, 1);
		/* file offset 0x1000 maps at 0x7000000 (PT_LOAD: 0x1000 -> 0x10000) */
		mmap_pkt(&t, 5, 0x7000000, 0x1000, 0x1000, "/usr/lib/libsynth.so",
			 bid, 20, 1);
		mmap_pkt(&t, 5, 0x8000000, 0x1000, 0x1000, "/opt/x/libpath.so",
			 NULL, 0, 1);
		/* no build-id in the Mmap (the usual case), but in the table */
		symtab_pkt(&t, PERFREC__SYMBOL_TABLE__KIND__ELF, "/usr/bin/nobid-map",
			   &ob, NULL, 0);
		mmap_pkt(&t, 6, 0x9000000, 0x1000, 0x1000, "/usr/bin/nobid-map",
			 NULL, 0, 1);
		s = load(&t, with_symfs ? dir : NULL);
		ana_symbols_resolve(s, 5, 0x7000104, 0, 2, &o);
		assert_non_null(o.sym);
		assert_string_equal(o.sym, with_symfs ? "alpha" : "embedded_name");
		assert_int_equal(o.sym_off, 4);
		assert_int_equal(ana_symbols_resolve(s, 5, 0x8000201, 0, 2, &o),
				 with_symfs);
		if (with_symfs) {
			assert_string_equal(o.sym, "beta");
			assert_int_equal(o.dso_off, ELFIMG_VADDR + 0x201);
		}
		assert_int_equal(ana_symbols_resolve(s, 6, 0x9000101, 0, 2, &o),
				 with_symfs);
		if (with_symfs)
			assert_string_equal(o.sym, "alpha");
		ana_symbols_free(s);
		tw_free(&t);
	}
	assert_int_equal(ana_symbols_set_symfs(NULL, dir), -EINVAL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(img);
}

/* Damaged tables: parallel arrays of different lengths, missing names. */
static void test_damaged_tables(void **state)
{
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__SymbolTable st = PERFREC__SYMBOL_TABLE__INIT;
	uint64_t starts[3] = { 0x1000, 0x100, 0x100 }, sizes[2] = { 0x10, 0x10 };
	uint64_t names[3];
	struct ana_symbols *s;
	struct ana_sym o;
	struct tw t;

	(void)state;
	tw_open(&t);
	names[0] = prec_writer_intern_string(t.w, 0, "ok_one");
	names[1] = 9999;   /* never interned */
	names[2] = prec_writer_intern_string(t.w, 0, "dropped");
	st.kind = PERFREC__SYMBOL_TABLE__KIND__KERNEL;
	st.path = "[kernel.kallsyms]";
	st.n_starts = 3;
	st.starts = starts;
	st.n_sizes = 2;
	st.sizes = sizes;
	st.n_names = 3;
	st.names = names;
	pkt.data_case = PERFREC__PACKET__DATA_SYMBOLS;
	pkt.symbols = &st;
	put(&t, &pkt, 0);
	s = load(&t, NULL);
	assert_int_equal(ana_symbols_resolve(s, 1, 0x1008, 1, 0, &o), 1);
	assert_string_equal(o.sym, "ok_one");
	assert_int_equal(ana_symbols_resolve(s, 1, 0x1104, 1, 0, &o), 0);
	assert_int_equal(ana_symbols_resolve(s, 1, 0x1204, 1, 0, &o), 0);
	ana_symbols_free(s);
	tw_free(&t);
	/* resolve before finish: nothing, but no crash */
	s = ana_symbols_new();
	assert_int_equal(ana_symbols_resolve(s, 1, 0x1008, 1, 0, &o), 0);
	ana_symbols_free(s);
	ana_symbols_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_over_time),
		cmocka_unit_test(test_elf_tables),
		cmocka_unit_test(test_shared_files),
		cmocka_unit_test(test_kernel_and_perfmap),
		cmocka_unit_test(test_symfs),
		cmocka_unit_test(test_damaged_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
