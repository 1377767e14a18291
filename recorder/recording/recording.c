/*
 * recording.c - the recording object; see recording.h for the call order.
 *
 * One output at a time: `w` writes into the current sink; rotate() ends it
 * (its own SessionEnd and index) and opens the next. Kernel records flow
 * source rings -> drain thread -> spools -> consume_all() (rounds merged
 * by time) -> emit -> w.
 */
#include "recorder/recording/recording.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format/base/clock.h"
#include "format/base/opts.h"
#include "format/error.h"
#include "format/writer.h"
#include "recorder/bpf/bpf.h"
#include "recorder/encode/decode.h"
#include "recorder/encode/hostinfo.h"
#include "recorder/encode/synth.h"
#include "recorder/events/counters.h"
#include "recorder/events/cpumap.h"
#include "recorder/events/evlist.h"
#include "recorder/events/threadmap.h"
#include "recorder/log.h"
#include "recorder/recording/workload.h"
#include "recorder/ring/drain.h"
#include "recorder/symbols/symcache.h"
#include "recorder/symbols/symgather.h"
#include "recorder/recording/recording_int.h"

/* Longest wait in one step: the drain thread wakes us for batches, this
 * bounds the delay of small ones and of timers. */
#define STEP_MAX_MS 100
/* symbols: tables of newly hit objects every 30 s, so long or streamed
 * recordings (and killed ones) carry them before the end */
#define SYMBOLS_NS (30ull * 1000000000ull)
#define TURN_RECORDS 65536              /* per ring per consumer round */
/* Ring size when -m is not given. Losses come from a ring filling while
 * the recorder is descheduled: at -F 10000 -g with switch events a CPU
 * writes ~16 MB/s, so perf's 512 KiB lasts ~30 ms and 4 MiB ~250 ms. Rings
 * are locked memory: above perf_event_mlock_kb only CAP_IPC_LOCK may map
 * them, so without it we stay at perf's size. */
#define RING_PAGES_SMALL 128            /* 512 KiB, perf's default */
#define RING_BYTES_BIG (4u << 20)       /* per CPU, with CAP_IPC_LOCK */
#define RING_TOTAL_MAX (256ull << 20)   /* all CPUs together */
/* The workload's threads switch out for the last time just after its exit
 * is reported: this grace lets the final drain hold those records. */
#define WORKLOAD_GRACE_NS (20 * 1000000L)
/* The source's tick (BPF maps: off-CPU sums, filter counts) this often:
 * the sums' time resolution, and how much a killed recorder can lose. */
#define TICK_NS 1000000000ull

/* CAP_IPC_LOCK in the effective set (/proc/self/status CapEff). */
static bool can_lock_memory(void)
{
	char line[256];
	bool yes = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long caps;

		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			yes = (caps >> 14) & 1;   /* CAP_IPC_LOCK = 14 */
			break;
		}
	}
	fclose(f);
	return yes;
}

/* -m not given: data pages per ring (a power of two). */
static size_t auto_ring_pages(size_t ncpus)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages;

	if (!can_lock_memory() || !page)
		return RING_PAGES_SMALL;
	pages = RING_BYTES_BIG / page;
	while (pages > RING_PAGES_SMALL &&
	       (uint64_t)pages * page * (ncpus ? ncpus : 1) > RING_TOTAL_MAX)
		pages /= 2;
	return pages > RING_PAGES_SMALL ? pages : RING_PAGES_SMALL;
}

/* ---- new */

