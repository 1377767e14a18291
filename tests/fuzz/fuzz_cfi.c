/*
 * fuzz_cfi.c - format/unwind/cfi.c on arbitrary section bytes.
 *
 * Input: a 17-byte header, then the sections:
 *   u8  flags      bit 0: 32-bit addresses; bit 1: no .eh_frame_hdr
 *   u32 eh_len     bytes of .eh_frame that follow (clipped to the input)
 *   u32 hdr_len    bytes of .eh_frame_hdr after them (clipped)
 *   u32 eh_addr    sh_addr of .eh_frame
 *   u32 hdr_addr   sh_addr of .eh_frame_hdr
 *   ... the rest is .debug_frame
 * (seeds: tests/fuzz/corpus/fuzz_cfi/, the sections of small programs).
 *
 * Every entry is walked (prec_cfi_entry_at, by the lengths), every FDE's
 * row computed at its first, middle and last pc and a pc from the input,
 * every expression of those rows evaluated with registers and memory that
 * answer for some addresses only, lookups made at each FDE's pcs. Nothing
 * may crash, hang, leak or trip a sanitizer, and what succeeds must be
 * consistent (a found FDE covers the pc; a row lies inside its FDE).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/unwind/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int reg(void *ctx, unsigned col, uint64_t *v)
{
	(void)ctx;
	if (col % 3 == 2)
		return -ENOENT;
	*v = 0x7ffc0000ull + col * 8;
	return 0;
}

static int mem(void *ctx, uint64_t addr, unsigned size, uint64_t *v)
{
	(void)ctx;
	if (addr < 0x7ffc0000ull || addr >= 0x7ffd0000ull)
		return -EFAULT;
	*v = addr ^ size;
	return 0;
}

static void use_row(const struct prec_cfi_fde *f, uint64_t pc)
{
	struct prec_cfi_row row;
	struct prec_cfi_expr_env env = { reg, mem, NULL, f->cie.addr_size };
	size_t len;
	uint64_t v;
	const uint8_t *e;

	if (prec_cfi_row_at(f, pc, &row) != 0)
		return;
	if (row.loc > pc || row.end <= pc || row.loc < f->pc_begin || row.end > f->pc_end)
		abort();
	e = prec_cfi_rule_expr(&row, NULL, &len);
	if (e) {
		if (e < f->sec || len > f->sec_len || (size_t)(e - f->sec) > f->sec_len - len)
			abort();
		(void)prec_cfi_expr_eval(e, len, &env, 0, 0, &v);
	}
	for (unsigned c = 0; c < PREC_CFI_MAX_COLS; c++) {
		e = prec_cfi_rule_expr(&row, &row.cols[c], &len);
		if (!e)
			continue;
		if (e < f->sec || len > f->sec_len || (size_t)(e - f->sec) > f->sec_len - len)
			abort();
		(void)prec_cfi_expr_eval(e, len, &env, 1, 0x7ffc1000ull, &v);
	}
}

static void walk(const struct prec_cfi_table *t, int section, uint64_t extra_pc)
{
	uint64_t off = 0;

	for (unsigned n = 0; n < 100000; n++) {
		struct prec_cfi_fde f, g;
		uint64_t next = 0;
		int ret = prec_cfi_entry_at(t, section, off, &f, &next);

		if (ret == -ENOENT || next <= off)
			break;
		off = next;
		if (ret != 0)
			continue;
		if (f.pc_end <= f.pc_begin)
			continue;
		uint64_t pcs[4] = { f.pc_begin, f.pc_begin + (f.pc_end - f.pc_begin) / 2,
				    f.pc_end - 1, extra_pc };
		for (int i = 0; i < 4; i++) {
			if (pcs[i] < f.pc_begin || pcs[i] >= f.pc_end)
				continue;
			use_row(&f, pcs[i]);
			if (prec_cfi_table_find(t, pcs[i], &g) == 0 &&
			    (pcs[i] < g.pc_begin || pcs[i] >= g.pc_end))
				abort();   /* a lookup returns only an FDE covering pc */
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prec_cfi_sections s;
	struct prec_cfi_table *t;
	struct prec_cfi_fde f;
	size_t eh_len, hdr_len, at = 17;
	uint64_t v;

	if (size < 17)
		return 0;
	memset(&s, 0, sizeof(s));
	s.sz = sizeof(s);
	s.addr_size = data[0] & 1 ? 4 : 8;
	eh_len = rd32(data + 1);
	hdr_len = rd32(data + 5);
	if (eh_len > size - at)
		eh_len = size - at;
	s.eh_frame = data + at;
	s.eh_frame_len = eh_len;
	s.eh_frame_addr = rd32(data + 9);
	at += eh_len;
	if (hdr_len > size - at)
		hdr_len = size - at;
	if (!(data[0] & 2)) {
		s.eh_frame_hdr = data + at;
		s.eh_frame_hdr_len = hdr_len;
		s.eh_frame_hdr_addr = rd32(data + 13);
	}
	at += hdr_len;
	s.debug_frame = data + at;
	s.debug_frame_len = size - at;
	t = prec_cfi_table_new(&s);
	if (!t)
		return 0;
	walk(t, PREC_CFI_EH_FRAME, rd32(data + 9) + (size & 0xfff));
	walk(t, PREC_CFI_DEBUG_FRAME, size);
	for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
		uint64_t pc = rd32(data + i);
		if (prec_cfi_table_find(t, pc, &f) == 0) {
			if (pc < f.pc_begin || pc >= f.pc_end)
				abort();
			use_row(&f, pc);
		}
	}
	prec_cfi_table_free(t);
	/* the whole input as one expression, too */
	{
		struct prec_cfi_expr_env env = { reg, mem, NULL, 8 };
		(void)prec_cfi_expr_eval(data, size, &env, size & 1, 0x7ffc0100ull, &v);
	}
	return 0;
}
