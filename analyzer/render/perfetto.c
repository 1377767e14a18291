/*
 * perfetto.c - Perfetto TracePackets (see perfetto.h).
 *
 * Two passes: the CPU lanes from sched's on-CPU intervals (global time
 * order, ana_sched_run()), then samples, off-CPU intervals, counter
 * snapshots and losses in file order (ana_trace_scan()); Perfetto's trace
 * processor sorts packets by time itself. Every packet is built in one
 * writer and flushed before the next one starts, so descriptors and
 * interned entries a packet needs are written (or queued into its
 * InternedData) before it.
 *
 * A dataset is written trace by trace, each on a writer sequence of its
 * own (so its interning restarts, as the trace's own tables do): the
 * descriptors of a host's processes and threads keep their uuids from
 * file to file, so a session's rotated files make one timeline. With
 * several hosts, every packet carries its host's machine_id (the first
 * host is machine 1) and every time is moved to the wall clock through
 * its file's clock reference, so the hosts' timelines line up; process
 * names end in " @host", and the host's SystemInfo names the machine.
 *
 * Field numbers are those of perfetto_trace.proto (tests/data/perfetto).
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/render/perfetto.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/hashmap.h"
#include "analyzer/read/trace.h"
#include "analyzer/render/pbwrite.h"
#include "analyzer/render/table.h"
#include "analyzer/reports/sched.h"
#include "analyzer/symbols/resolve.h"

#define MAX_FRAMES 256
#define BUNDLE_EVENTS 512   /* sched_switch events per FtraceEventBundle */

/* Trace */
#define F_TRACE_PACKET 1
/* TracePacket */
#define F_PKT_FTRACE 1
#define F_PKT_CLOCKS 6
#define F_PKT_TIMESTAMP 8
#define F_PKT_SEQ_ID 10
#define F_PKT_TRACK_EVENT 11
#define F_PKT_INTERNED 12
#define F_PKT_SEQ_FLAGS 13
#define F_PKT_TRACK_DESC 60
#define F_PKT_PERF_SAMPLE 66
#define F_PKT_SYSTEM_INFO 45
#define F_PKT_MACHINE_ID 98
#define F_SI_MACHINE_NAME 17
#define SEQ_CLEARED 1
#define SEQ_NEEDS_STATE 2
/* ClockSnapshot, Clock */
#define F_CLOCKS_CLOCK 1
#define F_CLOCK_ID 1
#define F_CLOCK_TS 2
#define CLOCK_REALTIME_ID 1
#define CLOCK_MONOTONIC_ID 3
#define CLOCK_BOOTTIME_ID 6
/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor, CounterDescriptor */
#define F_TD_UUID 1
#define F_TD_NAME 2
#define F_TD_PROCESS 3
#define F_TD_THREAD 4
#define F_TD_COUNTER 8
#define F_PD_PID 1
#define F_PD_NAME 6
#define F_THD_PID 1
#define F_THD_TID 2
#define F_THD_NAME 5
#define F_CD_UNIT 3
#define CD_UNIT_COUNT 2
/* FtraceEventBundle, FtraceEvent, SchedSwitchFtraceEvent */
#define F_FB_CPU 1
#define F_FB_EVENT 2
#define F_FE_TIMESTAMP 1
#define F_FE_PID 2
#define F_FE_SCHED_SWITCH 4
#define F_SW_PREV_COMM 1
#define F_SW_PREV_PID 2
#define F_SW_PREV_PRIO 3
#define F_SW_PREV_STATE 4
#define F_SW_NEXT_COMM 5
#define F_SW_NEXT_PID 6
#define F_SW_NEXT_PRIO 7
#define PRIO_NORMAL 120           /* nice 0: the records carry no priority */
#define STATE_SLEEPING 1          /* TASK_INTERRUPTIBLE */
/* PerfSample */
#define F_PS_CPU 1
#define F_PS_PID 2
#define F_PS_TID 3
#define F_PS_CALLSTACK 4
#define F_PS_TIMEBASE_COUNT 6
/* InternedData and its entries */
#define F_ID_FUNCTION_NAMES 5
#define F_ID_FRAMES 6
#define F_ID_CALLSTACKS 7
#define F_ID_MAPPING_PATHS 17
#define F_ID_MAPPINGS 19
#define F_IS_IID 1
#define F_IS_STR 2
#define F_MAP_IID 1
#define F_MAP_PATHS 7
#define F_FR_IID 1
#define F_FR_FUNCTION 2
#define F_FR_MAPPING 3
#define F_FR_REL_PC 4
#define F_CS_IID 1
#define F_CS_FRAMES 2
/* TrackEvent */
#define F_TE_TYPE 9
#define F_TE_TRACK 11
#define F_TE_NAME 23
#define F_TE_COUNTER 30
#define TE_SLICE_BEGIN 1
#define TE_SLICE_END 2
#define TE_INSTANT 3
#define TE_COUNTER 4

