/*
 * stat.c - `perfrec stat`: count groups and print them perf-stat style.
 *
 *   perfrec stat [--counters G]... [-e EVENTS]... [-I MS]
 *                [-a | -C CPUS | -p PIDS] [-o FILE] [--] [CMD ARGS...]
 *
 * The counting is rec_counters (counters.h); this file is the command: it
 * parses the command line, starts the workload, waits (printing interval
 * lines with -I), and prints the scaled totals (format/scale.h). It is a
 * command, so unlike the libraries it prints to stderr, as perf stat does.
 *
 * Event strictness: events given with -e and the default list are shown
 * as <not supported> when this host lacks them (like perf stat); when
 * --counters is used, a group of only unsupported events fails up front,
 * as for `perfrec record --counters`.
 *
 * Sequence with a command: fork; the child blocks on a pipe; counters are
 * opened on the child (enable_on_exec, inherit) or on the CPUs; the pipe
 * releases the child, which execs. The parent blocks SIGCHLD/SIGINT/SIGTERM
 * and waits for them with sigtimedwait() whose timeout is the next interval,
 * so there is no polling and no signal handler.
 */
#include "recorder/cli/cmd_stat.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/error.h"
#include "format/scale.h"
#include "format/sink.h"
#include "format/writer.h"
#include "recorder/events/counters.h"
#include "recorder/events/groupopen.h"

#define STAT_MAX_TARGETS 4096

struct stat_opts {
	bool system_wide;
	const char *cpu_list;
	const char *pid_list;
	const char *output;
	uint64_t interval_ms;
	bool strict;          /* --counters given */
	bool any_events;
	char **cmd;           /* NULL-terminated, or NULL */
};

/* Previous totals for interval deltas, per event. */
struct stat_prev {
	uint64_t value, enabled, running;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: perfrec stat [--counters '{a,b,...}']... [-e EVENTS]... "
		"[-I MS]\n"
		"                    [-a | -C CPUS | -p PIDS] [-o FILE] [--] "
		"[CMD [ARGS...]]\n"
		"  --counters G  count group G (repeatable); fails if the host "
		"supports none of it\n"
		"  -e EVENTS     events or groups to count (repeatable)\n"
		"  -I MS         print counts every MS milliseconds\n"
		"  -a            all CPUs    -C CPUS  CPU list (0-3,5)\n"
		"  -p PIDS       existing processes (all their threads)\n"
		"  -o FILE       also write the counts as a .prec trace\n");
}

/* Parses "0-3,5" into out[]; returns the count or a negative errno. */
static int parse_int_list(const char *s, int *out, int max)
{
	int n = 0;

	while (*s) {
		char *end;
		long a, b;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		errno = 0;
		a = strtol(s, &end, 10);
		if (errno || a < 0 || a > 0x7fffffff)
			return -EINVAL;
		b = a;
		s = end;
		if (*s == '-') {
			s++;
			if (!isdigit((unsigned char)*s))
				return -EINVAL;
			b = strtol(s, &end, 10);
			if (errno || b < a || b > 0x7fffffff)
				return -EINVAL;
			s = end;
		}
		for (long v = a; v <= b; v++) {
			if (n >= max)
				return -E2BIG;
			out[n++] = (int)v;
		}
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
		else if (*s == '\n')
			break;
	}
	return n;
}

static int online_cpus(int *out, int max)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int n;

	if (!f) {
		long nc = sysconf(_SC_NPROCESSORS_ONLN);

		if (nc <= 0)
			return -ENOENT;
		for (n = 0; n < nc && n < max; n++)
			out[n] = n;
		return n;
	}
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	return parse_int_list(buf, out, max);
}

/* Every thread of each pid in the list (/proc/PID/task). */
static int expand_pids(const char *list, int *out, int max)
{
	int pids[STAT_MAX_TARGETS];
	int np = parse_int_list(list, pids, STAT_MAX_TARGETS), n = 0;

	if (np < 0)
		return np;
	for (int i = 0; i < np; i++) {
		char path[64];
		int tids[STAT_MAX_TARGETS];
		int nt = 0;

		snprintf(path, sizeof(path), "/proc/%d/task", pids[i]);
		DIR *d = opendir(path);
		struct dirent *de;

		if (!d)
			return -ESRCH;
		while ((de = readdir(d)) && nt < STAT_MAX_TARGETS)
			if (isdigit((unsigned char)de->d_name[0]))
				tids[nt++] = atoi(de->d_name);
		closedir(d);
		for (int k = 0; k < nt; k++) {
			if (n >= max)
				return -E2BIG;
			out[n++] = tids[k];
		}
	}
	return n;
}

