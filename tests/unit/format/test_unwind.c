/*
 * test_unwind.c - format/unwind/unwind.c and the CFI interpreter on real
 * and synthetic stacks.
 *
 * Real: unwindprog.h's nofp program (-O2 -fomit-frame-pointer) snapshots
 * its registers and stack inside a qsort callback; the unwinder, given the
 * CFI of the program and libc from the files its /proc/self/maps names,
 * must walk compare_cb <- libc's qsort <- level_three <- level_two <-
 * level_one <- main <- libc <- _start and stop at _start's undefined
 * return address. Names come from the objects' symbol tables (the
 * oracle: nm agrees with format/base/elf, test_elf.c).
 *
 * Synthetic: hand-assembled CIEs/FDEs for the instructions compilers
 * rarely emit (remember/restore, expressions, val_offset, register rules,
 * set_loc, DWARF 4 .debug_frame CIEs, 64-bit lengths, "zPLR" with aligned
 * and indirect encodings), the expression evaluator's limits, and the
 * unwinder's stops: frame-pointer fallback, cycles, end of the copy, no
 * registers, max frames, a lookup error.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "format/base/elf.h"
#include "format/error.h"
#include "format/unwind/cfi.h"
#include "format/unwind/unwind.h"
#include "unit/unwindprog.h"

static char dir[256];

/* ---- the real stack */

struct object {
	char path[400];
	uint8_t *buf;
	size_t len;
	struct prec_elf elf;
	struct prec_cfi_sections s;
	struct prec_cfi_table *t;
};

struct mapping {
	uint64_t lo, hi, pgoff;
	struct object *o;
};

struct space {
	struct object objs[16];
	size_t nobjs;
	struct mapping maps[64];
	size_t nmaps;
	int lookups;
};

static struct object *object_get(struct space *sp, const char *path)
{
	struct object *o;

	for (size_t i = 0; i < sp->nobjs; i++)
		if (!strcmp(sp->objs[i].path, path))
			return &sp->objs[i];
	assert_true(sp->nobjs < 16);
	o = &sp->objs[sp->nobjs++];
	snprintf(o->path, sizeof(o->path), "%s", path);
	o->buf = unwindprog_slurp(path, &o->len);
	assert_non_null(o->buf);
	assert_int_equal(prec_elf_parse(o->buf, o->len, &o->elf), 0);
	if (unwindprog_sections(o->buf, o->len, &o->s) == 0) {
		o->t = prec_cfi_table_new(&o->s);
		assert_non_null(o->t);
	}
	return o;
}

static void space_load(struct space *sp, const char *maps)
{
	char *copy = strdup(maps), *line, *save = NULL;

	memset(sp, 0, sizeof(*sp));
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long lo, hi, off;
		char perms[8], path[400] = "";
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %399s", &lo, &hi, perms, &off,
			   path) != 5 || path[0] != '/' || perms[2] != 'x')
			continue;
		assert_true(sp->nmaps < 64);
		sp->maps[sp->nmaps].lo = lo;
		sp->maps[sp->nmaps].hi = hi;
		sp->maps[sp->nmaps].pgoff = off;
		sp->maps[sp->nmaps].o = object_get(sp, path);
		sp->nmaps++;
	}
	free(copy);
}

static void space_free(struct space *sp)
{
	for (size_t i = 0; i < sp->nobjs; i++) {
		prec_cfi_table_free(sp->objs[i].t);
		prec_elf_release(&sp->objs[i].elf);
		free(sp->objs[i].buf);
	}
}

static const struct mapping *map_of(const struct space *sp, uint64_t pc)
{
	for (size_t i = 0; i < sp->nmaps; i++)
		if (pc >= sp->maps[i].lo && pc < sp->maps[i].hi)
			return &sp->maps[i];
	return NULL;
}

static uint64_t vaddr_of(const struct mapping *m, uint64_t pc)
{
	uint64_t off = pc - m->lo + m->pgoff;

	for (size_t i = 0; i < m->o->elf.nsegs; i++) {
		const struct prec_elf_seg *g = &m->o->elf.segs[i];
		if (off >= g->offset && off - g->offset < g->filesz)
			return off - g->offset + g->vaddr;
	}
	return off + m->o->elf.load_bias;
}

static int find_cb(void *ctx, uint64_t pc, const struct prec_cfi_table **t, uint64_t *bias)
{
	struct space *sp = ctx;
	const struct mapping *m = map_of(sp, pc);

	sp->lookups++;
	if (!m || !m->o->t)
		return 0;
	*t = m->o->t;
	*bias = pc - vaddr_of(m, pc);
	return 1;
}

static const char *name_of(const struct space *sp, uint64_t ip, const char **dso)
{
	const struct mapping *m = map_of(sp, ip);
	uint64_t va;

	*dso = m ? m->o->path : "?";
	if (!m)
		return "?";
	va = vaddr_of(m, ip);
	for (size_t i = 0; i < m->o->elf.nsyms; i++) {
		const struct prec_elf_sym *s = &m->o->elf.syms[i];
		if (va >= s->start && va - s->start < (s->size ? s->size : 1))
			return s->name;
	}
	return "?";
}

