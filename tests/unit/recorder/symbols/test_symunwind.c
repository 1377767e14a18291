/*
 * test_symunwind.c - user stacks unwound at record time by the symbol
 * gatherer (recorder/symbols/symunwind.c) and the unwind tables it
 * writes for stacks kept raw (symwrite.c).
 *
 * The program of unwindprog.h (-O2 -fomit-frame-pointer: main ->
 * level_one -> level_two -> level_three -> libc qsort -> compare_cb)
 * snapshots its registers, stack and /proc/self/maps inside the callback.
 * The gatherer gets those mappings and unwinds the snapshot with the CFI
 * it reads from the files; the addresses it finds must name the whole
 * chain once its SymbolTables are read back (the analyzer's symbolizer),
 * in order, down to _start. With raw stacks, the objects the unwind went
 * through get UnwindTable packets holding their sections byte for byte,
 * once per output (again after rec_symgather_restart()); an object whose
 * file is gone gets an UNAVAILABLE one. Also: the sample wrapper (stack
 * prefix to keep), bad arguments, the ELF CFI reader on .eh_frame and on a
 * compressed .debug_frame.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/base/elf.h"
#include "analyzer/symbols/symbolize.h"
#include "format/reader.h"
#include "format/sink.h"
#include "format/writer.h"
#include "recorder/encode/decode.h"
#include "recorder/symbols/elfcfi.h"
#include "recorder/symbols/symgather.h"
#include "unit/unwindprog.h"

#define PID 4242

static char dir[256];
static struct unwindprog_snap sn;

/* ---- the snapshot's mappings */

struct map {
	uint64_t start, end, pgoff;
	char path[400];
};

static struct map maps[256];
static size_t nmaps;

static void parse_maps(const char *text)
{
	char *copy = strdup(text), *save = NULL;

	assert_non_null(copy);
	nmaps = 0;
	for (char *l = strtok_r(copy, "\n", &save); l && nmaps < 256; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long lo, hi, off;
		char perms[8];
		struct map *m = &maps[nmaps];

		m->path[0] = 0;
		if (sscanf(l, "%llx-%llx %7s %llx %*s %*s %399s", &lo, &hi, perms, &off,
			   m->path) != 5 || m->path[0] != '/' || perms[2] != 'x')
			continue;
		m->start = lo;
		m->end = hi;
		m->pgoff = off;
		nmaps++;
	}
	free(copy);
}

static struct rec_symgather *new_sc(void)
{
	struct rec_symgather_opts o = REC_SYMGATHER_OPTS_INIT;
	struct rec_symgather *sc;

	o.kernel = 0;
	o.perf_maps = 0;
	o.proc_maps = "";   /* only the snapshot's mappings */
	o.debug_dir = "";
	o.proc_root = 0;    /* PID is not a live process */
	o.machine = "x86_64";
	sc = rec_symgather_new(&o);
	assert_non_null(sc);
	for (size_t i = 0; i < nmaps; i++) {
		struct rec_symgather_map m = { 0 };

		m.pid = PID;
		m.start = maps[i].start;
		m.len = maps[i].end - maps[i].start;
		m.pgoff = maps[i].pgoff;
		m.path = maps[i].path;
		assert_int_equal(rec_symgather_add_mmap(sc, &m), 0);
	}
	return sc;
}

static int unwind(struct rec_symgather *sc, int raw, uint64_t *ips, size_t max,
		  struct prec_unwind_result *res)
{
	struct prec_unwind_regs r = { PREC_PERF_REGS_ABI_64, sn.mask, sn.regs, 8 };
	struct prec_unwind_stack st = { sn.start, sn.stack, (size_t)sn.len };

	return rec_symgather_unwind(sc, PID, &r, &st, raw, ips, max, res);
}

/* ---- a trace in memory, read back */

struct trace {
	struct prec_sink *sink;
	struct prec_writer *w;
};

static void trace_open(struct trace *t)
{
	t->sink = prec_sink_mem_new();
	assert_non_null(t->sink);
	t->w = prec_writer_new(t->sink, NULL);
	assert_non_null(t->w);
	/* the analyzer places addresses through Mmap packets */
	for (size_t i = 0; i < nmaps; i++) {
		Perfrec__Packet pkt = PERFREC__PACKET__INIT;
		Perfrec__Mmap mm = PERFREC__MMAP__INIT;

		mm.pid = PID;
		mm.start = maps[i].start;
		mm.len = maps[i].end - maps[i].start;
		mm.pgoff = maps[i].pgoff;
		mm.filename = prec_writer_intern_string(t->w, 0, maps[i].path);
		pkt.data_case = PERFREC__PACKET__DATA_MMAP;
		pkt.mmap = &mm;
		assert_int_equal(prec_writer_append(t->w, 0, &pkt, 1), 0);
	}
}

