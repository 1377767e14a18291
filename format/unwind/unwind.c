/*
 * unwind.c - the frame loop (see unwind.h for the contract).
 *
 * State per frame: the value of every tracked DWARF column and a bit
 * saying whether it is known. Frame 0 takes them from the sample's
 * registers. A step computes the CFA from the row at pc, then every
 * column's value in the caller from its rule (reading the stack copy),
 * sets the caller's sp to the CFA, and takes the caller's pc from the
 * return-address column. Columns without a rule keep their value (the
 * psABI's callee-saved convention: "same value"), and so do those whose
 * save slot lies below the stack pointer (popped in an epilogue: the
 * copy starts at sp, and the register already holds the saved value).
 */
#include "format/unwind/unwind.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/opts.h"
#include "format/error.h"

struct frame {
	uint64_t val[PREC_CFI_MAX_COLS];
	uint64_t known;            /* bit c: val[c] is known */
	uint64_t pc, sp;
};

struct ctx {
	const struct prec_unwind_arch *a;
	const struct prec_unwind_stack *st;
	const struct frame *f;     /* for the expression callbacks */
	uint64_t *used;            /* res->stack_used */
};

/* ---- the row cache: (table, object pc) -> the row there, or "no FDE" */

enum { SLOT_EMPTY = 0, SLOT_ROW, SLOT_NONE };

struct slot {
	const struct prec_cfi_table *t;
	uint64_t pc;
	int kind;
	struct prec_cfi_row row;
};

struct prec_unwind_cache {
	struct slot *slots;
	size_t mask;
	uint64_t hits, misses;
};

#define CACHE_MAX_SLOTS (1u << 20)

struct prec_unwind_cache *prec_unwind_cache_new(size_t entries)
{
	struct prec_unwind_cache *c;
	size_t n = 1;

	if (!entries || entries > CACHE_MAX_SLOTS) {
		errno = EINVAL;
		return NULL;
	}
	while (n < entries)
		n *= 2;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->slots = calloc(n, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		return NULL;
	}
	c->mask = n - 1;
	return c;
}

void prec_unwind_cache_clear(struct prec_unwind_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i <= c->mask; i++)
		c->slots[i].kind = SLOT_EMPTY;
}

void prec_unwind_cache_free(struct prec_unwind_cache *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c);
}

void prec_unwind_cache_stats(const struct prec_unwind_cache *c, uint64_t *hits,
			     uint64_t *misses)
{
	*hits = c ? c->hits : 0;
	*misses = c ? c->misses : 0;
}

static struct slot *cache_slot(struct prec_unwind_cache *c,
			       const struct prec_cfi_table *t, uint64_t pc)
{
	uint64_t h = (pc ^ (uint64_t)(uintptr_t)t * 0x9e3779b97f4a7c15ull) *
		     0xff51afd7ed558ccdull;

	return &c->slots[(h >> 32) & c->mask];
}

/* The row of table t at object address pc into *row (or *rowp pointing
 * at the cache's copy): 0, -ENOENT (no FDE covers pc), or an error of
 * the table (not cached). */
static int row_lookup(struct prec_unwind_cache *c, const struct prec_cfi_table *t,
		      uint64_t pc, struct prec_cfi_row *row,
		      const struct prec_cfi_row **rowp)
{
	struct prec_cfi_fde fde;
	struct slot *sl = NULL;
	int ret;

	*rowp = row;
	if (c) {
		sl = cache_slot(c, t, pc);
		if (sl->kind != SLOT_EMPTY && sl->t == t && sl->pc == pc) {
			c->hits++;
			if (sl->kind == SLOT_NONE)
				return -ENOENT;
			*rowp = &sl->row;
			return 0;
		}
		c->misses++;
	}
	ret = prec_cfi_table_find(t, pc, &fde);
	if (ret == 0)
		ret = prec_cfi_row_at(&fde, pc, row);
	if (sl && (ret == 0 || ret == -ENOENT)) {
		sl->t = t;
		sl->pc = pc;
		sl->kind = ret == 0 ? SLOT_ROW : SLOT_NONE;
		if (ret == 0) {
			sl->row = *row;
			*rowp = &sl->row;
		}
	}
	return ret;
}

