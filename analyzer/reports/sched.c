/*
 * sched.c - per-task and per-CPU switch accounting.
 */
#include "analyzer/reports/sched.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/hashmap.h"
#include "analyzer/read/merge.h"
#include "analyzer/read/trace.h"

#define NBUCKETS 40   /* log2 microsecond buckets */

static const char *const sort_names[] = {
	"oncpu", "offcpu", "switches", "preempt", "voluntary", "maxgap", "tid", "comm",
};

int ana_sched_parse_sort(struct ana_sched_opts *o, const char *arg,
			 char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(sort_names) / sizeof(sort_names[0]); i++)
		if (!strcmp(arg, sort_names[i])) {
			o->sort = (int)i;
			return 0;
		}
	snprintf(err, errlen, "bad --sort '%s': one of oncpu, offcpu, switches, "
		 "preempt, voluntary, maxgap, tid, comm", arg);
	return -EINVAL;
}

struct task {
	uint32_t pid;
	int on;              /* currently on a CPU */
	int off;             /* off since off_since (a gap is open) */
	int seen;
	int exited;          /* EXIT seen at exit_at, while on a CPU */
	uint32_t cpu;
	uint64_t exit_at;
	uint64_t on_since, off_since;
	uint64_t on_total, off_total;
	uint64_t switch_ins, preempted, voluntary;
	uint64_t max_gap, max_gap_at;
	uint64_t hist[NBUCKETS];
};

struct cpu {
	uint64_t busy, switch_ins;
	uint64_t last;       /* time of the last switch record on this CPU */
	int has_last;
	uint32_t cur;        /* tid switched in last on this CPU */
	int has_cur;
};

/* Blocked time of one (tid, state) from off-CPU packets. */
struct skey {
	uint32_t tid, state;
};

struct sval {
	uint32_t pid;
	uint64_t ns, blocks, max_ns;
};

struct sstate {
	struct ana_trace *s;
	const struct ana_sched_opts *o;
	struct prec_hashmap states;  /* struct skey -> struct sval */
	uint64_t offcpu_ns;
	struct prec_hashmap tasks;   /* uint32 tid -> struct task */
	struct prec_hashmap cpus;    /* uint32 cpu -> struct cpu */
	uint64_t t0, t1, records;
	int started;
	/* cpu -> entry, valid while the map has cache_gen entries (an
	 * insertion may move the entries) */
	struct cpu *cache[256];
	size_t cache_gen;
	/* tid -> task position + 1 (direct-mapped; positions are stable) */
	uint32_t tcache_tid[1024], tcache_pos[1024];
	struct prec_frame_info *list;   /* the frames read, when not all */
};

static struct task *task_get(struct sstate *st, uint32_t tid)
{
	size_t h = tid & 1023;
	if (st->tcache_pos[h] && st->tcache_tid[h] == tid)
		return prec_hashmap_val(&st->tasks, st->tcache_pos[h] - 1);
	struct task *k = prec_hashmap_get(&st->tasks, &tid, NULL);
	if (k) {
		st->tcache_tid[h] = tid;
		st->tcache_pos[h] = (uint32_t)prec_hashmap_index(&st->tasks, k) + 1;
	}
	return k;
}

static inline struct cpu *cpu_get(struct sstate *st, uint32_t cpu)
{
	if (cpu < 256 && st->cache_gen == prec_hashmap_count(&st->cpus) && st->cache[cpu])
		return st->cache[cpu];
	struct cpu *c = prec_hashmap_get(&st->cpus, &cpu, NULL);
	if (!c)
		return NULL;
	if (st->cache_gen != prec_hashmap_count(&st->cpus)) {
		memset(st->cache, 0, sizeof(st->cache));
		st->cache_gen = prec_hashmap_count(&st->cpus);
	}
	if (cpu < 256)
		st->cache[cpu] = c;
	return c;
}

/* Charges tid's on-CPU interval [start, end) to cpu. */
static int add_busy(struct sstate *st, uint32_t cpu, uint32_t pid, uint32_t tid,
		    uint64_t start, uint64_t end)
{
	struct cpu *c = cpu_get(st, cpu);
	if (!c)
		return -ENOMEM;
	c->busy += end - start;
	if (!st->o->on_interval)
		return 0;
	struct ana_sched_interval iv = { .cpu = cpu, .pid = pid, .tid = tid,
					 .start = start, .end = end };
	return st->o->on_interval(st->o->ctx, &iv);
}

