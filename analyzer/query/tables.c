/*
 * tables.c - the query's virtual tables: rows decoded from frames on
 * demand.
 *
 * Every table but files and stacks is a scan over the dataset's files:
 * a cursor opens one file at a time (ana_trace_open: pass 1 gives names,
 * events and symbols), selects the frames that hold the table's packet
 * kinds and meet the pushed-down time window (ana_trace_select), and
 * decodes them in order (ana_frames), turning the packets of one frame
 * into a buffer of rows that xColumn reads. So memory holds one file's
 * pass-1 state and one frame's rows, whatever the dataset's size.
 *
 * Call order of a scan, as SQLite drives it:
 *   xBestIndex: which constraints (time_ns ranges, host =, cpu =,
 *     stack_id =) reach xFilter, and which columns are used (a samples
 *     scan that reads no sym, dso or stack_id resolves no stack);
 *   xFilter: the window, then the first rows (fill());
 *   xNext / xColumn / xEof until the end; xClose.
 * Pushed constraints are not marked omitted: SQLite checks them again, so
 * a window at frame granularity (a frame that straddles its edge) is
 * never wrong, only a little wider.
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/query/query_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/read/dataset.h"
#include "analyzer/read/frames.h"
#include "analyzer/read/trace.h"
#include "analyzer/symbols/resolve.h"
#include "format/base/grow.h"
#include "format/error.h"
#include "format/scale.h"

#define MAX_LOCS 256   /* as report: the deepest stack resolved */

/* ---- the tables */

enum { T_SAMPLES, T_STACKS, T_SWITCHES, T_OFFCPU, T_COUNTERS, T_TASKS, T_LOSSES,
       T_FILES };

const struct ana_qtable_decl ana_qtables[] = {
	[T_SAMPLES] = { "samples", "host TEXT, session TEXT, time_ns INTEGER, cpu INTEGER, "
			"pid INTEGER, tid INTEGER, comm TEXT, event TEXT, period INTEGER, "
			"sym TEXT, dso TEXT, stack_id INTEGER" },
	[T_STACKS] = { "stacks", "stack_id INTEGER, depth INTEGER, sym TEXT, dso TEXT, "
		       "addr INTEGER" },
	[T_SWITCHES] = { "switches", "host TEXT, time_ns INTEGER, cpu INTEGER, "
			 "prev_pid INTEGER, prev_tid INTEGER, prev_comm TEXT, "
			 "prev_state TEXT, next_pid INTEGER, next_tid INTEGER, "
			 "next_comm TEXT" },
	[T_OFFCPU] = { "offcpu", "host TEXT, start_ns INTEGER, end_ns INTEGER, pid INTEGER, "
		       "tid INTEGER, comm TEXT, state TEXT, stack_id INTEGER, count INTEGER" },
	[T_COUNTERS] = { "counters", "host TEXT, time_ns INTEGER, cpu INTEGER, pid INTEGER, "
			 "event TEXT, group_leader TEXT, value INTEGER, enabled_ns INTEGER, "
			 "running_ns INTEGER, scaled REAL" },
	[T_TASKS] = { "tasks", "host TEXT, pid INTEGER, tid INTEGER, comm TEXT, "
		      "start_ns INTEGER, end_ns INTEGER" },
	[T_LOSSES] = { "losses", "host TEXT, time_ns INTEGER, kind TEXT, count INTEGER" },
	[T_FILES] = { "files", "host TEXT, session TEXT, path TEXT, start_ns INTEGER, "
		      "end_ns INTEGER, bytes INTEGER, samples INTEGER, whole INTEGER" },
};
const size_t ana_nqtables = sizeof(ana_qtables) / sizeof(ana_qtables[0]);

/* Samples per host, minute (the minute's first ns), comm, pid and stack. */
const char ana_qprofile_select[] =
	"SELECT host, time_ns - time_ns % 60000000000 AS minute, comm, pid, stack_id, "
	"count(*) AS samples, sum(period) AS period FROM samples "
	"GROUP BY host, minute, comm, pid, stack_id";
const char ana_qprofile_columns[] =
	"host TEXT, minute INTEGER, comm TEXT, pid INTEGER, stack_id INTEGER, "
	"samples INTEGER, period INTEGER";

/* Column positions the scans fill (as declared above). */
enum { S_HOST, S_SESSION, S_TIME, S_CPU, S_PID, S_TID, S_COMM, S_EVENT, S_PERIOD, S_SYM,
       S_DSO, S_STACK, S_NCOLS };
enum { K_ID, K_DEPTH, K_SYM, K_DSO, K_ADDR, K_NCOLS };
enum { W_HOST, W_TIME, W_CPU, W_PPID, W_PTID, W_PCOMM, W_PSTATE, W_NPID, W_NTID, W_NCOMM,
       W_NCOLS };
enum { O_HOST, O_START, O_END, O_PID, O_TID, O_COMM, O_STATE, O_STACK, O_COUNT, O_NCOLS };
enum { C_HOST, C_TIME, C_CPU, C_PID, C_EVENT, C_LEADER, C_VALUE, C_ENABLED, C_RUNNING,
       C_SCALED, C_NCOLS };
enum { A_HOST, A_PID, A_TID, A_COMM, A_START, A_END, A_NCOLS };
enum { L_HOST, L_TIME, L_KIND, L_COUNT, L_NCOLS };
enum { F_HOST, F_SESSION, F_PATH, F_START, F_END, F_BYTES, F_SAMPLES, F_WHOLE, F_NCOLS };

struct qdesc {
	uint64_t kinds;        /* packet kinds the scan reads; 0: no frames */
	int ncols;
	int symbols;           /* open traces with the symbolizer */
	int col_time, col_host, col_cpu, col_stack;   /* pushable; -1: none */
};