static void test_real_stack(void **state)
{
	char p[600];
	struct unwindprog_snap sn;
	struct space sp;
	struct prec_unwind_opts o = PREC_UNWIND_OPTS_INIT;
	struct prec_unwind_regs r;
	struct prec_unwind_stack st;
	struct prec_unwind_result res;
	uint64_t ips[64];
	const char *names[64], *dsos[64];
	int n, at;

	(void)state;
	snprintf(p, sizeof(p), "%s/nofp %s/snap.bin", dir, dir);
	assert_int_equal(unwindprog_sh("%s", p), 0);
	snprintf(p, sizeof(p), "%s/snap.bin", dir);
	assert_int_equal(unwindprog_snap_read(p, &sn), 0);
	space_load(&sp, sn.maps);
	o.find = find_cb;
	o.ctx = &sp;
	o.no_fp = 1;   /* CFI alone must do it */
	r.abi = PREC_PERF_REGS_ABI_64;
	r.mask = sn.mask;
	r.values = sn.regs;
	r.n = 8;
	st.start = sn.start;
	st.bytes = sn.stack;
	st.len = (size_t)sn.len;
	n = prec_unwind(&o, &r, &st, ips, 64, &res);
	for (int i = 0; i < n; i++) {
		names[i] = name_of(&sp, i ? ips[i] - 1 : ips[i], &dsos[i]);
		print_message("  #%d %016llx %s (%s)\n", i, (unsigned long long)ips[i], names[i],
			      dsos[i]);
	}
	print_message("  stop: %s (%s), %d frames\n", prec_unwind_stop_name(res.stop),
		      prec_strerror(res.err), n);
	assert_true(n >= 8);
	assert_string_equal(names[0], "compare_cb");
	/* libc's qsort (and its internal msort recursion) calls back */
	at = 1;
	assert_non_null(strstr(dsos[at], "libc.so"));
	while (at < n && strstr(dsos[at], "libc.so"))
		at++;
	assert_true(at + 4 <= n);
	assert_string_equal(names[at], "level_three");
	assert_string_equal(names[at + 1], "level_two");
	assert_string_equal(names[at + 2], "level_one");
	assert_string_equal(names[at + 3], "main");
	assert_string_equal(names[n - 1], "_start");
	assert_int_equal(res.stop, PREC_UNWIND_STOP_OUTERMOST);
	assert_int_equal(res.fp_steps, 0);

	/* What an unwind costs (printed, not checked): the recorder's part 2
	 * weighs unwinding at record time against writing the stack. */
	{
		struct timespec t0, t1;
		uint64_t ipsb[64];
		struct prec_unwind_result rb;
		int rounds = 20000;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < rounds; i++)
			prec_unwind(&o, &r, &st, ipsb, 64, &rb);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
			     (double)(t1.tv_nsec - t0.tv_nsec)) / rounds;
		print_message("  cost: %.0f ns per unwind of %d frames (%.0f ns/frame, "
			      "lookups by a linear map scan)\n", ns, n, ns / n);
		/* with a row cache: the same chain, the CFI interpreted once */
		struct prec_unwind_cache *cache = prec_unwind_cache_new(1024);
		struct prec_unwind_opts oc = o;
		uint64_t hits, misses;
		assert_non_null(cache);
		oc.cache = cache;
		uint64_t h1 = 0, m1 = 0;
		for (int pass = 0; pass < 2; pass++) {
			assert_int_equal(prec_unwind(&oc, &r, &st, ipsb, 64, &rb), n);
			assert_memory_equal(ipsb, ips, (size_t)n * 8);
			assert_int_equal(rb.stop, res.stop);
			assert_int_equal(rb.stack_used, res.stack_used);
			prec_unwind_cache_stats(cache, &hits, &misses);
			if (!pass) {
				/* one lookup per frame (_start's says it is
				 * the outermost); msort's recursion repeats
				 * return addresses */
				assert_int_equal(hits + misses, (uint64_t)n);
				h1 = hits;
				m1 = misses;
			}
		}
		assert_int_equal(misses, m1);   /* warm: all from the cache */
		assert_int_equal(hits - h1, (uint64_t)n);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < rounds; i++)
			prec_unwind(&oc, &r, &st, ipsb, 64, &rb);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
		      (double)(t1.tv_nsec - t0.tv_nsec)) / rounds;
		print_message("  cost with a row cache: %.0f ns per unwind (%.0f ns/frame)\n",
			      ns, ns / n);
		prec_unwind_cache_clear(cache);
		prec_unwind_cache_stats(cache, &hits, &misses);
		assert_int_equal(prec_unwind(&oc, &r, &st, ipsb, 64, &rb), n);
		prec_unwind_cache_free(cache);
		assert_null(prec_unwind_cache_new(0));
		prec_unwind_cache_free(NULL);
	}
	/* A copy cut short stops cleanly at its end, with a prefix of the
	 * same chain. */
	{
		uint64_t ips2[64];
		struct prec_unwind_result res2;
		st.len = 256;
		int n2 = prec_unwind(&o, &r, &st, ips2, 64, &res2);
		assert_true(n2 >= 2 && n2 < n);
		assert_memory_equal(ips, ips2, (size_t)n2 * sizeof(ips[0]));
		assert_int_equal(res2.stop, PREC_UNWIND_STOP_END_OF_STACK);
		st.len = (size_t)sn.len;
	}
	/* max frames */
	{
		uint64_t ips3[3];
		struct prec_unwind_result res3;
		assert_int_equal(prec_unwind(&o, &r, &st, ips3, 3, &res3), 3);
		assert_int_equal(res3.stop, PREC_UNWIND_STOP_MAX);
		assert_memory_equal(ips, ips3, sizeof(ips3));
	}
	/* bit flips anywhere in the copy: any result, no crash (ASan) */
	{
		uint8_t *keep = malloc(st.len);
		memcpy(keep, sn.stack, st.len);
		srand(7);
		for (int it = 0; it < 2000; it++) {
			uint64_t ips4[64];
			struct prec_unwind_result res4;
			memcpy(sn.stack, keep, st.len);
			for (int k = 0; k < 4; k++)
				sn.stack[(size_t)rand() % st.len] = (uint8_t)rand();
			o.no_fp = it & 1;
			assert_true(prec_unwind(&o, &r, &st, ips4, 64, &res4) >= 1);
		}
		memcpy(sn.stack, keep, st.len);
		free(keep);
	}
	space_free(&sp);
	unwindprog_snap_free(&sn);
}