static int bucket_of(uint64_t ns)
{
	/* the bit length of the microseconds, at most NBUCKETS - 1 */
	uint64_t us = ns / 1000;
	int b = us ? 64 - __builtin_clzll(us) : 0;
	return b < NBUCKETS - 1 ? b : NBUCKETS - 1;
}

static int on_switch(struct sstate *st, const struct prec_packet *p)
{
	const Perfrec__ContextSwitch *cs = p->pkt->context_switch;
	const struct ana_filter *f = st->o->filter;
	uint64_t t = p->time;
	if (f && f->active && (!ana_filter_cpu(f, cs->cpu) || !ana_filter_time(f, t)))
		return 0;
	if (!st->started) {
		/* The window opens at the --time start, else at the trace
		 * start: a task first seen switching out ran since then. */
		st->started = 1;
		st->t0 = t;
		if (f && f->tmin && f->tmin <= t)
			st->t0 = f->tmin;
		else if (st->s->start && st->s->start <= t)
			st->t0 = st->s->start;
	}
	st->t1 = t;
	st->records++;
	struct cpu *c = cpu_get(st, cs->cpu);
	if (!c)
		return -ENOMEM;
	/* A task first seen switching out ran since the window start, or
	 * since this CPU's previous record if there is one: some other task
	 * was switched in or out on it then (its own switch-in was not
	 * recorded: it came before the task's events were enabled). */
	uint64_t since = c->has_last && c->last > st->t0 ? c->last : st->t0;
	c->last = t;
	c->has_last = 1;
	uint32_t tid = cs->tid;
	if (!cs->out) {
		c->switch_ins++;
		c->cur = tid;
		c->has_cur = tid != UINT32_MAX;
	} else if (tid == UINT32_MAX) {
		/* The kernel reports an exiting task's last switch-out with
		 * pid/tid -1 (the task is already unhashed): it is the task
		 * that was switched in on this CPU. Without one (the switch-in
		 * was before the window, or this CPU's current task already
		 * switched out) the record names nobody. */
		if (!c->has_cur)
			return 0;
		tid = c->cur;
		c->has_cur = 0;
		/* A dead thread's record still carries its process id; a
		 * different process means records were lost in between. */
		const struct task *ck = prec_hashmap_find(&st->tasks, &tid);
		if (cs->pid != UINT32_MAX && ck && ck->pid && ck->pid != cs->pid)
			return 0;
	} else if (c->has_cur && c->cur == tid) {
		c->has_cur = 0;
	}
	if (tid == 0 || tid == UINT32_MAX)
		return 0;   /* idle (CPU busy comes from real tasks) or unknown */
	struct task *k = task_get(st, tid);
	if (!k)
		return -ENOMEM;
	if (cs->pid != UINT32_MAX && cs->tid != UINT32_MAX)
		k->pid = cs->pid;
	if (cs->out) {
		int ret = 0;
		if (k->on) {
			k->on_total += t - k->on_since;
			ret = add_busy(st, k->cpu, k->pid, tid, k->on_since, t);
		} else if (!k->seen) {
			/* Running since before the window or the CPU's
			 * previous record. */
			k->on_total += t - since;
			ret = add_busy(st, cs->cpu, k->pid, tid, since, t);
		}
		if (ret < 0)
			return ret;
		k->on = 0;
		k->off = 1;
		k->off_since = t;
		if (cs->preempt)
			k->preempted++;
		else
			k->voluntary++;
	} else {
		k->switch_ins++;
		if (k->off) {
			uint64_t gap = t - k->off_since;
			k->off_total += gap;
			if (gap > k->max_gap || (k->max_gap == 0 && !k->max_gap_at)) {
				k->max_gap = gap;
				k->max_gap_at = k->off_since;
			}
			k->hist[bucket_of(gap)]++;
		}
		k->on = 1;
		k->off = 0;
		k->cpu = cs->cpu;
		k->on_since = t;
	}
	k->seen = 1;
	return 0;
}

static double ms(uint64_t ns);
static void task_cells(struct ana_table *t, struct ana_trace *s, uint32_t tid,
		       uint64_t t1);

