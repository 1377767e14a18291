/*
 * cfi.h - a bounded reader of DWARF call frame information (.eh_frame with
 * its .eh_frame_hdr search table, and .debug_frame).
 *
 * Why it exists: user stacks copied without frame pointers unwind from the
 * CFI of the objects they run through. The analyzer does it offline from
 * tables the trace carries and the recorder at record time, so the
 * reader lives in format/: portable C11, no libunwind/libdw, no ELF or
 * Linux headers, and it parses untrusted bytes: every read is checked
 * against the section, loops are bounded by the bytes they consume, the
 * remember-state and expression stacks by fixed depths. Errors are
 * returned (PREC_E_CFI / PREC_E_CFI_UNSUPPORTED / -errno), never printed.
 *
 * The specification is DWARF 4/5 section 6.4 (CIE, FDE, call frame
 * instructions) and 2.5 (expressions), with the LSB's .eh_frame changes
 * (CIE id 0, relative CIE pointers, augmentation strings "zR", "zPLR",
 * "zRS" ..., DW_EH_PE_* pointer encodings) and .eh_frame_hdr (version 1,
 * a sorted table of (initial location, FDE address)). Little-endian
 * targets (x86-64, aarch64); 32-bit addresses are read but not tested.
 *
 * How to use:
 *
 *   struct prec_cfi_sections s = { sizeof(s) };
 *   s.eh_frame = bytes; s.eh_frame_len = n; s.eh_frame_addr = sh_addr; ...
 *   struct prec_cfi_table *t = prec_cfi_table_new(&s);   // NULL + errno
 *   per pc (an ELF virtual address of the object, i.e. runtime - bias):
 *       struct prec_cfi_fde fde;
 *       ret = prec_cfi_table_find(t, pc, &fde);          // 0, -ENOENT, < 0
 *       ret = prec_cfi_row_at(&fde, pc, &row);           // the rules at pc
 *   prec_cfi_table_free(t);
 *
 * The table borrows the section bytes (they must outlive it) and is
 * read-only after _new(): lookups may run from several threads at once.
 * It uses .eh_frame_hdr's binary-search table when that is present and
 * sane; otherwise (and always for .debug_frame) _new() walks the section
 * once and keeps a sorted index of FDE ranges.
 */
#ifndef PREC_CFI_H
#define PREC_CFI_H

#include <stddef.h>
#include <stdint.h>

/* Register columns a row tracks: 0..PREC_CFI_MAX_COLS-1 covers the
 * integer registers and return-address column of x86-64 (0-16) and
 * aarch64 (0-34). Rules for higher columns (vector registers) are parsed
 * and dropped; an unwinder never needs them. */
#define PREC_CFI_MAX_COLS 40
/* DW_CFA_remember_state nesting (compilers emit 1-2). Deeper: an error. */
#define PREC_CFI_MAX_REMEMBER 8
/* Operand stack of a DWARF expression, and operations executed (bra and
 * skip may loop). */
#define PREC_CFI_EXPR_STACK 64
#define PREC_CFI_EXPR_STEPS 1024

/* The sections of one object, borrowed. Addresses are where the sections
 * sit in the object's own address space (ELF sh_addr); the pc-relative
 * pointers of .eh_frame and .eh_frame_hdr resolve against them. */
struct prec_cfi_sections {
	size_t sz;                      /* sizeof(struct prec_cfi_sections) */
	const uint8_t *eh_frame;
	size_t eh_frame_len;
	uint64_t eh_frame_addr;
	const uint8_t *eh_frame_hdr;    /* optional */
	size_t eh_frame_hdr_len;
	uint64_t eh_frame_hdr_addr;
	const uint8_t *debug_frame;     /* optional; absolute addresses */
	size_t debug_frame_len;
	unsigned addr_size;             /* 8 (default when 0) or 4 */
};

struct prec_cfi_table;

/* NULL and errno (ENOMEM, EINVAL for a bad opts size) on failure. Bytes
 * that do not parse do not fail _new(): lookups in them fail instead. */
struct prec_cfi_table *prec_cfi_table_new(const struct prec_cfi_sections *s);
void prec_cfi_table_free(struct prec_cfi_table *t);   /* NULL is fine */

/* Which section an FDE came from. */
enum prec_cfi_section { PREC_CFI_EH_FRAME = 0, PREC_CFI_DEBUG_FRAME = 1 };

struct prec_cfi_cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_col;                /* return-address column */
	uint8_t version;
	uint8_t fde_enc;                /* DW_EH_PE_* of FDE addresses ('R') */
	uint8_t lsda_enc;               /* 'L', or DW_EH_PE_omit */
	uint8_t has_aug_data;           /* 'z': FDEs carry augmentation data */
	uint8_t signal_frame;           /* 'S' */
	uint8_t addr_size;
	const uint8_t *insns;           /* initial instructions */
	size_t insns_len;
};