static int resolve_targets(struct rec_recording *r)
{
	const struct rec_recording_opts *o = &r->o;
	int ret;

	ret = rec_cpumap_online(&r->cpus);
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "cannot list the online CPUs: %s", strerror(-ret));
		return ret;
	}
	if (o->target == REC_TARGET_CPUS) {
		int *cpus = malloc((o->ncpus ? o->ncpus : 1) * sizeof(int));

		if (!cpus)
			return -ENOMEM;
		for (size_t i = 0; i < o->ncpus; i++) {
			if (rec_cpumap_index(&r->cpus, o->cpus[i]) < 0) {
				rec_log(REC_LOG_ERROR, "cpu %d is not online (online CPUs: "
					"/sys/devices/system/cpu/online, %zu of them)",
					o->cpus[i], r->cpus.n);
				free(cpus);
				return -ENODEV;
			}
			cpus[i] = o->cpus[i];
		}
		rec_cpumap_release(&r->cpus);
		r->cpus.cpu = cpus;
		r->cpus.n = o->ncpus;
	}
	if (recording_task_target(r)) {
		ret = rec_threadmap_expand(&r->tids, o->pids, o->npids,
					   o->target == REC_TARGET_PIDS, NULL);
		if (ret < 0)
			return ret;
	}
	rec_meta_target_string(o->target,
			       o->target == REC_TARGET_CPUS ? r->cpus.cpu : o->pids,
			       o->target == REC_TARGET_CPUS ? r->cpus.n : o->npids,
			       r->target, sizeof(r->target));
	if (o->argv && o->argv[0]) {
		/* A command: the target itself, or (with CPU targets) what
		 * decides how long the recording lasts. */
		ret = rec_workload_prepare(&r->wl, o->argv);
		if (ret < 0) {
			rec_log(REC_LOG_ERROR, "cannot start '%s': %s", o->argv[0],
				strerror(-ret));
			return ret;
		}
		r->have_wl = true;
	}
	return 0;
}

/* The tasks events are opened on: the command, the threads of -p/-t, or
 * none (every task on the CPUs). */
static void target_tasks(const struct rec_recording *r, const int **pids,
			 size_t *npids)
{
	*pids = NULL;
	*npids = 0;
	if (r->o.target == REC_TARGET_COMMAND) {
		*pids = &r->wl.pid;
		*npids = 1;
	} else if (recording_task_target(r)) {
		*pids = r->tids.tid;
		*npids = r->tids.n;
	}
}

/* Whose off-CPU time the BPF program measures: the recording's tasks. */
static void bpf_targets(struct rec_recording *r, struct rec_bpf_opts *b)
{
	const struct rec_recording_opts *o = &r->o;

	b->cpus = r->cpus.cpu;
	b->ncpus = r->cpus.n;
	if (o->target == REC_TARGET_COMMAND) {
		b->target = REC_BPF_TARGET_PIDS;
		b->targets = &r->wl.pid;
		b->ntargets = 1;
		b->follow = true;
	} else if (o->target == REC_TARGET_PIDS) {
		b->target = REC_BPF_TARGET_PIDS;
		b->targets = o->pids;
		b->ntargets = o->npids;
		b->follow = true;
	} else if (o->target == REC_TARGET_TIDS) {
		b->target = REC_BPF_TARGET_TIDS;
		b->targets = r->tids.tid;
		b->ntargets = r->tids.n;
	}
}

