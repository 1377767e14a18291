/*
 * bpf.c - bpf.h with libbpf: loads the off-CPU and sample-filter programs
 * (skeletons generated from offcpu.bpf.c and sfilter.bpf.c at build time),
 * attaches them to the recording's events, and turns their records and
 * maps into packets.
 *
 * Off-CPU sums: the program adds short blocks into agg0 or agg1, the one
 * named by its .bss agg_gen. Each tick drains the map that was switched
 * out at the previous tick (a whole second ago, so no program still
 * writes into it) and then switches maps. The drained sums ended before
 * that previous switch, and carry its time. After stop() (programs
 * detached) the final tick drains both.
 *
 * Stacks: the program stores stacks in a stack map and passes their ids;
 * entries are never deleted while recording, so an id names one stack for
 * good and each is read from the map once (cache by id).
 */
#include "recorder/bpf/bpf.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "format/base/opts.h"
#include "perfrec.pb-c.h"
#include "recorder/bpf/bpf_abi.h"
#include "recorder/bpf/sfilter.h"
#include "recorder/encode/emit.h"
#include "recorder/events/evlist.h"
#include "recorder/log.h"

#include "offcpu.skel.h"
#include "sfilter.skel.h"

#define PERF_CTX_KERNEL ((uint64_t)-128)
#define PERF_CTX_USER ((uint64_t)-512)
#define TICK_NS 1000000000ull
#define NSTACKS 16384            /* the stack map's entries (offcpu.bpf.c) */

struct stack {
	uint64_t *ips;   /* NULL: not read yet */
	uint32_t n;
};

struct rec_bpf {
	struct rec_bpf_opts o;
	char *filter;                    /* copy of o.filter */
	struct offcpu_bpf *oc;
	struct sfilter_bpf *sf;
	bool raw_tp;                     /* the fallback switch program */
	int *links;                      /* filter attachments (link fds) */
	size_t nlinks;
	bool stopped;
	/* filtered events: evsel index -> EventDesc index (the same) */
	uint32_t nfiltered;
	uint32_t filtered_ev[REC_SF_MAX_EVENTS];
	uint64_t f_dropped[REC_SF_MAX_EVENTS], f_kept[REC_SF_MAX_EVENTS];
	bool f_written[REC_SF_MAX_EVENTS];
	/* off-CPU */
	struct stack *stacks;            /* [NSTACKS] */
	uint64_t *chain;                 /* scratch: 2 markers + 2 stacks */
	uint64_t last_flip;
	uint64_t next_tick;
	struct rec_offcpu_counts written;   /* losses already written */
	struct rec_bpf_stats st;
};

bool rec_bpf_built(void)
{
	return true;
}

/* ---- messages */

static char libbpf_last[256];

/* libbpf's messages: debug level, line by line (a verifier log is one
 * message of many lines), and the last warning kept for ours */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *buf = NULL, *line, *save = NULL;
	int n = vasprintf(&buf, fmt, ap);

	if (n < 0)
		return 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (level == LIBBPF_WARN && n && !strchr(buf, '\n'))
		snprintf(libbpf_last, sizeof(libbpf_last), "%s", buf);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		rec_log(REC_LOG_DEBUG, "libbpf: %s", line);
	free(buf);
	return 0;
}

/* CapEff bits: CAP_SYS_ADMIN 21, CAP_PERFMON 38, CAP_BPF 39. */
static uint64_t effective_caps(void)
{
	char line[256];
	unsigned long long caps = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps;
}

static int check_privileges(const char *what)
{
	uint64_t c = effective_caps();
	bool admin = c >> 21 & 1, perfmon = c >> 38 & 1, bpf = c >> 39 & 1;

	if (admin || (perfmon && bpf))
		return 0;
	rec_log(REC_LOG_ERROR, "%s needs BPF: this process lacks %s%s%s; run perfrec as "
		"root, or give it the capabilities (setcap "
		"cap_bpf,cap_perfmon,cap_ipc_lock+ep perfrec)", what,
		bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
		perfmon ? "" : "CAP_PERFMON");
	return -EPERM;
}

