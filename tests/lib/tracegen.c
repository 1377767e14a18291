/*
 * tracegen.c - the golden trace.
 *
 * Timeline (ms after TRACEGEN_START_NS; CPU-wide switch records: at each
 * switch, a switch-out record for prev then a switch-in record for next,
 * same time; tid 0 is the idle task):
 *
 *   CPU0:  0 idle->100   10 100->idle   12 idle->101   20 101->200 (101
 *          preempted)   30 200->100   40 100->idle   50 idle->101
 *          60 101->idle
 *   CPU1:  5 200->idle (first record of 200: it ran since the start)
 *          35 idle->101   45 101->idle (preempted)   55 idle->100
 *          70 100->idle
 *
 * Tasks: pid 100 "pingpong" (EXISTING), tid 101 forked from 100 at 1 ms
 * (thread of pid 100, inherits "pingpong"), renamed "pong" by a COMM at
 * 25 ms; pid 200 "bash" (EXISTING). The FORK/COMM packets are written to
 * CPU1's stream so a reader must collect names before aggregating.
 *
 * Samples: cpu-clock, period 1000000, at every tick k + 0.5 ms (k = 0..69)
 * for the non-idle task on each CPU. Leaves and chains:
 *   tid 100, k even: ping+0x10  <- main+0x20                       (user)
 *   tid 100, k odd:  schedule+0x10 <- do_syscall_64+0x20 (kernel)
 *                    <- write+0x10 (libc) <- ping+0x30 <- main+0x20
 *   tid 101, k % 3 != 0: pong+0x10 <- main+0x40
 *   tid 101, k % 3 == 0: read+0x10 (libc) <- pong+0x20 <- main+0x40
 *   tid 200: 0x500123 in /usr/bin/bash (no symbol table), no chain
 * Plus two page-faults samples (period 1) for tid 100 at 3.2 and 33.2 ms,
 * ip main+0x50, no chain.
 *
 * Counting group 0 "{task-clock,context-switches}" on both CPUs,
 * snapshots at 20, 40, 60 ms and a final one at 70 ms (CPU0's 1 ms earlier
 * with skew_reads: the same values); CPU1 ran half the
 * enabled time (multiplexed, scale x2). Group 1 "{cycles}" was enabled but
 * never ran (time_running 0: "not counted", as on a VM without a PMU). A KERNEL_LOST of 5 records on CPU1
 * at 36 ms. SessionEnd at 70 ms.
 *
 * With repeat > 1 the timeline is written again shifted by 100 ms per
 * copy with tids + 1000 * copy (for load and parallel tests).
 *
 * With offcpu (record --off-cpu --filter 'pid=100,101'): cpu-clock carries
 * that filter, event 5 is the bpf-output event (threshold 1 ms), and the
 * off-CPU program's data follow the timeline of each copy:
 *   intervals: tid 100 10-30 ms sleeping (ends on CPU0, woken by 101),
 *     40-55 ms disk (CPU1), both at schedule+0x10 <- do_syscall_64+0x20
 *     <- write+0x10 <- ping+0x30 <- main+0x20;
 *     tid 101 20-35 ms runnable (CPU1) at schedule+0x10 <- pong+0x20
 *     <- main+0x40;
 *   sums at 60 ms: tid 101 50 blocks, 5 ms sleeping at schedule+0x10 <-
 *     do_syscall_64+0x20 <- read+0x10 <- pong+0x20 <- main+0x40; tid 200
 *     10 blocks, 2 ms sleeping, no stack;
 *   a BPF_STACK_LOST of 1 at 60 ms; Filtered: cpu-clock 12 dropped, 80
 *     kept at 70 ms.
 * Off-CPU per task: 100: 35 ms, 101: 20 ms, 200: 2 ms (57 ms in all).
 */
#define _POSIX_C_SOURCE 200809L
#include "lib/tracegen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/sink.h"
#include "format/writer.h"
#include "perfrec.pb-c.h"

#define MS 1000000ull
#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)

