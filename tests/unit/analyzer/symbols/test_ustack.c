/*
 * test_ustack.c - `--call-graph dwarf` analyzed offline from the trace
 * alone (analyzer/symbols/ustack.c, resolve.c, symbolize.c's unwind tables).
 *
 * The program of unwindprog.h (-O2 -fomit-frame-pointer: main ->
 * level_one -> level_two -> level_three -> libc qsort -> compare_cb)
 * snapshots its registers and stack inside the callback. From that
 * snapshot and the real ELF files a synthetic trace is written the way the
 * recorder will: Mmaps of the process, SymbolTables, UnwindTables (the
 * program's .eh_frame cut in pieces across frames), and samples carrying
 * the registers and the stack copy: user-mode ones, one taken in the
 * kernel (kernel callchain + the same user stack) and one whose copy is
 * cut short. The program is deleted before the analysis: names and stacks
 * come from the trace. perfrec-analyze report --children must name the
 * whole chain, the callback under libc's qsort_r, with the shares the
 * samples imply; the folded export must hold the chain in order.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/base/elf.h"
#include "format/sink.h"
#include "format/writer.h"
#include "lib/anatest.h"
#include "unit/unwindprog.h"

#define PID 4242
#define CTX_KERNEL ((uint64_t)-128)
#define K_ENTRY 0xffffffff81000000ull
#define K_LEAF 0xffffffff81000200ull
#define NFULL 10

static const char *dir;
/* write each object's UnwindTables before its SymbolTable, and the
 * SymbolTable without build-id (the symbolizer must still join them) */
static int unwind_first;

struct tw {
	struct prec_sink *sink;
	struct prec_writer *w;
	uint64_t t;
};

static void put(struct tw *t, uint32_t stream, Perfrec__Packet *pkt, uint64_t time)
{
	assert_int_equal(prec_writer_append(t->w, stream, pkt, time), 0);
}

/* The SymbolTable and UnwindTable of one ELF file (pieces of `piece`
 * bytes, a frame cut after each). */
static void object_tables(struct tw *t, const char *path, const uint8_t *bid, size_t bid_len,
			  size_t piece)
{
	size_t len = 0;
	uint8_t *buf = unwindprog_slurp(path, &len);
	struct prec_elf e;
	struct prec_cfi_sections cs;
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	uint64_t *starts, *sizes, *names, *lo, *lv, *ls;
	uint64_t prev = 0;

	assert_non_null(buf);
	assert_int_equal(prec_elf_parse(buf, len, &e), 0);
	starts = calloc(e.nsyms + 1, 8);
	sizes = calloc(e.nsyms + 1, 8);
	names = calloc(e.nsyms + 1, 8);
	lo = calloc(e.nsegs + 1, 8);
	lv = calloc(e.nsegs + 1, 8);
	ls = calloc(e.nsegs + 1, 8);
	for (size_t i = 0; i < e.nsyms; i++) {
		starts[i] = e.syms[i].start - prev;
		prev = e.syms[i].start;
		sizes[i] = e.syms[i].size;
		names[i] = prec_writer_intern_string(t->w, 0, e.syms[i].name);
	}
	for (size_t i = 0; i < e.nsegs; i++) {
		lo[i] = e.segs[i].offset;
		lv[i] = e.segs[i].vaddr;
		ls[i] = e.segs[i].filesz;
	}
	Perfrec__SymbolTable st = PERFREC__SYMBOL_TABLE__INIT;
	st.kind = PERFREC__SYMBOL_TABLE__KIND__ELF;
	st.path = (char *)path;
	st.build_id.data = (uint8_t *)bid;
	st.build_id.len = bid_len;
	st.n_starts = st.n_sizes = st.n_names = e.nsyms;
	st.starts = starts;
	st.sizes = sizes;
	st.names = names;
	st.load_bias = e.load_bias;
	st.n_load_offsets = st.n_load_vaddrs = st.n_load_sizes = e.nsegs;
	st.load_offsets = lo;
	st.load_vaddrs = lv;
	st.load_sizes = ls;
	if (unwind_first) {
		st.build_id.data = NULL;
		st.build_id.len = 0;
	} else {
		pkt.data_case = PERFREC__PACKET__DATA_SYMBOLS;
		pkt.symbols = &st;
		put(t, 0, &pkt, 0);
	}

	assert_int_equal(unwindprog_sections(buf, len, &cs), 0);
	assert_non_null(cs.eh_frame);
	for (size_t off = 0; off < cs.eh_frame_len; off += piece) {
		Perfrec__UnwindTable ut = PERFREC__UNWIND_TABLE__INIT;
		Perfrec__UnwindSection s0 = PERFREC__UNWIND_SECTION__INIT;
		Perfrec__UnwindSection s1 = PERFREC__UNWIND_SECTION__INIT;
		Perfrec__UnwindSection *sp[2] = { &s0, &s1 };
		s0.kind = PERFREC__UNWIND_SECTION__KIND__EH_FRAME;
		s0.addr = cs.eh_frame_addr;
		s0.size = cs.eh_frame_len;
		s0.offset = off;
		s0.data.data = (uint8_t *)cs.eh_frame + off;
		s0.data.len = cs.eh_frame_len - off < piece ? cs.eh_frame_len - off : piece;
		s1.kind = PERFREC__UNWIND_SECTION__KIND__EH_FRAME_HDR;
		s1.addr = cs.eh_frame_hdr_addr;
		s1.size = cs.eh_frame_hdr_len;
		s1.data.data = (uint8_t *)cs.eh_frame_hdr;
		s1.data.len = cs.eh_frame_hdr_len;
		ut.kind = PERFREC__UNWIND_TABLE__KIND__ELF;
		ut.path = (char *)path;
		ut.build_id.data = (uint8_t *)bid;
		ut.build_id.len = bid_len;
		ut.n_sections = off == 0 && cs.eh_frame_hdr ? 2 : 1;
		ut.sections = sp;
		ut.n_load_offsets = ut.n_load_vaddrs = ut.n_load_sizes = e.nsegs;
		ut.load_offsets = lo;
		ut.load_vaddrs = lv;
		ut.load_sizes = ls;
		pkt.data_case = PERFREC__PACKET__DATA_UNWIND;
		pkt.unwind = &ut;
		put(t, 0, &pkt, 0);
		assert_int_equal(prec_writer_flush(t->w), 0);
	}
	if (unwind_first) {
		/* the frames were cut: iids of the names must be made anew */
		for (size_t i = 0; i < e.nsyms; i++)
			names[i] = prec_writer_intern_string(t->w, 0, e.syms[i].name);
		pkt.data_case = PERFREC__PACKET__DATA_SYMBOLS;
		pkt.symbols = &st;
		put(t, 0, &pkt, 0);
	}
	free(starts);
	free(sizes);
	free(names);
	free(lo);
	free(lv);
	free(ls);
	prec_elf_release(&e);
	free(buf);
}