/* Track uuids: a kind in the high bits, the host's number (0 for one
 * host) in the next 24 and the id (tids are below 2^22) below. */
#define UUID_HOST(h) ((uint64_t)(h) << 32)
#define UUID_THREAD(h, tid) ((1ull << 56) | UUID_HOST(h) | (tid))
#define UUID_PROCESS(h, pid) ((2ull << 56) | UUID_HOST(h) | (pid))
#define UUID_COUNTER(n) ((3ull << 56) | (n))
#define UUID_LOSSES(h) ((4ull << 56) | UUID_HOST(h))

struct lane {                /* a CPU's switch events not yet written */
	struct ana_pbw *events;
	size_t n;
	uint32_t tid, pid;
	uint64_t end;
	int has;
};

struct framekey {
	const char *dso, *sym;
};

struct counterkey {
	uint32_t group;
	int32_t cpu, pid;
	uint32_t host;   /* host number */
	uint64_t id;
};

struct counterval {
	uint64_t uuid, last, time;
	int has;
};

struct ana_perfetto {
	struct ana_trace *s;       /* the trace being added */
	const struct ana_filter *f;
	FILE *out;
	/* per trace: its writer sequence, its host's number (0: the only
	 * host) and name, and what moves its times to the wall clock (0
	 * for one host) */
	uint32_t seq;
	uint32_t host_no;
	const char *host;
	uint64_t shift;
	struct prec_hashmap hosts;         /* const char * (pooled) -> uint32 */
	struct ana_strpool *pool;
	struct ana_pbw w;          /* the packet being built */
	struct ana_pbw interned;   /* InternedData entries for that packet */
	struct prec_hashmap tids, pids;    /* uint32 -> char (described) */
	struct prec_hashmap lanes;         /* uint32 cpu -> struct lane */
	struct prec_hashmap funcs, paths;  /* const char * -> uint64 iid */
	struct prec_hashmap maps;          /* const char * dso -> uint64 iid */
	struct prec_hashmap frames;        /* struct framekey -> uint64 iid */
	struct prec_hashmap stacks;        /* const char * key -> uint64 iid */
	struct prec_hashmap counters;      /* struct counterkey -> counterval,
					    * kept across a host's files: the
					    * values are cumulative */
	uint64_t ncounters;
	struct ana_loc *locs;
	uint64_t *ids;
	char *key;
	size_t keycap;
	int first;
	int err;
};

/* Starts a TracePacket on the trace's writer sequence (the first packet
 * clears its incremental state, the others use it). */
static void packet_begin(struct ana_perfetto *st, uint64_t time)
{
	ana_pbw_begin(&st->w, F_TRACE_PACKET);
	if (time)
		ana_pbw_varint(&st->w, F_PKT_TIMESTAMP, time + st->shift);
	if (st->host_no)
		ana_pbw_varint(&st->w, F_PKT_MACHINE_ID, st->host_no);
	ana_pbw_varint(&st->w, F_PKT_SEQ_ID, st->seq);
	ana_pbw_varint(&st->w, F_PKT_SEQ_FLAGS, st->first ? SEQ_CLEARED : SEQ_NEEDS_STATE);
	st->first = 0;
}

static int packet_end(struct ana_perfetto *st)
{
	ana_pbw_end(&st->w);
	return ana_pbw_flush(&st->w, st->out);
}

/* The name the reports give tid at time (":tid" when the trace has
 * none); "" only without memory, which the writer's flush reports. */
static const char *comm_of(struct ana_perfetto *st, uint32_t tid, uint64_t time)
{
	const char *c = ana_trace_comm_name(st->s, tid, time);
	if (!c)
		st->w.err = -ENOMEM;
	return c ? c : "";
}

/* Writes the descriptors of tid's process and thread the first time the
 * thread is met; returns the thread's track uuid (0 on failure). */
