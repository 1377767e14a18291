/*
 * cmd_record.c - `perfrec record`: options into a recording
 * (recording/recording.h), driven until a signal, -d, or the command's
 * exit; status line and summary on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/sink.h"
#include "format/base/clock.h"
#include "format/unwind/unwind.h"
#include "format/writer.h"
#include "recorder/cli/cmd.h"
#include "recorder/cli/parse.h"
#include "recorder/bpf/sfilter.h"
#include "recorder/cli/print.h"
#include "recorder/log.h"
#include "recorder/net/sender.h"
#include "recorder/net/sendloss.h"
#include "recorder/recording/recording.h"
#include "recorder/recording/status.h"

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
#define STATUS_NS 1000000000ull

static int self_argc;
static char **self_argv;

void rec_cli_set_self(int argc, char **argv)
{
	self_argc = argc;
	self_argv = argv;
}

static const struct rec_cli_opt record_opts[] = {
	REC_CLI_SECTION("events"),
	{ "event", 'e', "EVENTS", "events to sample (default: cpu-clock), repeatable;\n"
	  "cpu-clock, page-faults, cycles, L1-dcache-load-misses,\n"
	  "r1a8, pmu/event=0x3c/, sched:sched_switch, mem:0xADDR:rw,\n"
	  "modifiers :u :k :h :p, groups {a,b} and {a,b}:S\n"
	  "(leader sampling); see 'perfrec list'" },
	{ "freq", 'F', "HZ", "sample frequency (default 4000; e.g. 999, 10k)" },
	{ "count", 'c', "PERIOD", "sample every PERIOD events instead of -F" },
	{ "", 'g', NULL, "record callchains by frame pointers (= --call-graph fp)" },
	{ "call-graph", REC_OPT_CALL_GRAPH, "MODE", "record callchains: fp (frame pointers), or dwarf\n"
	  "for code without them: the user stack is copied\n"
	  "(dwarf,SIZE: bytes, default 8k, at most 65528)\n"
	  "and unwound here with the objects' DWARF CFI;\n"
	  "dwarf,raw (or dwarf,SIZE,raw) writes the stacks\n"
	  "and unwind tables for perfrec-analyze to unwind" },
	{ "switch-events", REC_OPT_SWITCH, NULL, "record context switches (PERF_RECORD_SWITCH*)" },
	{ "counters", REC_OPT_COUNTERS, "GROUP", "also count GROUP, e.g. '{task-clock,page-faults}',\n"
	  "snapshotted every --interval; repeatable" },
	{ "off-cpu", REC_OPT_OFF_CPU, "[=TIME]", "off-CPU time with kernel and user stacks (BPF on\n"
	  "sched_switch): blocks of at least TIME (default 1ms)\n"
	  "as timestamped intervals, shorter ones summed per\n"
	  "thread, stack and state; see 'report --off-cpu'" },
	{ "filter", REC_OPT_FILTER, "EXPR", "keep only the samples EXPR accepts, decided in the\n"
	  "kernel (BPF), e.g. 'pid=123', 'cgroup=/system.slice/\n"
	  "nginx.service && mode=user'; fields pid tid uid cpu\n"
	  "cgroup mode, operators = != < <= > >= && || ! ( );\n"
	  "dropped samples are counted as \"filtered\"" },
	{ "interval", 'I', "TIME", "counter snapshot interval (default 1s; e.g. 100ms;\n"
	  "a bare number is milliseconds)" },
	REC_CLI_SECTION("targets (one of; default: every online CPU)"),
	REC_CLI_TARGET_OPTS,
	REC_CLI_SECTION("output"),
	{ "output", 'o', "FILE", "output file (default perfrec.prec; an existing one\n"
	  "is kept as FILE.old once recording starts); - for\n"
	  "standard output (a pipe or a file, not a terminal)" },
	REC_CLI_DURATION_OPT,
	{ "mmap-pages", 'm', "N", "ring size in pages per CPU, a power of two\n"
	  "(default: 4 MiB per CPU with CAP_IPC_LOCK, e.g.\n"
	  "root, at most 256 MiB in all; else 128 like perf)" },
	{ "frame-size", REC_OPT_FRAME_SIZE, "SIZE", "packet bytes per compressed frame (default 1m;\n"
	  "1k..64m)" },
	{ "flush-ms", REC_OPT_FLUSH_MS, "MS", "flush frames at least this often (default 1000)" },
	{ "zstd-level", REC_OPT_ZSTD_LEVEL, "N", "compression level 1..19 (default 2; 1 is cheapest)" },
	{ "spool", REC_OPT_SPOOL, "SIZE", "per-CPU buffer between the rings and the encoder\n"
	  "(default 32m, rounded down to a power of two):\n"
	  "absorbs bursts the encoder cannot keep up with" },
	{ "no-symbols", REC_OPT_NO_SYMBOLS, NULL, "record no symbol tables (kallsyms, ELF symbols of\n"
	  "the objects hit, perf-PID.map); the file then\n"
	  "needs the host's binaries to be symbolized" },
	{ "symbols-interval", REC_OPT_SYMBOLS_INTERVAL, "TIME", "write the symbols hit so far this often\n"
	  "(default 30s; e.g. 5s), and always at the end" },
	{ "quiet", 'q', NULL, "no live status line and no summary" },
	REC_CLI_SECTION("streaming to a collector (perfrec collect)"),
	{ "to", REC_OPT_TO, "ADDR:PORT", "stream the recording to a collector (with -o, keep\n"
	  "a local copy too); unacknowledged frames are kept\n"
	  "and resent after a reconnect; a list A:P,B:P\n"
	  "fails over between collectors that share JetStream" },
	{ "spool-size", REC_OPT_SPOOL_SIZE, "SIZE", "unacknowledged bytes kept for resending (default\n"
	  "64m); beyond, new frames are dropped and the loss\n"
	  "is written into the trace" },
	{ "session", REC_OPT_SESSION, "ID", "the archive's file name (default: UTC start time\n"
	  "and a random suffix)" },
	{ "host", REC_OPT_HOST, "NAME", "this host's name in the archive (default: hostname)" },
	{ "finish-timeout", REC_OPT_FINISH_TIMEOUT, "TIME", "at the end, wait this long for the\n"
	  "collector's acknowledgements (default 30s)" },
	REC_CLI_NET_OPTS,
	{ "help", 'h', NULL, "this text" },
	{ NULL, 0, NULL, NULL },
};

static const char record_usage[] =
	"usage: perfrec record [options] [-- COMMAND [ARGS...]]";
static const char record_about[] =
	"Records samples and side-band events (comm, fork, exit, mmap, context\n"
	"switches) into a .prec file. Without a target: all CPUs until Ctrl-C.\n"
	"With -- COMMAND: COMMAND is run and recorded (events start at its exec,\n"
	"the recording ends when it exits; its exit status is returned); with -a\n"
	"or -C as well, those CPUs are recorded while COMMAND runs.\n";
static const char record_footer[] =
	"Stop with Ctrl-C (SIGINT) or SIGTERM: the file is completed cleanly.\n";

int rec_cli_record_parse(int argc, char **argv, struct rec_cli_record_args *a)
{
	return rec_cli_record_parse_with(argc, argv, NULL, NULL, NULL, a);
}

/* record_opts, then extra before its "help" line: one table for getopt and
 * for --help. */