static void sample(struct tw *t, const struct unwindprog_snap *sn, size_t stack_len,
		   int in_kernel)
{
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__Sample s = PERFREC__SAMPLE__INIT;
	uint64_t chain[3] = { CTX_KERNEL, K_LEAF, K_ENTRY + 0x10 };

	s.id = 1;
	s.pid = s.tid = PID;
	s.period = 1000;
	s.misc = in_kernel ? 1 : 2;
	s.ip = in_kernel ? K_LEAF : sn->regs[3];   /* IP: perf bit 8, the 4th value */
	if (in_kernel) {
		s.callchain = prec_writer_intern_callchain(t->w, 1, chain, 3);
		assert_int_not_equal(s.callchain, 0);
	}
	s.regs_abi = 2;
	s.regs_mask = sn->mask;
	s.n_regs = 8;
	s.regs = (uint64_t *)sn->regs;
	s.stack.data = sn->stack;
	s.stack.len = stack_len;
	s.stack_dyn_size = stack_len;
	pkt.data_case = PERFREC__PACKET__DATA_SAMPLE;
	pkt.sample = &s;
	t->t += 1000000;
	put(t, 1, &pkt, t->t);
}

/* small: only the program's tables and two samples with 1 KiB of stack
 * (a fuzz seed, see test_dwarf_report) */