static uint64_t thread_track(struct ana_perfetto *st, uint32_t pid, uint32_t tid)
{
	int created;
	char *seen = prec_hashmap_get(&st->tids, &tid, &created);
	if (!seen)
		return 0;
	if (!created)
		return UUID_THREAD(st->host_no, tid);
	if (pid == UINT32_MAX || (pid == 0 && tid != 0))
		pid = ana_trace_pid_of(st->s, tid);
	/* the last name: what the thread became (exec) */
	uint64_t last = st->s->t_max ? st->s->t_max : UINT64_MAX;
	if (!prec_hashmap_get(&st->pids, &pid, &created))
		return 0;
	if (created) {
		packet_begin(st, 0);
		ana_pbw_begin(&st->w, F_PKT_TRACK_DESC);
		ana_pbw_varint(&st->w, F_TD_UUID, UUID_PROCESS(st->host_no, pid));
		ana_pbw_begin(&st->w, F_TD_PROCESS);
		ana_pbw_varint(&st->w, F_PD_PID, pid);
		if (st->host) {
			char name[512];
			snprintf(name, sizeof(name), "%s @%s", comm_of(st, pid, last), st->host);
			ana_pbw_str(&st->w, F_PD_NAME, name);
		} else {
			ana_pbw_str(&st->w, F_PD_NAME, comm_of(st, pid, last));
		}
		ana_pbw_end(&st->w);
		ana_pbw_end(&st->w);
		if ((st->err = packet_end(st)) < 0)
			return 0;
	}
	packet_begin(st, 0);
	ana_pbw_begin(&st->w, F_PKT_TRACK_DESC);
	ana_pbw_varint(&st->w, F_TD_UUID, UUID_THREAD(st->host_no, tid));
	ana_pbw_begin(&st->w, F_TD_THREAD);
	ana_pbw_varint(&st->w, F_THD_PID, pid);
	ana_pbw_varint(&st->w, F_THD_TID, tid);
	ana_pbw_str(&st->w, F_THD_NAME, comm_of(st, tid, last));
	ana_pbw_end(&st->w);
	ana_pbw_end(&st->w);
	if ((st->err = packet_end(st)) < 0)
		return 0;
	return UUID_THREAD(st->host_no, tid);
}

/* ---- CPU lanes */

static int lane_flush(struct ana_perfetto *st, uint32_t cpu, struct lane *l)
{
	if (!l->n)
		return 0;
	if (l->events->err)
		return l->events->err;
	packet_begin(st, 0);
	ana_pbw_begin(&st->w, F_PKT_FTRACE);
	ana_pbw_varint(&st->w, F_FB_CPU, cpu);
	ana_pbw_raw(&st->w, l->events->p, l->events->len);
	ana_pbw_end(&st->w);
	l->events->len = 0;
	l->n = 0;
	return packet_end(st);
}

static void comm_field(struct ana_perfetto *st, uint32_t field, uint32_t tid, uint32_t cpu,
		       uint64_t t, struct ana_pbw *w)
{
	char idle[32];
	if (tid == 0) {
		snprintf(idle, sizeof(idle), "swapper/%" PRIu32, cpu);
		ana_pbw_str(w, field, idle);
	} else {
		ana_pbw_str(w, field, comm_of(st, tid, t));
	}
}

static int lane_switch(struct ana_perfetto *st, uint32_t cpu, struct lane *l, uint64_t t,
		       uint32_t prev, uint32_t next)
{
	struct ana_pbw *w = l->events;
	ana_pbw_begin(w, F_FB_EVENT);
	ana_pbw_varint(w, F_FE_TIMESTAMP, t + st->shift);
	ana_pbw_varint(w, F_FE_PID, prev);
	ana_pbw_begin(w, F_FE_SCHED_SWITCH);
	comm_field(st, F_SW_PREV_COMM, prev, cpu, t, w);
	ana_pbw_varint(w, F_SW_PREV_PID, prev);
	ana_pbw_varint(w, F_SW_PREV_PRIO, PRIO_NORMAL);
	ana_pbw_varint(w, F_SW_PREV_STATE, prev ? STATE_SLEEPING : 0);
	comm_field(st, F_SW_NEXT_COMM, next, cpu, t, w);
	ana_pbw_varint(w, F_SW_NEXT_PID, next);
	ana_pbw_varint(w, F_SW_NEXT_PRIO, PRIO_NORMAL);
	ana_pbw_end(w);
	ana_pbw_end(w);
	if (++l->n >= BUNDLE_EVENTS)
		return lane_flush(st, cpu, l);
	return w->err;
}

