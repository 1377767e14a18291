/*
 * cmd_stat.c - `perfrec stat`: count groups and print them perf-stat
 * style, live with -I.
 *
 * Built on the pieces `perfrec record` uses: the shared options
 * (cli/options.h: same targets, events, interval forms), CPU and thread
 * maps (events/), the command started held before exec
 * (recording/workload.h), counters (events/counters.h) and, with -o, the
 * same FileHeader and SessionEnd (encode/meta.h).
 *
 * Event strictness: events given with -e and the default list are shown
 * as <not supported> when this host lacks them (like perf stat); when
 * --counters is used, a group of only unsupported events fails up front,
 * as for `perfrec record --counters`.
 *
 * Waiting: SIGINT, SIGTERM and SIGCHLD are blocked outside ppoll(), which
 * waits on the command's pidfd with the next interval as timeout, so a
 * signal's handler runs only inside the wait and is never missed between
 * a check and the wait. SIGINT/SIGTERM with a
 * command running are passed on to it (the terminal sent them to it too)
 * and the count ends when it exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format/error.h"
#include "format/base/clock.h"
#include "format/scale.h"
#include "format/sink.h"
#include "format/writer.h"
#include "recorder/cli/cmd.h"
#include "recorder/cli/print.h"
#include "recorder/cli/statfmt.h"
#include "recorder/encode/meta.h"
#include "recorder/events/counters.h"
#include "recorder/log.h"
#include "recorder/recording/workload.h"

static const struct rec_cli_opt stat_opts[] = {
	REC_CLI_SECTION("events"),
	{ "event", 'e', "EVENTS", "events or groups to count, repeatable (default:\n"
	  "task-clock or cpu-clock, context-switches,\n"
	  "cpu-migrations, page-faults, cycles, instructions)" },
	{ "counters", REC_OPT_COUNTERS, "GROUP", "count GROUP, e.g. '{task-clock,page-faults}';\n"
	  "repeatable; fails if the host supports none of it" },
	{ "interval", 'I', "TIME", "print counts every TIME (e.g. 1s, 100ms; a bare\n"
	  "number is milliseconds)" },
	{ "interval-print", REC_OPT_INTERVAL_PRINT, "TIME", "the same as -I (perf's name)" },
	REC_CLI_DURATION_OPT,
	REC_CLI_SECTION("targets (one of, or a command)"),
	REC_CLI_TARGET_OPTS,
	REC_CLI_SECTION("output"),
	{ "output", 'o', "FILE", "also write the counts as a .prec trace" },
	{ "help", 'h', NULL, "this text" },
	{ NULL, 0, NULL, NULL },
};

static const char stat_usage[] =
	"usage: perfrec stat [options] [-a | -C CPUS | -p PIDS | -t TIDS] "
	"[-- COMMAND [ARGS...]]";
static const char stat_about[] =
	"Counts events and prints them like perf stat: for a command (until it\n"
	"exits; its exit status is returned), or for CPUs or tasks until Ctrl-C;\n"
	"-d TIME stops either after TIME.\n";

int rec_cli_stat_parse(int argc, char **argv, struct rec_cli_stat_args *a)
{
	struct rec_cli_parser p;
	const char *arg;
	int key, ret;

	memset(a, 0, sizeof(*a));
	ret = rec_cli_parser_init(&p, stat_opts);
	if (ret < 0)
		return ret;
	p.common = &a->c;
	while ((key = rec_cli_next(&p, argc, argv, &arg)) > 0) {
		if (key != 'h') {
			ret = -EINVAL;
			goto out;
		}
		a->help = true;
	}
	ret = key;
	if (ret < 0 || a->help)
		goto out;
	ret = rec_cli_common_finish(&a->c, argc, argv, p.optind);
	if (!ret && !a->c.all_cpus && !a->c.have_cpus && a->c.tasks == REC_TARGET_SYSTEM &&
	    !a->c.command) {
		rec_log(REC_LOG_ERROR, "nothing to count: give a command, -a, -C CPUS, "
			"-p PIDS or -t TIDS");
		ret = -EINVAL;
	}
out:
	rec_cli_parser_release(&p);
	return ret;
}

/* Previous totals for interval deltas, per event. */
struct stat_prev {
	uint64_t value, enabled, running;
};