static void write_trace(const struct unwindprog_snap *sn, const char *out, int small)
{
	struct tw t = { prec_sink_mem_new(), NULL, 1000000000ull };
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	char *maps = strdup(sn->maps), *line, *save = NULL;
	char done[8][400];
	int ndone = 0;

	assert_non_null(t.sink);
	t.w = prec_writer_new(t.sink, &o);
	assert_non_null(t.w);
	{
		Perfrec__FileHeader h = PERFREC__FILE_HEADER__INIT;
		h.machine = "x86_64";
		h.start_time = t.t;
		pkt.data_case = PERFREC__PACKET__DATA_HEADER;
		pkt.header = &h;
		put(&t, 0, &pkt, 0);
	}
	{
		Perfrec__EventDesc ev = PERFREC__EVENT_DESC__INIT;
		uint64_t ids[1] = { 1 };
		ev.name = "cpu-clock";
		ev.type = 1;
		ev.sampling = 1;
		ev.n_ids = 1;
		ev.ids = ids;
		pkt.data_case = PERFREC__PACKET__DATA_EVENT;
		pkt.event = &ev;
		put(&t, 0, &pkt, 0);
	}
	{
		Perfrec__TaskEvent te = PERFREC__TASK_EVENT__INIT;
		te.kind = PERFREC__TASK_EVENT__KIND__EXISTING;
		te.pid = te.tid = PID;
		te.comm = prec_writer_intern_string(t.w, 1, "nofp");
		pkt.data_case = PERFREC__PACKET__DATA_TASK;
		pkt.task = &te;
		put(&t, 1, &pkt, t.t);
	}
	{
		static const uint64_t ks[2] = { K_ENTRY, K_LEAF - K_ENTRY }, kz[2] = { 0x100, 0x100 };
		uint64_t kn[2] = { prec_writer_intern_string(t.w, 0, "entry_SYSCALL_64"),
				   prec_writer_intern_string(t.w, 0, "do_kernel_thing") };
		Perfrec__SymbolTable st = PERFREC__SYMBOL_TABLE__INIT;
		st.kind = PERFREC__SYMBOL_TABLE__KIND__KERNEL;
		st.n_starts = st.n_sizes = st.n_names = 2;
		st.starts = (uint64_t *)ks;
		st.sizes = (uint64_t *)kz;
		st.names = kn;
		pkt.data_case = PERFREC__PACKET__DATA_SYMBOLS;
		pkt.symbols = &st;
		put(&t, 0, &pkt, 0);
	}
	/* every executable file mapping: an Mmap, its tables once */
	for (line = strtok_r(maps, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long lo, hi, off;
		char perms[8], path[400] = "";
		size_t blen = 0;
		uint8_t *b;
		struct prec_elf e;
		int seen = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %399s", &lo, &hi, perms, &off,
			   path) != 5 || path[0] != '/' || perms[2] != 'x')
			continue;
		b = unwindprog_slurp(path, &blen);
		assert_non_null(b);
		assert_int_equal(prec_elf_parse(b, blen, &e), 0);
		Perfrec__Mmap m = PERFREC__MMAP__INIT;
		m.pid = m.tid = PID;
		m.start = lo;
		m.len = hi - lo;
		m.pgoff = off;
		m.prot = 5;
		m.filename = prec_writer_intern_string(t.w, 1, path);
		m.build_id.data = e.build_id;
		m.build_id.len = e.build_id_len;
		m.synthesized = 1;
		pkt.data_case = PERFREC__PACKET__DATA_MMAP;
		pkt.mmap = &m;
		put(&t, 1, &pkt, t.t);
		for (int i = 0; i < ndone; i++)
			seen |= !strcmp(done[i], path);
		if (!seen && ndone < 8 && (!small || strstr(path, "nofp"))) {
			snprintf(done[ndone++], sizeof(done[0]), "%s", path);
			/* the program's .eh_frame in many small pieces */
			object_tables(&t, path, e.build_id, e.build_id_len,
				      strstr(path, "nofp") ? 100 : 1 << 20);
		}
		prec_elf_release(&e);
		free(b);
	}
	for (int i = 0; i < (small ? 1 : NFULL); i++)
		sample(&t, sn, small ? 1024 : (size_t)sn->len, 0);
	sample(&t, sn, (size_t)sn->len, 1);
	sample(&t, sn, 48, 0);   /* cut: compare_cb and a frame or two of libc */
	assert_int_equal(prec_writer_close(t.w), 0);
	{
		size_t n;
		const void *d = prec_sink_mem_data(t.sink, &n);
		assert_int_equal(anatest_write(out, d, n), 0);
	}
	prec_writer_free(t.w);
	prec_sink_free(t.sink);
	free(maps);
}

/* children and self % of a symbol in `report --children --csv -s sym` */
static int row_of(const char *csv, const char *sym, double *children, double *self)
{
	const char *p = csv;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		char line[1024], name[900];
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		unsigned long long samples, period;
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = 0;
		if (sscanf(line, "%lf,%lf,%llu,%llu,%899[^\n]", children, self, &samples, &period,
			   name) == 5 && !strcmp(name, sym))
			return 1;
		p = nl ? nl + 1 : NULL;
	}
	return 0;
}

