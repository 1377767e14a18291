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
#include "format/unwind/unwind.h"
#include "format/writer.h"
#include "recorder/cli/cmd.h"
#include "recorder/cli/parse.h"
#include "recorder/bpf/sfilter.h"
#include "recorder/cli/print.h"
#include "format/base/clock.h"
#include "recorder/log.h"
#include "recorder/net/sender.h"
#include "recorder/net/sendout.h"
#include "recorder/recording/outputs.h"
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

const struct rec_cli_opt rec_cli_record_opts[] = {
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
	{ "max-stack", REC_OPT_MAX_STACK, "N", "callchains of at most N entries (the kernel's\n"
	  "walk stops there; default its limit,\n"
	  "kernel.perf_event_max_stack: 127)" },
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
	{ "rotate-size", REC_OPT_ROTATE_SIZE, "SIZE", "start a new file when the current one reaches\n"
	  "SIZE (e.g. 256m); files are then named\n"
	  "STEM.<UTC time>.<n>.prec (-o STEM.prec; record's\n"
	  "default STEM perfrec, a session's its NAME)" },
	{ "rotate-time", REC_OPT_ROTATE_TIME, "TIME", "start a new file this often (e.g. 1h, 10m; a\n"
	  "bare number is seconds); SIGUSR1 (record) or\n"
	  "'perfrec ctl rotate' (sessions) start one now" },
	{ "keep", REC_OPT_KEEP, "N", "keep the newest N files, delete older ones this\n"
	  "recording (a session: this session) made\n"
	  "(default: keep all)" },
	{ "flight", REC_OPT_FLIGHT, "SIZE", "flight recorder: keep only the newest SIZE of\n"
	  "frames in memory (e.g. 64m); SIGUSR2 (record) or\n"
	  "'perfrec ctl snapshot' write them to\n"
	  "STEM.<UTC time>.<n>.snapshot.prec and recording\n"
	  "goes on; record writes one more at its end" },
	{ "max-size", REC_OPT_MAX_SIZE, "SIZE", "stop once SIZE bytes were written, as frames\n"
	  "go out (e.g. 1g; record only)" },
	{ "mmap-pages", 'm', "N", "ring size in pages per CPU, a power of two\n"
	  "(default: 4 MiB per CPU with CAP_IPC_LOCK, e.g.\n"
	  "root, at most 256 MiB in all; else 128 like perf)" },
	{ "frame-size", REC_OPT_FRAME_SIZE, "SIZE", "packet bytes per compressed frame (default 1m;\n"
	  "1k..64m); without it, --to cuts frames to what\n"
	  "the collector can forward" },
	{ "flush-ms", REC_OPT_FLUSH_MS, "MS", "flush frames at least this often (default 1000)" },
	{ "zstd-level", REC_OPT_ZSTD_LEVEL, "N", "compression level 1..19 (default 2; 1 is cheapest)" },
	{ "spool", REC_OPT_SPOOL, "SIZE", "per-CPU buffer between the rings and the encoder\n"
	  "(default 32m, rounded down to a power of two):\n"
	  "absorbs bursts the encoder cannot keep up with" },
	{ "no-symbols", REC_OPT_NO_SYMBOLS, NULL, "record no symbol tables (kallsyms, ELF symbols of\n"
	  "the objects hit, perf-PID.map); the file then\n"
	  "needs the host's binaries to be symbolized" },
	{ "no-cut", REC_OPT_NO_CUT, NULL, "keep frame-pointer chains whole (by default\n"
	  "their junk end, past the first address outside\n"
	  "the process's mappings, is counted, not kept)" },
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
	"Stop with Ctrl-C (SIGINT) or SIGTERM: the file is completed cleanly.\n"
	"With named files (--rotate-*, --keep), SIGUSR1 starts the next file;\n"
	"with --flight, SIGUSR2 writes a snapshot.\n";

/* Named files (rotation, keep, flight snapshots) need a file name. */
static bool named_files(const struct rec_cli_record_args *a)
{
	return a->rotate_bytes || a->rotate_ns || a->keep || a->flight_bytes;
}

static int check_output_args(const struct rec_cli_record_args *a)
{
	if (a->flight_bytes && (a->to || a->rotate_bytes || a->rotate_ns || a->keep)) {
		rec_log(REC_LOG_ERROR, "--flight keeps the recording in memory: it goes "
			"with neither --to nor --rotate-size, --rotate-time, --keep");
		return -EINVAL;
	}
	if ((a->rotate_bytes || a->rotate_ns || a->keep) && !a->output_given && a->to) {
		rec_log(REC_LOG_ERROR, "--rotate-size, --rotate-time and --keep are about "
			"files: give -o as well as --to");
		return -EINVAL;
	}
	if (named_files(a) && a->c.output && !strcmp(a->c.output, "-")) {
		rec_log(REC_LOG_ERROR, "-o -: --rotate-size, --rotate-time, --keep and "
			"--flight write named files (-o STEM.prec)");
		return -EINVAL;
	}
	if (a->max_bytes && a->flight_bytes) {
		rec_log(REC_LOG_ERROR, "--max-size: a flight recorder holds at most "
			"--flight SIZE already");
		return -EINVAL;
	}
	return 0;
}

/* -F and -c, which exclude each other. */
struct seen {
	bool F, c;
};

static void record_defaults(struct rec_cli_record_args *a)
{
	memset(a, 0, sizeof(*a));
	a->ro = (struct rec_recording_opts)REC_RECORDING_OPTS_INIT;
	a->ro.events.freq = DEFAULT_FREQ;
	a->ro.flush_ms = PREC_DEFAULT_FLUSH_MS;
	a->ro.zstd_level = DEFAULT_ZSTD_LEVEL;
	a->ro.frame_size = DEFAULT_FRAME_SIZE;
	a->c.interval_ns = 1000000000ull;
	a->finish_timeout_ns = 30000000000ull;
	a->ro.events.off_cpu_threshold = 1000000;
}

/* What is sampled and how (events themselves are common options): 1 taken, 0 not one of them, < 0 a bad value
 * (logged). */
static int sampling_option(const struct rec_cli_parser *p, struct rec_cli_record_args *a,
		struct seen *seen, int key, const char *arg)
{
	int ret = 0;

	switch (key) {
	case 'F':
		if (rec_parse_freq(arg, &a->ro.events.freq) < 0)
			ret = rec_cli_bad_value(p, arg, "a frequency in Hz (e.g. 4000, 10k)");
		seen->F = true;
		break;
	case 'c':
		if (rec_parse_uint(arg, UINT64_MAX, &a->ro.events.period) < 0 || !a->ro.events.period)
			ret = rec_cli_bad_value(p, arg, "a positive count");
		seen->c = true;
		break;
	case 'g':
		a->ro.events.callchain = true;
		a->ro.dwarf = a->ro.raw_stacks = false;
		break;
	case REC_OPT_CALL_GRAPH: {
		struct rec_call_graph cg;

		if (rec_parse_call_graph(arg, &cg) < 0) {
			ret = rec_cli_bad_value(p, arg, "fp, dwarf, dwarf,SIZE (8 to "
						"65528 bytes) or dwarf[,SIZE],raw");
			break;
		}
		a->ro.events.callchain = !cg.dwarf;
		a->ro.dwarf = cg.dwarf;
		a->ro.events.stack_user = cg.stack_user;
		a->ro.raw_stacks = cg.raw;
		break;
	}
	case REC_OPT_MAX_STACK: {
		uint64_t v;

		if (rec_parse_uint(arg, 1024, &v) < 0 || v < 2)
			ret = rec_cli_bad_value(p, arg, "2 to 1024 entries, at most "
						"kernel.perf_event_max_stack (127 unless raised)");
		else
			a->ro.events.max_stack = (uint16_t)v;
		break;
	}
	case REC_OPT_SWITCH:
		a->ro.events.switch_events = true;
		break;
	case REC_OPT_OFF_CPU:
		a->ro.events.off_cpu = true;
		if (arg && (rec_parse_duration(arg, 1000000, &a->ro.events.off_cpu_threshold) < 0))
			ret = rec_cli_bad_value(p, arg, "a duration (e.g. 1ms, 500us, 0 "
						"for every block as an interval; a "
						"bare number is ms)");
		break;
	case REC_OPT_FILTER: {
		struct rec_sfilter f;
		struct rec_sfilter_error err;
		char msg[REC_LOG_MAX];

		a->ro.events.filter = arg;
		if (rec_sfilter_parse(arg, &f, &err) < 0) {
			rec_log(REC_LOG_ERROR, "bad --filter: %s",
				rec_sfilter_describe_error(arg, &err, msg, sizeof(msg)));
			ret = -EINVAL;
		}
		rec_sfilter_release(&f);
		break;
	}
	default:
		return 0;
	}
	return ret < 0 ? ret : 1;
}

/* Where it goes and how it is written: 1 taken, 0 not one of them, < 0 a bad value
 * (logged). */
static int output_option(const struct rec_cli_parser *p, struct rec_cli_record_args *a,
		int key, const char *arg)
{
	uint64_t v;
	int ret = 0;

	switch (key) {
	case 'm':
		if (rec_parse_uint(arg, 1u << 20, &v) < 0 || !v || (v & (v - 1)))
			ret = rec_cli_bad_value(p, arg, "a power of two of pages per "
						"ring (e.g. 128)");
		a->ro.events.mmap_pages = (size_t)v;
		break;
	case REC_OPT_FRAME_SIZE:
		if (rec_parse_size(arg, &v) < 0 || v < 1024 || v > (64ull << 20))
			ret = rec_cli_bad_value(p, arg, "a size from 1k to 64m");
		a->ro.frame_size = (size_t)v;
		a->frame_size_set = true;
		break;
	case REC_OPT_FLUSH_MS:
		if (rec_parse_uint(arg, 3600000, &v) < 0)
			ret = rec_cli_bad_value(p, arg, "milliseconds (0..3600000)");
		a->ro.flush_ms = (uint32_t)v;
		break;
	case REC_OPT_ZSTD_LEVEL:
		if (rec_parse_uint(arg, 19, &v) < 0 || !v)
			ret = rec_cli_bad_value(p, arg, "a level from 1 to 19");
		a->ro.zstd_level = (int)v;
		break;
	case REC_OPT_SPOOL:
		if (rec_parse_size(arg, &a->ro.spool_bytes) < 0 ||
		    a->ro.spool_bytes < 65536 || a->ro.spool_bytes > (4ull << 30))
			ret = rec_cli_bad_value(p, arg, "bytes per CPU from 64k to "
						"4096m (e.g. 64m)");
		break;
	case REC_OPT_NO_SYMBOLS:
		a->ro.no_symbols = true;
		break;
	case REC_OPT_NO_CUT:
		a->ro.no_cut = true;
		break;
	case REC_OPT_SYMBOLS_INTERVAL:
		if (rec_parse_duration(arg, 1000000, &a->ro.symbols_interval_ns) < 0 ||
		    a->ro.symbols_interval_ns < 1000000)
			ret = rec_cli_bad_value(p, arg, "an interval of at least 1ms "
						"(e.g. 30s, 500ms)");
		break;
	case 'q':
		a->quiet = true;
		break;
	case REC_OPT_ROTATE_SIZE:
		if (rec_parse_size(arg, &a->rotate_bytes) < 0 || a->rotate_bytes < 65536)
			ret = rec_cli_bad_value(p, arg, "a size of at least 64k (e.g. 256m)");
		break;
	case REC_OPT_ROTATE_TIME:
		if (rec_parse_duration(arg, 1000000000ull, &a->rotate_ns) < 0 ||
		    a->rotate_ns < 1000000000ull)
			ret = rec_cli_bad_value(p, arg, "a duration of at least 1s (e.g. 1h)");
		break;
	case REC_OPT_KEEP:
		if (rec_parse_uint(arg, 1000000, &v) < 0 || !v)
			ret = rec_cli_bad_value(p, arg, "a positive count of files");
		a->keep = (unsigned)v;
		break;
	case REC_OPT_FLIGHT:
		if (rec_parse_size(arg, &a->flight_bytes) < 0 || a->flight_bytes < 65536)
			ret = rec_cli_bad_value(p, arg, "a size of at least 64k (e.g. 64m)");
		break;
	case REC_OPT_MAX_SIZE:
		if (rec_parse_size(arg, &a->max_bytes) < 0 || a->max_bytes < 65536)
			ret = rec_cli_bad_value(p, arg, "a size of at least 64k (e.g. 1g)");
		break;
	case 'h':
		a->help = true;
		break;
	default:
		return 0;
	}
	return ret < 0 ? ret : 1;
}

/* Streaming to a collector (--to): 1 taken, 0 not one of them, < 0 a bad value
 * (logged). */
static int stream_option(const struct rec_cli_parser *p, struct rec_cli_record_args *a,
		int key, const char *arg)
{
	int ret = 0;

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
			ret = rec_cli_bad_value(p, arg, "a size of at least 1m (e.g. 256m)");
		break;
	case REC_OPT_FINISH_TIMEOUT:
		if (rec_parse_duration(arg, 1000000000ull, &a->finish_timeout_ns) < 0)
			ret = rec_cli_bad_value(p, arg, "a duration (e.g. 30s)");
		break;
	default:
		return 0;
	}
	return ret < 0 ? ret : 1;
}