static bool is_clock(uint32_t type, uint64_t config)
{
	return type == PERF_TYPE_SOFTWARE &&
	       (config == PERF_COUNT_SW_TASK_CLOCK ||
		config == PERF_COUNT_SW_CPU_CLOCK);
}

size_t rec_stat_format_line(char *buf, size_t len, const char *prefix,
			    const char *name, bool supported, uint32_t type,
			    uint64_t config, uint64_t value, uint64_t enabled,
			    uint64_t running, uint64_t clock_ns,
			    uint64_t wall_ns)
{
	struct prec_scaled sc;
	char num[64], rate[64] = "", pct[32] = "";
	const char *unit = "";
	int st, n;

	if (!supported) {
		n = snprintf(buf, len, "%s%18s %-4s %s\n", prefix,
			     "<not supported>", "", name);
		return n < 0 ? 0 : (size_t)n;
	}
	st = prec_scale(value, enabled, running, &sc);
	if (st == PREC_SCALE_NOT_COUNTED) {
		n = snprintf(buf, len, "%s%18s %-4s %s\n", prefix,
			     "<not counted>", "", name);
		return n < 0 ? 0 : (size_t)n;
	}
	if (is_clock(type, config)) {
		unit = "msec";
		snprintf(num, sizeof(num), "%.2f", (double)sc.value / 1e6);
		if (wall_ns)
			snprintf(rate, sizeof(rate), "# %8.3f CPUs utilized",
				 (double)sc.value / (double)wall_ns);
	} else {
		double secs = (double)(clock_ns ? clock_ns : wall_ns) / 1e9;

		snprintf(num, sizeof(num), "%" PRIu64, sc.value);
		if (secs > 0) {
			double r = (double)sc.value / secs;
			const char *p = "";

			if (r >= 1e9) {
				r /= 1e9;
				p = "G";
			} else if (r >= 1e6) {
				r /= 1e6;
				p = "M";
			} else if (r >= 1e3) {
				r /= 1e3;
				p = "K";
			}
			snprintf(rate, sizeof(rate), "# %8.3f %s/sec", r, p);
		}
	}
	if (st == PREC_SCALE_MULTIPLEXED)
		snprintf(pct, sizeof(pct), "  (%.2f%%)", sc.running_pct);
	n = snprintf(buf, len, "%s%18s %-4s %-32s %-28s%s\n", prefix, num,
		     unit, name, rate, pct);
	return n < 0 ? 0 : (size_t)n;
}

static void print_line(FILE *f, const char *prefix, const char *name,
		       bool supported, uint32_t type, uint64_t config,
		       uint64_t value, uint64_t enabled, uint64_t running,
		       uint64_t clock_ns, uint64_t wall_ns)
{
	char line[512];

	rec_stat_format_line(line, sizeof(line), prefix, name, supported,
			     type, config, value, enabled, running, clock_ns,
			     wall_ns);
	fputs(line, f);
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
		if (!is_clock(type, config) ||
		    rec_counters_event_value(c, i, &v) < 0)
			continue;
		if (prev) {
			v.value -= prev[i].value;
			v.enabled -= prev[i].enabled;
			v.running -= prev[i].running;
		}
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
		struct rec_counter_value v = { 0 };
		uint32_t type;
		uint64_t config;
		bool ok = rec_counters_event_value(c, i, &v) == 0;

		rec_counters_event_kind(c, i, &type, &config);
		if (ok && prev) {
			v.value -= prev[i].value;
			v.enabled -= prev[i].enabled;
			v.running -= prev[i].running;
		}
		print_line(f, prefix, rec_counters_event_name(c, i), ok, type,
			   config, v.value, v.enabled, v.running, clk, wall_ns);
	}
}

static void save_prev(const struct rec_counters *c, struct stat_prev *prev)
{
	for (size_t i = 0; i < rec_counters_nevents(c); i++) {
		struct rec_counter_value v = { 0 };

		rec_counters_event_value(c, i, &v);
		prev[i].value = v.value;
		prev[i].enabled = v.enabled;
		prev[i].running = v.running;
	}
}

static struct prec_writer *open_output(const char *path,
				       struct prec_sink **sinkp)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	struct prec_writer *w;

	if (fd < 0)
		return NULL;
	*sinkp = prec_sink_fd_new(fd, 1);
	if (!*sinkp) {
		close(fd);
		return NULL;
	}
	w = prec_writer_new(*sinkp, NULL);
	if (!w) {
		int e = errno;

		prec_sink_free(*sinkp);
		*sinkp = NULL;
		errno = e;
	}
	return w;
}