static int open_source(struct rec_recording *r)
{
	const struct rec_recording_opts *o = &r->o;
	const int *pids;
	size_t npids;
	int ret;

	if (o->source) {
		r->src = o->source;
	} else {
		const struct rec_evspecs *l = o->evspecs;
		struct rec_evlist_cfg cfg = o->events;
		struct rec_bpf_opts bo = o->bpf;

		if (!cfg.period) {
			int max = rec_read_int_file("/proc/sys/kernel/perf_event_max_sample_rate", 0);

			if (max > 0 && cfg.freq > (uint64_t)max) {
				rec_log(REC_LOG_ERROR, "-F %llu is above this kernel's limit "
					"of %d Hz (/proc/sys/kernel/perf_event_max_sample_rate): "
					"use -F %d or lower, or raise the limit",
					(unsigned long long)cfg.freq, max, max);
				return -EINVAL;
			}
		}
		if (!l || !l->n) {
			/* Counting only: a dummy event still carries comm,
			 * fork and mmap records. */
			ret = rec_evspecs_parse(&r->dummy, "dummy");
			if (ret < 0)
				return ret;
			l = &r->dummy;
		}
		if (o->dwarf) {
			const struct prec_unwind_arch *a = rec_symgather_arch(NULL);

			if (!a) {
				rec_log(REC_LOG_ERROR, "--call-graph dwarf: perfrec cannot "
					"unwind user stacks of this machine's architecture; "
					"use --call-graph fp (frame pointers)");
				return -EOPNOTSUPP;
			}
			if (cfg.stack_user % 8 || cfg.stack_user > REC_STACK_USER_MAX) {
				rec_log(REC_LOG_ERROR, "--call-graph dwarf: a user stack size "
					"of %u bytes is not a multiple of 8 from 8 to %u",
					cfg.stack_user, REC_STACK_USER_MAX);
				return -EINVAL;
			}
			if (!cfg.stack_user)
				cfg.stack_user = REC_STACK_USER_DEFAULT;
			cfg.regs_user = a->perf_mask_min;
		} else {
			cfg.stack_user = 0;
			cfg.regs_user = 0;
		}
		cfg.inherit = o->target == REC_TARGET_PIDS || o->target == REC_TARGET_COMMAND;
		cfg.enable_on_exec = o->target == REC_TARGET_COMMAND;
		if (!cfg.mmap_pages)
			cfg.mmap_pages = auto_ring_pages(r->cpus.n);
		if (cfg.filter && !cfg.filter[0])
			cfg.filter = NULL;
		bo.sz = sizeof(bo);
		bpf_targets(r, &bo);
		r->src = rec_source_perf_new(l, &cfg, &bo);
		if (!r->src) {
			ret = -errno;
			rec_log(REC_LOG_ERROR, "bad event settings (-m must be a power of "
				"two): %s", strerror(-ret));
			return ret;
		}
		r->own_src = true;
	}
	target_tasks(r, &pids, &npids);
	ret = r->src->ops->open(r->src, r->cpus.cpu, r->cpus.n, pids, npids);
	if (ret < 0)
		return ret;
	if (r->src->note && r->src->note[0]) {
		rec_log(REC_LOG_WARN, "%s", r->src->note);
		snprintf(r->notes[0], sizeof(r->notes[0]), "%s", r->src->note);
	}
	if (rec_read_int_file("/proc/sys/kernel/kptr_restrict", 0) > 0 && geteuid())
		snprintf(r->notes[1], sizeof(r->notes[1]),
			 "kernel addresses hidden by kptr_restrict");
	return 0;
}

static int open_counters(struct rec_recording *r)
{
	const struct rec_recording_opts *o = &r->o;
	const int *pids;
	size_t npids;
	int ret;

	if (!o->ncounters)
		return 0;
	r->ctr = rec_counters_new();
	if (!r->ctr)
		return -ENOMEM;
	for (size_t i = 0; i < o->ncounters; i++) {
		ret = rec_counters_add(r->ctr, o->counters[i]);
		if (ret < 0)
			return ret;
	}
	rec_counters_set_interval(r->ctr, o->interval_ns ? o->interval_ns : 1000000000ull);
	target_tasks(r, &pids, &npids);
	return rec_counters_open(r->ctr, r->cpus.cpu, r->cpus.n, pids, npids,
				 o->target == REC_TARGET_COMMAND);
}