/* Symbol addresses (non-PIE binary at 0x400000; libc at 0x7f0000000000
 * with its symbols file-relative; kernel absolute). */
#define A_MAIN 0x401000ull
#define A_PING 0x401100ull
#define A_PONG 0x401200ull
#define LIBC_BASE 0x7f0000000000ull
#define A_READ (LIBC_BASE + 0x1000)
#define A_WRITE (LIBC_BASE + 0x1100)
#define K_SCHED 0xffffffff81000000ull
#define K_SYSCALL 0xffffffff81000200ull

struct sw {
	unsigned ms, cpu, prev, next, preempt;
};

static const struct sw switches[] = {
	{ 0, 0, 0, 100, 0 }, { 5, 1, 200, 0, 0 }, { 10, 0, 100, 0, 0 },
	{ 12, 0, 0, 101, 0 }, { 20, 0, 101, 200, 1 }, { 30, 0, 200, 100, 0 },
	{ 35, 1, 0, 101, 0 }, { 40, 0, 100, 0, 0 }, { 45, 1, 101, 0, 1 },
	{ 50, 0, 0, 101, 0 }, { 55, 1, 0, 100, 0 }, { 60, 0, 101, 0, 0 },
	{ 70, 1, 100, 0, 0 },
};

struct gen {
	struct prec_writer *w;
	int err;
	int hostile;      /* TRACEGEN_HOSTILE_* names */
	int offcpu;       /* the --off-cpu / --filter data */
	int skew_reads;   /* tracegen_opts.skew_reads */
	int by_kind;      /* CPU streams' packets by kind (tracegen.h) */
	uint32_t shift;   /* tid offset of the current copy */
	uint64_t base;    /* time offset of the current copy */
	const char *host;
	uint64_t offset;  /* tracegen_opts.offset_ns */
};

static const char *bin_path(const struct gen *g)
{
	return g->hostile ? TRACEGEN_HOSTILE_PATH : "/usr/bin/pingpong";
}

static uint32_t pid_of(uint32_t tid)
{
	return tid == 101 ? 100 : tid;
}

/* The stream a packet of `kind` meant for `stream` goes to. */
static uint32_t route(const struct gen *g, uint32_t stream, int kind)
{
	if (!g->by_kind || !stream)
		return stream;
	if (kind == PERFREC__PACKET__DATA_SAMPLE)
		return 1;
	if (kind == PERFREC__PACKET__DATA_CONTEXT_SWITCH || kind == PERFREC__PACKET__DATA_OFF_CPU)
		return 2;
	return 3;
}

static void append(struct gen *g, uint32_t stream, Perfrec__Packet *p, uint64_t t)
{
	if (g->err)
		return;
	int ret = prec_writer_append(g->w, route(g, stream, p->data_case), p, t);
	if (ret < 0)
		g->err = ret;
}

/* An iid for s in the frame of the packet of `kind` on `stream`. */
static uint64_t str(struct gen *g, uint32_t stream, int kind, const char *s)
{
	uint64_t iid = prec_writer_intern_string(g->w, route(g, stream, kind), s);
	if (!iid && !g->err)
		g->err = prec_writer_error(g->w);
	return iid;
}

static void header(struct gen *g, int repeat)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__FileHeader h = PERFREC__FILE_HEADER__INIT;
	static char *cmdline[] = { "perfrec", "record", "-a", "--switch-events",
				   "--counters", "{task-clock,context-switches}" };
	h.recorder_version = g->hostile ? "tracegen 1" TRACEGEN_HOSTILE_CTRL : "tracegen 1";
	h.hostname = g->hostile ? TRACEGEN_HOSTILE_HOST : g->host ? (char *)g->host : "golden-host";
	h.kernel_release = "6.1.0-golden";
	h.kernel_version = g->hostile ? TRACEGEN_HOSTILE_CTRL : "#1 SMP";
	h.machine = "x86_64";
	h.cpus_online = 2;
	h.cpus_configured = 2;
	h.page_size = 4096;
	h.realtime_ns = 1700000000000000000ull;
	h.monotonic_ns = TRACEGEN_START_NS;
	h.n_cmdline = 6;
	h.cmdline = cmdline;
	h.start_time = TRACEGEN_START_NS + g->offset;
	h.target = "system-wide";
	h.cpu_model = "Golden CPU @ 1.00GHz";
	h.mem_total = 8ull << 30;
	h.perf_event_paranoid = -1;
	(void)repeat;
	p.data_case = PERFREC__PACKET__DATA_HEADER;
	p.header = &h;
	append(g, 0, &p, 0);
}

