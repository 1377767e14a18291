/*
 * test_offcpu_prog.c - the off-CPU program's logic (recorder/bpf/
 * offcpu.bpf.c) run by the kernel through its raw_tp test wrapper
 * (offcpu_test, bpf_prog_test_run_opts): switch-outs and switch-ins with
 * chosen tids, states and times, then the maps, counters and the records
 * it wrote into a bpf-output ring are checked:
 *  - a block under the threshold is summed by (pid, tid, stacks, state),
 *    repeated blocks add up; the states map as the kernel's do;
 *  - a block at or over it is one record (start, end, pid, tid, state,
 *    waker, stack ids) in the CPU's bpf-output event; without an output
 *    event it is counted as refused and summed instead;
 *  - dead tasks and the idle task are not measured; a block without its
 *    switch-out is not counted; agg_gen picks the sum map;
 *  - a task that switches out again with its block open (its switch-in
 *    went unseen) ends that block where it started running: its CPU time
 *    since the block's switch-out before now, as a sum or a record;
 *  - a pid target list keeps other processes out.
 * Needs root (CAP_BPF, CAP_PERFMON); skipped otherwise (failed under CI).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#ifdef PERFREC_HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "recorder/bpf/bpf_abi.h"
#include "offcpu.skel.h"

#define MS 1000000ull

static struct offcpu_bpf *load(__u32 mode, __u32 target)
{
	struct offcpu_bpf *oc = offcpu_bpf__open();
	struct bpf_program *p;
	__u8 one = 1;

	if (!oc)
		return NULL;
	bpf_object__for_each_program(p, oc->obj)
		bpf_program__set_autoload(p, false);
	bpf_program__set_autoload(oc->progs.offcpu_test, true);
	oc->rodata->threshold_ns = MS;
	oc->rodata->target_mode = mode;
	if (offcpu_bpf__load(oc)) {
		offcpu_bpf__destroy(oc);
		return NULL;
	}
	if (mode != REC_OFFCPU_ALL)
		bpf_map_update_elem(bpf_map__fd(oc->maps.targets), &target, &one, BPF_ANY);
	return oc;
}

static struct offcpu_bpf *need(__u32 mode, __u32 target)
{
	struct offcpu_bpf *oc;

	if (geteuid()) {
		if (getenv("CI") && *getenv("CI"))
			fail_msg("CI runs as root: BPF should load");
		fprintf(stderr, "test_offcpu_prog: needs root (CAP_BPF), skipping\n");
		skip();
	}
	oc = load(mode, target);
	if (!oc)
		fail_msg("the off-CPU program did not load: %s", strerror(errno));
	return oc;
}

/* One call of the program on cpu 0; cpu_ns: a switch-out's CPU time. */
static void run_cpu(struct offcpu_bpf *oc, __u64 op, __u64 tid, __u64 pid, __u64 raw,
		    __u64 now, __u64 cpu_ns)
{
	__u64 args[6] = { op, tid, pid, raw, now, cpu_ns };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = args, .ctx_size_in = sizeof(args),
		    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = 0);

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(oc->progs.offcpu_test), &o), 0);
}

/* The same, CPU time not known (the raw_tp program's case). */
static void run(struct offcpu_bpf *oc, __u64 op, __u64 tid, __u64 pid, __u64 raw, __u64 now)
{
	run_cpu(oc, op, tid, pid, raw, now, 0);
}

static void block(struct offcpu_bpf *oc, __u32 tid, __u32 pid, __u32 raw, __u64 at, __u64 ns)
{
	run(oc, REC_OFFCPU_TEST_OUT, tid, pid, raw, at);
	run(oc, REC_OFFCPU_TEST_IN, tid, 0, 0, at + ns);
}

/* The sum of (tid, state) in map m; 0 when none. */
static struct rec_offcpu_val sum_of(struct bpf_map *m, __u32 tid, __u32 state, size_t *keys)
{
	struct rec_offcpu_key k, *prev = NULL, cur;
	struct rec_offcpu_val v, total = { 0, 0 };
	int fd = bpf_map__fd(m);

	*keys = 0;
	while (bpf_map_get_next_key(fd, prev, &k) == 0) {
		cur = k;
		prev = &cur;
		if (k.tid != tid || k.state != state)
			continue;
		assert_int_equal(bpf_map_lookup_elem(fd, &k, &v), 0);
		total.ns += v.ns;
		total.count += v.count;
		(*keys)++;
	}
	return total;
}

/* Whether the keys of tid in m have pairwise different stacks. */
static int distinct_stacks(struct bpf_map *m, __u32 tid)
{
	struct rec_offcpu_key k, *prev = NULL, cur, seen[8];
	int fd = bpf_map__fd(m), n = 0;

	while (bpf_map_get_next_key(fd, prev, &k) == 0 && n < 8) {
		cur = k;
		prev = &cur;
		if (k.tid != tid)
			continue;
		for (int i = 0; i < n; i++)
			if (seen[i].kstack == k.kstack && seen[i].ustack == k.ustack)
				return 0;
		seen[n++] = k;
	}
	return 1;
}