/* ---- synthetic CFI */

struct asmb {
	uint8_t b[4096];
	size_t n;
};

static void put(struct asmb *a, const void *p, size_t n)
{
	assert_true(a->n + n <= sizeof(a->b));
	if (n)
		memcpy(a->b + a->n, p, n);
	a->n += n;
}

static void u8(struct asmb *a, unsigned v)
{
	uint8_t x = (uint8_t)v;
	put(a, &x, 1);
}

static void u32(struct asmb *a, uint32_t v)
{
	put(a, &v, 4);
}

static void u64v(struct asmb *a, uint64_t v)
{
	put(a, &v, 8);
}

static void uleb(struct asmb *a, uint64_t v)
{
	do {
		uint8_t x = v & 0x7f;
		v >>= 7;
		if (v)
			x |= 0x80;
		u8(a, x);
	} while (v);
}

static void sleb(struct asmb *a, int64_t v)
{
	for (;;) {
		uint8_t x = v & 0x7f;
		v >>= 7;
		if ((v == 0 && !(x & 0x40)) || (v == -1 && (x & 0x40))) {
			u8(a, x);
			return;
		}
		u8(a, x | 0x80);
	}
}

static void patch32(struct asmb *a, size_t at, uint32_t v)
{
	memcpy(a->b + at, &v, 4);
}

static void entry_end(struct asmb *a, size_t at)
{
	while ((a->n - at) % 8)
		u8(a, 0);     /* DW_CFA_nop padding */
	patch32(a, at, (uint32_t)(a->n - at - 4));
}

/* An .eh_frame CIE "zR" (FDE addresses pcrel|sdata4), code alignment 1,
 * data alignment -8, return address column 16, with the given initial
 * instructions. Returns its offset. */
static size_t cie_zr(struct asmb *a, const uint8_t *ins, size_t n)
{
	size_t at = a->n;

	u32(a, 0);
	u32(a, 0);            /* CIE id */
	u8(a, 1);             /* version */
	put(a, "zR", 3);
	uleb(a, 1);
	sleb(a, -8);
	u8(a, 16);
	uleb(a, 1);           /* augmentation data: the R encoding */
	u8(a, 0x1b);
	if (n)
		put(a, ins, n);
	entry_end(a, at);
	return at;
}

/* FDE in .eh_frame (section at addr) for [begin, begin + len). */
static size_t fde_eh(struct asmb *a, size_t cie, uint64_t addr, uint64_t begin,
		     uint32_t len, const uint8_t *ins, size_t n, int aug_data)
{
	size_t at = a->n;
	u32(a, 0);
	u32(a, (uint32_t)(a->n - cie));
	u32(a, (uint32_t)(begin - (addr + a->n)));   /* pcrel sdata4 */
	u32(a, len);
	if (aug_data)
		uleb(a, 0);
	put(a, ins, n);
	entry_end(a, at);
	return at;
}

static struct prec_cfi_table *table_eh(const struct asmb *a, uint64_t addr)
{
	struct prec_cfi_sections s;

	memset(&s, 0, sizeof(s));
	s.sz = sizeof(s);
	s.eh_frame = a->b;
	s.eh_frame_len = a->n;
	s.eh_frame_addr = addr;
	return prec_cfi_table_new(&s);
}

#define EH_ADDR 0x2000ull