static void print_line(FILE *f, const char *prefix, const char *name,
		       bool supported, uint32_t type, uint64_t config,
		       const struct rec_counter_value *v, uint64_t clock_ns,
		       uint64_t wall_ns)
{
	char line[512];

	rec_stat_format_line(line, sizeof(line), prefix, name, supported,
			     type, config, v->value, v->enabled, v->running,
			     clock_ns, wall_ns);
	fputs(line, f);
}

/* Event i's value, minus prev (an interval's delta) when prev is given. */
static bool value_of(const struct rec_counters *c, size_t i,
		     const struct stat_prev *prev, struct rec_counter_value *v)
{
	memset(v, 0, sizeof(*v));
	if (rec_counters_event_value(c, i, v) < 0)
		return false;
	if (prev) {
		v->value -= prev[i].value;
		v->enabled -= prev[i].enabled;
		v->running -= prev[i].running;
	}
	return true;
}

/* Clock total (scaled) among the counted events, for rates. */
static uint64_t clock_total(const struct rec_counters *c,
			    const struct stat_prev *prev)
{
	for (size_t i = 0; i < rec_counters_nevents(c); i++) {
		struct rec_counter_value v;
		struct prec_scaled sc;
		uint32_t type;
		uint64_t config;

		rec_counters_event_kind(c, i, &type, &config);
		if (!rec_stat_is_clock(type, config) || !value_of(c, i, prev, &v))
			continue;
		if (prec_scale(v.value, v.enabled, v.running, &sc) !=
		    PREC_SCALE_NOT_COUNTED)
			return sc.value;
	}
	return 0;
}

/* Prints every event: totals (prev NULL) or deltas from prev. */
static void print_all(FILE *f, const struct rec_counters *c,
		      const struct stat_prev *prev, const char *prefix,
		      uint64_t wall_ns)
{
	uint64_t clk = clock_total(c, prev);

	for (size_t i = 0; i < rec_counters_nevents(c); i++) {
		struct rec_counter_value v;
		uint32_t type;
		uint64_t config;
		bool ok = value_of(c, i, prev, &v);

		rec_counters_event_kind(c, i, &type, &config);
		print_line(f, prefix, rec_counters_event_name(c, i), ok, type,
			   config, &v, clk, wall_ns);
	}
}

static void save_prev(const struct rec_counters *c, struct stat_prev *prev)
{
	for (size_t i = 0; i < rec_counters_nevents(c); i++) {
		struct rec_counter_value v;

		value_of(c, i, NULL, &v);
		prev[i].value = v.value;
		prev[i].enabled = v.enabled;
		prev[i].running = v.running;
	}
}

/* "'system wide'", "'CPU(s) 0,1'", "'CMD ARGS'", "process id '12'" */
static void print_what(FILE *f, const struct rec_cli_common *c)
{
	if (c->command && c->target != REC_TARGET_CPUS && !c->all_cpus) {
		fprintf(f, "'");
		for (char **a = c->command; *a; a++)
			fprintf(f, "%s%s", a == c->command ? "" : " ", *a);
		fprintf(f, "'");
	} else if (c->target == REC_TARGET_CPUS) {
		fprintf(f, "'CPU(s) ");
		for (size_t i = 0; i < c->cpus.n; i++)
			fprintf(f, "%s%d", i ? "," : "", c->cpus.cpu[i]);
		fprintf(f, "'");
	} else if (c->target == REC_TARGET_PIDS || c->target == REC_TARGET_TIDS) {
		fprintf(f, "%s id '", c->target == REC_TARGET_PIDS ? "process" : "thread");
		for (size_t i = 0; i < c->ids.n; i++)
			fprintf(f, "%s%d", i ? "," : "", c->ids.tid[i]);
		fprintf(f, "'");
	} else {
		fprintf(f, "'system wide'");
	}
}