/* A writer on sink for the next output. */
int rec_recording_new(const struct rec_recording_opts *opts,
		      struct prec_sink *sink, const char *output_name,
		      struct rec_recording **out)
{
	struct rec_recording *r = calloc(1, sizeof(*r));
	int ret;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->wl.pid = -1;
	r->stop_reason = "";
	ret = prec_opts_copy(&r->o, sizeof(r->o), opts);
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "recording options: unknown fields set (a "
			"newer caller?)");
		goto err;
	}
	ret = resolve_targets(r);
	if (ret < 0)
		goto err;
	ret = open_source(r);
	if (ret < 0)
		goto err;
	ret = open_counters(r);
	if (ret < 0)
		goto err;
	r->ring_reported = calloc(r->src->nrings + 1, sizeof(bool));
	if (!r->ring_reported) {
		ret = -ENOMEM;
		goto err;
	}
	ret = recording_open_writer(r, sink, output_name, &r->w);
	if (ret < 0)
		goto err;
	ret = rec_emit_init(&r->e, r->w, r->src->dctx, rec_cpumap_max(&r->cpus));
	if (ret < 0)
		goto err;
	r->emit_ok = true;
	r->e.switch_stream = REC_STREAM_SWITCHES;
	r->e.side_stream = REC_STREAM_SIDEBAND;
	r->e.bpf_output = r->src->bpf_emit;
	r->e.bpf_ctx = r->src->bpf_ctx;
	r->cpu_base = calloc((size_t)r->e.ncpu, sizeof(*r->cpu_base));
	r->cpu_out = calloc((size_t)r->e.ncpu, sizeof(*r->cpu_out));
	if (!r->cpu_base || !r->cpu_out) {
		ret = -ENOMEM;
		goto err;
	}
	if (!r->o.no_symbols || r->o.dwarf) {
		/* kallsyms now, the tables of hit objects as they are hit.
		 * Without symbols, dwarf call graphs still need the address
		 * spaces: the gatherer then writes nothing. */
		struct rec_symgather_opts so = REC_SYMGATHER_OPTS_INIT;

		so.symcache_dir = rec_symcache_default_dir();
		if (r->o.no_symbols) {
			so.kernel = 0;
			so.perf_maps = 0;
		}
		r->syms = rec_symgather_new(&so);
		if (r->syms) {
			r->e.observe = rec_symgather_observe;
			r->e.observe_ctx = r->syms;
			if (!r->o.no_cut) {
				r->e.mapped = rec_symgather_user_mapped;
				r->e.mapped_ctx = r->syms;
			}
			r->syms_write = !r->o.no_symbols;
		} else {
			rec_log(REC_LOG_WARN, "no symbols will be recorded%s: %s",
				r->o.dwarf ? " and user stacks not unwound" : "",
				strerror(errno));
		}
	}
	if (r->o.dwarf) {
		/* user stacks unwound here, into the callchains (raw: kept,
		 * with the unwind tables they need) */
		r->e.raw_stacks = r->o.raw_stacks;
		if (r->syms) {
			r->e.unwind = rec_symgather_unwind_sample;
			r->e.unwind_ctx = r->syms;
		}
	}
	r->start_ns = prec_now_ns();
	recording_begin_output(r, r->start_ns);
	ret = recording_write_preamble(r, r->start_ns);
	if (ret < 0) {
		recording_fail_write(r, ret);
		goto err;
	}
	r->state = REC_RECORDING_READY;
	*out = r;
	return 0;
err:
	rec_recording_free(r);
	return ret;
}

/* ---- running */

/* The time of a ring record, for the drain's rounds. */
static int record_time(void *ctx, const struct perf_event_header *h, uint64_t *t)
{
	return rec_decode_time(ctx, h, t);
}