/* Intervals close in time order per CPU: each becomes a switch to its
 * task at its start (from the previous task when that one ran until
 * then, else from idle) and, when the CPU then idles, a switch to idle
 * at its end, written once the CPU's next interval shows which. */
static int on_interval(void *ctx, const struct ana_sched_interval *iv)
{
	struct ana_perfetto *st = ctx;
	if (!thread_track(st, iv->pid, iv->tid))
		return st->err ? st->err : -ENOMEM;
	int created;
	struct lane *l = prec_hashmap_get(&st->lanes, &iv->cpu, &created);
	if (!l)
		return -ENOMEM;
	if (created && !(l->events = calloc(1, sizeof(*l->events))))
		return -ENOMEM;
	uint64_t start = iv->start;
	int ret;
	if (l->has && iv->end <= l->end) {
		/* Closed late: a task that exited without a switch-out is
		 * charged up to its exit at the window end (sched's
		 * close_open()), after later intervals of its CPU. It fits a
		 * gap of the lane: its two switches go in a bundle of their
		 * own (the trace processor orders bundles by time), the lane
		 * goes on. */
		if ((ret = lane_flush(st, iv->cpu, l)) < 0 ||
		    (ret = lane_switch(st, iv->cpu, l, start, 0, iv->tid)) < 0 ||
		    (ret = lane_switch(st, iv->cpu, l, iv->end, iv->tid, 0)) < 0)
			return ret;
		return lane_flush(st, iv->cpu, l);
	}
	if (!l->has) {
		ret = lane_switch(st, iv->cpu, l, start, 0, iv->tid);
	} else {
		if (start < l->end)
			start = l->end;   /* never before the CPU's last switch */
		if (start == l->end) {
			ret = lane_switch(st, iv->cpu, l, start, l->tid, iv->tid);
		} else {
			ret = lane_switch(st, iv->cpu, l, l->end, l->tid, 0);
			if (!ret)
				ret = lane_switch(st, iv->cpu, l, start, 0, iv->tid);
		}
	}
	l->has = 1;
	l->tid = iv->tid;
	l->pid = iv->pid;
	l->end = iv->end;
	return ret;
}

static int write_lanes(struct ana_perfetto *st)
{
	struct ana_doc *doc = ana_doc_new();
	if (!doc)
		return -ENOMEM;
	struct ana_sched_opts so = { .jobs = st->s->opts.jobs, .filter = st->f,
				     .on_interval = on_interval, .ctx = st };
	int ret = ana_sched_run(st->s, &so, doc);
	ana_doc_free(doc);
	for (size_t i = 0; ret >= 0 && i < prec_hashmap_count(&st->lanes); i++) {
		uint32_t cpu = *(uint32_t *)prec_hashmap_key(&st->lanes, i);
		struct lane *l = prec_hashmap_val(&st->lanes, i);
		if (l->has)
			ret = lane_switch(st, cpu, l, l->end, l->tid, 0);
		if (ret >= 0)
			ret = lane_flush(st, cpu, l);
	}
	return ret < 0 ? ret : 0;
}

/* ---- interning */

static uint64_t intern_str(struct ana_perfetto *st, struct prec_hashmap *m, uint32_t field,
			   const char *s)
{
	int created;
	uint64_t *v = prec_hashmap_get(m, &s, &created);
	if (!v)
		return 0;
	if (created) {
		*v = prec_hashmap_count(m);
		ana_pbw_begin(&st->interned, field);
		ana_pbw_varint(&st->interned, F_IS_IID, *v);
		ana_pbw_str(&st->interned, F_IS_STR, s);
		ana_pbw_end(&st->interned);
	}
	return *v;
}

static uint64_t intern_map(struct ana_perfetto *st, const char *dso)
{
	int created;
	uint64_t *v = prec_hashmap_get(&st->maps, &dso, &created);
	if (!v)
		return 0;
	if (created) {
		uint64_t iid = prec_hashmap_count(&st->maps);
		uint64_t path = intern_str(st, &st->paths, F_ID_MAPPING_PATHS, dso);
		if (!path)
			return 0;
		ana_pbw_begin(&st->interned, F_ID_MAPPINGS);
		ana_pbw_varint(&st->interned, F_MAP_IID, iid);
		ana_pbw_varint(&st->interned, F_MAP_PATHS, path);
		ana_pbw_end(&st->interned);
		*v = iid;
	}
	return *v;
}