struct prec_cfi_fde {
	struct prec_cfi_cie cie;
	uint64_t pc_begin, pc_end;      /* [begin, end) in object addresses */
	const uint8_t *insns;
	size_t insns_len;
	int section;                    /* enum prec_cfi_section */
	uint64_t offset;                /* of the FDE in its section */
	uint64_t cie_offset;
	/* for DW_CFA_set_loc and friends: where the section's byte 0 sits */
	const uint8_t *sec;
	size_t sec_len;
	uint64_t sec_addr;
};

/* The FDE covering pc (.eh_frame first, then .debug_frame). 0, -ENOENT
 * when none covers it, PREC_E_CFI / PREC_E_CFI_UNSUPPORTED when the entry
 * found does not parse. */
int prec_cfi_table_find(const struct prec_cfi_table *t, uint64_t pc,
			struct prec_cfi_fde *fde);

/* The entry at a byte offset of a section (for tools and tests that walk
 * what readelf lists). 0 and *fde, 1 when the entry is a CIE (fde->cie
 * filled, fde->pc_* zero), -ENOENT past the end / at a terminator, < 0. */
int prec_cfi_entry_at(const struct prec_cfi_table *t, int section,
		      uint64_t offset, struct prec_cfi_fde *fde,
		      uint64_t *next_offset);

/* ---- rows: the rules in effect at one pc */

enum prec_cfi_rule_kind {
	PREC_CFI_RULE_SAME = 0,      /* no rule given (or DW_CFA_same_value):
				      * the caller's value is this frame's */
	PREC_CFI_RULE_UNDEF,         /* DW_CFA_undefined: not recoverable */
	PREC_CFI_RULE_OFFSET,        /* saved at CFA + off */
	PREC_CFI_RULE_VAL_OFFSET,    /* value is CFA + off */
	PREC_CFI_RULE_REG,           /* value is in register reg */
	PREC_CFI_RULE_EXPR,          /* saved at the address expr computes */
	PREC_CFI_RULE_VAL_EXPR,      /* value is what expr computes */
};

/* expr: the expression's bytes start at row->sec + off, expr_len long
 * (inside the section, checked when the rule was set). */
struct prec_cfi_rule {
	int64_t off;
	uint32_t expr_len;
	uint16_t reg;
	uint8_t kind;
	uint8_t explicit_;           /* an instruction named this column */
};

enum prec_cfi_cfa_kind { PREC_CFI_CFA_REG = 0, PREC_CFI_CFA_EXPR = 1 };

struct prec_cfi_row {
	uint64_t loc, end;           /* the row holds for [loc, end) */
	uint8_t cfa_kind;            /* enum prec_cfi_cfa_kind */
	uint16_t cfa_reg;            /* CFA_REG: cfa = reg + off */
	int64_t cfa_off;
	int64_t cfa_expr_off;        /* CFA_EXPR: the expression's bytes */
	uint32_t cfa_expr_len;
	uint64_t ra_col;
	int signal_frame;
	const uint8_t *sec;          /* the section expressions point into */
	struct prec_cfi_rule cols[PREC_CFI_MAX_COLS];
};

/* Runs the CIE's initial instructions and the FDE's up to pc. 0, or
 * PREC_E_CFI (bad bytes, pc outside the FDE, remember stack overflow),
 * PREC_E_CFI_UNSUPPORTED (an instruction or encoding we do not know). */
int prec_cfi_row_at(const struct prec_cfi_fde *fde, uint64_t pc,
		    struct prec_cfi_row *row);

/* The bytes of an expression rule (or of the CFA expression: pass
 * rule = NULL). */
const uint8_t *prec_cfi_rule_expr(const struct prec_cfi_row *row,
				  const struct prec_cfi_rule *rule, size_t *len);

/* ---- DWARF expressions (the subset CFI uses: no location pieces) */

struct prec_cfi_expr_env {
	/* 0 and *v, or < 0 when the register's value is unknown */
	int (*reg)(void *ctx, unsigned col, uint64_t *v);
	/* 0 and *v (size bytes, little-endian, zero-extended), < 0 when the
	 * memory is not available */
	int (*mem)(void *ctx, uint64_t addr, unsigned size, uint64_t *v);
	void *ctx;
	unsigned addr_size;          /* 8 or 4 */
};

/* Evaluates expr with `push` pushed first when have_push (the CFA for
 * DW_CFA_expression rules). 0 and *out (the top of the stack), or
 * PREC_E_CFI (bad bytes, stack under/overflow, step limit, division by
 * zero), PREC_E_CFI_UNSUPPORTED (an op outside the subset), or the
 * callbacks' errors. */
int prec_cfi_expr_eval(const uint8_t *expr, size_t len,
		       const struct prec_cfi_expr_env *env, int have_push,
		       uint64_t push, uint64_t *out);

#endif