/* The events counted, the shared targets, the trace file. */
struct stat_run {
	struct rec_cli_common *c;
	struct rec_counters *ctr;
	struct rec_cpumap cpus;          /* per-CPU counting */
	struct rec_threadmap tasks;      /* per-task counting */
	bool per_cpu;
	struct rec_workload wl;
	bool have_wl, wl_started;
	struct prec_sink *sink;
	struct prec_writer *w;
};

static int add_events(struct stat_run *s, bool *strict)
{
	struct rec_cli_common *c = s->c;

	for (size_t i = 0; i < c->nevents; i++)
		if (rec_counters_add(s->ctr, c->events[i]) < 0)
			return -EINVAL;
	for (size_t i = 0; i < c->ncounters; i++)
		if (rec_counters_add(s->ctr, c->counters[i]) < 0)
			return -EINVAL;
	*strict = c->ncounters > 0;
	if (!c->nevents && !c->ncounters &&
	    rec_counters_add(s->ctr, s->per_cpu ?
			     "cpu-clock,context-switches,cpu-migrations,page-faults,"
			     "cycles,instructions" :
			     "task-clock,context-switches,cpu-migrations,page-faults,"
			     "cycles,instructions") < 0)
		return -EINVAL;
	return 0;
}

/* Targets: CPUs, or the threads of -p/-t, or the command's pid. */
static int open_counters(struct stat_run *s)
{
	struct rec_cli_common *c = s->c;
	int ret;

	if (s->per_cpu) {
		if (c->have_cpus) {
			s->cpus = c->cpus;
			c->cpus.cpu = NULL;
			c->cpus.n = 0;
		} else if ((ret = rec_cpumap_online(&s->cpus)) < 0) {
			rec_log(REC_LOG_ERROR, "cannot list the online CPUs: %s",
				strerror(-ret));
			return ret;
		}
	} else if (c->tasks != REC_TARGET_SYSTEM) {
		ret = rec_threadmap_expand(&s->tasks, c->ids.tid, c->ids.n,
					   c->tasks == REC_TARGET_PIDS, NULL);
		if (ret < 0)
			return ret;
	}
	if (c->command) {
		ret = rec_workload_prepare(&s->wl, c->command);
		if (ret < 0) {
			rec_log(REC_LOG_ERROR, "cannot start '%s': %s", c->command[0],
				strerror(-ret));
			return ret;
		}
		s->have_wl = true;
	}
	if (s->per_cpu)
		return rec_counters_open(s->ctr, s->cpus.cpu, s->cpus.n, NULL, 0, false);
	if (s->have_wl)
		return rec_counters_open(s->ctr, NULL, 0, &s->wl.pid, 1, true);
	return rec_counters_open(s->ctr, NULL, 0, s->tasks.tid, s->tasks.n, false);
}

static int open_trace(struct stat_run *s, int argc, char **argv, uint64_t start)
{
	struct rec_meta_header h;
	char target[256];
	int fd, ret;

	fd = open(s->c->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rec_log(REC_LOG_ERROR, "cannot write '%s': %s", s->c->output,
			strerror(errno));
		return -errno;
	}
	s->sink = prec_sink_fd_new(fd, 1);
	if (!s->sink) {
		close(fd);
		return -ENOMEM;
	}
	s->w = prec_writer_new(s->sink, NULL);
	if (!s->w) {
		rec_log(REC_LOG_ERROR, "cannot write '%s': %s", s->c->output,
			strerror(errno));
		return -errno;
	}
	memset(&h, 0, sizeof(h));
	h.argc = argc;
	h.argv = argv;
	h.start_ns = start;
	h.target = s->per_cpu ?
		rec_meta_target_string(s->c->all_cpus ? REC_TARGET_SYSTEM : REC_TARGET_CPUS,
				       s->cpus.cpu, s->cpus.n, target, sizeof(target)) :
		rec_meta_target_string(s->have_wl ? REC_TARGET_COMMAND : s->c->tasks,
				       s->c->ids.tid, s->c->ids.n, target, sizeof(target));
	if (s->have_wl) {
		h.workload = s->c->command;
		h.workload_pid = s->wl.pid;
	}
	ret = rec_meta_write_header(s->w, &h);
	if (!ret)
		ret = rec_counters_describe(s->ctr, s->w, 0, 0);
	if (ret < 0)
		rec_log(REC_LOG_ERROR, "writing '%s': %s", s->c->output, prec_strerror(ret));
	return ret;
}