static uint64_t intern_frame(struct ana_perfetto *st, const struct ana_loc *loc)
{
	struct framekey k;
	memset(&k, 0, sizeof(k));
	k.dso = loc->dso ? loc->dso : "[unknown]";
	if (!(k.sym = ana_frame_name(st->s, loc)))
		return 0;
	uint64_t *v = prec_hashmap_find(&st->frames, &k);
	if (v)
		return *v;
	uint64_t fn = intern_str(st, &st->funcs, F_ID_FUNCTION_NAMES, k.sym);
	uint64_t map = fn ? intern_map(st, k.dso) : 0;
	if (!map || !(v = prec_hashmap_get(&st->frames, &k, NULL)))
		return 0;
	*v = prec_hashmap_count(&st->frames);
	ana_pbw_begin(&st->interned, F_ID_FRAMES);
	ana_pbw_varint(&st->interned, F_FR_IID, *v);
	ana_pbw_varint(&st->interned, F_FR_FUNCTION, fn);
	ana_pbw_varint(&st->interned, F_FR_MAPPING, map);
	ana_pbw_varint(&st->interned, F_FR_REL_PC, loc->dso ? loc->dso_off : loc->ip);
	ana_pbw_end(&st->interned);
	return *v;
}

/* The callstack of frames[0..n) (leaf first) as an iid; 0 on ENOMEM. */
static uint64_t intern_stack(struct ana_perfetto *st, int n)
{
	for (int i = 0; i < n; i++)
		if (!(st->ids[i] = intern_frame(st, &st->locs[i])))
			return 0;
	/* key: the frame iids as bytes, so equal stacks are equal strings */
	size_t len = 0;
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(st->key + len, st->keycap - len, "%" PRIx64 ",",
					st->ids[i]);
	const char *k = ana_strpool_intern_n(&st->s->pool, st->key, len);
	int created;
	uint64_t *v = k ? prec_hashmap_get(&st->stacks, &k, &created) : NULL;
	if (!v)
		return 0;
	if (created) {
		*v = prec_hashmap_count(&st->stacks);
		ana_pbw_begin(&st->interned, F_ID_CALLSTACKS);
		ana_pbw_varint(&st->interned, F_CS_IID, *v);
		for (int i = n - 1; i >= 0; i--)   /* bottom (outermost) first */
			ana_pbw_varint(&st->interned, F_CS_FRAMES, st->ids[i]);
		ana_pbw_end(&st->interned);
	}
	return *v;
}

/* ---- the file-order pass */

static int on_sample(struct ana_perfetto *st, const struct prec_packet *p)
{
	const Perfrec__Sample *smp = p->pkt->sample;
	struct ana_trace *s = st->s;
	int keep = ana_filter_sample(st->f, s, p, NULL);
	if (keep <= 0)
		return keep;
	if (!thread_track(st, smp->pid, smp->tid))
		return st->err ? st->err : -ENOMEM;
	int n = ana_resolve_sample(s, p, st->locs, MAX_FRAMES);
	if (n < 0)
		return n;
	uint64_t stack = intern_stack(st, n);
	if (!stack)
		return -ENOMEM;
	packet_begin(st, p->time);
	if (st->interned.len) {
		ana_pbw_begin(&st->w, F_PKT_INTERNED);
		ana_pbw_raw(&st->w, st->interned.p, st->interned.len);
		ana_pbw_end(&st->w);
		st->interned.len = 0;
	}
	ana_pbw_begin(&st->w, F_PKT_PERF_SAMPLE);
	ana_pbw_varint(&st->w, F_PS_CPU, smp->cpu);
	ana_pbw_varint(&st->w, F_PS_PID, smp->pid);
	ana_pbw_varint(&st->w, F_PS_TID, smp->tid);
	ana_pbw_varint(&st->w, F_PS_CALLSTACK, stack);
	if (smp->period)
		ana_pbw_varint(&st->w, F_PS_TIMEBASE_COUNT, smp->period);
	ana_pbw_end(&st->w);
	return st->interned.err ? st->interned.err : packet_end(st);
}