static void event(struct gen *g, uint32_t index, const char *name, uint32_t type,
		  uint64_t config, int sampling, uint64_t period, int32_t group,
		  uint32_t member, uint64_t id0)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__EventDesc e = PERFREC__EVENT_DESC__INIT;
	uint64_t ids[2] = { id0, id0 + 1 };
	int32_t cpus[2] = { 0, 1 }, pids[2] = { -1, -1 };
	e.index = index;
	e.name = (char *)name;
	e.type = type;
	e.config = config;
	e.sample_period = period;
	e.sampling = sampling;
	e.group = group;
	e.member = member;
	e.n_ids = 2;
	e.ids = ids;
	e.n_cpus = 2;
	e.cpus = cpus;
	e.n_pids = 2;
	e.pids = pids;
	e.clockid = 1;
	if (g->offcpu && index == 0)
		e.filter = "pid=100,101";
	if (g->offcpu && index == 5) {
		e.bpf_output = 1;
		e.off_cpu_threshold = MS;
	}
	p.data_case = PERFREC__PACKET__DATA_EVENT;
	p.event = &e;
	append(g, 0, &p, 0);
}

static void metadata(struct gen *g)
{
	/* software events: type 1, configs as in perf_event.h */
	event(g, 0, "cpu-clock", 1, 0, 1, 1000000, -1, 0, 101);
	if (g->offcpu)   /* PERF_COUNT_SW_BPF_OUTPUT */
		event(g, 5, "bpf-output", 1, 10, 0, 1, -1, 0, 501);
	event(g, 1, g->hostile ? TRACEGEN_HOSTILE_EVENT : "page-faults", 1, 2, 1, 1, -1, 0, 111);
	event(g, 2, "task-clock", 1, 1, 0, 0, 0, 0, 201);
	event(g, 3, "context-switches", 1, 3, 0, 0, 0, 1, 301);
	/* a hardware counter the (virtual) PMU never scheduled */
	event(g, 4, "cycles", 0, 0, 0, 0, 1, 0, 401);
	static const uint32_t m0[2] = { 2, 3 }, m1[1] = { 4 };
	static const char *const names[2] = { "{task-clock,context-switches}", "{cycles}" };
	for (uint32_t i = 0; i < 2; i++) {
		Perfrec__Packet p = PERFREC__PACKET__INIT;
		Perfrec__GroupDesc gd = PERFREC__GROUP_DESC__INIT;
		gd.index = i;
		gd.name = (char *)names[i];
		gd.n_events = i ? 1 : 2;
		gd.events = (uint32_t *)(i ? m1 : m0);
		gd.counting = 1;
		gd.interval_ns = 20 * MS;
		p.data_case = PERFREC__PACKET__DATA_GROUP_DESC;
		p.group_desc = &gd;
		append(g, 0, &p, 0);
	}

	Perfrec__Packet np = PERFREC__PACKET__INIT;
	Perfrec__Note note = PERFREC__NOTE__INIT;
	note.level = PERFREC__NOTE__LEVEL__INFO;
	note.text = g->hostile ? TRACEGEN_HOSTILE_CTRL :
		    "golden trace written by tests/lib/tracegen";
	np.data_case = PERFREC__PACKET__DATA_NOTE;
	np.note = &note;
	append(g, 0, &np, 0);
}