static void trace_free(struct trace *t)
{
	prec_writer_free(t->w);
	prec_sink_free(t->sink);
}

/* What came back: UnwindTables reassembled per path and kind. */
struct utab {
	char path[400];
	int kind;               /* UnwindTable.Kind */
	char reason[200];
	uint8_t *sec[3];
	uint64_t size[3], addr[3], got[3];
	size_t nsegs, packets;
};

static struct utab utabs[16];
static size_t nutabs;

static struct utab *utab_get(const char *path)
{
	for (size_t i = 0; i < nutabs; i++)
		if (strcmp(utabs[i].path, path) == 0)
			return &utabs[i];
	return NULL;
}

static void utabs_free(void)
{
	for (size_t i = 0; i < nutabs; i++)
		for (int k = 0; k < 3; k++)
			free(utabs[i].sec[k]);
	nutabs = 0;
}

static struct ana_symbols *read_back(struct trace *t)
{
	struct ana_symbols *as = ana_symbols_new();
	struct prec_reader *r;
	struct prec_packet p;
	const void *buf;
	size_t len = 0;
	int ret;

	assert_int_equal(prec_writer_close(t->w), 0);
	assert_non_null(as);
	utabs_free();
	buf = prec_sink_mem_data(t->sink, &len);
	r = prec_reader_open_mem(buf, len, NULL);
	assert_non_null(r);
	while ((ret = prec_reader_next_packet(r, &p)) > 0) {
		const Perfrec__UnwindTable *u;
		struct utab *ut;

		assert_int_equal(ana_symbols_add(as, &p), 0);
		if (p.pkt->data_case != PERFREC__PACKET__DATA_UNWIND)
			continue;
		u = p.pkt->unwind;
		ut = utab_get(u->path);
		if (!ut) {
			assert_true(nutabs < 16);
			ut = &utabs[nutabs++];
			memset(ut, 0, sizeof(*ut));
			snprintf(ut->path, sizeof(ut->path), "%s", u->path);
			ut->kind = u->kind;
			snprintf(ut->reason, sizeof(ut->reason), "%s", u->reason ? u->reason : "");
		}
		ut->packets++;
		ut->nsegs += u->n_load_offsets;
		for (size_t i = 0; i < u->n_sections; i++) {
			const Perfrec__UnwindSection *s = u->sections[i];
			int k = s->kind;

			assert_true(k >= 0 && k < 3);
			if (!ut->sec[k]) {
				ut->sec[k] = calloc(1, s->size);
				ut->size[k] = s->size;
				ut->addr[k] = s->addr;
			}
			assert_int_equal(ut->size[k], s->size);
			assert_true(s->offset + s->data.len <= s->size);
			memcpy(ut->sec[k] + s->offset, s->data.data, s->data.len);
			ut->got[k] += s->data.len;
		}
	}
	assert_int_equal(ret, 0);
	prec_reader_free(r);
	assert_int_equal(ana_symbols_finish(as), 0);
	return as;
}

/* The name of address ips[i] (callers looked up at the call). */
static const char *name_of(struct ana_symbols *as, const uint64_t *ips, size_t i,
			   char *buf, size_t len)
{
	struct ana_sym out;
	uint64_t ip = i ? ips[i] - 1 : ips[i];

	if (ana_symbols_resolve(as, PID, ip, 0, 10, &out) != 1 || !out.sym)
		snprintf(buf, len, "0x%llx", (unsigned long long)ips[i]);
	else
		snprintf(buf, len, "%s", out.sym);
	return buf;
}

/* The file's section `name` equals what the trace carried. */
static void check_section(const char *path, const char *name, const struct utab *ut, int k)
{
	size_t len = 0;
	uint8_t *b = unwindprog_slurp(path, &len);
	struct prec_elf_section s;

	assert_non_null(b);
	assert_int_equal(prec_elf_find_section(b, len, name, &s), 0);
	assert_non_null(ut->sec[k]);
	assert_int_equal(ut->size[k], s.size);
	assert_int_equal(ut->got[k], s.size);
	assert_int_equal(ut->addr[k], s.addr);
	assert_memory_equal(ut->sec[k], s.data, (size_t)s.size);
	free(b);
}