struct rec_cli_opt *rec_cli_record_options_with(const struct rec_cli_opt *extra)
{
	size_t n = 0, k = 0, help = 0, m = 0;
	struct rec_cli_opt *t;

	while (record_opts[n].name)
		n++;
	while (extra[m].name)
		m++;
	while (help < n && strcmp(record_opts[help].name, "help"))
		help++;
	t = calloc(n + m + 1, sizeof(*t));
	if (!t)
		return NULL;
	for (size_t i = 0; i < help; i++)
		t[k++] = record_opts[i];
	for (size_t i = 0; i < m; i++)
		t[k++] = extra[i];
	for (size_t i = help; i < n; i++)
		t[k++] = record_opts[i];
	return t;
}

int rec_cli_record_parse_with(int argc, char **argv, const struct rec_cli_opt *extra,
			      int (*extra_cb)(void *ctx, const struct rec_cli_parser *p,
					      int key, const char *arg),
			      void *ctx, struct rec_cli_record_args *a)
{
	struct rec_cli_parser p;
	struct rec_cli_opt *joined = NULL;
	const char *arg;
	bool have_F = false, have_c = false;
	uint64_t v;
	int key, ret;

	memset(a, 0, sizeof(*a));
	a->freq = DEFAULT_FREQ;
	a->flush_ms = PREC_DEFAULT_FLUSH_MS;
	a->zstd_level = DEFAULT_ZSTD_LEVEL;
	a->frame_size = DEFAULT_FRAME_SIZE;
	a->c.interval_ns = 1000000000ull;
	a->finish_timeout_ns = 30000000000ull;
	a->off_cpu_threshold_ns = 1000000;
	if (extra) {
		joined = rec_cli_record_options_with(extra);
		if (!joined)
			return -ENOMEM;
	}
	ret = rec_cli_parser_init(&p, joined ? joined : record_opts);
	if (ret < 0) {
		free(joined);
		return ret;
	}
	p.common = &a->c;
	while ((key = rec_cli_next(&p, argc, argv, &arg)) > 0) {
		ret = 0;
		if (rec_cli_net_option(&a->net, key, arg))
			continue;
		switch (key) {
		case REC_OPT_TO:
			a->to = arg;
			break;
		case REC_OPT_SESSION:
			a->session = arg;
			break;
		case REC_OPT_HOST:
			a->host = arg;
			break;
		case REC_OPT_SPOOL_SIZE:
			if (rec_parse_size(arg, &a->send_spool_bytes) < 0 ||
			    a->send_spool_bytes < (1u << 20))
				ret = rec_cli_bad_value(&p, arg, "a size of at least 1m (e.g. 256m)");
			break;
		case REC_OPT_FINISH_TIMEOUT:
			if (rec_parse_duration(arg, 1000000000ull, &a->finish_timeout_ns) < 0)
				ret = rec_cli_bad_value(&p, arg, "a duration (e.g. 30s)");
			break;
		case 'F':
			if (rec_parse_freq(arg, &a->freq) < 0)
				ret = rec_cli_bad_value(&p, arg, "a frequency in Hz (e.g. 4000, 10k)");
			have_F = true;
			break;
		case 'c':
			if (rec_parse_uint(arg, UINT64_MAX, &a->period) < 0 || !a->period)
				ret = rec_cli_bad_value(&p, arg, "a positive count");
			have_c = true;
			break;
		case 'g':
			a->callchain = true;
			a->dwarf = a->raw_stacks = false;
			break;
		case REC_OPT_CALL_GRAPH: {
			struct rec_call_graph cg;

			if (rec_parse_call_graph(arg, &cg) < 0) {
				ret = rec_cli_bad_value(&p, arg, "fp, dwarf, dwarf,SIZE (8 to "
							"65528 bytes) or dwarf[,SIZE],raw");
				break;
			}
			a->callchain = !cg.dwarf;
			a->dwarf = cg.dwarf;
			a->stack_user = cg.stack_user;
			a->raw_stacks = cg.raw;
			break;
		}
		case REC_OPT_SWITCH:
			a->switch_events = true;
			break;
		case 'm':
			if (rec_parse_uint(arg, 1u << 20, &v) < 0 || !v || (v & (v - 1)))
				ret = rec_cli_bad_value(&p, arg, "a power of two of pages per "
							"ring (e.g. 128)");
			a->mmap_pages = (size_t)v;
			break;
		case REC_OPT_FRAME_SIZE:
			if (rec_parse_size(arg, &v) < 0 || v < 1024 || v > (64ull << 20))
				ret = rec_cli_bad_value(&p, arg, "a size from 1k to 64m");
			a->frame_size = (size_t)v;
			break;
		case REC_OPT_FLUSH_MS:
			if (rec_parse_uint(arg, 3600000, &v) < 0)
				ret = rec_cli_bad_value(&p, arg, "milliseconds (0..3600000)");
			a->flush_ms = (uint32_t)v;
			break;
		case REC_OPT_ZSTD_LEVEL:
			if (rec_parse_uint(arg, 19, &v) < 0 || !v)
				ret = rec_cli_bad_value(&p, arg, "a level from 1 to 19");
			a->zstd_level = (int)v;
			break;
		case REC_OPT_SPOOL:
			if (rec_parse_size(arg, &a->spool_bytes) < 0 ||
			    a->spool_bytes < 65536 || a->spool_bytes > (4ull << 30))
				ret = rec_cli_bad_value(&p, arg, "bytes per CPU from 64k to "
							"4096m (e.g. 64m)");
			break;
		case REC_OPT_NO_SYMBOLS:
			a->no_symbols = true;
			break;
		case REC_OPT_SYMBOLS_INTERVAL:
			if (rec_parse_duration(arg, 1000000, &a->symbols_interval_ns) < 0 ||
			    a->symbols_interval_ns < 1000000)
				ret = rec_cli_bad_value(&p, arg, "an interval of at least 1ms "
							"(e.g. 30s, 500ms)");
			break;
		case 'q':
			a->quiet = true;
			break;
		case REC_OPT_OFF_CPU:
			a->off_cpu = true;
			if (arg && (rec_parse_duration(arg, 1000000, &a->off_cpu_threshold_ns) < 0))
				ret = rec_cli_bad_value(&p, arg, "a duration (e.g. 1ms, 500us, 0 "
							"for every block as an interval; a "
							"bare number is ms)");
			break;
		case REC_OPT_FILTER: {
			struct rec_sfilter f;
			struct rec_sfilter_error err;
			char msg[REC_LOG_MAX];

			a->filter = arg;
			if (rec_sfilter_parse(arg, &f, &err) < 0) {
				rec_log(REC_LOG_ERROR, "bad --filter: %s",
					rec_sfilter_describe_error(arg, &err, msg, sizeof(msg)));
				ret = -EINVAL;
			}
			rec_sfilter_release(&f);
			break;
		}
		case 'h':
			a->help = true;
			break;
		default:
			ret = extra_cb ? extra_cb(ctx, &p, key, arg) : -EINVAL;
			break;
		}
		if (ret < 0)
			goto out;
	}
	ret = key;
	if (ret < 0)
		goto out;
	if (have_F && have_c) {
		rec_log(REC_LOG_ERROR, "-F (frequency) and -c (period) exclude each other");
		ret = -EINVAL;
		goto out;
	}
	if (have_c)
		a->freq = 0;
	a->output_given = a->c.output != NULL;
	if (!a->c.output && !a->to)
		a->c.output = DEFAULT_OUTPUT;
	if (!a->to && (a->net.token_file || a->net.tls_ca || a->net.tls_cert ||
		       a->session || a->host || a->send_spool_bytes)) {
		rec_log(REC_LOG_ERROR, "--token-file, --tls-*, --session, --host and "
			"--spool-size go with --to");
		ret = -EINVAL;
		goto out;
	}
	ret = rec_cli_common_finish(&a->c, argc, argv, p.optind);
out:
	rec_cli_parser_release(&p);
	free(joined);
	return ret;
}

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;   /* no SA_RESTART: a poll returns EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/*
 * The output file is touched only once the recording has started: until
 * then its bytes (header, event descriptions, the tasks from /proc) are
 * held in memory, so a start that fails (no such process, events refused,
 * a command that cannot run) leaves an existing FILE as it was and makes
 * no FILE.old, as perf does. At the commit the previous FILE is kept as
 * FILE.old and the held bytes are written; later writes go straight to
 * the file. "-o -" is standard output: a .prec is a sequence of frames, so
 * the trace can go down a pipe (perfrec-analyze reads what the pipe wrote
 * to a file).
 */