const char *prec_unwind_stop_name(int stop)
{
	static const char *const n[] = {
		"max frames", "outermost frame", "end of stack copy", "no unwind info",
		"bad unwind info", "cycle", "no registers", "lookup failed",
	};
	return stop >= 0 && (size_t)stop < sizeof(n) / sizeof(n[0]) ? n[stop] : "unknown";
}

int prec_unwind_regs_get(const struct prec_unwind_regs *r, int reg, uint64_t *v)
{
	uint64_t below;
	size_t i;

	if (!r || reg < 0 || reg > 63 || !(r->mask >> reg & 1))
		return -ENOENT;
	below = reg ? r->mask & ((1ull << reg) - 1) : 0;
	i = (size_t)__builtin_popcountll(below);
	if (i >= r->n || !r->values)
		return -ENOENT;
	*v = r->values[i];
	return 0;
}

/* n bytes (<= 8) at addr from the copy, little-endian. *used grows to
 * cover every read that succeeds (one that fails fails in any prefix). */
static int stack_read(const struct ctx *c, uint64_t addr, unsigned n, uint64_t *v)
{
	const struct prec_unwind_stack *st = c->st;
	uint64_t off, x = 0;

	if (addr < st->start)
		return -EFAULT;
	off = addr - st->start;
	if (off > st->len || st->len - off < n)
		return -EFAULT;
	if (off + n > *c->used)
		*c->used = off + n;
	for (unsigned i = 0; i < n; i++)
		x |= (uint64_t)st->bytes[off + i] << (8 * i);
	*v = x;
	return 0;
}

static int env_reg(void *p, unsigned col, uint64_t *v)
{
	const struct ctx *c = p;

	if (col >= c->a->ncols || !(c->f->known >> col & 1))
		return -ENOENT;
	*v = c->f->val[col];
	return 0;
}

static int env_mem(void *p, uint64_t addr, unsigned size, uint64_t *v)
{
	const struct ctx *c = p;

	return stack_read(c, addr, size, v);
}

static int bad_args(const struct prec_unwind_opts *o, const struct prec_unwind_arch *a,
		    const struct prec_unwind_regs *regs, const struct prec_unwind_stack *st,
		    const uint64_t *ips, const struct prec_unwind_result *res)
{
	if (!o || o->sz < offsetof(struct prec_unwind_opts, no_fp) + sizeof(int) ||
	    !prec_opts_valid(o, sizeof(*o)) || !regs || !st || !ips || !res)
		return 1;
	return a->ncols > PREC_CFI_MAX_COLS || a->ncols > 64 || !a->perf_reg ||
	       a->sp_col >= a->ncols || a->fp_col >= a->ncols || a->pc_col >= a->ncols ||
	       (a->ptr_size != 8 && a->ptr_size != 4) || (st->len && !st->bytes);
}

/* One step through CFI. 0 and *out; else a stop reason (> 0), with *err
 * for BAD_CFI. */