static const struct qdesc descs[] = {
	[T_SAMPLES] = { PREC_KIND(PERFREC__PACKET__DATA_SAMPLE), S_NCOLS, 1,
			S_TIME, S_HOST, S_CPU, -1 },
	[T_STACKS] = { 0, K_NCOLS, 1, -1, -1, -1, K_ID },
	[T_SWITCHES] = { PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH), W_NCOLS, 0,
			 W_TIME, W_HOST, W_CPU, -1 },
	[T_OFFCPU] = { PREC_KIND(PERFREC__PACKET__DATA_OFF_CPU), O_NCOLS, 1,
		       O_END, O_HOST, -1, -1 },
	[T_COUNTERS] = { PREC_KIND(PERFREC__PACKET__DATA_GROUP), C_NCOLS, 0,
			 C_TIME, C_HOST, C_CPU, -1 },
	[T_TASKS] = { PREC_KIND(PERFREC__PACKET__DATA_TASK), A_NCOLS, 0, -1, A_HOST, -1, -1 },
	[T_LOSSES] = { PREC_KIND(PERFREC__PACKET__DATA_LOSS), L_NCOLS, 0,
		       L_TIME, L_HOST, -1, -1 },
	[T_FILES] = { 0, F_NCOLS, 0, -1, F_HOST, -1, -1 },
};

/* ---- rows */

enum { V_NULL, V_INT, V_REAL, V_TEXT };

struct qval {
	int type;
	int64_t i;
	double d;
	const char *s;     /* borrowed: the trace's, the dataset's or the query's pool */
};

struct qvtab {
	sqlite3_vtab base;
	struct ana_query *q;
	int table;
};

/* Per-task state of a tasks scan (one file). */
struct qtask {
	uint32_t pid;
	uint64_t start, end;
	int has_start, has_end;
};

/* Per CPU of a switches scan: the task switched in last, and the task a
 * switch-out row named next whose switch-in record has not come yet. */
struct qcpu {
	uint32_t cur, pending;
	int has_cur, has_pending;
};

struct qcur {
	sqlite3_vtab_cursor base;
	struct ana_query *q;
	int table;
	const struct qdesc *d;
	/* pushed down (wall-clock ns, inclusive) */
	int has_lo, has_hi, has_cpu, has_stack, none;
	int64_t lo, hi, stack;
	uint32_t cpu;
	char *host;
	uint64_t used;         /* columns SQLite reads (bit per column) */
	/* the file being read */
	size_t next_file;
	size_t file_idx;       /* of f, when a trace is open */
	const struct ana_dataset_file *f;
	struct ana_trace *s;
	struct ana_frames *af;
	const struct prec_frame_info *list;
	size_t nlist;
	int windowed;          /* mlo/mhi hold the window in the file's clock */
	uint64_t mlo, mhi;
	/* rows of the current frame (or file, or stack) */
	struct qval *rows;
	size_t nrows, cap, pos;
	int64_t rowid;
	int eof;
	/* table state */
	struct ana_loc *locs;
	const char **names, **dsos;
	struct prec_hashmap cpus;      /* switches: cpu -> struct qcpu */
	struct prec_hashmap tasks;     /* tasks: tid -> struct qtask */
	size_t stack_pos;              /* stacks: next stack */
};

static int fail(struct qcur *c, int err, const char *what)
{
	struct ana_query *q = c->q;
	if (!q->fail) {
		q->fail = err;
		if (c->f)
			snprintf(q->msg, sizeof(q->msg), "%s: %s: %s", what, c->f->path,
				 prec_strerror(err));
		else
			snprintf(q->msg, sizeof(q->msg), "%s: %s", what, prec_strerror(err));
	}
	return err;
}

/* A new row of ncols NULL cells, or NULL (out of memory). */
static struct qval *row_new(struct qcur *c)
{
	size_t n = (size_t)c->d->ncols;
	if (prec_grow(&c->rows, &c->cap, (c->nrows + 1) * n, sizeof(*c->rows)))
		return NULL;
	struct qval *r = &c->rows[c->nrows++ * n];
	memset(r, 0, n * sizeof(*r));
	return r;
}

static void set_int(struct qval *v, int64_t i)
{
	v->type = V_INT;
	v->i = i;
}

static void set_text(struct qval *v, const char *s)
{
	v->type = s ? V_TEXT : V_NULL;
	v->s = s;
}

/* Wall-clock ns of the file's time t; NULL when the file has no clock
 * reference. */
static void set_time(struct qcur *c, struct qval *v, uint64_t t)
{
	if (c->f->realtime_ns)
		set_int(v, (int64_t)ana_dataset_wall(c->f, t));
}

static int used(const struct qcur *c, int col)
{
	return col >= 63 || (c->used >> col) & 1;
}

/* Whether a packet at the file's time t can meet the window (the rows
 * outside it would be dropped by SQLite anyway: this saves naming them). */
static int in_window(const struct qcur *c, uint64_t t)
{
	return !c->windowed || (t >= c->mlo && t <= c->mhi);
}

int64_t ana_query_stack_id(const char *const *syms, const char *const *dsos, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		const char *parts[2] = { syms[i] ? syms[i] : "", dsos[i] ? dsos[i] : "" };
		for (int k = 0; k < 2; k++) {
			const unsigned char *p = (const unsigned char *)parts[k];
			do {
				h = (h ^ *p) * 0x100000001b3ull;
			} while (*p++);
		}
	}
	int64_t id;
	memcpy(&id, &h, sizeof(id));
	return id ? id : 1;
}

/* Names locs[0..n) (ana_frame_name, dso "[unknown]" when none) into
 * c->names / c->dsos. */
static int name_locs(struct qcur *c, struct ana_trace *s, int n)
{
	for (int i = 0; i < n; i++) {
		if (!(c->names[i] = ana_frame_name(s, &c->locs[i])))
			return -ENOMEM;
		c->dsos[i] = c->locs[i].dso ? c->locs[i].dso : "[unknown]";
	}
	return 0;
}