static void test_rows(void **state)
{
	static const uint8_t cie_ins[] = { 0x0c, 7, 8, 0x90, 1 };   /* def_cfa rsp+8; rip at cfa-8 */
	/* at 0x1000: push rbp (advance 1, def_cfa_offset 16, rbp at cfa-16),
	 * advance 3: def_cfa_register rbp; remember; advance 2: def_cfa rsp+8
	 * restore rbp; advance 1: restore_state; advance_loc2 0x100:
	 * val_offset rbx = cfa-24; register r12 in r13; undefined r14;
	 * same_value r15; offset_extended_sf rbx ... */
	static const uint8_t ins[] = {
		0x41, 0x0e, 16, 0x86, 2,
		0x43, 0x0d, 6, 0x0a,
		0x42, 0x0c, 7, 8, 0xc6,
		0x41, 0x0b,
		0x03, 0x00, 0x01, 0x14, 3, 3, 0x09, 12, 13, 0x07, 14, 0x08, 15,
		0x02, 0x10, 0x2f, 3, 5, 0x2e, 0x20,
	};
	struct asmb a = { .n = 0 };
	struct prec_cfi_table *t;
	struct prec_cfi_fde f;
	struct prec_cfi_row r;
	size_t cie;

	(void)state;
	cie = cie_zr(&a, cie_ins, sizeof(cie_ins));
	size_t fde = fde_eh(&a, cie, EH_ADDR, 0x1000, 0x200, ins, sizeof(ins), 1);
	u32(&a, 0);           /* terminator */
	t = table_eh(&a, EH_ADDR);
	assert_non_null(t);

	assert_int_equal(prec_cfi_table_find(t, 0xfff, &f), -ENOENT);
	assert_int_equal(prec_cfi_table_find(t, 0x1200, &f), -ENOENT);
	assert_int_equal(prec_cfi_table_find(t, 0x1000, &f), 0);
	assert_int_equal(f.offset, fde);
	assert_int_equal(f.pc_begin, 0x1000);
	assert_int_equal(f.pc_end, 0x1200);

	assert_int_equal(prec_cfi_row_at(&f, 0x1000, &r), 0);
	assert_int_equal(r.cfa_reg, 7);
	assert_int_equal(r.cfa_off, 8);
	assert_int_equal(r.cols[16].kind, PREC_CFI_RULE_OFFSET);
	assert_int_equal(r.cols[16].off, -8);
	assert_int_equal(r.cols[6].kind, PREC_CFI_RULE_SAME);
	assert_int_equal(r.loc, 0x1000);
	assert_int_equal(r.end, 0x1001);

	assert_int_equal(prec_cfi_row_at(&f, 0x1003, &r), 0);
	assert_int_equal(r.cfa_off, 16);
	assert_int_equal(r.cols[6].kind, PREC_CFI_RULE_OFFSET);
	assert_int_equal(r.cols[6].off, -16);

	assert_int_equal(prec_cfi_row_at(&f, 0x1004, &r), 0);
	assert_int_equal(r.cfa_reg, 6);
	assert_int_equal(r.cfa_off, 16);

	assert_int_equal(prec_cfi_row_at(&f, 0x1006, &r), 0);   /* after remember; def_cfa; restore */
	assert_int_equal(r.cfa_reg, 7);
	assert_int_equal(r.cfa_off, 8);
	assert_int_equal(r.cols[6].kind, PREC_CFI_RULE_SAME);

	assert_int_equal(prec_cfi_row_at(&f, 0x1007, &r), 0);   /* restore_state */
	assert_int_equal(r.cfa_reg, 6);
	assert_int_equal(r.cfa_off, 16);
	assert_int_equal(r.cols[6].kind, PREC_CFI_RULE_OFFSET);
	assert_int_equal(r.end, 0x1107);

	assert_int_equal(prec_cfi_row_at(&f, 0x1107, &r), 0);
	assert_int_equal(r.cols[3].kind, PREC_CFI_RULE_VAL_OFFSET);
	assert_int_equal(r.cols[3].off, -24);
	assert_int_equal(r.cols[12].kind, PREC_CFI_RULE_REG);
	assert_int_equal(r.cols[12].reg, 13);
	assert_int_equal(r.cols[14].kind, PREC_CFI_RULE_UNDEF);
	assert_int_equal(r.cols[15].kind, PREC_CFI_RULE_SAME);
	assert_true(r.cols[15].explicit_);

	assert_int_equal(prec_cfi_row_at(&f, 0x1117, &r), 0);
	assert_int_equal(r.cols[3].kind, PREC_CFI_RULE_OFFSET);
	assert_int_equal(r.cols[3].off, 40);   /* negative_offset_extended: -(5 * -8) */
	assert_int_equal(r.end, 0x1200);
	assert_int_equal(prec_cfi_row_at(&f, 0x1200, &r), PREC_E_CFI);

	/* every truncation of the section: errors, never a crash */
	for (size_t cut = 0; cut < a.n; cut++) {
		struct asmb b = a;
		struct prec_cfi_table *t2;
		b.n = cut;
		t2 = table_eh(&b, EH_ADDR);
		assert_non_null(t2);
		if (prec_cfi_table_find(t2, 0x1110, &f) == 0)
			(void)prec_cfi_row_at(&f, 0x1110, &r);
		prec_cfi_table_free(t2);
	}
	/* an unknown opcode, and the remember stack overflowing */
	{
		static const uint8_t bad[] = { 0x1f };
		static const uint8_t deep[] = { 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a };
		static const uint8_t under[] = { 0x0b };
		const uint8_t *progs[3] = { bad, deep, under };
		size_t lens[3] = { sizeof(bad), sizeof(deep), sizeof(under) };
		int want[3] = { PREC_E_CFI_UNSUPPORTED, PREC_E_CFI, PREC_E_CFI };
		for (int i = 0; i < 3; i++) {
			struct asmb b = { .n = 0 };
			size_t c2 = cie_zr(&b, NULL, 0);
			struct prec_cfi_table *t2;
			fde_eh(&b, c2, EH_ADDR, 0x1000, 0x10, progs[i], lens[i], 1);
			t2 = table_eh(&b, EH_ADDR);
			assert_int_equal(prec_cfi_table_find(t2, 0x1000, &f), 0);
			assert_int_equal(prec_cfi_row_at(&f, 0x1000, &r), want[i]);
			prec_cfi_table_free(t2);
		}
	}
	prec_cfi_table_free(t);
}

/* .debug_frame: a DWARF 4 CIE (address and segment sizes), 64-bit
 * lengths, absolute addresses, set_loc, def_cfa_sf, advance_loc4. */
static void test_debug_frame(void **state)
{
	struct asmb a = { .n = 0 };
	struct prec_cfi_sections s;
	struct prec_cfi_table *t;
	struct prec_cfi_fde f;
	struct prec_cfi_row r;
	size_t cie, fde, len_at;

	(void)state;
	cie = a.n;
	u32(&a, 0xffffffffu);
	len_at = a.n;
	u64v(&a, 0);
	u64v(&a, UINT64_MAX);  /* CIE id, 64-bit */
	u8(&a, 4);
	u8(&a, 0);             /* augmentation "" */
	u8(&a, 8);             /* address size */
	u8(&a, 0);             /* segment size */
	uleb(&a, 4);           /* caf 4 */
	sleb(&a, -8);
	uleb(&a, 16);
	u8(&a, 0x0c); u8(&a, 7); u8(&a, 8);
	u8(&a, 0x90); u8(&a, 1);
	memcpy(a.b + len_at, &(uint64_t){ a.n - len_at - 8 }, 8);
	fde = a.n;
	u32(&a, 0xffffffffu);
	len_at = a.n;
	u64v(&a, 0);
	u64v(&a, cie);         /* CIE pointer: section offset */
	u64v(&a, 0x400000);
	u64v(&a, 0x1000);
	u8(&a, 0x41);          /* advance 1 * caf 4 */
	u8(&a, 0x12); u8(&a, 7); sleb(&a, -3);   /* def_cfa_sf rsp, -3 * -8 = 24 */
	u8(&a, 0x01); u64v(&a, 0x400100);        /* set_loc */
	u8(&a, 0x13); sleb(&a, -4);              /* def_cfa_offset_sf 32 */
	u8(&a, 0x04); u32(&a, 0x100);            /* advance_loc4 0x100 * 4 */
	u8(&a, 0x0e); uleb(&a, 8);
	memcpy(a.b + len_at, &(uint64_t){ a.n - len_at - 8 }, 8);

	memset(&s, 0, sizeof(s));
	s.sz = sizeof(s);
	s.debug_frame = a.b;
	s.debug_frame_len = a.n;
	t = prec_cfi_table_new(&s);
	assert_non_null(t);
	assert_int_equal(prec_cfi_table_find(t, 0x400050, &f), 0);
	assert_int_equal(f.offset, fde);
	assert_int_equal(f.section, PREC_CFI_DEBUG_FRAME);
	assert_int_equal(f.cie.version, 4);
	assert_int_equal(prec_cfi_row_at(&f, 0x400000, &r), 0);
	assert_int_equal(r.cfa_off, 8);
	assert_int_equal(r.end, 0x400004);
	assert_int_equal(prec_cfi_row_at(&f, 0x400004, &r), 0);
	assert_int_equal(r.cfa_off, 24);
	assert_int_equal(prec_cfi_row_at(&f, 0x400100, &r), 0);
	assert_int_equal(r.cfa_off, 32);
	assert_int_equal(r.end, 0x400500);
	assert_int_equal(prec_cfi_row_at(&f, 0x400600, &r), 0);
	assert_int_equal(r.cfa_off, 8);
	assert_int_equal(prec_cfi_entry_at(t, PREC_CFI_DEBUG_FRAME, cie, &f, NULL), 1);
	assert_int_equal(f.cie.code_align, 4);
	prec_cfi_table_free(t);
}