static void sums(void **state)
{
	struct offcpu_bpf *oc = need(REC_OFFCPU_ALL, 0);
	struct rec_offcpu_val v;
	size_t keys;

	(void)state;
	/* one call site: the same user stack (with frame pointers the
	 * caller's return address is part of it) */
	for (int i = 0; i < 2; i++)
		block(oc, 1234, 1200, REC_TASK_INTERRUPTIBLE, i ? 2000000 : 1000,
		      i ? 300000 : 500000);
	v = sum_of(oc->maps.agg0, 1234, REC_OFFCPU_SLEEPING, &keys);
	assert_true(v.ns == 800000 && v.count == 2);
	/* one key, unless the two user stacks differ (without frame
	 * pointers the kernel's walk reads whatever rbp held) */
	assert_true(keys == 1 || distinct_stacks(oc->maps.agg0, 1234));
	/* states */
	block(oc, 1235, 1200, REC_TASK_UNINTERRUPTIBLE, 0, 100);
	block(oc, 1236, 1200, REC_TASK_UNINTERRUPTIBLE | REC_TASK_NOLOAD, 0, 100);
	block(oc, 1237, 1200, 0, 0, 100);
	block(oc, 1238, 1200, REC_TASK_STOPPED, 0, 100);
	assert_true(sum_of(oc->maps.agg0, 1235, REC_OFFCPU_DISK, &keys).count == 1);
	assert_true(sum_of(oc->maps.agg0, 1236, REC_OFFCPU_IDLE, &keys).count == 1);
	assert_true(sum_of(oc->maps.agg0, 1237, REC_OFFCPU_RUNNABLE, &keys).count == 1);
	assert_true(sum_of(oc->maps.agg0, 1238, REC_OFFCPU_STOPPED, &keys).count == 1);
	/* not measured: a dying task, the idle task, a switch-in alone */
	block(oc, 1239, 1200, REC_TASK_DEAD, 0, 100);
	block(oc, 0, 0, REC_TASK_INTERRUPTIBLE, 0, 100);
	run(oc, REC_OFFCPU_TEST_IN, 1240, 0, 0, 5000);
	sum_of(oc->maps.agg0, 1239, REC_OFFCPU_OTHER, &keys);
	v = sum_of(oc->maps.agg0, 1239, REC_OFFCPU_SLEEPING, &keys);
	assert_int_equal(v.count, 0);
	assert_int_equal(sum_of(oc->maps.agg0, 0, REC_OFFCPU_SLEEPING, &keys).count, 0);
	assert_int_equal(sum_of(oc->maps.agg0, 1240, REC_OFFCPU_UNKNOWN, &keys).count, 0);
	/* the other map once agg_gen says so */
	oc->bss->agg_gen = 1;
	block(oc, 1234, 1200, REC_TASK_INTERRUPTIBLE, 9000000, 1000);
	assert_true(sum_of(oc->maps.agg1, 1234, REC_OFFCPU_SLEEPING, &keys).ns == 1000);
	assert_true(sum_of(oc->maps.agg0, 1234, REC_OFFCPU_SLEEPING, &keys).ns == 800000);
	/* over the threshold without an output event: refused, then summed */
	assert_true(oc->bss->counts.output_dropped == 0);
	block(oc, 1241, 1200, REC_TASK_INTERRUPTIBLE, 0, 5 * MS);
	assert_true(oc->bss->counts.output_dropped == 1);
	assert_true(sum_of(oc->maps.agg1, 1241, REC_OFFCPU_SLEEPING, &keys).ns == 5 * MS);
	assert_true(oc->bss->counts.map_full == 0 && oc->bss->counts.stack_lost == 0);
	offcpu_bpf__destroy(oc);
}

/* Switched out at 1000 after 7000 ns of CPU; switched in unseen; out again
 * at 600000 after 100000 ns more: that block ended at 500000. */
static void unseen_switch_in(void **state)
{
	struct offcpu_bpf *oc = need(REC_OFFCPU_ALL, 0);
	struct rec_offcpu_val v;
	size_t keys;

	(void)state;
	run_cpu(oc, REC_OFFCPU_TEST_OUT, 2001, 2000, REC_TASK_INTERRUPTIBLE, 1000, 7000);
	run_cpu(oc, REC_OFFCPU_TEST_OUT, 2001, 2000, REC_TASK_INTERRUPTIBLE, 600000, 107000);
	v = sum_of(oc->maps.agg0, 2001, REC_OFFCPU_SLEEPING, &keys);
	assert_int_equal(v.count, 1);
	assert_int_equal(v.ns, 499000);
	/* the second block is open, and ends as usual */
	run(oc, REC_OFFCPU_TEST_IN, 2001, 0, 0, 700000);
	v = sum_of(oc->maps.agg0, 2001, REC_OFFCPU_SLEEPING, &keys);
	assert_int_equal(v.count, 2);
	assert_int_equal(v.ns, 599000);
	/* CPU time that says it ran longer than the block: an empty block */
	run_cpu(oc, REC_OFFCPU_TEST_OUT, 2002, 2000, REC_TASK_INTERRUPTIBLE, 1000, 7000);
	run_cpu(oc, REC_OFFCPU_TEST_OUT, 2002, 2000, REC_TASK_INTERRUPTIBLE, 2000, 9000);
	v = sum_of(oc->maps.agg0, 2002, REC_OFFCPU_SLEEPING, &keys);
	assert_true(v.count == 1 && v.ns == 0);
	assert_true(oc->bss->counts.map_full == 0 && oc->bss->counts.output_dropped == 0);
	offcpu_bpf__destroy(oc);
}