/* What the options say together, once all are read. 0 or -EINVAL
 * (logged). */
static int record_check(struct rec_cli_record_args *a, const struct seen *seen)
{
	if (seen->F && seen->c) {
		rec_log(REC_LOG_ERROR, "-F (frequency) and -c (period) exclude each other");
		return -EINVAL;
	}
	if (seen->c)
		a->ro.events.freq = 0;
	a->output_given = a->c.output != NULL;
	if (!a->c.output && !a->to)
		a->c.output = DEFAULT_OUTPUT;
	if (!a->to && (a->net.token_file || a->net.tls_ca || a->net.tls_cert ||
		       a->session || a->host || a->send_spool_bytes)) {
		rec_log(REC_LOG_ERROR, "--token-file, --tls-*, --session, --host and "
			"--spool-size go with --to");
		return -EINVAL;
	}
	return check_output_args(a);
}

int rec_cli_record_parse(int argc, char **argv, struct rec_cli_record_args *a)
{
	struct rec_cli_parser p;
	struct seen seen = { false, false };
	const char *arg;
	int key, ret;

	record_defaults(a);
	ret = rec_cli_parser_init(&p, rec_cli_record_opts);
	if (ret < 0)
		return ret;
	p.common = &a->c;
	while ((key = rec_cli_next(&p, argc, argv, &arg)) > 0) {
		if (rec_cli_net_option(&a->net, key, arg))
			continue;
		ret = sampling_option(&p, a, &seen, key, arg);
		if (!ret)
			ret = output_option(&p, a, key, arg);
		if (!ret)
			ret = stream_option(&p, a, key, arg);
		if (!ret)
			ret = -EINVAL;   /* the parser knows no other key */
		if (ret < 0)
			goto out;
	}
	ret = key;
	if (ret >= 0)
		ret = record_check(a, &seen);
	if (ret >= 0)
		ret = rec_cli_common_finish(&a->c, argc, argv, p.optind);
out:
	rec_cli_parser_release(&p);
	return ret;
}