/* ---- tests */

static void test_unwind_names_the_chain(void **state)
{
	static const char *const chain[] = {
		"compare_cb", "qsort_r", "level_three", "level_two", "level_one", "main", "_start",
	};
	struct rec_symgather *sc = new_sc();
	struct rec_symgather_stats st;
	struct prec_unwind_result res;
	struct ana_symbols *as;
	struct trace t;
	uint64_t ips[64];
	char buf[128];
	size_t at = 0;
	int n;

	(void)state;
	n = unwind(sc, 0, ips, 64, &res);
	assert_true(n >= 8);
	assert_int_equal(res.stop, PREC_UNWIND_STOP_OUTERMOST);
	assert_int_equal(res.fp_steps, 0);
	assert_true(res.stack_used > 0 && res.stack_used <= sn.len);
	assert_int_equal(ips[0], sn.regs[3]);   /* the pc */
	rec_symgather_stats(sc, &st);
	assert_true(st.unwind_objects >= 2);    /* the program and libc */
	assert_int_equal(st.unwind_unavailable, 0);
	assert_true(st.unwind_held > 1000);

	/* the symbols of every address went out as hits */
	trace_open(&t);
	assert_true(rec_symgather_write(sc, t.w, 0, 5) > 0);
	as = read_back(&t);
	assert_int_equal(nutabs, 0);            /* nothing kept raw */
	for (int i = 0; i < n; i++)
		print_message("  #%d %s\n", i, name_of(as, ips, (size_t)i, buf, sizeof(buf)));
	for (size_t c = 0; c < sizeof(chain) / sizeof(chain[0]); c++) {
		while (at < (size_t)n && !strstr(name_of(as, ips, at, buf, sizeof(buf)), chain[c]))
			at++;
		if (at == (size_t)n)
			fail_msg("%s missing from the unwound chain (or out of order)", chain[c]);
	}
	ana_symbols_free(as);
	trace_free(&t);
	rec_symgather_free(sc);
}

static void test_raw_writes_unwind_tables(void **state)
{
	struct rec_symgather *sc = new_sc();
	struct rec_symgather_stats st;
	struct prec_unwind_result res;
	struct ana_symbols *as;
	struct trace t;
	uint64_t ips[64];
	char prog[400], libc[400] = "";
	struct utab *ut;

	(void)state;
	snprintf(prog, sizeof(prog), "%s/nofp", dir);
	for (size_t i = 0; i < nmaps; i++)
		if (strstr(maps[i].path, "/libc.so"))
			snprintf(libc, sizeof(libc), "%s", maps[i].path);
	assert_true(libc[0]);
	assert_true(unwind(sc, 1, ips, 64, &res) >= 8);
	trace_open(&t);
	assert_true(rec_symgather_write(sc, t.w, 0, 5) > 0);
	/* once per output */
	assert_true(unwind(sc, 1, ips, 64, &res) >= 8);
	assert_int_equal(rec_symgather_write(sc, t.w, 0, 6), 0);
	as = read_back(&t);
	/* the program and libc, nothing the stack did not go through */
	assert_int_equal(nutabs, 2);
	ut = utab_get(prog);
	assert_non_null(ut);
	assert_int_equal(ut->kind, PERFREC__UNWIND_TABLE__KIND__ELF);
	assert_true(ut->nsegs >= 2);
	check_section(prog, ".eh_frame", ut, 0);
	check_section(prog, ".eh_frame_hdr", ut, 1);
	ut = utab_get(libc);
	assert_non_null(ut);
	check_section(libc, ".eh_frame", ut, 0);
	check_section(libc, ".eh_frame_hdr", ut, 1);
	assert_null(ut->sec[2]);
	rec_symgather_stats(sc, &st);
	assert_int_equal(st.unwind_tables, utabs[0].packets + utabs[1].packets);
	assert_true(st.unwind_bytes > ut->size[0]);
	ana_symbols_free(as);
	trace_free(&t);

	/* a new output carries them again */
	rec_symgather_restart(sc);
	trace_open(&t);
	assert_int_equal(rec_symgather_write(sc, t.w, 0, 7), 0);
	assert_true(unwind(sc, 1, ips, 64, &res) >= 8);
	assert_true(rec_symgather_write(sc, t.w, 0, 8) > 0);
	as = read_back(&t);
	assert_int_equal(nutabs, 2);
	ana_symbols_free(as);
	trace_free(&t);
	rec_symgather_free(sc);
}