static int step_cfi(const struct ctx *c, const struct prec_cfi_row *row,
		    const struct frame *in, struct frame *out, int *err)
{
	const struct prec_unwind_arch *a = c->a;
	struct prec_cfi_expr_env env = { env_reg, env_mem, (void *)c, a->ptr_size };
	uint64_t cfa, v;
	int ret;

	if (row->cfa_kind == PREC_CFI_CFA_EXPR) {
		size_t len;
		const uint8_t *e = prec_cfi_rule_expr(row, NULL, &len);
		ret = prec_cfi_expr_eval(e, len, &env, 0, 0, &cfa);
		if (ret == -EFAULT)
			return PREC_UNWIND_STOP_END_OF_STACK;
		if (ret < 0) {
			*err = ret;
			return PREC_UNWIND_STOP_BAD_CFI;
		}
	} else {
		if (row->cfa_reg >= a->ncols) {
			*err = PREC_E_CFI;
			return PREC_UNWIND_STOP_BAD_CFI;
		}
		if (!(in->known >> row->cfa_reg & 1))
			return PREC_UNWIND_STOP_NO_REGS;
		cfa = in->val[row->cfa_reg] + (uint64_t)row->cfa_off;
	}
	if (row->ra_col >= a->ncols) {
		*err = PREC_E_CFI_UNSUPPORTED;
		return PREC_UNWIND_STOP_BAD_CFI;
	}
	memset(out, 0, sizeof(*out));
	for (unsigned col = 0; col < a->ncols; col++) {
		const struct prec_cfi_rule *r = &row->cols[col];
		int ok = 0;
		size_t len;
		const uint8_t *e;

		switch (r->kind) {
		case PREC_CFI_RULE_SAME:
			ok = in->known >> col & 1;
			v = in->val[col];
			break;
		case PREC_CFI_RULE_UNDEF:
			break;
		case PREC_CFI_RULE_OFFSET:
			if (cfa + (uint64_t)r->off < in->sp) {
				/* a save slot below the stack pointer: the
				 * epilogue popped it already (a sample between
				 * "pop %rbp" and "ret"), so the register holds
				 * the caller's value; the kernel's copy does
				 * not reach below sp anyway */
				ok = in->known >> col & 1;
				v = in->val[col];
				break;
			}
			ok = stack_read(c, cfa + (uint64_t)r->off, a->ptr_size, &v) == 0;
			break;
		case PREC_CFI_RULE_VAL_OFFSET:
			ok = 1;
			v = cfa + (uint64_t)r->off;
			break;
		case PREC_CFI_RULE_REG:
			ok = r->reg < a->ncols && (in->known >> r->reg & 1);
			v = ok ? in->val[r->reg] : 0;
			break;
		case PREC_CFI_RULE_EXPR:
			e = prec_cfi_rule_expr(row, r, &len);
			ok = e && prec_cfi_expr_eval(e, len, &env, 1, cfa, &v) == 0 &&
			     stack_read(c, v, a->ptr_size, &v) == 0;
			break;
		case PREC_CFI_RULE_VAL_EXPR:
			e = prec_cfi_rule_expr(row, r, &len);
			ok = e && prec_cfi_expr_eval(e, len, &env, 1, cfa, &v) == 0;
			break;
		default:
			break;
		}
		if (ok) {
			out->val[col] = v;
			out->known |= 1ull << col;
		}
	}
	/* the CFA is the caller's stack pointer, unless a rule says more */
	if (row->cols[a->sp_col].kind == PREC_CFI_RULE_SAME) {
		out->val[a->sp_col] = cfa;
		out->known |= 1ull << a->sp_col;
	}
	if (row->cols[row->ra_col].kind == PREC_CFI_RULE_UNDEF)
		return PREC_UNWIND_STOP_OUTERMOST;
	if (!(out->known >> row->ra_col & 1) || !(out->known >> a->sp_col & 1))
		return PREC_UNWIND_STOP_END_OF_STACK;
	out->pc = out->val[row->ra_col];
	out->sp = out->val[a->sp_col];
	return 0;
}

/* One step through the frame pointer: [fp] = the caller's fp, [fp + ptr]
 * = the return address; the caller's sp is just above them. */
static int step_fp(const struct ctx *c, const struct frame *in, struct frame *out)
{
	const struct prec_unwind_arch *a = c->a;
	uint64_t fp = in->val[a->fp_col], saved, ra;

	if (!(in->known >> a->fp_col & 1) || fp < in->sp || fp % a->ptr_size)
		return PREC_UNWIND_STOP_NO_CFI;
	if (stack_read(c, fp, a->ptr_size, &saved) ||
	    stack_read(c, fp + a->ptr_size, a->ptr_size, &ra))
		return PREC_UNWIND_STOP_NO_CFI;
	memset(out, 0, sizeof(*out));
	out->val[a->fp_col] = saved;
	out->val[a->sp_col] = fp + 2ull * a->ptr_size;
	out->known = 1ull << a->fp_col | 1ull << a->sp_col;
	out->pc = ra;
	out->sp = fp + 2ull * a->ptr_size;
	return 0;
}