struct held_output {
	const char *path;            /* NULL: standard output (fd) */
	int fd;                      /* standard output's dup; -1 for a file */
	struct prec_sink *mem;       /* until the commit */
	struct prec_sink *file;      /* after it */
};

static int held_write(struct prec_sink *sink, const void *buf, size_t n)
{
	struct held_output *h = sink->priv;

	return prec_sink_write(h->file ? h->file : h->mem, buf, n);
}

static int held_sync(struct prec_sink *sink)
{
	struct held_output *h = sink->priv;

	return h->file ? prec_sink_sync(h->file) : 0;
}

static void held_destroy(struct prec_sink *sink)
{
	struct held_output *h = sink->priv;

	prec_sink_free(h->mem);
	prec_sink_free(h->file);
	if (!h->file && h->fd >= 0)
		close(h->fd);
	free(h);
}

static const struct prec_sink_ops held_ops = {
	.write = held_write, .sync = held_sync, .destroy = held_destroy,
};

/* Checks now what the commit will need, so a recording does not start
 * (nor a command run) only to find it cannot write: standard output not
 * a terminal, or FILE writable (opened without truncating) or creatable
 * in its directory. 0 or -errno (logged). */
static int check_output(const char *path)
{
	char dir[4096];
	const char *slash;
	int fd;

	if (!path) {
		if (isatty(STDOUT_FILENO)) {
			rec_log(REC_LOG_ERROR, "-o -: standard output is a terminal; the "
				"trace is binary: redirect it (-o - > FILE, or a pipe) or "
				"give -o FILE");
			return -EINVAL;
		}
		return 0;
	}
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno != ENOENT) {
		int e = -errno;

		rec_log(REC_LOG_ERROR, "cannot write %s: %s", path, strerror(-e));
		return e;
	}
	slash = strrchr(path, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1,
		 slash ? path : ".");
	if (access(dir, W_OK | X_OK) < 0) {
		int e = -errno;

		rec_log(REC_LOG_ERROR, "cannot create %s: %s (directory %s)", path,
			strerror(-e), dir);
		return e;
	}
	return 0;
}

