/*
 * main.c - the perfrec command: record, list, stat, help, --version.
 *
 * Only this file prints and exits; everything it calls returns errors and
 * messages.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/events/cpumap.h"
#include "recorder/events/evparse.h"
#include "recorder/events/groupopen.h"
#include "recorder/recording/recording.h"
#include "recorder/cli/cmd_stat.h"
#include "recorder/recording/status.h"

#ifndef PERFREC_VERSION
#define PERFREC_VERSION "0"
#endif

#define DEFAULT_EVENT "cpu-clock"
#define DEFAULT_FREQ 4000
#define DEFAULT_OUTPUT "perfrec.prec"
/* Recording defaults for the file: zstd level 2 and 1 MiB frames keep a
 * switch-heavy trace under half the bytes of `perf record -z`
 * (tests/bench/record_vs_perf.sh: ~2.5 vs ~5.5 bytes per record). Level 2
 * (zstd's dfast strategy), measured with `zstd -b1e3 -B1M` on the packet
 * bytes of recorded traces: on a switch-heavy one 4% smaller than level 3
 * and ~1.5x faster (level 1: 4% larger than 3); on a sample-heavy one 1.6%
 * larger than 3 and 2x faster. Compression was ~18% of the recorder's CPU
 * at level 3. */
#define DEFAULT_ZSTD_LEVEL 2
#define DEFAULT_FRAME_SIZE (1u << 20)

static volatile sig_atomic_t stop_flag;
static int main_argc;       /* perfrec's whole argv, for the file header */
static char **main_argv;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void usage_main(FILE *f)
{
	fprintf(f,
		"usage: perfrec <command> [options]\n"
		"\n"
		"commands:\n"
		"  record    sample events per CPU (or per task) into a .prec file\n"
		"  stat      count event groups and print them live, like perf stat\n"
		"  list      list the events this host supports\n"
		"  help      this text; 'perfrec help record' for a command's options\n"
		"\n"
		"  --version print the version\n"
		"\n"
		"Read files with perfrec-analyze.\n");
}

static void usage_record(FILE *f)
{
	fprintf(f,
		"usage: perfrec record [options] [-- COMMAND [ARGS...]]\n"
		"\n"
		"Records samples and side-band events (comm, fork, exit, mmap, context\n"
		"switches) into a .prec file. Without a target: all CPUs until Ctrl-C.\n"
		"\n"
		"events:\n"
		"  -e, --event EVENTS     events to sample (default: cpu-clock), repeatable;\n"
		"                         cpu-clock, page-faults, cycles, L1-dcache-load-misses,\n"
		"                         r1a8, pmu/event=0x3c/, sched:sched_switch, mem:0xADDR:rw,\n"
		"                         modifiers :u :k :h :p, groups {a,b} and {a,b}:S\n"
		"                         (leader sampling); see 'perfrec list'\n"
		"  -F, --freq HZ          sample frequency (default %d)\n"
		"  -c, --count PERIOD     sample every PERIOD events instead of -F\n"
		"  -g, --call-graph       record callchains\n"
		"      --switch-events    record context switches (PERF_RECORD_SWITCH*)\n"
		"      --counters GROUP   also count GROUP, e.g. '{task-clock,page-faults}',\n"
		"                         snapshotted every --interval; repeatable\n"
		"      --interval TIME    counter snapshot interval (default 1s; e.g. 100ms)\n"
		"\n"
		"targets (one of):\n"
		"  -a, --all-cpus         every online CPU (the default)\n"
		"  -C, --cpu CPUS         these CPUs, e.g. 0-3,6\n"
		"  -p, --pid PIDS         these processes (all their threads), comma separated\n"
		"  -t, --tid TIDS         these threads\n"
		"  -- COMMAND ARGS        run COMMAND and record it (events start at its exec,\n"
		"                         recording ends when it exits; its exit status is\n"
		"                         returned). With -a or -C: record those CPUs while\n"
		"                         COMMAND runs.\n"
		"\n"
		"output:\n"
		"  -o, --output FILE      output file (default %s)\n"
		"  -d, --duration SECS    stop after SECS seconds (decimals allowed)\n"
		"  -m, --mmap-pages N     ring size in pages per CPU, a power of two\n"
		"                         (default: 4 MiB per CPU with CAP_IPC_LOCK, e.g.\n"
		"                         root, at most 256 MiB in all; else 128 like perf)\n"
		"      --frame-size BYTES packet bytes per compressed frame (default %u;\n"
		"                         suffixes k, m)\n"
		"      --flush-ms MS      flush frames at least this often (default %u)\n"
		"      --zstd-level N     compression level 1..19 (default %d; 1 is cheapest)\n"
		"      --spool BYTES      per-CPU buffer between the rings and the encoder\n"
		"                         (default 32m, rounded down to a power of two):\n"
		"                         absorbs bursts the encoder cannot keep up with\n"
		"      --no-symbols       record no symbol tables (kallsyms, ELF symbols of\n"
		"                         the objects hit, perf-PID.map); the file then\n"
		"                         needs the host's binaries to be symbolized\n"
		"      --symbols-interval TIME  write the symbols hit so far this often\n"
		"                         (default 30s; e.g. 5s), and always at the end\n"
		"  -q, --quiet            no live status line and no summary\n"
		"  -h, --help             this text\n"
		"\n"
		"Stop with Ctrl-C (SIGINT) or SIGTERM: the file is completed cleanly.\n",
		DEFAULT_FREQ, DEFAULT_OUTPUT,
		(unsigned)DEFAULT_FRAME_SIZE, (unsigned)PREC_DEFAULT_FLUSH_MS,
		DEFAULT_ZSTD_LEVEL);
}