static int on_offcpu(struct sstate *st, const struct prec_packet *p)
{
	const Perfrec__OffCpu *oc = p->pkt->off_cpu;
	const struct ana_filter *f = st->o->filter;
	if (f && f->active &&
	    !ana_filter_offcpu(f, oc->count, oc->cpu, oc->pid, oc->tid, p->time))
		return 0;
	struct skey k = { oc->tid, (uint32_t)oc->state };
	struct sval *v = prec_hashmap_get(&st->states, &k, NULL);
	if (!v)
		return -ENOMEM;
	v->pid = oc->pid;
	v->ns += oc->duration;
	v->blocks += oc->count ? oc->count : 1;
	if (!oc->count && oc->duration > v->max_ns)
		v->max_ns = oc->duration;
	st->offcpu_ns += oc->duration;
	return 0;
}

/* One (task, state) row to sort, heaviest first. */
struct srow {
	const struct skey *k;
	const struct sval *v;
};

static int cmp_states(const void *pa, const void *pb)
{
	const struct srow *a = pa, *b = pb;
	if (a->v->ns != b->v->ns)
		return a->v->ns > b->v->ns ? -1 : 1;
	if (a->k->tid != b->k->tid)
		return a->k->tid < b->k->tid ? -1 : 1;
	return a->k->state < b->k->state ? -1 : a->k->state > b->k->state;
}

/* The "states" section: blocked time by task and state. */
static int states_table(struct sstate *st, struct ana_doc *doc, uint64_t t1)
{
	struct ana_trace *s = st->s;
	const struct ana_filter *f = st->o->filter;
	size_t n = prec_hashmap_count(&st->states), nsel = 0;
	struct srow *rows = malloc((n ? n : 1) * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct skey *k = prec_hashmap_key(&st->states, i);
		const struct sval *v = prec_hashmap_val(&st->states, i);
		if (f && (!ana_filter_pid(f, v->pid) || !ana_filter_tid(f, k->tid) ||
			  !ana_filter_comm(f, ana_trace_comm(s, k->tid, t1))))
			continue;
		rows[nsel].k = k;
		rows[nsel].v = v;
		nsel++;
	}
	prec_sort(rows, nsel, sizeof(*rows), cmp_states);
	struct ana_table *t = ana_doc_table(doc, "states", "Off-CPU time by state (BPF)");
	ana_table_col(t, "comm", "Command", ANA_STR);
	ana_table_col(t, "pid", "Pid", ANA_NUM);
	ana_table_col(t, "tid", "Tid", ANA_NUM);
	ana_table_col(t, "state", "State", ANA_STR);
	ana_table_col(t, "blocked_ms", "Blocked ms", ANA_NUM);
	ana_table_col(t, "blocks", "Blocks", ANA_NUM);
	ana_table_col(t, "max_ms", "Longest ms", ANA_NUM);
	size_t top = st->o->top && st->o->top < nsel ? st->o->top : nsel;
	for (size_t r = 0; r < top; r++) {
		ana_table_row(t);
		task_cells(t, s, rows[r].k->tid, t1);
		ana_cell_num(t, "%" PRIu32, rows[r].v->pid);
		ana_cell_num(t, "%" PRIu32, rows[r].k->tid);
		ana_cell_str(t, ana_offcpu_state_name((int)rows[r].k->state));
		ana_cell_num(t, "%.3f", ms(rows[r].v->ns));
		ana_cell_num(t, "%" PRIu64, rows[r].v->blocks);
		if (rows[r].v->max_ns)
			ana_cell_num(t, "%.3f", ms(rows[r].v->max_ns));
		else
			ana_cell_null(t, "-");   /* only sums: no interval */
	}
	free(rows);
	return 0;
}

/* TaskEvent EXIT is written early in the task's exit path: in CPU-wide
 * recordings the task can still be preempted and switched in again after
 * it, and its last switch-out follows (tid -1 for a thread). Per-task
 * recordings get no record after EXIT at all (the kernel detaches the
 * task's events), so a task still on a CPU at the window end whose EXIT
 * came during that interval ends there (see close_open()), not at the end
 * of the recording. */
static void on_exit_task(struct sstate *st, const struct prec_packet *p)
{
	const Perfrec__TaskEvent *te = p->pkt->task;
	if (te->kind != PERFREC__TASK_EVENT__KIND__EXIT)
		return;
	uint32_t tid = te->tid;
	struct task *k = prec_hashmap_find(&st->tasks, &tid);
	if (!k || !k->on || p->time < k->on_since)
		return;
	k->exited = 1;
	k->exit_at = p->time;
}

