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
#include "analyzer/read/strpool.h"
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

/* What the report keeps across traces, by host: tasks (host, tid), CPUs
 * (host, cpu), off-CPU states (host, tid, state), each host's window. A
 * trace's tasks are folded in when its pass ends, names interned in the
 * report's pool. Rotated files of a session join without a gap: a task on
 * a CPU at one file's end runs until that end, and from the next file's
 * start (its first record is then a switch-out), so on-CPU time and every
 * count add up; an off-CPU gap across the boundary is not closed. */
struct dkey {
	const char *host;
	uint32_t id, state;     /* tid or cpu; state for the states map */
};

struct dtask {
	uint32_t pid;
	const char *comm;
	uint64_t on_total, off_total, switch_ins, preempted, voluntary, max_gap;
	double max_gap_at;      /* s from the host's start; < 0: none */
	uint64_t hist[NBUCKETS];
};

struct dcpu {
	uint64_t busy, switch_ins;
};

struct dstate {
	uint32_t pid;
	const char *comm;
	uint64_t ns, blocks, max_ns;
};

struct ana_sched {
	struct ana_sched_opts o;
	struct prec_hashmap tasks, cpus, states;
	struct ana_strpool pool;
	struct { const char *host; uint64_t window; } *hosts;
	size_t nhosts;
	const char *file;
	size_t ntraces;
	uint64_t records, switches, offcpu_ns, lost_packets;
	size_t ndamage;
	int torn, has_states;
};

struct ana_sched *ana_sched_new(const struct ana_sched_opts *o)
{
	struct ana_sched *sc = calloc(1, sizeof(*sc));
	if (!sc)
		return NULL;
	sc->o = *o;
	prec_hashmap_init(&sc->tasks, sizeof(struct dkey), sizeof(struct dtask));
	prec_hashmap_init(&sc->cpus, sizeof(struct dkey), sizeof(struct dcpu));
	prec_hashmap_init(&sc->states, sizeof(struct dkey), sizeof(struct dstate));
	ana_strpool_init(&sc->pool);
	return sc;
}

void ana_sched_free(struct ana_sched *sc)
{
	if (!sc)
		return;
	prec_hashmap_release(&sc->tasks);
	prec_hashmap_release(&sc->cpus);
	prec_hashmap_release(&sc->states);
	ana_strpool_release(&sc->pool);
	free(sc->hosts);
	free(sc);
}

static int fold(struct ana_sched *sc, struct sstate *st, uint64_t host_start)
{
	struct ana_trace *s = st->s;
	const char *h = s->header && s->header->hostname && *s->header->hostname ?
			s->header->hostname : "unknown";
	const char *host = ana_strpool_intern(&sc->pool, h);
	if (!host)
		return -ENOMEM;
	size_t hi;
	for (hi = 0; hi < sc->nhosts && sc->hosts[hi].host != host; hi++)
		;
	if (hi == sc->nhosts) {
		void *n = realloc(sc->hosts, (sc->nhosts + 1) * sizeof(*sc->hosts));
		if (!n)
			return -ENOMEM;
		sc->hosts = n;
		sc->hosts[sc->nhosts].host = host;
		sc->hosts[sc->nhosts++].window = 0;
	}
	if (st->started)
		sc->hosts[hi].window += st->t1 - st->t0;
	for (size_t i = 0; i < prec_hashmap_count(&st->tasks); i++) {
		uint32_t tid = *(const uint32_t *)prec_hashmap_key(&st->tasks, i);
		const struct task *k = prec_hashmap_val(&st->tasks, i);
		struct dkey key = { host, tid, 0 };
		int isnew = 0;
		struct dtask *d = prec_hashmap_get(&sc->tasks, &key, &isnew);
		const char *comm = ana_trace_comm_name(s, tid, st->t1);
		if (!d || !comm || !(comm = ana_strpool_intern(&sc->pool, comm)))
			return -ENOMEM;
		if (isnew)
			d->max_gap_at = -1;
		d->pid = k->pid;
		d->comm = comm;
		d->on_total += k->on_total;
		d->off_total += k->off_total;
		d->switch_ins += k->switch_ins;
		d->preempted += k->preempted;
		d->voluntary += k->voluntary;
		if (k->max_gap_at && (k->max_gap > d->max_gap || d->max_gap_at < 0)) {
			d->max_gap = k->max_gap;
			d->max_gap_at = (double)(int64_t)(k->max_gap_at - host_start) / 1e9;
		}
		for (int b = 0; b < NBUCKETS; b++)
			d->hist[b] += k->hist[b];
	}
	for (size_t i = 0; i < prec_hashmap_count(&st->cpus); i++) {
		struct dkey key = { host, *(const uint32_t *)prec_hashmap_key(&st->cpus, i), 0 };
		const struct cpu *c = prec_hashmap_val(&st->cpus, i);
		struct dcpu *d = prec_hashmap_get(&sc->cpus, &key, NULL);
		if (!d)
			return -ENOMEM;
		d->busy += c->busy;
		d->switch_ins += c->switch_ins;
	}
	for (size_t i = 0; i < prec_hashmap_count(&st->states); i++) {
		const struct skey *k = prec_hashmap_key(&st->states, i);
		const struct sval *v = prec_hashmap_val(&st->states, i);
		struct dkey key = { host, k->tid, k->state };
		struct dstate *d = prec_hashmap_get(&sc->states, &key, NULL);
		const char *comm = ana_trace_comm_name(s, k->tid, st->t1);
		if (!d || !comm || !(comm = ana_strpool_intern(&sc->pool, comm)))
			return -ENOMEM;
		d->pid = v->pid;
		d->comm = comm;
		d->ns += v->ns;
		d->blocks += v->blocks;
		if (v->max_ns > d->max_ns)
			d->max_ns = v->max_ns;
	}
	if (!sc->ntraces++)
		sc->file = s->path;
	sc->records += st->records;
	sc->switches += s->switches;
	sc->offcpu_ns += st->offcpu_ns;
	sc->has_states |= prec_hashmap_count(&st->states) > 0;
	sc->ndamage += s->ndamage;
	sc->torn |= s->torn;
	sc->lost_packets += ana_trace_lost_packets(s);
	return 0;
}