/* ---- argument parsing helpers */

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_size(const char *s, unsigned long long *out)
{
	char *end;
	unsigned long long v, mul = 1;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end == 'k' || *end == 'K')
		mul = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		mul = 1024 * 1024, end++;
	if (*end || v > (1ull << 40) / mul)
		return -1;
	*out = v * mul;
	return 0;
}

/* "100ms", "1s", "250us", "2.5s"; a bare number is milliseconds. */
static int parse_duration_ns(const char *s, uint64_t *out)
{
	char *end;
	double v;

	if (!s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || !isfinite(v) || v < 0)
		return -1;
	if (!strcmp(end, "ms") || !*end)
		v *= 1e6;
	else if (!strcmp(end, "s"))
		v *= 1e9;
	else if (!strcmp(end, "us"))
		v *= 1e3;
	else if (!strcmp(end, "ns"))
		;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		v *= 60e9;
	else
		return -1;
	if (v > 1e18)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

/* "12,34" into a new int array. */
static int parse_id_list(const char *s, int **out, size_t *n)
{
	const char *p = s;
	int *v = NULL;
	size_t cnt = 0;

	while (*p) {
		char *end;
		long x;
		int *nv;

		if (!isdigit((unsigned char)*p))
			goto bad;
		errno = 0;
		x = strtol(p, &end, 10);
		if (errno || x <= 0 || x > 0x3fffffff)
			goto bad;
		nv = realloc(v, (cnt + 1) * sizeof(*nv));
		if (!nv)
			goto bad;
		v = nv;
		v[cnt++] = (int)x;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	if (!cnt)
		goto bad;
	*out = v;
	*n = cnt;
	return 0;
bad:
	free(v);
	return -1;
}

static void log_cb(void *ctx, enum rec_log_level level, const char *msg)
{
	bool *status_on_line = ctx;

	if (*status_on_line) {
		fputc('\n', stderr);
		*status_on_line = false;
	}
	fprintf(stderr, "perfrec: %s%s\n",
		level == REC_LOG_ERROR ? "error: " :
		level == REC_LOG_WARN ? "warning: " : "", msg);
}

static void status_cb(void *ctx, const char *line)
{
	bool *status_on_line = ctx;

	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
	*status_on_line = true;
}

enum {
	OPT_SWITCH = 256,
	OPT_FRAME_SIZE,
	OPT_FLUSH_MS,
	OPT_COUNTERS,
	OPT_INTERVAL,
	OPT_ZSTD_LEVEL,
	OPT_SPOOL,
	OPT_NO_SYMBOLS,
	OPT_SYMBOLS_INTERVAL,
};

static int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "call-graph", no_argument, NULL, 'g' },
		{ "switch-events", no_argument, NULL, OPT_SWITCH },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "frame-size", required_argument, NULL, OPT_FRAME_SIZE },
		{ "flush-ms", required_argument, NULL, OPT_FLUSH_MS },
		{ "counters", required_argument, NULL, OPT_COUNTERS },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "zstd-level", required_argument, NULL, OPT_ZSTD_LEVEL },
		{ "spool", required_argument, NULL, OPT_SPOOL },
		{ "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS },
		{ "symbols-interval", required_argument, NULL, OPT_SYMBOLS_INTERVAL },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rec_evlist evl = REC_EVLIST_INIT;
	struct rec_cpumap cpus = REC_CPUMAP_INIT;
	struct rec_record_opts o;
	struct rec_record_result res;
	const char **counters = NULL;
	int *ids = NULL;
	size_t nids = 0, ncounters = 0;
	bool have_a = false, have_c = false, have_p = false, have_t = false;
	bool have_F = false, have_cnt = false, quiet = false, status_on_line = false;
	unsigned long long v;
	char err[1024], sum[160];
	int c, ret, status = 1;

	memset(&o, 0, sizeof(o));
	o.freq = DEFAULT_FREQ;
	o.mmap_pages = 0;   /* auto, see record.h */
	o.output = DEFAULT_OUTPUT;
	o.flush_ms = PREC_DEFAULT_FLUSH_MS;
	o.zstd_level = DEFAULT_ZSTD_LEVEL;
	o.frame_size = DEFAULT_FRAME_SIZE;
	o.interval_ns = 1000000000ull;
	o.argc = main_argc;
	o.argv_self = main_argv;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:e:aC:p:t:F:c:gm:d:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (rec_evlist_parse(&evl, optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "perfrec: bad event in -e '%s': %s\n", optarg, err);
				goto out;
			}
			break;
		case 'a':
			have_a = true;
			break;
		case 'C':
			if (have_c)
				rec_cpumap_release(&cpus);
			if (rec_cpumap_parse(&cpus, optarg) < 0) {
				fprintf(stderr, "perfrec: bad CPU list '%s' (e.g. 0-3,6)\n", optarg);
				goto out;
			}
			have_c = true;
			break;
		case 'p':
		case 't':
			free(ids);
			ids = NULL;
			if (parse_id_list(optarg, &ids, &nids) < 0) {
				fprintf(stderr, "perfrec: bad %s list '%s' (e.g. 123,456)\n",
					c == 'p' ? "pid" : "tid", optarg);
				goto out;
			}
			if (c == 'p')
				have_p = true;
			else
				have_t = true;
			break;
		case 'F':
			if (parse_uint(optarg, 10000000, &v) < 0 || !v) {
				fprintf(stderr, "perfrec: bad frequency '%s' (Hz, e.g. 4000)\n", optarg);
				goto out;
			}
			o.freq = v;
			have_F = true;
			break;
		case 'c':
			if (parse_uint(optarg, UINT64_MAX, &v) < 0 || !v) {
				fprintf(stderr, "perfrec: bad period '%s' (a positive count)\n", optarg);
				goto out;
			}
			o.period = v;
			have_cnt = true;
			break;
		case 'g':
			o.callchain = true;
			break;
		case OPT_SWITCH:
			o.switch_events = true;
			break;
		case 'm':
			if (parse_uint(optarg, 1u << 20, &v) < 0 || !v || (v & (v - 1))) {
				fprintf(stderr, "perfrec: bad -m '%s': pages per ring must be a "
					"power of two (e.g. 128)\n", optarg);
				goto out;
			}
			o.mmap_pages = (size_t)v;
			break;
		case 'd': {
			char *end;
			double d;

			errno = 0;
			d = strtod(optarg, &end);
			if (errno || *end || !isfinite(d) || d <= 0 || d > 1e9) {
				fprintf(stderr, "perfrec: bad duration '%s' (seconds, e.g. 2.5)\n", optarg);
				goto out;
			}
			o.duration_ns = (uint64_t)(d * 1e9);
			break;
		}
		case 'o':
			o.output = optarg;
			break;
		case OPT_FRAME_SIZE:
			if (parse_size(optarg, &v) < 0 || v < 1024 || v > (64ull << 20)) {
				fprintf(stderr, "perfrec: bad --frame-size '%s' (1k..64m)\n", optarg);
				goto out;
			}
			o.frame_size = (size_t)v;
			break;
		case OPT_FLUSH_MS:
			if (parse_uint(optarg, 3600000, &v) < 0) {
				fprintf(stderr, "perfrec: bad --flush-ms '%s' (milliseconds)\n", optarg);
				goto out;
			}
			o.flush_ms = (uint32_t)v;
			break;
		case OPT_COUNTERS: {
			const char **n = realloc(counters, (ncounters + 1) * sizeof(*n));

			if (!n) {
				fprintf(stderr, "perfrec: out of memory\n");
				goto out;
			}
			counters = n;
			counters[ncounters++] = optarg;
			break;
		}
		case OPT_INTERVAL:
			if (parse_duration_ns(optarg, &o.interval_ns) < 0 ||
			    o.interval_ns < 1000000) {
				fprintf(stderr, "perfrec: bad --interval '%s' (e.g. 100ms, 1s; at "
					"least 1ms)\n", optarg);
				goto out;
			}
			break;
		case OPT_ZSTD_LEVEL:
			if (parse_uint(optarg, 19, &v) < 0 || !v) {
				fprintf(stderr, "perfrec: bad --zstd-level '%s' (1..19)\n", optarg);
				goto out;
			}
			o.zstd_level = (int)v;
			break;
		case OPT_SPOOL:
			if (parse_size(optarg, &v) < 0 || v < 65536 || v > (4ull << 30)) {
				fprintf(stderr, "perfrec: bad --spool '%s' (bytes per CPU, "
					"64k..4096m, e.g. 64m)\n", optarg);
				goto out;
			}
			o.spool_bytes = v;
			break;
		case OPT_NO_SYMBOLS:
			o.no_symbols = true;
			break;
		case OPT_SYMBOLS_INTERVAL:
			if (parse_duration_ns(optarg, &o.symbols_interval_ns) < 0 ||
			    o.symbols_interval_ns < 1000000) {
				fprintf(stderr, "perfrec: bad --symbols-interval '%s' (e.g. 30s, "
					"500ms; at least 1ms)\n", optarg);
				goto out;
			}
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage_record(stdout);
			status = 0;
			goto out;
		case ':':
			fprintf(stderr, "perfrec record: option '%s' needs a value "
				"(see 'perfrec record --help')\n", argv[optind - 1]);
			goto out;
		default:
			fprintf(stderr, "perfrec record: unknown option '%s' "
				"(see 'perfrec record --help')\n", argv[optind - 1]);
			goto out;
		}
	}
	if (have_F && have_cnt) {
		fprintf(stderr, "perfrec: -F (frequency) and -c (period) exclude each other\n");
		goto out;
	}
	if ((have_p || have_t) + (have_a || have_c) > 1 || (have_p && have_t)) {
		fprintf(stderr, "perfrec: choose one target: -a/-C (CPUs), -p (pids) or "
			"-t (tids)\n");
		goto out;
	}
	if ((have_p || have_t) && optind < argc) {
		fprintf(stderr, "perfrec: a command cannot be combined with -p/-t\n");
		goto out;
	}
	if (!evl.n && !ncounters &&
	    rec_evlist_parse(&evl, DEFAULT_EVENT, err, sizeof(err)) < 0) {
		fprintf(stderr, "perfrec: %s\n", err);
		goto out;
	}
	if (have_c) {
		o.target = REC_TARGET_CPUS;
		o.cpus = cpus.cpu;
		o.ncpus = cpus.n;
	} else if (have_p || have_t) {
		o.target = have_p ? REC_TARGET_PIDS : REC_TARGET_TIDS;
		o.pids = ids;
		o.npids = nids;
	} else if (optind < argc && !have_a) {
		o.target = REC_TARGET_COMMAND;
	} else {
		o.target = REC_TARGET_SYSTEM;
	}
	if (optind < argc)
		o.argv = argv + optind;
	o.evlist = &evl;
	o.counters = counters;
	o.ncounters = ncounters;
	o.stop = &stop_flag;
	o.log = log_cb;
	o.ctx = &status_on_line;
	if (!quiet && isatty(STDERR_FILENO))
		o.status = status_cb;

	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}

	{
		/* like perf: keep the previous recording as FILE.old */
		struct stat st;
		char old[4096];

		if (stat(o.output, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
		    (size_t)snprintf(old, sizeof(old), "%s.old", o.output) < sizeof(old))
			rename(o.output, old);
	}
	ret = rec_record_run(&o, &res, err, sizeof(err));
	if (status_on_line)
		fputc('\n', stderr);
	if (ret < 0) {
		fprintf(stderr, "perfrec: error: %s\n", err[0] ? err : strerror(-ret));
		if (res.st.records && !quiet)
			fprintf(stderr, "perfrec: %s before the error\n",
				rec_record_summary(&res, sum, sizeof(sum)));
		status = 1;
		goto out;
	}
	if (!quiet) {
		char bytes[32];

		rec_status_bytes(res.bytes_written, bytes, sizeof(bytes));
		fprintf(stderr, "perfrec: %s\n", rec_record_summary(&res, sum, sizeof(sum)));
		fprintf(stderr, "perfrec: %llu records in %.1fs written to %s (%s, %.1fx "
			"compression, woken %llu times, %zu-page rings), stopped by %s\n",
			(unsigned long long)res.st.records, (double)res.duration_ns / 1e9,
			o.output, bytes,
			res.bytes_written ? (double)res.bytes_raw / (double)res.bytes_written : 0.0,
			(unsigned long long)res.wakeups, res.mmap_pages, res.stop_reason);
		if (res.st.lost && res.spool_full)
			fprintf(stderr, "perfrec: warning: the encoder fell behind the kernel "
				"(%llu times the spool was full); losses shrink with fewer "
				"events, a lower -F, or more CPU for perfrec\n",
				(unsigned long long)res.spool_full);
		else if (res.st.lost)
			fprintf(stderr, "perfrec: warning: the kernel rings overflowed; a larger "
				"-m PAGES gives more room\n");
		if (res.st.bad || res.st.ring_errors)
			fprintf(stderr, "perfrec: warning: %llu records did not decode (kept raw), "
				"%llu ring errors\n", (unsigned long long)res.st.bad,
				(unsigned long long)res.st.ring_errors);
	}
	status = res.have_workload && res.workload_exit >= 0 ? res.workload_exit : 0;
out:
	free(counters);
	free(ids);
	rec_cpumap_release(&cpus);
	rec_evlist_release(&evl);
	return status;
}

