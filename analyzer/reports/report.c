/*
 * report.c - the sample table.
 */
#define _POSIX_C_SOURCE 200809L   /* open_memstream */
#include "analyzer/reports/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/hashmap.h"
#include "analyzer/render/calltree.h"
#include "analyzer/render/stree.h"
#include "analyzer/symbols/resolve.h"
#include "analyzer/read/trace.h"
#include "format/unwind/unwind.h"

#define MAX_FRAMES 256

static const char *const key_names[ANA_NKEYS] = {
	"comm", "pid", "tid", "cpu", "dso", "sym", "event",
};
static const char *const key_headers[ANA_NKEYS] = {
	"Command", "Pid", "Tid", "CPU", "Shared Object", "Symbol", "Event",
};

int ana_report_parse_sort(struct ana_report_opts *o, const char *arg,
			  char *err, size_t errlen)
{
	o->nkeys = 0;
	const char *p = arg;
	for (;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int k;
		for (k = 0; k < ANA_NKEYS; k++)
			if (strlen(key_names[k]) == len && !strncmp(p, key_names[k], len))
				break;
		if (k == ANA_NKEYS || o->nkeys == ANA_NKEYS) {
			snprintf(err, errlen, "bad --sort '%s': keys are comm, pid, tid, "
				 "cpu, dso, sym, event (comma-separated, each once)", arg);
			return -EINVAL;
		}
		for (size_t i = 0; i < o->nkeys; i++)
			if (o->keys[i] == k) {
				snprintf(err, errlen, "bad --sort '%s': key '%s' given twice",
					 arg, key_names[k]);
				return -EINVAL;
			}
		o->keys[o->nkeys++] = k;
		if (!e)
			return 0;
		p = e + 1;
	}
}

struct rkey {
	const char *comm, *dso, *sym;
	uint32_t pid, tid, cpu;
	int32_t event;
};

struct rval {
	uint64_t samples, period;
	uint64_t child_samples, child_period;
	struct ana_stree *tree;   /* with o->tree: chains, outermost first */
};

struct rstate {
	struct ana_trace *s;
	const struct ana_report_opts *o;
	int use[ANA_NKEYS];
	int need_frames;
	struct prec_hashmap table;
	uint64_t samples, period, filtered_out;
	struct ana_loc *frames;
	struct ana_stree_frame *path;   /* with o->tree */
	int err;
};

/* c samples (blocks) of weight w in all */
static int add(struct rstate *st, const struct rkey *k, uint64_t w, uint64_t c,
	       int child)
{
	struct rval *v = prec_hashmap_get(&st->table, k, NULL);
	if (!v)
		return -ENOMEM;
	if (child) {
		v->child_samples += c;
		v->child_period += w;
	} else {
		v->samples += c;
		v->period += w;
	}
	return 0;
}

/* The chain frames[from..0] into the call tree of the row k. */
static int add_chain(struct rstate *st, const struct rkey *k, int from, uint64_t w)
{
	struct rval *v = prec_hashmap_get(&st->table, k, NULL);
	if (!v)
		return -ENOMEM;
	if (!v->tree) {
		if (!(v->tree = malloc(sizeof(*v->tree))))
			return -ENOMEM;
		ana_stree_init(v->tree);
	}
	for (int i = from; i >= 0; i--)
		st->path[from - i].name = st->frames[i].sym;
	return ana_stree_add(v->tree, st->path, (size_t)from + 1, 0, w);
}

/* Counts one stack of n frames (leaf first) with weight w and count c
 * under key k: self to the leaf, children to each distinct function. */
