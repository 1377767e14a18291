/*
 * html.c - the HTML page: aggregates from the report and sched passes,
 * written into the page template (analyzer/render/html/page.html) with the CSS,
 * the data block and the script.
 *
 * Stacks enter the page through one function, flame_add_stack(): a tree
 * pair (caller and callee) per (kind, event). Samples come from report's
 * on_sample hook; another weighted stack source (off-CPU time) adds its
 * stacks with its own kind and the page shows its tree with the others.
 *
 * So that a selection (a time range, a thread) can filter the flame
 * graph in the page, each stack of the page's own trace is also counted
 * per (tree, time bin, thread, leaf node): written per node of the
 * caller tree's view, whose weights the page sums over what is selected;
 * the page's top-functions tables are recomputed from the same sums
 * (the nodes are per function and object, see the tags), its tasks
 * table from the tracks' runs per bin (write_sched_sel()), its counter
 * groups from the counters' interval deltas (write_counters()).
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/render/html.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyzer/reports/counters.h"
#include "analyzer/reports/diff.h"
#include "analyzer/render/html_assets.h"
#include "analyzer/reports/info.h"
#include "format/base/hashmap.h"
#include "analyzer/reports/report.h"
#include "analyzer/symbols/resolve.h"
#include "analyzer/reports/sched.h"
#include "analyzer/read/strpool.h"
#include "analyzer/read/trace.h"
#include "analyzer/render/stree.h"
#include "analyzer/render/table.h"
#include "analyzer/render/timeline.h"
#include "analyzer/render/tracks.h"

/* What a flame tree's weight is. */
enum flame_kind {
	FLAME_SAMPLES,   /* sample period (ns for cpu-clock), per event */
	FLAME_OFFCPU,    /* ns off-CPU (OffCpu packets of record --off-cpu) */
};

static const char *const flame_kind_names[] = { "samples", "offcpu" };

/* Node tags: the page colors by them. A frame's tag also holds its
 * object (1 + its position in page.dsos, 0 unknown) above TAG_BITS, so
 * that a function is a node per (symbol, object), the key of report's
 * --sort sym,dso rows, which the page's top-functions table recomputes
 * from the tree under a selection. */
enum { TAG_TASK = 0, TAG_USER = 1, TAG_KERNEL = 2, TAG_PRUNED = 3 };
#define TAG_BITS 2
#define TAG_KIND(t) ((t) & ((1u << TAG_BITS) - 1))

/* Timeline lanes: at most this many CPUs (more are counted as dropped),
 * and about this many buckets over all lanes (4096 per lane at most, 256
 * at least): ~25 bytes of page per bucket and per span, so ~2 MB at most
 * for a large host, whatever the trace length. */
#define TL_MAX_LANES 1024
#define TL_BUCKET_BUDGET 32768

/* Tracks: TK_BINS bins per track (about two pixels each on a laptop
 * screen; the page zooms into them, coarser than the CPU lanes), the
 * TK_MAX_PROCS busiest processes and at most TK_MAX_THREADS of their
 * busiest threads. A track is at most 4 x TK_BINS bytes of page (four
 * strings of one character per bin), so ~0.5 MB at most, whatever the
 * trace length and the number of threads; the rest are counted. */
#define TK_BINS 400
/* Selection data: at most about this many (time bin, thread, view node)
 * entries per tree (~25 bytes of page each); beyond, time bins are
 * merged two by two until they fit (a selection then snaps to them). */
#define SEL_BUDGET 20000
/* The tasks table's selection data: (time bin, thread) entries of ~25
 * bytes, merged like SEL_BUDGET's. */
#define SCHED_BUDGET 16000
/* Counter ticks (the interval deltas of `counters --interval`): at most
 * this many (time, from, delta) entries over all counters (~30 bytes of
 * page each, so ~120 kB at most: a minute of two counters read every
 * 20 ms fits in 40 ms ticks); beyond, consecutive ticks are merged by 2,
 * 4, ... until they fit (a merged tick ends at its last snapshot). */
#define CNT_TICK_BUDGET 4096
#define TK_MAX_PROCS 100
#define TK_MAX_THREADS 300

struct flame {
	int kind;                /* enum flame_kind */
	int event;               /* FLAME_SAMPLES: event position, -1 unknown */
	struct ana_stree caller, callee;
};

/* One stack count kept for the selection: per tree (position in
 * page.flames), tracks' bin, thread and caller-tree leaf. */
struct sel_key {
	uint32_t flame, bin, tid, node;
	uint32_t pid;
};

struct sel_val {
	uint64_t weight, count;
};

/* One interval row of the counters (ana_counters_opts.on_tick); the
 * strings are the page trace's. */
struct cnt_tick {
	const char *group, *event;
	uint64_t time, from, delta;
	int counted;
};

struct task_key {
	uint32_t pid, tid;
	const char *comm;
};

/* A task's runs close in time order (it is on one CPU at a time; the runs
 * still open at the end come last), so its longest off-CPU gap between
 * two runs is found as they arrive. */
struct task_val {
	uint64_t last_end;
	uint64_t gap_at, gap;    /* the longest gap so far (gap 0: none) */
	int seen;
};

struct page {
	struct ana_trace *s;
	/* The page's own traces: one host's files in time order (rotated
	 * files), s the first; every pass reads them in turn. */
	struct ana_trace *const *files;
	size_t nfiles;
	int own;                     /* cur is one of files (tracks follow it) */
	int switches, offcpu_iv;     /* some file has switches / off-CPU intervals */
	/* Names are compared by address (trees, tasks): with several traces
	 * (files, or html --diff's sides) each trace's pool would give one
	 * name several addresses, so they are interned again in the page's. */
	int intern;
	struct ana_html_opts o;
	/* html --diff: the trees are differential (ana_stree_add_base() for
	 * the base side's stacks). Names come from several traces' pools,
	 * so they are interned again in the page's own; event positions are
	 * the page trace's (matched by name). */
	int diff, side_base;
	struct ana_trace *cur;       /* the trace being read */
	struct ana_strpool pool;
	const char *base_names;      /* "a.prec, b.prec" */
	struct flame *flames;
	size_t nflames;
	struct ana_stree_frame *path;
	size_t path_cap;
	struct ana_timeline *tl;     /* NULL without switch records */
	struct ana_tracks *tk;       /* the page trace's threads over time */
	struct prec_hashmap sel;     /* sel_key -> sel_val */
	/* What the tracks show (tracks_pick()): per process in the tracks'
	 * order, how many of its threads; and the tids and pids shown, the
	 * only ones a selection can name */
	size_t *nt_shown, np_shown;
	struct prec_hashmap shown_tid, shown_pid;   /* uint32 -> nothing */
	struct prec_hashmap tasks;        /* task_key -> task_val; position = task id */
	struct prec_hashmap names;        /* const char * -> nothing; position = id */
	struct prec_hashmap dsos;         /* const char * -> nothing; the frames' objects */
	struct prec_hashmap labels;       /* a frame's name -> the page's (frame_label()) */
	struct ana_doc *report, *sched, *counters, *info, *offcpu, *changes;
	struct cnt_tick *cticks;   /* in the interval table's order */
	size_t ncticks, cticks_cap;
};

/* ---- stacks */

/* name as the page keeps it (see page.intern); NULL stays NULL */
static const char *page_name(struct page *pg, const char *name)
{
	return name && pg->intern ? ana_strpool_intern(&pg->pool, name) : name;
}

/* The tree pair of (kind, event); a new one when create, else NULL. */
static struct flame *flame_get(struct page *pg, int kind, int event, int create)
{
	for (size_t i = 0; i < pg->nflames; i++)
		if (pg->flames[i].kind == kind && pg->flames[i].event == event)
			return &pg->flames[i];
	if (!create)
		return NULL;
	struct flame *f = realloc(pg->flames, (pg->nflames + 1) * sizeof(*f));
	if (!f)
		return NULL;
	pg->flames = f;
	f = &pg->flames[pg->nflames++];
	f->kind = kind;
	f->event = event;
	ana_stree_init(&f->caller);
	ana_stree_init(&f->callee);
	return f;
}

/* Adds one stack to the tree pair (kind, event): frames leaf first, as
 * ana_resolve_sample() gives them, under the task's name. */
/* Counts the stack just added to f's caller tree for the selection. */
static int sel_add(struct page *pg, const struct flame *f, uint32_t pid, uint32_t tid,
		   uint64_t time, uint64_t weight)
{
	uint64_t t0 = ana_tracks_t0(pg->tk), bin = ana_tracks_bin_ns(pg->tk);
	size_t nb = ana_tracks_nbins(pg->tk);
	size_t b = time <= t0 ? 0 : (size_t)((time - t0) / bin);
	struct sel_key k;
	memset(&k, 0, sizeof(k));
	k.flame = (uint32_t)(f - pg->flames);
	k.bin = (uint32_t)(b < nb ? b : nb - 1);
	k.tid = tid;
	k.node = ana_stree_last_node(&f->caller);
	k.pid = pid;
	struct sel_val *v = prec_hashmap_get(&pg->sel, &k, NULL);
	if (!v)
		return -ENOMEM;
	v->weight += weight;
	v->count++;
	return 0;
}

/* A frame's name in the page: its symbol, or, without one, the words
 * report uses for what is unknown, per object ("[unknown] in libc.so.6",
 * "[unknown]" without an object): one box and one function per object
 * rather than one per address. Report's hook gives every frame a name
 * (ana_frame_name()'s address for an unknown one), so a name is unknown
 * when it is the one ana_frame_name() gives the frame without its
 * symbol; decided once per name (page.labels). Cut chains are report's
 * one "[truncated]" frame already. NULL on ENOMEM. */
static const char *frame_label(struct page *pg, const struct ana_loc *fr)
{
	int created;
	const char *sym = fr->sym ? fr->sym : ana_frame_name(pg->cur, fr);
	const char **v = sym ? prec_hashmap_get(&pg->labels, &sym, &created) : NULL;
	if (!v)
		return NULL;
	if (!created && *v)
		return *v;
	struct ana_loc bare = *fr;
	bare.sym = NULL;
	if (ana_frame_name(pg->cur, &bare) != sym) {
		*v = page_name(pg, sym);
	} else if (!fr->dso) {
		*v = ana_strpool_intern(&pg->pool, "[unknown]");
	} else {
		char buf[512];
		snprintf(buf, sizeof(buf), "[unknown] in %s", fr->dso);
		*v = ana_strpool_intern(&pg->pool, buf);
	}
	return *v;
}