static void test_dwarf_report(void **state)
{
	char trace[600], cmd[1200], *out = NULL, *err = NULL;
	struct unwindprog_snap sn;
	double ch, self;

	(void)state;
	assert_int_equal(unwindprog_sh("%s/nofp %s/snap.bin", dir, dir), 0);
	snprintf(trace, sizeof(trace), "%s/snap.bin", dir);
	assert_int_equal(unwindprog_snap_read(trace, &sn), 0);
	snprintf(trace, sizeof(trace), "%s/dwarf.prec", dir);
	write_trace(&sn, trace, 0);
	/* PERFREC_FUZZ_SEED_DIR=dir: also write a small trace there, the
	 * seed of fuzz_analyze and fuzz_symbolize that reaches unwinding */
	if (getenv("PERFREC_FUZZ_SEED_DIR")) {
		char seed[600];
		snprintf(seed, sizeof(seed), "%s/ustack.prec", getenv("PERFREC_FUZZ_SEED_DIR"));
		write_trace(&sn, seed, 1);
	}
	unwind_first = 1;
	snprintf(trace, sizeof(trace), "%s/dwarf2.prec", dir);
	write_trace(&sn, trace, 0);
	unwind_first = 0;
	/* offline: the binary is gone */
	assert_int_equal(unwindprog_sh("rm -f %s/nofp", dir), 0);

	snprintf(cmd, sizeof(cmd), "report dwarf.prec --children --csv -s sym --no-progress");
	assert_int_equal(anatest_run(dir, cmd, &out, NULL, &err), 0);
	print_message("%s%s", out, err);
	/* 12 samples: 10 user + 1 kernel unwind fully, 1 cut short */
	assert_true(row_of(out, "compare_cb", &ch, &self));
	assert_true(ch > 99.99);
	assert_true(self > 91.6 && self < 91.7);   /* 11 of 12: the user-mode ones */
	static const char *const chain[] = { "qsort_r", "level_three", "level_two", "level_one",
					     "main", "__libc_start_main", "_start" };
	for (size_t i = 0; i < sizeof(chain) / sizeof(chain[0]); i++) {
		if (!row_of(out, chain[i], &ch, &self))
			fail_msg("no row for %s", chain[i]);
		assert_true(ch > 91.6 && ch < 91.7);   /* 11 of 12 */
		assert_true(self < 0.01);
	}
	assert_true(row_of(out, "do_kernel_thing", &ch, &self));
	assert_true(self > 8.3 && self < 8.4);
	assert_true(row_of(out, "entry_SYSCALL_64", &ch, &self));
	assert_true(ch > 8.3 && ch < 8.4);
	free(out);
	free(err);

	/* the folded stacks hold the chain in order, root first */
	assert_int_equal(anatest_run(dir, "export dwarf.prec -f folded --no-progress", &out,
				     NULL, NULL), 0);
	print_message("%s", out);
	{
		const char *a = strstr(out, "nofp;_start;__libc_start_main;");
		assert_non_null(a);
		const char *m = strstr(a, ";main;level_one;level_two;level_three;qsort_r;");
		assert_non_null(m);
		const char *cb = strstr(m, ";compare_cb 10\n");
		assert_non_null(cb);
		assert_true(memchr(m, '\n', (size_t)(cb - m)) == NULL);
		/* the kernel sample: the user chain under the kernel frames */
		assert_non_null(strstr(out, ";level_three;qsort_r;"));
		assert_non_null(strstr(out, ";compare_cb;entry_SYSCALL_64;do_kernel_thing 1\n"));
	}
	free(out);

	/* unwind tables before symbols, symbols without build-id: the same */
	assert_int_equal(anatest_run(dir, "export dwarf2.prec -f folded --no-progress", &out,
				     NULL, NULL), 0);
	assert_non_null(strstr(out, ";main;level_one;level_two;level_three;qsort_r;"));
	assert_non_null(strstr(out, ";compare_cb 10\n"));
	free(out);

	/* with the system's debug files, libc's own frames get names
	 * (Debian's libc6-dbg: msort_with_tmp under qsort_r) */
	if (access("/usr/lib/debug/.build-id", R_OK) == 0) {
		assert_int_equal(anatest_run(dir, "export dwarf.prec -f folded --no-progress "
					     "--symfs /usr/lib/debug", &out, NULL, NULL), 0);
		print_message("%s", out);
		if (!strstr(out, "qsort_r;msort_with_tmp"))
			print_message("no libc debug file with msort_with_tmp: not checked\n");
		else
			assert_non_null(strstr(out, ";main;level_one;level_two;level_three;qsort_r;"
					       "msort_with_tmp"));
		free(out);
	}
	unwindprog_snap_free(&sn);
}

static int setup(void **state)
{
	(void)state;
	dir = anatest_tmpdir("test_ustack");
	if (!dir)
		return -1;
	return unwindprog_build(dir, "nofp.c", unwindprog_nofp_src, "cc -O2 -fomit-frame-pointer nofp.c -o nofp");
}

static int teardown(void **state)
{
	(void)state;
	unwindprog_sh("rm -rf %s", dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dwarf_report),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