static volatile sig_atomic_t got_signal;

/* Waits for the next interval (next, 0 = none), the end of -d (end, 0 =
 * none), a signal or the command's exit. Returns 0 for an interval tick,
 * 1 to stop (reason set). */
static int wait_event(struct stat_run *s, uint64_t next, uint64_t end,
		      const sigset_t *orig, const char **reason)
{
	for (;;) {
		struct pollfd pfd = { s->have_wl ? s->wl.pidfd : -1, POLLIN, 0 };
		struct timespec ts, *tsp = NULL;
		uint64_t now = prec_now_ns();
		uint64_t until = next && (!end || next < end) ? next : end;
		int sig;

		if (end && now >= end) {
			*reason = "duration";
			return 1;
		}
		if (until) {
			uint64_t d = until > now ? until - now : 0;

			ts.tv_sec = (time_t)(d / 1000000000ull);
			ts.tv_nsec = (long)(d % 1000000000ull);
			tsp = &ts;
		}
		if (ppoll(&pfd, 1, tsp, orig) == 0) {
			if (end && prec_now_ns() >= end)
				continue;   /* the duration ends: said above */
			return 0;
		}
		if (s->have_wl && rec_workload_poll(&s->wl)) {
			*reason = "workload exited";
			return 1;
		}
		/* signals arrive only inside ppoll: no race with this check */
		sig = got_signal;
		got_signal = 0;
		if (sig == SIGINT || sig == SIGTERM) {
			if (s->have_wl && !s->wl.exited) {
				kill(s->wl.pid, sig);
				continue;
			}
			*reason = "signal";
			return 1;
		}
	}
}

static void on_signal(int sig)
{
	if (sig != SIGCHLD)
		got_signal = sig;
}