static int track_event(struct ana_perfetto *st, uint64_t time, uint64_t track, int type,
		       const char *name, int64_t value)
{
	packet_begin(st, time);
	ana_pbw_begin(&st->w, F_PKT_TRACK_EVENT);
	ana_pbw_varint(&st->w, F_TE_TYPE, (uint64_t)type);
	ana_pbw_varint(&st->w, F_TE_TRACK, track);
	if (name)
		ana_pbw_str(&st->w, F_TE_NAME, name);
	if (type == TE_COUNTER)
		ana_pbw_varint(&st->w, F_TE_COUNTER, (uint64_t)value);
	ana_pbw_end(&st->w);
	return packet_end(st);
}

static int on_offcpu(struct ana_perfetto *st, const struct prec_packet *p)
{
	const Perfrec__OffCpu *oc = p->pkt->off_cpu;
	struct ana_trace *s = st->s;
	const struct ana_filter *f = st->f;
	/* sums (count >= 1) have no place in time: intervals only */
	if (oc->count || !oc->duration || oc->duration > p->time)
		return 0;
	if (f && f->active) {
		const char *comm = ana_trace_comm_name(s, oc->tid, p->time);
		if (!comm)
			return -ENOMEM;
		if (!ana_filter_offcpu(f, oc->count, oc->cpu, oc->pid, oc->tid, p->time) ||
		    !ana_filter_comm(f, comm) ||
		    !ana_filter_event(f, ana_trace_event_name(s, ana_trace_offcpu_event(s))))
			return 0;
	}
	uint64_t track = thread_track(st, oc->pid, oc->tid);
	if (!track)
		return st->err ? st->err : -ENOMEM;
	char name[64];
	snprintf(name, sizeof(name), "off-cpu %s", ana_offcpu_state_name(oc->state));
	int ret = track_event(st, p->time - oc->duration, track, TE_SLICE_BEGIN, name, 0);
	return ret < 0 ? ret : track_event(st, p->time, track, TE_SLICE_END, NULL, 0);
}