/* who: the stack's task and time (its sample's or block's end) */
struct stack_who {
	uint32_t pid, tid;
	uint64_t time;
};

static int flame_add_stack(struct page *pg, int kind, int event, const char *comm,
			   const struct stack_who *who, const struct ana_loc *frames, int n,
			   uint64_t weight)
{
	struct flame *f = flame_get(pg, kind, event, !pg->side_base);
	if (!f)   /* the base's own profiles: nothing of the new side to draw */
		return pg->side_base ? 0 : -ENOMEM;
	size_t len = (size_t)n + 1;
	if (len > pg->path_cap) {
		struct ana_stree_frame *p = realloc(pg->path, len * sizeof(*p));
		if (!p)
			return -ENOMEM;
		pg->path = p;
		pg->path_cap = len;
	}
	pg->path[0].name = page_name(pg, comm);
	pg->path[0].tag = TAG_TASK;
	if (!pg->path[0].name)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		const struct ana_loc *fr = &frames[n - 1 - i];
		const char *name = frame_label(pg, fr);
		if (!name)
			return -ENOMEM;
		uint32_t dso = 0;
		if (fr->dso) {
			const char *d = page_name(pg, fr->dso);
			void *v = d ? prec_hashmap_get(&pg->dsos, &d, NULL) : NULL;
			if (!v)
				return -ENOMEM;
			dso = 1 + (uint32_t)prec_hashmap_index(&pg->dsos, v);
		}
		pg->path[1 + i].name = name;
		pg->path[1 + i].tag = (fr->kernel ? TAG_KERNEL : TAG_USER) | dso << TAG_BITS;
	}
	int (*add)(struct ana_stree *, const struct ana_stree_frame *, size_t, int,
		   uint64_t) = pg->side_base ? ana_stree_add_base : ana_stree_add;
	int ret = add(&f->caller, pg->path, len, 0, weight);
	if (!ret && pg->tk && !pg->side_base && pg->own)
		ret = sel_add(pg, f, who->pid, who->tid, who->time, weight);
	if (!ret)
		ret = add(&f->callee, pg->path, len, 1, weight);
	return ret;
}

/* The page trace's position of the event at position ev of the trace
 * being read (another trace's under html --diff: matched by name). */
static int page_event(const struct page *pg, int ev)
{
	if (pg->cur == pg->s || ev < 0)
		return ev;
	/* another file: its events matched to the page trace's by name */
	const char *name = ana_trace_event_name(pg->cur, ev);
	for (size_t i = 0; name && i < pg->s->nevents; i++)
		if (!strcmp(name, ana_trace_event_name(pg->s, (int)i)))
			return (int)i;
	return -1;
}

static int on_sample(void *ctx, const struct ana_report_sample *rs)
{
	struct page *pg = ctx;
	const Perfrec__Sample *sm = rs->p->pkt->sample;
	struct stack_who who = { sm ? sm->pid : 0, sm ? sm->tid : 0, rs->p->time };
	if (pg->tk && pg->own && sm) {
		const char *comm = page_name(pg, rs->comm);
		if (!comm)
			return -ENOMEM;
		int ret = ana_tracks_sample(pg->tk, sm->pid, sm->tid, comm, rs->p->time);
		if (ret)
			return ret;
	}
	return flame_add_stack(pg, FLAME_SAMPLES, page_event(pg, rs->event), rs->comm, &who,
			       rs->frames, rs->nframes, rs->weight);
}

/* report --off-cpu's hook: blocked ns under the stack where it blocked */
static int on_offcpu(void *ctx, const struct ana_report_sample *rs)
{
	struct page *pg = ctx;
	const Perfrec__OffCpu *oc = rs->p->pkt->off_cpu;
	struct stack_who who = { oc ? oc->pid : 0, oc ? oc->tid : 0, rs->p->time };
	/* an interval ends at its packet's time; sums have no place in time
	 * (they count in the flame graph and the tables only) */
	if (pg->tk && pg->own && oc && !oc->count) {
		uint64_t end = rs->p->time, start = end > oc->duration ? end - oc->duration : 0;
		const char *comm = page_name(pg, rs->comm);
		if (!comm)
			return -ENOMEM;
		int ret = ana_tracks_offcpu(pg->tk, oc->pid, oc->tid, comm, (int)oc->state,
					    start, end);
		if (ret)
			return ret;
	}
	return flame_add_stack(ctx, FLAME_OFFCPU, -1, rs->comm, &who, rs->frames, rs->nframes,
			       rs->weight);
}

/* ---- timeline */

static int on_interval(void *ctx, const struct ana_sched_interval *iv)
{
	struct page *pg = ctx;
	const struct ana_filter *f = pg->o.filter;
	const char *comm = page_name(pg, ana_trace_comm_name(pg->cur, iv->tid, iv->start));
	if (!comm)
		return -ENOMEM;
	if (f && (!ana_filter_pid(f, iv->pid) || !ana_filter_tid(f, iv->tid) ||
		  !ana_filter_comm(f, comm)))
		return 0;
	struct task_key k;
	memset(&k, 0, sizeof(k));
	k.pid = iv->pid;
	k.tid = iv->tid;
	k.comm = comm;
	struct task_val *v = prec_hashmap_get(&pg->tasks, &k, NULL);
	if (!v)
		return -ENOMEM;
	if (v->seen && iv->start > v->last_end && iv->start - v->last_end > v->gap) {
		v->gap = iv->start - v->last_end;
		v->gap_at = v->last_end;
	}
	if (!v->seen || iv->end > v->last_end)
		v->last_end = iv->end;
	v->seen = 1;
	int ret = ana_tracks_run(pg->tk, iv->pid, iv->tid, comm, iv->start, iv->end);
	if (ret)
		return ret;
	return ana_timeline_add(pg->tl, iv->cpu, (uint32_t)prec_hashmap_index(&pg->tasks, v),
				iv->start, iv->end);
}

static uint32_t cpus_of(const struct ana_trace *s)
{
	uint32_t n = s->header && s->header->cpus_online ? s->header->cpus_online : 1;
	return n < TL_MAX_LANES ? n : TL_MAX_LANES;
}

static uint64_t trace_end(const struct ana_trace *s)
{
	return s->end && s->end->end_time ? s->end->end_time : s->t_max;
}

/* The window the timeline and the tracks show: from the first file's
 * start to the last one's end, cut by the filter's time window. */
static void page_window(const struct page *pg, uint64_t *lo, uint64_t *hi)
{
	const struct ana_filter *f = pg->o.filter;
	*lo = pg->s->start;
	*hi = trace_end(pg->files[pg->nfiles - 1]);
	if (f && ana_filter_windowed(f)) {
		if (f->tmin > *lo)
			*lo = f->tmin;
		if (f->tmax < *hi)
			*hi = f->tmax;
	}
}

static int on_loss(void *ctx, const struct prec_packet *p)
{
	const Perfrec__Loss *l = p->pkt->loss;
	if (l && p->time)
		ana_tracks_loss(ctx, p->time, l->count);
	return 0;
}

/* The tracks' object, and the losses' marks from a pass over the Loss
 * packets (the frames that hold none are not read). Runs before the
 * report and sched passes, which fill the tracks through their hooks. */
static int tracks_new(struct page *pg)
{
	uint64_t lo, hi;
	page_window(pg, &lo, &hi);
	pg->tk = ana_tracks_new(lo, hi, TK_BINS);
	if (!pg->tk)
		return -errno;
	for (size_t i = 0; i < pg->nfiles; i++) {
		struct ana_trace *s = pg->files[i];
		uint64_t lost = 0;
		for (int k = 0; k < ANA_NLOSS; k++)
			lost += s->loss_records[k];
		if (!lost)
			continue;
		ana_trace_set_kinds(s, PREC_KIND(PERFREC__PACKET__DATA_LOSS));
		int ret = ana_trace_scan(s, "losses", on_loss, pg->tk);
		ana_trace_set_kinds(s, 0);
		if (ret)
			return ret;
	}
	return 0;
}