/* path NULL: standard output, whose fd is kept here and replaced by
 * standard error, so a command recorded with -o - writes its own output
 * there and not into the trace (perf does the same). */
static int open_output(const char *path, struct prec_sink **sink)
{
	struct held_output *h;
	int ret = check_output(path);

	if (ret < 0)
		return ret;
	h = calloc(1, sizeof(*h));
	*sink = calloc(1, sizeof(**sink));
	if (h)
		h->mem = prec_sink_mem_new();
	if (!h || !*sink || !h->mem) {
		if (h)
			prec_sink_free(h->mem);
		free(h);
		free(*sink);
		*sink = NULL;
		rec_log(REC_LOG_ERROR, "out of memory");
		return -ENOMEM;
	}
	h->path = path;
	h->fd = -1;
	if (!path) {
		h->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		if (h->fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			ret = -errno;
			rec_log(REC_LOG_ERROR, "-o -: cannot take standard output: %s",
				strerror(-ret));
			prec_sink_free(h->mem);
			if (h->fd >= 0)
				close(h->fd);
			free(h);
			free(*sink);
			*sink = NULL;
			return ret;
		}
	}
	(*sink)->ops = &held_ops;
	(*sink)->priv = h;
	return 0;
}

/* The recording has started: the file now, the previous one kept as
 * FILE.old, and the bytes held so far into it. 0 or -errno (logged). */
