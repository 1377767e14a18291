// SPDX-License-Identifier: GPL-2.0
/*
 * offcpu.bpf.c - off-CPU time: how long each task waits off its CPU, and
 * where (kernel and user stacks at the switch-out), measured on
 * sched_switch. The loader is recorder/bpf/bpf.c; layouts in bpf_abi.h.
 *
 * At a task's switch-out: its time, state, CPU time and stack ids go into
 * "starts" (key: tid). At its next switch-in the block [start, now] ends:
 * one of at least threshold_ns is written as a record through "events"
 * (bpf-output perf events, one per CPU, that perfrec drains with its other
 * records); a shorter one (or one the output refused) is summed into the
 * current "agg" map by (pid, tid, stacks, state), which user space drains
 * periodically: every block that ends is counted once, as a record or in
 * a sum. What cannot be counted (full maps, stack-map misses, refused
 * output) is counted in `counts`.
 *
 * A switch-in can go unseen: a kernel may leave the tracepoint out for
 * some tasks (on a CI VM no switch away from its init's threads reached
 * it, so a task switched in from one was not seen running again, and its
 * block was lost when it next switched out).
 * A task that switches out with its block still open was switched in
 * unseen: that block ends where the task started running, now minus the
 * CPU time it used since its last switch-out (it ran once in between: any
 * other switch-out would have been seen). Without CPU times (raw_tp) the
 * switch-in comes from the CPU's previous switch instead, see below.
 *
 * Programs (the loader loads one switch program):
 *  - offcpu_switch (tp_btf): prev and next from BTF; exact.
 *  - offcpu_switch_raw (raw_tp): for kernels without BTF. Only current
 *    (= prev) is known, so a task's switch-in is learned at its next
 *    switch-out, as this CPU's previous switch time; the state comes from
 *    the tracepoint's prev_state argument (Linux >= 5.18), else UNKNOWN
 *    (RUNNABLE when preempted).
 *  - offcpu_waking (tp_btf): who woke a blocked task, into its start.
 *  - offcpu_fork (tp_btf): a traced process's children are traced too.
 *  - offcpu_test (raw_tp): the same logic driven by its arguments, for
 *    unit tests (bpf_prog_test_run_opts); never attached.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf_abi.h"

char LICENSE[] SEC("license") = "GPL";

#define EFAULT 14
#define ENOSPC 28
#define EEXIST 17

const volatile __u64 threshold_ns = 1000000;
const volatile __u32 target_mode = REC_OFFCPU_ALL;
const volatile __u32 follow_children = 0;
const volatile __u32 kstack_skip = 0;
const volatile __u32 have_prev_state = 0;   /* raw_tp: args[3] exists */
/* Blocks are measured where they end: on the recorded CPUs only. */
const volatile __u32 all_cpus = 1;
const volatile __u8 cpu_recorded[REC_OFFCPU_MAX_CPUS] = {};

struct rec_offcpu_counts counts = {};
__u32 agg_gen = 0;   /* the sum map programs write: agg0 or agg1 */

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, REC_OFFCPU_MAX_DEPTH * sizeof(__u64));
	__uint(max_entries, 16384);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct rec_offcpu_start);
	__uint(max_entries, 32768);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct rec_offcpu_key);
	__type(value, struct rec_offcpu_val);
	__uint(max_entries, 16384);
} agg0 SEC(".maps"), agg1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 8192);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} cpu_last SEC(".maps");   /* raw_tp: this CPU's previous switch time */

static __always_inline __u32 state_of(__u32 raw, int preempt)
{
	if (preempt || raw == 0)
		return REC_OFFCPU_RUNNABLE;
	if ((raw & (REC_TASK_UNINTERRUPTIBLE | REC_TASK_NOLOAD)) ==
	    (REC_TASK_UNINTERRUPTIBLE | REC_TASK_NOLOAD))
		return REC_OFFCPU_IDLE;
	if (raw & REC_TASK_UNINTERRUPTIBLE)
		return REC_OFFCPU_DISK;
	if (raw & REC_TASK_INTERRUPTIBLE)
		return REC_OFFCPU_SLEEPING;
	if (raw & (REC_TASK_STOPPED | REC_TASK_TRACED))
		return REC_OFFCPU_STOPPED;
	return REC_OFFCPU_OTHER;
}

