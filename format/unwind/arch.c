/*
 * arch.c - register sets of the architectures the unwinder knows.
 *
 * A table per architecture; the unwinder reads nothing else. aarch64 would
 * be: DWARF 0-30 = x0-x30 = perf 0-30, 31 sp = perf 31, pc perf 32 (DWARF
 * 32), frame pointer x29, return address column 30, ABI 64, and its
 * DW_CFA_AARCH64_negate_ra_state (pointer authentication) would need the
 * return address stripped of its signature before use.
 */
#include <string.h>

#include "format/unwind/unwind.h"

/* perf_regs.h, x86: AX 0, BX 1, CX 2, DX 3, SI 4, DI 5, BP 6, SP 7, IP 8,
 * FLAGS 9, CS 10, SS 11, DS 12, ES 13, FS 14, GS 15, R8-R15 16-23.
 * DWARF (x86-64 psABI 3.6.2): rax 0, rdx 1, rcx 2, rbx 3, rsi 4, rdi 5,
 * rbp 6, rsp 7, r8-r15 8-15, return address (rip) 16. */
static const int8_t x86_64_perf[17] = {
	0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8,
};

const struct prec_unwind_arch prec_unwind_arch_x86_64 = {
	.name = "x86_64",
	.ncols = 17,
	.perf_reg = x86_64_perf,
	.sp_col = 7,
	.fp_col = 6,
	.pc_col = 16,
	.perf_ip = 8,
	.perf_sp = 7,
	.perf_abi = PREC_PERF_REGS_ABI_64,
	/* perf's PERF_REGS_MASK: AX..R15 without the segment registers DS,
	 * ES, FS, GS (always 0 in 64-bit mode) */
	.perf_mask = 0xff0fffull,
	/* BX, BP, SP, IP, R12-R15: CFA rules of compiled code use sp or bp,
	 * saved registers come back from the stack; the caller-saved ones
	 * only matter in hand-written leaf code (setcontext's rdi+0) */
	.perf_mask_min = (1ull << 1) | (1ull << 6) | (1ull << 7) | (1ull << 8) |
			 (0xfull << 20),
	.ptr_size = 8,
};

const struct prec_unwind_arch *prec_unwind_arch_find(const char *machine)
{
	if (!machine)
		return NULL;
	if (!strcmp(machine, "x86_64") || !strcmp(machine, "amd64"))
		return &prec_unwind_arch_x86_64;
	return NULL;
}