/* A CIE "zPLR" with personality (aligned, indirect), LSDA in the FDE's
 * augmentation data, and an .eh_frame_hdr binary-search table. */
static void test_augmentation_and_hdr(void **state)
{
	struct asmb a = { .n = 0 }, h = { .n = 0 };
	struct prec_cfi_sections s;
	struct prec_cfi_table *t;
	struct prec_cfi_fde f;
	struct prec_cfi_row r;
	size_t cie, fdes[3];
	const uint64_t hdr_addr = 0x1800;

	(void)state;
	cie = a.n;
	u32(&a, 0); u32(&a, 0); u8(&a, 1); put(&a, "zPLR", 5);
	uleb(&a, 1); sleb(&a, -8); u8(&a, 16);
	size_t alen = a.n;
	u8(&a, 0);                 /* aug length, patched */
	u8(&a, 0x50 | 0x80);       /* P: aligned | indirect */
	while ((EH_ADDR + a.n) % 8)
		u8(&a, 0);
	u64v(&a, 0xdeadbeef);
	u8(&a, 0x1b);              /* L */
	u8(&a, 0x1b);              /* R */
	a.b[alen] = (uint8_t)(a.n - alen - 1);
	u8(&a, 0x0c); u8(&a, 7); u8(&a, 8); u8(&a, 0x90); u8(&a, 1);
	entry_end(&a, cie);
	for (int i = 0; i < 3; i++) {
		static const uint8_t ins[] = { 0x44, 0x0e, 32 };
		size_t at = a.n;
		u32(&a, 0);
		u32(&a, (uint32_t)(a.n - cie));
		u32(&a, (uint32_t)(0x1000 + 0x100 * (uint64_t)i - (EH_ADDR + a.n)));
		u32(&a, 0x80);
		uleb(&a, 4);
		u32(&a, 0x12345678);   /* LSDA pointer */
		put(&a, ins, sizeof(ins));
		entry_end(&a, at);
		fdes[i] = at;
	}
	/* hdr: version 1, eh_frame_ptr pcrel|sdata4, count udata4, table
	 * datarel|sdata4 */
	u8(&h, 1); u8(&h, 0x1b); u8(&h, 0x03); u8(&h, 0x3b);
	u32(&h, (uint32_t)(EH_ADDR - (hdr_addr + h.n)));
	u32(&h, 3);
	for (int i = 0; i < 3; i++) {
		u32(&h, (uint32_t)(0x1000 + 0x100 * (uint64_t)i - hdr_addr));
		u32(&h, (uint32_t)(EH_ADDR + fdes[i] - hdr_addr));
	}
	memset(&s, 0, sizeof(s));
	s.sz = sizeof(s);
	s.eh_frame = a.b;
	s.eh_frame_len = a.n;
	s.eh_frame_addr = EH_ADDR;
	s.eh_frame_hdr = h.b;
	s.eh_frame_hdr_len = h.n;
	s.eh_frame_hdr_addr = hdr_addr;
	t = prec_cfi_table_new(&s);
	assert_non_null(t);
	for (int i = 0; i < 3; i++) {
		uint64_t pc = 0x1000 + 0x100 * (uint64_t)i;
		assert_int_equal(prec_cfi_table_find(t, pc + 0x10, &f), 0);
		assert_int_equal(f.offset, fdes[i]);
		assert_int_equal(f.cie.lsda_enc, 0x1b);
		assert_int_equal(prec_cfi_row_at(&f, pc + 0x80, &r), PREC_E_CFI);  /* past it */
		assert_int_equal(prec_cfi_table_find(t, pc + 0x90, &f), -ENOENT);  /* a gap */
	}
	assert_int_equal(prec_cfi_table_find(t, 0xfff, &f), -ENOENT);
	assert_int_equal(prec_cfi_table_find(t, 0x1104, &f), 0);
	assert_int_equal(prec_cfi_row_at(&f, 0x1104, &r), 0);
	assert_int_equal(r.cfa_off, 32);
	prec_cfi_table_free(t);
	/* a hdr naming another .eh_frame is not used: the walk finds the
	 * same FDEs */
	s.eh_frame_addr = EH_ADDR + 0x10;
	t = prec_cfi_table_new(&s);
	assert_non_null(t);
	assert_int_equal(prec_cfi_table_find(t, 0x1000 + 0x10 + 0x10, &f), 0);
	prec_cfi_table_free(t);
	/* a hdr claiming more entries than it holds: walk too */
	s.eh_frame_addr = EH_ADDR;
	h.b[8] = 200;
	t = prec_cfi_table_new(&s);
	assert_int_equal(prec_cfi_table_find(t, 0x1210, &f), 0);
	assert_int_equal(f.offset, fdes[2]);
	prec_cfi_table_free(t);
}