static void records(void **state)
{
	struct offcpu_bpf *oc = need(REC_OFFCPU_ALL, 0);
	struct perf_event_attr a;
	long page = sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *mp;
	unsigned char *data;
	struct rec_offcpu_rec r;
	__u32 cpu = 0;
	int fd, efd;
	size_t keys;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_BPF_OUTPUT;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_RAW;
	a.wakeup_events = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, 0);
	assert_true(fd >= 0);
	mp = mmap(NULL, (size_t)page * 9, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(mp != MAP_FAILED);
	efd = bpf_map__fd(oc->maps.events);
	assert_int_equal(bpf_map_update_elem(efd, &cpu, &fd, BPF_ANY), 0);

	run(oc, REC_OFFCPU_TEST_OUT, 4321, 4300, REC_TASK_UNINTERRUPTIBLE, 7 * MS);
	run(oc, REC_OFFCPU_TEST_WAKE, 4321, 99, 98, 0);
	run(oc, REC_OFFCPU_TEST_IN, 4321, 0, 0, 10 * MS);   /* 3 ms: a record */
	block(oc, 4322, 4300, REC_TASK_INTERRUPTIBLE, 0, MS);   /* exactly: one too */
	/* switched in unseen after 20 ms, ran 2 ms: [20, 28] ms */
	run_cpu(oc, REC_OFFCPU_TEST_OUT, 4323, 4300, REC_TASK_INTERRUPTIBLE, 20 * MS, MS);
	run_cpu(oc, REC_OFFCPU_TEST_OUT, 4323, 4300, REC_TASK_INTERRUPTIBLE, 30 * MS, 3 * MS);
	assert_true(oc->bss->counts.output_dropped == 0);
	assert_int_equal(sum_of(oc->maps.agg0, 4321, REC_OFFCPU_DISK, &keys).count, 0);

	/* the ring: three samples, each u32 size + the record (+ padding) */
	data = (unsigned char *)mp + page;
	__sync_synchronize();
	assert_true(mp->data_head >= 3 * (8 + 4 + sizeof(r)));
	{
		struct perf_event_header h;
		size_t off = 0;
		int n = 0;

		while (off < mp->data_head) {
			__u32 size;

			memcpy(&h, data + off, sizeof(h));
			assert_int_equal(h.type, PERF_RECORD_SAMPLE);
			memcpy(&size, data + off + sizeof(h), 4);
			assert_true(size >= sizeof(r));
			memcpy(&r, data + off + sizeof(h) + 4, sizeof(r));
			assert_int_equal(r.magic, REC_OFFCPU_MAGIC);
			assert_int_equal(r.pid, 4300);
			if (n == 0) {
				assert_int_equal(r.tid, 4321);
				assert_int_equal(r.state, REC_OFFCPU_DISK);
				assert_true(r.start == 7 * MS && r.end == 10 * MS);
				assert_int_equal(r.waker_pid, 99);
				assert_int_equal(r.waker_tid, 98);
				assert_true(r.kstack >= 0);
			} else if (n == 1) {
				assert_int_equal(r.tid, 4322);
				assert_true(r.end - r.start == MS);
				assert_int_equal(r.waker_tid, 0);
			} else {
				assert_int_equal(r.tid, 4323);
				assert_true(r.start == 20 * MS && r.end == 28 * MS);
			}
			n++;
			off += h.size;
		}
		assert_int_equal(n, 3);
	}
	munmap(mp, (size_t)page * 9);
	close(fd);
	offcpu_bpf__destroy(oc);
}

static void targets(void **state)
{
	struct offcpu_bpf *oc = need(REC_OFFCPU_BY_PID, 500);
	size_t keys;

	(void)state;
	block(oc, 501, 500, REC_TASK_INTERRUPTIBLE, 0, 1000);
	block(oc, 601, 600, REC_TASK_INTERRUPTIBLE, 0, 1000);
	assert_int_equal(sum_of(oc->maps.agg0, 501, REC_OFFCPU_SLEEPING, &keys).count, 1);
	assert_int_equal(sum_of(oc->maps.agg0, 601, REC_OFFCPU_SLEEPING, &keys).count, 0);
	offcpu_bpf__destroy(oc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sums),
		cmocka_unit_test(records),
		cmocka_unit_test(unseen_switch_in),
		cmocka_unit_test(targets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
static void built_without_bpf(void **state)
{
	(void)state;
	skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(built_without_bpf) };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