/* ---- the stacks of the dataset, for the stacks table */

static int stack_add(struct ana_query *q, struct qcur *c, int n)
{
	int64_t id = ana_query_stack_id(c->names, c->dsos, (size_t)n);
	int created;
	struct ana_qstack *st = prec_hashmap_get(&q->stacks, &id, &created);
	if (!st)
		return -ENOMEM;
	if (!created)
		return 0;
	if (prec_grow(&q->locs, &q->cap_locs, q->nlocs + (size_t)n, sizeof(*q->locs)))
		return -ENOMEM;
	st->first = q->nlocs;
	st->n = (size_t)n;
	for (int i = 0; i < n; i++) {
		struct ana_qloc *l = &q->locs[q->nlocs++];
		if (!(l->sym = ana_strpool_intern(&q->pool, c->names[i])) ||
		    !(l->dso = ana_strpool_intern(&q->pool, c->dsos[i])))
			return -ENOMEM;
		l->addr = c->locs[i].ip;
	}
	return 0;
}

struct build_ctx {
	struct qcur *c;
	struct ana_trace *s;
};

static int build_packet(void *ctx, const struct prec_packet *p)
{
	struct build_ctx *b = ctx;
	int n;
	if (p->pkt->data_case == PERFREC__PACKET__DATA_SAMPLE)
		n = ana_resolve_sample(b->s, p, b->c->locs, MAX_LOCS);
	else if (p->pkt->data_case == PERFREC__PACKET__DATA_OFF_CPU && p->pkt->off_cpu->callchain)
		n = ana_resolve_offcpu(b->s, p, b->c->locs, MAX_LOCS);
	else
		return 0;
	if (n < 0)
		return n;
	if (name_locs(b->c, b->s, n) < 0)
		return -ENOMEM;
	return stack_add(b->c->q, b->c, n);
}

static int open_trace(struct qcur *c, size_t i, int symbols, struct ana_trace **out);
static void release_trace(struct ana_query *q, struct ana_trace *s, size_t i);

/* Every stack of every file's samples and off-CPU records, once. */
static int build_stacks(struct qcur *c)
{
	struct ana_query *q = c->q;
	if (q->stacks_built)
		return 0;
	prec_hashmap_clear(&q->stacks);
	q->nlocs = 0;
	for (size_t i = 0; i < q->ds->nfiles; i++) {
		struct ana_trace *s;
		c->f = &q->ds->files[i];
		int ret = open_trace(c, i, 1, &s);
		if (ret == 0)
			continue;   /* skipped, counted */
		if (ret < 0)
			return ret;
		struct build_ctx b = { c, s };
		ana_trace_set_kinds(s, PREC_KIND(PERFREC__PACKET__DATA_SAMPLE) |
				    PREC_KIND(PERFREC__PACKET__DATA_OFF_CPU));
		ret = ana_trace_scan(s, "query", build_packet, &b);
		ana_trace_set_kinds(s, 0);
		release_trace(q, s, i);
		if (ret < 0)
			return fail(c, ret, "reading the stacks");
	}
	c->f = NULL;
	q->stacks_built = 1;
	return 0;
}

/* ---- packets to rows */

static int samples_packet(struct qcur *c, const struct prec_packet *p)
{
	if (p->pkt->data_case != PERFREC__PACKET__DATA_SAMPLE)
		return 0;
	const Perfrec__Sample *smp = p->pkt->sample;
	struct ana_trace *s = c->s;
	if (!in_window(c, p->time) || (c->has_cpu && smp->cpu != c->cpu))
		return 0;
	struct qval *r = row_new(c);
	if (!r)
		return -ENOMEM;
	set_text(&r[S_HOST], c->f->host);
	set_text(&r[S_SESSION], c->f->session);
	set_time(c, &r[S_TIME], p->time);
	set_int(&r[S_CPU], smp->cpu);
	set_int(&r[S_PID], smp->pid);
	set_int(&r[S_TID], smp->tid);
	if (used(c, S_COMM) && !(r[S_COMM].s = ana_trace_comm_name(s, smp->tid, p->time)))
		return -ENOMEM;
	r[S_COMM].type = used(c, S_COMM) ? V_TEXT : V_NULL;
	set_text(&r[S_EVENT], ana_trace_event_name(s, ana_trace_event_of(s, smp->id)));
	/* weighted as report weighs it: an event without a period counts 1 */
	set_int(&r[S_PERIOD], smp->period ? (int64_t)smp->period : 1);
	int stack = used(c, S_STACK);
	if (!stack && !used(c, S_SYM) && !used(c, S_DSO))
		return 0;
	int n = ana_resolve_sample(s, p, c->locs, stack ? MAX_LOCS : 1);
	if (n < 0)
		return n;
	if (name_locs(c, s, n) < 0)
		return -ENOMEM;
	set_text(&r[S_SYM], c->names[0]);
	set_text(&r[S_DSO], c->dsos[0]);
	if (stack)
		set_int(&r[S_STACK], ana_query_stack_id(c->names, c->dsos, (size_t)n));
	return 0;
}

static const char *comm_of(struct ana_trace *s, uint32_t tid, uint64_t t)
{
	return tid == UINT32_MAX ? NULL : ana_trace_comm_name(s, tid, t);
}

/* One row per switch. A CPU-wide switch-out record names both tasks and
 * makes the row; the switch-in record that follows it on the CPU repeats
 * it and makes none. A switch-in record without that switch-out (the
 * kernel wrote none for the previous task) makes the row itself, with no
 * prev_state. Per-task records name only the task: the other side is
 * NULL. Records of one CPU are in time order in the file. */