/* Linux >= major.minor */
static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int a = 0, b = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return false;
	return a > major || (a == major && b >= minor);
}

static void load_failed(const char *what, int ret, const char *fix)
{
	rec_log(REC_LOG_ERROR, "%s: the kernel refused the BPF program (%s)%s%s; %s",
		what, strerror(-ret), libbpf_last[0] ? ": " : "", libbpf_last, fix);
}

/* ---- off-CPU */

static int open_offcpu(struct rec_bpf *b, bool raw_tp)
{
	struct offcpu_bpf *oc = offcpu_bpf__open();
	struct bpf_program *p;
	int ret;

	if (!oc)
		return -errno;
	oc->rodata->threshold_ns = b->o.events->off_cpu_threshold;
	oc->rodata->target_mode = b->o.target == REC_BPF_TARGET_PIDS ? REC_OFFCPU_BY_PID :
				  b->o.target == REC_BPF_TARGET_TIDS ? REC_OFFCPU_BY_TID :
				  REC_OFFCPU_ALL;
	oc->rodata->follow_children = b->o.follow;
	oc->rodata->have_prev_state = kernel_at_least(5, 18);
	/* The stack starts in the program and the tracepoint's glue
	 * (bpf_prog_..., bpf_trace_run4): skip both, so it starts in
	 * __schedule (6.18; tests/kernel/test_offcpu.sh checks the leaf). */
	oc->rodata->kstack_skip = 2;
	if (b->o.ncpus) {
		oc->rodata->all_cpus = 0;
		for (size_t i = 0; i < b->o.ncpus; i++)
			if (b->o.cpus[i] >= 0 && b->o.cpus[i] < REC_OFFCPU_MAX_CPUS)
				oc->rodata->cpu_recorded[b->o.cpus[i]] = 1;
	}
	bpf_object__for_each_program(p, oc->obj)
		bpf_program__set_autoload(p, false);
	if (raw_tp) {
		bpf_program__set_autoload(oc->progs.offcpu_switch_raw, true);
	} else {
		bpf_program__set_autoload(oc->progs.offcpu_switch, true);
		bpf_program__set_autoload(oc->progs.offcpu_waking, true);
		if (b->o.follow && b->o.target != REC_BPF_TARGET_ALL)
			bpf_program__set_autoload(oc->progs.offcpu_fork, true);
	}
	libbpf_last[0] = '\0';
	ret = offcpu_bpf__load(oc);
	if (ret < 0) {
		offcpu_bpf__destroy(oc);
		return ret;
	}
	b->oc = oc;
	b->raw_tp = raw_tp;
	return 0;
}

static int load_offcpu(struct rec_bpf *b)
{
	bool btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	int ret = -ENOENT;

	if (btf && !b->o.force_raw_tp) {
		ret = open_offcpu(b, false);
		if (ret == 0 || ret == -EPERM)
			goto out;
		rec_log(REC_LOG_DEBUG, "off-CPU: tp_btf program refused (%s), trying "
			"the raw_tp fallback", strerror(-ret));
	}
	ret = open_offcpu(b, true);
	if (!ret && !btf)
		rec_log(REC_LOG_WARN, "--off-cpu: this kernel has no BTF "
			"(/sys/kernel/btf/vmlinux): the fallback program measures "
			"blocks without wakers%s", kernel_at_least(5, 18) ? "" :
			" and without states (Linux < 5.18)");
out:
	if (ret == -EPERM)
		rec_log(REC_LOG_ERROR, "--off-cpu: loading BPF programs was not "
			"permitted: run as root or with CAP_BPF and CAP_PERFMON (and "
			"check /proc/sys/kernel/unprivileged_bpf_disabled, lockdown)");
	else if (ret < 0)
		load_failed("--off-cpu", ret, "it needs Linux >= 4.18 with BPF "
			    "(CONFIG_BPF_SYSCALL, CONFIG_BPF_EVENTS) and, for states and "
			    "wakers, BTF (CONFIG_DEBUG_INFO_BTF)");
	return ret;
}

