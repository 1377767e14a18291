/*
 * unwind.h - unwinds a copied user stack with DWARF CFI (format/unwind/
 * cfi.h), falling back to frame pointers where no CFI covers a pc.
 *
 * Inputs are what perf gives a sample with PERF_SAMPLE_REGS_USER and
 * PERF_SAMPLE_STACK_USER: the user registers (ABI, the mask the attr
 * requested, one value per mask bit) and a copy of the user stack starting
 * at the stack pointer. The output is what perf's callchains hold: the
 * sample's pc, then one return address per caller, as recorded (not
 * adjusted). Nothing outside the copy is ever read: an unwind stops
 * cleanly at its end.
 *
 * How to use (the recorder at record time, the analyzer offline):
 *
 *   struct prec_unwind_opts o = PREC_UNWIND_OPTS_INIT;
 *   o.arch = prec_unwind_arch_find("x86_64");    // FileHeader.machine
 *   o.find = my_find; o.ctx = my_address_space;  // pc -> table + bias
 *   struct prec_unwind_regs r = { abi, mask, values, nvalues };
 *   struct prec_unwind_stack st = { sp, bytes, dyn_size };
 *   struct prec_unwind_result res;
 *   n = prec_unwind(&o, &r, &st, ips, max, &res);   // n >= 0, or -EINVAL
 *
 * The find callback maps a runtime pc to the unwind table of the object
 * mapped there and that mapping's bias (runtime address = object address
 * + bias, the object's addresses being its ELF virtual addresses). It
 * returns 1 (found), 0 (no object or no table there: the unwinder tries
 * frame pointers) or < 0 (stops the unwind; the code lands in res.err).
 * The pc passed is the one to look up: for callers already the return
 * address - 1 (the call instruction), so a call at the very end of a
 * function finds that function.
 *
 * Frame-pointer fallback (when no table covers a pc and opts.no_fp is
 * 0): the frame pointer must point into the copy at or above the stack
 * pointer; the saved frame pointer and return address are read from it.
 * In a function that has not yet pushed its frame pointer this skips one
 * caller, as perf's frame-pointer callchains do.
 *
 * Stops, each a clean end (res.stop): the return address is undefined
 * (the outermost frame: _start, clone) or 0; a read past the copy; no
 * CFI and no usable frame pointer; the stack pointer going backwards or
 * a repeated (pc, sp) (a cycle); max frames; a table that does not parse
 * (res.err). Cost: one table lookup (binary search) and one CIE + FDE
 * interpretation per frame, no allocation.
 *
 * Threads: prec_unwind() keeps no state; tables are read-only.
 */
#ifndef PREC_UNWIND_H
#define PREC_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "format/unwind/cfi.h"

/* The register set of one architecture: how DWARF columns map to perf's
 * PERF_SAMPLE_REGS_USER layout (arch/<arch>/include/uapi/asm/perf_regs.h)
 * and which columns play which part. Adding an architecture is adding a
 * table (arch.c); the unwinder has no per-arch code. */
struct prec_unwind_arch {
	const char *name;          /* uname -m, as FileHeader.machine holds it */
	unsigned ncols;            /* DWARF columns tracked, <= PREC_CFI_MAX_COLS */
	const int8_t *perf_reg;    /* [ncols]: perf register index, -1 none */
	unsigned sp_col;           /* the stack pointer; a caller's sp = CFA */
	unsigned fp_col;           /* the frame pointer (fallback) */
	unsigned pc_col;           /* the column DW_OP_breg reads as the pc */
	int perf_ip, perf_sp;      /* perf register indexes of pc and sp */
	uint32_t perf_abi;         /* PERF_SAMPLE_REGS_ABI_* of this arch */
	uint64_t perf_mask;        /* all registers (what perf requests) */
	uint64_t perf_mask_min;    /* what CFI unwinding needs: pc, sp and the
				    * callee-saved registers */
	unsigned ptr_size;
};

extern const struct prec_unwind_arch prec_unwind_arch_x86_64;

/* "x86_64" (also "amd64"); NULL for an architecture without a table. */
const struct prec_unwind_arch *prec_unwind_arch_find(const char *machine);

/* PERF_SAMPLE_REGS_ABI_* (uapi perf_event.h), here so no Linux header is
 * needed. */
#define PREC_PERF_REGS_ABI_NONE 0
#define PREC_PERF_REGS_ABI_32 1
#define PREC_PERF_REGS_ABI_64 2

struct prec_unwind_regs {
	uint32_t abi;              /* PREC_PERF_REGS_ABI_* */
	uint64_t mask;             /* the attr's sample_regs_user */
	const uint64_t *values;    /* one per set mask bit, lowest bit first */
	size_t n;
};

/* The value of perf register index `reg` in r: 0 and *v, or -ENOENT. */
int prec_unwind_regs_get(const struct prec_unwind_regs *r, int reg, uint64_t *v);

struct prec_unwind_stack {
	uint64_t start;            /* address of bytes[0]: the sp at the sample */
	const uint8_t *bytes;      /* borrowed */
	size_t len;                /* dyn_size: the bytes the kernel copied */
};

typedef int (*prec_unwind_find_fn)(void *ctx, uint64_t pc,
				   const struct prec_cfi_table **table,
				   uint64_t *bias);

struct prec_unwind_opts {
	size_t sz;                 /* sizeof(struct prec_unwind_opts) */
	const struct prec_unwind_arch *arch;   /* NULL = x86-64 */
	prec_unwind_find_fn find;  /* NULL = no tables: frame pointers only */
	void *ctx;
	int no_fp;                 /* never fall back to frame pointers */
};

#define PREC_UNWIND_OPTS_INIT { sizeof(struct prec_unwind_opts), NULL, NULL, NULL, 0 }

enum prec_unwind_stop {
	PREC_UNWIND_STOP_MAX = 0,      /* max frames written */
	PREC_UNWIND_STOP_OUTERMOST,    /* return address undefined or 0 */
	PREC_UNWIND_STOP_END_OF_STACK, /* a read past the copied stack */
	PREC_UNWIND_STOP_NO_CFI,       /* no table, no usable frame pointer */
	PREC_UNWIND_STOP_BAD_CFI,      /* a table that does not parse (err) */
	PREC_UNWIND_STOP_CYCLE,        /* sp backwards, or (pc, sp) repeated */
	PREC_UNWIND_STOP_NO_REGS,      /* no pc/sp, or registers of another ABI */
	PREC_UNWIND_STOP_LOOKUP,       /* the find callback failed (err) */
};

const char *prec_unwind_stop_name(int stop);

struct prec_unwind_result {
	size_t n;                  /* addresses written */
	int stop;                  /* enum prec_unwind_stop */
	int err;                   /* behind BAD_CFI / LOOKUP, else 0 */
	unsigned fp_steps;         /* frames found through frame pointers */
};

/* Writes up to max addresses to ips: the pc first, then return
 * addresses. Returns how many (also res->n), or -EINVAL for bad
 * arguments (opts size, NULL pointers, an arch beyond the limits). */
int prec_unwind(const struct prec_unwind_opts *o, const struct prec_unwind_regs *regs,
		const struct prec_unwind_stack *stack, uint64_t *ips, size_t max,
		struct prec_unwind_result *res);

#endif