static int switches_packet(struct qcur *c, const struct prec_packet *p)
{
	if (p->pkt->data_case != PERFREC__PACKET__DATA_CONTEXT_SWITCH)
		return 0;
	const Perfrec__ContextSwitch *cs = p->pkt->context_switch;
	struct ana_trace *s = c->s;
	uint32_t cpu = cs->cpu, tid = cs->tid, pid = cs->pid;
	uint32_t other = cs->other_tid, other_pid = cs->other_pid;
	int out = cs->out;
	if (cs->cpu_wide) {
		struct qcpu *k = prec_hashmap_get(&c->cpus, &cpu, NULL);
		if (!k)
			return -ENOMEM;
		if (!out) {
			int repeat = k->has_pending && k->pending == tid;
			k->cur = tid;
			k->has_cur = tid != UINT32_MAX;
			k->has_pending = 0;
			if (repeat)
				return 0;
			/* the row of this switch-in: prev is the other task */
			out = -1;
		} else {
			if (tid == UINT32_MAX && k->has_cur) {
				/* an exiting task's last switch-out names nobody
				 * (sched.c): it is the task switched in last */
				tid = k->cur;
				pid = ana_trace_pid_of(s, tid);
			}
			k->pending = other;
			k->has_pending = 1;
			k->has_cur = 0;
		}
	}
	if (!in_window(c, p->time) || (c->has_cpu && cpu != c->cpu))
		return 0;
	struct qval *r = row_new(c);
	if (!r)
		return -ENOMEM;
	set_text(&r[W_HOST], c->f->host);
	set_time(c, &r[W_TIME], p->time);
	set_int(&r[W_CPU], cpu);
	/* the task of the record, and the other one of a CPU-wide record */
	int self = out > 0 ? W_PPID : W_NPID, peer = out > 0 ? W_NPID : W_PPID;
	if (tid != UINT32_MAX) {
		set_int(&r[self], pid == UINT32_MAX ? -1 : (int64_t)pid);
		set_int(&r[self + 1], tid);
		set_text(&r[self + 2], comm_of(s, tid, p->time));
	}
	if (cs->cpu_wide && other != UINT32_MAX) {
		set_int(&r[peer], other_pid == UINT32_MAX ? -1 : (int64_t)other_pid);
		set_int(&r[peer + 1], other);
		set_text(&r[peer + 2], comm_of(s, other, p->time));
	}
	if (out > 0)
		set_text(&r[W_PSTATE], cs->preempt ? "R" : "S");
	return 0;
}

static int offcpu_packet(struct qcur *c, const struct prec_packet *p)
{
	if (p->pkt->data_case != PERFREC__PACKET__DATA_OFF_CPU)
		return 0;
	const Perfrec__OffCpu *oc = p->pkt->off_cpu;
	struct ana_trace *s = c->s;
	if (!in_window(c, p->time))
		return 0;
	struct qval *r = row_new(c);
	if (!r)
		return -ENOMEM;
	set_text(&r[O_HOST], c->f->host);
	/* a sum of blocks (count >= 1) is one row as long as their total */
	set_time(c, &r[O_START], p->time >= oc->duration ? p->time - oc->duration : 0);
	set_time(c, &r[O_END], p->time);
	set_int(&r[O_PID], oc->pid);
	set_int(&r[O_TID], oc->tid);
	if (used(c, O_COMM) && !(r[O_COMM].s = ana_trace_comm_name(s, oc->tid, p->time)))
		return -ENOMEM;
	r[O_COMM].type = used(c, O_COMM) ? V_TEXT : V_NULL;
	set_text(&r[O_STATE], ana_offcpu_state_name((int)oc->state));
	/* blocks: an interval is one, a sum says how many it holds */
	set_int(&r[O_COUNT], oc->count ? (int64_t)oc->count : 1);
	set_int(&r[O_STACK], 0);
	if (!oc->callchain || !used(c, O_STACK))
		return 0;
	int n = ana_resolve_offcpu(s, p, c->locs, MAX_LOCS);
	if (n < 0)
		return n;
	if (name_locs(c, s, n) < 0)
		return -ENOMEM;
	set_int(&r[O_STACK], ana_query_stack_id(c->names, c->dsos, (size_t)n));
	return 0;
}

/* The name of the event whose EventDesc.index is idx. */
static const char *event_by_index(const struct ana_trace *s, uint32_t idx)
{
	for (size_t i = 0; i < s->nevents; i++)
		if (s->events[i]->index == idx)
			return ana_trace_event_name(s, (int)i);
	return NULL;
}

static const char *group_leader(const struct ana_trace *s, uint32_t g)
{
	for (size_t i = 0; i < s->ngroups; i++)
		if (s->groups[i]->index == g && s->groups[i]->n_events)
			return event_by_index(s, s->groups[i]->events[0]);
	return NULL;
}

/* One row per member of a group snapshot: the instance read (cpu, pid:
 * -1 for the one the group was not opened on), the raw cumulative value
 * and its times; scaled by enabled / running as counters scales it. */
static int counters_packet(struct qcur *c, const struct prec_packet *p)
{
	if (p->pkt->data_case != PERFREC__PACKET__DATA_GROUP)
		return 0;
	const Perfrec__GroupSnapshot *g = p->pkt->group;
	const Perfrec__GroupRead *rd = g->read;
	struct ana_trace *s = c->s;
	if (!rd || !in_window(c, p->time) ||
	    (c->has_cpu && (g->cpu < 0 || (uint32_t)g->cpu != c->cpu)))
		return 0;
	size_t n = rd->n_ids < rd->n_values ? rd->n_ids : rd->n_values;
	const char *leader = group_leader(s, g->group);
	for (size_t i = 0; i < n; i++) {
		struct qval *r = row_new(c);
		if (!r)
			return -ENOMEM;
		const int *ev = prec_hashmap_find(&s->id2event, &rd->ids[i]);
		set_text(&r[C_HOST], c->f->host);
		set_time(c, &r[C_TIME], p->time);
		set_int(&r[C_CPU], g->cpu < 0 ? -1 : g->cpu);
		set_int(&r[C_PID], g->pid < 0 ? -1 : g->pid);
		set_text(&r[C_EVENT], ana_trace_event_name(s, ev ? *ev : -1));
		set_text(&r[C_LEADER], leader);
		set_int(&r[C_VALUE], (int64_t)rd->values[i]);
		set_int(&r[C_ENABLED], (int64_t)rd->time_enabled);
		set_int(&r[C_RUNNING], (int64_t)rd->time_running);
		struct prec_scaled sc;
		if (prec_scale(rd->values[i], rd->time_enabled, rd->time_running, &sc) !=
		    PREC_SCALE_NOT_COUNTED) {
			r[C_SCALED].type = V_REAL;
			r[C_SCALED].d = (double)sc.value;
		}
	}
	return 0;
}

