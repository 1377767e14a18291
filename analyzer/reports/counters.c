/*
 * counters.c - final values, rates and intervals of counting groups.
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/reports/counters.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/hashmap.h"
#include "analyzer/read/trace.h"
#include "format/scale.h"

/* Keys hold kernel ids: ids are mapped to member events after the pass,
 * so snapshots met before their EventDesc (single pass) still count. */
struct inst_key {     /* one counter (id) of one instance */
	uint32_t group;
	int32_t cpu, pid;
	uint32_t pad;
	uint64_t id;
};

struct inst_val {
	uint64_t raw, enabled, running, time;
	int final;
};

struct tick_key {
	uint64_t time;
	uint64_t id;      /* kernel id during the pass; event position after */
	uint32_t group, pad;
};

struct tick_val {
	uint64_t raw, enabled, running;
};

struct cstate {
	struct ana_trace *s;
	struct prec_hashmap inst;    /* inst_key -> inst_val */
	struct prec_hashmap ticks;   /* tick_key (by id) -> tick_val */
	uint64_t snapshots, unmatched;
};

static int on_packet(void *ctx, const struct prec_packet *p)
{
	struct cstate *st = ctx;
	if (st->s->opts.single_pass) {
		int ret = ana_trace_feed(st->s, p);
		if (ret < 0)
			return ret;
	}
	if (p->pkt->data_case != PERFREC__PACKET__DATA_GROUP)
		return 0;
	const Perfrec__GroupSnapshot *g = p->pkt->group;
	const Perfrec__GroupRead *r = g->read;
	if (!r)
		return 0;
	st->snapshots++;
	size_t n = r->n_ids < r->n_values ? r->n_ids : r->n_values;
	for (size_t i = 0; i < n; i++) {
		struct inst_key ik;
		memset(&ik, 0, sizeof(ik));
		ik.group = g->group;
		ik.id = r->ids[i];
		ik.cpu = g->cpu;
		ik.pid = g->pid;
		struct inst_val *iv = prec_hashmap_get(&st->inst, &ik, NULL);
		if (!iv)
			return -ENOMEM;
		/* Keep the final read, else the latest. */
		if (!iv->final && (g->final || p->time >= iv->time)) {
			iv->raw = r->values[i];
			iv->enabled = r->time_enabled;
			iv->running = r->time_running;
			iv->time = p->time;
			iv->final = g->final;
		}
		struct tick_key tk;
		memset(&tk, 0, sizeof(tk));
		tk.time = p->time;
		tk.group = g->group;
		tk.id = r->ids[i];
		struct tick_val *tv = prec_hashmap_get(&st->ticks, &tk, NULL);
		if (!tv)
			return -ENOMEM;
		tv->raw += r->values[i];
		tv->enabled += r->time_enabled;
		tv->running += r->time_running;
	}
	return 0;
}

static int event_of_id(const struct ana_trace *s, uint64_t id)
{
	const int *ev = prec_hashmap_find(&s->id2event, &id);
	return ev ? *ev : -1;
}

static const char *group_name(const struct ana_trace *s, uint32_t g)
{
	for (size_t i = 0; i < s->ngroups; i++)
		if (s->groups[i]->index == g && s->groups[i]->name && *s->groups[i]->name)
			return s->groups[i]->name;
	return "-";
}

struct total {
	uint32_t group, member;
	uint64_t raw, scaled, enabled, running, max_enabled;
	int counted, multiplexed;
};

static int cmp_total(const void *a, const void *b)
{
	const struct total *x = a, *y = b;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->member < y->member ? -1 : x->member > y->member;
}

static int cmp_tick(const void *a, const void *b)
{
	const struct tick_key *x = a, *y = b;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int find_total(const struct total *t, size_t n, const char *name,
		      const struct ana_trace *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(ana_trace_event_name(s, (int)t[i].member), name))
			return (int)i;
	return -1;
}