int prec_unwind(const struct prec_unwind_opts *o, const struct prec_unwind_regs *regs,
		const struct prec_unwind_stack *stack, uint64_t *ips, size_t max,
		struct prec_unwind_result *res)
{
	const struct prec_unwind_arch *a = o && o->arch ? o->arch : &prec_unwind_arch_x86_64;
	struct frame fr[2], *cur = &fr[0], *next = &fr[1];
	struct ctx c = { a, stack, NULL, NULL };
	int exact = 1;   /* the pc is exact (frame 0, after a signal frame) */
	struct prec_unwind_cache *cache = NULL;
	uint64_t v;

	if (bad_args(o, a, regs, stack, ips, res))
		return -EINVAL;
	/* a caller built before opts.cache existed has none */
	if (o->sz >= offsetof(struct prec_unwind_opts, cache) + sizeof(o->cache))
		cache = o->cache;
	memset(res, 0, sizeof(*res));
	c.used = &res->stack_used;
	res->stop = PREC_UNWIND_STOP_MAX;
	if (!max)
		return 0;
	memset(cur, 0, sizeof(*cur));
	if (regs->abi != a->perf_abi || prec_unwind_regs_get(regs, a->perf_ip, &cur->pc) ||
	    prec_unwind_regs_get(regs, a->perf_sp, &cur->sp)) {
		res->stop = PREC_UNWIND_STOP_NO_REGS;
		return 0;
	}
	for (unsigned col = 0; col < a->ncols; col++) {
		if (a->perf_reg[col] >= 0 && prec_unwind_regs_get(regs, a->perf_reg[col], &v) == 0) {
			cur->val[col] = v;
			cur->known |= 1ull << col;
		}
	}
	ips[res->n++] = cur->pc;
	while (res->n < max) {
		uint64_t look = exact ? cur->pc : cur->pc - 1, bias = 0;
		const struct prec_cfi_table *t = NULL;
		const struct prec_cfi_row *rowp;
		struct prec_cfi_row row;
		int ret = 0, stop, signal = 0;

		/* the pc column reads as this frame's pc (DW_OP_breg16 in
		 * x86-64 PLT entries) */
		cur->val[a->pc_col] = cur->pc;
		cur->known |= 1ull << a->pc_col;
		c.f = cur;
		if (o->find)
			ret = o->find(o->ctx, look, &t, &bias);
		if (ret < 0) {
			res->stop = PREC_UNWIND_STOP_LOOKUP;
			res->err = ret;
			break;
		}
		ret = ret > 0 && t ? row_lookup(cache, t, look - bias, &row, &rowp) : -ENOENT;
		if (ret == 0) {
			signal = rowp->signal_frame;
			stop = step_cfi(&c, rowp, cur, next, &res->err);
		} else if (ret == -ENOENT) {
			stop = o->no_fp ? PREC_UNWIND_STOP_NO_CFI : step_fp(&c, cur, next);
			if (!stop)
				res->fp_steps++;
		} else {
			res->stop = PREC_UNWIND_STOP_BAD_CFI;
			res->err = ret;
			break;
		}
		if (stop) {
			res->stop = stop;
			break;
		}
		if (!next->pc) {
			res->stop = PREC_UNWIND_STOP_OUTERMOST;
			break;
		}
		/* the stack grows down: a caller's frame is above its
		 * callee's, except across a signal (sigaltstack) */
		if ((next->sp < cur->sp && !signal) ||
		    (next->sp == cur->sp && next->pc == cur->pc)) {
			res->stop = PREC_UNWIND_STOP_CYCLE;
			break;
		}
		ips[res->n++] = next->pc;
		exact = signal;
		struct frame *tmp = cur;
		cur = next;
		next = tmp;
	}
	return (int)res->n;
}
