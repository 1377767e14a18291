/*
 * symunwind.c - the symbol gatherer's unwinding part: user stacks
 * (--call-graph dwarf) unwound at record time through the gatherer's
 * address spaces (addrspace.c) and the CFI of the objects they hit. See
 * rec_symgather_unwind() in symgather.h; the state is addrspace_int.h.
 *
 * Per frame: the mapping holding the pc (binary search over the pid's
 * sorted mappings, the previous frame's mapping tried first), its object's
 * CFI table (read once per object and kept), and the object address
 * through the file's load segments (file offset = pc - start + pgoff),
 * as the analyzer does offline with the same tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "recorder/encode/decode.h"
#include "format/base/clock.h"
#include "recorder/symbols/elfcfi.h"
#include "recorder/symbols/objfile.h"
#include "recorder/symbols/symgather.h"

/* Rows cached: a profile's hot return addresses number in the hundreds
 * to thousands; 4096 slots take 2.8 MiB. Measured on test_unwind's real
 * 15-frame stack: ~420 ns per frame without, ~100 with. */
#define UCACHE_SLOTS 4096

#define CPUMODE_MASK 7
#define CPUMODE_KERNEL 1
#define CPUMODE_USER 2

const struct prec_unwind_arch *rec_symgather_arch(const char *machine)
{
	struct utsname u;

	if (machine)
		return prec_unwind_arch_find(machine);
	return uname(&u) == 0 ? prec_unwind_arch_find(u.machine) : NULL;
}

struct lookup {
	struct rec_symgather *sc;
	const struct sc_proc *p;
	const struct sc_map *last;   /* the previous frame's mapping */
	int raw;
};

/* prec_unwind_find_fn: pc -> mapping -> object -> (table, bias). */
static int find(void *ctx, uint64_t pc, const struct prec_cfi_table **t,
		uint64_t *bias)
{
	struct lookup *l = ctx;
	const struct sc_map *m = l->last;
	struct sc_obj *o;
	struct sc_cfi *c;
	uint64_t vaddr;

	if (!m || pc < m->start || pc >= m->end) {
		m = rec_symgather_map_at(l->p, pc);
		l->last = m;
	}
	if (!m || m->obj == NO_OBJ)
		return 0;   /* anonymous memory (JIT): frame pointers */
	o = l->sc->objs[m->obj];
	c = rec_symgather_obj_cfi(l->sc, o);
	if (l->raw)
		o->unwind_need = 1;   /* the analyzer walks this stack again */
	if (!c)
		return 0;
	vaddr = prec_elf_segs_vaddr(c->c.segs, c->c.nsegs, c->c.load_bias,
				      pc - m->start + m->pgoff);
	*t = c->t;
	*bias = pc - vaddr;
	return 1;
}

int rec_symgather_unwind(struct rec_symgather *sc, uint32_t pid,
			 const struct prec_unwind_regs *regs,
			 const struct prec_unwind_stack *stack, int raw,
			 uint64_t *ips, size_t max, struct prec_unwind_result *res)
{
	struct prec_unwind_opts o = PREC_UNWIND_OPTS_INIT;
	struct lookup l = { sc, NULL, NULL, raw };
	int n, ret;

	if (!sc || !regs || !stack || !ips || !res)
		return -EINVAL;
	if (!sc->arch) {
		memset(res, 0, sizeof(*res));
		res->stop = PREC_UNWIND_STOP_NO_REGS;
		return 0;
	}
	l.p = rec_symgather_proc(sc, pid);
	if (!l.p)
		return -ENOMEM;
	if (!sc->ucache)
		sc->ucache = prec_unwind_cache_new(UCACHE_SLOTS);   /* NULL: none */
	o.cache = sc->ucache;
	o.arch = sc->arch;
	o.find = find;
	o.ctx = &l;
	n = prec_unwind(&o, regs, stack, ips, max, res);
	if (n <= 0)
		return n;
	/* their symbols go into the trace like those of any callchain */
	ret = rec_symgather_hit_callchain(sc, pid, ips, (size_t)n, 0);
	return ret < 0 ? ret : n;
}

int rec_symgather_unwind_sample(void *ctx, const struct rec_record *r, int raw,
				uint64_t *ips, size_t max, size_t *keep, int *stop)
{
	struct rec_symgather *sc = ctx;
	uint64_t regs[64];
	struct prec_unwind_regs rg;
	struct prec_unwind_stack st;
	struct prec_unwind_result res;
	int mode = r->misc & CPUMODE_MASK, n;

	*stop = PREC_UNWIND_STOP_NO_REGS;
	*keep = r->sample.stack_dyn;
	if (!sc || !sc->arch || (mode != CPUMODE_USER && mode != CPUMODE_KERNEL) ||
	    !r->sample.nregs || r->sample.nregs > 64)
		return 0;   /* guest or hypervisor samples are not ours */
	memcpy(regs, r->sample.regs, r->sample.nregs * sizeof(uint64_t));
	rg.abi = (uint32_t)r->sample.regs_abi;
	rg.mask = r->sample.regs_mask;
	rg.values = regs;
	rg.n = r->sample.nregs;
	if (prec_unwind_regs_get(&rg, sc->arch->perf_sp, &st.start) < 0)
		return 0;
	st.bytes = r->sample.stack;
	st.len = (size_t)r->sample.stack_dyn;
	n = rec_symgather_unwind(sc, r->sid.pid, &rg, &st, raw, ips, max, &res);
	if (n < 0)
		return n;
	*stop = res.stop;
	/* An unwind that ended cleanly reads the same bytes offline: the
	 * rest of the copy is cut. One that ran out of mappings or CFI here
	 * may get further in the analyzer (which sees every mapping of the
	 * trace): it keeps the whole copy. */
	if (res.stop == PREC_UNWIND_STOP_OUTERMOST || res.stop == PREC_UNWIND_STOP_MAX ||
	    res.stop == PREC_UNWIND_STOP_CYCLE)
		*keep = (size_t)res.stack_used;
	return n;
}