static int timeline_new(struct page *pg)
{
	struct ana_trace *s = pg->s;
	const struct ana_filter *f = pg->o.filter;
	uint64_t lo, hi;
	page_window(pg, &lo, &hi);
	uint32_t ncpu = cpus_of(s);
	size_t nb = pg->o.buckets;
	if (!nb) {
		nb = TL_BUCKET_BUDGET / ncpu;
		nb = nb < 256 ? 256 : nb > 4096 ? 4096 : nb;
	}
	pg->tl = ana_timeline_new(lo, hi, nb, TL_MAX_LANES);
	if (!pg->tl)
		return -errno;
	/* A lane for every online CPU, even one nothing ran on. */
	for (uint32_t c = 0; s->header && c < ncpu; c++) {
		if (f && !ana_filter_cpu(f, c))
			continue;
		int ret = ana_timeline_lane_add(pg->tl, c);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- writing */

static uint32_t name_id(struct page *pg, const char *name, int *err)
{
	int created;
	if (!name)
		name = "";
	void *v = prec_hashmap_get(&pg->names, &name, &created);
	if (!v) {
		*err = -ENOMEM;
		return 0;
	}
	return (uint32_t)prec_hashmap_index(&pg->names, v);
}

static void put_u64s(FILE *out, const char *key, const struct ana_stree_view *v,
		     size_t field)
{
	fprintf(out, "\"%s\":[", key);
	for (size_t i = 0; i < v->n; i++) {
		const struct ana_stree_vnode *n = &v->nodes[i];
		uint64_t x = field == 0 ? n->weight : field == 1 ? n->self :
			     field == 2 ? n->count : field == 3 ? n->depth : n->base;
		fprintf(out, i ? ",%" PRIu64 : "%" PRIu64, x);
	}
	fputs("]", out);
}

/* map: when not NULL, gets the view's node map (the caller frees it) */
static int write_tree(struct page *pg, FILE *out, const struct ana_stree *t, uint32_t **map)
{
	struct ana_stree_view v;
	double frac = pg->o.min_fraction > 0 ? pg->o.min_fraction : ANA_HTML_MIN_FRACTION;
	size_t max = pg->o.max_nodes ? pg->o.max_nodes : ANA_HTML_MAX_NODES;
	int err = ana_stree_view(t, frac, max, &v);
	if (err)
		return err;
	fputs("{\"n\":[", out);
	for (size_t i = 0; i < v.n && !err; i++) {
		const struct ana_stree_vnode *n = &v.nodes[i];
		if (n->pruned)
			fputs(i ? ",-1" : "-1", out);
		else
			fprintf(out, i ? ",%" PRIu32 : "%" PRIu32, name_id(pg, n->name, &err));
	}
	fputs("],\"k\":[", out);
	for (size_t i = 0; i < v.n; i++)
		fprintf(out, i ? ",%" PRIu32 : "%" PRIu32,
			v.nodes[i].pruned ? (uint32_t)TAG_PRUNED : TAG_KIND(v.nodes[i].tag));
	/* "o": each frame's object (a name id, -1 unknown or not a frame),
	 * for the top-functions table a selection recomputes: the caller
	 * tree's only (map asked for: the tree the selection filters) */
	if (map) {
		fputs("],\"o\":[", out);
		for (size_t i = 0; i < v.n && !err; i++) {
			uint32_t d = v.nodes[i].pruned ? 0 : v.nodes[i].tag >> TAG_BITS;
			if (d)
				fprintf(out, i ? ",%" PRIu32 : "%" PRIu32, name_id(pg,
					*(const char *const *)prec_hashmap_key(&pg->dsos, d - 1), &err));
			else
				fputs(i ? ",-1" : "-1", out);
		}
	}
	fputs("],", out);
	put_u64s(out, "d", &v, 3);
	fputs(",", out);
	put_u64s(out, "w", &v, 0);
	fputs(",", out);
	put_u64s(out, "s", &v, 1);
	fputs(",", out);
	put_u64s(out, "c", &v, 2);
	if (pg->diff) {
		fputs(",", out);
		put_u64s(out, "b", &v, 4);
	}
	fputs(",\"p\":[", out);
	int first = 1;
	for (size_t i = 0; i < v.n; i++) {
		if (!v.nodes[i].pruned)
			continue;
		fprintf(out, "%s[%zu,%" PRIu64 "]", first ? "" : ",", i, v.nodes[i].pruned);
		first = 0;
	}
	fprintf(out, "],\"fraction\":%g,\"pruned\":%" PRIu64 "}", v.fraction, v.pruned_nodes);
	if (map) {
		*map = v.map;
		v.map = NULL;
	}
	ana_stree_view_release(&v);
	return err;
}

static int cmp_sel(const void *a, const void *b)
{
	const struct sel_key *x = a, *y = b;
	if (x->bin != y->bin)
		return x->bin < y->bin ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* ,"sel":{"f":F,"e":[bin,tid,pid,node,weight,count,...]}: flame fi's
 * stacks per (bin of F tracks' bins, thread, process, view node), exact
 * weights and counts; tid and pid -1 when the tracks do not show them
 * (nothing can select them), F the smallest power of 2 that keeps them
 * within budget. */
static int write_sel(struct page *pg, FILE *out, uint32_t fi, const uint32_t *map,
		     size_t budget)
{
	struct prec_hashmap agg;
	size_t nb = ana_tracks_nbins(pg->tk), f = 1;
	int err = 0;
	prec_hashmap_init(&agg, sizeof(struct sel_key), sizeof(struct sel_val));
	for (;; f *= 2) {
		prec_hashmap_clear(&agg);
		for (size_t i = 0; i < prec_hashmap_count(&pg->sel) && !err; i++) {
			const struct sel_key *k = prec_hashmap_key(&pg->sel, i);
			const struct sel_val *v = prec_hashmap_val(&pg->sel, i);
			if (k->flame != fi)
				continue;
			struct sel_key a;
			memset(&a, 0, sizeof(a));
			a.bin = (uint32_t)(k->bin / f);
			a.tid = prec_hashmap_find(&pg->shown_tid, &k->tid) ? k->tid : UINT32_MAX;
			a.pid = prec_hashmap_find(&pg->shown_pid, &k->pid) ? k->pid : UINT32_MAX;
			a.node = k->node == ANA_STREE_ROOT ? UINT32_MAX : map[k->node];
			struct sel_val *av = prec_hashmap_get(&agg, &a, NULL);
			if (!av) {
				err = -ENOMEM;
				break;
			}
			av->weight += v->weight;
			av->count += v->count;
		}
		if (err || prec_hashmap_count(&agg) <= budget || f >= nb)
			break;
	}
	size_t n = prec_hashmap_count(&agg);
	struct sel_key *keys = malloc((n ? n : 1) * sizeof(*keys));
	if (!keys)
		err = -ENOMEM;
	if (!err) {
		for (size_t i = 0; i < n; i++)
			keys[i] = *(const struct sel_key *)prec_hashmap_key(&agg, i);
		prec_sort(keys, n, sizeof(*keys), cmp_sel);
		fprintf(out, ",\n\"sel\":{\"f\":%zu,\"e\":[", f);
		for (size_t i = 0; i < n; i++) {
			const struct sel_val *v = prec_hashmap_find(&agg, &keys[i]);
			fprintf(out, "%s%" PRIu32 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRIu64
				",%" PRIu64, i ? "," : "", keys[i].bin,
				keys[i].tid == UINT32_MAX ? (int64_t)-1 : (int64_t)keys[i].tid,
				keys[i].pid == UINT32_MAX ? (int64_t)-1 : (int64_t)keys[i].pid,
				keys[i].node == UINT32_MAX ? (int64_t)-1 : (int64_t)keys[i].node,
				v->weight, v->count);
		}
		fputs("]}", out);
	}
	free(keys);
	prec_hashmap_release(&agg);
	return err;
}

/* Sorts the tracks and picks those the page shows: the TK_MAX_PROCS
 * busiest processes, and of their threads (busiest first, the busiest
 * processes' first) TK_MAX_THREADS. */
static int tracks_pick(struct page *pg)
{
	struct ana_tracks *tk = pg->tk;
	if (!tk)
		return 0;
	int ret = ana_tracks_sort(tk);
	if (ret)
		return ret;
	size_t np = ana_tracks_nprocs(tk), budget = TK_MAX_THREADS;
	pg->np_shown = np < TK_MAX_PROCS ? np : TK_MAX_PROCS;
	pg->nt_shown = calloc(pg->np_shown ? pg->np_shown : 1, sizeof(*pg->nt_shown));
	if (!pg->nt_shown)
		return -ENOMEM;
	for (size_t i = 0; i < pg->np_shown; i++) {
		const struct ana_track_proc *p = ana_tracks_proc(tk, i);
		size_t nt = p->nthreads < budget ? p->nthreads : budget;
		budget -= nt;
		pg->nt_shown[i] = nt;
		if (!prec_hashmap_get(&pg->shown_pid, &p->pid, NULL))
			return -ENOMEM;
		for (size_t j = 0; j < nt; j++)
			if (!prec_hashmap_get(&pg->shown_tid, &p->threads[j]->tid, NULL))
				return -ENOMEM;
	}
	return 0;
}

static int write_flames(struct page *pg, FILE *out)
{
	int err = 0;
	fputs("\"flames\":[", out);
	for (size_t i = 0; i < pg->nflames && !err; i++) {
		const struct flame *f = &pg->flames[i];
		fputs(i ? ",\n{\"kind\":" : "\n{\"kind\":", out);
		ana_json_str_html(out, flame_kind_names[f->kind]);
		fputs(",\"title\":", out);
		if (f->kind == FLAME_OFFCPU)
			ana_json_str_html(out, "off-CPU time");
		else if (f->event >= 0)
			ana_json_str_html(out, ana_trace_event_name(pg->s, f->event));
		else
			ana_json_str_html(out, "unknown event");
		fprintf(out, ",\"unit\":\"%s\",\"weight\":%" PRIu64 ",\"count\":%" PRIu64,
			f->kind == FLAME_OFFCPU ? "ns" : "period", f->caller.weight,
			f->caller.count);
		if (pg->diff)   /* the base side's root: its shares' denominator */
			fprintf(out, ",\"base\":%" PRIu64 ",\"baseCount\":%" PRIu64,
				f->caller.base, f->caller.base_count);
		fputs(",\n\"caller\":", out);
		uint32_t *map = NULL;
		err = write_tree(pg, out, &f->caller, pg->tk ? &map : NULL);
		fputs(",\n\"callee\":", out);
		if (!err)
			err = write_tree(pg, out, &f->callee, NULL);
		if (!err && pg->tk)
			err = write_sel(pg, out, (uint32_t)i, map, SEL_BUDGET / pg->nflames);
		free(map);
		fputs("}", out);
	}
	fputs("]", out);
	return err;
}

/* Page ids of the tasks the lanes show (span owners, bucket tops), in
 * order of first use: the page's task table holds only those, so its size
 * is bounded by the lanes', whatever the number of tasks in the trace. */
struct task_ids {
	uint32_t *id;      /* task -> page id, UINT32_MAX: not shown */
	uint32_t *order;   /* page id -> task */
	uint32_t n;
};

static uint32_t page_task(struct task_ids *t, uint32_t task)
{
	if (t->id[task] == UINT32_MAX) {
		t->id[task] = t->n;
		t->order[t->n++] = task;
	}
	return t->id[task];
}

static int write_timeline(struct page *pg, FILE *out)
{
	struct ana_timeline *tl = pg->tl;
	int err = 0;
	if (!tl) {
		fputs("\"timeline\":null", out);
		return 0;
	}
	size_t ntasks = prec_hashmap_count(&pg->tasks);
	struct task_ids ids = { malloc((ntasks ? ntasks : 1) * sizeof(uint32_t)),
				malloc((ntasks ? ntasks : 1) * sizeof(uint32_t)), 0 };
	if (!ids.id || !ids.order) {
		free(ids.id);
		free(ids.order);
		return -ENOMEM;
	}
	memset(ids.id, 0xff, ntasks * sizeof(uint32_t));
	uint64_t t0 = ana_timeline_t0(tl), origin = pg->s->start;
	fprintf(out, "\"timeline\":{\"t0\":%" PRId64 ",\"t1\":%" PRId64 ",\"bucket\":%" PRIu64
		",\"nbuckets\":%zu,\"dropped\":%" PRIu64 ",\n\"lanes\":[",
		(int64_t)(t0 - origin), (int64_t)(ana_timeline_t1(tl) - origin),
		ana_timeline_bucket_ns(tl), ana_timeline_nbuckets(tl), ana_timeline_dropped(tl));
	for (size_t i = 0; i < ana_timeline_lanes(tl); i++) {
		const struct ana_tl_lane *l = ana_timeline_lane(tl, i);
		fprintf(out, "%s{\"cpu\":%" PRIu32 ",\"busy\":%" PRIu64 ",\"intervals\":%" PRIu64
			",\n\"spans\":[", i ? ",\n" : "\n", l->cpu, l->busy, l->intervals);
		for (size_t j = 0; j < l->nspans; j++) {
			const struct ana_tl_span *sp = &l->spans[j];
			fprintf(out, "%s%" PRIu64 ",%" PRIu64 ",%" PRIu32, j ? "," : "",
				sp->start - t0, sp->end - sp->start, page_task(&ids, sp->task));
		}
		fputs("],\n\"buckets\":[", out);
		int first = 1;
		for (size_t j = 0; l->buckets && j < ana_timeline_nbuckets(tl); j++) {
			const struct ana_tl_bucket *b = &l->buckets[j];
			if (!b->n)
				continue;
			int top = ana_tl_bucket_top(b);
			int64_t task = top < 0 ? -1 : (int64_t)page_task(&ids, b->task[top]);
			fprintf(out, "%s%zu,%" PRIu64 ",%" PRIu32 ",%" PRId64, first ? "" : ",", j,
				b->busy, b->n, task);
			first = 0;
		}
		fputs("]}", out);
	}
	fputs("],\n\"tasks\":[", out);
	for (uint32_t i = 0; i < ids.n && !err; i++) {
		const struct task_key *k = prec_hashmap_key(&pg->tasks, ids.order[i]);
		const struct task_val *v = prec_hashmap_val(&pg->tasks, ids.order[i]);
		fprintf(out, "%s%" PRIu32 ",%" PRIu32 ",%" PRIu32, i ? "," : "", k->pid, k->tid,
			name_id(pg, k->comm, &err));
		if (v->gap)
			fprintf(out, ",%" PRId64 ",%" PRIu64, (int64_t)(v->gap_at - t0), v->gap);
		else
			fputs(",-1,0", out);
	}
	fputs("]}", out);
	free(ids.id);
	free(ids.order);
	return err;
}

/* ---- tracks: one character per bin, a level 0..63 (0: nothing) */

static const char levels[] =
	"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_";

/* The level of v in 0..max: 0 only for 0, 63 for max and above. */
static char level(uint64_t v, uint64_t max)
{
	if (!v || !max)
		return '0';
	if (v >= max)
		return levels[63];
	uint64_t l = (63 * v + max - 1) / max;   /* rounded up: never 0 */
	return levels[l < 1 ? 1 : l];
}

/* "key":"levels" with trailing zeros cut ("" when all are 0); the values
 * are got(ctx, bin). */
static void put_levels(FILE *out, const char *key, size_t nbins, uint64_t max,
		       uint64_t (*got)(const void *ctx, size_t b), const void *ctx)
{
	size_t n = nbins;
	while (n && !got(ctx, n - 1))
		n--;
	fprintf(out, ",\"%s\":\"", key);
	for (size_t b = 0; b < n; b++)
		fputc(level(got(ctx, b), max), out);
	fputc('"', out);
}

/* A track's series, gathered: a thread's arrays, or a process's sums. */
struct series {
	uint64_t *run, *smp, *off;
	uint8_t *state;
};

static uint64_t got_run(const void *c, size_t b)
{
	return ((const struct series *)c)->run[b];
}

static uint64_t got_smp(const void *c, size_t b)
{
	return ((const struct series *)c)->smp[b];
}

static uint64_t got_off(const void *c, size_t b)
{
	return ((const struct series *)c)->off[b];
}

static uint64_t got_state(const void *c, size_t b)
{
	const struct series *sr = c;
	return sr->off[b] ? (uint64_t)sr->state[b] + 1 : 0;
}

/* Fills sr (zeroed, nbins long) with thread t's series added: on-CPU and
 * samples summed, off-CPU the largest thread's (with its state). */
static void series_add(struct series *sr, const struct ana_track *t, size_t nbins)
{
	for (size_t b = 0; b < nbins; b++) {
		if (t->run)
			sr->run[b] += t->run[b];
		if (t->smp)
			sr->smp[b] += t->smp[b];
		if (t->off && t->off[b] > sr->off[b]) {
			sr->off[b] = t->off[b];
			sr->state[b] = t->off_state[b];
		}
	}
}

/* One track's object: its totals, then run (level of the bin's width x
 * cpus), samples (level of smax), off (level of the bin's width) and
 * state (1 + OffCpu.State of the longest block, as a level character). */
static void put_track(struct page *pg, FILE *out, const struct series *sr, uint32_t cpus,
		      uint64_t smax)
{
	size_t nb = ana_tracks_nbins(pg->tk);
	uint64_t bin = ana_tracks_bin_ns(pg->tk);
	fprintf(out, ",\"k\":%" PRIu32, cpus);
	put_levels(out, "r", nb, bin * cpus, got_run, sr);
	put_levels(out, "s", nb, smax, got_smp, sr);
	put_levels(out, "o", nb, bin, got_off, sr);
	put_levels(out, "os", nb, 63, got_state, sr);
}

static uint64_t peak(const uint64_t *a, size_t n)
{
	uint64_t m = 0;
	for (size_t i = 0; i < n; i++)
		m = a[i] > m ? a[i] : m;
	return m;
}

static int write_tracks(struct page *pg, FILE *out)
{
	struct ana_tracks *tk = pg->tk;
	if (!tk || !ana_tracks_nthreads(tk)) {
		fputs("\"tracks\":null", out);
		return 0;
	}
	size_t nb = ana_tracks_nbins(tk), np = ana_tracks_nprocs(tk), shown_p = pg->np_shown;
	struct series sr = { calloc(nb, 8), calloc(nb, 8), calloc(nb, 8), calloc(nb, 1) };
	int err = 0;
	if (!sr.run || !sr.smp || !sr.off || !sr.state) {
		err = -ENOMEM;
		goto out;
	}
	/* one sample scale per kind of track, so rows compare: the densest
	 * bin of any shown process, of any shown thread */
	uint64_t smax_p = 0, smax_t = 0;
	for (size_t i = 0; i < shown_p; i++) {
		const struct ana_track_proc *p = ana_tracks_proc(tk, i);
		memset(sr.smp, 0, nb * 8);
		for (size_t j = 0; j < p->nthreads; j++) {
			const struct ana_track *t = p->threads[j];
			for (size_t b = 0; t->smp && b < nb; b++) {
				sr.smp[b] += t->smp[b];
				if (j < pg->nt_shown[i] && t->smp[b] > smax_t)
					smax_t = t->smp[b];
			}
		}
		uint64_t m = peak(sr.smp, nb);
		smax_p = m > smax_p ? m : smax_p;
	}
	uint64_t t0 = ana_tracks_t0(tk), bin = ana_tracks_bin_ns(tk);
	fprintf(out, "\"tracks\":{\"t0\":%" PRId64 ",\"bin\":%" PRIu64 ",\"nbins\":%zu"
		",\"smaxp\":%" PRIu64 ",\"smaxt\":%" PRIu64 ",\"offcpu\":%d,\"switches\":%d",
		(int64_t)(t0 - pg->s->start), bin, nb, smax_p, smax_t,
		pg->offcpu_iv, pg->switches);
	fputs(",\n\"loss\":[", out);
	const uint64_t *loss = ana_tracks_losses(tk);
	for (size_t b = 0, first = 1; b < nb; b++)
		if (loss[b]) {
			fprintf(out, "%s%zu,%" PRIu64, first ? "" : ",", b, loss[b]);
			first = 0;
		}
	fputs("],\n\"procs\":[", out);
	uint64_t more_run = 0, more_threads = 0;
	for (size_t i = 0; i < np && !err; i++) {
		const struct ana_track_proc *p = ana_tracks_proc(tk, i);
		if (i >= shown_p) {
			more_run += p->run_ns;
			more_threads += p->nthreads;
			continue;
		}
		memset(sr.run, 0, nb * 8);
		memset(sr.smp, 0, nb * 8);
		memset(sr.off, 0, nb * 8);
		memset(sr.state, 0, nb);
		for (size_t j = 0; j < p->nthreads; j++)
			series_add(&sr, p->threads[j], nb);
		/* a process's run level is of the most CPUs it used at once */
		uint64_t pk = peak(sr.run, nb);
		uint32_t cpus = (uint32_t)(pk / (bin ? bin : 1) + (pk % (bin ? bin : 1) ? 1 : 0));
		fprintf(out, "%s\n{\"pid\":%" PRIu32 ",\"name\":%" PRIu32 ",\"run\":%" PRIu64
			",\"samples\":%" PRIu64 ",\"off\":%" PRIu64 ",\"nthreads\":%zu",
			i ? "," : "", p->pid, name_id(pg, p->comm, &err), p->run_ns, p->samples,
			p->off_ns, p->nthreads);
		put_track(pg, out, &sr, cpus ? cpus : 1, smax_p);
		fputs(",\"t\":[", out);
		size_t nt = pg->nt_shown[i];
		for (size_t j = 0; j < nt; j++) {
			const struct ana_track *t = p->threads[j];
			memset(sr.run, 0, nb * 8);
			memset(sr.smp, 0, nb * 8);
			memset(sr.off, 0, nb * 8);
			series_add(&sr, t, nb);
			fprintf(out, "%s{\"tid\":%" PRIu32 ",\"name\":%" PRIu32 ",\"run\":%" PRIu64
				",\"samples\":%" PRIu64 ",\"off\":%" PRIu64, j ? "," : "", t->tid,
				name_id(pg, t->comm, &err), t->run_ns, t->samples, t->off_ns);
			put_track(pg, out, &sr, 1, smax_t);
			fputs("}", out);
		}
		fprintf(out, "],\"hidden\":%zu}", p->nthreads - nt);
	}
	fprintf(out, "],\n\"more\":{\"procs\":%zu,\"threads\":%" PRIu64 ",\"run\":%" PRIu64
		"}}", np - shown_p, more_threads, more_run);
out:
	free(sr.run);
	free(sr.smp);
	free(sr.off);
	free(sr.state);
	return err;
}

/* Entries of thread t's run and switch-ins in bins of f tracks' bins
 * (writes them when out is not NULL); *first: no entry written yet. */
static size_t sched_bins(const struct ana_track *t, size_t nb, size_t f, FILE *out, int *first)
{
	size_t n = 0;
	for (size_t b = 0; t->run && b < nb; b += f) {
		uint64_t run = 0, ins = 0;
		for (size_t j = b; j < b + f && j < nb; j++) {
			run += t->run[j];
			ins += t->ins[j];
		}
		if (!run && !ins)
			continue;
		n++;
		if (out)
			fprintf(out, "%s%zu,%" PRIu32 ",%" PRIu64 ",%" PRIu64, *first ? "" : ",",
				b / f, t->tid, run, ins);
		*first = 0;
	}
	return n;
}

/* "sched":{"f":F,"e":[bin,tid,run_ns,switch_ins,...]}: the on-CPU time
 * and switch-ins of the threads the tracks show, per bin of F tracks'
 * bins (exact: runs are split at bin edges), F the smallest power of 2
 * that keeps them within SCHED_BUDGET entries: what the tasks table
 * recomputes for a selection. null without switch records. */
static void write_sched_sel(struct page *pg, FILE *out)
{
	struct ana_tracks *tk = pg->tk;
	if (!tk || !pg->switches || !ana_tracks_nthreads(tk)) {
		fputs("\"sched\":null", out);
		return;
	}
	size_t nb = ana_tracks_nbins(tk), f = 1;
	for (;; f *= 2) {
		size_t n = 0;
		int first = 1;
		for (size_t i = 0; i < pg->np_shown; i++)
			for (size_t j = 0; j < pg->nt_shown[i]; j++)
				n += sched_bins(ana_tracks_proc(tk, i)->threads[j], nb, f, NULL, &first);
		if (n <= SCHED_BUDGET || f >= nb)
			break;
	}
	fprintf(out, "\"sched\":{\"f\":%zu,\"e\":[", f);
	int first = 1;
	for (size_t i = 0; i < pg->np_shown; i++)
		for (size_t j = 0; j < pg->nt_shown[i]; j++)
			sched_bins(ana_tracks_proc(tk, i)->threads[j], nb, f, out, &first);
	fputs("]}", out);
}

/* "counters":{"f":F,"rows":[{"g":GROUP,"e":EVENT,"t":[time,from,delta,
 * ...]}]}: per row of the counters table, its ticks (ns from the trace
 * start; delta -1: not counted), F consecutive ticks merged into one
 * (CNT_TICK_BUDGET). What the counters table sums over a time range.
 * null without counter snapshots. */
static void write_counters(struct page *pg, FILE *out)
{
	/* rows: the counters' (group, event), first seen first; per tick
	 * its row, per row its ticks */
	size_t nt = pg->ncticks, nrows = 0, *row = NULL, *count = NULL;
	if (pg->counters && nt) {
		row = calloc(nt, sizeof(*row));
		count = calloc(2 * nt, sizeof(*count));   /* and the rows' heads */
	}
	if (!row || !count) {   /* none, or no memory: the table stays whole */
		free(row);
		free(count);
		fputs("\"counters\":null", out);
		return;
	}
	const struct cnt_tick *t = pg->cticks;
	size_t *head = count + nt;   /* [0, nrows): each row's first tick */
	for (size_t i = 0; i < nt; i++) {
		size_t r;
		for (r = 0; r < nrows; r++)
			if (!strcmp(t[head[r]].group, t[i].group) &&
			    !strcmp(t[head[r]].event, t[i].event))
				break;
		if (r == nrows)
			head[nrows++] = i;
		row[i] = head[r];   /* a row is named by its first tick */
		count[row[i]]++;
	}
	size_t f = 1;
	for (;; f *= 2) {
		size_t n = 0;
		for (size_t i = 0; i < nt; i++)
			n += (count[i] + f - 1) / f;
		if (n <= CNT_TICK_BUDGET || f >= nt)
			break;
	}
	uint64_t origin = pg->s->start;
	fprintf(out, "\"counters\":{\"f\":%zu,\"rows\":[", f);
	for (size_t i = 0, shown = 0; i < nt && shown < nrows; i++) {
		if (row[i] != i)
			continue;
		fputs(shown++ ? ",\n{\"g\":" : "\n{\"g\":", out);
		ana_json_str_html(out, t[i].group);
		fputs(",\"e\":", out);
		ana_json_str_html(out, t[i].event);
		fputs(",\"t\":[", out);
		uint64_t from = 0, delta = 0;
		size_t k = 0;
		int counted = 0;
		for (size_t j = i; j < nt; j++) {
			if (row[j] != i)
				continue;
			if (k % f == 0) {
				from = t[j].from;
				delta = 0;
				counted = 0;
			}
			delta += t[j].delta;
			counted |= t[j].counted;
			if (++k % f && k < count[i])
				continue;   /* more of this merged tick to come */
			uint64_t fr = from < t[j].time ? from : t[j].time;
			fprintf(out, "%s%" PRId64 ",%" PRId64 ",%" PRId64, k > f ? "," : "",
				(int64_t)(t[j].time - origin), (int64_t)(fr - origin),
				counted ? (int64_t)delta : (int64_t)-1);
		}
		fputs("]}", out);
	}
	fputs("]}", out);
	free(row);
	free(count);
}

static int write_data(struct page *pg, FILE *out)
{
	fprintf(out, "{\"version\":1,%s\"top\":%zu,\n", pg->diff ? "\"diff\":true," : "",
		pg->o.top ? pg->o.top : (size_t)ANA_HTML_TOP);
	int err = tracks_pick(pg);
	if (!err)
		err = write_flames(pg, out);
	fputs(",\n", out);
	if (!err)
		err = write_timeline(pg, out);
	fputs(",\n", out);
	if (!err)
		err = write_tracks(pg, out);
	fputs(",\n", out);
	if (!err)
		write_sched_sel(pg, out);
	fputs(",\n", out);
	write_counters(pg, out);
	/* Names last: the trees and tasks above gave them their ids. */
	fputs(",\n\"names\":[", out);
	for (size_t i = 0; i < prec_hashmap_count(&pg->names); i++) {
		if (i)
			fputc(',', out);
		ana_json_str_html(out, *(const char *const *)prec_hashmap_key(&pg->names, i));
	}
	fputs("]}\n", out);
	return err;
}

/* "1,234,567" */
static const char *grouped(char *buf, size_t len, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
	size_t o = 0;
	for (int i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

static void fact(FILE *out, const char *label, const char *value)
{
	fputs("<dt>", out);
	ana_html_str(out, label);
	fputs("</dt><dd>", out);
	ana_html_str(out, value ? value : "");
	fputs("</dd>\n", out);
}

static void bad(FILE *out, const char *text)
{
	fputs("<li class=\"bad\">", out);
	ana_html_str(out, text);
	fputs("</li>\n", out);
}

/* Appends to buf at *o (which may run past len: then nothing more is
 * written). */
static void append(char *buf, size_t len, size_t *o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t len, size_t *o, const char *fmt, ...)
{
	if (*o >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *o, len - *o, fmt, ap);
	va_end(ap);
	if (n > 0)
		*o += (size_t)n;
}

/* "; what 1,3-5" for a --cpu/--pid/--tid list */
static void ranges(char *buf, size_t len, size_t *o, const char *what,
		   const struct ana_range *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!i)
			append(buf, len, o, "%s%s ", *o ? "; " : "", what);
		append(buf, len, o, "%s%" PRIu64, i ? "," : "", r[i].lo);
		if (r[i].hi != r[i].lo)
			append(buf, len, o, "-%" PRIu64, r[i].hi);
	}
}

/* "; what a,b" for a --comm/--event list */
static void names(char *buf, size_t len, size_t *o, const char *what, char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		append(buf, len, o, "%s%s%s", i ? "," : *o ? "; " : "", i ? "" : what, v[i]);
}

/* The counts of the header, summed over the page's files. */
struct totals {
	uint64_t samples, switches, throttles, unknown, lost_packets;
	uint64_t kind_count[ANA_NKINDS], loss_count[ANA_NLOSS], loss_records[ANA_NLOSS];
	size_t ndamage, torn;
	int offcpu;               /* off-CPU intervals or sums */
};

static void totals_of(const struct page *pg, struct totals *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < pg->nfiles; i++) {
		struct ana_trace *s = pg->files[i];
		t->samples += s->samples;
		t->switches += s->switches;
		t->throttles += s->throttles;
		t->unknown += s->unknown_packets;
		t->ndamage += s->ndamage;
		t->lost_packets += ana_trace_lost_packets(s);
		t->torn += s->torn != 0;
		t->offcpu |= s->offcpu_intervals || s->offcpu_sums;
		for (int k = 0; k < ANA_NKINDS; k++)
			t->kind_count[k] += s->kind_count[k];
		for (int k = 0; k < ANA_NLOSS; k++) {
			t->loss_count[k] += s->loss_count[k];
			t->loss_records[k] += s->loss_records[k];
		}
	}
}

static void write_header(struct page *pg, FILE *out)
{
	struct ana_trace *s = pg->s;
	const Perfrec__FileHeader *h = s->header;
	char buf[2048], num[32];
	struct totals tt;
	totals_of(pg, &tt);
	uint64_t end = trace_end(pg->files[pg->nfiles - 1]);
	double dur = end > s->start ? (double)(end - s->start) / 1e9 : 0.0;
	fputs("<h1>perfrec trace <span class=\"host\">", out);
	ana_html_str(out, h && h->hostname ? h->hostname : "(no header)");
	/* one line of what matters at a glance; every fact in the details */
	fputs("</span></h1>\n<span class=\"glance\">", out);
	{
		size_t o = 0;
		buf[0] = '\0';
		if (h)
			append(buf, sizeof(buf), &o, "%" PRIu32 " CPUs \xc2\xb7 ", h->cpus_online);
		append(buf, sizeof(buf), &o, "%.3f s \xc2\xb7 %s samples", dur,
		       grouped(num, sizeof(num), tt.samples));
		if (tt.switches)
			append(buf, sizeof(buf), &o, " \xc2\xb7 %s switches",
			       grouped(num, sizeof(num), tt.switches));
		if (tt.offcpu)
			append(buf, sizeof(buf), &o, " \xc2\xb7 off-CPU");
		if (pg->nfiles > 1)
			append(buf, sizeof(buf), &o, " \xc2\xb7 %zu files", pg->nfiles);
		ana_html_str(out, buf);
	}
	fputs("</span>\n<details class=\"facts-box\"><summary>Details</summary>\n"
	      "<dl class=\"facts\">\n", out);
	if (h) {
		fact(out, "Host", h->hostname);
		snprintf(buf, sizeof(buf), "%s %s (%s)", h->kernel_release ? h->kernel_release : "",
			 h->kernel_version ? h->kernel_version : "", h->machine ? h->machine : "");
		fact(out, "Kernel", buf);
		snprintf(buf, sizeof(buf), "%" PRIu32 " online%s%s", h->cpus_online,
			 h->cpu_model && *h->cpu_model ? ", " : "", h->cpu_model ? h->cpu_model : "");
		fact(out, "CPUs", buf);
	}
	if (h && h->realtime_ns) {
		/* wall clock of the start: realtime - monotonic at the header */
		/* (unsigned: the three are trace bytes, and may not add up) */
		uint64_t wall = h->realtime_ns + s->start - h->monotonic_ns;
		time_t secs = (time_t)(wall / 1000000000);
		struct tm tm;
		char when[64] = "?";
		if (gmtime_r(&secs, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
		snprintf(buf, sizeof(buf), "%s, %.3f s", when, dur);
	} else {
		snprintf(buf, sizeof(buf), "%.3f s", dur);
	}
	fact(out, "Recorded", buf);
	if (pg->nfiles > 1) {
		/* one timeline: the gaps between files show as idle time */
		size_t o = 0;
		buf[0] = '\0';
		for (size_t i = 0; i < pg->nfiles; i++)
			append(buf, sizeof(buf), &o, "%s%s", i ? ", " : "", pg->files[i]->path);
		fact(out, "Files", buf);
	}
	if (pg->diff)
		fact(out, "Compared with", pg->base_names);
	{
		const struct ana_trace *last = pg->files[pg->nfiles - 1];
		if (last->end && last->end->stop_reason && *last->end->stop_reason)
			fact(out, "Stopped", last->end->stop_reason);
	}
	const struct ana_filter *f = pg->o.filter;
	if (f && f->active) {
		size_t o = 0;
		buf[0] = '\0';
		ranges(buf, sizeof(buf), &o, "cpu", f->cpus, f->ncpus);
		ranges(buf, sizeof(buf), &o, "pid", f->pids, f->npids);
		ranges(buf, sizeof(buf), &o, "tid", f->tids, f->ntids);
		names(buf, sizeof(buf), &o, "comm ", f->comms, f->ncomms);
		names(buf, sizeof(buf), &o, "event ", f->events, f->nevents);
		if (f->has_time) {
			double a = f->t0_open ? 0.0 : (double)(int64_t)(f->tmin - s->start) / 1e9;
			double b = f->t1_open || f->tmax == UINT64_MAX ? dur :
				   (double)(int64_t)(f->tmax - s->start) / 1e9;
			append(buf, sizeof(buf), &o, "%stime %.3f-%.3f s", o ? "; " : "", a, b);
		}
		fact(out, "Filters", buf);
	}
	{
		size_t o = 0;
		buf[0] = '\0';
		for (size_t i = 0; i < s->nevents; i++) {
			const Perfrec__EventDesc *e = s->events[i];
			append(buf, sizeof(buf), &o, "%s%s", i ? ", " : "",
			       ana_trace_event_name(s, (int)i));
			if (!e->sampling)
				append(buf, sizeof(buf), &o, " (counting)");
			else if (e->freq)
				append(buf, sizeof(buf), &o, " (%" PRIu64 " Hz)", e->sample_freq);
			else
				append(buf, sizeof(buf), &o, " (every %" PRIu64 ")", e->sample_period);
		}
		fact(out, "Events", s->nevents ? buf : "none described");
	}
	{
		uint64_t total = 0;
		for (int k = 0; k < ANA_NKINDS; k++)
			total += tt.kind_count[k];
		size_t o = 0;
		append(buf, sizeof(buf), &o, "%s:", grouped(num, sizeof(num), total));
		for (int k = 0, n = 0; k < ANA_NKINDS; k++)
			if (tt.kind_count[k])
				append(buf, sizeof(buf), &o, "%s %s %s", n++ ? "," : "", ana_kind_name(k),
				       grouped(num, sizeof(num), tt.kind_count[k]));
		fact(out, "Packets", buf);
	}
	if (h && h->n_cmdline) {
		size_t o = 0;
		buf[0] = '\0';
		for (size_t i = 0; i < h->n_cmdline; i++)
			append(buf, sizeof(buf), &o, "%s%s", i ? " " : "",
			       h->cmdline[i] ? h->cmdline[i] : "");
		fact(out, "Command", buf);
	}
	fputs("</dl>\n</details>\n<ul class=\"alerts\">\n", out);
	uint64_t events = tt.samples + tt.switches;
	for (int k = 0; k < ANA_NLOSS; k++) {
		if (!tt.loss_count[k] && !tt.loss_records[k])
			continue;
		uint64_t all = events + tt.loss_count[k];
		snprintf(buf, sizeof(buf), "lost %s (%s) in %" PRIu64 " loss records: %.2f%% of events",
			 grouped(num, sizeof(num), tt.loss_count[k]), ana_loss_kind_name(k),
			 tt.loss_records[k], all ? 100.0 * (double)tt.loss_count[k] / (double)all : 0.0);
		bad(out, buf);
	}
	if (tt.throttles) {
		snprintf(buf, sizeof(buf), "the kernel throttled sampling %" PRIu64 " times",
			 tt.throttles);
		bad(out, buf);
	}
	if (tt.ndamage) {
		snprintf(buf, sizeof(buf), "%zu damaged frames skipped (%" PRIu64 " packets lost)",
			 tt.ndamage, tt.lost_packets);
		bad(out, buf);
	}
	for (size_t i = 0; i < pg->nfiles; i++) {
		const struct ana_trace *f = pg->files[i];
		if (!f->torn)
			continue;
		if (pg->nfiles > 1)
			snprintf(buf, sizeof(buf), "%s: torn tail at offset %" PRIu64 ": the "
				 "recording was cut short", f->path, f->torn_offset);
		else
			snprintf(buf, sizeof(buf), "torn tail at offset %" PRIu64 ": the recording "
				 "was cut short", f->torn_offset);
		bad(out, buf);
	}
	if (tt.unknown) {
		snprintf(buf, sizeof(buf), "%" PRIu64 " packets of kinds this analyzer does not "
			 "know were skipped", tt.unknown);
		bad(out, buf);
	}
	for (size_t i = 0; i < pg->nfiles; i++) {
		const struct ana_trace *f = pg->files[i];
		for (size_t k = 0; k < f->nnotes; k++)
			if (f->notes[k].level >= 1 && f->notes[k].text)
				bad(out, f->notes[k].text);
	}
	fputs("</ul>\n", out);
}

static void heading(FILE *out, const char *id, const char *title, const char *note)
{
	fprintf(out, "<h2 id=\"%s\">", id);
	ana_html_str(out, title);
	fputs("</h2>\n", out);
	if (note) {
		fputs("<p class=\"note\">", out);
		ana_html_str(out, note);
		fputs("</p>\n", out);
	}
}

/* A table document in a block the page's script finds by name (the
 * tables a selection recomputes). */
static int doc_block(FILE *out, const char *name, const struct ana_doc *doc)
{
	fprintf(out, "<div class=\"doc\" data-doc=\"%s\">\n", name);
	int ret = ana_doc_render(doc, out, ANA_FMT_HTML);
	fputs("</div>\n", out);
	return ret;
}

static int write_tables(struct page *pg, FILE *out)
{
	char note[256];
	size_t top = pg->o.top ? pg->o.top : ANA_HTML_TOP;
	int ret = 0;
	if (pg->changes) {
		snprintf(note, sizeof(note), "The first %zu rows of `perfrec-analyze diff -s "
			 "sym,dso`: shares of each side's period and the change in points, "
			 "largest first.", top);
		heading(out, "changes", "Changes from the base", note);
		ret = ana_doc_render(pg->changes, out, ANA_FMT_HTML);
	}
	snprintf(note, sizeof(note), "The first %zu rows of `perfrec-analyze report --children "
		 "--sort sym,dso`; click a column to sort by it.", top);
	heading(out, "functions", "Top functions", note);
	if (!ret)
		ret = doc_block(out, "report", pg->report);
	if (!ret && pg->sched) {
		snprintf(note, sizeof(note), "The first %zu rows of `perfrec-analyze sched`, "
			 "from context-switch records.", top);
		heading(out, "tasks", "Tasks by on-CPU time", note);
		ret = doc_block(out, "sched", pg->sched);
	} else if (!ret) {
		heading(out, "tasks", "Tasks by on-CPU time", "No context-switch records in "
			"this trace: record with --switch-events (perfrec record -a "
			"--switch-events) for the timeline and the scheduler tables.");
	}
	if (!ret && pg->offcpu) {
		snprintf(note, sizeof(note), "The first %zu rows of `perfrec-analyze report "
			 "--off-cpu --children --sort sym,dso`: where tasks waited off the "
			 "CPU (record --off-cpu).", top);
		heading(out, "offcpu", "Top off-CPU functions", note);
		ret = doc_block(out, "offcpu", pg->offcpu);
	}
	if (!ret && pg->counters) {
		heading(out, "counters", "Counter groups", pg->ncticks ?
			"As `perfrec-analyze counters`. A time range shows the sum of the "
			"counters' deltas between snapshots (`counters --interval`) whose "
			"snapshot falls in the range, whole ticks, not prorated, and its rate "
			"over the time those ticks cover; a thread or process selection "
			"leaves them whole (they are kept summed over their CPUs or tasks, "
			"not per task)." :
			"As `perfrec-analyze counters`.");
		ret = doc_block(out, "counters", pg->counters);
	}
	return ret;
}

static int write_section(void *ctx, FILE *out, const char *name, size_t len)
{
	struct page *pg = ctx;
	if (len == 5 && !memcmp(name, "title", 5)) {
		const Perfrec__FileHeader *h = pg->s->header;
		fputs("perfrec: ", out);
		ana_html_str(out, h && h->hostname ? h->hostname : pg->s->path);
	} else if (len == 3 && !memcmp(name, "css", 3)) {
		fputs(ana_html_css, out);
	} else if (len == 6 && !memcmp(name, "header", 6)) {
		write_header(pg, out);
	} else if (len == 6 && !memcmp(name, "tables", 6)) {
		return write_tables(pg, out);
	} else if (len == 7 && !memcmp(name, "details", 7)) {
		return ana_doc_render(pg->info, out, ANA_FMT_HTML);
	} else if (len == 4 && !memcmp(name, "data", 4)) {
		return write_data(pg, out);
	} else if (len == 2 && !memcmp(name, "js", 2)) {
		fputs(ana_html_js, out);
	} else {
		return -EINVAL;   /* a marker page.html has and this file not */
	}
	return 0;
}

/* Copies the template, replacing each <!--perfrec:NAME--> marker with
 * what section() writes for it. */
static int write_template(FILE *out, int (*section)(void *ctx, FILE *out, const char *name,
						     size_t len), void *ctx)
{
	static const char open[] = "<!--perfrec:", close[] = "-->";
	const char *p = ana_html_page;
	for (;;) {
		const char *m = strstr(p, open);
		if (!m) {
			fputs(p, out);
			break;
		}
		fwrite(p, 1, (size_t)(m - p), out);
		const char *name = m + sizeof(open) - 1;
		const char *e = strstr(name, close);
		if (!e)
			return -EINVAL;
		int ret = section(ctx, out, name, (size_t)(e - name));
		if (ret)
			return ret;
		p = e + sizeof(close) - 1;
	}
	fflush(out);
	return ferror(out) ? -EIO : 0;
}

/* ---- the run */

static int opts_copy(struct ana_html_opts *dst, const struct ana_html_opts *o)
{
	memset(dst, 0, sizeof(*dst));
	if (!o)
		return 0;
	if (o->sz < sizeof(o->sz))
		return -EINVAL;
	for (size_t i = sizeof(*dst); i < o->sz; i++)
		if (((const unsigned char *)o)[i])
			return -EINVAL;
	memcpy(dst, o, o->sz < sizeof(*dst) ? o->sz : sizeof(*dst));
	dst->sz = sizeof(*dst);
	return 0;
}

static void page_release(struct page *pg)
{
	for (size_t i = 0; i < pg->nflames; i++) {
		ana_stree_release(&pg->flames[i].caller);
		ana_stree_release(&pg->flames[i].callee);
	}
	free(pg->flames);
	free(pg->path);
	ana_timeline_free(pg->tl);
	ana_tracks_free(pg->tk);
	prec_hashmap_release(&pg->sel);
	free(pg->nt_shown);
	prec_hashmap_release(&pg->shown_tid);
	prec_hashmap_release(&pg->shown_pid);
	prec_hashmap_release(&pg->tasks);
	prec_hashmap_release(&pg->names);
	prec_hashmap_release(&pg->dsos);
	prec_hashmap_release(&pg->labels);
	ana_doc_free(pg->report);
	ana_doc_free(pg->sched);
	ana_doc_free(pg->counters);
	free(pg->cticks);
	ana_doc_free(pg->info);
	ana_doc_free(pg->offcpu);
	ana_doc_free(pg->changes);
	ana_strpool_release(&pg->pool);
}

static int page_init(struct page *pg, struct ana_trace *const *files, size_t n,
		     const struct ana_html_opts *o)
{
	memset(pg, 0, sizeof(*pg));
	int ret = opts_copy(&pg->o, o);
	pg->files = files;
	pg->nfiles = n;
	pg->s = pg->cur = files[0];
	pg->intern = n > 1;
	for (size_t i = 0; i < n; i++) {
		pg->switches |= files[i]->switches != 0;
		pg->offcpu_iv |= files[i]->offcpu_intervals != 0;
	}
	prec_hashmap_init(&pg->tasks, sizeof(struct task_key), sizeof(struct task_val));
	prec_hashmap_init(&pg->names, sizeof(const char *), 1);
	prec_hashmap_init(&pg->dsos, sizeof(const char *), 1);
	prec_hashmap_init(&pg->labels, sizeof(const char *), sizeof(const char *));
	prec_hashmap_init(&pg->sel, sizeof(struct sel_key), sizeof(struct sel_val));
	prec_hashmap_init(&pg->shown_tid, sizeof(uint32_t), 1);
	prec_hashmap_init(&pg->shown_pid, sizeof(uint32_t), 1);
	ana_strpool_init(&pg->pool);
	return ret;
}

/* The stacks of one trace into the flame trees, without tables: the
 * other traces of an html --diff page. */
static int page_stacks(struct page *pg, struct ana_trace *s, const struct ana_filter *f)
{
	struct ana_report_opts ro = { .filter = f, .on_sample = on_sample, .ctx = pg };
	ro.keys[ro.nkeys++] = ANA_KEY_EVENT;   /* cheap: no frames of its own */
	pg->cur = s;
	int ret = ana_report_rows(s, &ro, NULL, NULL, NULL);
	if (!ret && (s->offcpu_intervals || s->offcpu_sums)) {
		ro.off_cpu = 1;
		ro.on_sample = on_offcpu;
		ret = ana_report_rows(s, &ro, NULL, NULL, NULL);
	}
	pg->cur = pg->s;
	return ret;
}

/* Keeps an interval row of the counters for write_counters(). */
static int on_cnt_tick(void *ctx, const struct ana_counter_tick *t)
{
	struct page *pg = ctx;
	if (pg->ncticks == pg->cticks_cap) {
		size_t cap = pg->cticks_cap ? 2 * pg->cticks_cap : 256;
		struct cnt_tick *n = realloc(pg->cticks, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		pg->cticks = n;
		pg->cticks_cap = cap;
	}
	pg->cticks[pg->ncticks++] = (struct cnt_tick){ t->group, t->event, t->time, t->from,
						       t->delta, t->counted };
	return 0;
}

/* The passes over the page's own traces, each file in turn:
 * tables, trees, timeline. */
static int page_build(struct page *pg)
{
	struct ana_trace *s = pg->s;
	char label[64];
	snprintf(label, sizeof(label), "%zu files", pg->nfiles);
	size_t top = pg->o.top ? pg->o.top : ANA_HTML_TOP;
	int ret = -ENOMEM, offcpu = 0;
	struct ana_report *rep = NULL, *off = NULL;
	struct ana_sched *sch = NULL;
	struct ana_counters *cnt = NULL;
	if (!(pg->report = ana_doc_new()) || !(pg->info = ana_doc_new()))
		return ret;
	/* Samples: the top-functions table and the flame trees. With several
	 * sampling events, rows are per event (periods of different events
	 * do not add up). */
	int sampling = 0;
	for (size_t i = 0; i < s->nevents; i++)
		sampling += s->events[i]->sampling != 0;
	struct ana_report_opts ro = { .top = top, .children = 1, .filter = pg->o.filter,
				      .on_sample = on_sample, .ctx = pg };
	ro.keys[ro.nkeys++] = ANA_KEY_SYM;
	ro.keys[ro.nkeys++] = ANA_KEY_DSO;
	if (sampling > 1)
		ro.keys[ro.nkeys++] = ANA_KEY_EVENT;
	struct ana_report_opts oo = { .top = top, .children = 1, .off_cpu = 1,
				      .filter = pg->o.filter, .on_sample = on_offcpu,
				      .ctx = pg };
	oo.keys[oo.nkeys++] = ANA_KEY_SYM;
	oo.keys[oo.nkeys++] = ANA_KEY_DSO;
	struct ana_sched_opts so = { .sort = ANA_SS_ONCPU, .top = top,
				     .jobs = pg->o.jobs, .filter = pg->o.filter,
				     .on_interval = on_interval, .ctx = pg };
	for (size_t i = 0; i < pg->nfiles; i++) {
		offcpu |= pg->files[i]->offcpu_intervals || pg->files[i]->offcpu_sums;
		if (pg->files[i]->kind_count[PERFREC__PACKET__DATA_GROUP] && !cnt &&
		    !(cnt = ana_counters_new()))
			goto out;
	}
	if (!(rep = ana_report_new(&ro)) || (offcpu && !(off = ana_report_new(&oo))) ||
	    (pg->switches && !(sch = ana_sched_new(&so))) ||
	    (offcpu && !(pg->offcpu = ana_doc_new())) ||
	    (pg->switches && !(pg->sched = ana_doc_new())))
		goto out;
	if ((ret = tracks_new(pg)) < 0 || (pg->switches && (ret = timeline_new(pg)) < 0))
		goto out;
	pg->own = 1;
	for (size_t i = 0; i < pg->nfiles && ret >= 0; i++) {
		struct ana_trace *f = pg->cur = pg->files[i];
		ret = ana_report_add(rep, f);
		/* off-CPU time: its own flame graph and table */
		if (ret >= 0 && off && (f->offcpu_intervals || f->offcpu_sums))
			ret = ana_report_add(off, f);
		/* switches: the scheduler tables and the timeline; --time
		 * counts from the first file's start */
		if (ret >= 0 && sch && f->switches)
			ret = ana_sched_add(sch, f, s->start);
		if (ret >= 0 && cnt && f->kind_count[PERFREC__PACKET__DATA_GROUP])
			ret = ana_counters_add(cnt, f);
		/* the page has its own tables of processes: no top list here */
		if (ret >= 0)
			ret = ana_info_run(f, 0, pg->info);
	}
	pg->own = 0;
	pg->cur = s;
	/* one file is named by its header, as in report and sched */
	const char *what = pg->nfiles > 1 ? label : NULL;
	if (ret >= 0)
		ret = ana_report_render(rep, what, pg->report);
	if (ret >= 0 && off)
		ret = ana_report_render(off, what, pg->offcpu);
	if (ret >= 0 && sch)
		ret = ana_sched_render(sch, what, pg->sched);
	if (ret >= 0 && cnt) {
		char err[256];
		struct ana_counters_opts co = { .on_tick = on_cnt_tick, .ctx = pg };
		if (!(pg->counters = ana_doc_new()))
			ret = -ENOMEM;
		else
			ret = ana_counters_render(cnt, pg->files[pg->nfiles - 1], what, &co,
						  pg->counters, err, sizeof(err));
		/* counters of several recordings do not add up (their values
		 * are cumulative, their ids their own): the page goes without */
		if (ret == -EINVAL && pg->nfiles > 1) {
			ana_doc_free(pg->counters);
			pg->counters = NULL;
			ret = 0;
		}
	}
	ret = ret < 0 ? ret : 0;
out:
	ana_report_free(rep);
	ana_report_free(off);
	ana_sched_free(sch);
	ana_counters_free(cnt);
	return ret;
}

static int html_run(struct ana_trace *const *files, size_t n, const struct ana_html_opts *o,
		    FILE *out)
{
	struct page pg;
	if (!n)
		return -EINVAL;
	int ret = page_init(&pg, files, n, o);
	if (!ret)
		ret = page_build(&pg);
	if (!ret)
		ret = write_template(out, write_section, &pg);
	page_release(&pg);
	return ret;
}

int ana_html_run(struct ana_trace *s, const struct ana_html_opts *o, FILE *out)
{
	return html_run(&s, 1, o, out);
}

int ana_html_run_files(struct ana_trace *const *files, size_t n,
		       const struct ana_html_opts *o, FILE *out)
{
	return html_run(files, n, o, out);
}

/* ---- several hosts: one page, a part per host */

/* The sections that differ per host, in the template's order. */
static const char *const host_sections[] = { "header", "tables", "details", "data" };
#define NHOST_SECTIONS (sizeof(host_sections) / sizeof(host_sections[0]))

struct host_part {
	const char *name;                    /* its first file's host name */
	char *sec[NHOST_SECTIONS];           /* each section, written */
	size_t len[NHOST_SECTIONS];
};

struct hosts_page {
	struct host_part *parts;
	size_t n;
};

/* Host h's page, built from its files and written section by section
 * into memory, then released: one host's trees and tracks in memory at a
 * time, and its page (bounded, see html.h) kept. */
static int host_part_build(struct host_part *hp, struct ana_trace *const *files, size_t n,
			   const struct ana_html_opts *o)
{
	struct page pg;
	const Perfrec__FileHeader *h = files[0]->header;
	hp->name = h && h->hostname ? h->hostname : files[0]->path;
	int ret = page_init(&pg, files, n, o);
	if (!ret)
		ret = page_build(&pg);
	for (size_t i = 0; i < NHOST_SECTIONS && !ret; i++) {
		FILE *mem = open_memstream(&hp->sec[i], &hp->len[i]);
		if (!mem) {
			ret = -errno;
			break;
		}
		ret = write_section(&pg, mem, host_sections[i], strlen(host_sections[i]));
		if (fclose(mem) && !ret)
			ret = -EIO;
	}
	page_release(&pg);
	return ret;
}

/* Each host's section in a block the page's script keeps (the host the
 * address names, else the first) or removes; the header starts with the
 * host selector, the data block holds every host's. */
static int write_hosts_section(void *ctx, FILE *out, const char *name, size_t len)
{
	struct hosts_page *hs = ctx;
	size_t which = NHOST_SECTIONS;
	for (size_t i = 0; i < NHOST_SECTIONS; i++)
		if (strlen(host_sections[i]) == len && !memcmp(host_sections[i], name, len))
			which = i;
	if (len == 5 && !memcmp(name, "title", 5)) {
		fprintf(out, "perfrec: %zu hosts", hs->n);
		return 0;
	}
	if (len == 3 && !memcmp(name, "css", 3)) {
		fputs(ana_html_css, out);
		return 0;
	}
	if (len == 2 && !memcmp(name, "js", 2)) {
		fputs(ana_html_js, out);
		return 0;
	}
	if (which == NHOST_SECTIONS)
		return -EINVAL;   /* a marker page.html has and this file not */
	if (!strcmp(host_sections[which], "data")) {
		fputs("{\"version\":1,\"hosts\":[", out);
		for (size_t h = 0; h < hs->n; h++) {
			fputs(h ? "," : "", out);
			ana_json_str_html(out, hs->parts[h].name);
		}
		fputs("],\"parts\":[\n", out);
		for (size_t h = 0; h < hs->n; h++) {
			fputs(h ? ",\n" : "", out);
			fwrite(hs->parts[h].sec[which], 1, hs->parts[h].len[which], out);
		}
		fputs("]}\n", out);
		return 0;
	}
	if (!strcmp(host_sections[which], "header"))
		fprintf(out, "<label class=\"host-pick\">Host <select id=\"host-which\" "
			"aria-label=\"Host\"></select></label> <span class=\"hint\">%zu hosts in "
			"this page</span>\n", hs->n);
	for (size_t h = 0; h < hs->n; h++) {
		fprintf(out, "<div class=\"host-part\" data-host-index=\"%zu\"%s>\n", h,
			h ? " hidden" : "");
		fwrite(hs->parts[h].sec[which], 1, hs->parts[h].len[which], out);
		fputs("</div>\n", out);
	}
	return 0;
}

int ana_html_run_hosts(struct ana_trace *const *files, const size_t *nfiles, size_t nhosts,
		       const struct ana_html_opts *o, FILE *out)
{
	if (!nhosts)
		return -EINVAL;
	if (nhosts == 1)
		return html_run(files, nfiles[0], o, out);
	struct hosts_page hs = { calloc(nhosts, sizeof(struct host_part)), nhosts };
	int ret = hs.parts ? 0 : -ENOMEM;
	for (size_t h = 0, off = 0; h < nhosts && !ret; off += nfiles[h++])
		ret = nfiles[h] ? host_part_build(&hs.parts[h], files + off, nfiles[h], o) :
		      -EINVAL;
	if (!ret)
		ret = write_template(out, write_hosts_section, &hs);
	for (size_t h = 0; hs.parts && h < nhosts; h++)
		for (size_t i = 0; i < NHOST_SECTIONS; i++)
			free(hs.parts[h].sec[i]);
	free(hs.parts);
	return ret;
}

/* A window reads only its frames (pass 1 read them all). */
static void part_window(const struct ana_diff_part *p)
{
	if (p->filter && p->filter->has_time)
		ana_trace_set_window(p->s, p->filter->tmin, p->filter->tmax);
}

int ana_html_diff_run(const struct ana_diff_part *base, size_t nbase,
		      const struct ana_diff_part *new_, size_t nnew,
		      const struct ana_html_opts *o, FILE *out)
{
	struct page pg;
	struct ana_diff *d = NULL;
	char *names = NULL;
	size_t len = 0;
	if (!nbase || !nnew)
		return -EINVAL;
	int ret = page_init(&pg, &new_[0].s, 1, o);
	if (ret)
		goto out;
	pg.diff = pg.intern = 1;
	pg.o.filter = new_[0].filter;
	/* the new side: the page's own trace, then the others' stacks */
	part_window(&new_[0]);
	if ((ret = page_build(&pg)) < 0)
		goto out;
	for (size_t i = 1; i < nnew && !ret; i++) {
		part_window(&new_[i]);
		ret = page_stacks(&pg, new_[i].s, new_[i].filter);
	}
	pg.side_base = 1;
	for (size_t i = 0; i < nbase && !ret; i++) {
		part_window(&base[i]);
		ret = page_stacks(&pg, base[i].s, base[i].filter);
	}
	pg.side_base = 0;
	if (ret)
		goto out;
	/* the changes table: diff's own rows */
	struct ana_diff_opts dopt = { .top = pg.o.top ? pg.o.top : ANA_HTML_TOP };
	dopt.keys[dopt.nkeys++] = ANA_KEY_SYM;
	dopt.keys[dopt.nkeys++] = ANA_KEY_DSO;
	ret = -ENOMEM;
	if (!(d = ana_diff_new(&dopt)) || !(pg.changes = ana_doc_new()))
		goto out;
	ret = 0;
	for (size_t i = 0; i < nbase + nnew && !ret; i++) {
		const struct ana_diff_part *p = i < nbase ? &base[i] : &new_[i - nbase];
		part_window(p);
		ret = ana_diff_add(d, i < nbase ? ANA_DIFF_BASE : ANA_DIFF_NEW, p->s, p->filter,
				   p->name);
	}
	if (!ret)
		ret = ana_diff_render(d, pg.changes);
	for (size_t i = 0; i < nbase && !ret; i++) {
		char nm[1024];
		ana_diff_part_label(&base[i], nm, sizeof(nm));
		char *n = realloc(names, len + strlen(nm) + 3);
		if (!n) {
			ret = -ENOMEM;
			break;
		}
		names = n;
		len += (size_t)sprintf(names + len, "%s%s", i ? ", " : "", nm);
	}
	pg.base_names = names;
	if (!ret)
		ret = write_template(out, write_section, &pg);
out:
	ana_diff_free(d);
	free(names);
	page_release(&pg);
	return ret;
}
