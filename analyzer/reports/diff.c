/*
 * diff.c - report rows of two sides, matched by key text.
 */
#include "analyzer/reports/diff.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/read/strpool.h"
#include "analyzer/read/trace.h"
#include "analyzer/render/table.h"
#include "format/base/hashmap.h"

/* A key with its strings in the diff's pool (equal text, equal pointer);
 * fields outside the keys stay 0 / NULL. */
struct dkey {
	const char *comm, *dso, *sym, *event;
	uint32_t pid, tid, cpu;
};

struct dval {
	uint64_t samples[2], period[2];
};

struct ana_diff {
	struct ana_report_opts ro;   /* keys and top; filter set per trace */
	struct ana_strpool pool;
	struct prec_hashmap rows;    /* dkey -> dval */
	uint64_t samples[2], period[2];
	char *names[2];              /* "a.prec, b.prec" per side */
	int err;
};

struct ana_diff *ana_diff_new(const struct ana_diff_opts *o)
{
	struct ana_diff *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	if (o->nkeys) {
		memcpy(d->ro.keys, o->keys, sizeof(d->ro.keys));
		d->ro.nkeys = o->nkeys;
	} else {
		d->ro.keys[0] = ANA_KEY_SYM;
		d->ro.nkeys = 1;
	}
	d->ro.top = o->top;
	ana_strpool_init(&d->pool);
	prec_hashmap_init(&d->rows, sizeof(struct dkey), sizeof(struct dval));
	return d;
}

void ana_diff_free(struct ana_diff *d)
{
	if (!d)
		return;
	prec_hashmap_release(&d->rows);
	ana_strpool_release(&d->pool);
	free(d->names[0]);
	free(d->names[1]);
	free(d);
}

struct add_ctx {
	struct ana_diff *d;
	int side;
};

static int on_row(void *ctx, const struct ana_report_row *r)
{
	struct add_ctx *a = ctx;
	struct ana_diff *d = a->d;
	struct dkey k;
	memset(&k, 0, sizeof(k));
	k.comm = r->comm;
	k.dso = r->dso;
	k.sym = r->sym;
	k.event = r->event;
	if (ana_strpool_intern_in(&d->pool, &k.comm) || ana_strpool_intern_in(&d->pool, &k.dso) ||
	    ana_strpool_intern_in(&d->pool, &k.sym) || ana_strpool_intern_in(&d->pool, &k.event))
		return -ENOMEM;
	k.pid = r->pid;
	k.tid = r->tid;
	k.cpu = r->cpu;
	struct dval *v = prec_hashmap_get(&d->rows, &k, NULL);
	if (!v)
		return -ENOMEM;
	v->samples[a->side] += r->samples;
	v->period[a->side] += r->period;
	return 0;
}

static int append_name(char **names, const char *name)
{
	size_t old = *names ? strlen(*names) : 0, len = strlen(name);
	char *n = realloc(*names, old + len + 3);
	if (!n)
		return -ENOMEM;
	if (old)
		memcpy(n + old, ", ", 2), old += 2;
	memcpy(n + old, name, len + 1);
	*names = n;
	return 0;
}

void ana_diff_part_label(const struct ana_diff_part *p, char *buf, size_t len)
{
	const struct ana_filter *f = p->filter;
	const struct ana_trace *s = p->s;
	const char *name = p->name ? p->name : s->path;
	if (!f || !f->has_time) {
		snprintf(buf, len, "%s", name);
		return;
	}
	/* the resolved window, relative to the start (times are trace
	 * bytes: a window before the start shows as negative) */
	uint64_t end = s->end && s->end->end_time ? s->end->end_time : s->t_max;
	double a = (double)(int64_t)(f->tmin - s->start) / 1e9;
	double b = (double)(int64_t)((f->tmax == UINT64_MAX ? end : f->tmax) - s->start) / 1e9;
	if (f->tmin < s->start)
		a = -(double)(s->start - f->tmin) / 1e9;
	snprintf(buf, len, "%s %.3f-%.3f s", name, a, b);
}

int ana_diff_add(struct ana_diff *d, enum ana_diff_side side, struct ana_trace *s,
		 const struct ana_filter *f, const char *name)
{
	struct ana_report_opts ro = d->ro;
	struct ana_report_totals tot;
	struct add_ctx a = { d, side == ANA_DIFF_NEW };
	ro.filter = f;
	int ret = ana_report_rows(s, &ro, on_row, &a, &tot);
	if (ret < 0)
		return ret;
	d->samples[a.side] += tot.samples;
	d->period[a.side] += tot.period;
	char label[1024];
	struct ana_diff_part p = { s, f, name };
	ana_diff_part_label(&p, label, sizeof(label));
	return append_name(&d->names[a.side], label);
}

void ana_diff_totals(const struct ana_diff *d, enum ana_diff_side side,
		     uint64_t *samples, uint64_t *period)
{
	int i = side == ANA_DIFF_NEW;
	if (samples)
		*samples = d->samples[i];
	if (period)
		*period = d->period[i];
}