static void symtab(struct gen *g, int kind, const char *path, uint64_t bias,
		   const uint64_t *starts, const uint64_t *sizes,
		   const char *const *names, size_t n)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__SymbolTable t = PERFREC__SYMBOL_TABLE__INIT;
	uint64_t d[8], iids[8];
	for (size_t i = 0; i < n; i++) {
		d[i] = i ? starts[i] - starts[i - 1] : starts[0];
		iids[i] = str(g, 0, PERFREC__PACKET__DATA_SYMBOLS, names[i]);
	}
	t.kind = kind;
	t.path = (char *)path;
	t.load_bias = bias;
	t.n_starts = n;
	t.starts = d;
	t.n_sizes = n;
	t.sizes = (uint64_t *)sizes;
	t.n_names = n;
	t.names = iids;
	p.data_case = PERFREC__PACKET__DATA_SYMBOLS;
	p.symbols = &t;
	append(g, 0, &p, 0);
}

static void symbols(struct gen *g)
{
	static const uint64_t s1[] = { A_MAIN, A_PING, A_PONG }, z1[] = { 0x100, 0x100, 0x100 };
	const char *const n1[] = { "main", g->hostile ? TRACEGEN_HOSTILE_SYM : "ping",
				   g->hostile ? TRACEGEN_HOSTILE_CTRL : "pong" };
	static const uint64_t s2[] = { 0x1000, 0x1100 }, z2[] = { 0x100, 0x100 };
	static const char *const n2[] = { "read", "write" };
	static const uint64_t s3[] = { K_SCHED, K_SYSCALL }, z3[] = { 0x200, 0x200 };
	static const char *const n3[] = { "schedule", "do_syscall_64" };
	symtab(g, PERFREC__SYMBOL_TABLE__KIND__ELF, bin_path(g), 0x400000, s1, z1, n1, 3);
	symtab(g, PERFREC__SYMBOL_TABLE__KIND__ELF, "/usr/lib/libc.so.6", 0, s2, z2, n2, 2);
	symtab(g, PERFREC__SYMBOL_TABLE__KIND__KERNEL, "", 0, s3, z3, n3, 2);
}

static void task(struct gen *g, uint32_t stream, uint64_t t, int kind,
		 uint32_t pid, uint32_t tid, uint32_t ppid, uint32_t ptid,
		 const char *comm)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__TaskEvent e = PERFREC__TASK_EVENT__INIT;
	e.kind = kind;
	e.pid = pid;
	e.tid = tid;
	e.ppid = ppid;
	e.ptid = ptid;
	e.comm = comm ? str(g, stream, PERFREC__PACKET__DATA_TASK, comm) : 0;
	p.data_case = PERFREC__PACKET__DATA_TASK;
	p.task = &e;
	append(g, stream, &p, t);
}

static void mmap_(struct gen *g, uint64_t t, uint32_t pid, uint64_t start,
		  uint64_t len, const char *file)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__Mmap m = PERFREC__MMAP__INIT;
	m.pid = pid;
	m.tid = pid;
	m.start = start;
	m.len = len;
	m.prot = 5;
	m.filename = str(g, 0, PERFREC__PACKET__DATA_MMAP, file);
	m.synthesized = 1;
	p.data_case = PERFREC__PACKET__DATA_MMAP;
	p.mmap = &m;
	append(g, 0, &p, t);
}

static void cswitch(struct gen *g, uint64_t t, uint32_t cpu, uint32_t tid,
		    int out, int preempt, uint32_t other)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__ContextSwitch c = PERFREC__CONTEXT_SWITCH__INIT;
	c.id = 101 + cpu;
	c.cpu = cpu;
	c.pid = tid ? pid_of(tid - g->shift) + g->shift : 0;
	c.tid = tid;
	c.out = out;
	c.preempt = preempt;
	c.cpu_wide = 1;
	c.other_pid = other ? pid_of(other - g->shift) + g->shift : 0;
	c.other_tid = other;
	p.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
	p.context_switch = &c;
	append(g, 1 + cpu, &p, t);
}