static int commit_output(struct prec_sink *sink)
{
	struct held_output *h = sink->priv;
	const void *held;
	size_t n;
	int fd, ret;

	if (h->file)
		return 0;
	if (h->path) {
		struct stat st;
		char old[4096];

		if (stat(h->path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
		    (size_t)snprintf(old, sizeof(old), "%s.old", h->path) < sizeof(old))
			rename(h->path, old);
		fd = open(h->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			ret = -errno;
			rec_log(REC_LOG_ERROR, "cannot create %s: %s", h->path, strerror(-ret));
			return ret;
		}
	} else {
		fd = h->fd;
	}
	h->file = prec_sink_fd_new(fd, 1);
	if (!h->file) {
		close(fd);
		h->fd = -1;
		rec_log(REC_LOG_ERROR, "out of memory");
		return -ENOMEM;
	}
	held = prec_sink_mem_data(h->mem, &n);
	ret = prec_sink_write(h->file, held, n);
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "cannot write %s: %s", h->path ? h->path :
			"standard output", strerror(-ret));
		return ret;
	}
	prec_sink_free(h->mem);
	h->mem = NULL;
	return 0;
}

static void print_status(const struct rec_recording *r, uint64_t *prev_t,
			 uint64_t *prev_rec)
{
	struct rec_recording_stats st;
	struct rec_status_in in;
	char line[256];
	uint64_t now = prec_now_ns();

	rec_recording_stats(r, &st);
	in.elapsed_ns = st.elapsed_ns;
	in.records = st.st.records;
	in.records_prev = *prev_rec;
	in.dt_ns = now - *prev_t;
	in.lost = st.st.lost;
	in.bytes_written = st.bytes_written;
	in.bytes_raw = st.bytes_raw;
	rec_cli_status(rec_status_format(&in, line, sizeof(line)));
	*prev_t = now;
	*prev_rec = st.st.records;
}