struct ana_counters {
	struct cstate st;
};

struct ana_counters *ana_counters_new(void)
{
	struct ana_counters *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	prec_hashmap_init(&c->st.inst, sizeof(struct inst_key), sizeof(struct inst_val));
	prec_hashmap_init(&c->st.ticks, sizeof(struct tick_key), sizeof(struct tick_val));
	return c;
}

void ana_counters_free(struct ana_counters *c)
{
	if (!c)
		return;
	prec_hashmap_release(&c->st.inst);
	prec_hashmap_release(&c->st.ticks);
	free(c);
}

int ana_counters_add(struct ana_counters *c, struct ana_trace *s)
{
	c->st.s = s;
	/* Group snapshots (and, in a single pass, what names them). */
	ana_trace_set_kinds(s, PREC_KIND(PERFREC__PACKET__DATA_GROUP) |
			      (s->opts.single_pass ? ANA_KINDS_TRACE : 0));
	int ret = ana_trace_scan(s, "counters", on_packet, &c->st);
	ana_trace_set_kinds(s, 0);
	if (ret >= 0 && s->opts.single_pass)
		ret = ana_trace_finish(s);
	return ret < 0 ? ret : 0;
}

int ana_counters_run(struct ana_trace *s, const struct ana_counters_opts *o,
		     struct ana_doc *doc, char *err, size_t errlen)
{
	struct ana_counters *c = ana_counters_new();
	if (!c)
		return -ENOMEM;
	int ret = ana_counters_add(c, s);
	if (ret >= 0)
		ret = ana_counters_render(c, s, NULL, o, doc, err, errlen);
	ana_counters_free(c);
	return ret;
}