/* ---- list */

static bool host_has_hw_pmu(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return rec_groupopen_probe(&a);
}

static bool match(const char *filter, const char *s)
{
	return !filter || strstr(s, filter);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_tracepoints(const char *filter)
{
	char tfs[256], err[512], path[512];
	char **names = NULL;
	size_t n = 0, cap = 0;
	DIR *d;
	struct dirent *sys;

	if (rec_tracefs_path(tfs, sizeof(tfs), err, sizeof(err)) < 0) {
		printf("\nTracepoints: unavailable: %s\n", err);
		return;
	}
	snprintf(path, sizeof(path), "%s/events", tfs);
	d = opendir(path);
	if (!d) {
		printf("\nTracepoints: cannot read %s: %s\n", path, strerror(errno));
		return;
	}
	while ((sys = readdir(d))) {
		DIR *sd;
		struct dirent *ev;
		char sp[768];

		if (sys->d_name[0] == '.' || sys->d_type == DT_REG)
			continue;
		snprintf(sp, sizeof(sp), "%s/%s", path, sys->d_name);
		sd = opendir(sp);
		if (!sd)
			continue;
		while ((ev = readdir(sd))) {
			char name[600];

			if (ev->d_name[0] == '.' || ev->d_type == DT_REG)
				continue;
			snprintf(name, sizeof(name), "%s:%s", sys->d_name, ev->d_name);
			if (!match(filter, name))
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 256;
				char **nn = realloc(names, nc * sizeof(*nn));

				if (!nn)
					break;
				names = nn;
				cap = nc;
			}
			names[n] = strdup(name);
			if (names[n])
				n++;
		}
		closedir(sd);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	printf("\nTracepoints (%zu, from %s):\n", n, tfs);
	for (size_t i = 0; i < n; i++) {
		printf("  %-50s [tracepoint]\n", names[i]);
		free(names[i]);
	}
	free(names);
}

static void list_pmus(const char *filter)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *de;

	printf("\nPMUs (/sys/bus/event_source/devices; syntax pmu/term=value,.../):\n");
	if (!d) {
		printf("  none readable\n");
		return;
	}
	while ((de = readdir(d))) {
		char path[512], type[32] = "?";
		FILE *f;
		DIR *ed;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", de->d_name);
		f = fopen(path, "re");
		if (f) {
			if (!fgets(type, sizeof(type), f))
				snprintf(type, sizeof(type), "?");
			type[strcspn(type, "\n")] = '\0';
			fclose(f);
		}
		if (match(filter, de->d_name))
			printf("  %-20s type %s\n", de->d_name, type);
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/events", de->d_name);
		ed = opendir(path);
		if (!ed)
			continue;
		{
			struct dirent *ev;

			while ((ev = readdir(ed))) {
				char name[600];

				if (ev->d_name[0] == '.' || strchr(ev->d_name, '.'))
					continue;
				snprintf(name, sizeof(name), "%s/%s/", de->d_name, ev->d_name);
				if (match(filter, name))
					printf("    %-48s [pmu event]\n", name);
			}
		}
		closedir(ed);
	}
	closedir(d);
}