/* The program's file gone before the first unwind through it: no CFI
 * (frame pointers cannot help -fomit-frame-pointer code), and the raw
 * stack's table says why. */
static void test_unreadable_object(void **state)
{
	struct rec_symgather *sc;
	struct rec_symgather_stats st;
	struct prec_unwind_result res;
	struct ana_symbols *as;
	struct trace t;
	uint64_t ips[64];
	char prog[400], moved[420];
	struct utab *ut;
	int n;

	(void)state;
	snprintf(prog, sizeof(prog), "%s/nofp", dir);
	snprintf(moved, sizeof(moved), "%s/nofp.moved", dir);
	assert_int_equal(rename(prog, moved), 0);
	sc = new_sc();
	n = unwind(sc, 1, ips, 64, &res);
	assert_int_equal(rename(moved, prog), 0);
	assert_true(n >= 1 && n < 8);
	rec_symgather_stats(sc, &st);
	assert_int_equal(st.unwind_unavailable, 1);
	trace_open(&t);
	assert_true(rec_symgather_write(sc, t.w, 0, 5) > 0);
	as = read_back(&t);
	ut = utab_get(prog);
	assert_non_null(ut);
	assert_int_equal(ut->kind, PERFREC__UNWIND_TABLE__KIND__UNAVAILABLE);
	assert_non_null(strstr(ut->reason, "No such file"));
	ana_symbols_free(as);
	trace_free(&t);
	rec_symgather_free(sc);
}

/* The emitter's callback on a decoded sample: the stack prefix the
 * unwind read is what a raw sample keeps. */
static void test_unwind_sample(void **state)
{
	struct rec_symgather *sc = new_sc();
	struct rec_record r;
	uint64_t ips[64], full[64];
	struct prec_unwind_result res;
	size_t keep = 0;
	int stop = -1, n;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_SAMPLE;
	r.misc = PERF_RECORD_MISC_USER;
	r.sid.pid = r.sid.tid = PID;
	r.sample.regs_abi = PREC_PERF_REGS_ABI_64;
	r.sample.regs_mask = sn.mask;
	r.sample.regs = sn.regs;
	r.sample.nregs = 8;
	r.sample.stack = sn.stack;
	r.sample.stack_size = r.sample.stack_dyn = sn.len;
	n = rec_symgather_unwind_sample(sc, &r, 1, ips, 64, &keep, &stop);
	assert_true(n >= 8);
	assert_int_equal(stop, PREC_UNWIND_STOP_OUTERMOST);
	assert_true(keep > 0 && keep < sn.len);
	/* that prefix unwinds the same */
	{
		struct prec_unwind_regs rg = { PREC_PERF_REGS_ABI_64, sn.mask, sn.regs, 8 };
		struct prec_unwind_stack st = { sn.start, sn.stack, keep };

		assert_int_equal(rec_symgather_unwind(sc, PID, &rg, &st, 0, full, 64, &res), n);
		assert_memory_equal(full, ips, (size_t)n * 8);
		assert_int_equal(res.stop, PREC_UNWIND_STOP_OUTERMOST);
	}
	/* cut inside the chain: it ends there and keeps all of it */
	r.sample.stack_dyn = 64;
	n = rec_symgather_unwind_sample(sc, &r, 1, ips, 64, &keep, &stop);
	assert_true(n >= 1 && n < 8);
	assert_int_equal(stop, PREC_UNWIND_STOP_END_OF_STACK);
	assert_int_equal(keep, 64);
	/* no registers, a guest sample: nothing */
	r.sample.stack_dyn = sn.len;
	r.misc = PERF_RECORD_MISC_GUEST_USER;
	assert_int_equal(rec_symgather_unwind_sample(sc, &r, 0, ips, 64, &keep, &stop), 0);
	r.misc = PERF_RECORD_MISC_USER;
	r.sample.regs_mask = 1;   /* no sp */
	r.sample.nregs = 1;
	assert_int_equal(rec_symgather_unwind_sample(sc, &r, 0, ips, 64, &keep, &stop), 0);
	assert_int_equal(stop, PREC_UNWIND_STOP_NO_REGS);
	assert_int_equal(rec_symgather_unwind(NULL, PID, NULL, NULL, 0, ips, 64, &res), -EINVAL);
	rec_symgather_free(sc);
}