static int tasks_packet(struct qcur *c, const struct prec_packet *p)
{
	if (p->pkt->data_case != PERFREC__PACKET__DATA_TASK)
		return 0;
	const Perfrec__TaskEvent *te = p->pkt->task;
	struct qtask *t = prec_hashmap_get(&c->tasks, &te->tid, NULL);
	if (!t)
		return -ENOMEM;
	if (te->kind != PERFREC__TASK_EVENT__KIND__EXIT)
		t->pid = te->pid;
	if (te->kind == PERFREC__TASK_EVENT__KIND__FORK && !t->has_start) {
		t->start = p->time;
		t->has_start = 1;
	}
	if (te->kind == PERFREC__TASK_EVENT__KIND__EXIT) {
		t->pid = te->pid;
		t->end = p->time;
		t->has_end = 1;
	}
	return 0;
}

/* A file's tasks once its task events are all read: started (FORK) and
 * ended (EXIT) when the trace saw it, NULL when before or after it; the
 * comm is the task's last name. */
static int tasks_end(struct qcur *c)
{
	for (size_t i = 0; i < prec_hashmap_count(&c->tasks); i++) {
		uint32_t tid = *(const uint32_t *)prec_hashmap_key(&c->tasks, i);
		const struct qtask *t = prec_hashmap_val(&c->tasks, i);
		struct qval *r = row_new(c);
		if (!r)
			return -ENOMEM;
		set_text(&r[A_HOST], c->f->host);
		set_int(&r[A_PID], t->pid);
		set_int(&r[A_TID], tid);
		if (!(r[A_COMM].s = ana_trace_comm_name(c->s, tid, UINT64_MAX)))
			return -ENOMEM;
		r[A_COMM].type = V_TEXT;
		if (t->has_start)
			set_time(c, &r[A_START], t->start);
		if (t->has_end)
			set_time(c, &r[A_END], t->end);
	}
	prec_hashmap_clear(&c->tasks);
	return 0;
}

static int losses_packet(struct qcur *c, const struct prec_packet *p)
{
	if (p->pkt->data_case != PERFREC__PACKET__DATA_LOSS || !in_window(c, p->time))
		return 0;
	const Perfrec__Loss *l = p->pkt->loss;
	struct qval *r = row_new(c);
	if (!r)
		return -ENOMEM;
	set_text(&r[L_HOST], c->f->host);
	set_time(c, &r[L_TIME], p->time);
	set_text(&r[L_KIND], ana_loss_kind_name((int)l->kind));
	set_int(&r[L_COUNT], (int64_t)l->count);
	return 0;
}

static int files_row(struct qcur *c)
{
	const struct ana_dataset_file *f = c->f;
	struct qval *r = row_new(c);
	if (!r)
		return -ENOMEM;
	set_text(&r[F_HOST], f->host);
	set_text(&r[F_SESSION], f->session);
	set_text(&r[F_PATH], f->path);
	set_time(c, &r[F_START], f->start);
	set_time(c, &r[F_END], f->end);
	set_int(&r[F_BYTES], (int64_t)f->bytes);
	set_int(&r[F_SAMPLES], (int64_t)f->samples);
	set_int(&r[F_WHOLE], f->state == ANA_FILE_WHOLE);
	return 0;
}

static int (*const on_packet[])(struct qcur *, const struct prec_packet *) = {
	[T_SAMPLES] = samples_packet, [T_SWITCHES] = switches_packet,
	[T_OFFCPU] = offcpu_packet, [T_COUNTERS] = counters_packet,
	[T_TASKS] = tasks_packet, [T_LOSSES] = losses_packet,
};

/* ---- files and frames */

/* Opens file i of the dataset: 1 and *out; 0 when it cannot be read
 * (counted in the stats, the cause kept for the caller's warning). */
static int open_trace(struct qcur *c, size_t i, int symbols, struct ana_trace **out)
{
	struct ana_query *q = c->q;
	const struct ana_query_opts *o = &q->o;
	/* Pass 1 reads names, events, maps and symbols; the bulk kinds are
	 * the scans' own, read only where a scan needs them. */
	struct ana_trace_opts so = {
		.jobs = o->jobs, .symbols = symbols, .symfs = o->symfs,
		.no_demangle = o->no_demangle, .no_cut = o->no_cut,
		.pass1_kinds = PREC_KINDS_ALL &
			~(PREC_KIND(PERFREC__PACKET__DATA_SAMPLE) |
			  PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH) |
			  PREC_KIND(PERFREC__PACKET__DATA_GROUP) |
			  PREC_KIND(PERFREC__PACKET__DATA_RAW) |
			  PREC_KIND(PERFREC__PACKET__DATA_OFF_CPU)),
	};
	if (q->kept && q->kept_file == i && q->kept_symbols >= symbols) {
		*out = q->kept;
		q->kept = NULL;
		(*out)->windowed = 0;   /* the last scan's window */
		return 1;
	}
	if (o->mem) {
		so.mem = o->mem[i];
		so.mem_len = o->mem_len[i];
	}
	int ret = ana_trace_open(out, q->ds->files[i].path, &so);
	if (ret == -ENOMEM)
		return fail(c, ret, "opening");
	if (ret < 0) {
		q->stats.files_skipped++;
		snprintf(q->skip_msg, sizeof(q->skip_msg), "%s: %s", q->ds->files[i].path,
			 prec_strerror(ret));
		return 0;
	}
	q->stats.files_opened++;
	q->stats.frames_total += (*out)->nframes;
	return 1;
}