static void sample(struct gen *g, uint64_t t, uint32_t cpu, uint32_t tid,
		   uint64_t id, uint64_t period, uint64_t ip, int kernel,
		   const uint64_t *chain, size_t n)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__Sample s = PERFREC__SAMPLE__INIT;
	s.id = id;
	s.cpu = cpu;
	s.pid = pid_of(tid - g->shift) + g->shift;
	s.tid = tid;
	s.ip = ip;
	s.period = period;
	s.misc = kernel ? 1 : 2;
	if (n) {
		s.callchain = prec_writer_intern_callchain(
			g->w, route(g, 1 + cpu, PERFREC__PACKET__DATA_SAMPLE), chain, n);
		if (!s.callchain && !g->err)
			g->err = -ENOMEM;
	}
	p.data_case = PERFREC__PACKET__DATA_SAMPLE;
	p.sample = &s;
	append(g, 1 + cpu, &p, t);
}

static void offcpu(struct gen *g, uint64_t t, uint32_t cpu, uint32_t tid, int state,
		   uint64_t ns, uint64_t count, uint32_t waker, const uint64_t *chain,
		   size_t n)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__OffCpu o = PERFREC__OFF_CPU__INIT;
	uint32_t stream = count ? 0 : 1 + cpu;
	o.cpu = count ? 0 : cpu;
	o.tid = tid + g->shift;
	o.pid = pid_of(tid) + g->shift;
	o.state = (Perfrec__OffCpu__State)state;
	o.duration = ns;
	o.count = count;
	if (waker) {
		o.waker_tid = waker + g->shift;
		o.waker_pid = pid_of(waker) + g->shift;
	}
	if (n) {
		o.callchain = prec_writer_intern_callchain(
			g->w, route(g, stream, PERFREC__PACKET__DATA_OFF_CPU), chain, n);
		if (!o.callchain && !g->err)
			g->err = -ENOMEM;
	}
	p.data_case = PERFREC__PACKET__DATA_OFF_CPU;
	p.off_cpu = &o;
	append(g, stream, &p, t);
}

/* The off-CPU and filter data of one copy (see the top of the file). */
static void offcpu_data(struct gen *g)
{
	uint64_t T = TRACEGEN_START_NS + g->base;
	static const uint64_t w[] = { CTX_KERNEL, K_SCHED + 0x10, K_SYSCALL + 0x20, CTX_USER,
				      A_WRITE + 0x10, A_PING + 0x30, A_MAIN + 0x20 };
	static const uint64_t pr[] = { CTX_KERNEL, K_SCHED + 0x10, CTX_USER,
				       A_PONG + 0x20, A_MAIN + 0x40 };
	static const uint64_t rd[] = { CTX_KERNEL, K_SCHED + 0x10, K_SYSCALL + 0x20, CTX_USER,
				       A_READ + 0x10, A_PONG + 0x20, A_MAIN + 0x40 };
	offcpu(g, T + 30 * MS, 0, 100, PERFREC__OFF_CPU__STATE__SLEEPING, 20 * MS, 0, 101, w, 7);
	offcpu(g, T + 35 * MS, 1, 101, PERFREC__OFF_CPU__STATE__RUNNABLE, 15 * MS, 0, 0, pr, 5);
	offcpu(g, T + 55 * MS, 1, 100, PERFREC__OFF_CPU__STATE__DISK, 15 * MS, 0, 0, w, 7);
	offcpu(g, T + 60 * MS, 0, 101, PERFREC__OFF_CPU__STATE__SLEEPING, 5 * MS, 50, 0, rd, 7);
	offcpu(g, T + 60 * MS, 0, 200, PERFREC__OFF_CPU__STATE__SLEEPING, 2 * MS, 10, 0, NULL, 0);
	{
		Perfrec__Packet p = PERFREC__PACKET__INIT;
		Perfrec__Loss l = PERFREC__LOSS__INIT;
		l.kind = PERFREC__LOSS__KIND__BPF_STACK_LOST;
		l.count = 1;
		l.reason = "off-CPU: stacks the stack map could not store";
		p.data_case = PERFREC__PACKET__DATA_LOSS;
		p.loss = &l;
		append(g, 0, &p, T + 60 * MS);
	}
	{
		Perfrec__Packet p = PERFREC__PACKET__INIT;
		Perfrec__Filtered f = PERFREC__FILTERED__INIT;
		f.event = 0;
		f.dropped = 12;
		f.kept = 80;
		p.data_case = PERFREC__PACKET__DATA_FILTERED;
		p.filtered = &f;
		append(g, 0, &p, T + 70 * MS);
	}
}