/* ---- expressions */

static int ereg(void *ctx, unsigned col, uint64_t *v)
{
	(void)ctx;
	if (col > 16)
		return -ENOENT;
	*v = 1000 + col;
	return 0;
}

static int emem(void *ctx, uint64_t addr, unsigned size, uint64_t *v)
{
	(void)ctx;
	if (addr < 0x100 || addr >= 0x200)
		return -EFAULT;
	*v = (addr * 3) & (size == 8 ? UINT64_MAX : ((1ull << (8 * size)) - 1));
	return 0;
}

static int eval(const uint8_t *e, size_t n, int have_push, uint64_t push, uint64_t *out)
{
	struct prec_cfi_expr_env env = { ereg, emem, NULL, 8 };
	return prec_cfi_expr_eval(e, n, &env, have_push, push, out);
}

static void test_expressions(void **state)
{
	uint64_t v;

	(void)state;
	{   /* glibc's PLT CFA: rsp + 8 + ((rip & 15) >= 11 ? 8 : 0) */
		static const uint8_t e[] = { 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22 };
		assert_int_equal(eval(e, sizeof(e), 0, 0, &v), 0);
		assert_int_equal(v, 1007 + 8 + ((1016 & 15) >= 11 ? 8 : 0));
	}
	{   /* deref of the pushed CFA + 0x10 */
		static const uint8_t e[] = { 0x23, 0x10, 0x06 };
		assert_int_equal(eval(e, sizeof(e), 1, 0x120, &v), 0);
		assert_int_equal(v, 0x130 * 3);
		assert_int_equal(eval(e, sizeof(e), 1, 0x300, &v), -EFAULT);
	}
	{   /* constants, stack ops, arithmetic */
		static const uint8_t e[] = {
			0x08, 200, 0x09, 0xfe, 0x22,          /* 200 + -2 = 198 */
			0x0a, 0x10, 0x00, 0x1e,               /* * 16 = 3168 */
			0x11, 0x7d, 0x1b,                     /* / -3 = -1056 */
			0x19,                                 /* abs: 1056 */
			0x12, 0x16, 0x1c,                     /* dup swap minus: 0 */
			0x0e, 1, 0, 0, 0, 0, 0, 0, 0x80, 0x21,/* | (1 << 63 | 1) */
			0x31, 0x25,                           /* >> 1 */
		};
		assert_int_equal(eval(e, sizeof(e), 0, 0, &v), 0);
		assert_int_equal(v, 0x4000000000000000ull);
	}
	{   /* bra loop: count down from 5, bounded */
		static const uint8_t e[] = { 0x35, 0x31, 0x1c, 0x12, 0x28, 0xfa, 0xff };
		/* lit5; L: lit1 minus dup bra L (-6 from after the operand): 0 left */
		assert_int_equal(eval(e, sizeof(e), 0, 0, &v), 0);
		assert_int_equal(v, 0);
	}
	{   /* an endless loop hits the step limit */
		static const uint8_t e[] = { 0x2f, 0xfd, 0xff };
		assert_int_equal(eval(e, sizeof(e), 0, 0, &v), PREC_E_CFI);
	}
	{   /* stack overflow, underflow, division by zero, bad jump, unknown op */
		uint8_t over[PREC_CFI_EXPR_STACK + 1];
		static const uint8_t under[] = { 0x22 };
		static const uint8_t div0[] = { 0x31, 0x30, 0x1b };
		static const uint8_t jump[] = { 0x2f, 0x10, 0x00 };
		static const uint8_t unk[] = { 0x50 };
		static const uint8_t empty[] = { 0x96 };
		memset(over, 0x30, sizeof(over));
		assert_int_equal(eval(over, sizeof(over), 0, 0, &v), PREC_E_CFI);
		assert_int_equal(eval(over, sizeof(over) - 1, 0, 0, &v), 0);
		assert_int_equal(eval(under, sizeof(under), 0, 0, &v), PREC_E_CFI);
		assert_int_equal(eval(div0, sizeof(div0), 0, 0, &v), PREC_E_CFI);
		assert_int_equal(eval(jump, sizeof(jump), 0, 0, &v), PREC_E_CFI);
		assert_int_equal(eval(unk, sizeof(unk), 0, 0, &v), PREC_E_CFI_UNSUPPORTED);
		assert_int_equal(eval(empty, sizeof(empty), 0, 0, &v), PREC_E_CFI);
		assert_int_equal(eval(empty, sizeof(empty), 1, 9, &v), 0);
		assert_int_equal(v, 9);
	}
	{   /* comparisons are signed, shifts saturate */
		static const uint8_t e1[] = { 0x11, 0x7f, 0x30, 0x2d };     /* -1 < 0 */
		static const uint8_t e2[] = { 0x31, 0x08, 70, 0x24 };       /* 1 << 70 = 0 */
		static const uint8_t e3[] = { 0x11, 0x70, 0x08, 70, 0x26 }; /* -16 >>a 70 = -1 */
		static const uint8_t e4[] = { 0x92, 3, 0x7f, 0x15, 0, 0x17, 0x13, 0x13 };
		assert_int_equal(eval(e1, sizeof(e1), 0, 0, &v), 0);
		assert_int_equal(v, 1);
		assert_int_equal(eval(e2, sizeof(e2), 0, 0, &v), 0);
		assert_int_equal(v, 0);
		assert_int_equal(eval(e3, sizeof(e3), 0, 0, &v), 0);
		assert_int_equal(v, UINT64_MAX);
		/* bregx 3 -1; pick 0; rot (needs 3): underflow */
		assert_int_equal(eval(e4, sizeof(e4), 0, 0, &v), PREC_E_CFI);
	}
}