static void print_summary(const struct rec_recording_stats *st, const char *output)
{
	char bytes[32], sum[160];

	rec_status_bytes(st->bytes_written, bytes, sizeof(bytes));
	fprintf(stderr, "perfrec: %s\n", rec_recording_summary(st, sum, sizeof(sum)));
	fprintf(stderr, "perfrec: %llu records in %.1fs written to %s (%s, %.1fx "
		"compression, woken %llu times, %zu-page rings), stopped by %s\n",
		(unsigned long long)st->st.records, (double)st->elapsed_ns / 1e9,
		output, bytes,
		st->bytes_written ? (double)st->bytes_raw / (double)st->bytes_written : 0.0,
		(unsigned long long)st->wakeups, st->mmap_pages, st->stop_reason);
	if (st->bpf_records)
		fprintf(stderr, "perfrec: %llu off-CPU records from the BPF program (shorter "
			"blocks are summed in the kernel)\n",
			(unsigned long long)st->bpf_records);
	if (st->st.lost && st->spool_full)
		fprintf(stderr, "perfrec: warning: the encoder fell behind the kernel "
			"(%llu times the spool was full); losses shrink with fewer "
			"events, a lower -F, or more CPU for perfrec\n",
			(unsigned long long)st->spool_full);
	else if (st->st.lost)
		fprintf(stderr, "perfrec: warning: the kernel rings overflowed; a larger "
			"-m PAGES gives more room\n");
	if (st->st.ustacks) {
		const struct rec_emit_stats *e = &st->st;
		uint64_t un = e->ustack_unwound;

		char stops[256];
		size_t n = 0;

		stops[0] = 0;
		for (int i = 0; i < 8 && n < sizeof(stops); i++)
			if (e->ustack_stops[i])
				n += (size_t)snprintf(stops + n, sizeof(stops) - n, "%s%s %llu",
						      n ? ", " : "", prec_unwind_stop_name(i),
						      (unsigned long long)e->ustack_stops[i]);
		fprintf(stderr, "perfrec: user stacks: %llu, %llu unwound here (%.1f frames, "
			"%.1f us each), %llu kept raw (%.0f bytes each); ended by: %s\n",
			(unsigned long long)e->ustacks, (unsigned long long)un,
			un ? (double)e->ustack_frames / (double)un : 0.0,
			e->ustacks ? (double)e->ustack_ns / 1e3 / (double)e->ustacks : 0.0,
			(unsigned long long)e->ustack_raw,
			e->ustack_raw ? (double)e->ustack_raw_bytes / (double)e->ustack_raw : 0.0,
			stops[0] ? stops : "-");
	}
	if (st->st.bad || st->st.ring_errors)
		fprintf(stderr, "perfrec: warning: %llu records did not decode (kept raw), "
			"%llu ring errors\n", (unsigned long long)st->st.bad,
			(unsigned long long)st->st.ring_errors);
}

/* Where the recording goes: a file, a collector, or both. */
struct outputs {
	struct prec_sink *file;
	struct rec_sender *sender;
	struct prec_sink *tee;
	struct prec_sink *sink;      /* what the recording writes into */
	const char *name;
};

