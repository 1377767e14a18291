/*
 * fuzz_unwind.c - format/unwind/unwind.c on arbitrary tables, registers
 * and stacks.
 *
 * Input: a 32-byte header, 64 bytes of registers, the sections, the stack:
 *   u32 eh_len, u32 hdr_len, u32 eh_addr, u32 hdr_addr
 *   u64 bias       runtime = object address + bias
 *   u32 mask_xor   flips bits of the register mask (x86-64 minimal mask:
 *                  BX BP SP IP R12-R15)
 *   u8 flags       bit 0: no frame-pointer fallback; bit 1: lookups for
 *                  odd pcs find nothing; bit 2: 32-bit regs ABI
 *   3 bytes unused
 *   u64 regs[8], then eh_len bytes of .eh_frame, hdr_len of .eh_frame_hdr,
 *   and the rest is the stack copy (starting at the SP register's value)
 * (seeds: tests/fuzz/corpus/fuzz_unwind/, a real snapshot of a program
 * built with -O2 -fomit-frame-pointer and its own tables).
 *
 * Invariants: the count returned is res.n, at most max, at least 1 when
 * the pc and sp are present, ips[0] the pc; no stop outside the enum.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/unwind/unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rd(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

struct ctx {
	const struct prec_cfi_table *t;
	uint64_t bias;
	int odd_missing;
	unsigned calls;
};

static int find(void *p, uint64_t pc, const struct prec_cfi_table **t, uint64_t *bias)
{
	struct ctx *c = p;

	c->calls++;
	if (c->odd_missing && (pc & 1))
		return 0;
	*t = c->t;
	*bias = c->bias;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prec_cfi_sections s;
	struct prec_unwind_opts o = PREC_UNWIND_OPTS_INIT;
	struct prec_unwind_regs r;
	struct prec_unwind_stack st;
	struct prec_unwind_result res;
	struct ctx c;
	uint64_t regs[8], ips[128];
	size_t at = 96, eh_len, hdr_len;
	int n;

	if (size < at)
		return 0;
	memset(&s, 0, sizeof(s));
	s.sz = sizeof(s);
	eh_len = (size_t)rd(data, 4);
	hdr_len = (size_t)rd(data + 4, 4);
	if (eh_len > size - at)
		eh_len = size - at;
	s.eh_frame = data + at;
	s.eh_frame_len = eh_len;
	s.eh_frame_addr = rd(data + 8, 4);
	at += eh_len;
	if (hdr_len > size - at)
		hdr_len = size - at;
	s.eh_frame_hdr = data + at;
	s.eh_frame_hdr_len = hdr_len;
	s.eh_frame_hdr_addr = rd(data + 12, 4);
	at += hdr_len;
	memset(&c, 0, sizeof(c));
	c.t = prec_cfi_table_new(&s);
	if (!c.t)
		return 0;
	c.bias = rd(data + 16, 8);
	c.odd_missing = data[28] & 2;
	for (int i = 0; i < 8; i++)
		regs[i] = rd(data + 32 + 8 * i, 8);
	o.find = find;
	o.ctx = &c;
	o.no_fp = data[28] & 1;
	r.abi = data[28] & 4 ? PREC_PERF_REGS_ABI_32 : PREC_PERF_REGS_ABI_64;
	r.mask = prec_unwind_arch_x86_64.perf_mask_min ^ rd(data + 24, 4);
	r.values = regs;
	r.n = 8;
	st.start = regs[2];   /* SP: the third set bit of the minimal mask */
	st.bytes = data + at;
	st.len = size - at;
	n = prec_unwind(&o, &r, &st, ips, sizeof(ips) / sizeof(ips[0]), &res);
	if (n < 0 || (size_t)n != res.n || res.n > sizeof(ips) / sizeof(ips[0]) ||
	    res.stop < 0 || res.stop > PREC_UNWIND_STOP_LOOKUP)
		abort();
	if (n == 0 && res.stop != PREC_UNWIND_STOP_NO_REGS)
		abort();
	if (c.calls > (unsigned)n)
		abort();   /* one lookup per frame at most */
	prec_cfi_table_free((struct prec_cfi_table *)c.t);
	return 0;
}