/* ---- the unwinder's stops, on a hand-made stack */

static void test_fp_and_stops(void **state)
{
	/* a frame-pointer chain: at 0x7000: [fp0]=0x7010 [fp0+8]=0x401111
	 * [0x7010]=0x7030 [0x7018]=0x402222, [0x7030]=0 [0x7038]=0 */
	uint64_t stack[16] = { 0 };
	uint64_t regs[8], ips[16];
	struct prec_unwind_opts o = PREC_UNWIND_OPTS_INIT;
	struct prec_unwind_regs r = { PREC_PERF_REGS_ABI_64, 0, regs, 0 };
	struct prec_unwind_stack st = { 0x7000, (const uint8_t *)stack, sizeof(stack) };
	struct prec_unwind_result res;
	int n;

	(void)state;
	stack[0] = 0x7010;
	stack[1] = 0x401111;
	stack[2] = 0x7030;
	stack[3] = 0x402222;
	stack[6] = 0;
	stack[7] = 0;
	/* mask: BP(6) SP(7) IP(8) */
	r.mask = (1ull << 6) | (1ull << 7) | (1ull << 8);
	regs[0] = 0x7000;   /* bp */
	regs[1] = 0x7000;   /* sp */
	regs[2] = 0x400000; /* ip */
	r.n = 3;
	n = prec_unwind(&o, &r, &st, ips, 16, &res);
	assert_int_equal(n, 3);
	assert_int_equal(ips[0], 0x400000);
	assert_int_equal(ips[1], 0x401111);
	assert_int_equal(ips[2], 0x402222);
	assert_int_equal(res.stop, PREC_UNWIND_STOP_OUTERMOST);
	assert_int_equal(res.fp_steps, 3);

	/* without the fallback: no CFI */
	o.no_fp = 1;
	assert_int_equal(prec_unwind(&o, &r, &st, ips, 16, &res), 1);
	assert_int_equal(res.stop, PREC_UNWIND_STOP_NO_CFI);
	o.no_fp = 0;

	/* a loop: [0x7010] points back at 0x7000 */
	stack[2] = 0x7000;
	n = prec_unwind(&o, &r, &st, ips, 16, &res);
	assert_int_equal(res.stop, PREC_UNWIND_STOP_NO_CFI);   /* fp below sp: refused */
	stack[2] = 0x7010;   /* fp pointing at itself */
	n = prec_unwind(&o, &r, &st, ips, 16, &res);
	assert_true(n <= 3);
	assert_true(res.stop == PREC_UNWIND_STOP_NO_CFI || res.stop == PREC_UNWIND_STOP_CYCLE);
	stack[2] = 0x7030;

	/* frame pointer past the copy */
	regs[0] = 0x9000;
	assert_int_equal(prec_unwind(&o, &r, &st, ips, 16, &res), 1);
	assert_int_equal(res.stop, PREC_UNWIND_STOP_NO_CFI);
	regs[0] = 0x7000;

	/* no registers / another ABI / no ip in the mask */
	r.abi = PREC_PERF_REGS_ABI_32;
	assert_int_equal(prec_unwind(&o, &r, &st, ips, 16, &res), 0);
	assert_int_equal(res.stop, PREC_UNWIND_STOP_NO_REGS);
	r.abi = PREC_PERF_REGS_ABI_64;
	r.mask = (1ull << 6) | (1ull << 7);
	r.n = 2;
	assert_int_equal(prec_unwind(&o, &r, &st, ips, 16, &res), 0);
	assert_int_equal(res.stop, PREC_UNWIND_STOP_NO_REGS);
	r.mask = (1ull << 6) | (1ull << 7) | (1ull << 8);
	r.n = 2;   /* fewer values than the mask says */
	assert_int_equal(prec_unwind(&o, &r, &st, ips, 16, &res), 0);
	r.n = 3;

	/* bad arguments */
	assert_int_equal(prec_unwind(NULL, &r, &st, ips, 16, &res), -EINVAL);
	{
		struct prec_unwind_opts o2 = o;
		o2.sz = 4;
		assert_int_equal(prec_unwind(&o2, &r, &st, ips, 16, &res), -EINVAL);
	}
	assert_int_equal(prec_unwind(&o, &r, &st, ips, 0, &res), 0);
	assert_string_equal(prec_unwind_stop_name(PREC_UNWIND_STOP_CYCLE), "cycle");
	assert_string_equal(prec_unwind_stop_name(99), "unknown");
	assert_ptr_equal(prec_unwind_arch_find("x86_64"), &prec_unwind_arch_x86_64);
	assert_null(prec_unwind_arch_find("sparc"));
}

static int find_fail(void *ctx, uint64_t pc, const struct prec_cfi_table **t, uint64_t *bias)
{
	(void)ctx;
	(void)pc;
	(void)t;
	(void)bias;
	return -EIO;
}

/* CFI from a synthetic table: CFA = rsp + 16, rip at cfa-8, rbx at
 * cfa-16; the same FDE for every frame, so the stack is a ladder. */
static int find_one(void *ctx, uint64_t pc, const struct prec_cfi_table **t, uint64_t *bias)
{
	(void)pc;
	*t = ctx;
	*bias = 0;
	return 1;
}