static volatile sig_atomic_t stop_signal, user_signal;

static void on_signal(int sig)
{
	if (sig == SIGUSR1 || sig == SIGUSR2)
		user_signal = sig;
	else
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
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
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

/* Where the recording goes: -o FILE (or named files STEM.<time>.<n>.prec
 * with rotation, keep or a flight recorder), a collector (*send, freed by
 * the caller after the outputs), or both. */
static int open_outputs(struct rec_cli_record_args *a, struct rec_sendout **send,
			struct rec_outputs **out)
{
	struct rec_outputs_opts oo = REC_OUTPUTS_OPTS_INIT;
	struct rec_sender_opts so = REC_SENDER_OPTS_INIT;
	char *stem = NULL;
	int ret;

	if (a->c.output && named_files(a)) {
		size_t n = strlen(a->c.output);

		if (n > 5 && !strcmp(a->c.output + n - 5, ".prec"))
			n -= 5;
		stem = strndup(a->c.output, n);
		if (!stem)
			return -ENOMEM;
		oo.stem = stem;
	} else {
		oo.path = a->c.output;
	}
	oo.rotate_bytes = a->rotate_bytes;
	oo.rotate_ns = a->rotate_ns;
	oo.keep = a->keep;
	oo.flight_bytes = a->flight_bytes;
	oo.finish_timeout_ms = (uint32_t)(a->finish_timeout_ns / 1000000);
	oo.warn_drops_once = true;
	if (a->to) {
		ret = rec_cli_net_load(&a->net, false);
		if (ret < 0)
			goto out;
		so.to = a->to;
		so.host = a->host;
		so.session_id = a->session;
		so.token = a->net.token;
		so.token_len = a->net.token_len;
		so.tls = a->net.tls;
		so.spool_bytes = a->send_spool_bytes;
		so.frame_bytes = a->ro.frame_size;
		so.frame_adapts = !a->frame_size_set;
		ret = rec_sendout_new(&so, send);
		if (ret < 0)
			goto out;
		oo.to = rec_sendout_stream(*send);
	}
	ret = rec_outputs_new(&oo, out);
out:
	free(stem);
	return ret;
}

static void print_stream_summary(struct rec_cli_record_args *a, struct rec_sender *sender)
{
	struct rec_sender_stats ss;
	char bytes[32], session[256];

	rec_sender_stats(sender, &ss);
	rec_status_bytes(ss.acked_bytes, bytes, sizeof(bytes));
	fprintf(stderr, "perfrec: streamed to %s as %s: %llu frames sent, %llu "
		"acknowledged (%s), %llu resent, %llu dropped%s%s\n", a->to,
		rec_log_escape(session, sizeof(session), rec_sender_session(sender)),
		(unsigned long long)ss.sent,
		(unsigned long long)ss.acked, bytes, (unsigned long long)ss.resent,
		(unsigned long long)ss.dropped,
		ss.connects > 1 ? " (reconnected)" : "",
		rec_sender_refused(sender, NULL, 0) ? ", ended by the collector's refusal" : "");
}

void rec_cli_record_recording_opts(const struct rec_cli_record_args *a,
				   const struct rec_evspecs *evl,
				   struct rec_recording_opts *o)
{
	/* what record parsed into a->ro, with what the common options and
	 * the program add */
	*o = a->ro;
	o->evspecs = evl;
	o->counters = a->c.counters;
	o->ncounters = a->c.ncounters;
	o->interval_ns = a->c.interval_ns;
	o->target = a->c.target;
	o->cpus = a->c.cpus.cpu;
	o->ncpus = a->c.cpus.n;
	o->pids = a->c.ids.tid;
	o->npids = a->c.ids.n;
	o->argv = a->c.command;
	o->duration_ns = a->c.duration_ns;
	o->argc = self_argc;
	o->argv_self = self_argv;
	/* tests: the off-CPU program kernels without BTF get */
	o->bpf.force_raw_tp = getenv("PERFREC_OFFCPU_RAW_TP") != NULL;
}

int rec_cli_record_events(const struct rec_cli_record_args *a, struct rec_evspecs *evl)
{
	int ret;

	for (size_t i = 0; i < a->c.nevents; i++) {
		ret = rec_evspecs_parse(evl, a->c.events[i]);
		if (ret < 0)
			return ret;
	}
	if (!evl->n && !a->c.ncounters)
		return rec_evspecs_parse(evl, DEFAULT_EVENT);
	return 0;
}

/* SIGUSR1: a new file now; SIGUSR2: a flight snapshot now. */
static int on_user_signal(struct rec_outputs *out, struct rec_recording *r, int sig)
{
	struct rec_recording_stats st;
	char done[4096];
	int ret;

	if (sig == SIGUSR1)
		ret = rec_outputs_rotate(out, r, done, sizeof(done));
	else
		ret = rec_outputs_snapshot(out, r, NULL, done, sizeof(done));
	if (ret >= 0)
		return 0;
	/* a file that could not be made leaves the recording as it was */
	rec_recording_stats(r, &st);
	return st.state == REC_RECORDING_FAILED ? ret : 0;
}

/* --max-size: every output so far, as written */
static bool max_size_reached(const struct rec_cli_record_args *a,
			     const struct rec_recording *r)
{
	struct rec_recording_stats st;

	if (!a->max_bytes)
		return false;
	rec_recording_stats(r, &st);
	return st.bytes_written >= a->max_bytes;
}

/* Runs the recording a parsed command line describes. */
static int run(struct rec_cli_record_args *a, struct rec_evspecs *evl)
{
	struct rec_recording_opts o = REC_RECORDING_OPTS_INIT;
	struct rec_recording_stats st = { 0 };   /* read at the end even when no recording was made */
	struct rec_outputs_status os;
	struct rec_recording *r = NULL;
	struct rec_outputs *out = NULL;
	struct rec_sendout *send = NULL;
	uint64_t next_status, prev_t, prev_rec = 0;
	bool status = !a->quiet && isatty(STDERR_FILENO);
	const char *reason = "signal";
	char sum[160], name[4096] = "", snap[4096] = "";
	int ret, code = 1;

	rec_cli_record_recording_opts(a, evl, &o);

	catch_signals();
	signal(SIGPIPE, SIG_IGN);
	ret = open_outputs(a, &send, &out);
	if (ret < 0)
		goto out;
	o.frame_size = rec_outputs_frame_size(out, o.frame_size);
	ret = rec_recording_new(&o, rec_outputs_sink(out), rec_outputs_name(out), &r);
	if (ret < 0)
		goto out;
	ret = rec_recording_start(r);
	if (ret < 0)
		goto out;
	ret = rec_outputs_started(out);
	if (ret < 0)
		goto out;
	prev_t = prec_now_ns();
	next_status = prev_t + STATUS_NS;
	while (!stop_signal && (ret = rec_recording_step(r, 100)) > 0) {
		if (user_signal) {
			int sig = user_signal;

			user_signal = 0;
			ret = on_user_signal(out, r, sig);
			if (ret < 0)
				break;
		}
		ret = rec_outputs_step(out, r);
		if (ret < 0)
			break;
		if (max_size_reached(a, r)) {
			reason = "max size";
			break;
		}
		if (status && prec_now_ns() >= next_status) {
			print_status(r, &prev_t, &prev_rec);
			next_status = prec_now_ns() + STATUS_NS;
		}
	}
	if (ret >= 0)
		ret = rec_outputs_note_drops(out, r);
	snprintf(name, sizeof(name), "%s", rec_outputs_name(out));
	if (ret >= 0)
		ret = rec_outputs_stop_snapshot(out, r, reason, snap, sizeof(snap));
	rec_outputs_status(out, &os);
	if (os.stream) {
		/* the index went out with the stop: wait for the acks */
		int fret;

		rec_cli_status_end();
		if (!a->quiet && !stop_signal && !rec_sender_refused(os.stream, NULL, 0))
			rec_log(REC_LOG_INFO, "waiting for %s to acknowledge the last frames",
				a->to);
		fret = rec_outputs_finish(out);
		if (!a->quiet)
			print_stream_summary(a, os.stream);
		if (fret < 0 && ret >= 0)
			ret = fret;
	} else {
		rec_outputs_finish(out);
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
		if (out)
			rec_outputs_sync(out);
		code = 1;
	} else {
		if (!a->quiet)
			print_summary(&st, snap[0] ? snap : name);
		code = st.have_workload && st.workload_exit >= 0 ? st.workload_exit : 0;
	}
	rec_recording_free(r);
	rec_outputs_free(out);
	rec_sendout_free(send);
	return code;
}

int rec_cli_record(int argc, char **argv)
{
	struct rec_cli_record_args a;
	struct rec_evspecs evl = REC_EVSPECS_INIT;
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
		rec_cli_help(stdout, record_usage, record_about, rec_cli_record_opts, record_footer);
		code = 0;
		goto out;
	}
	if (rec_cli_record_events(&a, &evl) < 0)
		goto out;
	code = run(&a, &evl);
out:
	rec_evspecs_release(&evl);
	rec_cli_common_release(&a.c);
	rec_cli_net_release(&a.net);
	return code;
}