/* Closes on-CPU intervals still open at the window end. A task that
 * exited during its interval stopped running (as far as the trace can
 * tell) at its exit, with a last, unrecorded, voluntary switch-out. */
static int close_open(struct sstate *st)
{
	for (size_t i = 0; i < prec_hashmap_count(&st->tasks); i++) {
		struct task *k = prec_hashmap_val(&st->tasks, i);
		if (!k->on)
			continue;
		uint64_t end = st->t1;
		if (k->exited && k->exit_at >= k->on_since && k->exit_at < end) {
			end = k->exit_at;
			k->voluntary++;
			k->on = 0;
		}
		k->on_total += end - k->on_since;
		uint32_t tid = *(const uint32_t *)prec_hashmap_key(&st->tasks, i);
		int ret = add_busy(st, k->cpu, k->pid, tid, k->on_since, end);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static void merge_damage(void *ctx, const struct prec_frame_info *fi, int err)
{
	ana_trace_note_damage(ctx, fi->offset, err);
}

/* One task to sort: C11 qsort has no context argument, so each element
 * carries what the comparison needs (the comm is looked up once). */
struct trow {
	uint32_t tid;
	int sort;
	const struct task *k;
	const char *comm;
};

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int cmp_tasks(const void *pa, const void *pb)
{
	const struct trow *ra = pa, *rb = pb;
	const struct task *x = ra->k, *y = rb->k;
	uint32_t tx = ra->tid, ty = rb->tid;
	int c = 0;
	switch (ra->sort) {
	case ANA_SS_ONCPU: c = cmp_u64_desc(x->on_total, y->on_total); break;
	case ANA_SS_OFFCPU: c = cmp_u64_desc(x->off_total, y->off_total); break;
	case ANA_SS_SWITCHES: c = cmp_u64_desc(x->switch_ins, y->switch_ins); break;
	case ANA_SS_PREEMPT: c = cmp_u64_desc(x->preempted, y->preempted); break;
	case ANA_SS_VOLUNTARY: c = cmp_u64_desc(x->voluntary, y->voluntary); break;
	case ANA_SS_MAXGAP: c = cmp_u64_desc(x->max_gap, y->max_gap); break;
	case ANA_SS_COMM:
		c = strcmp(ra->comm ? ra->comm : "", rb->comm ? rb->comm : "");
		break;
	default: break;
	}
	if (c)
		return c;
	return tx < ty ? -1 : tx > ty;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static void task_cells(struct ana_table *t, struct ana_trace *s, uint32_t tid,
		       uint64_t t1)
{
	const char *comm = ana_trace_comm_name(s, tid, t1);
	ana_cell_str(t, comm ? comm : "?");
}

int ana_sched_run(struct ana_trace *s, const struct ana_sched_opts *o,
		  struct ana_doc *doc)
{
	struct sstate st;
	memset(&st, 0, sizeof(st));
	st.s = s;
	st.o = o;
	prec_hashmap_init(&st.tasks, sizeof(uint32_t), sizeof(struct task));
	prec_hashmap_init(&st.states, sizeof(struct skey), sizeof(struct sval));
	prec_hashmap_init(&st.cpus, sizeof(uint32_t), sizeof(struct cpu));
	struct trow *order = NULL;
	int ret;
	/* Switches, and exits and names (task events); samples, maps and
	 * symbols are skipped unread. */
	struct ana_frames_opts fo = { .jobs = o->jobs, .kinds = ANA_KINDS_TRACE |
		PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH) |
		PREC_KIND(PERFREC__PACKET__DATA_OFF_CPU) };
	/* frames of samples only (format 1.1) are not read at all */
	const struct prec_frame_info *list;
	size_t nlist;
	struct ana_merge *m = NULL;
	if ((ret = ana_trace_select(s, fo.kinds, 0, 0, &list, &nlist)) < 0)
		goto out;
	if (list != s->frames)
		st.list = (struct prec_frame_info *)list;
	m = ana_merge_new(s->reader, list, nlist, &fo);
	if (!m) {
		ret = -ENOMEM;
		goto out;
	}
	ana_merge_on_damage(m, merge_damage, s);
	const struct prec_packet *p;
	size_t done = 0, total = 0, last = 0;
	while ((ret = ana_merge_next(m, &p)) > 0) {
		if (s->opts.single_pass && (ret = ana_trace_feed(s, p)) < 0)
			break;
		Perfrec__Packet__DataCase dc = p->pkt->data_case;
		if (dc == PERFREC__PACKET__DATA_CONTEXT_SWITCH) {
			if ((ret = on_switch(&st, p)) < 0)
				break;
		} else if (dc == PERFREC__PACKET__DATA_TASK) {
			on_exit_task(&st, p);
		} else if (dc == PERFREC__PACKET__DATA_OFF_CPU) {
			if ((ret = on_offcpu(&st, p)) < 0)
				break;
		}
		if (s->opts.progress) {
			ana_merge_progress(m, &done, &total);
			if (done != last) {
				last = done;
				s->opts.progress(s->opts.ctx, "sched", done, total);
			}
		}
	}
	if (ret < 0)
		goto out;
	if (s->opts.single_pass && (ret = ana_trace_finish(s)) < 0)
		goto out;
	/* The window closes at the --time end, else at the trace's end
	 * (never before the last record). */
	{
		const struct ana_filter *f = o->filter;
		uint64_t end = s->end && s->end->end_time ? s->end->end_time : 0;
		if (f && f->tmax != UINT64_MAX)
			end = f->tmax;
		if (st.started && end > st.t1 && (!f || end <= f->tmax))
			st.t1 = end;
	}
	if ((ret = close_open(&st)) < 0)
		goto out;

	/* Tasks passing the pid/tid/comm filters, sorted. */
	size_t n = prec_hashmap_count(&st.tasks), nsel = 0;
	order = malloc((n ? n : 1) * sizeof(*order));
	ret = -ENOMEM;
	if (!order)
		goto out;
	const struct ana_filter *f = o->filter;
	for (size_t i = 0; i < n; i++) {
		uint32_t tid = *(const uint32_t *)prec_hashmap_key(&st.tasks, i);
		const struct task *k = prec_hashmap_val(&st.tasks, i);
		if (f && (!ana_filter_pid(f, k->pid) || !ana_filter_tid(f, tid) ||
			  !ana_filter_comm(f, ana_trace_comm(s, tid, st.t1))))
			continue;
		order[nsel].tid = tid;
		order[nsel].sort = o->sort;
		order[nsel].k = k;
		order[nsel].comm = ana_trace_comm(s, tid, st.t1);
		nsel++;
	}
	prec_sort(order, nsel, sizeof(*order), cmp_tasks);

	uint64_t window = st.t1 - st.t0;
	struct ana_table *sum = ana_doc_kv(doc, "summary");
	ana_kv_str(sum, "file", s->path);
	ana_kv_num(sum, "switch_records", "%" PRIu64, st.records);
	if (!st.records)
		ana_kv_str(sum, "note", s->switches ? "no context-switch record in the "
			   "--cpu/--time window" : "no context-switch records in this "
			   "trace: record with --switch-events");
	ana_kv_num(sum, "window_ms", "%.3f", ms(window));
	ana_kv_num(sum, "tasks", "%zu", nsel);
	if (prec_hashmap_count(&st.states))
		ana_kv_num(sum, "offcpu_ms", "%.3f", ms(st.offcpu_ns));
	if (s->ndamage || s->torn)
		ana_kv_num(sum, "damaged_frames", "%zu", s->ndamage);
	if (s->ndamage)
		ana_kv_num(sum, "packets_lost_in_damage", "%" PRIu64,
			   ana_trace_lost_packets(s));

	struct ana_table *t = ana_doc_table(doc, "tasks", NULL);
	ana_table_col(t, "comm", "Command", ANA_STR);
	ana_table_col(t, "pid", "Pid", ANA_NUM);
	ana_table_col(t, "tid", "Tid", ANA_NUM);
	ana_table_col(t, "oncpu_ms", "On-CPU ms", ANA_NUM);
	ana_table_col(t, "offcpu_ms", "Off-CPU ms", ANA_NUM);
	ana_table_col(t, "switch_ins", "Switch-ins", ANA_NUM);
	ana_table_col(t, "preempted", "Preempted", ANA_NUM);
	ana_table_col(t, "voluntary", "Voluntary", ANA_NUM);
	ana_table_col(t, "max_gap_ms", "Max off ms", ANA_NUM);
	ana_table_col(t, "max_gap_at_s", "Max off at s", ANA_NUM);
	size_t rows = o->top && o->top < nsel ? o->top : nsel;
	for (size_t r = 0; r < rows; r++) {
		uint32_t tid = order[r].tid;
		const struct task *k = order[r].k;
		ana_table_row(t);
		task_cells(t, s, tid, st.t1);
		ana_cell_num(t, "%" PRIu32, k->pid);
		ana_cell_num(t, "%" PRIu32, tid);
		ana_cell_num(t, "%.3f", ms(k->on_total));
		ana_cell_num(t, "%.3f", ms(k->off_total));
		ana_cell_num(t, "%" PRIu64, k->switch_ins);
		ana_cell_num(t, "%" PRIu64, k->preempted);
		ana_cell_num(t, "%" PRIu64, k->voluntary);
		if (k->max_gap_at) {
			ana_cell_num(t, "%.3f", ms(k->max_gap));
			ana_cell_num(t, "%.6f", (double)(int64_t)(k->max_gap_at - s->start) / 1e9);
		} else {
			ana_cell_null(t, "-");
			ana_cell_null(t, "-");
		}
	}

	struct ana_table *ct = ana_doc_table(doc, "cpus", NULL);
	ana_table_col(ct, "cpu", "CPU", ANA_NUM);
	ana_table_col(ct, "busy_ms", "Busy ms", ANA_NUM);
	ana_table_col(ct, "busy_pct", "Busy", ANA_PCT);
	ana_table_col(ct, "switch_ins", "Switch-ins", ANA_NUM);
	/* CPUs in numeric order (few of them: insertion sort). */
	size_t nc = prec_hashmap_count(&st.cpus);
	{
		uint32_t *cpus = malloc((nc ? nc : 1) * sizeof(*cpus));
		if (!cpus)
			goto out;
		for (size_t i = 0; i < nc; i++)
			cpus[i] = *(const uint32_t *)prec_hashmap_key(&st.cpus, i);
		for (size_t i = 1; i < nc; i++)
			for (size_t j = i; j > 0 && cpus[j - 1] > cpus[j]; j--) {
				uint32_t x = cpus[j];
				cpus[j] = cpus[j - 1];
				cpus[j - 1] = x;
			}
		for (size_t i = 0; i < nc; i++) {
			const struct cpu *c = prec_hashmap_find(&st.cpus, &cpus[i]);
			ana_table_row(ct);
			ana_cell_num(ct, "%" PRIu32, cpus[i]);
			ana_cell_num(ct, "%.3f", ms(c->busy));
			ana_cell_num(ct, "%.2f", window ? 100.0 * (double)c->busy / (double)window : 0.0);
			ana_cell_num(ct, "%" PRIu64, c->switch_ins);
		}
		free(cpus);
	}

	if (o->hist) {
		struct ana_table *ht = ana_doc_table(doc, "hist", "Off-CPU durations");
		ana_table_col(ht, "comm", "Command", ANA_STR);
		ana_table_col(ht, "tid", "Tid", ANA_NUM);
		ana_table_col(ht, "from_us", "From us", ANA_NUM);
		ana_table_col(ht, "to_us", "To us", ANA_NUM);
		ana_table_col(ht, "count", "Count", ANA_NUM);
		for (size_t r = 0; r < rows; r++) {
			uint32_t tid = order[r].tid;
			const struct task *k = order[r].k;
			for (int b = 0; b < NBUCKETS; b++) {
				if (!k->hist[b])
					continue;
				ana_table_row(ht);
				task_cells(ht, s, tid, st.t1);
				ana_cell_num(ht, "%" PRIu32, tid);
				ana_cell_num(ht, "%" PRIu64, b ? (uint64_t)1 << (b - 1) : 0);
				ana_cell_num(ht, "%" PRIu64, (uint64_t)1 << b);
				ana_cell_num(ht, "%" PRIu64, k->hist[b]);
			}
		}
	}
	if (prec_hashmap_count(&st.states) && (ret = states_table(&st, doc, st.t1)) < 0)
		goto out;
	ret = 0;
out:
	free(order);
	ana_merge_free(m);
	free(st.list);
	prec_hashmap_release(&st.states);
	prec_hashmap_release(&st.tasks);
	prec_hashmap_release(&st.cpus);
	return ret;
}
