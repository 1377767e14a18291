// SPDX-License-Identifier: GPL-2.0
/*
 * sfilter.bpf.c - keeps or drops each sample of the events it is attached
 * to (BPF_PROG_TYPE_PERF_EVENT: returning 0 drops the sample), by an
 * expression compiled by recorder/bpf/sfilter.c into postfix instructions
 * (bpf_abi.h). The evaluation stack is a bit mask: a test pushes one bit,
 * AND/OR pop two and push one, NOT flips the top. Each attachment's cookie
 * is its event's number: kept and dropped samples are counted per event
 * in `counts` ([event * 2 + kept], per CPU).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf_abi.h"

char LICENSE[] SEC("license") = "GPL";

const volatile struct rec_sf_insn insns[REC_SF_MAX_INSNS] = {};
const volatile __u32 ninsns = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 2 * REC_SF_MAX_EVENTS);
} counts SEC(".maps");

/* Context fields are read whole (volatile): the verifier refuses a
 * narrower load of a pt_regs field, which clang makes of `cs & 3`. */
static __always_inline int user_mode(struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	return (*(volatile __u64 *)&ctx->regs.cs & 3) != 0;
#elif defined(__TARGET_ARCH_arm64)
	return (*(volatile __u64 *)&ctx->regs.pstate & 0xf) == 0;
#else
	return (long)PT_REGS_IP(&ctx->regs) >= 0;
#endif
}

static __always_inline int compare(__u64 a, __u32 cmp, __u64 b)
{
	switch (cmp) {
	case REC_SF_EQ: return a == b;
	case REC_SF_NE: return a != b;
	case REC_SF_LT: return a < b;
	case REC_SF_LE: return a <= b;
	case REC_SF_GT: return a > b;
	case REC_SF_GE: return a >= b;
	}
	return 0;
}

SEC("perf_event")
int sample_filter(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), stack = 0, v;
	__u64 uid = bpf_get_current_uid_gid() & 0xffffffff;
	__u32 cpu = bpf_get_smp_processor_id(), key;
	int mode = user_mode(ctx);
	__u64 *n;

	for (int i = 0; i < REC_SF_MAX_INSNS; i++) {
		if (i >= ninsns)
			break;
		switch (insns[i].op) {
		case REC_SF_TEST:
			switch (insns[i].field) {
			case REC_SF_PID: v = id >> 32; break;
			case REC_SF_TID: v = (__u32)id; break;
			case REC_SF_UID: v = uid; break;
			case REC_SF_CPU: v = cpu; break;
			case REC_SF_MODE: v = mode; break;
			case REC_SF_CGROUP:
				v = bpf_get_current_ancestor_cgroup_id(insns[i].level);
				break;
			default: v = 0; break;
			}
			stack = stack << 1 | compare(v, insns[i].cmp, insns[i].value);
			break;
		case REC_SF_AND:
			stack = (stack >> 2) << 1 | ((stack & (stack >> 1)) & 1);
			break;
		case REC_SF_OR:
			stack = (stack >> 2) << 1 | ((stack | (stack >> 1)) & 1);
			break;
		case REC_SF_NOT:
			stack ^= 1;
			break;
		}
	}
	key = (__u32)bpf_get_attach_cookie(ctx);
	if (key >= REC_SF_MAX_EVENTS)
		key = 0;
	key = key * 2 + (__u32)(stack & 1);
	n = bpf_map_lookup_elem(&counts, &key);
	if (n)
		*n += 1;
	return stack & 1;
}