int rec_recording_start(struct rec_recording *r)
{
	int ret;

	if (r->state != REC_RECORDING_READY) {
		rec_log(REC_LOG_ERROR, "recording: start() needs a new recording");
		return -EINVAL;
	}
	ret = rec_drain_new(r->src->rings, r->src->nrings,
			    (uint64_t)r->src->ring_pages * r->src->page_size,
			    r->o.spool_bytes, &r->drain);
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "cannot set up the drain thread: %s", strerror(-ret));
		return ret;
	}
	rec_drain_set_time(r->drain, record_time, (void *)r->src->dctx);
	ret = rec_drain_start(r->drain);
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "cannot start the drain thread: %s", strerror(-ret));
		return ret;
	}
	/* a command target is enabled by its exec */
	if (r->o.target != REC_TARGET_COMMAND) {
		ret = r->src->ops->enable(r->src);
		if (!ret && r->ctr)
			ret = rec_counters_enable(r->ctr);
		if (ret < 0) {
			rec_log(REC_LOG_ERROR, "cannot enable the events: %s", strerror(-ret));
			return ret;
		}
		ret = recording_write_tasks(r);
		if (ret < 0)
			return recording_fail_write(r, ret);
	}
	/* Cut the metadata frame now: a recorder killed early still leaves a
	 * file that says what it was recording. */
	ret = prec_writer_flush(r->w);
	if (ret < 0)
		return recording_fail_write(r, ret);
	if (r->have_wl) {
		r->wl_started = true;
		ret = rec_workload_start(&r->wl);
		if (ret < 0) {
			rec_log(REC_LOG_ERROR, "cannot run '%s': %s", r->o.argv[0],
				strerror(-ret));
			return ret;
		}
	}
	r->ctr_ival = r->ctr ? rec_counters_interval_ns(r->ctr) : 0;
	r->syms_ival = r->o.symbols_interval_ns ? r->o.symbols_interval_ns : SYMBOLS_NS;
	r->next_ctr = r->start_ns + r->ctr_ival;
	r->next_syms = r->start_ns + r->syms_ival;
	r->next_tick = r->start_ns + TICK_NS;
	r->state = REC_RECORDING_RUNNING;
	return 0;
}

/* Says once that ring i stopped on a corrupt record. */
static int report_ring(struct rec_recording *r, size_t i)
{
	int cpu = r->src->ring_cpu[i];
	char why[160];

	if (r->ring_reported[i] || !r->src->rings[i].meta ||
	    (!rec_drain_spool(r->drain, i)->error && !rec_drain_ring_failed(r->drain, i)))
		return 0;
	r->ring_reported[i] = true;
	snprintf(why, sizeof(why),
		 "ring of cpu %d stopped: corrupt record header (size < 8, larger "
		 "than the ring, or past data_head)", cpu);
	rec_log(REC_LOG_ERROR, "%s; its later records are lost", why);
	return rec_emit_ring_error(&r->e, REC_STREAM_SIDEBAND, cpu, prec_now_ns(), why);
}

/* Encodes one round of the spools' records, in time order across the
 * rings (drain.h: a process's exec and mmaps before its samples on other
 * CPUs), at most TURN_RECORDS per ring. *more: records wait in a spool.
 * Returns 0 or the writer's error. */
static int consume_all(struct rec_recording *r, bool *more)
{
	const struct perf_event_header *h;
	size_t i;
	int ret = 0;

	*more = false;
	rec_drain_round_begin(r->drain, (size_t)TURN_RECORDS * r->src->nrings);
	while (rec_drain_round_next(r->drain, &i, &h) > 0) {
		ret = rec_emit_record(&r->e, REC_STREAM_SAMPLES, r->src->ring_cpu[i], h);
		if (ret < 0)
			break;
	}
	rec_drain_round_end(r->drain);
	for (i = 0; !ret && i < r->src->nrings; i++) {
		ret = report_ring(r, i);
		if (r->src->rings[i].meta && rec_drain_pending(r->drain, i))
			*more = true;
	}
	return ret;
}

static int consume_cb(void *ctx)
{
	bool more;

	return consume_all(ctx, &more);
}

int rec_recording_pollfd(const struct rec_recording *r)
{
	return r->drain ? rec_drain_fd(r->drain) : -1;
}

/* Why the recording should stop now, or NULL. */
static const char *stop_condition(struct rec_recording *r, uint64_t now)
{
	if (r->o.duration_ns && now - r->start_ns >= r->o.duration_ns)
		return "duration";
	if (r->have_wl && rec_workload_poll(&r->wl)) {
		struct timespec grace = { 0, WORKLOAD_GRACE_NS };

		nanosleep(&grace, NULL);
		return "workload exited";
	}
	if (recording_task_target(r) && !rec_threadmap_alive(&r->tids))
		return "targets exited";
	return NULL;
}