static int open_outputs(struct rec_cli_record_args *a, struct outputs *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	if (a->c.output) {
		bool std_out = !strcmp(a->c.output, "-");

		ret = open_output(std_out ? NULL : a->c.output, &out->file);
		if (ret < 0)
			return ret;
		out->sink = out->file;
		out->name = std_out ? "standard output" : a->c.output;
	}
	if (a->to) {
		struct rec_sender_opts so = REC_SENDER_OPTS_INIT;

		ret = rec_cli_net_load(&a->net, false);
		if (ret < 0)
			return ret;
		so.to = a->to;
		so.host = a->host;
		so.session_id = a->session;
		so.token = a->net.token;
		so.token_len = a->net.token_len;
		so.tls = a->net.tls;
		so.spool_bytes = a->send_spool_bytes;
		so.frame_bytes = a->frame_size;
		ret = rec_sender_new(&so, &out->sender);
		if (ret < 0)
			return ret;
		if (out->file) {
			out->tee = prec_sink_tee_new(out->file, rec_sender_sink(out->sender));
			if (!out->tee)
				return -ENOMEM;
			out->sink = out->tee;
		} else {
			out->sink = rec_sender_sink(out->sender);
			out->name = a->to;
		}
	}
	return 0;
}

static void close_outputs(struct outputs *out)
{
	rec_sender_free(out->sender);
	prec_sink_free(out->tee);
	prec_sink_free(out->file);
}

/* Frames the sender had to drop become a Loss packet in the trace. */
static int note_drops(struct rec_recording *r, struct outputs *out, bool *warned)
{
	char why[256];
	int ret = rec_sender_record_drops(out->sender, r, why, sizeof(why));

	if (ret > 0 && !*warned) {
		rec_log(REC_LOG_WARN, "%s%s", why, out->file ? "; the local copy (-o) "
			"keeps them" : "");
		*warned = true;
	}
	return ret < 0 ? ret : 0;
}

static void print_stream_summary(struct rec_cli_record_args *a, struct outputs *out)
{
	struct rec_sender_stats ss;
	char bytes[32], session[256];

	rec_sender_stats(out->sender, &ss);
	rec_status_bytes(ss.acked_bytes, bytes, sizeof(bytes));
	fprintf(stderr, "perfrec: streamed to %s as %s: %llu frames sent, %llu "
		"acknowledged (%s), %llu resent, %llu dropped%s\n", a->to,
		rec_log_escape(session, sizeof(session), rec_sender_session(out->sender)),
		(unsigned long long)ss.sent,
		(unsigned long long)ss.acked, bytes, (unsigned long long)ss.resent,
		(unsigned long long)ss.dropped,
		ss.connects > 1 ? " (reconnected)" : "");
}

void rec_cli_record_recording_opts(const struct rec_cli_record_args *a,
				   const struct rec_evlist *evl,
				   struct rec_recording_opts *o)
{
	o->evlist = evl;
	o->freq = a->freq;
	o->period = a->period;
	o->callchain = a->callchain;
	o->dwarf = a->dwarf;
	o->stack_user = a->stack_user;
	o->raw_stacks = a->raw_stacks;
	o->switch_events = a->switch_events;
	o->counters = a->c.counters;
	o->ncounters = a->c.ncounters;
	o->interval_ns = a->c.interval_ns;
	o->target = a->c.target;
	o->cpus = a->c.cpus.cpu;
	o->ncpus = a->c.cpus.n;
	o->pids = a->c.ids.tid;
	o->npids = a->c.ids.n;
	o->argv = a->c.command;
	o->mmap_pages = a->mmap_pages;
	o->spool_bytes = a->spool_bytes;
	o->no_symbols = a->no_symbols;
	o->symbols_interval_ns = a->symbols_interval_ns;
	o->duration_ns = a->c.duration_ns;
	o->frame_size = a->frame_size;
	o->flush_ms = a->flush_ms;
	o->zstd_level = a->zstd_level;
	o->argc = self_argc;
	o->argv_self = self_argv;
	o->off_cpu = a->off_cpu;
	o->off_cpu_threshold_ns = a->off_cpu_threshold_ns;
	o->filter = a->filter;
	/* tests: the off-CPU program kernels without BTF get */
	o->off_cpu_raw_tp = getenv("PERFREC_OFFCPU_RAW_TP") != NULL;
}