int ana_sched_add(struct ana_sched *sc, struct ana_trace *s, uint64_t host_start)
{
	const struct ana_sched_opts *o = &sc->o;
	struct sstate st;
	memset(&st, 0, sizeof(st));
	st.s = s;
	st.o = o;
	prec_hashmap_init(&st.tasks, sizeof(uint32_t), sizeof(struct task));
	prec_hashmap_init(&st.states, sizeof(struct skey), sizeof(struct sval));
	prec_hashmap_init(&st.cpus, sizeof(uint32_t), sizeof(struct cpu));
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
	m = ana_merge_trace(s, list, nlist, &fo);
	if (!m) {
		ret = -ENOMEM;
		goto out;
	}
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
	ret = fold(sc, &st, host_start);
out:
	ana_merge_free(m);
	free(st.list);
	prec_hashmap_release(&st.states);
	prec_hashmap_release(&st.tasks);
	prec_hashmap_release(&st.cpus);
	return ret < 0 ? ret : 0;
}

/* One row to sort: C11 qsort has no context argument, so each element
 * carries what the comparison needs. */
struct trow {
	const struct dkey *key;
	const struct dtask *k;
	int sort;
};

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int cmp_tasks(const void *pa, const void *pb)
{
	const struct trow *ra = pa, *rb = pb;
	const struct dtask *x = ra->k, *y = rb->k;
	uint32_t tx = ra->key->id, ty = rb->key->id;
	int c = 0;
	switch (ra->sort) {
	case ANA_SS_ONCPU: c = cmp_u64_desc(x->on_total, y->on_total); break;
	case ANA_SS_OFFCPU: c = cmp_u64_desc(x->off_total, y->off_total); break;
	case ANA_SS_SWITCHES: c = cmp_u64_desc(x->switch_ins, y->switch_ins); break;
	case ANA_SS_PREEMPT: c = cmp_u64_desc(x->preempted, y->preempted); break;
	case ANA_SS_VOLUNTARY: c = cmp_u64_desc(x->voluntary, y->voluntary); break;
	case ANA_SS_MAXGAP: c = cmp_u64_desc(x->max_gap, y->max_gap); break;
	case ANA_SS_COMM: c = strcmp(x->comm, y->comm); break;
	default: break;
	}
	if (c)
		return c;
	if (tx != ty)
		return tx < ty ? -1 : 1;
	return strcmp(ra->key->host, rb->key->host);
}

struct crow {
	const struct dkey *key;
	const struct dcpu *c;
};

static int cmp_cpus(const void *pa, const void *pb)
{
	const struct crow *a = pa, *b = pb;
	int c = strcmp(a->key->host, b->key->host);
	if (c)
		return c;
	return a->key->id < b->key->id ? -1 : a->key->id > b->key->id;
}

struct srow {
	const struct dkey *k;
	const struct dstate *v;
};