/* Wall-clock ns w in file f's monotonic clock (0 before its start). */
static uint64_t to_mono(const struct ana_dataset_file *f, uint64_t w)
{
	if (w >= f->realtime_ns)
		return f->monotonic_ns + (w - f->realtime_ns);
	uint64_t d = f->realtime_ns - w;
	return d < f->monotonic_ns ? f->monotonic_ns - d : 0;
}

/* The window in file f's clock, when one is pushed and f has a clock
 * reference; 0 when the file lies wholly outside it. */
static int file_window(struct qcur *c, const struct ana_dataset_file *f)
{
	c->windowed = 0;
	if (!(c->has_lo || c->has_hi) || !f->realtime_ns)
		return 1;
	/* time_ns is at most INT64_MAX: no bound above it converts past
	 * UINT64_MAX */
	uint64_t lo = c->has_lo && c->lo > 0 ? (uint64_t)c->lo : 0;
	if (c->has_hi && c->hi < 0)
		return 0;
	c->mlo = to_mono(f, lo);
	c->mhi = c->has_hi ? to_mono(f, (uint64_t)c->hi) : UINT64_MAX;
	if (c->mlo > c->mhi)
		return 0;
	if (f->end && f->end >= f->start && (c->mlo > f->end || c->mhi < f->start))
		return 0;
	c->windowed = 1;
	return 1;
}

void ana_qtables_drop_kept(struct ana_query *q)
{
	if (q->kept)
		q->stats.damaged += q->kept->ndamage;
	ana_trace_free(q->kept);
	q->kept = NULL;
}

/* Keeps s for the next scan of file i (the one kept before is freed). */
static void release_trace(struct ana_query *q, struct ana_trace *s, size_t i)
{
	ana_qtables_drop_kept(q);
	q->kept = s;
	q->kept_file = i;
	q->kept_symbols = s->syms != NULL;
}

static void close_file(struct qcur *c)
{
	ana_frames_free(c->af);
	c->af = NULL;
	if (c->s && c->list != c->s->frames)
		free((void *)c->list);
	c->list = NULL;
	if (c->s)
		release_trace(c->q, c->s, c->file_idx);
	c->s = NULL;
	c->f = NULL;
}

/* Opens the next file the scan needs and its frames: 1, 0 at the end of
 * the dataset, < 0 on failure. */
static int next_file(struct qcur *c)
{
	struct ana_query *q = c->q;
	while (c->next_file < q->ds->nfiles) {
		size_t i = c->next_file++;
		const struct ana_dataset_file *f = &q->ds->files[i];
		if (c->host && strcmp(c->host, f->host))
			continue;
		if (!file_window(c, f))
			continue;
		c->f = f;
		if (!c->d->kinds)
			return 1;
		int ret = open_trace(c, i, c->d->symbols, &c->s);
		if (ret < 0)
			return ret;
		if (!ret)
			continue;
		c->file_idx = i;
		if (c->windowed)
			ana_trace_set_window(c->s, c->mlo, c->mhi);
		if (ana_trace_select(c->s, c->d->kinds, 0, c->windowed, &c->list, &c->nlist) < 0)
			return fail(c, -ENOMEM, "reading");
		struct ana_frames_opts fo = { .jobs = q->o.jobs, .kinds = c->d->kinds };
		if (!(c->af = ana_frames_new(c->s->reader, c->list, c->nlist, &fo)))
			return fail(c, -ENOMEM, "reading");
		return 1;
	}
	return 0;
}

/* Refills the row buffer: the next frame's rows (skipping frames that
 * make none), a file's rows, or a stack's locations; eof at the end. */
static int fill(struct qcur *c)
{
	struct ana_query *q = c->q;
	c->nrows = 0;
	c->pos = 0;
	while (!c->nrows) {
		int ret;
		if (c->table == T_STACKS) {
			if (c->has_stack) {
				const struct ana_qstack *st = c->stack_pos ? NULL :
					prec_hashmap_find(&q->stacks, &c->stack);
				c->stack_pos = 1;
				if (!st) {
					c->eof = 1;
					return 0;
				}
				for (size_t k = 0; k < st->n; k++) {
					struct qval *r = row_new(c);
					if (!r)
						return fail(c, -ENOMEM, "stacks");
					const struct ana_qloc *l = &q->locs[st->first + k];
					set_int(&r[K_ID], c->stack);
					set_int(&r[K_DEPTH], (int64_t)k);
					set_text(&r[K_SYM], l->sym);
					set_text(&r[K_DSO], l->dso);
					set_int(&r[K_ADDR], (int64_t)l->addr);
				}
				continue;
			}
			if (c->stack_pos >= prec_hashmap_count(&q->stacks)) {
				c->eof = 1;
				return 0;
			}
			int64_t id = *(const int64_t *)prec_hashmap_key(&q->stacks, c->stack_pos);
			const struct ana_qstack *st = prec_hashmap_val(&q->stacks, c->stack_pos++);
			for (size_t k = 0; k < st->n; k++) {
				struct qval *r = row_new(c);
				if (!r)
					return fail(c, -ENOMEM, "stacks");
				const struct ana_qloc *l = &q->locs[st->first + k];
				set_int(&r[K_ID], id);
				set_int(&r[K_DEPTH], (int64_t)k);
				set_text(&r[K_SYM], l->sym);
				set_text(&r[K_DSO], l->dso);
				set_int(&r[K_ADDR], (int64_t)l->addr);
			}
			continue;
		}
		if (c->af) {
			struct ana_loaded *lf;
			ret = ana_frames_next(c->af, &lf);
			if (ret < 0)
				return fail(c, ret, "reading");
			if (ret > 0) {
				q->stats.frames_read++;
				if (lf->err)
					ana_trace_note_damage(c->s, lf->fi->offset, lf->err);
				for (size_t i = 0; i < lf->npkts && ret >= 0; i++)
					ret = on_packet[c->table](c, &lf->pkts[i]);
				ana_frames_release(c->af, lf);
				if (ret < 0)
					return fail(c, ret, "reading");
				continue;
			}
			/* the file's frames are done; its rows (tasks) may
			 * still name its strings: closed on the next fill */
			ana_frames_free(c->af);
			c->af = NULL;
			if (c->table == T_TASKS && (ret = tasks_end(c)) < 0)
				return fail(c, ret, "reading");
			continue;
		}
		if (c->f && !c->d->kinds) {
			c->f = NULL;   /* files: its one row was read */
			continue;
		}
		if (c->s) {
			close_file(c);
			continue;
		}
		if ((ret = next_file(c)) < 0)
			return ret;
		if (!ret) {
			c->eof = 1;
			return 0;
		}
		if (!c->d->kinds && (ret = files_row(c)) < 0)
			return fail(c, ret, "files");
	}
	return 0;
}