int rec_cli_record_events(const struct rec_cli_record_args *a, struct rec_evlist *evl)
{
	int ret;

	for (size_t i = 0; i < a->c.nevents; i++) {
		ret = rec_evlist_parse(evl, a->c.events[i]);
		if (ret < 0)
			return ret;
	}
	if (!evl->n && !a->c.ncounters)
		return rec_evlist_parse(evl, DEFAULT_EVENT);
	return 0;
}

/* Runs the recording a parsed command line describes. */
static int run(struct rec_cli_record_args *a, struct rec_evlist *evl)
{
	struct rec_recording_opts o = REC_RECORDING_OPTS_INIT;
	struct rec_recording_stats st;
	struct rec_recording *r = NULL;
	struct outputs out;
	uint64_t next_status, prev_t, prev_rec = 0;
	bool status = !a->quiet && isatty(STDERR_FILENO), warned = false;
	char sum[160];
	int ret, code = 1;

	rec_cli_record_recording_opts(a, evl, &o);

	catch_signals();
	signal(SIGPIPE, SIG_IGN);
	ret = open_outputs(a, &out);
	if (ret < 0)
		goto out;
	ret = rec_recording_new(&o, out.sink, out.name, &r);
	if (ret < 0)
		goto out;
	ret = rec_recording_start(r);
	if (ret < 0)
		goto out;
	if (out.file) {
		ret = commit_output(out.file);
		if (ret < 0)
			goto out;
	}
	prev_t = prec_now_ns();
	next_status = prev_t + STATUS_NS;
	while (!stop_signal && (ret = rec_recording_step(r, 100)) > 0) {
		ret = note_drops(r, &out, &warned);
		if (ret < 0)
			break;
		if (status && prec_now_ns() >= next_status) {
			print_status(r, &prev_t, &prev_rec);
			next_status = prec_now_ns() + STATUS_NS;
		}
	}
	if (ret >= 0)
		ret = note_drops(r, &out, &warned);
	if (ret >= 0)
		ret = rec_recording_stop(r, "signal");
	if (out.sender) {
		/* the index went out with the stop: wait for the acks */
		int fret;

		rec_cli_status_end();
		if (!a->quiet && !stop_signal)
			rec_log(REC_LOG_INFO, "waiting for %s to acknowledge the last frames",
				a->to);
		fret = rec_sender_finish(out.sender,
					 (uint32_t)(a->finish_timeout_ns / 1000000));
		if (!a->quiet)
			print_stream_summary(a, &out);
		if (fret < 0 && ret >= 0)
			ret = fret;
	}
out:
	rec_cli_status_end();
	if (r)
		rec_recording_stats(r, &st);
	if (ret < 0) {
		if (r && st.st.records && !a->quiet)
			fprintf(stderr, "perfrec: %s before the error\n",
				rec_recording_summary(&st, sum, sizeof(sum)));
		/* a failed writer cannot close; the frames written stay valid */
		if (out.file)
			prec_sink_sync(out.file);
		code = 1;
	} else {
		if (!a->quiet)
			print_summary(&st, out.name);
		code = st.have_workload && st.workload_exit >= 0 ? st.workload_exit : 0;
	}
	rec_recording_free(r);
	close_outputs(&out);
	return code;
}

int rec_cli_record(int argc, char **argv)
{
	struct rec_cli_record_args a;
	struct rec_evlist evl = REC_EVLIST_INIT;
	int ret, code = 2;

	/* PERFREC_DEBUG: debug messages too (libbpf's, the verifier's log) */
	rec_cli_print_install(getenv("PERFREC_DEBUG") != NULL);
	ret = rec_cli_record_parse(argc, argv, &a);
	if (ret < 0) {
		fprintf(stderr, "perfrec: see 'perfrec record --help'\n");
		goto out;
	}
	if (a.quiet)
		rec_cli_print_quiet();
	if (a.help) {
		rec_cli_help(stdout, record_usage, record_about, record_opts, record_footer);
		code = 0;
		goto out;
	}
	if (rec_cli_record_events(&a, &evl) < 0)
		goto out;
	code = run(&a, &evl);
out:
	rec_evlist_release(&evl);
	rec_cli_common_release(&a.c);
	rec_cli_net_release(&a.net);
	return code;
}