static void test_cfi_ladder(void **state)
{
	static const uint8_t cie_ins[] = { 0x0c, 7, 16, 0x90, 1, 0x83, 2 };
	struct asmb a = { .n = 0 };
	struct prec_cfi_table *t;
	uint64_t stack[12], regs[3], ips[16];
	struct prec_unwind_opts o = PREC_UNWIND_OPTS_INIT;
	struct prec_unwind_regs r = { PREC_PERF_REGS_ABI_64,
				      (1ull << 1) | (1ull << 7) | (1ull << 8), regs, 3 };
	struct prec_unwind_stack st = { 0x8000, (const uint8_t *)stack, sizeof(stack) };
	struct prec_unwind_result res;
	size_t cie;
	int n;

	(void)state;
	cie = cie_zr(&a, cie_ins, sizeof(cie_ins));
	fde_eh(&a, cie, EH_ADDR, 0x1000, 0x1000, NULL, 0, 1);
	t = table_eh(&a, EH_ADDR);
	o.find = find_one;
	o.ctx = t;
	/* frames of 16 bytes: [rbx][ra] */
	for (int i = 0; i < 6; i++) {
		stack[2 * i] = 0xb0 + (uint64_t)i;
		stack[2 * i + 1] = 0x1100 + 0x10 * (uint64_t)i;
	}
	regs[0] = 0xb;        /* bx */
	regs[1] = 0x8000;     /* sp */
	regs[2] = 0x1050;     /* ip */
	n = prec_unwind(&o, &r, &st, ips, 16, &res);
	assert_int_equal(n, 7);
	assert_int_equal(ips[1], 0x1100);
	assert_int_equal(ips[6], 0x1150);
	assert_int_equal(res.stop, PREC_UNWIND_STOP_END_OF_STACK);
	/* a return address of 0 ends cleanly */
	stack[5] = 0;
	n = prec_unwind(&o, &r, &st, ips, 16, &res);
	assert_int_equal(n, 3);
	assert_int_equal(res.stop, PREC_UNWIND_STOP_OUTERMOST);
	stack[5] = 0x1120;
	/* a pc outside the FDE: the fallback has no frame pointer */
	regs[2] = 0x5000;
	n = prec_unwind(&o, &r, &st, ips, 16, &res);
	assert_int_equal(n, 1);
	assert_int_equal(res.stop, PREC_UNWIND_STOP_NO_CFI);
	regs[2] = 0x1050;
	/* the lookup fails */
	o.find = find_fail;
	assert_int_equal(prec_unwind(&o, &r, &st, ips, 16, &res), 1);
	assert_int_equal(res.stop, PREC_UNWIND_STOP_LOOKUP);
	assert_int_equal(res.err, -EIO);
	prec_cfi_table_free(t);
}

/* A sample in an epilogue, between "pop %rbp" and "ret": the CFI still
 * says rbp is saved at CFA-24, a slot below the stack pointer that the
 * kernel's copy does not hold. The register already has the caller's
 * value: the caller, whose CFA is rbp+16, must unwind with it. */
static int find_two(void *ctx, uint64_t pc, const struct prec_cfi_table **t, uint64_t *bias)
{
	(void)pc;
	*t = ctx;
	*bias = 0;
	return 1;
}

static void test_epilogue(void **state)
{
	static const uint8_t cie_ins[] = { 0x0c, 7, 8, 0x90, 1 };     /* rsp+8, ra c-8 */
	static const uint8_t a_ins[] = { 0x0e, 16, 0x86, 3 };         /* rsp+16, rbp c-24 */
	static const uint8_t b_ins[] = { 0x0c, 6, 16, 0x86, 2 };      /* rbp+16, rbp c-16 */
	struct asmb a = { .n = 0 };
	struct prec_cfi_table *t;
	uint64_t stack[6] = { 0xdead, 0x3050, 0, 0x5050, 0, 0 }, regs[3], ips[16];
	struct prec_unwind_opts o = PREC_UNWIND_OPTS_INIT;
	struct prec_unwind_regs r = { PREC_PERF_REGS_ABI_64,
				      (1ull << 6) | (1ull << 7) | (1ull << 8), regs, 3 };
	struct prec_unwind_stack st = { 0x8000, (const uint8_t *)stack, sizeof(stack) };
	struct prec_unwind_result res;
	size_t cie;
	int n;

	(void)state;
	cie = cie_zr(&a, cie_ins, sizeof(cie_ins));
	fde_eh(&a, cie, EH_ADDR, 0x1000, 0x100, a_ins, sizeof(a_ins), 1);
	fde_eh(&a, cie, EH_ADDR, 0x3000, 0x100, b_ins, sizeof(b_ins), 1);
	fde_eh(&a, cie, EH_ADDR, 0x5000, 0x100, NULL, 0, 1);
	t = table_eh(&a, EH_ADDR);
	assert_non_null(t);
	o.find = find_two;
	o.ctx = t;
	o.no_fp = 1;
	regs[0] = 0x8010;   /* bp: already popped, the caller's frame */
	regs[1] = 0x8000;   /* sp */
	regs[2] = 0x1050;   /* ip: in the epilogue */
	n = prec_unwind(&o, &r, &st, ips, 16, &res);
	assert_int_equal(n, 3);
	assert_int_equal(ips[1], 0x3050);
	assert_int_equal(ips[2], 0x5050);
	assert_int_equal(res.stop, PREC_UNWIND_STOP_OUTERMOST);
	prec_cfi_table_free(t);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_unwind.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	return unwindprog_build(dir, "nofp.c", unwindprog_nofp_src,
				"cc -O2 -fomit-frame-pointer nofp.c -o nofp");
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
		cmocka_unit_test(test_real_stack),
		cmocka_unit_test(test_epilogue),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_debug_frame),
		cmocka_unit_test(test_augmentation_and_hdr),
		cmocka_unit_test(test_expressions),
		cmocka_unit_test(test_fp_and_stops),
		cmocka_unit_test(test_cfi_ladder),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