static int fill_targets(struct rec_bpf *b)
{
	int fd = bpf_map__fd(b->oc->maps.targets);
	__u8 one = 1;

	for (size_t i = 0; i < b->o.ntargets; i++) {
		__u32 key = (__u32)b->o.targets[i];

		if (bpf_map_update_elem(fd, &key, &one, BPF_ANY) < 0) {
			int ret = -errno;

			rec_log(REC_LOG_ERROR, "--off-cpu: cannot list target %d: %s",
				b->o.targets[i], strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static int attach_offcpu(struct rec_bpf *b, struct rec_evlist *s)
{
	struct offcpu_bpf *oc = b->oc;
	struct rec_evsel *e = NULL;
	int fd = bpf_map__fd(oc->maps.events), ret;

	for (size_t i = 0; i < s->nsel; i++)
		if (rec_evlist_is_bpf_output(s, &s->sel[i]))
			e = &s->sel[i];
	if (!e)
		return -EINVAL;
	for (size_t j = 0; j < e->nfds; j++) {
		__u32 cpu = (__u32)e->fds[j].cpu;
		__u32 efd = (__u32)e->fds[j].fd;

		if (bpf_map_update_elem(fd, &cpu, &efd, BPF_ANY) < 0) {
			ret = -errno;
			rec_log(REC_LOG_ERROR, "--off-cpu: cannot give the program the "
				"output event of cpu %u: %s", cpu, strerror(-ret));
			return ret;
		}
	}
	ret = fill_targets(b);
	if (ret < 0)
		return ret;
	libbpf_last[0] = '\0';
	ret = offcpu_bpf__attach(oc);
	if (ret < 0) {
		load_failed("--off-cpu: attaching to sched_switch", ret,
			    "it needs the sched tracepoints (CONFIG_TRACEPOINTS)");
		return ret;
	}
	return 0;
}

/* ---- the sample filter */

static int load_filter(struct rec_bpf *b)
{
	struct rec_sfilter f;
	struct rec_sfilter_error err;
	char msg[REC_LOG_MAX];
	int ret = rec_sfilter_parse(b->filter, &f, &err);

	if (!ret)
		ret = rec_sfilter_resolve(&f, b->filter, b->o.cgroup_root, &err);
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "bad --filter: %s",
			rec_sfilter_describe_error(b->filter, &err, msg, sizeof(msg)));
		rec_sfilter_release(&f);
		return ret;
	}
	b->sf = sfilter_bpf__open();
	if (!b->sf) {
		ret = -errno;
		rec_sfilter_release(&f);
		return ret;
	}
	for (size_t i = 0; i < f.n; i++)
		b->sf->rodata->insns[i] = f.insn[i];
	b->sf->rodata->ninsns = (__u32)f.n;
	rec_sfilter_release(&f);
	libbpf_last[0] = '\0';
	ret = sfilter_bpf__load(b->sf);
	if (ret == -EPERM)
		rec_log(REC_LOG_ERROR, "--filter: loading BPF programs was not permitted: "
			"run as root or with CAP_BPF and CAP_PERFMON");
	else if (ret < 0)
		load_failed("--filter", ret, "it needs Linux >= 5.15 (perf_event programs "
			    "with attach cookies) built with CONFIG_BPF_EVENTS");
	return ret;
}

static int add_link(struct rec_bpf *b, int fd)
{
	int *n = realloc(b->links, (b->nlinks + 1) * sizeof(*n));

	if (!n) {
		close(fd);
		return -ENOMEM;
	}
	b->links = n;
	b->links[b->nlinks++] = fd;
	return 0;
}

/* The filter on every fd of each filterable event, its cookie the
 * event's number among them. A BPF link of its own, not libbpf's
 * bpf_program__attach_perf_event(): that one enables the event, and the
 * recording enables its events itself (a command's at its exec). */
static int attach_filter(struct rec_bpf *b, struct rec_evlist *s)
{
	int prog = bpf_program__fd(b->sf->progs.sample_filter);

	for (size_t i = 0; i < s->nsel; i++) {
		struct rec_evsel *e = &s->sel[i];

		if (!rec_evlist_filterable(s, e))
			continue;
		if (b->nfiltered >= REC_SF_MAX_EVENTS) {
			rec_log(REC_LOG_ERROR, "--filter: at most %d sampling events",
				REC_SF_MAX_EVENTS);
			return -E2BIG;
		}
		for (size_t j = 0; j < e->nfds; j++) {
			LIBBPF_OPTS(bpf_link_create_opts, lo);
			int fd, ret;

			lo.perf_event.bpf_cookie = b->nfiltered;
			fd = bpf_link_create(prog, e->fds[j].fd, BPF_PERF_EVENT, &lo);
			if (fd < 0) {
				ret = fd;
				rec_log(REC_LOG_ERROR, "--filter: cannot attach the filter to "
					"%s (cpu %d): %s; it needs Linux >= 5.15 (perf_event "
					"programs with BPF links and attach cookies)",
					e->ev->name, e->fds[j].cpu, strerror(-ret));
				return ret;
			}
			ret = add_link(b, fd);
			if (ret < 0)
				return ret;
		}
		b->filtered_ev[b->nfiltered++] = (uint32_t)i;
	}
	if (!b->nfiltered) {
		rec_log(REC_LOG_ERROR, "--filter: no event to filter: it applies to "
			"sampling events other than tracepoints and probes (e.g. -e "
			"cpu-clock)");
		return -EINVAL;
	}
	return 0;
}

/* ---- life cycle */

int rec_bpf_new(const struct rec_bpf_opts *o, struct rec_bpf **out)
{
	struct rec_bpf *b;
	int ret;

	*out = NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->o = (struct rec_bpf_opts)REC_BPF_OPTS_INIT;
	ret = prec_opts_copy(&b->o, sizeof(b->o), o);
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "BPF options: unknown fields set (a newer caller?)");
		goto err;
	}
	b->o.targets = NULL;   /* read during new() only */
	b->o.cpus = NULL;
	libbpf_set_print(libbpf_print);
	if (!o->events) {
		rec_log(REC_LOG_ERROR, "BPF options: no event settings");
		ret = -EINVAL;
		goto err;
	}
	ret = check_privileges(o->events->off_cpu ? "--off-cpu" : "--filter");
	if (ret < 0)
		goto err;
	if (o->events->filter) {
		b->filter = strdup(o->events->filter);
		if (!b->filter) {
			ret = -ENOMEM;
			goto err;
		}
		ret = load_filter(b);
		if (ret < 0)
			goto err;
	}
	if (o->events->off_cpu) {
		b->o.targets = o->targets;   /* for attach, within new()'s caller */
		b->o.cpus = o->cpus;
		b->stacks = calloc(NSTACKS, sizeof(*b->stacks));
		b->chain = calloc(2 * REC_OFFCPU_MAX_DEPTH + 2, sizeof(*b->chain));
		if (!b->stacks || !b->chain) {
			ret = -ENOMEM;
			goto err;
		}
		ret = load_offcpu(b);
		if (ret < 0)
			goto err;
	}
	b->o.events = NULL;   /* read during new() only */
	b->st.raw_tp = b->raw_tp;
	*out = b;
	return 0;
err:
	rec_bpf_free(b);
	return ret;
}