int rec_recording_step(struct rec_recording *r, int timeout_ms)
{
	struct pollfd pfd[2] = { { -1, POLLIN, 0 }, { -1, POLLIN, 0 } };
	uint64_t now = prec_now_ns();
	const char *why;
	bool more;
	int ret;

	if (r->state == REC_RECORDING_FAILED)
		return r->err;
	if (r->state != REC_RECORDING_RUNNING)
		return 0;
	if (timeout_ms < 0 || timeout_ms > STEP_MAX_MS)
		timeout_ms = STEP_MAX_MS;
	if (r->ctr_ival && r->next_ctr > now &&
	    (r->next_ctr - now) / 1000000 < (uint64_t)timeout_ms)
		timeout_ms = (int)((r->next_ctr - now) / 1000000) + 1;
	if (r->o.duration_ns && r->start_ns + r->o.duration_ns > now &&
	    (r->start_ns + r->o.duration_ns - now) / 1000000 < (uint64_t)timeout_ms)
		timeout_ms = (int)((r->start_ns + r->o.duration_ns - now) / 1000000) + 1;
	pfd[0].fd = rec_drain_fd(r->drain);
	if (r->have_wl && r->wl.pidfd >= 0 && !r->wl.exited)
		pfd[1].fd = r->wl.pidfd;
	if (timeout_ms > 0 && poll(pfd, 2, timeout_ms) > 0 && (pfd[0].revents & POLLIN))
		rec_drain_ack(r->drain);
	else if (timeout_ms == 0)
		rec_drain_ack(r->drain);   /* a driver's own poll saw the fd */
	ret = consume_all(r, &more);
	now = prec_now_ns();
	if (!ret)
		ret = prec_writer_flush_due(r->w, now);
	if (!ret && r->syms_write && now >= r->next_syms) {
		int sret = rec_symgather_write(r->syms, r->w, 0, now);

		if (sret < 0)
			ret = sret;
		r->next_syms = now + r->syms_ival;
	}
	if (!ret && r->src->ops->tick && now >= r->next_tick) {
		ret = r->src->ops->tick(r->src, &r->e, now, false);
		r->next_tick = now + TICK_NS;
	}
	if (!ret && r->ctr && r->ctr_ival && now >= r->next_ctr) {
		ret = rec_counters_snapshot(r->ctr, r->w, now, false);
		while (r->next_ctr <= now)
			r->next_ctr += r->ctr_ival;
	}
	if (ret < 0)
		return recording_fail_write(r, ret);
	/* what the spools still hold is taken by stop()'s final drain */
	why = stop_condition(r, now);
	if (why) {
		r->stop_reason = why;
		r->state = REC_RECORDING_ENDING;
		return 0;
	}
	return 1;
}

int rec_recording_stop(struct rec_recording *r, const char *reason)
{
	int ret = 0;

	if (!r)
		return 0;
	if (r->state == REC_RECORDING_STOPPED)
		return 0;
	if (r->state == REC_RECORDING_FAILED) {
		rec_drain_stop(r->drain, false, NULL, NULL);
		return r->err;
	}
	if (r->state == REC_RECORDING_RUNNING || !r->stop_reason[0])
		r->stop_reason = reason ? reason : "stopped";
	/* nothing new after disable, then take what is left (new() returns
	 * no recording without its source) */
	r->src->ops->disable(r->src);
	if (r->have_wl && r->wl_started && !r->wl.exited) {
		/* stopped while the command runs */
		kill(r->wl.pid, SIGTERM);
		rec_workload_wait(&r->wl);
	}
	if (r->drain) {
		bool more;

		struct rec_drain_stats ds;

		ret = rec_drain_stop(r->drain, true, consume_cb, r);
		/* everything moved is in the spools now */
		while (!ret) {
			ret = consume_all(r, &more);
			if (!more)
				break;
		}
		rec_drain_stats(r->drain, &ds);
		rec_log(REC_LOG_DEBUG, "%llu records handled after one of a later time "
			"(published late by the kernel, or out of order in their ring)",
			(unsigned long long)ds.late);
	}
	if (!ret && r->src->ops->tick)
		ret = r->src->ops->tick(r->src, &r->e, prec_now_ns(), true);
	if (!ret)
		ret = recording_end_output(r, prec_now_ns(), r->stop_reason, true);
	if (ret < 0) {
		recording_fail_write(r, ret);
		return ret;
	}
	r->state = REC_RECORDING_STOPPED;
	return 0;
}