static void tick_sample(struct gen *g, uint64_t t, uint32_t cpu, uint32_t task, unsigned k)
{
	uint32_t tid = task + g->shift;
	if (task == 100 && k % 2 == 0) {
		uint64_t c[] = { CTX_USER, A_PING + 0x10, A_MAIN + 0x20 };
		sample(g, t, cpu, tid, 101 + cpu, 1000000, A_PING + 0x10, 0, c, 3);
	} else if (task == 100) {
		uint64_t c[] = { CTX_KERNEL, K_SCHED + 0x10, K_SYSCALL + 0x20, CTX_USER,
				 A_WRITE + 0x10, A_PING + 0x30, A_MAIN + 0x20 };
		sample(g, t, cpu, tid, 101 + cpu, 1000000, K_SCHED + 0x10, 1, c, 7);
	} else if (task == 101 && k % 3 != 0) {
		uint64_t c[] = { CTX_USER, A_PONG + 0x10, A_MAIN + 0x40 };
		sample(g, t, cpu, tid, 101 + cpu, 1000000, A_PONG + 0x10, 0, c, 3);
	} else if (task == 101) {
		uint64_t c[] = { CTX_USER, A_READ + 0x10, A_PONG + 0x20, A_MAIN + 0x40 };
		sample(g, t, cpu, tid, 101 + cpu, 1000000, A_READ + 0x10, 0, c, 4);
	} else {
		sample(g, t, cpu, tid, 101 + cpu, 1000000, 0x500123, 0, NULL, 0);
	}
}

/* group 0: CPU1 ran half the enabled time; group 1 never ran */
static void snapshot(struct gen *g, uint64_t t, int cpu, uint32_t group,
		     uint64_t tc, uint64_t cs, int final)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__GroupSnapshot s = PERFREC__GROUP_SNAPSHOT__INIT;
	Perfrec__GroupRead r = PERFREC__GROUP_READ__INIT;
	uint64_t ids[2] = { 201 + (uint64_t)cpu, 301 + (uint64_t)cpu };
	uint64_t vals[2] = { tc, cs };
	uint64_t en = t - g->base - TRACEGEN_START_NS;
	r.time_enabled = en;
	r.time_running = group ? 0 : cpu ? en / 2 : en;
	r.n_ids = group ? 1 : 2;
	r.ids = ids;
	r.n_values = r.n_ids;
	r.values = vals;
	if (group) {
		ids[0] = 401 + (uint64_t)cpu;
		vals[0] = 0;
	}
	s.group = group;
	s.cpu = cpu;
	s.pid = -1;
	s.read = &r;
	s.final = final;
	p.data_case = PERFREC__PACKET__DATA_GROUP;
	p.group = &s;
	append(g, 0, &p, t);
}

/* Which task runs on cpu during [ms, ms + 1): from the switch table. */
static uint32_t running(unsigned cpu, unsigned ms)
{
	uint32_t cur = cpu == 1 ? 200 : 0;   /* 200 ran on CPU1 before 5 ms */
	for (size_t i = 0; i < sizeof(switches) / sizeof(switches[0]); i++)
		if (switches[i].cpu == cpu && switches[i].ms <= ms)
			cur = switches[i].next;
	return cur;
}