int rec_bpf_attach(struct rec_bpf *b, struct rec_evlist *s)
{
	int ret = 0;

	if (b->sf)
		ret = attach_filter(b, s);
	if (!ret && b->oc)
		ret = attach_offcpu(b, s);
	/* the caller's arrays were borrowed for this */
	b->o.targets = NULL;
	b->o.cpus = NULL;
	return ret;
}

void rec_bpf_stop(struct rec_bpf *b)
{
	if (!b || b->stopped)
		return;
	b->stopped = true;
	if (b->oc)
		offcpu_bpf__detach(b->oc);
}

void rec_bpf_free(struct rec_bpf *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nlinks; i++)
		close(b->links[i]);
	free(b->links);
	offcpu_bpf__destroy(b->oc);
	sfilter_bpf__destroy(b->sf);
	if (b->stacks)
		for (size_t i = 0; i < NSTACKS; i++)
			free(b->stacks[i].ips);
	free(b->stacks);
	free(b->chain);
	free(b->filter);
	free(b);
}

void rec_bpf_stats(const struct rec_bpf *b, struct rec_bpf_stats *st)
{
	*st = b->st;
}

/* ---- records into packets */

/* The stack with id from the stack map (once; cached). NULL: none. */
static const struct stack *stack_get(struct rec_bpf *b, int32_t id)
{
	struct stack *s;
	uint64_t buf[REC_OFFCPU_MAX_DEPTH];
	uint32_t n = 0;

	if (id < 0 || id >= NSTACKS)
		return NULL;
	s = &b->stacks[id];
	if (s->ips)
		return s;
	memset(buf, 0, sizeof(buf));
	if (bpf_map_lookup_elem(bpf_map__fd(b->oc->maps.stacks), &id, buf) < 0)
		return NULL;
	while (n < REC_OFFCPU_MAX_DEPTH && buf[n])
		n++;
	s->ips = malloc((n ? n : 1) * sizeof(*s->ips));
	if (!s->ips)
		return NULL;
	memcpy(s->ips, buf, n * sizeof(*buf));
	s->n = n;
	return s;
}

