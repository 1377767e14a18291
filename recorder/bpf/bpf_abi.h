/*
 * bpf_abi.h - what recorder/bpf's BPF programs and their loader share: the
 * records they write, the keys and values of their maps, the filter's
 * instructions. Included by the *.bpf.c programs (after vmlinux.h, which
 * defines __u32 and friends) and by user space (after <linux/types.h>).
 * Layouts are fixed-size and naturally aligned, the same on both sides.
 */
#ifndef REC_BPF_ABI_H
#define REC_BPF_ABI_H

/* ---- off-CPU (offcpu.bpf.c) */

/* OffCpu.State in perfrec.proto */
enum rec_offcpu_state {
	REC_OFFCPU_UNKNOWN = 0,
	REC_OFFCPU_RUNNABLE = 1,
	REC_OFFCPU_SLEEPING = 2,
	REC_OFFCPU_DISK = 3,
	REC_OFFCPU_IDLE = 4,
	REC_OFFCPU_STOPPED = 5,
	REC_OFFCPU_OTHER = 6,
};

/* The task states of include/linux/sched.h the program maps (stable
 * since 4.14; TASK_IDLE = TASK_UNINTERRUPTIBLE | TASK_NOLOAD). */
#define REC_TASK_INTERRUPTIBLE 0x0001
#define REC_TASK_UNINTERRUPTIBLE 0x0002
#define REC_TASK_STOPPED 0x0004
#define REC_TASK_TRACED 0x0008
#define REC_TASK_DEAD 0x0080
#define REC_TASK_NOLOAD 0x0400

#define REC_OFFCPU_MAGIC 0x4f464631u   /* "OFF1": record layout version */

/* One interval: what a bpf-output sample's raw data holds. */
struct rec_offcpu_rec {
	__u32 magic;             /* REC_OFFCPU_MAGIC */
	__u32 state;             /* enum rec_offcpu_state */
	__u64 start, end;        /* CLOCK_MONOTONIC ns */
	__u32 pid, tid;
	__u32 waker_pid, waker_tid;
	__s32 kstack, ustack;    /* stack map ids; < 0: none */
};

/* A task off its CPU since ts (map "starts", key: tid); runtime: its CPU
 * time then (ns; 0: not known). */
struct rec_offcpu_start {
	__u64 ts;
	__u32 pid, state;
	__s32 kstack, ustack;
	__u32 waker_pid, waker_tid;
	__u64 runtime;
};

/* Short blocks summed (maps "agg0"/"agg1"). */
struct rec_offcpu_key {
	__u32 pid, tid;
	__s32 kstack, ustack;
	__u32 state, pad;
};

struct rec_offcpu_val {
	__u64 ns, count;
};

/* Counters in the program's .bss, read by the loader. */
struct rec_offcpu_counts {
	__u64 map_full;          /* blocks not measured: "starts" was full */
	__u64 agg_full;          /* blocks not summed: the sum map was full */
	__u64 stack_lost;        /* stacks the stack map could not store */
	__u64 output_dropped;    /* records bpf_perf_event_output refused
				  * (not for a full ring: that is LOST) */
	__u64 target_full;       /* children not followed: "targets" full */
};

/* Target filter modes (rodata target_mode). */
#define REC_OFFCPU_ALL 0
#define REC_OFFCPU_BY_PID 1     /* key of "targets": process id (tgid) */
#define REC_OFFCPU_BY_TID 2     /* key of "targets": thread id */

/* Operations of the test program (offcpu_test: args[0]). */
#define REC_OFFCPU_TEST_OUT 1      /* args: tid, pid, raw state, now, CPU time */
#define REC_OFFCPU_TEST_IN 2       /* args: tid, -, -, now */
#define REC_OFFCPU_TEST_WAKE 3     /* args: tid (wakee), pid, -, - */

#define REC_OFFCPU_MAX_DEPTH 127   /* frames per stack (PERF_MAX_STACK_DEPTH) */
#define REC_OFFCPU_MAX_CPUS 1024   /* CPUs the recorded-CPU table covers */

/* ---- sample filter (sfilter.bpf.c) */

#define REC_SF_MAX_INSNS 64    /* the program's loop bound and stack depth */
#define REC_SF_MAX_EVENTS 64   /* events counted apart (attach cookies) */

enum rec_sf_op {
	REC_SF_TEST = 1,   /* push (field cmp value) */
	REC_SF_AND,        /* pop b, a; push a && b */
	REC_SF_OR,
	REC_SF_NOT,        /* pop a; push !a */
};

enum rec_sf_field {
	REC_SF_PID = 1,    /* process id (tgid) */
	REC_SF_TID,
	REC_SF_UID,
	REC_SF_CGROUP,     /* value: cgroup v2 id, level: its depth; true
			    * for the cgroup and every cgroup below it */
	REC_SF_CPU,
	REC_SF_MODE,       /* value: 1 user, 0 kernel */
};

enum rec_sf_cmp {
	REC_SF_EQ = 1,
	REC_SF_NE,
	REC_SF_LT,
	REC_SF_LE,
	REC_SF_GT,
	REC_SF_GE,
};

struct rec_sf_insn {
	__u8 op, field, cmp, pad;
	__u32 level;
	__u64 value;
};

#endif