static void timeline(struct gen *g)
{
	uint64_t T = TRACEGEN_START_NS + g->base;
	uint32_t sh = g->shift;
	/* Tasks and maps known at the start (synthesized from /proc). */
	task(g, 1, T, PERFREC__TASK_EVENT__KIND__EXISTING, 100 + sh, 100 + sh, 0, 0, "pingpong");
	task(g, 1, T, PERFREC__TASK_EVENT__KIND__EXISTING, 200 + sh, 200 + sh, 0, 0,
	     g->hostile ? TRACEGEN_HOSTILE_COMM : "bash");
	mmap_(g, T, 100 + sh, 0x400000, 0x2000, bin_path(g));
	mmap_(g, T, 100 + sh, LIBC_BASE, 0x200000, "/usr/lib/libc.so.6");
	mmap_(g, T, 200 + sh, 0x500000, 0x1000, "/usr/bin/bash");

	size_t si = 0, nsw = sizeof(switches) / sizeof(switches[0]);
	static const uint64_t tc[2][4] = { { 18 * MS, 38 * MS, 48 * MS, 48 * MS },
					   { 5 * MS, 10 * MS, 20 * MS, 30 * MS } };
	static const uint64_t cs[2][4] = { { 3, 5, 7, 8 }, { 1, 2, 4, 5 } };
	/* Walk time in 0.1 ms steps so every kind lands in order. */
	for (unsigned d = 0; d <= 700 && !g->err; d++) {
		uint64_t t = T + (uint64_t)d * (MS / 10);
		unsigned ms = d / 10, frac = d % 10;
		if (d && d % 100 == 0 && !g->err) {
			/* every 10 ms: cut all frames (layout independent
			 * of the encoder's sizes) */
			int ret = prec_writer_flush(g->w);
			if (ret < 0)
				g->err = ret;
		}
		if (frac == 0) {
			for (; si < nsw && switches[si].ms == ms; si++) {
				const struct sw *s = &switches[si];
				uint32_t prev = s->prev ? s->prev + sh : 0;
				uint32_t next = s->next ? s->next + sh : 0;
				cswitch(g, t, s->cpu, prev, 1, s->preempt, next);
				cswitch(g, t, s->cpu, next, 0, 0, prev);
			}
			if (ms == 1)
				task(g, 2, t, PERFREC__TASK_EVENT__KIND__FORK, 100 + sh, 101 + sh,
				     100 + sh, 100 + sh, NULL);
			if (ms == 25)
				task(g, 2, t, PERFREC__TASK_EVENT__KIND__COMM, 100 + sh, 101 + sh,
				     0, 0, g->hostile ? TRACEGEN_HOSTILE_CTRL : "pong");
			/* group 0 on both CPUs, then group 1; with skew_reads
			 * CPU0 reads 1 ms before CPU1 */
			for (uint32_t k = 0; k < 2; k++)
				for (int cpu = 0; cpu < 2; cpu++) {
					unsigned at = ms + (g->skew_reads && !cpu);
					if (at != 20 && at != 40 && at != 60 && at != 70)
						continue;
					int i = at == 70 ? 3 : (int)at / 20 - 1;
					snapshot(g, t, cpu, k, k ? 0 : tc[cpu][i],
						 k ? 0 : cs[cpu][i], at == 70);
				}
			if (ms == 36) {
				Perfrec__Packet p = PERFREC__PACKET__INIT;
				Perfrec__Loss l = PERFREC__LOSS__INIT;
				l.kind = PERFREC__LOSS__KIND__KERNEL_LOST;
				l.cpu = 1;
				l.id = 102;
				l.count = 5;
				p.data_case = PERFREC__PACKET__DATA_LOSS;
				p.loss = &l;
				append(g, 2, &p, t);
			}
		}
		if (frac == 2 && (ms == 3 || ms == 33)) {
			uint64_t ip = A_MAIN + 0x50;
			unsigned cpu = ms == 3 ? 0 : 0;
			sample(g, t, cpu, 100 + sh, 111 + cpu, 1, ip, 0, NULL, 0);
		}
		if (frac == 5 && ms < 70) {
			for (unsigned cpu = 0; cpu < 2; cpu++) {
				uint32_t task_ = running(cpu, ms);
				if (task_)
					tick_sample(g, t, cpu, task_, ms);
			}
		}
	}
}