/* The callchain of a block as samples have them: markers, kernel ips,
 * user ips. Its interned id on stream (0: no stack), and the symbol
 * collector sees its addresses. */
static uint64_t chain_of(struct rec_bpf *b, struct rec_emit *e, uint32_t stream,
			 uint32_t pid, int32_t kstack, int32_t ustack, int *err)
{
	const struct stack *k = stack_get(b, kstack), *u = stack_get(b, ustack);
	size_t n = 0;
	uint64_t iid;

	*err = 0;
	if (k && k->n) {
		b->chain[n++] = PERF_CTX_KERNEL;
		memcpy(b->chain + n, k->ips, k->n * sizeof(uint64_t));
		n += k->n;
	}
	if (u && u->n) {
		b->chain[n++] = PERF_CTX_USER;
		memcpy(b->chain + n, u->ips, u->n * sizeof(uint64_t));
		n += u->n;
	}
	if (!n)
		return 0;
	iid = prec_writer_intern_callchain(e->w, stream, b->chain, n);
	if (!iid) {
		*err = prec_writer_error(e->w);
		return 0;
	}
	if (e->observe) {
		/* the symbol gatherer takes it as a kernel-mode sample */
		struct rec_record r;

		memset(&r, 0, sizeof(r));
		r.type = PERF_RECORD_SAMPLE;
		r.misc = PERF_RECORD_MISC_KERNEL;
		r.sid.pid = pid;
		r.sid.has_tid = true;
		r.sample.ips = b->chain;
		r.sample.nr = n;
		e->observe(e->observe_ctx, &r);
	}
	return iid;
}