/* ---- the module */

static int x_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
		     sqlite3_vtab **out, char **err)
{
	(void)argc;
	(void)argv;
	(void)err;
	struct qvtab *vt = aux;
	char *sql = sqlite3_mprintf("CREATE TABLE x(%s)", ana_qtables[vt->table].columns);
	if (!sql)
		return SQLITE_NOMEM;
	int rc = sqlite3_declare_vtab(db, sql);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return rc;
	/* reading a trace has no side effect: usable from the profile view
	 * with untrusted schemas off */
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	struct qvtab *v = sqlite3_malloc(sizeof(*v));
	if (!v)
		return SQLITE_NOMEM;
	memset(v, 0, sizeof(*v));
	v->q = vt->q;
	v->table = vt->table;
	*out = &v->base;
	return SQLITE_OK;
}

static int x_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

/* idxStr holds one letter per argument xFilter gets: 'l' time >= (or >),
 * 'h' time <= (or <), 'e' time =, 's' host =, 'c' cpu =, 'k' stack_id =;
 * idxNum the columns used (bit per column, bit 30 for any above). */
static int x_best_index(sqlite3_vtab *tab, sqlite3_index_info *ix)
{
	struct qvtab *vt = (struct qvtab *)tab;
	const struct qdesc *d = &descs[vt->table];
	char letters[64];
	int nargs = 0;
	double cost = 1e6;
	for (int i = 0; i < ix->nConstraint && nargs < 63; i++) {
		const struct sqlite3_index_constraint *k = &ix->aConstraint[i];
		if (!k->usable)
			continue;
		char l = 0;
		if (k->iColumn == d->col_time && d->col_time >= 0) {
			switch (k->op) {
			case SQLITE_INDEX_CONSTRAINT_GT: case SQLITE_INDEX_CONSTRAINT_GE: l = 'l'; break;
			case SQLITE_INDEX_CONSTRAINT_LT: case SQLITE_INDEX_CONSTRAINT_LE: l = 'h'; break;
			case SQLITE_INDEX_CONSTRAINT_EQ: l = 'e'; break;
			}
			if (l)
				cost /= 3;
		} else if (k->op == SQLITE_INDEX_CONSTRAINT_EQ && k->iColumn >= 0) {
			if (k->iColumn == d->col_host)
				l = 's', cost /= 2;
			else if (k->iColumn == d->col_cpu)
				l = 'c', cost /= 2;
			else if (k->iColumn == d->col_stack)
				l = 'k', cost = 10;
		}
		if (!l)
			continue;
		letters[nargs++] = l;
		ix->aConstraintUsage[i].argvIndex = nargs;
		ix->aConstraintUsage[i].omit = 0;
	}
	letters[nargs] = '\0';
	ix->idxStr = sqlite3_mprintf("%s", letters);
	if (!ix->idxStr)
		return SQLITE_NOMEM;
	ix->needToFreeIdxStr = 1;
	uint64_t cols = ix->colUsed;
	ix->idxNum = (int)(cols & 0x3fffffffu) | (cols >> 30 ? 1 << 30 : 0);
	ix->estimatedCost = cost;
	ix->estimatedRows = (sqlite3_int64)cost;
	return SQLITE_OK;
}

static int x_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out)
{
	struct qvtab *vt = (struct qvtab *)tab;
	struct qcur *c = sqlite3_malloc(sizeof(*c));
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	c->q = vt->q;
	c->table = vt->table;
	c->d = &descs[vt->table];
	prec_hashmap_init(&c->cpus, sizeof(uint32_t), sizeof(struct qcpu));
	prec_hashmap_init(&c->tasks, sizeof(uint32_t), sizeof(struct qtask));
	c->locs = calloc(MAX_LOCS, sizeof(*c->locs));
	c->names = calloc(MAX_LOCS, sizeof(*c->names));
	c->dsos = calloc(MAX_LOCS, sizeof(*c->dsos));
	if (!c->locs || !c->names || !c->dsos) {
		free(c->locs);
		free(c->names);
		free(c->dsos);
		sqlite3_free(c);
		return SQLITE_NOMEM;
	}
	*out = &c->base;
	return SQLITE_OK;
}

static void reset(struct qcur *c)
{
	close_file(c);
	prec_hashmap_clear(&c->cpus);
	prec_hashmap_clear(&c->tasks);
	sqlite3_free(c->host);
	c->host = NULL;
	c->has_lo = c->has_hi = c->has_cpu = c->has_stack = c->none = 0;
	c->nrows = c->pos = c->stack_pos = c->next_file = 0;
	c->eof = 0;
	c->rowid = 0;
}