/* opts.split: n samples, the first pct% in ping, the rest in pong. */
static void split_timeline(struct gen *g, int pct, unsigned n, uint64_t period)
{
	uint64_t T = TRACEGEN_START_NS;
	task(g, 1, T, PERFREC__TASK_EVENT__KIND__EXISTING, 100, 100, 0, 0, "pingpong");
	mmap_(g, T, 100, 0x400000, 0x2000, bin_path(g));
	unsigned nping = (unsigned)((uint64_t)n * (unsigned)pct / 100);
	for (unsigned i = 0; i < n && !g->err; i++) {
		uint64_t t = T + (uint64_t)i * MS + MS / 2;
		uint64_t ping[] = { CTX_USER, A_PING + 0x10, A_MAIN + 0x20 };
		uint64_t pong[] = { CTX_USER, A_PONG + 0x10, A_MAIN + 0x40 };
		const uint64_t *c = i < nping ? ping : pong;
		sample(g, t, 0, 100, 101, period, c[1], 0, c, 3);
	}
}

int tracegen_write(const char *path, const struct tracegen_opts *o)
{
	struct tracegen_opts def = TRACEGEN_OPTS_INIT;
	if (!o)
		o = &def;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	struct prec_sink *sink = prec_sink_fd_new(fd, 1);
	if (!sink) {
		close(fd);
		return -ENOMEM;
	}
	struct prec_writer_opts wo = PREC_WRITER_OPTS_INIT;
	wo.frame_size = o->frame_size ? o->frame_size : 1024 * 1024;
	wo.flush_ms = 0;
	wo.write_index = o->write_index;
	struct gen g = { 0 };
	g.hostile = o->hostile;
	g.offcpu = o->offcpu;
	g.skew_reads = o->skew_reads;
	g.by_kind = o->by_kind;
	g.host = o->host;
	g.offset = o->offset_ns;
	g.w = prec_writer_new(sink, &wo);
	if (!g.w) {
		int e = -errno;
		prec_sink_free(sink);
		return e ? e : -ENOMEM;
	}
	header(&g, o->repeat);
	metadata(&g);
	symbols(&g);
	int repeat = o->repeat > 0 ? o->repeat : 1;
	if (o->split > 0 && o->split < 100) {
		unsigned n = o->split_samples > 0 ? (unsigned)o->split_samples : 100;
		split_timeline(&g, o->split, n, o->split_period ? o->split_period : MS);
		repeat = 0;
	}
	for (int r = 0; r < repeat && !g.err; r++) {
		g.shift = (uint32_t)r * 1000;
		g.base = o->offset_ns + (uint64_t)r * 100 * MS;
		timeline(&g);
		if (g.offcpu)
			offcpu_data(&g);
	}
	if (!g.err) {
		Perfrec__Packet p = PERFREC__PACKET__INIT;
		Perfrec__SessionEnd e = PERFREC__SESSION_END__INIT;
		e.end_time = repeat ? TRACEGEN_START_NS + o->offset_ns +
					      (uint64_t)(repeat - 1) * 100 * MS +
					      (uint64_t)(o->rotated ? 100 : 70) * MS
				    : TRACEGEN_START_NS + o->offset_ns +
					      (uint64_t)(o->split_samples > 0 ?
							 o->split_samples : 100) * MS;
		e.samples = 80ull * (uint64_t)repeat;
		e.switches = 26ull * (uint64_t)repeat;
		e.records = 106ull * (uint64_t)repeat;
		e.lost = 5ull * (uint64_t)repeat;
		e.stop_reason = o->rotated ? "rotated" : "duration";
		p.data_case = PERFREC__PACKET__DATA_SESSION_END;
		p.session_end = &e;
		append(&g, 0, &p, e.end_time);
	}
	int ret = g.err;
	int c = prec_writer_close(g.w);
	if (!ret)
		ret = c;
	prec_writer_free(g.w);
	prec_sink_free(sink);
	return ret;
}