static __always_inline int traced(__u32 tid, __u32 pid)
{
	__u32 key = target_mode == REC_OFFCPU_BY_TID ? tid : pid;

	if (target_mode == REC_OFFCPU_ALL)
		return 1;
	return bpf_map_lookup_elem(&targets, &key) != 0;
}

static __always_inline __s32 stack_id(void *ctx, __u64 flags)
{
	long id = bpf_get_stackid(ctx, &stacks, flags);

	/* -EFAULT: no stack (a kernel thread has no user stack) */
	if (id < 0 && id != -EFAULT)
		__sync_fetch_and_add(&counts.stack_lost, 1);
	return id < 0 ? -1 : (__s32)id;
}

static __always_inline void sum_block(const struct rec_offcpu_start *s, __u32 tid,
				      __u64 ns)
{
	struct rec_offcpu_key k = {};
	struct rec_offcpu_val v = { ns, 1 }, *p;
	void *m = agg_gen & 1 ? (void *)&agg1 : (void *)&agg0;

	k.pid = s->pid;
	k.tid = tid;
	k.kstack = s->kstack;
	k.ustack = s->ustack;
	k.state = s->state;
	p = bpf_map_lookup_elem(m, &k);
	if (!p) {
		if (!bpf_map_update_elem(m, &k, &v, BPF_NOEXIST))
			return;
		p = bpf_map_lookup_elem(m, &k);   /* inserted meanwhile */
		if (!p) {
			__sync_fetch_and_add(&counts.agg_full, 1);
			return;
		}
	}
	__sync_fetch_and_add(&p->ns, ns);
	__sync_fetch_and_add(&p->count, 1);
}

/* Task tid runs again at now: its block s ends (and leaves "starts"). */
static __always_inline void end_block(void *ctx, __u32 tid,
				      struct rec_offcpu_start *s, __u64 now)
{
	struct rec_offcpu_rec r = {};
	__u64 ns;

	if (!all_cpus) {
		__u32 cpu = bpf_get_smp_processor_id();

		if (cpu >= REC_OFFCPU_MAX_CPUS || !cpu_recorded[cpu]) {
			bpf_map_delete_elem(&starts, &tid);
			return;
		}
	}
	ns = now > s->ts ? now - s->ts : 0;
	if (ns >= threshold_ns) {
		long ret;

		r.magic = REC_OFFCPU_MAGIC;
		r.state = s->state;
		r.start = s->ts;
		r.end = now;
		r.pid = s->pid;
		r.tid = tid;
		r.waker_pid = s->waker_pid;
		r.waker_tid = s->waker_tid;
		r.kstack = s->kstack;
		r.ustack = s->ustack;
		ret = bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &r, sizeof(r));
		if (ret == 0) {
			bpf_map_delete_elem(&starts, &tid);
			return;
		}
		/* A full ring is a kernel LOST record already; anything else
		 * is ours to count. Either way the time still goes into
		 * the sums, so the total stays complete. */
		if (ret != -ENOSPC)
			__sync_fetch_and_add(&counts.output_dropped, 1);
	}
	sum_block(s, tid, ns);
	bpf_map_delete_elem(&starts, &tid);
}

/* Task tid runs again at now: its block (if it was seen leaving) ends. */
static __always_inline void switch_in(void *ctx, __u32 tid, __u64 now)
{
	struct rec_offcpu_start *s = bpf_map_lookup_elem(&starts, &tid);

	if (s)
		end_block(ctx, tid, s, now);
}

/* Task tid (of process pid) leaves its CPU at now in raw state raw, having
 * used runtime ns of CPU in all (0: not known). */
