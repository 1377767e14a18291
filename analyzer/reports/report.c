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
	"comm", "pid", "tid", "cpu", "dso", "sym", "event", "host",
};
static const char *const key_headers[ANA_NKEYS] = {
	"Command", "Pid", "Tid", "CPU", "Shared Object", "Symbol", "Event", "Host",
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
				 "cpu, dso, sym, event, host (comma-separated, each once)", arg);
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
	const char *comm, *dso, *sym, *host;
	uint32_t pid, tid, cpu;
	int32_t event;
};

struct rval {
	uint64_t samples, period;
	uint64_t child_samples, child_period;
	struct ana_stree *tree;   /* with o->tree: chains, outermost first */
};

/* One trace's pass: keys hold the trace's own names and event
 * positions until ana_report_add() folds them into the report. */
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

/* What the report keeps across traces: rows keyed by names interned in
 * its own pool (equal names of two files are one pointer) and events by
 * their position in the report's own list of names, plus the summary's
 * sums. For one trace the positions are the trace's own. */
struct ana_report {
	struct ana_report_opts o;
	struct prec_hashmap rows;
	struct ana_strpool pool;
	const char **events;       /* interned names, first seen first */
	int *sampling;
	size_t nevents;
	const char *file;          /* the first trace's path */
	size_t ntraces;
	uint64_t samples, samples_shown, period, filtered_out;
	uint64_t loss_count[ANA_NLOSS];
	uint64_t offcpu_intervals, offcpu_sums, offcpu_ns, threshold;
	int has_offcpu_event;
	uint64_t ustack_samples, ustack_frames, ustack_fp, ustack_no_arch, stops[8];
	size_t ndamage;
	int torn;
	uint64_t lost_packets;
	struct ana_loc *frames;
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
	const char *comm;
	int keep = ana_filter_sample(f, s, p, &comm);
	if (keep < 0)
		return keep;
	if (!keep)
		goto out_filtered;
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
	if ((c = cmp_str(kx->host, ky->host)))
		return c;
	return kx->event < ky->event ? -1 : kx->event > ky->event;
}

static double pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

/* A row's call tree as text (malloc'd), or NULL when out of memory. */
static char *tree_text(const struct rval *v, const struct ana_report *r)
{
	const struct ana_report_opts *o = &r->o;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	double limit = o->percent_limit > 0 ? o->percent_limit : 0.5;
	int ret = ana_calltree_print(v->tree, f, r->period,
				     o->children ? v->child_period : v->period,
				     (uint64_t)((double)r->period * limit / 100.0));
	if (fclose(f) || ret < 0) {
		free(text);
		return NULL;
	}
	return text;
}

static void free_trees(struct prec_hashmap *table)
{
	for (size_t i = 0; i < prec_hashmap_count(table); i++) {
		struct rval *v = prec_hashmap_val(table, i);
		if (v->tree)
			ana_stree_release(v->tree);
		free(v->tree);
		v->tree = NULL;
	}
}

/* report --off-cpu: what was recorded, what is shown, what was lost. */
static void offcpu_summary(const struct ana_report *r, struct ana_table *sum)
{
	ana_kv_num(sum, "offcpu_intervals", "%" PRIu64, r->offcpu_intervals);
	ana_kv_num(sum, "offcpu_sums", "%" PRIu64, r->offcpu_sums);
	ana_kv_num(sum, "offcpu_ms", "%.3f", (double)r->offcpu_ns / 1e6);
	if (r->has_offcpu_event)
		ana_kv_num(sum, "threshold_ms", "%.3f", (double)r->threshold / 1e6);
	ana_kv_num(sum, "blocks_shown", "%" PRIu64, r->samples_shown);
	ana_kv_num(sum, "offcpu_ms_shown", "%.3f", (double)r->period / 1e6);
	if (!r->has_offcpu_event && !r->offcpu_intervals && !r->offcpu_sums)
		ana_kv_str(sum, "note", "no off-CPU data in this trace: record with "
			   "perfrec record --off-cpu");
	else if (!r->samples_shown)
		ana_kv_str(sum, "note", "no off-CPU time passed the filters");
	/* what the BPF program could not count, and the rings lost */
	ana_kv_num(sum, "lost", "%" PRIu64, r->loss_count[PERFREC__LOSS__KIND__KERNEL_LOST] +
		   r->loss_count[PERFREC__LOSS__KIND__LOST_SAMPLES] +
		   r->loss_count[PERFREC__LOSS__KIND__RECORDER_DROPPED]);
	ana_kv_num(sum, "bpf_blocks_unmeasured", "%" PRIu64,
		   r->loss_count[PERFREC__LOSS__KIND__BPF_MAP_FULL]);
	ana_kv_num(sum, "bpf_stacks_lost", "%" PRIu64,
		   r->loss_count[PERFREC__LOSS__KIND__BPF_STACK_LOST]);
	if (r->ndamage || r->torn)
		ana_kv_num(sum, "damaged_frames", "%zu", r->ndamage);
}