static int cmp_states(const void *pa, const void *pb)
{
	const struct srow *a = pa, *b = pb;
	if (a->v->ns != b->v->ns)
		return a->v->ns > b->v->ns ? -1 : 1;
	if (a->k->id != b->k->id)
		return a->k->id < b->k->id ? -1 : 1;
	if (a->k->state != b->k->state)
		return a->k->state < b->k->state ? -1 : 1;
	return strcmp(a->k->host, b->k->host);
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static uint64_t host_window(const struct ana_sched *sc, const char *host)
{
	for (size_t i = 0; i < sc->nhosts; i++)
		if (sc->hosts[i].host == host)
			return sc->hosts[i].window;
	return 0;
}

static int pass_filter(const struct ana_filter *f, uint32_t pid, uint32_t tid,
		       const char *comm)
{
	return !f || (ana_filter_pid(f, pid) && ana_filter_tid(f, tid) &&
		      ana_filter_comm(f, comm));
}

/* The "states" section: blocked time by task and state. */
static int states_table(struct ana_sched *sc, struct ana_doc *doc, int hosts)
{
	const struct ana_filter *f = sc->o.filter;
	size_t n = prec_hashmap_count(&sc->states), nsel = 0;
	struct srow *rows = malloc((n ? n : 1) * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct dkey *k = prec_hashmap_key(&sc->states, i);
		const struct dstate *v = prec_hashmap_val(&sc->states, i);
		if (!pass_filter(f, v->pid, k->id, v->comm))
			continue;
		rows[nsel].k = k;
		rows[nsel].v = v;
		nsel++;
	}
	prec_sort(rows, nsel, sizeof(*rows), cmp_states);
	struct ana_table *t = ana_doc_table(doc, "states", "Off-CPU time by state (BPF)");
	if (hosts)
		ana_table_col(t, "host", "Host", ANA_STR);
	ana_table_col(t, "comm", "Command", ANA_STR);
	ana_table_col(t, "pid", "Pid", ANA_NUM);
	ana_table_col(t, "tid", "Tid", ANA_NUM);
	ana_table_col(t, "state", "State", ANA_STR);
	ana_table_col(t, "blocked_ms", "Blocked ms", ANA_NUM);
	ana_table_col(t, "blocks", "Blocks", ANA_NUM);
	ana_table_col(t, "max_ms", "Longest ms", ANA_NUM);
	size_t top = sc->o.top && sc->o.top < nsel ? sc->o.top : nsel;
	for (size_t r = 0; r < top; r++) {
		ana_table_row(t);
		if (hosts)
			ana_cell_str(t, rows[r].k->host);
		ana_cell_str(t, rows[r].v->comm);
		ana_cell_num(t, "%" PRIu32, rows[r].v->pid);
		ana_cell_num(t, "%" PRIu32, rows[r].k->id);
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

int ana_sched_render(struct ana_sched *sc, const char *file, struct ana_doc *doc)
{
	const struct ana_sched_opts *o = &sc->o;
	const struct ana_filter *f = o->filter;
	int hosts = sc->nhosts > 1;
	size_t n = prec_hashmap_count(&sc->tasks), nsel = 0;
	struct trow *order = malloc((n ? n : 1) * sizeof(*order));
	size_t nc = prec_hashmap_count(&sc->cpus);
	struct crow *cpus = malloc((nc ? nc : 1) * sizeof(*cpus));
	int ret = -ENOMEM;
	if (!order || !cpus)
		goto out;
	/* Tasks passing the pid/tid/comm filters, sorted. */
	for (size_t i = 0; i < n; i++) {
		const struct dkey *key = prec_hashmap_key(&sc->tasks, i);
		const struct dtask *k = prec_hashmap_val(&sc->tasks, i);
		if (!pass_filter(f, k->pid, key->id, k->comm))
			continue;
		order[nsel].key = key;
		order[nsel].k = k;
		order[nsel].sort = o->sort;
		nsel++;
	}
	prec_sort(order, nsel, sizeof(*order), cmp_tasks);

	uint64_t window = 0;
	for (size_t i = 0; i < sc->nhosts; i++)
		window += sc->hosts[i].window;
	struct ana_table *sum = ana_doc_kv(doc, "summary");
	ana_kv_str(sum, "file", file ? file : sc->file ? sc->file : "");
	ana_kv_num(sum, "switch_records", "%" PRIu64, sc->records);
	if (!sc->records)
		ana_kv_str(sum, "note", sc->switches ? "no context-switch record in the "
			   "--cpu/--time window" : "no context-switch records in this "
			   "trace: record with --switch-events");
	ana_kv_num(sum, "window_ms", "%.3f", ms(window));
	ana_kv_num(sum, "tasks", "%zu", nsel);
	if (sc->has_states)
		ana_kv_num(sum, "offcpu_ms", "%.3f", ms(sc->offcpu_ns));
	if (sc->ndamage || sc->torn)
		ana_kv_num(sum, "damaged_frames", "%zu", sc->ndamage);
	if (sc->ndamage)
		ana_kv_num(sum, "packets_lost_in_damage", "%" PRIu64, sc->lost_packets);

	struct ana_table *t = ana_doc_table(doc, "tasks", NULL);
	if (hosts)
		ana_table_col(t, "host", "Host", ANA_STR);
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
		const struct dtask *k = order[r].k;
		ana_table_row(t);
		if (hosts)
			ana_cell_str(t, order[r].key->host);
		ana_cell_str(t, k->comm);
		ana_cell_num(t, "%" PRIu32, k->pid);
		ana_cell_num(t, "%" PRIu32, order[r].key->id);
		ana_cell_num(t, "%.3f", ms(k->on_total));
		ana_cell_num(t, "%.3f", ms(k->off_total));
		ana_cell_num(t, "%" PRIu64, k->switch_ins);
		ana_cell_num(t, "%" PRIu64, k->preempted);
		ana_cell_num(t, "%" PRIu64, k->voluntary);
		if (k->max_gap_at >= 0) {
			ana_cell_num(t, "%.3f", ms(k->max_gap));
			ana_cell_num(t, "%.6f", k->max_gap_at);
		} else {
			ana_cell_null(t, "-");
			ana_cell_null(t, "-");
		}
	}

	struct ana_table *ct = ana_doc_table(doc, "cpus", NULL);
	if (hosts)
		ana_table_col(ct, "host", "Host", ANA_STR);
	ana_table_col(ct, "cpu", "CPU", ANA_NUM);
	ana_table_col(ct, "busy_ms", "Busy ms", ANA_NUM);
	ana_table_col(ct, "busy_pct", "Busy", ANA_PCT);
	ana_table_col(ct, "switch_ins", "Switch-ins", ANA_NUM);
	for (size_t i = 0; i < nc; i++) {
		cpus[i].key = prec_hashmap_key(&sc->cpus, i);
		cpus[i].c = prec_hashmap_val(&sc->cpus, i);
	}
	prec_sort(cpus, nc, sizeof(*cpus), cmp_cpus);
	for (size_t i = 0; i < nc; i++) {
		uint64_t w = host_window(sc, cpus[i].key->host);
		ana_table_row(ct);
		if (hosts)
			ana_cell_str(ct, cpus[i].key->host);
		ana_cell_num(ct, "%" PRIu32, cpus[i].key->id);
		ana_cell_num(ct, "%.3f", ms(cpus[i].c->busy));
		ana_cell_num(ct, "%.2f", w ? 100.0 * (double)cpus[i].c->busy / (double)w : 0.0);
		ana_cell_num(ct, "%" PRIu64, cpus[i].c->switch_ins);
	}

	if (o->hist) {
		struct ana_table *ht = ana_doc_table(doc, "hist", "Off-CPU durations");
		if (hosts)
			ana_table_col(ht, "host", "Host", ANA_STR);
		ana_table_col(ht, "comm", "Command", ANA_STR);
		ana_table_col(ht, "tid", "Tid", ANA_NUM);
		ana_table_col(ht, "from_us", "From us", ANA_NUM);
		ana_table_col(ht, "to_us", "To us", ANA_NUM);
		ana_table_col(ht, "count", "Count", ANA_NUM);
		for (size_t r = 0; r < rows; r++) {
			const struct dtask *k = order[r].k;
			for (int b = 0; b < NBUCKETS; b++) {
				if (!k->hist[b])
					continue;
				ana_table_row(ht);
				if (hosts)
					ana_cell_str(ht, order[r].key->host);
				ana_cell_str(ht, k->comm);
				ana_cell_num(ht, "%" PRIu32, order[r].key->id);
				ana_cell_num(ht, "%" PRIu64, b ? (uint64_t)1 << (b - 1) : 0);
				ana_cell_num(ht, "%" PRIu64, (uint64_t)1 << b);
				ana_cell_num(ht, "%" PRIu64, k->hist[b]);
			}
		}
	}
	ret = sc->has_states ? states_table(sc, doc, hosts) : 0;
out:
	free(order);
	free(cpus);
	return ret;
}

int ana_sched_run(struct ana_trace *s, const struct ana_sched_opts *o,
		  struct ana_doc *doc)
{
	struct ana_sched *sc = ana_sched_new(o);
	if (!sc)
		return -ENOMEM;
	int ret = ana_sched_add(sc, s, s->start);
	if (ret >= 0)
		ret = ana_sched_render(sc, NULL, doc);
	ana_sched_free(sc);
	return ret;
}