static __always_inline void switch_out(void *ctx, __u32 tid, __u32 pid,
				       __u32 raw, int preempt, int known, __u64 now,
				       __u64 runtime)
{
	struct rec_offcpu_start s = {}, *open;

	if (!tid || (raw & REC_TASK_DEAD))
		return;   /* the idle task; a dying task's last switch */
	if (!traced(tid, pid))
		return;
	open = bpf_map_lookup_elem(&starts, &tid);
	if (open && runtime && open->runtime && runtime >= open->runtime) {
		/* switched in unseen: it ran (runtime - open->runtime) since */
		__u64 ran = runtime - open->runtime, in = ran < now ? now - ran : 0;

		end_block(ctx, tid, open, in > open->ts ? in : open->ts);
	}
	s.ts = now;
	s.runtime = runtime;
	s.pid = pid;
	s.state = known ? state_of(raw, preempt) :
		  preempt ? REC_OFFCPU_RUNNABLE : REC_OFFCPU_UNKNOWN;
	s.kstack = stack_id(ctx, kstack_skip & 0xff);
	s.ustack = stack_id(ctx, BPF_F_USER_STACK);
	if (bpf_map_update_elem(&starts, &tid, &s, BPF_ANY))
		__sync_fetch_and_add(&counts.map_full, 1);
}

struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return (__u32)BPF_CORE_READ((struct task_struct___old *)t, state);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();

	switch_in(ctx, next->pid, now);
	switch_out(ctx, prev->pid, prev->tgid, task_state(prev), preempt, 1, now,
		   prev->se.sum_exec_runtime);
	return 0;
}

SEC("raw_tp/sched_switch")
int offcpu_switch_raw(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 now = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	__u32 zero = 0, tid = (__u32)id, raw = 0;
	__u64 *last = bpf_map_lookup_elem(&cpu_last, &zero);
	int preempt = ctx->args[0] != 0;

	if (!last)
		return 0;
	/* current was switched in at this CPU's previous switch */
	if (*last && tid)
		switch_in(ctx, tid, *last);
	if (have_prev_state)
		raw = (__u32)ctx->args[3];
	/* No CPU times without BTF: a switch-in the tracepoint did not
	 * report ends the block at the CPU's last switch it did report,
	 * early by what ran in between. */
	switch_out(ctx, tid, (__u32)(id >> 32), raw, preempt, have_prev_state, now, 0);
	*last = now;
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(offcpu_waking, struct task_struct *p)
{
	__u32 tid = p->pid;
	struct rec_offcpu_start *s = bpf_map_lookup_elem(&starts, &tid);
	__u64 id;

	if (!s)
		return 0;
	id = bpf_get_current_pid_tgid();
	s->waker_pid = (__u32)(id >> 32);
	s->waker_tid = (__u32)id;
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(offcpu_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 key, ckey;
	__u8 one = 1;

	if (!follow_children || target_mode == REC_OFFCPU_ALL)
		return 0;
	key = target_mode == REC_OFFCPU_BY_TID ? parent->pid : parent->tgid;
	ckey = target_mode == REC_OFFCPU_BY_TID ? child->pid : child->tgid;
	if (key == ckey || !bpf_map_lookup_elem(&targets, &key))
		return 0;
	if (bpf_map_update_elem(&targets, &ckey, &one, BPF_ANY))
		__sync_fetch_and_add(&counts.target_full, 1);
	return 0;
}

/* Unit tests: args[0] is the operation (REC_OFFCPU_TEST_*), then its
 * arguments (bpf_abi.h). */
SEC("raw_tp/sched_switch")
int offcpu_test(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)ctx->args[1], pid = (__u32)ctx->args[2];
	__u32 raw = (__u32)ctx->args[3];
	__u64 now = ctx->args[4];

	if (ctx->args[0] == REC_OFFCPU_TEST_OUT) {
		switch_out(ctx, tid, pid, raw, 0, 1, now, ctx->args[5]);
	} else if (ctx->args[0] == REC_OFFCPU_TEST_IN) {
		switch_in(ctx, tid, now);
	} else if (ctx->args[0] == REC_OFFCPU_TEST_WAKE) {
		struct rec_offcpu_start *s = bpf_map_lookup_elem(&starts, &tid);

		if (s) {
			s->waker_pid = pid;
			s->waker_tid = raw;
		}
	}
	return 0;
}