static double share(const struct ana_diff *d, int side, uint64_t period)
{
	return d->period[side] ? 100.0 * (double)period / (double)d->period[side] : 0.0;
}

double ana_diff_sym_share(const struct ana_diff *d, enum ana_diff_side side,
			  const char *sym)
{
	int i = side == ANA_DIFF_NEW;
	uint64_t p = 0;
	for (size_t r = 0; r < prec_hashmap_count(&d->rows); r++) {
		const struct dkey *k = prec_hashmap_key(&d->rows, r);
		if (k->sym && sym && !strcmp(k->sym, sym))
			p += ((const struct dval *)prec_hashmap_val(&d->rows, r))->period[i];
	}
	return share(d, i, p);
}

/* One row to sort: C11 qsort has no context argument, so each element
 * carries its shares. */
struct drow {
	const struct dkey *k;
	const struct dval *v;
	double base, new_, delta;
};

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

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_drows(const void *pa, const void *pb)
{
	const struct drow *a = pa, *b = pb;
	double x = a->delta < 0 ? -a->delta : a->delta;
	double y = b->delta < 0 ? -b->delta : b->delta;
	if (x != y)
		return x > y ? -1 : 1;
	if (a->new_ != b->new_)
		return a->new_ > b->new_ ? -1 : 1;
	if (a->base != b->base)
		return a->base > b->base ? -1 : 1;
	int c;
	if ((c = cmp_str(a->k->sym, b->k->sym)) || (c = cmp_str(a->k->dso, b->k->dso)) ||
	    (c = cmp_str(a->k->comm, b->k->comm)) || (c = cmp_str(a->k->event, b->k->event)) ||
	    (c = cmp_u32(a->k->pid, b->k->pid)) || (c = cmp_u32(a->k->tid, b->k->tid)))
		return c;
	return cmp_u32(a->k->cpu, b->k->cpu);
}

int ana_diff_render(struct ana_diff *d, struct ana_doc *doc)
{
	size_t n = prec_hashmap_count(&d->rows);
	struct drow *order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		order[i].k = prec_hashmap_key(&d->rows, i);
		order[i].v = prec_hashmap_val(&d->rows, i);
		order[i].base = share(d, 0, order[i].v->period[0]);
		order[i].new_ = share(d, 1, order[i].v->period[1]);
		order[i].delta = order[i].new_ - order[i].base;
	}
	prec_sort(order, n, sizeof(*order), cmp_drows);

	struct ana_table *sum = ana_doc_kv(doc, "summary");
	static const char *const side_names[2] = { "base", "new" };
	for (int s = 0; s < 2; s++) {
		char key[32];
		ana_kv_str(sum, side_names[s], d->names[s] ? d->names[s] : "");
		snprintf(key, sizeof(key), "%s_samples", side_names[s]);
		ana_kv_num(sum, key, "%" PRIu64, d->samples[s]);
		snprintf(key, sizeof(key), "%s_period", side_names[s]);
		ana_kv_num(sum, key, "%" PRIu64, d->period[s]);
	}
	if (!d->samples[0] || !d->samples[1])
		ana_kv_str(sum, "note", !d->samples[0] && !d->samples[1] ?
			   "no sample passed the filters on either side" :
			   !d->samples[0] ? "no sample passed the filters in base: "
			   "every share is new" : "no sample passed the filters in new: "
			   "every share is gone");

	struct ana_table *t = ana_doc_table(doc, "rows", NULL);
	ana_table_col(t, "delta", "Delta", ANA_PCT);
	ana_table_col(t, "base", "Base", ANA_PCT);
	ana_table_col(t, "new", "New", ANA_PCT);
	ana_table_col(t, "base_samples", "Base samples", ANA_NUM);
	ana_table_col(t, "new_samples", "New samples", ANA_NUM);
	ana_report_key_cols(t, &d->ro);
	size_t rows = d->ro.top && d->ro.top < n ? d->ro.top : n;
	for (size_t r = 0; r < rows; r++) {
		const struct drow *o = &order[r];
		struct ana_report_row row;
		memset(&row, 0, sizeof(row));
		row.comm = o->k->comm;
		row.dso = o->k->dso;
		row.sym = o->k->sym;
		row.event = o->k->event;
		row.pid = o->k->pid;
		row.tid = o->k->tid;
		row.cpu = o->k->cpu;
		ana_table_row(t);
		/* "+0.00" and "-0.00" read as a change: rounding decides */
		double delta = o->delta > -0.005 && o->delta < 0.005 ? 0.0 : o->delta;
		ana_cell_num(t, "%+.2f", delta);
		ana_cell_num(t, "%.2f", o->base);
		ana_cell_num(t, "%.2f", o->new_);
		ana_cell_num(t, "%" PRIu64, o->v->samples[0]);
		ana_cell_num(t, "%" PRIu64, o->v->samples[1]);
		ana_report_key_cells(t, &d->ro, &row);
	}
	free(order);
	return 0;
}
