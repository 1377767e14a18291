/*
 * ustack.c - sample -> registers and stack -> format/unwind, with the
 * symbolizer as the pc -> (table, bias) lookup.
 */
#include "analyzer/symbols/ustack.h"

#include <string.h>

#include "analyzer/read/trace.h"
#include "analyzer/symbols/symbolize.h"
#include "format/unwind/unwind.h"

int ana_ustack_present(const Perfrec__Sample *smp)
{
	return smp && smp->n_regs && smp->stack.len;
}

struct lookup {
	struct ana_symbols *syms;
	uint32_t pid;
	uint64_t time;
};

static int find(void *ctx, uint64_t pc, const struct prec_cfi_table **t, uint64_t *bias)
{
	const struct lookup *l = ctx;

	return ana_symbols_unwind_table(l->syms, l->pid, pc, l->time, t, bias);
}

int ana_ustack_unwind(struct ana_trace *s, const struct prec_packet *p,
		      uint64_t *ips, size_t max)
{
	const Perfrec__Sample *smp = p->pkt->sample;
	const char *machine = s->header && s->header->machine && *s->header->machine ?
			      s->header->machine : "x86_64";
	struct prec_unwind_opts o = PREC_UNWIND_OPTS_INIT;
	struct prec_unwind_regs r;
	struct prec_unwind_stack st;
	struct prec_unwind_result res;
	struct lookup l = { s->syms, smp->pid, p->time };
	int n;

	if (!ana_ustack_present(smp) || !s->syms || !max)
		return 0;
	s->ustack.samples++;
	o.arch = prec_unwind_arch_find(machine);
	if (!o.arch) {
		s->ustack.no_arch++;
		return 0;
	}
	o.find = find;
	o.ctx = &l;
	r.abi = smp->regs_abi;
	r.mask = smp->regs_mask;
	r.values = smp->regs;
	r.n = smp->n_regs;
	if (prec_unwind_regs_get(&r, o.arch->perf_sp, &st.start) < 0) {
		s->ustack.stops[PREC_UNWIND_STOP_NO_REGS]++;
		return 0;
	}
	st.bytes = smp->stack.data;
	st.len = smp->stack.len;
	n = prec_unwind(&o, &r, &st, ips, max, &res);
	if (n < 0)
		return 0;
	if ((size_t)res.stop < sizeof(s->ustack.stops) / sizeof(s->ustack.stops[0]))
		s->ustack.stops[res.stop]++;
	s->ustack.frames += (uint64_t)n;
	s->ustack.fp_frames += res.fp_steps;
	return n;
}