static int on_group(struct ana_perfetto *st, const struct prec_packet *p)
{
	const Perfrec__GroupSnapshot *g = p->pkt->group;
	const Perfrec__GroupRead *r = g->read;
	if (!r || !p->time || (st->f && !ana_filter_time(st->f, p->time)))
		return 0;
	size_t n = r->n_ids < r->n_values ? r->n_ids : r->n_values;
	for (size_t i = 0; i < n; i++) {
		struct counterkey k;
		memset(&k, 0, sizeof(k));
		k.group = g->group;
		k.cpu = g->cpu;
		k.pid = g->pid;
		k.id = r->ids[i];
		k.host = st->host_no;
		int created;
		struct counterval *cv = prec_hashmap_get(&st->counters, &k, &created);
		if (!cv)
			return -ENOMEM;
		if (created) {
			cv->uuid = UUID_COUNTER(++st->ncounters);
			char name[256];
			const char *ev = ana_trace_event_name(st->s, ana_trace_event_of(st->s, k.id));
			int len;
			if (k.cpu >= 0)
				len = snprintf(name, sizeof(name), "%s cpu%" PRId32, ev, k.cpu);
			else if (k.pid >= 0)
				len = snprintf(name, sizeof(name), "%s pid %" PRId32, ev, k.pid);
			else
				len = snprintf(name, sizeof(name), "%s", ev);
			if (st->host && len > 0 && (size_t)len < sizeof(name))
				snprintf(name + len, sizeof(name) - (size_t)len, " @%s", st->host);
			uint64_t uuid = cv->uuid;
			packet_begin(st, 0);
			ana_pbw_begin(&st->w, F_PKT_TRACK_DESC);
			ana_pbw_varint(&st->w, F_TD_UUID, uuid);
			ana_pbw_str(&st->w, F_TD_NAME, name);
			ana_pbw_begin(&st->w, F_TD_COUNTER);
			ana_pbw_varint(&st->w, F_CD_UNIT, CD_UNIT_COUNT);
			ana_pbw_end(&st->w);
			ana_pbw_end(&st->w);
			int ret = packet_end(st);
			if (ret < 0)
				return ret;
		}
		/* the count per interval; a read older than the last one
		 * (snapshots of other streams come in file order) or a
		 * counter that went back (multiplexing scaled) is left out */
		uint64_t v = r->values[i];
		if (cv->has && (p->time <= cv->time || v < cv->last))
			continue;
		uint64_t delta = cv->has ? v - cv->last : v;
		cv->has = 1;
		cv->last = v;
		cv->time = p->time;
		int ret = track_event(st, p->time, cv->uuid, TE_COUNTER, NULL,
				      (int64_t)(delta & INT64_MAX));
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int on_loss(struct ana_perfetto *st, const struct prec_packet *p)
{
	const Perfrec__Loss *l = p->pkt->loss;
	uint64_t t = p->time ? p->time : st->s->start;
	if (st->f && st->f->has_time && !ana_filter_time(st->f, t))
		return 0;
	char name[128];
	snprintf(name, sizeof(name), "lost %" PRIu64 " (%s) cpu%" PRIu32, l->count,
		 ana_loss_kind_name(l->kind), l->cpu);
	return track_event(st, t, UUID_LOSSES(st->host_no), TE_INSTANT, name, 0);
}

static int on_packet(void *ctx, const struct prec_packet *p)
{
	struct ana_perfetto *st = ctx;
	switch (p->pkt->data_case) {
	case PERFREC__PACKET__DATA_SAMPLE:
		return on_sample(st, p);
	case PERFREC__PACKET__DATA_OFF_CPU:
		return on_offcpu(st, p);
	case PERFREC__PACKET__DATA_GROUP:
		return on_group(st, p);
	case PERFREC__PACKET__DATA_LOSS:
		return on_loss(st, p);
	default:
		return 0;
	}
}

static int write_head(struct ana_perfetto *st)
{
	const Perfrec__FileHeader *h = st->s->header;
	uint64_t t0 = st->s->start;
	packet_begin(st, t0);
	ana_pbw_begin(&st->w, F_PKT_CLOCKS);
	static const uint32_t same[] = { CLOCK_BOOTTIME_ID, CLOCK_MONOTONIC_ID };
	for (size_t i = 0; i < 2; i++) {
		ana_pbw_begin(&st->w, F_CLOCKS_CLOCK);
		ana_pbw_varint(&st->w, F_CLOCK_ID, same[i]);
		ana_pbw_varint(&st->w, F_CLOCK_TS, t0);
		ana_pbw_end(&st->w);
	}
	if (h && h->realtime_ns && h->monotonic_ns) {
		/* the header's pair of readings, moved to the start (either
		 * side of it: unsigned arithmetic wraps back) */
		ana_pbw_begin(&st->w, F_CLOCKS_CLOCK);
		ana_pbw_varint(&st->w, F_CLOCK_ID, CLOCK_REALTIME_ID);
		ana_pbw_varint(&st->w, F_CLOCK_TS, h->realtime_ns + t0 - h->monotonic_ns);
		ana_pbw_end(&st->w);
	}
	ana_pbw_end(&st->w);
	int ret = packet_end(st);
	if (ret < 0)
		return ret;
	if (st->host) {   /* the machine's name in the UI */
		packet_begin(st, 0);
		ana_pbw_begin(&st->w, F_PKT_SYSTEM_INFO);
		ana_pbw_str(&st->w, F_SI_MACHINE_NAME, st->host);
		ana_pbw_end(&st->w);
		if ((ret = packet_end(st)) < 0)
			return ret;
	}
	char name[300];
	snprintf(name, sizeof(name), "perfrec losses%s%s", st->host ? " @" : "",
		 st->host ? st->host : "");
	packet_begin(st, 0);
	ana_pbw_begin(&st->w, F_PKT_TRACK_DESC);
	ana_pbw_varint(&st->w, F_TD_UUID, UUID_LOSSES(st->host_no));
	ana_pbw_str(&st->w, F_TD_NAME, name);
	ana_pbw_end(&st->w);
	return packet_end(st);
}

int ana_perfetto_new(struct ana_perfetto **out, const struct ana_filter *f,
		     struct ana_strpool *pool, FILE *fout)
{
	struct ana_perfetto *st = calloc(1, sizeof(*st));
	*out = NULL;
	if (!st)
		return -ENOMEM;
	st->f = f;
	st->out = fout;
	st->pool = pool;
	ana_pbw_init(&st->w);
	ana_pbw_init(&st->interned);
	prec_hashmap_init(&st->hosts, sizeof(const char *), sizeof(uint32_t));
	prec_hashmap_init(&st->tids, sizeof(uint32_t), 1);
	prec_hashmap_init(&st->pids, sizeof(uint32_t), 1);
	prec_hashmap_init(&st->lanes, sizeof(uint32_t), sizeof(struct lane));
	prec_hashmap_init(&st->funcs, sizeof(const char *), sizeof(uint64_t));
	prec_hashmap_init(&st->paths, sizeof(const char *), sizeof(uint64_t));
	prec_hashmap_init(&st->maps, sizeof(const char *), sizeof(uint64_t));
	prec_hashmap_init(&st->frames, sizeof(struct framekey), sizeof(uint64_t));
	prec_hashmap_init(&st->stacks, sizeof(const char *), sizeof(uint64_t));
	prec_hashmap_init(&st->counters, sizeof(struct counterkey), sizeof(struct counterval));
	st->keycap = MAX_FRAMES * 17 + 1;   /* hex iid and a comma per frame */
	st->locs = calloc(MAX_FRAMES, sizeof(*st->locs));
	st->ids = calloc(MAX_FRAMES, sizeof(*st->ids));
	st->key = malloc(st->keycap);
	if (!st->locs || !st->ids || !st->key) {
		ana_perfetto_free(st);
		return -ENOMEM;
	}
	*out = st;
	return 0;
}

/* Forgets what the previous trace's sequence knew: its interned
 * entries and names (pointers into that trace), its lanes, the threads
 * it described (described again from this trace: their latest names). */
static void trace_reset(struct ana_perfetto *st)
{
	for (size_t i = 0; i < prec_hashmap_count(&st->lanes); i++) {
		struct lane *l = prec_hashmap_val(&st->lanes, i);
		if (l->events)
			ana_pbw_release(l->events);
		free(l->events);
	}
	prec_hashmap_clear(&st->lanes);
	prec_hashmap_clear(&st->tids);
	prec_hashmap_clear(&st->pids);
	prec_hashmap_clear(&st->funcs);
	prec_hashmap_clear(&st->paths);
	prec_hashmap_clear(&st->maps);
	prec_hashmap_clear(&st->frames);
	prec_hashmap_clear(&st->stacks);
	st->interned.len = 0;
}

int ana_perfetto_add(struct ana_perfetto *st, struct ana_trace *s, const char *host)
{
	trace_reset(st);
	st->s = s;
	st->seq++;
	st->first = 1;
	st->host = NULL;
	st->host_no = 0;
	st->shift = 0;
	if (host) {
		const char *h = ana_strpool_intern(st->pool, host);
		int created;
		uint32_t *no = h ? prec_hashmap_get(&st->hosts, &h, &created) : NULL;
		if (!no)
			return -ENOMEM;
		if (created)
			*no = (uint32_t)prec_hashmap_count(&st->hosts);
		st->host = h;
		st->host_no = *no;
		/* monotonic -> wall clock (unsigned: wraps either way) */
		if (s->header && s->header->realtime_ns)
			st->shift = s->header->realtime_ns - s->header->monotonic_ns;
	}
	int ret = write_head(st);
	if (ret < 0 || (ret = write_lanes(st)) < 0)
		return ret;
	ana_trace_set_kinds(s, PREC_KIND(PERFREC__PACKET__DATA_SAMPLE) |
			       PREC_KIND(PERFREC__PACKET__DATA_OFF_CPU) |
			       PREC_KIND(PERFREC__PACKET__DATA_GROUP) |
			       PREC_KIND(PERFREC__PACKET__DATA_LOSS));
	ret = ana_trace_scan(s, "export", on_packet, st);
	ana_trace_set_kinds(s, 0);
	st->s = NULL;
	return ret < 0 ? ret : 0;
}

int ana_perfetto_finish(struct ana_perfetto *st)
{
	return fflush(st->out) || ferror(st->out) ? -EIO : 0;
}

void ana_perfetto_free(struct ana_perfetto *st)
{
	if (!st)
		return;
	trace_reset(st);
	free(st->locs);
	free(st->ids);
	free(st->key);
	ana_pbw_release(&st->w);
	ana_pbw_release(&st->interned);
	prec_hashmap_release(&st->hosts);
	prec_hashmap_release(&st->tids);
	prec_hashmap_release(&st->pids);
	prec_hashmap_release(&st->lanes);
	prec_hashmap_release(&st->funcs);
	prec_hashmap_release(&st->paths);
	prec_hashmap_release(&st->maps);
	prec_hashmap_release(&st->frames);
	prec_hashmap_release(&st->stacks);
	prec_hashmap_release(&st->counters);
	free(st);
}