static int write_header(struct prec_writer *w, int argc, char **argv,
			const char *target, char **cmd, int child,
			uint64_t start)
{
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__FileHeader h = PERFREC__FILE_HEADER__INIT;
	struct utsname u;
	struct timespec rt;
	char host[256] = "";
	size_t ncmd = 0;

	if (uname(&u) == 0) {
		h.kernel_release = u.release;
		h.kernel_version = u.version;
		h.machine = u.machine;
	}
	gethostname(host, sizeof(host) - 1);
	h.hostname = host;
	h.recorder_version = PERFREC_VERSION;
	h.cpus_online = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	h.cpus_configured = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	h.page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	clock_gettime(CLOCK_REALTIME, &rt);
	h.monotonic_ns = mono_ns();
	h.realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull +
			(uint64_t)rt.tv_nsec;
	h.n_cmdline = (size_t)argc;
	h.cmdline = argv;
	h.start_time = start;
	h.target = (char *)target;
	while (cmd && cmd[ncmd])
		ncmd++;
	h.n_workload = ncmd;
	h.workload = cmd;
	h.workload_pid = child;
	pkt.data_case = PERFREC__PACKET__DATA_HEADER;
	pkt.header = &h;
	return prec_writer_append(w, 0, &pkt, start);
}

static int write_end(struct prec_writer *w, uint64_t end, int status,
		     const char *reason)
{
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__SessionEnd e = PERFREC__SESSION_END__INIT;
	struct prec_writer_stats st;

	prec_writer_stats(w, &st);
	e.end_time = end;
	e.exit_status = status;
	e.stop_reason = (char *)reason;
	e.bytes_raw = st.bytes_raw;
	e.bytes_written = st.bytes_written;
	pkt.data_case = PERFREC__PACKET__DATA_SESSION_END;
	pkt.session_end = &e;
	return prec_writer_append(w, 0, &pkt, end);
}

/* Forks cmd; the child waits for a byte on the returned pipe fd before
 * exec. Returns the pid (and *go_fd), or -errno. */