int ana_counters_render(struct ana_counters *c, struct ana_trace *s, const char *file,
			const struct ana_counters_opts *o, struct ana_doc *doc,
			char *err, size_t errlen)
{
	struct cstate st = c->st;   /* maps owned by c, released by its free */
	struct total *tot = NULL;
	size_t ntot = 0;
	struct { struct tick_key k; struct tick_val v; } *tk = NULL;
	char *ra = NULL;
	struct prec_hashmap evticks;   /* tick_key (by event) -> tick_val */
	prec_hashmap_init(&evticks, sizeof(struct tick_key), sizeof(struct tick_val));
	int ret;
	/* Ticks: sum the ids of one member. */
	for (size_t i = 0; i < prec_hashmap_count(&st.ticks); i++) {
		struct tick_key k = *(const struct tick_key *)prec_hashmap_key(&st.ticks, i);
		const struct tick_val *v = prec_hashmap_val(&st.ticks, i);
		int ev = event_of_id(s, k.id);
		if (ev < 0)
			continue;
		k.id = (uint64_t)ev;
		struct tick_val *e = prec_hashmap_get(&evticks, &k, NULL);
		ret = -ENOMEM;
		if (!e)
			goto out;
		e->raw += v->raw;
		e->enabled += v->enabled;
		e->running += v->running;
	}

	/* Totals per (group, member) over instances. */
	size_t ni = prec_hashmap_count(&st.inst);
	tot = calloc(ni ? ni : 1, sizeof(*tot));
	ret = -ENOMEM;
	if (!tot)
		goto out;
	for (size_t i = 0; i < ni; i++) {
		const struct inst_key *k = prec_hashmap_key(&st.inst, i);
		const struct inst_val *v = prec_hashmap_val(&st.inst, i);
		int ev = event_of_id(s, k->id);
		if (ev < 0) {
			st.unmatched++;
			continue;
		}
		size_t j;
		for (j = 0; j < ntot; j++)
			if (tot[j].group == k->group && tot[j].member == (uint32_t)ev)
				break;
		if (j == ntot) {
			tot[ntot].group = k->group;
			tot[ntot].member = (uint32_t)ev;
			ntot++;
		}
		struct total *t = &tot[j];
		t->raw += v->raw;
		t->enabled += v->enabled;
		t->running += v->running;
		if (v->enabled > t->max_enabled)
			t->max_enabled = v->enabled;
		struct prec_scaled sc;
		int status = prec_scale(v->raw, v->enabled, v->running, &sc);
		if (status != PREC_SCALE_NOT_COUNTED) {
			t->counted = 1;
			t->scaled += sc.value;
			if (status == PREC_SCALE_MULTIPLEXED)
				t->multiplexed = 1;
		}
	}
	prec_sort(tot, ntot, sizeof(*tot), cmp_total);

	struct ana_table *sum = ana_doc_kv(doc, "summary");
	ana_kv_str(sum, "file", file ? file : s->path);
	ana_kv_num(sum, "groups", "%zu", s->ngroups);
	ana_kv_num(sum, "snapshots", "%" PRIu64, st.snapshots);
	if (!st.snapshots)
		ana_kv_str(sum, "note", "no counter snapshots in this trace: record "
			   "with --counters '{task-clock,page-faults}' (and --interval)");
	if (st.unmatched)
		ana_kv_num(sum, "unmatched_values", "%" PRIu64, st.unmatched);

	struct ana_table *t = ana_doc_table(doc, "counters", NULL);
	ana_table_col(t, "group", "Group", ANA_STR);
	ana_table_col(t, "event", "Event", ANA_STR);
	ana_table_col(t, "raw", "Raw", ANA_NUM);
	ana_table_col(t, "scaled", "Scaled", ANA_NUM);
	ana_table_col(t, "per_sec", "Per second", ANA_NUM);
	ana_table_col(t, "running_pct", "Running", ANA_PCT);
	for (size_t i = 0; i < ntot; i++) {
		const struct total *x = &tot[i];
		ana_table_row(t);
		ana_cell_str(t, group_name(s, x->group));
		ana_cell_str(t, ana_trace_event_name(s, (int)x->member));
		ana_cell_num(t, "%" PRIu64, x->raw);
		if (!x->counted) {
			ana_cell_null(t, "<not counted>");
			ana_cell_null(t, "-");
		} else {
			ana_cell_num(t, "%" PRIu64, x->scaled);
			if (x->max_enabled)
				ana_cell_num(t, "%.2f", (double)x->scaled * 1e9 / (double)x->max_enabled);
			else
				ana_cell_null(t, "-");
		}
		ana_cell_num(t, "%.2f", x->enabled ? 100.0 * (double)x->running / (double)x->enabled : 0.0);
	}

	if (o->ratio) {
		const char *slash = strchr(o->ratio, '/');
		ret = -EINVAL;
		if (!slash || slash == o->ratio || !slash[1]) {
			snprintf(err, errlen, "bad --ratio '%s': expected EVENT_A/EVENT_B", o->ratio);
			goto out;
		}
		ra = strdup(o->ratio);
		if (!ra) {
			ret = -ENOMEM;
			goto out;
		}
		ra[slash - o->ratio] = '\0';
		const char *rb = ra + (slash - o->ratio) + 1;
		int ia = find_total(tot, ntot, ra, s), ib = find_total(tot, ntot, rb, s);
		if (ia < 0 || ib < 0) {
			snprintf(err, errlen, "--ratio: no counted event '%s' in this trace "
				 "(see the counters table for names)", ia < 0 ? ra : rb);
			goto out;
		}
		struct ana_table *rt = ana_doc_table(doc, "ratio", NULL);
		ana_table_col(rt, "ratio", "Ratio", ANA_STR);
		ana_table_col(rt, "value", "Value", ANA_NUM);
		ana_table_row(rt);
		ana_cell_str(rt, o->ratio);
		if (tot[ib].scaled && tot[ia].counted)
			ana_cell_num(rt, "%.4f", (double)tot[ia].scaled / (double)tot[ib].scaled);
		else
			ana_cell_null(rt, "-");
	}

	if (o->interval || o->on_tick) {
		size_t nt = prec_hashmap_count(&evticks);
		tk = malloc((nt ? nt : 1) * sizeof(*tk));
		ret = -ENOMEM;
		if (!tk)
			goto out;
		for (size_t i = 0; i < nt; i++) {
			tk[i].k = *(const struct tick_key *)prec_hashmap_key(&evticks, i);
			tk[i].v = *(const struct tick_val *)prec_hashmap_val(&evticks, i);
		}
		prec_sort(tk, nt, sizeof(*tk), cmp_tick);
		struct ana_table *it = NULL;
		if (o->interval) {
			it = ana_doc_table(doc, "intervals", NULL);
			ana_table_col(it, "time_s", "Time s", ANA_NUM);
			ana_table_col(it, "group", "Group", ANA_STR);
			ana_table_col(it, "event", "Event", ANA_STR);
			ana_table_col(it, "delta", "Delta", ANA_NUM);
			ana_table_col(it, "per_sec", "Per second", ANA_NUM);
			ana_table_col(it, "running_pct", "Running", ANA_PCT);
		}
		for (size_t i = 0; i < nt; i++) {
			/* Previous tick of the same (group, member). */
			const struct tick_val *prev = NULL;
			uint64_t prev_time = 0;
			for (size_t j = i; j-- > 0;) {
				if (tk[j].k.group != tk[i].k.group)
					break;
				if (tk[j].k.id == tk[i].k.id) {
					prev = &tk[j].v;
					prev_time = tk[j].k.time;
					break;
				}
			}
			uint64_t draw = tk[i].v.raw - (prev ? prev->raw : 0);
			uint64_t den = tk[i].v.enabled - (prev ? prev->enabled : 0);
			uint64_t drun = tk[i].v.running - (prev ? prev->running : 0);
			if (prev && (tk[i].v.raw < prev->raw || tk[i].v.enabled < prev->enabled ||
				     tk[i].v.running < prev->running))
				draw = den = drun = 0;   /* counter went back: instance set changed */
			struct prec_scaled sc;
			int status = prec_scale(draw, den, drun, &sc);
			/* The first tick's interval starts at the trace start. */
			uint64_t from = prev ? prev_time : s->start;
			if (o->on_tick) {
				struct ana_counter_tick ct = {
					.group = group_name(s, tk[i].k.group),
					.event = ana_trace_event_name(s, (int)tk[i].k.id),
					.time = tk[i].k.time, .from = from,
					.counted = status != PREC_SCALE_NOT_COUNTED,
				};
				ct.delta = ct.counted ? sc.value : 0;
				if ((ret = o->on_tick(o->ctx, &ct)) < 0)
					goto out;
			}
			if (!it)
				continue;
			ana_table_row(it);
			ana_cell_num(it, "%.6f", (double)(int64_t)(tk[i].k.time - s->start) / 1e9);
			ana_cell_str(it, group_name(s, tk[i].k.group));
			ana_cell_str(it, ana_trace_event_name(s, (int)tk[i].k.id));
			if (status == PREC_SCALE_NOT_COUNTED) {
				ana_cell_null(it, "<not counted>");
				ana_cell_null(it, "-");
			} else {
				ana_cell_num(it, "%" PRIu64, sc.value);
				uint64_t dt = tk[i].k.time > from ? tk[i].k.time - from : 0;
				if (dt)
					ana_cell_num(it, "%.2f", (double)sc.value * 1e9 / (double)dt);
				else
					ana_cell_null(it, "-");
			}
			ana_cell_num(it, "%.2f", den ? 100.0 * (double)drun / (double)den : 0.0);
		}
	}
	ret = 0;
out:
	free(ra);
	free(tk);
	free(tot);
	prec_hashmap_release(&evticks);
	return ret;
}