static int run(struct rec_cli_common *c, int argc, char **argv)
{
	struct stat_run s;
	struct stat_prev *prev = NULL;
	struct sigaction sa;
	sigset_t set, orig;
	bool strict = false;
	uint64_t start, last, next = 0, end, until = 0;
	const char *reason = "signal";
	int ret, rc = 1;

	memset(&s, 0, sizeof(s));
	s.c = c;
	s.per_cpu = c->all_cpus || c->have_cpus;
	/* Handlers first (an early SIGINT must not kill us), the command is
	 * forked with them unblocked, then they are blocked outside ppoll. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	s.ctr = rec_counters_new();
	if (!s.ctr) {
		rec_log(REC_LOG_ERROR, "out of memory");
		return 1;
	}
	if (add_events(&s, &strict) < 0) {
		rc = 2;
		goto out;
	}
	rec_counters_set_allow_unsupported(s.ctr, !strict);
	rec_counters_set_interval(s.ctr, c->have_interval ? c->interval_ns : 0);
	prev = calloc(rec_counters_nevents(s.ctr) + 1, sizeof(*prev));
	if (!prev)
		goto out;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	if (open_counters(&s) < 0)
		goto out;
	sigprocmask(SIG_BLOCK, &set, &orig);
	for (size_t i = 0; i < rec_counters_nevents(s.ctr); i++) {
		const char *e = rec_counters_event_error(s.ctr, i);

		if (e && rec_counters_event_opened(s.ctr, i))
			rec_log(REC_LOG_WARN, "%s", e);
	}
	start = prec_now_ns();
	if (c->output && open_trace(&s, argc, argv, start) < 0)
		goto out_mask;
	/* with enable_on_exec the kernel starts the groups at exec */
	if (!(s.have_wl && !s.per_cpu)) {
		ret = rec_counters_enable(s.ctr);
		if (ret < 0) {
			rec_log(REC_LOG_ERROR, "enabling counters: %s", strerror(-ret));
			goto out_mask;
		}
	}
	start = prec_now_ns();
	if (s.have_wl) {
		s.wl_started = true;
		ret = rec_workload_start(&s.wl);
		if (ret < 0) {
			rec_log(REC_LOG_ERROR, "cannot run '%s': %s", c->command[0],
				strerror(-ret));
			goto out_mask;
		}
	}
	if (c->have_interval) {
		next = start + c->interval_ns;
		fprintf(stderr, "#           time             counts unit events\n");
	}
	last = start;
	if (c->duration_ns)
		until = start + c->duration_ns;
	while (!wait_event(&s, next, until, &orig, &reason)) {
		uint64_t now = prec_now_ns();
		char pfx[32];

		ret = rec_counters_snapshot(s.ctr, s.w, now, false);
		if (ret < 0) {
			rec_log(REC_LOG_ERROR, "reading counters: %s", strerror(-ret));
			reason = "error";
			break;
		}
		snprintf(pfx, sizeof(pfx), "%16.9f", (double)(now - start) / 1e9);
		print_all(stderr, s.ctr, prev, pfx, now - last);
		save_prev(s.ctr, prev);
		last = now;
		next += c->interval_ns;
		if (next < now)
			next = now + c->interval_ns;
		if (s.w)
			prec_writer_flush_due(s.w, now);
	}
	end = prec_now_ns();
	ret = rec_counters_snapshot(s.ctr, s.w, end, true);
	if (s.have_wl && !s.wl.exited && !strcmp(reason, "duration")) {
		/* -d ended the count: the command ends too, as with record */
		kill(s.wl.pid, SIGTERM);
		rec_workload_wait(&s.wl);
	}
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "final read: %s", strerror(-ret));
		goto out_mask;
	}
	for (size_t g = 0; g < rec_counters_ngroups(s.ctr); g++)
		if (rec_counters_group_never_ran(s.ctr, g))
			rec_log(REC_LOG_WARN, "the kernel never scheduled group '%s' "
				"(time_running = 0): it does not fit the PMU's counters; "
				"split it", rec_counters_group_name(s.ctr, g));
	if (c->have_interval && end > last) {
		char pfx[32];

		snprintf(pfx, sizeof(pfx), "%16.9f", (double)(end - start) / 1e9);
		print_all(stderr, s.ctr, prev, pfx, end - last);
	}
	fprintf(stderr, "\n Performance counter stats for ");
	print_what(stderr, c);
	fprintf(stderr, ":\n\n");
	print_all(stderr, s.ctr, NULL, "", end - start);
	fprintf(stderr, "\n%18.9f seconds time elapsed\n\n", (double)(end - start) / 1e9);
	rc = s.have_wl && s.wl.exited ? rec_workload_exit_code(&s.wl) : 0;
	if (s.w) {
		struct rec_meta_end e;

		memset(&e, 0, sizeof(e));
		e.end_ns = end;
		e.reason = reason;
		e.exit_status = rc;
		ret = rec_meta_write_end(s.w, &e);
		if (!ret)
			ret = prec_writer_close(s.w);
		if (ret < 0) {
			rec_log(REC_LOG_ERROR, "writing '%s': %s", c->output, prec_strerror(ret));
			rc = rc ? rc : 1;
		}
	}
out_mask:
	sigprocmask(SIG_SETMASK, &orig, NULL);
out:
	if (s.have_wl) {
		if (!s.wl_started)
			rec_workload_cancel(&s.wl);   /* the held child exits */
		else
			rec_workload_wait(&s.wl);
		rec_workload_release(&s.wl);
	}
	prec_writer_free(s.w);
	prec_sink_free(s.sink);
	free(prev);
	rec_counters_free(s.ctr);
	rec_cpumap_release(&s.cpus);
	rec_threadmap_release(&s.tasks);
	return rc;
}

int rec_cli_stat(int argc, char **argv)
{
	struct rec_cli_stat_args a;
	int ret, code = 2;

	rec_cli_print_install(false);
	ret = rec_cli_stat_parse(argc, argv, &a);
	if (a.help) {
		rec_cli_help(stdout, stat_usage, stat_about, stat_opts, NULL);
		code = 0;
	} else if (ret < 0) {
		fprintf(stderr, "perfrec: see 'perfrec stat --help'\n");
	} else {
		code = run(&a.c, argc, argv);
	}
	rec_cli_common_release(&a.c);
	return code;
}