static int spawn_held(char **cmd, const sigset_t *orig, int *go_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		char b;

		sigprocmask(SIG_SETMASK, orig, NULL);
		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(127);   /* parent gave up */
		execvp(cmd[0], cmd);
		fprintf(stderr, "perfrec stat: cannot run '%s': %s\n", cmd[0],
			strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*go_fd = p[1];
	return pid;
}

static int parse_args(int argc, char **argv, struct rec_counters *c,
		      struct stat_opts *o)
{
	static const struct option longopts[] = {
		{ "counters", required_argument, NULL, 'G' },
		{ "event", required_argument, NULL, 'e' },
		{ "interval-print", required_argument, NULL, 'I' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[512];
	int opt;

	optind = 0;   /* full getopt reset: main may have used it */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+e:I:aC:p:o:h", longopts,
				  NULL)) != -1) {
		char *end;

		switch (opt) {
		case 'G':
		case 'e':
			if (rec_counters_add(c, optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "perfrec stat: %s\n", err);
				return -EINVAL;
			}
			o->any_events = true;
			if (opt == 'G')
				o->strict = true;
			break;
		case 'I':
			errno = 0;
			o->interval_ms = strtoull(optarg, &end, 10);
			if (errno || *end || o->interval_ms < 10 ||
			    o->interval_ms > 86400000ull) {
				fprintf(stderr, "perfrec stat: bad -I '%s': "
					"milliseconds, at least 10\n", optarg);
				return -EINVAL;
			}
			break;
		case 'a':
			o->system_wide = true;
			break;
		case 'C':
			o->cpu_list = optarg;
			break;
		case 'p':
			o->pid_list = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			fprintf(stderr, "perfrec stat: bad option '%s'\n",
				argv[optind - 1]);
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if ((o->system_wide || o->cpu_list) && o->pid_list) {
		fprintf(stderr, "perfrec stat: -p excludes -a and -C\n");
		return -EINVAL;
	}
	if (o->pid_list && o->cmd) {
		fprintf(stderr, "perfrec stat: -p excludes a command\n");
		return -EINVAL;
	}
	if (!o->system_wide && !o->cpu_list && !o->pid_list && !o->cmd) {
		fprintf(stderr, "perfrec stat: nothing to count: give a "
			"command, -a, -C CPUS or -p PIDS\n");
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

int rec_stat_main(int argc, char **argv)
{
	struct stat_opts o = { 0 };
	struct rec_counters *c = rec_counters_new();
	struct prec_sink *sink = NULL;
	struct prec_writer *w = NULL;
	struct stat_prev *prev = NULL;
	int *targets = NULL, ntargets = 0;
	bool per_cpu;
	sigset_t set, orig;
	int child = -1, go_fd = -1, status = 0, rc = 1, ret;
	uint64_t start, last, next = 0, end;
	const char *reason = "signal";
	char err[1024], target[128];

	if (!c) {
		fprintf(stderr, "perfrec stat: out of memory\n");
		return 1;
	}
	ret = parse_args(argc, argv, c, &o);
	if (ret) {
		rc = ret > 0 ? 0 : 2;
		goto out;
	}
	per_cpu = o.system_wide || o.cpu_list;
	if (!o.any_events) {
		const char *def = per_cpu ?
			"cpu-clock,context-switches,cpu-migrations,page-faults,"
			"cycles,instructions" :
			"task-clock,context-switches,cpu-migrations,page-faults,"
			"cycles,instructions";

		if (rec_counters_add(c, def, err, sizeof(err)) < 0) {
			fprintf(stderr, "perfrec stat: default events: %s\n",
				err);
			goto out;
		}
	}
	rec_counters_set_allow_unsupported(c, !o.strict);
	rec_counters_set_interval(c, o.interval_ms * 1000000ull);

	targets = calloc(STAT_MAX_TARGETS, sizeof(int));
	prev = calloc(rec_counters_nevents(c) + 1, sizeof(*prev));
	if (!targets || !prev) {
		fprintf(stderr, "perfrec stat: out of memory\n");
		goto out;
	}
	if (o.cpu_list)
		ntargets = parse_int_list(o.cpu_list, targets, STAT_MAX_TARGETS);
	else if (o.system_wide)
		ntargets = online_cpus(targets, STAT_MAX_TARGETS);
	else if (o.pid_list)
		ntargets = expand_pids(o.pid_list, targets, STAT_MAX_TARGETS);
	if (ntargets < 0 || ((o.cpu_list || o.system_wide || o.pid_list) &&
			     ntargets == 0)) {
		fprintf(stderr, "perfrec stat: bad %s list '%s': %s\n",
			o.pid_list ? "pid" : "cpu",
			o.pid_list ? o.pid_list :
			o.cpu_list ? o.cpu_list : "online",
			ntargets ? strerror(-ntargets) : "empty");
		rc = 2;
		goto out;
	}

	/* Blocked from here on: delivered through sigtimedwait(). */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &orig);

	if (o.cmd) {
		child = spawn_held(o.cmd, &orig, &go_fd);
		if (child < 0) {
			fprintf(stderr, "perfrec stat: fork: %s\n",
				strerror(-child));
			goto out_mask;
		}
		if (!per_cpu) {
			targets[0] = child;
			ntargets = 1;
		}
	}
	if (per_cpu)
		ret = rec_counters_open(c, targets, (size_t)ntargets, NULL, 0,
					false, err, sizeof(err));
	else
		ret = rec_counters_open(c, NULL, 0, targets, (size_t)ntargets,
					o.cmd != NULL, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "perfrec stat: %s\n", err);
		goto out_child;
	}
	for (size_t i = 0; i < rec_counters_nevents(c); i++) {
		const char *e = rec_counters_event_error(c, i);

		if (e && rec_counters_event_opened(c, i))
			fprintf(stderr, "perfrec stat: warning: %s\n", e);
	}

	if (per_cpu)
		snprintf(target, sizeof(target), "%s", o.system_wide ?
			 "system-wide" : "cpus");
	else
		snprintf(target, sizeof(target), "%s",
			 o.cmd ? "command" : "pid");
	start = mono_ns();
	if (o.output) {
		w = open_output(o.output, &sink);
		if (!w) {
			fprintf(stderr, "perfrec stat: cannot write '%s': %s\n",
				o.output, strerror(errno));
			goto out_child;
		}
		ret = write_header(w, argc, argv, target, o.cmd, child, start);
		if (!ret)
			ret = rec_counters_describe(c, w, 0, 0);
		if (ret < 0) {
			fprintf(stderr, "perfrec stat: writing '%s': %s\n",
				o.output, strerror(-ret));
			goto out_child;
		}
	}
	/* With enable_on_exec the kernel starts the groups at exec. */
	if (!(o.cmd && !per_cpu)) {
		ret = rec_counters_enable(c);
		if (ret < 0) {
			fprintf(stderr, "perfrec stat: enabling counters: %s\n",
				strerror(-ret));
			goto out_child;
		}
	}
	start = mono_ns();
	if (child > 0) {
		if (write(go_fd, "g", 1) != 1) {
			fprintf(stderr, "perfrec stat: cannot start the "
				"command: %s\n", strerror(errno));
			goto out_child;
		}
		close(go_fd);
		go_fd = -1;
	}
	if (o.interval_ms) {
		next = start + o.interval_ms * 1000000ull;
		fprintf(stderr, "#           time             counts unit "
			"events\n");
	}
	last = start;

	for (;;) {
		struct timespec ts, *tsp = NULL;
		siginfo_t si;
		uint64_t now = mono_ns();
		int sig;

		if (o.interval_ms) {
			uint64_t d = next > now ? next - now : 0;

			ts.tv_sec = (time_t)(d / 1000000000ull);
			ts.tv_nsec = (long)(d % 1000000000ull);
			tsp = &ts;
		}
		sig = tsp ? sigtimedwait(&set, &si, tsp) :
			    sigwaitinfo(&set, &si);
		if (sig < 0 && errno == EAGAIN) {
			char pfx[32];

			now = mono_ns();
			ret = rec_counters_snapshot(c, w, now, false);
			if (ret < 0) {
				fprintf(stderr, "perfrec stat: reading "
					"counters: %s\n", strerror(-ret));
				reason = "error";
				break;
			}
			snprintf(pfx, sizeof(pfx), "%16.9f",
				 (double)(now - start) / 1e9);
			print_all(stderr, c, prev, pfx, now - last);
			save_prev(c, prev);
			last = now;
			next += o.interval_ms * 1000000ull;
			if (next < now)
				next = now + o.interval_ms * 1000000ull;
			if (w)
				prec_writer_flush_due(w, now);
			continue;
		}
		if (sig < 0)
			continue;   /* EINTR */
		if (sig == SIGCHLD) {
			if (child > 0 && waitpid(child, &status, WNOHANG) ==
			    child) {
				child = -1;
				reason = "workload exited";
				break;
			}
			continue;
		}
		/* SIGINT / SIGTERM: the terminal sent SIGINT to the command
		 * too; wait for it, then report. */
		if (child > 0) {
			kill(child, sig);
			continue;
		}
		break;
	}
	end = mono_ns();
	ret = rec_counters_snapshot(c, w, end, true);
	if (ret < 0) {
		fprintf(stderr, "perfrec stat: final read: %s\n",
			strerror(-ret));
		goto out_child;
	}
	for (size_t g = 0; g < rec_counters_ngroups(c); g++)
		if (rec_counters_group_never_ran(c, g))
			fprintf(stderr, "perfrec stat: warning: the kernel never "
				"scheduled group '%s' (time_running = 0): it "
				"does not fit the PMU's counters; split it\n",
				rec_counters_group_name(c, g));
	if (o.interval_ms && end > last) {
		char pfx[32];

		snprintf(pfx, sizeof(pfx), "%16.9f",
			 (double)(end - start) / 1e9);
		print_all(stderr, c, prev, pfx, end - last);
	}
	fprintf(stderr, "\n Performance counter stats for ");
	if (o.system_wide) {
		fprintf(stderr, "'system wide'");
	} else if (o.cpu_list) {
		fprintf(stderr, "'CPU(s) %s'", o.cpu_list);
	} else if (o.cmd) {
		fprintf(stderr, "'");
		for (char **a = o.cmd; *a; a++)
			fprintf(stderr, "%s%s", a == o.cmd ? "" : " ", *a);
		fprintf(stderr, "'");
	} else {
		fprintf(stderr, "process id '%s'", o.pid_list);
	}
	fprintf(stderr, ":\n\n");
	print_all(stderr, c, NULL, "", end - start);
	fprintf(stderr, "\n%18.9f seconds time elapsed\n\n",
		(double)(end - start) / 1e9);

	if (WIFEXITED(status))
		rc = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		rc = 128 + WTERMSIG(status);
	else
		rc = 0;
	if (w) {
		ret = write_end(w, end, rc, reason);
		if (!ret)
			ret = prec_writer_close(w);
		if (ret < 0) {
			fprintf(stderr, "perfrec stat: writing '%s': %s\n",
				o.output, prec_strerror(ret));
			rc = rc ? rc : 1;
		}
	}

out_child:
	if (go_fd >= 0)
		close(go_fd);   /* an unreleased child sees EOF and exits */
	if (child > 0)
		waitpid(child, NULL, 0);
out_mask:
	sigprocmask(SIG_SETMASK, &orig, NULL);
out:
	prec_writer_free(w);
	prec_sink_free(sink);
	free(prev);
	free(targets);
	rec_counters_free(c);
	return rc;
}