/* ---- stats */

void rec_recording_stats(const struct rec_recording *r,
			 struct rec_recording_stats *st)
{
	struct prec_writer_stats ws = { 0 };

	memset(st, 0, sizeof(*st));
	st->state = r->state;
	st->stop_reason = r->stop_reason;
	st->elapsed_ns = r->start_ns ? prec_now_ns() - r->start_ns : 0;
	if (r->emit_ok) {
		st->st = r->e.st;
		st->cpu = r->e.cpu;
	}
	if (r->src) {
		st->nrings = r->src->nrings;
		st->ring_cpu = r->src->ring_cpu;
		st->mmap_pages = r->src->ring_pages;
	}
	if (r->w)
		prec_writer_stats(r->w, &ws);
	/* an ended output's bytes are in done_* already */
	if (r->state == REC_RECORDING_STOPPED) {
		st->bytes_written = r->done_written;
		st->bytes_raw = r->done_raw;
	} else {
		st->bytes_written = r->done_written + ws.bytes_written;
		st->bytes_raw = r->done_raw + ws.bytes_raw;
	}
	st->output_bytes = ws.bytes_written;
	st->outputs = r->outputs;
	st->output_name = r->output_name;
	if (r->drain) {
		struct rec_drain_stats ds;

		rec_drain_stats(r->drain, &ds);
		st->wakeups = ds.wakeups;
		st->spool_full = ds.spool_full;
	}
	st->event_lost = r->event_lost;
	st->bpf_records = r->emit_ok ? r->e.st.bpf : 0;
	st->switch_events = r->o.events.switch_events;
	st->have_workload = r->have_wl;
	st->workload_pid = r->have_wl ? r->wl.pid : -1;
	st->workload_exit = r->have_wl ? rec_workload_exit_code(&r->wl) : -1;
}

const char *rec_recording_summary(const struct rec_recording_stats *st,
				  char *buf, size_t len)
{
	uint64_t total = st->st.records + st->st.lost;
	char sw[48] = "";

	if (st->switch_events || st->st.switches)
		snprintf(sw, sizeof(sw), ", %llu switch events",
			 (unsigned long long)st->st.switches);
	snprintf(buf, len, "%llu samples%s, %llu lost (%.1f%%)",
		 (unsigned long long)st->st.samples, sw,
		 (unsigned long long)st->st.lost,
		 total ? 100.0 * (double)st->st.lost / (double)total : 0.0);
	return buf;
}

void rec_recording_free(struct rec_recording *r)
{
	if (!r)
		return;
	if (r->drain)
		rec_drain_stop(r->drain, false, NULL, NULL);
	if (r->state == REC_RECORDING_RUNNING && r->src)
		r->src->ops->disable(r->src);
	if (r->have_wl) {
		if (!r->wl_started)
			rec_workload_cancel(&r->wl);
		else if (!r->wl.exited) {
			kill(r->wl.pid, SIGTERM);
			rec_workload_wait(&r->wl);
		}
		rec_workload_release(&r->wl);
	}
	rec_drain_free(r->drain);
	if (r->emit_ok)
		rec_emit_release(&r->e);
	rec_symgather_free(r->syms);
	prec_writer_free(r->w);
	rec_counters_free(r->ctr);
	if (r->own_src)
		rec_source_free(r->src);
	free(r->ring_reported);
	free(r->cpu_base);
	free(r->cpu_out);
	rec_evspecs_release(&r->dummy);
	rec_threadmap_release(&r->tids);
	rec_cpumap_release(&r->cpus);
	free(r);
}