int rec_bpf_emit(void *ctx, struct rec_emit *e, uint32_t stream,
		 const struct rec_record *r)
{
	struct rec_bpf *b = ctx;
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__OffCpu oc = PERFREC__OFF_CPU__INIT;
	struct rec_offcpu_rec rec;
	int err;

	if (!b->oc || !r->sample.raw || r->sample.raw_size < sizeof(rec))
		goto raw;
	memcpy(&rec, r->sample.raw, sizeof(rec));
	if (rec.magic != REC_OFFCPU_MAGIC || rec.end < rec.start ||
	    rec.state > REC_OFFCPU_OTHER)
		goto raw;
	oc.cpu = r->sid.cpu;
	oc.pid = rec.pid;
	oc.tid = rec.tid;
	oc.state = (Perfrec__OffCpu__State)rec.state;
	oc.duration = rec.end - rec.start;
	oc.waker_pid = rec.waker_pid;
	oc.waker_tid = rec.waker_tid;
	oc.callchain = chain_of(b, e, stream, rec.pid, rec.kstack, rec.ustack, &err);
	if (err)
		return err;
	p.data_case = PERFREC__PACKET__DATA_OFF_CPU;
	p.off_cpu = &oc;
	b->st.intervals++;
	b->st.blocked_ns += oc.duration;
	return prec_writer_append(e->w, stream, &p, rec.end);
raw:
	{
		/* not ours to read: kept whole, as emit keeps what it cannot
		 * decode */
		Perfrec__RawRecord raw = PERFREC__RAW_RECORD__INIT;

		raw.type = r->type;
		raw.misc = r->misc;
		raw.data.data = (uint8_t *)r->payload;
		raw.data.len = r->payload_len;
		raw.cpu = r->sid.cpu;
		p.data_case = PERFREC__PACKET__DATA_RAW;
		p.raw = &raw;
		e->st.bad++;
		return prec_writer_append(e->w, stream, &p, r->sid.time);
	}
}

/* Drains one sum map into aggregate OffCpu packets at time t. */
static int drain_sums(struct rec_bpf *b, struct rec_emit *e, struct bpf_map *m,
		      uint64_t t)
{
	int fd = bpf_map__fd(m), ret = 0;
	struct rec_offcpu_key key, next, *keys = NULL;
	size_t n = 0, cap = 0;
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (n == cap) {
			size_t c = cap ? cap * 2 : 256;
			struct rec_offcpu_key *k = realloc(keys, c * sizeof(*k));

			if (!k) {
				ret = -ENOMEM;
				goto out;
			}
			keys = k;
			cap = c;
		}
		keys[n++] = next;
		key = next;
		prev = &key;
	}
	for (size_t i = 0; i < n && !ret; i++) {
		Perfrec__Packet p = PERFREC__PACKET__INIT;
		Perfrec__OffCpu oc = PERFREC__OFF_CPU__INIT;
		struct rec_offcpu_val v;
		int err;

		if (bpf_map_lookup_elem(fd, &keys[i], &v) < 0 || !v.count)
			continue;
		oc.pid = keys[i].pid;
		oc.tid = keys[i].tid;
		oc.state = keys[i].state <= REC_OFFCPU_OTHER ?
			   (Perfrec__OffCpu__State)keys[i].state : PERFREC__OFF_CPU__STATE__OTHER;
		oc.duration = v.ns;
		oc.count = v.count;
		oc.callchain = chain_of(b, e, 0, keys[i].pid, keys[i].kstack,
					keys[i].ustack, &err);
		if (err) {
			ret = err;
			break;
		}
		p.data_case = PERFREC__PACKET__DATA_OFF_CPU;
		p.off_cpu = &oc;
		ret = prec_writer_append(e->w, 0, &p, t);
		b->st.sums++;
		b->st.blocked_ns += v.ns;
	}
	/* nothing writes into it now: delete what was read */
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &keys[i]);
out:
	free(keys);
	return ret;
}

static int write_loss(struct rec_emit *e, int kind, uint64_t count, const char *reason,
		      uint64_t t)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__Loss l = PERFREC__LOSS__INIT;

	if (!count)
		return 0;
	l.kind = (Perfrec__Loss__Kind)kind;
	l.count = count;
	l.reason = (char *)reason;
	p.data_case = PERFREC__PACKET__DATA_LOSS;
	p.loss = &l;
	return prec_writer_append(e->w, 0, &p, t);
}