/* An unknown machine: nothing is unwound, nothing fails. */
static void test_no_arch(void **state)
{
	struct rec_symgather_opts o = REC_SYMGATHER_OPTS_INIT;
	struct rec_symgather *sc;
	struct prec_unwind_result res;
	uint64_t ips[8];

	(void)state;
	o.kernel = 0;
	o.proc_maps = "";
	o.machine = "pdp11";
	sc = rec_symgather_new(&o);
	assert_non_null(sc);
	assert_int_equal(unwind(sc, 0, ips, 8, &res), 0);
	assert_int_equal(res.stop, PREC_UNWIND_STOP_NO_REGS);
	rec_symgather_free(sc);
}

/* The ELF reader: .eh_frame + hdr of a program; .debug_frame alone
 * (compressed) of one built without unwind tables; bad files. */
static void test_elf_cfi_reader(void **state)
{
	struct rec_elfcfi c;
	char path[400];
	size_t len = 0;
	uint8_t *b;
	struct prec_elf_section s;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/nofp", dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(rec_elfcfi_read_fd(fd, &c), 0);
	close(fd);
	b = unwindprog_slurp(path, &len);
	assert_non_null(b);
	assert_int_equal(prec_elf_find_section(b, len, ".eh_frame", &s), 0);
	assert_int_equal(c.eh_frame.len, s.size);
	assert_int_equal(c.eh_frame.addr, s.addr);
	assert_memory_equal(c.eh_frame.data, s.data, (size_t)s.size);
	assert_non_null(c.eh_frame_hdr.data);
	assert_null(c.debug_frame.data);
	assert_true(c.nsegs >= 2);
	assert_true(c.build_id_len == 20);
	/* the same from memory */
	{
		struct rec_elfcfi m;

		assert_int_equal(rec_elfcfi_read_mem(b, len, &m), 0);
		assert_int_equal(m.eh_frame.len, c.eh_frame.len);
		assert_memory_equal(m.eh_frame.data, c.eh_frame.data, c.eh_frame.len);
		rec_elfcfi_release(&m);
		/* truncated: refused, not read past */
		assert_true(rec_elfcfi_read_mem(b, len / 2, &m) < 0);
		assert_true(rec_elfcfi_read_mem(b, 100, &m) < 0);
		assert_int_equal(rec_elfcfi_read_mem("not an elf file", 15, &m), -EINVAL);
	}
	rec_elfcfi_release(&c);
	free(b);

	/* no .eh_frame: the .debug_frame, inflated */
	if (unwindprog_sh("cd %s && cc -O2 -g -gz=zlib -fno-asynchronous-unwind-tables "
			  "-fno-unwind-tables -c -o dbg.o nofp.c 2>/dev/null && "
			  "objcopy --decompress-debug-sections dbg.o dbg-plain.o", dir) != 0) {
		print_message("no compressed debug sections here: part skipped\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/dbg.o", dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(rec_elfcfi_read_fd(fd, &c), 0);
	close(fd);
	assert_null(c.eh_frame.data);
	assert_non_null(c.debug_frame.data);
	snprintf(path, sizeof(path), "%s/dbg-plain.o", dir);
	b = unwindprog_slurp(path, &len);
	assert_non_null(b);
	assert_int_equal(prec_elf_find_section(b, len, ".debug_frame", &s), 0);
	assert_int_equal(c.debug_frame.len, s.size);
	assert_memory_equal(c.debug_frame.data, s.data, (size_t)s.size);
	rec_elfcfi_release(&c);
	free(b);
}

static int setup(void **state)
{
	char snap[300];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_symunwind.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	if (unwindprog_build(dir, "nofp.c", unwindprog_nofp_src,
			     "cc -O2 -fomit-frame-pointer nofp.c -o nofp"))
		return -1;
	if (unwindprog_sh("%s/nofp %s/snap.bin", dir, dir))
		return -1;
	snprintf(snap, sizeof(snap), "%s/snap.bin", dir);
	if (unwindprog_snap_read(snap, &sn))
		return -1;
	parse_maps(sn.maps);
	return nmaps ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	utabs_free();
	unwindprog_snap_free(&sn);
	unwindprog_sh("rm -rf %s", dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unwind_names_the_chain),
		cmocka_unit_test(test_raw_writes_unwind_tables),
		cmocka_unit_test(test_unreadable_object),
		cmocka_unit_test(test_unwind_sample),
		cmocka_unit_test(test_no_arch),
		cmocka_unit_test(test_elf_cfi_reader),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