static int x_close(sqlite3_vtab_cursor *cur)
{
	struct qcur *c = (struct qcur *)cur;
	reset(c);
	prec_hashmap_release(&c->cpus);
	prec_hashmap_release(&c->tasks);
	free(c->rows);
	free(c->locs);
	free(c->names);
	free(c->dsos);
	sqlite3_free(c);
	return SQLITE_OK;
}

static int sql_rc(struct qcur *c, int ret)
{
	struct qvtab *vt = (struct qvtab *)c->base.pVtab;
	if (ret >= 0)
		return SQLITE_OK;
	sqlite3_free(vt->base.zErrMsg);
	vt->base.zErrMsg = sqlite3_mprintf("%s", c->q->msg);
	return ret == -ENOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
}

/* A pushed time bound: integers as they are, reals rounded outward (the
 * window may only widen), anything else not pushed. 1 when v bounds. */
static int bound(sqlite3_value *v, int upper, int64_t *out)
{
	int t = sqlite3_value_numeric_type(v);
	if (t == SQLITE_INTEGER) {
		*out = sqlite3_value_int64(v);
		return 1;
	}
	if (t == SQLITE_FLOAT) {
		double d = sqlite3_value_double(v);
		if (!(d > -9.2e18 && d < 9.2e18))
			return 0;
		*out = (int64_t)(upper ? ceil(d) : floor(d));
		return 1;
	}
	return 0;
}

static int x_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
		    sqlite3_value **argv)
{
	struct qcur *c = (struct qcur *)cur;
	reset(c);
	c->used = (uint64_t)idx_num & 0x3fffffffu;
	if (idx_num & (1 << 30))
		c->used |= ~(uint64_t)0 << 30;
	for (int i = 0; i < argc && idx_str && idx_str[i]; i++) {
		int64_t v;
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL) {
			c->none = 1;   /* a comparison with NULL holds for no row */
			continue;
		}
		switch (idx_str[i]) {
		case 'l':
			if (bound(argv[i], 0, &v) && (!c->has_lo || v > c->lo))
				c->lo = v, c->has_lo = 1;
			break;
		case 'h':
			if (bound(argv[i], 1, &v) && (!c->has_hi || v < c->hi))
				c->hi = v, c->has_hi = 1;
			break;
		case 'e':
			if (bound(argv[i], 0, &v) && (!c->has_lo || v > c->lo))
				c->lo = v, c->has_lo = 1;
			if (bound(argv[i], 1, &v) && (!c->has_hi || v < c->hi))
				c->hi = v, c->has_hi = 1;
			break;
		case 's':
			if (sqlite3_value_type(argv[i]) == SQLITE_TEXT) {
				sqlite3_free(c->host);
				if (!(c->host = sqlite3_mprintf("%s", sqlite3_value_text(argv[i]))))
					return SQLITE_NOMEM;
			}
			break;
		case 'c':
			if (sqlite3_value_numeric_type(argv[i]) == SQLITE_INTEGER) {
				int64_t cpu = sqlite3_value_int64(argv[i]);
				if (cpu < 0 || cpu > UINT32_MAX)
					c->none = 1;
				c->cpu = (uint32_t)cpu;
				c->has_cpu = 1;
			}
			break;
		case 'k':
			if (sqlite3_value_numeric_type(argv[i]) == SQLITE_INTEGER) {
				c->stack = sqlite3_value_int64(argv[i]);
				c->has_stack = 1;
			}
			break;
		}
	}
	if (c->none) {
		c->eof = 1;
		return SQLITE_OK;
	}
	if (c->table == T_STACKS) {
		int ret = build_stacks(c);
		if (ret < 0)
			return sql_rc(c, ret);
	}
	return sql_rc(c, fill(c));
}

static int x_next(sqlite3_vtab_cursor *cur)
{
	struct qcur *c = (struct qcur *)cur;
	c->rowid++;
	if (++c->pos < c->nrows)
		return SQLITE_OK;
	return sql_rc(c, fill(c));
}

static int x_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct qcur *)cur)->eof;
}

static int x_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct qcur *c = (struct qcur *)cur;
	if (col < 0 || col >= c->d->ncols || c->pos >= c->nrows)
		return SQLITE_OK;   /* NULL */
	const struct qval *v = &c->rows[c->pos * (size_t)c->d->ncols + (size_t)col];
	switch (v->type) {
	case V_INT: sqlite3_result_int64(ctx, v->i); break;
	case V_REAL: sqlite3_result_double(ctx, v->d); break;
	case V_TEXT: sqlite3_result_text(ctx, v->s, -1, SQLITE_TRANSIENT); break;
	default: break;
	}
	return SQLITE_OK;
}

static int x_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
	*out = ((struct qcur *)cur)->rowid;
	return SQLITE_OK;
}

static const sqlite3_module module = {
	.iVersion = 1,
	.xCreate = NULL,          /* eponymous only: the tables exist as named */
	.xConnect = x_connect,
	.xBestIndex = x_best_index,
	.xDisconnect = x_disconnect,
	.xDestroy = x_disconnect,
	.xOpen = x_open,
	.xClose = x_close,
	.xFilter = x_filter,
	.xNext = x_next,
	.xEof = x_eof,
	.xColumn = x_column,
	.xRowid = x_rowid,
};

static void free_aux(void *p)
{
	sqlite3_free(p);
}

int ana_qtables_register(struct ana_query *q)
{
	for (size_t t = 0; t < ana_nqtables; t++) {
		struct qvtab *aux = sqlite3_malloc(sizeof(*aux));
		if (!aux)
			return -ENOMEM;
		memset(aux, 0, sizeof(*aux));
		aux->q = q;
		aux->table = (int)t;
		if (sqlite3_create_module_v2(q->db, ana_qtables[t].name, &module, aux,
					     free_aux) != SQLITE_OK)
			return -ENOMEM;
	}
	return 0;
}