/* The program's own losses since the last call, as Loss packets. */
static int write_offcpu_losses(struct rec_bpf *b, struct rec_emit *e, uint64_t t)
{
	struct rec_offcpu_counts c = b->oc->bss->counts, *w = &b->written;
	uint64_t full = c.map_full - w->map_full, agg = c.agg_full - w->agg_full;
	uint64_t tgt = c.target_full - w->target_full;
	char why[200];
	int ret;

	snprintf(why, sizeof(why), "off-CPU: blocks not measured: %llu (tasks blocked "
		 "at once exceeded the starts map), %llu (a sum map was full), %llu "
		 "(children not followed: the targets map was full)",
		 (unsigned long long)full, (unsigned long long)agg,
		 (unsigned long long)tgt);
	ret = write_loss(e, PERFREC__LOSS__KIND__BPF_MAP_FULL, full + agg + tgt, why, t);
	if (!ret)
		ret = write_loss(e, PERFREC__LOSS__KIND__BPF_STACK_LOST,
				 c.stack_lost - w->stack_lost, "off-CPU: stacks the stack "
				 "map could not store (full, or a hash collision); their "
				 "blocks are kept without them", t);
	if (!ret)
		ret = write_loss(e, PERFREC__LOSS__KIND__BPF_OUTPUT_DROPPED,
				 c.output_dropped - w->output_dropped, "off-CPU: records "
				 "bpf_perf_event_output refused; their time is in the sums", t);
	if (!ret) {
		b->st.losses += full + agg + tgt + (c.stack_lost - w->stack_lost) +
				(c.output_dropped - w->output_dropped);
		*w = c;
	}
	return ret;
}

/* Filtered packets: per event, the counts since the last ones. */
static int write_filtered(struct rec_bpf *b, struct rec_emit *e, uint64_t t, bool final)
{
	int fd = bpf_map__fd(b->sf->maps.counts), ncpu = libbpf_num_possible_cpus();
	uint64_t *v;
	int ret = 0;

	if (ncpu <= 0)
		return 0;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < b->nfiltered && !ret; i++) {
		uint64_t sum[2] = { 0, 0 };

		for (uint32_t k = 0; k < 2; k++) {
			__u32 key = i * 2 + k;

			if (bpf_map_lookup_elem(fd, &key, v) < 0)
				continue;
			for (int c = 0; c < ncpu; c++)
				sum[k] += v[c];
		}
		if (sum[0] != b->f_dropped[i] || sum[1] != b->f_kept[i] ||
		    (final && !b->f_written[i])) {
			Perfrec__Packet p = PERFREC__PACKET__INIT;
			Perfrec__Filtered f = PERFREC__FILTERED__INIT;

			f.event = b->filtered_ev[i];
			f.dropped = sum[0] - b->f_dropped[i];
			f.kept = sum[1] - b->f_kept[i];
			p.data_case = PERFREC__PACKET__DATA_FILTERED;
			p.filtered = &f;
			ret = prec_writer_append(e->w, 0, &p, t);
			b->st.filtered += f.dropped;
			b->st.kept += f.kept;
			b->f_dropped[i] = sum[0];
			b->f_kept[i] = sum[1];
			b->f_written[i] = true;
		}
	}
	free(v);
	return ret;
}

int rec_bpf_tick(struct rec_bpf *b, struct rec_emit *e, uint64_t now_ns, bool final)
{
	int ret = 0;

	if (!final && now_ns < b->next_tick)
		return 0;
	b->next_tick = now_ns + TICK_NS;
	if (b->oc) {
		struct bpf_map *cur = b->oc->bss->agg_gen & 1 ? b->oc->maps.agg1 :
				      b->oc->maps.agg0;
		struct bpf_map *old = cur == b->oc->maps.agg0 ? b->oc->maps.agg1 :
				      b->oc->maps.agg0;

		if (!b->last_flip)
			b->last_flip = now_ns;
		/* the map switched out a tick ago: its blocks ended before */
		ret = drain_sums(b, e, old, b->last_flip);
		if (!ret && final && b->stopped)
			ret = drain_sums(b, e, cur, now_ns);
		if (!ret && !final) {
			__atomic_store_n(&b->oc->bss->agg_gen, b->oc->bss->agg_gen ^ 1,
					 __ATOMIC_RELEASE);
			b->last_flip = now_ns;
		}
		if (!ret)
			ret = write_offcpu_losses(b, e, now_ns);
	}
	if (!ret && b->sf)
		ret = write_filtered(b, e, now_ns, final);
	return ret;
}