static int cmd_list(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	bool hw = host_has_hw_pmu();
	const char *name, *alias;
	uint32_t type;
	uint64_t config;
	char buf[64];

	if (filter && (!strcmp(filter, "-h") || !strcmp(filter, "--help"))) {
		printf("usage: perfrec list [FILTER]\n"
		       "Lists software, hardware, hw-cache events, tracepoints and PMUs;\n"
		       "FILTER keeps names that contain it.\n");
		return 0;
	}
	printf("Software events:\n");
	for (size_t i = 0; (name = rec_evparse_named(i, &type, &config, &alias)); i++) {
		if (type != PERF_TYPE_SOFTWARE || !match(filter, name))
			continue;
		if (alias)
			printf("  %-50s [software, alias of %s]\n", name, alias);
		else
			printf("  %-50s [software]\n", name);
	}
	if (hw) {
		printf("\nHardware events:\n");
		for (size_t i = 0; (name = rec_evparse_named(i, &type, &config, &alias)); i++) {
			if (type != PERF_TYPE_HARDWARE || !match(filter, name))
				continue;
			printf("  %-50s [hardware%s%s]\n", name, alias ? ", alias of " : "",
			       alias ? alias : "");
		}
		printf("\nHardware cache events:\n");
		for (size_t i = 0; rec_evparse_hwcache(i, buf, sizeof(buf), &config); i++)
			if (match(filter, buf))
				printf("  %-50s [hw-cache]\n", buf);
		printf("\nRaw events: rNNNN (hex config for the CPU PMU)\n");
	} else {
		printf("\nHardware and hw-cache events: none on this host (no hardware PMU "
		       "could be opened; a VM without PMU passthrough?)\n");
	}
	list_tracepoints(filter);
	list_pmus(filter);
	printf("\nBreakpoints: mem:ADDR[/LEN][:rwx]\n"
	       "Modifiers: :u :k :h (user/kernel/hypervisor only), :p (precise), :S "
	       "(leader sampling of a group {a,b}:S)\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	main_argc = argc;
	main_argv = argv;
	if (!cmd) {
		usage_main(stderr);
		return 2;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		printf("perfrec %s\n", PERFREC_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage_main(stdout);
		return 0;
	}
	if (!strcmp(cmd, "help")) {
		if (argc > 2 && !strcmp(argv[2], "record"))
			usage_record(stdout);
		else if (argc > 2 && !strcmp(argv[2], "stat")) {
			char *a[] = { (char *)"stat", (char *)"--help", NULL };
			return rec_stat_main(2, a);
		} else
			usage_main(stdout);
		return 0;
	}
	if (!strcmp(cmd, "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(cmd, "list"))
		return cmd_list(argc - 1, argv + 1);
	if (!strcmp(cmd, "stat"))
		return rec_stat_main(argc - 1, argv + 1);
	fprintf(stderr, "perfrec: unknown command '%s'\n\n", cmd);
	usage_main(stderr);
	return 2;
}