struct ana_report *ana_report_new(const struct ana_report_opts *o)
{
	struct ana_report *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->o = *o;
	if (!r->o.nkeys) {
		r->o.nkeys = 3;
		r->o.keys[0] = ANA_KEY_COMM;
		r->o.keys[1] = ANA_KEY_DSO;
		r->o.keys[2] = ANA_KEY_SYM;
	}
	prec_hashmap_init(&r->rows, sizeof(struct rkey), sizeof(struct rval));
	ana_strpool_init(&r->pool);
	if (!(r->frames = calloc(MAX_FRAMES, sizeof(*r->frames)))) {
		ana_report_free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void ana_report_free(struct ana_report *r)
{
	if (!r)
		return;
	free_trees(&r->rows);
	prec_hashmap_release(&r->rows);
	ana_strpool_release(&r->pool);
	free(r->events);
	free(r->sampling);
	free(r->frames);
	free(r);
}

/* The report's position of the trace's event name (added when new). */
static int event_pos(struct ana_report *r, const char *name, int sampling)
{
	for (size_t i = 0; i < r->nevents; i++)
		if (r->events[i] == name) {
			r->sampling[i] |= sampling;
			return (int)i;
		}
	const char **e = realloc(r->events, (r->nevents + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	r->events = e;
	int *sm = realloc(r->sampling, (r->nevents + 1) * sizeof(*sm));
	if (!sm)
		return -ENOMEM;
	r->sampling = sm;
	e[r->nevents] = name;
	sm[r->nevents] = sampling;
	return (int)r->nevents++;
}

/* Moves one trace's rows into the report: names into its pool, event
 * positions into its list. */
static int fold(struct ana_report *r, struct rstate *st)
{
	struct ana_trace *s = st->s;
	int *map = calloc(s->nevents ? s->nevents : 1, sizeof(*map));
	if (!map)
		return -ENOMEM;
	int ret = 0;
	for (size_t i = 0; i < s->nevents && ret >= 0; i++) {
		const char *name = ana_strpool_intern(&r->pool, ana_trace_event_name(s, (int)i));
		ret = name ? event_pos(r, name, s->events[i]->sampling) : -ENOMEM;
		map[i] = ret;
	}
	const char *host = NULL;
	if (ret >= 0 && st->use[ANA_KEY_HOST]) {
		const char *h = s->header && s->header->hostname && *s->header->hostname ?
				s->header->hostname : "unknown";
		if (!(host = ana_strpool_intern(&r->pool, h)))
			ret = -ENOMEM;
	}
	size_t n = prec_hashmap_count(&st->table);
	for (size_t i = 0; i < n && ret >= 0; i++) {
		struct rkey k = *(const struct rkey *)prec_hashmap_key(&st->table, i);
		struct rval *v = prec_hashmap_val(&st->table, i);
		if ((ret = ana_strpool_intern_in(&r->pool, &k.comm)) < 0 ||
		    (ret = ana_strpool_intern_in(&r->pool, &k.dso)) < 0 ||
		    (ret = ana_strpool_intern_in(&r->pool, &k.sym)) < 0)
			break;
		k.host = host;
		if (st->use[ANA_KEY_EVENT] && k.event >= 0 && (size_t)k.event < s->nevents)
			k.event = map[k.event];
		struct rval *to = prec_hashmap_get(&r->rows, &k, NULL);
		if (!to) {
			ret = -ENOMEM;
			break;
		}
		to->samples += v->samples;
		to->period += v->period;
		to->child_samples += v->child_samples;
		to->child_period += v->child_period;
		/* a call tree names its frames from the trace's pool:
		 * merged with the names in the report's */
		if (v->tree && !to->tree && (to->tree = malloc(sizeof(*to->tree))))
			ana_stree_init(to->tree);
		if (v->tree && (!to->tree || ana_stree_merge(to->tree, v->tree, &r->pool) < 0)) {
			ret = -ENOMEM;
			break;
		}
	}
	free(map);
	return ret < 0 ? ret : 0;
}

/* The summary's sums of one trace. */
static void add_totals(struct ana_report *r, struct ana_trace *s, const struct rstate *st)
{
	if (!r->ntraces++)
		r->file = s->path;
	r->samples += s->samples;
	r->samples_shown += st->samples;
	r->filtered_out += st->filtered_out;
	r->period += st->period;
	for (int i = 0; i < ANA_NLOSS; i++)
		r->loss_count[i] += s->loss_count[i];
	r->offcpu_intervals += s->offcpu_intervals;
	r->offcpu_sums += s->offcpu_sums;
	r->offcpu_ns += s->offcpu_ns;
	int ev = ana_trace_offcpu_event(s);
	if (ev >= 0) {
		r->has_offcpu_event = 1;
		r->threshold = s->events[ev]->off_cpu_threshold;
	}
	r->ustack_samples += s->ustack.samples;
	r->ustack_frames += s->ustack.frames;
	r->ustack_fp += s->ustack.fp_frames;
	r->ustack_no_arch += s->ustack.no_arch;
	for (int k = 0; k < 8; k++)
		r->stops[k] += s->ustack.stops[k];
	r->ndamage += s->ndamage;
	r->torn |= s->torn;
	r->lost_packets += ana_trace_lost_packets(s);
}

int ana_report_add(struct ana_report *r, struct ana_trace *s)
{
	const struct ana_report_opts *o = &r->o;
	struct rstate st;
	memset(&st, 0, sizeof(st));
	st.s = s;
	st.o = o;
	for (size_t i = 0; i < o->nkeys; i++)
		st.use[o->keys[i]] = 1;
	st.need_frames = st.use[ANA_KEY_DSO] || st.use[ANA_KEY_SYM] || o->children ||
			 o->tree || o->on_sample;
	st.frames = r->frames;
	if (o->tree && !(st.path = calloc(MAX_FRAMES, sizeof(*st.path))))
		return -ENOMEM;
	prec_hashmap_init(&st.table, sizeof(struct rkey), sizeof(struct rval));
	ana_trace_set_kinds(s, PREC_KIND(o->off_cpu ? PERFREC__PACKET__DATA_OFF_CPU :
					   PERFREC__PACKET__DATA_SAMPLE));
	int ret = ana_trace_scan(s, "report", on_packet, &st);
	ana_trace_set_kinds(s, 0);
	if (ret >= 0)
		ret = fold(r, &st);
	if (ret >= 0)
		add_totals(r, s, &st);
	free_trees(&st.table);
	free(st.path);
	prec_hashmap_release(&st.table);
	return ret < 0 ? ret : 0;
}

static const char *event_name(const struct ana_report *r, int ev)
{
	return ev >= 0 && (size_t)ev < r->nevents ? r->events[ev] : "[unknown]";
}

static void row_of(const struct ana_report *r, const struct rkey *k, const struct rval *v,
		   struct ana_report_row *row)
{
	memset(row, 0, sizeof(*row));
	row->comm = k->comm;
	row->dso = k->dso;
	row->sym = k->sym;
	row->host = k->host;
	row->pid = k->pid;
	row->tid = k->tid;
	row->cpu = k->cpu;
	for (size_t i = 0; i < r->o.nkeys; i++)
		if (r->o.keys[i] == ANA_KEY_EVENT)
			row->event = event_name(r, k->event);
	row->samples = v->samples;
	row->period = v->period;
	row->child_samples = v->child_samples;
	row->child_period = v->child_period;
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
		case ANA_KEY_EVENT: ana_cell_str(t, r->event ? r->event : "[unknown]"); break;
		case ANA_KEY_HOST: ana_cell_str(t, r->host ? r->host : "unknown"); break;
		}
	}
}

int ana_report_render(struct ana_report *r, const char *file, struct ana_doc *doc)
{
	const struct ana_report_opts *o = &r->o;
	size_t n = prec_hashmap_count(&r->rows);
	struct row *order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		order[i].k = prec_hashmap_key(&r->rows, i);
		order[i].v = prec_hashmap_val(&r->rows, i);
		order[i].children = o->children;
	}
	prec_sort(order, n, sizeof(*order), cmp_rows);

	struct ana_table *sum = ana_doc_kv(doc, "summary");
	ana_kv_str(sum, "file", file ? file : r->file ? r->file : "");
	if (o->off_cpu) {
		offcpu_summary(r, sum);
		goto rows;
	}
	ana_kv_num(sum, "samples", "%" PRIu64, r->samples);
	ana_kv_num(sum, "samples_shown", "%" PRIu64, r->samples_shown);
	if (!r->samples)
		ana_kv_str(sum, "note", "no samples in this trace: record with a "
			   "sampling event (perfrec record -e cpu-clock -F 4000)");
	else if (!r->samples_shown)
		ana_kv_str(sum, "note", "no sample passed the filters");
	ana_kv_num(sum, "total_period", "%" PRIu64, r->period);
	{
		char evs[1024];
		size_t off = 0;
		evs[0] = '\0';
		for (size_t i = 0; i < r->nevents && off < sizeof(evs); i++)
			if (r->sampling[i])
				off += (size_t)snprintf(evs + off, sizeof(evs) - off, "%s%s",
							off ? "," : "", r->events[i]);
		ana_kv_str(sum, "events", evs);
	}
	ana_kv_num(sum, "lost", "%" PRIu64,
		   r->loss_count[0] + r->loss_count[1] + r->loss_count[2]);
	if (r->ustack_samples) {
		/* --call-graph dwarf: how the copied user stacks unwound */
		char stops[512];
		size_t off = 0;
		stops[0] = '\0';
		for (int k = 0; k < 8 && off < sizeof(stops); k++)
			if (r->stops[k])
				off += (size_t)snprintf(stops + off, sizeof(stops) - off,
							"%s%s %" PRIu64, off ? ", " : "",
							prec_unwind_stop_name(k), r->stops[k]);
		ana_kv_num(sum, "user_stacks", "%" PRIu64, r->ustack_samples);
		ana_kv_num(sum, "user_frames_unwound", "%" PRIu64, r->ustack_frames);
		if (r->ustack_fp)
			ana_kv_num(sum, "user_frames_by_frame_pointer", "%" PRIu64, r->ustack_fp);
		if (r->ustack_no_arch)
			ana_kv_num(sum, "user_stacks_unknown_arch", "%" PRIu64, r->ustack_no_arch);
		ana_kv_str(sum, "unwind_stops", stops);
	}
	if (r->ndamage || r->torn)
		ana_kv_num(sum, "damaged_frames", "%zu", r->ndamage);
	if (r->ndamage)
		ana_kv_num(sum, "packets_lost_in_damage", "%" PRIu64, r->lost_packets);

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
		   r->period) < o->percent_limit)
		rows--;
	for (size_t i = 0; i < rows; i++) {
		const struct rkey *k = order[i].k;
		const struct rval *v = order[i].v;
		ana_table_row(t);
		if (o->children)
			ana_cell_num(t, "%.2f", pct(v->child_period, r->period));
		ana_cell_num(t, "%.2f", pct(v->period, r->period));
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
		row_of(r, k, v, &row);
		ana_report_key_cells(t, o, &row);
		if (o->tree && v->tree)
			ana_table_text_after(t, tree_text(v, r));
	}
	free(order);
	return 0;
}

int ana_report_run(struct ana_trace *s, const struct ana_report_opts *o,
		   struct ana_doc *doc)
{
	struct ana_report *r = ana_report_new(o);
	if (!r)
		return -ENOMEM;
	int ret = ana_report_add(r, s);
	if (ret >= 0)
		ret = ana_report_render(r, NULL, doc);
	ana_report_free(r);
	return ret;
}

int ana_report_rows(struct ana_trace *s, const struct ana_report_opts *o,
		    int (*on_row)(void *ctx, const struct ana_report_row *r), void *ctx,
		    struct ana_report_totals *tot)
{
	struct ana_report *r = ana_report_new(o);
	if (!r)
		return -ENOMEM;
	int ret = ana_report_add(r, s);
	for (size_t i = 0; !ret && on_row && i < prec_hashmap_count(&r->rows); i++) {
		struct ana_report_row row;
		row_of(r, prec_hashmap_key(&r->rows, i), prec_hashmap_val(&r->rows, i), &row);
		ret = on_row(ctx, &row);
	}
	if (!ret && tot) {
		tot->samples = r->samples_shown;
		tot->period = r->period;
		tot->filtered_out = r->filtered_out;
	}
	ana_report_free(r);
	return ret;
}