static int count_stack(struct rstate *st, const struct rkey *k, int n, uint64_t w,
		       uint64_t c)
{
	struct ana_trace *s = st->s;
	const struct ana_report_opts *o = st->o;
	for (int i = 0; i < n; i++) {
		struct ana_loc *fr = &st->frames[i];
		struct rkey fk = *k;
		if (st->use[ANA_KEY_DSO])
			fk.dso = fr->dso;
		if (st->use[ANA_KEY_SYM] && !(fk.sym = fr->sym = ana_frame_name(s, fr)))
			return -ENOMEM;
		if (i == 0) {
			int ret = add(st, &fk, w, c, 0);
			if (ret >= 0 && o->tree)
				ret = add_chain(st, &fk, n - 1, w);
			if (ret < 0)
				return ret;
		}
		if (!o->children)
			break;
		int dup = 0;
		for (int j = 0; j < i && !dup; j++) {
			const struct ana_loc *pr = &st->frames[j];
			dup = (!st->use[ANA_KEY_DSO] || pr->dso == fr->dso) &&
			      (!st->use[ANA_KEY_SYM] || pr->sym == fk.sym);
		}
		if (!dup) {
			int ret = add(st, &fk, w, c, 1);
			/* the chain from the function's outermost call (the
			 * leaf's row has its whole chain already) */
			int from = i;
			for (int j = n - 1; o->tree && i && j > i; j--)
				if ((!st->use[ANA_KEY_DSO] || st->frames[j].dso == fr->dso) &&
				    (!st->use[ANA_KEY_SYM] || st->frames[j].sym == fk.sym)) {
					from = j;
					break;
				}
			if (ret >= 0 && o->tree && i)
				ret = add_chain(st, &fk, from, w);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

/* An OffCpu packet: its blocked time under its stack. */
static int on_offcpu(struct rstate *st, const struct prec_packet *p)
{
	struct ana_trace *s = st->s;
	const struct ana_report_opts *o = st->o;
	const Perfrec__OffCpu *oc = p->pkt->off_cpu;
	const struct ana_filter *f = o->filter;
	int ev = ana_trace_offcpu_event(s);
	const char *comm = NULL;
	if (f) {
		if (!ana_filter_offcpu(f, oc->count, oc->cpu, oc->pid, oc->tid, p->time) ||
		    !ana_filter_event(f, ana_trace_event_name(s, ev)))
			goto out_filtered;
		if (f->ncomms) {
			if (!(comm = ana_trace_comm_name(s, oc->tid, p->time)))
				return -ENOMEM;
			if (!ana_filter_comm(f, comm))
				goto out_filtered;
		}
	}
	uint64_t w = oc->duration, c = oc->count ? oc->count : 1;
	struct rkey k;
	memset(&k, 0, sizeof(k));
	if ((st->use[ANA_KEY_COMM] || o->on_sample) && !comm &&
	    !(comm = ana_trace_comm_name(s, oc->tid, p->time)))
		return -ENOMEM;
	if (st->use[ANA_KEY_COMM])
		k.comm = comm;
	if (st->use[ANA_KEY_PID])
		k.pid = oc->pid;
	if (st->use[ANA_KEY_TID])
		k.tid = oc->tid;
	if (st->use[ANA_KEY_CPU])
		k.cpu = oc->cpu;
	if (st->use[ANA_KEY_EVENT])
		k.event = ev;
	st->samples += c;
	st->period += w;
	int n = 0;
	if (st->need_frames) {
		n = ana_resolve_offcpu(s, p, st->frames, o->children || o->tree || o->on_sample ?
				       MAX_FRAMES : 1);
		if (n < 0)
			return n;
	}
	if (!st->need_frames)
		return add(st, &k, w, c, 0);
	if (o->on_sample || o->tree)
		for (int i = 0; i < n; i++)
			if (!(st->frames[i].sym = ana_frame_name(s, &st->frames[i])))
				return -ENOMEM;
	int ret = count_stack(st, &k, n, w, c);
	if (ret < 0 || !o->on_sample)
		return ret;
	struct ana_report_sample rs = { .p = p, .event = ev, .comm = comm, .weight = w,
					.frames = st->frames, .nframes = n };
	return o->on_sample(o->ctx, &rs);

out_filtered:
	st->filtered_out++;
	return 0;
}

static int on_packet(void *ctx, const struct prec_packet *p)
{
	struct rstate *st = ctx;
	struct ana_trace *s = st->s;
	if (p->pkt->data_case == PERFREC__PACKET__DATA_OFF_CPU && st->o->off_cpu)
		return on_offcpu(st, p);
	if (p->pkt->data_case != PERFREC__PACKET__DATA_SAMPLE || st->o->off_cpu)
		return 0;
	const Perfrec__Sample *smp = p->pkt->sample;
	const struct ana_filter *f = st->o->filter;
	int ev = ana_trace_event_of(s, smp->id);
	const char *comm = NULL;
	if (f) {
		if (!ana_filter_cpu(f, smp->cpu) || !ana_filter_pid(f, smp->pid) ||
		    !ana_filter_tid(f, smp->tid) || !ana_filter_time(f, p->time) ||
		    !ana_filter_event(f, ana_trace_event_name(s, ev)))
			goto out_filtered;
		if (f->ncomms) {
			comm = ana_trace_comm_name(s, smp->tid, p->time);
			if (!comm)
				return -ENOMEM;
			if (!ana_filter_comm(f, comm))
				goto out_filtered;
		}
	}
	uint64_t w = smp->period ? smp->period : 1;
	struct rkey k;
	memset(&k, 0, sizeof(k));
	if (st->use[ANA_KEY_COMM] && !comm && !(comm = ana_trace_comm_name(s, smp->tid, p->time)))
		return -ENOMEM;
	if (st->use[ANA_KEY_COMM])
		k.comm = comm;
	if (st->use[ANA_KEY_PID])
		k.pid = smp->pid;
	if (st->use[ANA_KEY_TID])
		k.tid = smp->tid;
	if (st->use[ANA_KEY_CPU])
		k.cpu = smp->cpu;
	if (st->use[ANA_KEY_EVENT])
		k.event = ev;
	st->samples++;
	st->period += w;
	if (!st->need_frames)
		return add(st, &k, w, 1, 0);
	const struct ana_report_opts *o = st->o;
	int n = ana_resolve_sample(s, p, st->frames,
				   o->children || o->tree || o->on_sample ? MAX_FRAMES : 1);
	if (n < 0)
		return n;
	if (o->on_sample || o->tree)
		for (int i = 0; i < n; i++)
			if (!(st->frames[i].sym = ana_frame_name(s, &st->frames[i])))
				return -ENOMEM;
	if (o->on_sample) {
		if (!comm && !(comm = ana_trace_comm_name(s, smp->tid, p->time)))
			return -ENOMEM;
	}
	/* Self: the leaf. Children: each distinct (dso, sym) once. Names
	 * are kept in frames[].sym for the duplicate check. */
	int ret = count_stack(st, &k, n, w, 1);
	if (ret < 0)
		return ret;
	if (o->on_sample) {
		struct ana_report_sample rs = { .p = p, .event = ev, .comm = comm,
						.weight = w, .frames = st->frames,
						.nframes = n };
		return o->on_sample(o->ctx, &rs);
	}
	return 0;

out_filtered:
	st->filtered_out++;
	return 0;
}

static int cmp_str(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a)
		return -1;
	if (!b)
		return 1;
	return strcmp(a, b);
}

/* One row to sort: C11 qsort has no context argument, so each element
 * carries what the comparison needs. */
struct row {
	const struct rkey *k;
	const struct rval *v;
	int children;
};

static int cmp_rows(const void *pa, const void *pb)
{
	const struct row *ra = pa, *rb = pb;
	const struct rval *x = ra->v, *y = rb->v;
	const struct rkey *kx = ra->k, *ky = rb->k;
	uint64_t px = ra->children ? x->child_period : x->period;
	uint64_t py = ra->children ? y->child_period : y->period;
	if (px != py)
		return px > py ? -1 : 1;
	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	int c;
	if ((c = cmp_str(kx->comm, ky->comm)))
		return c;
	if (kx->pid != ky->pid)
		return kx->pid < ky->pid ? -1 : 1;
	if (kx->tid != ky->tid)
		return kx->tid < ky->tid ? -1 : 1;
	if (kx->cpu != ky->cpu)
		return kx->cpu < ky->cpu ? -1 : 1;
	if ((c = cmp_str(kx->dso, ky->dso)))
		return c;
	if ((c = cmp_str(kx->sym, ky->sym)))
		return c;
	return kx->event < ky->event ? -1 : kx->event > ky->event;
}

static double pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

/* A row's call tree as text (malloc'd), or NULL when out of memory. */
static char *tree_text(const struct rval *v, const struct rstate *st)
{
	const struct ana_report_opts *o = st->o;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	double limit = o->percent_limit > 0 ? o->percent_limit : 0.5;
	int ret = ana_calltree_print(v->tree, f, st->period,
				     o->children ? v->child_period : v->period,
				     (uint64_t)((double)st->period * limit / 100.0));
	if (fclose(f) || ret < 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* report --off-cpu: what was recorded, what is shown, what was lost. */
static void offcpu_summary(struct ana_trace *s, const struct rstate *st,
			   struct ana_table *sum)
{
	int ev = ana_trace_offcpu_event(s);
	ana_kv_num(sum, "offcpu_intervals", "%" PRIu64, s->offcpu_intervals);
	ana_kv_num(sum, "offcpu_sums", "%" PRIu64, s->offcpu_sums);
	ana_kv_num(sum, "offcpu_ms", "%.3f", (double)s->offcpu_ns / 1e6);
	if (ev >= 0)
		ana_kv_num(sum, "threshold_ms", "%.3f",
			   (double)s->events[ev]->off_cpu_threshold / 1e6);
	ana_kv_num(sum, "blocks_shown", "%" PRIu64, st->samples);
	ana_kv_num(sum, "offcpu_ms_shown", "%.3f", (double)st->period / 1e6);
	if (ev < 0 && !s->offcpu_intervals && !s->offcpu_sums)
		ana_kv_str(sum, "note", "no off-CPU data in this trace: record with "
			   "perfrec record --off-cpu");
	else if (!st->samples)
		ana_kv_str(sum, "note", "no off-CPU time passed the filters");
	/* what the BPF program could not count, and the rings lost */
	ana_kv_num(sum, "lost", "%" PRIu64, s->loss_count[PERFREC__LOSS__KIND__KERNEL_LOST] +
		   s->loss_count[PERFREC__LOSS__KIND__LOST_SAMPLES] +
		   s->loss_count[PERFREC__LOSS__KIND__RECORDER_DROPPED]);
	ana_kv_num(sum, "bpf_blocks_unmeasured", "%" PRIu64,
		   s->loss_count[PERFREC__LOSS__KIND__BPF_MAP_FULL]);
	ana_kv_num(sum, "bpf_stacks_lost", "%" PRIu64,
		   s->loss_count[PERFREC__LOSS__KIND__BPF_STACK_LOST]);
	if (s->ndamage || s->torn)
		ana_kv_num(sum, "damaged_frames", "%zu", s->ndamage);
}

/* The default keys when none are given: comm,dso,sym. */
static const struct ana_report_opts *with_keys(const struct ana_report_opts *o,
					       struct ana_report_opts *def)
{
	if (o->nkeys)
		return o;
	*def = *o;
	def->nkeys = 3;
	def->keys[0] = ANA_KEY_COMM;
	def->keys[1] = ANA_KEY_DSO;
	def->keys[2] = ANA_KEY_SYM;
	return def;
}

static void rstate_release(struct rstate *st)
{
	for (size_t i = 0; st->o && st->o->tree && i < prec_hashmap_count(&st->table); i++) {
		struct rval *v = prec_hashmap_val(&st->table, i);
		if (v->tree)
			ana_stree_release(v->tree);
		free(v->tree);
	}
	free(st->path);
	free(st->frames);
	prec_hashmap_release(&st->table);
}

/* Gather and aggregate: one pass over s into st->table. st is released
 * by the caller, also on error. */
static int aggregate(struct ana_trace *s, const struct ana_report_opts *o,
		     struct rstate *st)
{
	memset(st, 0, sizeof(*st));
	st->s = s;
	st->o = o;
	for (size_t i = 0; i < o->nkeys; i++)
		st->use[o->keys[i]] = 1;
	st->need_frames = st->use[ANA_KEY_DSO] || st->use[ANA_KEY_SYM] || o->children ||
			  o->tree || o->on_sample;
	prec_hashmap_init(&st->table, sizeof(struct rkey), sizeof(struct rval));
	st->frames = calloc(MAX_FRAMES, sizeof(*st->frames));
	if (o->tree)
		st->path = calloc(MAX_FRAMES, sizeof(*st->path));
	if (!st->frames || (o->tree && !st->path))
		return -ENOMEM;
	ana_trace_set_kinds(s, PREC_KIND(o->off_cpu ? PERFREC__PACKET__DATA_OFF_CPU :
					   PERFREC__PACKET__DATA_SAMPLE));
	int ret = ana_trace_scan(s, "report", on_packet, st);
	ana_trace_set_kinds(s, 0);
	return ret;
}

static void row_of(const struct rstate *st, const struct rkey *k, const struct rval *v,
		   struct ana_report_row *r)
{
	memset(r, 0, sizeof(*r));
	r->comm = k->comm;
	r->dso = k->dso;
	r->sym = k->sym;
	r->pid = k->pid;
	r->tid = k->tid;
	r->cpu = k->cpu;
	if (st->use[ANA_KEY_EVENT])
		r->event = ana_trace_event_name(st->s, k->event);
	r->samples = v->samples;
	r->period = v->period;
	r->child_samples = v->child_samples;
	r->child_period = v->child_period;
}

int ana_report_rows(struct ana_trace *s, const struct ana_report_opts *o,
		    int (*on_row)(void *ctx, const struct ana_report_row *r), void *ctx,
		    struct ana_report_totals *tot)
{
	struct ana_report_opts def;
	struct rstate st;
	o = with_keys(o, &def);
	int ret = aggregate(s, o, &st);
	for (size_t i = 0; !ret && on_row && i < prec_hashmap_count(&st.table); i++) {
		struct ana_report_row r;
		row_of(&st, prec_hashmap_key(&st.table, i), prec_hashmap_val(&st.table, i), &r);
		ret = on_row(ctx, &r);
	}
	if (!ret && tot) {
		tot->samples = st.samples;
		tot->period = st.period;
		tot->filtered_out = st.filtered_out;
	}
	rstate_release(&st);
	return ret;
}

const char *ana_report_key_name(int key)
{
	return key >= 0 && key < ANA_NKEYS ? key_names[key] : NULL;
}

void ana_report_key_cols(struct ana_table *t, const struct ana_report_opts *o)
{
	for (size_t i = 0; i < o->nkeys; i++)
		ana_table_col(t, key_names[o->keys[i]], key_headers[o->keys[i]],
			      o->keys[i] == ANA_KEY_PID || o->keys[i] == ANA_KEY_TID ||
			      o->keys[i] == ANA_KEY_CPU ? ANA_NUM : ANA_STR);
}

void ana_report_key_cells(struct ana_table *t, const struct ana_report_opts *o,
			  const struct ana_report_row *r)
{
	for (size_t i = 0; i < o->nkeys; i++) {
		switch (o->keys[i]) {
		case ANA_KEY_COMM: ana_cell_str(t, r->comm); break;
		case ANA_KEY_PID: ana_cell_num(t, "%" PRIu32, r->pid); break;
		case ANA_KEY_TID: ana_cell_num(t, "%" PRIu32, r->tid); break;
		case ANA_KEY_CPU: ana_cell_num(t, "%" PRIu32, r->cpu); break;
		case ANA_KEY_DSO: ana_cell_str(t, r->dso ? r->dso : "[unknown]"); break;
		case ANA_KEY_SYM: ana_cell_str(t, r->sym); break;
		case ANA_KEY_EVENT: ana_cell_str(t, r->event); break;
		}
	}
}

int ana_report_run(struct ana_trace *s, const struct ana_report_opts *o,
		   struct ana_doc *doc)
{
	struct ana_report_opts def;
	struct rstate st;
	struct row *order = NULL;
	o = with_keys(o, &def);
	int ret = aggregate(s, o, &st);
	if (ret < 0)
		goto out;

	size_t n = prec_hashmap_count(&st.table);
	order = malloc((n ? n : 1) * sizeof(*order));
	ret = -ENOMEM;
	if (!order)
		goto out;
	for (size_t i = 0; i < n; i++) {
		order[i].k = prec_hashmap_key(&st.table, i);
		order[i].v = prec_hashmap_val(&st.table, i);
		order[i].children = o->children;
	}
	prec_sort(order, n, sizeof(*order), cmp_rows);

	struct ana_table *sum = ana_doc_kv(doc, "summary");
	ana_kv_str(sum, "file", s->path);
	if (o->off_cpu) {
		offcpu_summary(s, &st, sum);
		goto rows;
	}
	ana_kv_num(sum, "samples", "%" PRIu64, s->samples);
	ana_kv_num(sum, "samples_shown", "%" PRIu64, st.samples);
	if (!s->samples)
		ana_kv_str(sum, "note", "no samples in this trace: record with a "
			   "sampling event (perfrec record -e cpu-clock -F 4000)");
	else if (!st.samples)
		ana_kv_str(sum, "note", "no sample passed the filters");
	ana_kv_num(sum, "total_period", "%" PRIu64, st.period);
	{
		char evs[1024];
		size_t off = 0;
		evs[0] = '\0';
		for (size_t i = 0; i < s->nevents && off < sizeof(evs); i++)
			if (s->events[i]->sampling)
				off += (size_t)snprintf(evs + off, sizeof(evs) - off, "%s%s",
							off ? "," : "",
							ana_trace_event_name(s, (int)i));
		ana_kv_str(sum, "events", evs);
	}
	ana_kv_num(sum, "lost", "%" PRIu64,
		   s->loss_count[0] + s->loss_count[1] + s->loss_count[2]);
	if (s->ustack.samples) {
		/* --call-graph dwarf: how the copied user stacks unwound */
		char stops[512];
		size_t off = 0;
		stops[0] = '\0';
		for (int k = 0; k < 8 && off < sizeof(stops); k++)
			if (s->ustack.stops[k])
				off += (size_t)snprintf(stops + off, sizeof(stops) - off,
							"%s%s %" PRIu64, off ? ", " : "",
							prec_unwind_stop_name(k), s->ustack.stops[k]);
		ana_kv_num(sum, "user_stacks", "%" PRIu64, s->ustack.samples);
		ana_kv_num(sum, "user_frames_unwound", "%" PRIu64, s->ustack.frames);
		if (s->ustack.fp_frames)
			ana_kv_num(sum, "user_frames_by_frame_pointer", "%" PRIu64,
				   s->ustack.fp_frames);
		if (s->ustack.no_arch)
			ana_kv_num(sum, "user_stacks_unknown_arch", "%" PRIu64, s->ustack.no_arch);
		ana_kv_str(sum, "unwind_stops", stops);
	}
	if (s->ndamage || s->torn)
		ana_kv_num(sum, "damaged_frames", "%zu", s->ndamage);
	if (s->ndamage)
		ana_kv_num(sum, "packets_lost_in_damage", "%" PRIu64,
			   ana_trace_lost_packets(s));

rows:;
	struct ana_table *t = ana_doc_table(doc, "rows", NULL);
	if (o->children)
		ana_table_col(t, "children", "Children", ANA_PCT);
	ana_table_col(t, "overhead", o->children ? "Self" : "Overhead", ANA_PCT);
	if (o->off_cpu) {
		if (o->children)
			ana_table_col(t, "children_ms", "Children ms", ANA_NUM);
		ana_table_col(t, "offcpu_ms", o->children ? "Self ms" : "Off-CPU ms", ANA_NUM);
		ana_table_col(t, "blocks", "Blocks", ANA_NUM);
	} else {
		ana_table_col(t, "samples", "Samples", ANA_NUM);
		ana_table_col(t, "period", "Period", ANA_NUM);
	}
	ana_report_key_cols(t, o);
	size_t rows = o->top && o->top < n ? o->top : n;
	/* rows are sorted by the weight the limit is of */
	while (o->percent_limit > 0 && rows &&
	       pct(o->children ? order[rows - 1].v->child_period : order[rows - 1].v->period,
		   st.period) < o->percent_limit)
		rows--;
	for (size_t r = 0; r < rows; r++) {
		const struct rkey *k = order[r].k;
		const struct rval *v = order[r].v;
		ana_table_row(t);
		if (o->children)
			ana_cell_num(t, "%.2f", pct(v->child_period, st.period));
		ana_cell_num(t, "%.2f", pct(v->period, st.period));
		if (o->off_cpu) {
			if (o->children)
				ana_cell_num(t, "%.3f", (double)v->child_period / 1e6);
			ana_cell_num(t, "%.3f", (double)v->period / 1e6);
			ana_cell_num(t, "%" PRIu64, v->samples);
		} else {
			ana_cell_num(t, "%" PRIu64, v->samples);
			ana_cell_num(t, "%" PRIu64, v->period);
		}
		struct ana_report_row row;
		row_of(&st, k, v, &row);
		ana_report_key_cells(t, o, &row);
		if (o->tree && v->tree)
			ana_table_text_after(t, tree_text(v, &st));
	}
	ret = 0;
out:
	free(order);
	rstate_release(&st);
	return ret;
}
