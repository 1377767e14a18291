/*
 * main.c - perfrec-analyze: command line, output files, progress, exit
 * status. The only place in the analyzer that prints or exits.
 *
 * Exit status: 0 success; 1 the work failed (or `verify` found the file
 * not whole); 2 bad usage or no input that can be read at all; 3 the
 * rest was analyzed but input files were skipped (each named on stderr).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/load/load.h"
#include "analyzer/read/dataset.h"
#include "analyzer/reports/counters.h"
#include "analyzer/reports/diff.h"
#include "analyzer/reports/dump.h"
#include "analyzer/render/export.h"
#include "analyzer/render/timed.h"
#include "analyzer/read/filter.h"
#include "analyzer/read/frames.h"
#include "analyzer/render/html.h"
#include "analyzer/reports/info.h"
#include "analyzer/reports/report.h"
#include "analyzer/reports/sched.h"
#include "analyzer/reports/script.h"
#include "analyzer/read/trace.h"
#include "analyzer/render/table.h"
#include "analyzer/reports/verify.h"
#include "analyzer/query/query.h"
#include "format/error.h"

#define PROG "perfrec-analyze"
#ifndef PERFREC_VERSION
#define PERFREC_VERSION "0"
#endif

static const char usage_main[] =
"usage: " PROG " COMMAND [FILE|DIR]... [options]\n"
"\n"
"Offline analysis of .prec traces written by `perfrec record`.\n"
"Inputs are files and directories (searched for *.prec), read as one dataset:\n"
"one timeline per host, rotated files joined, the same data twice read once.\n"
"Without an input: perfrec.prec (what `perfrec record` writes); -i FILE too.\n"
"\n"
"commands:\n"
"  info      host, recording, events, packet counts, losses, frames, damage\n"
"  report    samples by comm/pid/tid/cpu/dso/sym/event, with percentages\n"
"  script    every sample and its stack, in perf script's layout\n"
"  counters  counter groups: raw and scaled values, rates, intervals\n"
"  sched     on/off-CPU time, switches, preemptions, per-CPU busy\n"
"  dump      every packet, one line each, in global time order\n"
"  verify    integrity of frames, checksums, index; exit 0 only if whole\n"
"  export    folded stacks, pprof, or a report as JSON/CSV\n"
"  html      one self-contained page: flame graphs, CPU timeline, tables\n"
"  diff      two recordings (or two windows of one) compared key by key\n"
"  query     SQL over the dataset (SQLite): samples, stacks, switches, ...\n"
"  load      the SQL tables into a ClickHouse cluster (load --help)\n"
"\n"
"Run `" PROG " COMMAND --help` for the options of a command, `" PROG " --version`\n"
"for the version. `perfrec report|script|diff|html|info ...` runs the same\n"
"command here, the way `perf report` and `perf script` work for perf.\n"
"\n"
"exit status: 0 done; 1 the work failed (verify: not whole); 2 bad usage or\n"
"no input could be read; 3 done, but input files were skipped (named on\n"
"stderr: missing, unreadable, not .prec, empty, a directory loop).\n";

static const char common_opts[] =
"output:\n"
"  --json             JSON instead of aligned text\n"
"  --csv              CSV instead of aligned text\n"
"  -o, --output FILE  write to FILE instead of standard output\n"
"  -j, --jobs N       decoding threads (default: number of CPUs)\n"
"  -i, --input FILE   an input (as perf takes it); FILE and DIR arguments too\n"
"  --no-progress      no progress line on stderr (shown only on a tty,\n"
"                     for runs longer than a second)\n";

static const char filter_opts[] =
"filters:\n"
"  --cpu LIST         CPUs, e.g. 0,2-3\n"
"  --pid LIST         process ids\n"
"  --tid LIST         thread ids\n"
"  --comm NAMES       command names, comma-separated\n"
"  --event NAMES      event names as recorded (see `info`)\n"
"  --time START,END   seconds from the trace start (e.g. 0.5,2.5); prefix\n"
"                     '@' for absolute monotonic seconds as `dump` prints\n"
"                     them (@1234.5,@1236); either side may be empty\n"
"  --since TIME       wall clock: '2026-11-26 03:00', ISO 8601\n"
"                     ('2026-11-26T03:00:00+01:00'; UTC unless a zone is\n"
"                     given), or before now: -2h, -30m, -90s, -1d\n"
"  --until TIME       the same; only the files (and frames) inside are read\n"
"  --host NAMES       hosts (FileHeader hostname), comma-separated\n";

struct cmd_help {
	const char *name, *text;
	int filters;
};

static const struct cmd_help helps[] = {
	/* diff and html --diff: main sends them to diff_main */
	{ "diff",
	  "usage: " PROG " diff BASE NEW [options]\n"
	  "       " PROG " diff FILE --base-time A,B --new-time C,D [options]\n"
	  "       " PROG " html --diff BASE NEW -o PAGE.html [options]\n\n"
	  "BASE and NEW are each a .prec file or a directory of them (read as one dataset:\n"
	  "rotated files joined, the same data twice read once).\n\n"
	  "Compares two profiles key by key, as `perf diff` does: for each key (default\n"
	  "sym) the share of the sample period in BASE and in NEW, the change in points\n"
	  "(Delta = New - Base), and the samples behind each share; rows sorted by the\n"
	  "size of the change, largest first. Shares are of each side's own total\n"
	  "period, so recordings of different lengths or rates compare. Keys are\n"
	  "matched by name, so two recordings of the same program line up.\n"
	  "BASE and NEW are .prec files; with one FILE, --base-time and --new-time cut\n"
	  "it into two windows instead (the --time syntax). The filters apply to both\n"
	  "sides; --base-time/--new-time with two files window each side.\n"
	  "`html --diff` writes NEW's page with a differential flame graph: widths from\n"
	  "NEW, red where a frame's share grew, blue where it shrank (the deeper the\n"
	  "color, the more points), both shares on hover.\n\n"
	  "  -s, --sort KEYS    comma-separated keys from comm, pid, tid, cpu, dso,\n"
	  "                     sym, event (default: sym)\n"
	  "  -n, --top N        only the first N rows\n"
	  "  --base-time A,B    the base side's window (seconds from its start)\n"
	  "  --new-time C,D     the new side's window\n"
	  "  --symfs DIR        richer symbol files by build-id or path\n"
	  "  --no-demangle      keep C++/Rust symbol names as recorded\n", 1 },
	/* main sends load to load_main */
	{ "load", "usage: " PROG " load [--clickhouse URL[,URL...] | --clickhouse-file FILE]\n"
	  "                           [--cluster NAME] [FILE|DIR|DB.sqlite]...\n\n"
	  "Loads the aggregated SQL tables (profile, stacks, offcpu_profile, counters,\n"
	  "tasks, files; see docs/fleet.md) of each .prec file of the dataset (or of\n"
	  "a database `query --db` wrote of one file) into a ClickHouse cluster,\n"
	  "through its HTTP interface. A file still being written (locked by the\n"
	  "collector or archiver writing it) is left for later, named on stderr; a file\n"
	  "without its end (a recorder killed, a copy cut short) is loaded as far as\n"
	  "its frames are whole, named in a warning, with whole = 0 in files, and a\n"
	  "longer copy of its recording loaded later replaces it. Idempotent: a recording\n"
	  "already loaded is skipped (keyed by its host and its content: start, end,\n"
	  "bytes, samples), and a load interrupted anywhere resumes without duplicates.\n\n"
	  "  --clickhouse URLS  every server of the cluster, comma-separated\n"
	  "                     (http://host:8123, ClickHouse parameters such as\n"
	  "                     ?database=perfrec may follow): the tables are made on\n"
	  "                     each, rows go through the first\n"
	  "  --clickhouse-file FILE  the URLs from FILE (separated by commas, spaces or\n"
	  "                     newlines), which must be chmod 600: a URL may hold a\n"
	  "                     password, and every local user reads command lines\n"
	  "  --cluster NAME     the remote_servers entry the Distributed tables use\n"
	  "                     (default: perfrec)\n"
	  "Without --clickhouse or --clickhouse-file, the URLs are PERFREC_CLICKHOUSE's\n"
	  "(an environment variable only the same user can read).\n", 0 },
	{ "info", "usage: " PROG " info FILE... [-n N] [--json|--csv] [-o FILE]\n\n"
	  "What the trace is. First a summary: host, wall-clock start, duration,\n"
	  "what was recorded and how it stopped, losses and damage when there are\n"
	  "any, and the processes with the most samples (-n N of them, default 5).\n"
	  "Then the detail: host and kernel, command line, events and groups,\n"
	  "packets per kind, losses (absolute and % of events), frames, compressed\n"
	  "and raw bytes, damaged frames and notes.\n", 0 },
	{ "report", "usage: " PROG " report FILE... [options]\n\n"
	  "Samples aggregated by keys, heaviest first. Overhead is the share of the\n"
	  "total sample period (sample count when the event has no period); with\n"
	  "several sampling events, add `event` to --sort or pick one with --event.\n"
	  "Callers in a callchain are named at their return address - 1 (the call\n"
	  "itself). C++ and Rust symbols are shown demangled, as perf shows them.\n"
	  "Samples recorded with --call-graph dwarf carry a copy of the user stack;\n"
	  "it is unwound here with the unwind tables the trace carries.\n\n"
	  "  -s, --sort KEYS    comma-separated keys from comm, pid, tid, cpu, dso,\n"
	  "                     sym, event (default: comm,dso,sym)\n"
	  "  -n, --top N        only the first N rows\n"
	  "  --children         add inclusive (callchain) totals per function\n"
	  "  --tree             the call chains under each row as a tree, like\n"
	  "                     perf report --stdio -g (text only): outermost caller\n"
	  "                     first, percentages of the total, branches under 0.5%\n"
	  "                     hidden; with --children, each function's callees too\n"
	  "  -g                 --children --tree, perf report -g's default view\n"
	  "  --percent-limit N  hide rows, and tree branches, under N% of the total\n"
	  "  --off-cpu          off-CPU time (record --off-cpu) instead of samples:\n"
	  "                     blocked ms and blocks by the same keys, under the\n"
	  "                     kernel and user stacks where the tasks blocked\n"
	  "  --symfs DIR        richer symbol files by build-id or path\n"
	  "  --no-demangle      keep C++/Rust symbol names as recorded\n"
	  "  --no-cut           keep frame-pointer chains whole: by default a chain\n"
	  "                     ends, as one [truncated] frame, at the first address\n"
	  "                     outside the process's code or a frame repeating to\n"
	  "                     the end (junk of code without frame pointers)\n", 1 },
	{ "counters", "usage: " PROG " counters FILE... [options]\n\n"
	  "Counter groups (recorded with --counters): final raw and scaled values\n"
	  "(value x enabled / running), rate per second, running/enabled %.\n\n"
	  "  -I, --interval     per-snapshot deltas, like perf stat -I\n"
	  "  --ratio A/B        ratio of two member events, e.g. instructions/cycles\n", 0 },
	{ "sched", "usage: " PROG " sched FILE... [options]\n\n"
	  "From context-switch records: per task on-CPU and off-CPU time, switch-ins,\n"
	  "preempted vs voluntary switch-outs, longest off-CPU gap and when it began\n"
	  "(seconds from the trace start); per CPU busy time and %. With off-CPU data\n"
	  "(record --off-cpu) also each task's blocked time by state (sleeping, disk,\n"
	  "runnable...).\n\n"
	  "  -s, --sort KEY     oncpu (default), offcpu, switches, preempt, voluntary,\n"
	  "                     maxgap, tid, comm\n"
	  "  -n, --top N        only the first N tasks\n"
	  "  --hist             histogram of off-CPU durations per task (log2 us)\n", 1 },
	{ "dump", "usage: " PROG " dump FILE... [options]\n\n"
	  "Every packet as one line (text, or JSON Lines with --json), globally\n"
	  "time-ordered across CPUs and frames. Times are CLOCK_MONOTONIC seconds.\n\n"
	  "  --file-order       packets in file order instead (no merge)\n", 1 },
	{ "verify", "usage: " PROG " verify FILE... [--json|--csv] [-o FILE]\n\n"
	  "Decodes every frame, checks checksums, the index and the file's end.\n"
	  "Exit status 0 only when the file is whole; 1 when anything is damaged,\n"
	  "torn or the index is missing (the list says where). Concatenated files\n"
	  "(cat a.prec b.prec) are checked part by part: whole when every part is.\n", 0 },
	{ "export", "usage: " PROG " export FILE... --format FMT [options]\n\n"
	  "  -f, --format FMT   folded  stacks \"comm;outer;...;leaf COUNT\" for\n"
	  "                             flamegraph.pl / speedscope\n"
	  "                     pprof   gzipped profile.proto for pprof / go tool pprof\n"
	  "                             (binary: needs -o FILE or a non-tty stdout)\n"
	  "                     json    the report as JSON (same as report --json)\n"
	  "                     csv     the report as CSV\n"
	  "                     perfetto  Perfetto trace (ui.perfetto.dev): threads, CPU\n"
	  "                             lanes, samples, off-CPU slices, counters\n"
	  "                     speedscope  JSON for speedscope.app: a time-ordered\n"
	  "                             sampled profile per thread\n"
	  "                     otlp    OpenTelemetry profiles: an OTLP/HTTP request body\n"
	  "                             (ExportProfilesServiceRequest; binary)\n"
	  "  --off-cpu          folded/pprof: off-CPU stacks weighted by blocked time\n"
	  "                     (folded: COUNT in microseconds) instead of samples\n"
	  "  --report NAME      with json/csv only: report (default), sched, counters,\n"
	  "                     info\n"
	  "  --symfs DIR        richer symbol files by build-id or path\n"
	  "  --no-demangle      keep C++/Rust symbol names as recorded\n"
	  "  --no-cut           keep frame-pointer chains whole (see report --help)\n"
	  "  (report options -s/-n/--children apply to json/csv)\n", 1 },
	{ "html", "usage: " PROG " html FILE|DIR... -o PAGE.html [options]\n\n"
	  "One HTML page that opens offline in any browser (everything inline, nothing\n"
	  "fetched): the trace's host, window, events and losses; a flame graph per\n"
	  "sampling event (click to zoom, search, inverted view); a per-CPU timeline\n"
	  "from context-switch records (zoom, pan, which task ran when); and the tables\n"
	  "of report --children, sched and counters. Sizes stay bounded: flame-graph\n"
	  "frames under 0.05% of the weight are merged, timeline runs shorter than\n"
	  "about a pixel are summed per pixel (busy times stay exact). One host's\n"
	  "files (rotated files, a directory) make one page on one timeline; several\n"
	  "hosts make one page with a host selector (each host its own timeline,\n"
	  "flame graph and tables; --host picks one).\n\n"
	  "  -n, --top N        rows of each table (default 100)\n"
	  "  --symfs DIR        richer symbol files by build-id or path\n"
	  "  (without -o the page goes to standard output, unless that is a terminal)\n", 1 },
	/* ---- perf-shaped: script */
	{ "script", "usage: " PROG " script FILE [options]\n\n"
	  "Every sample, one after another, as `perf script` prints them: a line\n"
	  "\"comm pid/tid [cpu] seconds: period event:\", then the stack leaf first,\n"
	  "one \"address symbol+offset (object)\" line per frame, then an empty line;\n"
	  "so FlameGraph's stackcollapse-perf.pl and other readers of perf script's\n"
	  "output read it:  " PROG " script t.prec | stackcollapse-perf.pl.\n"
	  "Samples are in file order (time order within each CPU); seconds are\n"
	  "CLOCK_MONOTONIC as `dump` prints them; the object is its file name.\n\n"
	  "  --symfs DIR        richer symbol files by build-id or path\n"
	  "  --no-demangle      keep C++/Rust symbol names as recorded\n", 1 },
	/* ---- end perf-shaped */
	{ "query", "usage: " PROG " query SQL [FILE|DIR]... [options]\n"
	  "       " PROG " query --file F.sql [FILE|DIR]...   (SQL '-': standard input)\n"
	  "       " PROG " query --db OUT.sqlite [FILE|DIR]...\n\n"
	  "SQL (SQLite's dialect) over the dataset, read in place: the tables samples,\n"
	  "stacks, switches, offcpu, counters, tasks, losses, files and the view profile\n"
	  "decode frames as a statement reads them; a condition on time_ns (wall-clock\n"
	  "ns since the epoch), host or cpu reaches the reader, so a window reads only\n"
	  "its files and frames. Queries only read. docs/query.md lists every column.\n"
	  "Exit status 2 when SQLite refuses the SQL (its message is shown).\n\n"
	  "  --file F           the SQL from file F ('-': standard input)\n"
	  "  --db OUT.sqlite    write every table, and profile's rows, into a SQLite\n"
	  "                     file (for sqlite3, Python, Datasette) instead\n"
	  "  --stats            files opened and frames decoded, on stderr\n"
	  "  --symfs DIR        richer symbol files by build-id or path\n"
	  "  --no-demangle      keep C++/Rust symbol names as recorded\n"
	  "  --no-cut           keep frame-pointer chains whole (see report --help)\n", 0 },
};

static void print_help(FILE *f, const char *cmd)
{
	for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++) {
		if (strcmp(helps[i].name, cmd))
			continue;
		fputs(helps[i].text, f);
		fputc('\n', f);
		if (helps[i].filters) {
			fputs(filter_opts, f);
			fputc('\n', f);
		}
		fputs(common_opts, f);
		return;
	}
	fputs(usage_main, f);
}

/* ---- progress */

struct progress {
	int enabled;
	struct timespec start, last;
	int shown;
};

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void on_progress(void *ctx, const char *what, size_t done, size_t total)
{
	struct progress *p = ctx;
	if (!p->enabled)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (since(&p->start, &now) < 1.0 || (p->shown && since(&p->last, &now) < 0.1))
		return;
	p->last = now;
	p->shown = 1;
	fprintf(stderr, "\r%s: %s %3.0f%% (%zu/%zu frames)\033[K", PROG, what,
		total ? 100.0 * (double)done / (double)total : 100.0, done, total);
}

static void progress_end(struct progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = 0;
}

/* ---- options */

enum {
	O_JSON = 1000, O_CSV, O_NOPROG, O_CPU, O_PID, O_TID, O_COMM, O_EVENT,
	O_TIME, O_CHILDREN, O_HIST, O_RATIO, O_FILEORDER, O_SYMFS, O_REPORT,
	O_NODEMANGLE, O_OFFCPU, O_HOST, O_SINCE, O_UNTIL, O_NOCUT,
	O_TREE, O_PCTLIMIT,   /* perf-shaped: report -g */
	O_BASETIME, O_NEWTIME, O_DIFF,   /* diff */
	O_SQLFILE, O_DB, O_STATS,        /* query */
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, O_JSON },
	{ "csv", no_argument, NULL, O_CSV },
	{ "output", required_argument, NULL, 'o' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "no-progress", no_argument, NULL, O_NOPROG },
	{ "cpu", required_argument, NULL, O_CPU },
	{ "pid", required_argument, NULL, O_PID },
	{ "tid", required_argument, NULL, O_TID },
	{ "comm", required_argument, NULL, O_COMM },
	{ "event", required_argument, NULL, O_EVENT },
	{ "time", required_argument, NULL, O_TIME },
	{ "sort", required_argument, NULL, 's' },
	{ "top", required_argument, NULL, 'n' },
	{ "children", no_argument, NULL, O_CHILDREN },
	{ "hist", no_argument, NULL, O_HIST },
	{ "interval", no_argument, NULL, 'I' },
	{ "ratio", required_argument, NULL, O_RATIO },
	{ "file-order", no_argument, NULL, O_FILEORDER },
	{ "format", required_argument, NULL, 'f' },
	{ "symfs", required_argument, NULL, O_SYMFS },
	{ "report", required_argument, NULL, O_REPORT },
	{ "no-demangle", no_argument, NULL, O_NODEMANGLE },
	{ "no-cut", no_argument, NULL, O_NOCUT },
	{ "off-cpu", no_argument, NULL, O_OFFCPU },
	{ "tree", no_argument, NULL, O_TREE },
	{ "percent-limit", required_argument, NULL, O_PCTLIMIT },
	{ "input", required_argument, NULL, 'i' },
	{ "host", required_argument, NULL, O_HOST },
	{ "since", required_argument, NULL, O_SINCE },
	{ "until", required_argument, NULL, O_UNTIL },
	{ "base-time", required_argument, NULL, O_BASETIME },
	{ "new-time", required_argument, NULL, O_NEWTIME },
	{ "diff", no_argument, NULL, O_DIFF },
	{ "file", required_argument, NULL, O_SQLFILE },
	{ "db", required_argument, NULL, O_DB },
	{ "stats", no_argument, NULL, O_STATS },
	{ NULL, 0, NULL, 0 },
};

struct cli {
	char **inputs;            /* argv's and -i's, borrowed */
	size_t ninputs;
	const char *cmd, *file, *output, *sort, *ratio, *format, *symfs, *report;
	enum ana_fmt fmt;
	int dataset;              /* several inputs, a directory, or --host */
	int jobs, progress, children, hist, interval, file_order, no_demangle, off_cpu;
	int no_cut;               /* frame-pointer chains kept whole */
	size_t top;
	struct ana_filter filter;
	int tree;                 /* perf-shaped: report -g */
	double percent_limit;
	int diff;                 /* diff, or html --diff: BASE and NEW */
	const char *sql_file, *db;   /* query */
	int stats;
	int default_input;        /* no input given: perfrec.prec */
	struct ana_filter *side_time[2];   /* diff: --base-time, --new-time */
};

/* arg may hold names from the trace (an error naming its events):
 * the message is escaped as text output is. */
static int fail_usage(const char *cmd, const char *fmt, const char *arg)
{
	char msg[1024];

	snprintf(msg, sizeof(msg), fmt, arg);
	fprintf(stderr, "%s %s: ", PROG, cmd);
	ana_text_str(stderr, msg);
	fprintf(stderr, "\nrun `%s %s --help` for usage\n", PROG, cmd);
	return 2;
}

static int parse_count(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || !*s || *end || *s == '-' || v > 1000000000ull)
		return -1;
	*out = (size_t)v;
	return 0;
}

/* Which options each command takes (others are refused). */
static int allowed(const char *cmd, int opt)
{
	int filt = opt == O_CPU || opt == O_PID || opt == O_TID || opt == O_COMM ||
		   opt == O_EVENT || opt == O_TIME || opt == O_SINCE || opt == O_UNTIL;
	int common = opt == 'h' || opt == O_JSON || opt == O_CSV || opt == 'o' ||
		     opt == 'j' || opt == O_NOPROG || opt == 'i' || opt == O_HOST;
	if (!strcmp(cmd, "diff"))   /* and html --diff: BASE and NEW are its inputs */
		return (common && opt != 'i' && opt != O_HOST) ||
		       (filt && opt != O_SINCE && opt != O_UNTIL) || opt == 's' || opt == 'n' ||
		       opt == O_SYMFS || opt == O_NODEMANGLE || opt == O_BASETIME ||
		       opt == O_NEWTIME || opt == O_DIFF;
	if (common)
		return 1;
	if (!strcmp(cmd, "report"))
		return filt || opt == 's' || opt == 'n' || opt == O_CHILDREN || opt == O_SYMFS ||
		       opt == O_NODEMANGLE || opt == O_OFFCPU || opt == O_NOCUT ||
		       opt == 'g' || opt == O_TREE || opt == O_PCTLIMIT;
	if (!strcmp(cmd, "sched"))   /* switch records belong to no event */
		return (filt && opt != O_EVENT) || opt == 's' || opt == 'n' || opt == O_HIST;
	if (!strcmp(cmd, "counters"))
		return opt == 'I' || opt == O_RATIO;
	if (!strcmp(cmd, "dump"))
		return filt || opt == O_FILEORDER;
	if (!strcmp(cmd, "script"))   /* perf-shaped */
		return filt || opt == O_SYMFS || opt == O_NODEMANGLE;
	if (!strcmp(cmd, "html"))
		return filt || opt == 'n' || opt == O_SYMFS;
	if (!strcmp(cmd, "query"))
		return opt == O_SQLFILE || opt == O_DB || opt == O_STATS || opt == O_SYMFS ||
		       opt == O_NODEMANGLE || opt == O_NOCUT;
	if (!strcmp(cmd, "export"))
		return filt || opt == 'f' || opt == 's' || opt == 'n' || opt == O_CHILDREN ||
		       opt == O_SYMFS || opt == O_REPORT || opt == 'I' || opt == O_RATIO ||
		       opt == O_HIST || opt == O_NODEMANGLE || opt == O_OFFCPU || opt == O_NOCUT;
	return 0;
}

static int parse_args(struct cli *c, int argc, char **argv)
{
	const char *as = c->diff ? "diff" : c->cmd;   /* whose options */
	char err[512];
	int opt;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "ho:j:s:n:If:gi:", long_opts, NULL)) != -1) {
		if (opt == '?' || opt == ':') {
			const char *bad = argv[optind - 1];
			if (optopt && strchr("ojsnfi", optopt))
				return fail_usage(c->cmd, "option '%s' needs a value", bad);
			return fail_usage(c->cmd, "unknown option '%s'", bad);
		}
		if (!allowed(as, opt)) {
			char name[64];
			snprintf(name, sizeof(name), "-%c", opt < 256 ? opt : '?');
			for (const struct option *lo = long_opts; lo->name; lo++)
				if (lo->val == opt)
					snprintf(name, sizeof(name), "--%s", lo->name);
			return fail_usage(c->cmd, c->diff ? "unknown option '%s'" :
					  "option '%s' does not apply to this command", name);
		}
		switch (opt) {
		case 'h':
			print_help(stdout, as);
			return 0;
		case O_JSON: c->fmt = ANA_FMT_JSON; break;
		case O_CSV: c->fmt = ANA_FMT_CSV; break;
		case 'o': c->output = optarg; break;
		case 'j': {
			size_t n;
			if (parse_count(optarg, &n) || n < 1 || n > 256)
				return fail_usage(c->cmd, "bad --jobs '%s': a number from 1 to 256",
						  optarg);
			c->jobs = (int)n;
			break;
		}
		case O_NOPROG: c->progress = 0; break;
		case O_CPU: case O_PID: case O_TID: case O_COMM: case O_EVENT: case O_TIME: {
			static const char *const names[] = { "cpu", "pid", "tid", "comm", "event", "time" };
			if (ana_filter_parse(&c->filter, names[opt - O_CPU], optarg, err, sizeof(err)))
				return fail_usage(c->cmd, "%s", err);
			break;
		}
		case O_HOST: case O_SINCE: case O_UNTIL:
			if (ana_filter_parse(&c->filter, opt == O_HOST ? "host" : opt == O_SINCE ?
					     "since" : "until", optarg, err, sizeof(err)))
				return fail_usage(c->cmd, "%s", err);
			break;
		case 'i':
			c->inputs[c->ninputs++] = optarg;
			break;
		case 's': c->sort = optarg; break;
		case 'n':
			if (parse_count(optarg, &c->top))
				return fail_usage(c->cmd, "bad --top '%s': a positive number", optarg);
			break;
		case O_CHILDREN: c->children = 1; break;
		case O_HIST: c->hist = 1; break;
		case 'I': c->interval = 1; break;
		case O_RATIO: c->ratio = optarg; break;
		case O_FILEORDER: c->file_order = 1; break;
		case 'f': c->format = optarg; break;
		case O_SYMFS: c->symfs = optarg; break;
		case O_REPORT: c->report = optarg; break;
		case O_NODEMANGLE: c->no_demangle = 1; break;
		case O_NOCUT: c->no_cut = 1; break;
		case O_OFFCPU: c->off_cpu = 1; break;
		/* perf-shaped: report -g */
		case 'g': c->children = c->tree = 1; break;
		case O_TREE: c->tree = 1; break;
		case O_PCTLIMIT: {
			char *end;
			errno = 0;
			c->percent_limit = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(c->percent_limit >= 0) ||
			    c->percent_limit > 100)
				return fail_usage(c->cmd, "bad --percent-limit '%s': a share "
						  "from 0 to 100, e.g. 0.5", optarg);
			break;
		}
		case O_BASETIME: case O_NEWTIME: {
			struct ana_filter *t = c->side_time[opt == O_NEWTIME];
			ana_filter_release(t);
			/* (the filter's message names --time: say which option) */
			if (ana_filter_parse(t, "time", optarg, err, sizeof(err)))
				return fail_usage(c->cmd, opt == O_NEWTIME ?
						  "bad --new-time '%s': expected START,END as "
						  "--time takes them" :
						  "bad --base-time '%s': expected START,END as "
						  "--time takes them", optarg);
			break;
		}
		case O_SQLFILE: c->sql_file = optarg; break;
		case O_DB: c->db = optarg; break;
		case O_STATS: c->stats = 1; break;
		case O_DIFF:
			if (strcmp(c->cmd, "html"))
				return fail_usage(c->cmd, "%s", "--diff belongs to html "
						  "(html --diff BASE NEW -o PAGE.html)");
			break;
		}
	}
	while (optind < argc)
		c->inputs[c->ninputs++] = argv[optind++];
	if (!c->ninputs && !c->diff) {   /* what `perfrec record` writes, as perf reads perf.data */
		c->inputs[c->ninputs++] = "perfrec.prec";
		c->default_input = 1;
	}
	c->file = c->inputs[0];
	return -1;   /* go on */
}

static const char *open_hint(int err)
{
	switch (err) {
	case -ENOENT: return "check the path";
	case -EACCES: return "no permission to read it: run as its owner or chmod it";
	case -EISDIR: return "that is a directory: give a .prec file";
	case PREC_E_MAGIC: return "not a .prec file (expected a trace written by `perfrec record`)";
	case PREC_E_VERSION: return "written by a newer perfrec: upgrade perfrec-analyze";
	case PREC_E_TRUNCATED: return "the file is shorter than its own header: nothing to read";
	case -ENOMEM: return "out of memory";
	default: return "run `" PROG " verify` on it for details";
	}
}

/* In a dataset the warning names the file (path non-NULL). */
static void warn_damage_in(const char *path, const struct ana_trace *s, size_t i)
{
	int64_t k = ana_trace_damage_packets(s, i);
	char lost[64] = "";
	fprintf(stderr, "%s: warning: ", PROG);
	if (path)
		ana_text_str(stderr, path), fputs(": ", stderr);
	if (s->damage[i].err == PREC_E_HEADER) {
		fprintf(stderr, "%s\n", prec_strerror(PREC_E_HEADER));
		return;
	}
	if (k >= 0)
		snprintf(lost, sizeof(lost), " (%lld packets lost)", (long long)k);
	fprintf(stderr, "damaged frame at offset %llu skipped%s: %s\n",
		(unsigned long long)s->damage[i].offset, lost,
		prec_strerror(s->damage[i].err));
}

static void warn_damage(const struct ana_trace *s, size_t i)
{
	warn_damage_in(NULL, s, i);
}

/* What pass 1 reads for the report `which`: set in so. */
static void trace_opts(const struct cli *c, const char *which, struct ana_trace_opts *so)
{
	int is_script = !strcmp(c->cmd, "script");   /* perf-shaped */
	/* Reports that need names only at the end read the file once. */
	so->single_pass = !strcmp(which, "sched") || !strcmp(which, "counters") ||
			 (!strcmp(which, "dump") && !c->filter.nevents) ||
			 !strcmp(which, "verify");   /* --event names must be known first */
	/* Sample reports need no context switches, counter snapshots or raw
	 * records in pass 1 (the bulk of a --switch-events trace): skipped
	 * unread. */
	if (!strcmp(which, "info")) {
		/* the top processes' pass reads the samples: counted there */
		so->pass1_kinds = PREC_KINDS_ALL & ~PREC_KIND(PERFREC__PACKET__DATA_SAMPLE);
		so->deferred_kinds = PREC_KIND(PERFREC__PACKET__DATA_SAMPLE);
	}
	if (!strcmp(which, "report") || is_script) {
		so->pass1_kinds = PREC_KINDS_ALL &
			~(PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH) |
			  PREC_KIND(PERFREC__PACKET__DATA_GROUP) |
			  PREC_KIND(PERFREC__PACKET__DATA_RAW));
		/* The samples (or off-CPU records) the report pass reads are
		 * counted there, so their frames, most of the file, are read
		 * once. A --time report reads only the window's frames then:
		 * pass 1 counts them all first. */
		if (!ana_filter_windowed(&c->filter))
			so->deferred_kinds = PREC_KIND(c->off_cpu ? PERFREC__PACKET__DATA_OFF_CPU :
						      PERFREC__PACKET__DATA_SAMPLE);
	}
}

/* ---- datasets */

static const char *skip_hint(int err)
{
	switch (err) {
	case -ELOOP: return "a directory met twice (a symlink loop) or nested too deep: read once";
	case -ENODATA: return "no frame in it: nothing to read";
	case -EINVAL: return "not a regular file";
	default: return open_hint(err);
	}
}

/* Opens file f of the dataset for the pass of `so`, within the window:
 * 1 and *out, 0 when the window leaves nothing of it (not opened), < 0
 * when it cannot be read (reported). */
static int dataset_trace(struct cli *c, const struct ana_dataset *ds, size_t i,
			 struct ana_trace_opts *so, struct ana_trace **out)
{
	const struct ana_dataset_file *f = &ds->files[i];
	char err[512];
	/* --time counts from the start of the file's host (the first file
	 * of its host: files are by host, then start) */
	size_t h = i;
	while (h > 0 && ds->files[h - 1].host == f->host)
		h--;
	if (ana_filter_resolve_clock(&c->filter, ds->files[h].start, f->realtime_ns,
				     f->monotonic_ns, err, sizeof(err))) {
		fail_usage(c->cmd, "%s", err);
		return -EINVAL;
	}
	int windowed = ana_filter_windowed(&c->filter);
	if (windowed && (c->filter.tmin > f->end || c->filter.tmax < f->start))
		return 0;
	/* A file wholly inside the window is read as without one: its
	 * frames are all needed, and a report's pass 1 can leave its
	 * samples to the report's own pass (trace_opts()). */
	struct ana_trace_opts fo = *so;
	if (windowed && c->filter.tmin <= f->start && c->filter.tmax >= f->end) {
		windowed = 0;
		if (!strcmp(c->cmd, "report") || (!strcmp(c->cmd, "export") && so->symbols &&
						  (!c->report || !strcmp(c->report, "report"))))
			fo.deferred_kinds = PREC_KIND(c->off_cpu ? PERFREC__PACKET__DATA_OFF_CPU :
						      PERFREC__PACKET__DATA_SAMPLE);
	}
	int ret = ana_trace_open(out, f->path, &fo);
	if (ret < 0) {
		fprintf(stderr, "%s %s: skipped ", PROG, c->cmd);
		ana_text_str(stderr, f->path);
		fprintf(stderr, ": %s; %s\n", prec_strerror(ret), open_hint(ret));
		return ret;
	}
	struct ana_trace *s = *out;
	if (windowed && !so->single_pass)
		ana_trace_set_window(s, c->filter.tmin, c->filter.tmax);
	for (size_t k = 0; k < s->ndamage && strcmp(c->cmd, "verify"); k++)
		warn_damage_in(f->path, s, k);
	if (s->torn && strcmp(c->cmd, "verify")) {
		fprintf(stderr, "%s: warning: ", PROG);
		ana_text_str(stderr, f->path);
		fprintf(stderr, ": torn tail at offset %llu (recording was cut short); "
			"analyzing the frames before it\n", (unsigned long long)s->torn_offset);
	}
	return 1;
}

/* Opens the dataset of inputs (with --host), names on stderr the
 * inputs skipped and the copies read once: 0 and *out, else the exit
 * status (1 failed, 2 nothing to read). */
static int open_dataset(const struct cli *c, char *const *inputs, size_t n,
			struct ana_dataset **out)
{
	struct ana_dataset_opts dso = { .hosts = c->filter.hosts, .nhosts = c->filter.nhosts };
	struct ana_dataset *ds;
	int ret = ana_dataset_open(&ds, inputs, n, &dso);
	if (ret < 0) {
		fprintf(stderr, "%s %s: %s\n", PROG, c->cmd, prec_strerror(ret));
		return 1;
	}
	for (size_t i = 0; i < ds->nskipped; i++) {
		fprintf(stderr, "%s %s: skipped ", PROG, c->cmd);
		ana_text_str(stderr, ds->skipped[i].path);
		fprintf(stderr, ": %s; %s\n", prec_strerror(ds->skipped[i].err),
			skip_hint(ds->skipped[i].err));
	}
	for (size_t i = 0; i < ds->ndups; i++) {
		fprintf(stderr, "%s %s: ", PROG, c->cmd);
		ana_text_str(stderr, ds->dups[i].path);
		fputs(" holds the same data as ", stderr);
		ana_text_str(stderr, ds->dups[i].kept);
		fputs(" (same host and recording start): read once\n", stderr);
	}
	if (!ds->nfiles) {
		fprintf(stderr, "%s %s: no trace to read in the %zu input%s given%s\n", PROG,
			c->cmd, n, n == 1 ? "" : "s",
			ds->outside ? " (none of the named hosts)" : "");
		ana_dataset_free(ds);
		return 2;
	}
	*out = ds;
	return 0;
}

static int run_dataset(struct cli *c, struct ana_trace_opts *so, struct ana_report_opts *ro,
		       struct ana_sched_opts *sco, const char *which, struct progress *prog)
{
	struct ana_dataset *ds;
	int ret = open_dataset(c, c->inputs, c->ninputs, &ds);
	if (ret)
		return ret;
	int status = ds->nskipped ? 3 : 0, whole = 1;
	/* A pid or tid means nothing without its host. */
	if (ds->nhosts > 1 && !strcmp(which, "report")) {
		int pidkey = 0, hostkey = 0;
		if (!ro->nkeys)
			pidkey = 0;
		for (size_t i = 0; i < ro->nkeys; i++) {
			pidkey |= ro->keys[i] == ANA_KEY_PID || ro->keys[i] == ANA_KEY_TID;
			hostkey |= ro->keys[i] == ANA_KEY_HOST;
		}
		if (pidkey && !hostkey && ro->nkeys < ANA_NKEYS) {
			memmove(ro->keys + 1, ro->keys, ro->nkeys * sizeof(ro->keys[0]));
			ro->keys[0] = ANA_KEY_HOST;
			ro->nkeys++;
		}
	}
	char label[4096];
	if (c->ninputs == 1)
		snprintf(label, sizeof(label), "%s", c->inputs[0]);
	else
		snprintf(label, sizeof(label), "%zu inputs", c->ninputs);
	int is_export = !strcmp(c->cmd, "export");
	const char *xfmt = c->format;
	/* folded and pprof count the stacks of every file together */
	int stacks = is_export && (!strcmp(xfmt, "folded") || !strcmp(xfmt, "pprof"));
	if (!strcmp(which, "counters") && ds->nsessions > 1) {
		fprintf(stderr, "%s %s: counters read one recording (its values are cumulative "
			"and its ids its own): the inputs hold %zu sessions; give one session's "
			"files or directory, or pick a host with --host (`%s info` lists them)\n",
			PROG, c->cmd, ds->nsessions, PROG);
		ana_dataset_free(ds);
		return 2;
	}
	if (is_export && !strcmp(which, "info")) {
		fprintf(stderr, "%s %s: this output reads one file: give one of the %zu files "
			"(`%s info` lists them)\n", PROG, c->cmd, ds->nfiles, PROG);
		ana_dataset_free(ds);
		return 2;
	}
	FILE *out = stdout;
	if (c->output && !(out = fopen(c->output, "w"))) {
		fprintf(stderr, "%s %s: cannot write %s: %s\n", PROG, c->cmd, c->output,
			strerror(errno));
		ana_dataset_free(ds);
		return 1;
	}
	/* html: each host's files (by start) open together, one timeline
	 * per host, one part of the page per host */
	struct ana_trace **pages = NULL;
	size_t npages = 0, *pdamage = NULL;   /* each one's damage found at open */
	size_t *phost = NULL, nphost = 0;     /* files per host, in the hosts' order */
	size_t pages_i = 0;                   /* the dataset's file of the last page */
	enum ana_fmt fmt = c->fmt;
	if (is_export && !strcmp(xfmt, "json"))
		fmt = ANA_FMT_JSON;
	if (is_export && !strcmp(xfmt, "csv"))
		fmt = ANA_FMT_CSV;
	struct ana_doc *doc = ana_doc_new();
	struct ana_report *rep = NULL;
	struct ana_sched *sch = NULL;
	struct ana_counters *cnt = NULL;
	struct ana_trace *last = NULL;   /* counters name events from it */
	struct ana_export *xp = NULL;
	struct ana_timed *xt = NULL;     /* the exports with time */
	ret = doc ? 0 : -ENOMEM;
	if (!ret && stacks)
		ret = ana_export_new(&xp, !strcmp(xfmt, "pprof"), c->off_cpu, &c->filter,
				     &ds->pool);
	if (!ret && is_export && ana_export_timed_known(xfmt))
		ret = ana_timed_new(&xt, xfmt, &c->filter, &ds->pool, out);
	/* a stack or timed export is what it is whatever --report says, as
	 * of one file */
	int table = !xp && !xt;
	if (!ret && table && !strcmp(which, "counters") && !(cnt = ana_counters_new()))
		ret = -ENOMEM;
	if (!ret && table && !strcmp(which, "report") && !(rep = ana_report_new(ro)))
		ret = -ENOMEM;
	if (!ret && table && !strcmp(which, "sched") && !(sch = ana_sched_new(sco)))
		ret = -ENOMEM;
	if (!ret && !strcmp(c->cmd, "html") && (!(pages = calloc(ds->nfiles, sizeof(*pages))) ||
						  !(pdamage = calloc(ds->nfiles, sizeof(*pdamage))) ||
						  !(phost = calloc(ds->nfiles, sizeof(*phost)))))
		ret = -ENOMEM;
	if (!ret && !strcmp(which, "info")) {
		ret = ana_info_dataset(ds, doc);
		if (ret >= 0)
			ret = ana_doc_render(doc, out, fmt);
		goto done;
	}
	for (size_t i = 0; i < ds->nfiles && ret >= 0; i++) {
		struct ana_trace *s = NULL;
		int got = dataset_trace(c, ds, i, so, &s);
		if (got == -EINVAL) {
			status = 2;
			goto done;
		}
		if (got < 0) {
			status = status ? status : 3;
			continue;
		}
		if (!got)
			continue;
		if (pages) {
			/* files come by host, then start */
			if (!npages || ds->files[i].host != ds->files[pages_i].host)
				nphost++;
			pages_i = i;
			phost[nphost - 1]++;
			pdamage[npages] = s->ndamage;
			pages[npages++] = s;
			continue;
		}
		size_t damage_before = s->ndamage;
		if (rep) {
			ret = ana_report_add(rep, s);
		} else if (cnt) {
			ret = ana_counters_add(cnt, s);
		} else if (sch) {
			size_t h = i;   /* the host's first file: by host, then start */
			while (h > 0 && ds->files[h - 1].host == ds->files[i].host)
				h--;
			ret = ana_sched_add(sch, s, ds->files[h].start);
		} else if (xp) {
			/* several hosts: each stack under its host */
			ret = ana_export_add(xp, s, ds->nhosts > 1 ? ds->files[i].host : NULL);
		} else if (xt) {
			ret = ana_timed_add(xt, s, ds->nhosts > 1 ? ds->files[i].host : NULL);
		} else if (!strcmp(c->cmd, "script")) {
			struct ana_script_opts sc = { .filter = &c->filter,
						      .host = ds->nhosts > 1 ? ds->files[i].host : NULL };
			ret = ana_script_run(s, &sc, out);
		} else if (!strcmp(c->cmd, "dump")) {
			struct ana_dump_opts d = { .fmt = fmt, .jobs = c->jobs,
						   .file_order = c->file_order,
						   .filter = &c->filter };
			ret = ana_dump_run(s, &d, out);
		} else if (!strcmp(c->cmd, "verify")) {
			struct ana_doc *vd = ana_doc_new();
			int w = 1;
			ret = vd ? ana_verify_run(s, c->jobs, vd, &w) : -ENOMEM;
			if (ret >= 0)
				ret = ana_doc_render(vd, out, fmt);
			ana_doc_free(vd);
			whole &= w;
		}
		progress_end(prog);
		for (size_t k = damage_before; k < s->ndamage && strcmp(c->cmd, "verify"); k++)
			warn_damage_in(ds->files[i].path, s, k);
		if (cnt) {
			ana_trace_free(last);
			last = s;
		} else {
			ana_trace_free(s);
		}
	}
	if (ret >= 0 && cnt && last) {
		struct ana_counters_opts co = { .interval = c->interval, .ratio = c->ratio };
		char err[512];
		ret = ana_counters_render(cnt, last, label, &co, doc, err, sizeof(err));
		if (ret == -EINVAL) {
			fprintf(stderr, "%s %s: ", PROG, c->cmd);
			ana_text_str(stderr, err);
			fputc('\n', stderr);
			status = 2;
			ret = 0;
			goto done;
		}
		if (ret >= 0)
			ret = ana_doc_render(doc, out, fmt);
	}
	if (ret >= 0 && pages && !npages) {
		fprintf(stderr, "%s %s: the window leaves nothing of the %zu files\n", PROG,
			c->cmd, ds->nfiles);
		status = 2;
	} else if (ret >= 0 && pages) {
		struct ana_html_opts ho = { .sz = sizeof(ho), .filter = &c->filter,
					    .jobs = c->jobs, .top = c->top };
		ret = ana_html_run_hosts(pages, phost, nphost, &ho, out);
		progress_end(prog);
		for (size_t i = 0; i < npages; i++)
			for (size_t k = pdamage[i]; k < pages[i]->ndamage; k++)
				warn_damage_in(pages[i]->path, pages[i], k);
	}
	if (ret >= 0 && xp)
		ret = ana_export_write(xp, out);
	if (ret >= 0 && xt)
		ret = ana_timed_finish(xt);
	if (ret >= 0 && (rep || sch)) {
		ret = rep ? ana_report_render(rep, label, doc) : ana_sched_render(sch, label, doc);
		if (ret >= 0)
			ret = ana_doc_render(doc, out, fmt);
	}
done:
	progress_end(prog);
	if (ret < 0) {
		fprintf(stderr, "%s %s: %s failed: %s\n", PROG, c->cmd, label,
			ret == -EIO ? "write error (disk full or closed pipe?)" : prec_strerror(ret));
		status = 1;
	} else if (!whole && !status) {
		status = 1;
	}
	ana_report_free(rep);
	ana_sched_free(sch);
	ana_counters_free(cnt);
	ana_export_free(xp);
	ana_timed_free(xt);
	ana_trace_free(last);
	for (size_t i = 0; i < npages; i++)
		ana_trace_free(pages[i]);
	free(pages);
	free(pdamage);
	free(phost);
	ana_doc_free(doc);
	if (out != stdout && fclose(out) && !status) {
		fprintf(stderr, "%s %s: cannot write %s: %s\n", PROG, c->cmd, c->output,
			strerror(errno));
		status = 1;
	}
	ana_dataset_free(ds);
	return status;
}

/* The whole of f (NUL-terminated, malloc'd), or NULL with errno. */
static char *read_text(FILE *f)
{
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	do {
		if (len + 4096 + 1 > cap) {
			char *b = cap < ((size_t)64 << 20) ? realloc(buf, cap = cap * 2 + 8192) : NULL;
			if (!b) {
				free(buf);
				errno = cap >= ((size_t)64 << 20) ? EFBIG : ENOMEM;
				return NULL;
			}
			buf = b;
		}
		len += n = fread(buf + len, 1, 4096, f);
	} while (n);
	if (ferror(f)) {
		free(buf);
		errno = EIO;
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/* query: SQL (argument, --file, standard input) or --db over the
 * dataset of the other inputs (analyzer/query/). */
static int run_query(struct cli *c)
{
	char *const *inputs = c->inputs;
	size_t n = c->default_input ? 0 : c->ninputs;
	const char *sql_arg = NULL, *sql_file = c->sql_file;
	if (c->db && sql_file)
		return fail_usage(c->cmd, "%s", "--db writes the tables, it runs no SQL: drop --file");
	if (!c->db && !sql_file) {
		if (!n)
			return fail_usage(c->cmd, "%s", "no SQL: give it as the first argument, "
					  "--file F, or '-' for standard input");
		if (!strcmp(inputs[0], "-"))
			sql_file = "-";
		else
			sql_arg = inputs[0];
		inputs++;
		n--;
	}
	char *sql = NULL;
	if (sql_file) {
		FILE *f = strcmp(sql_file, "-") ? fopen(sql_file, "r") : stdin;
		if (!f || !(sql = read_text(f))) {
			fprintf(stderr, "%s %s: cannot read the SQL from %s: %s\n", PROG, c->cmd,
				f == stdin ? "standard input" : sql_file, strerror(errno));
			if (f && f != stdin)
				fclose(f);
			return 2;
		}
		if (f != stdin)
			fclose(f);
		sql_arg = sql;
	}
	static char *const def_input[] = { "perfrec.prec" };
	struct ana_dataset *ds = NULL;
	int status = open_dataset(c, n ? inputs : def_input, n ? n : 1, &ds);
	if (status) {
		free(sql);
		return status;
	}
	status = ds->nskipped ? 3 : 0;
	struct ana_query_opts qo = { .jobs = c->jobs, .symfs = c->symfs,
				     .no_demangle = c->no_demangle, .no_cut = c->no_cut };
	struct ana_query *q = NULL;
	struct ana_doc *doc = NULL;
	FILE *out = stdout;
	char err[1024] = "";
	int ret = ana_query_new(&q, ds, &qo);
	if (ret >= 0 && c->db) {
		ret = ana_query_write_db(q, c->db, err, sizeof(err));
	} else if (ret >= 0) {
		ret = (doc = ana_doc_new()) ? ana_query_run(q, sql_arg, doc, err, sizeof(err)) :
					      -ENOMEM;
		if (ret >= 0 && c->output && !(out = fopen(c->output, "w"))) {
			fprintf(stderr, "%s %s: cannot write %s: %s\n", PROG, c->cmd, c->output,
				strerror(errno));
			out = stdout;
			status = 1;
		} else if (ret >= 0) {
			ret = ana_doc_render(doc, out, c->fmt);
		}
	}
	if (ret == ANA_QUERY_E_SQL) {
		fprintf(stderr, "%s %s: SQL error: ", PROG, c->cmd);
		ana_text_str(stderr, err);
		fputc('\n', stderr);
		status = 2;
	} else if (ret < 0) {
		fprintf(stderr, "%s %s: ", PROG, c->cmd);
		ana_text_str(stderr, *err ? err : ret == -EIO ?
			     "write error (disk full or closed pipe?)" : prec_strerror(ret));
		fputc('\n', stderr);
		status = 1;
	}
	if (q) {
		struct ana_query_stats st;
		ana_query_stats(q, &st);
		if (st.files_skipped) {
			fprintf(stderr, "%s %s: %llu file%s could not be read and %s skipped, the "
				"last ", PROG, c->cmd, (unsigned long long)st.files_skipped,
				st.files_skipped == 1 ? "" : "s", st.files_skipped == 1 ? "was" : "were");
			ana_text_str(stderr, st.skip_cause);
			fputc('\n', stderr);
			status = status ? status : 3;
		}
		if (st.damaged)
			fprintf(stderr, "%s: warning: %llu damaged frame%s skipped (`%s verify` "
				"names them)\n", PROG, (unsigned long long)st.damaged,
				st.damaged == 1 ? "" : "s", PROG);
		if (c->stats)
			fprintf(stderr, "%s %s: stats: files_opened=%llu frames_read=%llu "
				"frames_total=%llu\n", PROG, c->cmd,
				(unsigned long long)st.files_opened,
				(unsigned long long)st.frames_read,
				(unsigned long long)st.frames_total);
	}
	if (out != stdout && fclose(out) && !status) {
		fprintf(stderr, "%s %s: cannot write %s: %s\n", PROG, c->cmd, c->output,
			strerror(errno));
		status = 1;
	}
	ana_doc_free(doc);
	ana_query_free(q);
	ana_dataset_free(ds);
	free(sql);
	return status;
}

static int run_file(struct cli *c)
{
	char err[512] = "";
	struct progress prog = { 0 };
	prog.enabled = c->progress && isatty(2);
	clock_gettime(CLOCK_MONOTONIC, &prog.start);

	int is_html = !strcmp(c->cmd, "html");
	int is_script = !strcmp(c->cmd, "script");   /* perf-shaped */
	int want_syms = !strcmp(c->cmd, "report") || !strcmp(c->cmd, "export") || is_html ||
			!strcmp(c->cmd, "info") ||   /* counts the chains report cuts */
			is_script;
	struct ana_trace_opts so = { .jobs = c->jobs, .symbols = want_syms,
				       .symfs = c->symfs, .no_demangle = c->no_demangle,
				       .no_cut = c->no_cut,
				       /* no callback when nothing is shown: the
				        * reports poll it per packet */
				       .progress = prog.enabled ? on_progress : NULL,
				       .ctx = &prog };
	int is_export = !strcmp(c->cmd, "export");
	const char *xfmt = c->format;
	if (is_export) {
		if (!xfmt)
			return fail_usage(c->cmd, "%s", "--format is required: folded, pprof, json, csv, "
					  "perfetto, speedscope or otlp");
		if (strcmp(xfmt, "folded") && strcmp(xfmt, "pprof") && strcmp(xfmt, "json") &&
		    strcmp(xfmt, "csv") && !ana_export_timed_known(xfmt))
			return fail_usage(c->cmd, "bad --format '%s': folded, pprof, json, csv, "
					  "perfetto, speedscope or otlp", xfmt);
		if (c->report && strcmp(c->report, "report") && strcmp(c->report, "sched") &&
		    strcmp(c->report, "counters") && strcmp(c->report, "info"))
			return fail_usage(c->cmd, "bad --report '%s': report, sched, counters or info",
					  c->report);
		/* the stack and timeline formats are the samples' own, whatever
		 * --report says; another report would only lose their names */
		if (c->report && strcmp(c->report, "report") && strcmp(xfmt, "json") &&
		    strcmp(xfmt, "csv")) {
			snprintf(err, sizeof(err), "--report %s goes with --format json or csv; "
				 "--format %s writes the samples' stacks: drop --report",
				 c->report, xfmt);
			return fail_usage(c->cmd, "%s", err);
		}
		if ((!strcmp(xfmt, "pprof") || ana_export_timed_binary(xfmt)) && !c->output &&
		    isatty(1))
			return fail_usage(c->cmd, "%s output is binary: give -o FILE "
					  "or redirect standard output", xfmt);
	}
	if (is_html && c->fmt != ANA_FMT_TEXT)
		return fail_usage(c->cmd, "%s", "html writes one HTML page: --json and --csv do not apply");
	if (is_html && !c->output && isatty(1))
		return fail_usage(c->cmd, "%s", "the page is HTML for a browser: give -o FILE.html "
				  "or redirect standard output");
	if (is_script && c->fmt != ANA_FMT_TEXT)
		return fail_usage(c->cmd, "%s", "script writes perf script's text: --json and "
				  "--csv do not apply (dump --json has every packet)");
	if (!strcmp(c->cmd, "dump") && c->fmt == ANA_FMT_CSV)
		return fail_usage(c->cmd, "%s", "dump writes text or JSON Lines, not CSV");

	struct ana_report_opts ro = { .top = c->top, .children = c->children,
				      .off_cpu = c->off_cpu, .filter = &c->filter,
				      .tree = c->tree, .percent_limit = c->percent_limit };
	if (c->tree && c->fmt != ANA_FMT_TEXT)
		return fail_usage(c->cmd, "%s", "-g/--tree prints text trees: --json and --csv "
				  "do not apply (export --format folded gives the stacks)");
	struct ana_sched_opts sco = { .top = c->top, .hist = c->hist, .jobs = c->jobs,
				      .filter = &c->filter };
	const char *which = is_export ? (c->report ? c->report : "report") : c->cmd;
	if (c->sort && !strcmp(which, "report") &&
	    ana_report_parse_sort(&ro, c->sort, err, sizeof(err)))
		return fail_usage(c->cmd, "%s", err);
	if (c->sort && !strcmp(which, "sched") &&
	    ana_sched_parse_sort(&sco, c->sort, err, sizeof(err)))
		return fail_usage(c->cmd, "%s", err);

	trace_opts(c, which, &so);
	/* --since/--until need the file's clock reference (its header)
	 * before the pass: a single-pass report reads pass 1 first then */
	if (c->filter.has_wall && !c->dataset)
		so.single_pass = 0;
	if (c->dataset)
		return run_dataset(c, &so, &ro, &sco, which, &prog);
	struct ana_trace *s;
	int ret = ana_trace_open(&s, c->file, &so);
	progress_end(&prog);
	if (ret < 0) {
		fprintf(stderr, "%s %s: cannot read %s: %s; %s\n", PROG, c->cmd, c->file,
			prec_strerror(ret), open_hint(ret));
		return 2;
	}
	if (ana_filter_resolve(&c->filter, s, err, sizeof(err))) {
		ana_trace_free(s);
		return fail_usage(c->cmd, "%s", err);
	}
	/* Sample passes seek to the --time window (pass 1 read it all). */
	if (ana_filter_windowed(&c->filter) && !so.single_pass)
		ana_trace_set_window(s, c->filter.tmin, c->filter.tmax);
	/* Damage is reported, and the rest analyzed. */
	for (size_t i = 0; i < s->ndamage && strcmp(c->cmd, "verify"); i++)
		warn_damage(s, i);
	if (s->torn && strcmp(c->cmd, "verify"))
		fprintf(stderr, "%s: warning: torn tail at offset %llu (recording was cut "
			"short); analyzing the frames before it\n", PROG,
			(unsigned long long)s->torn_offset);
	size_t damage_before = s->ndamage;

	FILE *out = stdout;
	if (c->output && !(out = fopen(c->output, is_export && !strcmp(xfmt, "pprof") ? "wb" : "w"))) {
		fprintf(stderr, "%s %s: cannot write %s: %s\n", PROG, c->cmd, c->output,
			strerror(errno));
		ana_trace_free(s);
		return 1;
	}

	int status = 0, whole = 1;
	struct ana_doc *doc = ana_doc_new();
	enum ana_fmt fmt = c->fmt;
	if (is_export && !strcmp(xfmt, "json"))
		fmt = ANA_FMT_JSON;
	if (is_export && !strcmp(xfmt, "csv"))
		fmt = ANA_FMT_CSV;
	if (!doc) {
		ret = -ENOMEM;
	} else if (is_export && !strcmp(xfmt, "folded")) {
		ret = ana_export_folded(s, &c->filter, c->off_cpu, out);
	} else if (is_export && !strcmp(xfmt, "pprof")) {
		ret = ana_export_pprof(s, &c->filter, c->off_cpu, out);
	} else if (is_export && ana_export_timed_known(xfmt)) {
		ret = ana_export_timed(s, &c->filter, xfmt, out);
	} else if (is_html) {
		struct ana_html_opts ho = { .sz = sizeof(ho), .filter = &c->filter,
					    .jobs = c->jobs, .top = c->top };
		ret = ana_html_run(s, &ho, out);
	} else if (is_script) {
		struct ana_script_opts sc = { .filter = &c->filter };
		ret = ana_script_run(s, &sc, out);
	} else if (!strcmp(c->cmd, "dump")) {
		struct ana_dump_opts d = { .fmt = fmt, .jobs = c->jobs,
					   .file_order = c->file_order, .filter = &c->filter };
		ret = ana_dump_run(s, &d, out);
	} else {
		if (!strcmp(which, "info")) {
			ret = ana_info_run(s, c->top ? c->top : 5, doc);
		} else if (!strcmp(which, "report")) {
			ret = ana_report_run(s, &ro, doc);
		} else if (!strcmp(which, "sched")) {
			ret = ana_sched_run(s, &sco, doc);
		} else if (!strcmp(which, "counters")) {
			struct ana_counters_opts co = { .interval = c->interval, .ratio = c->ratio };
			ret = ana_counters_run(s, &co, doc, err, sizeof(err));
			if (ret == -EINVAL) {
				progress_end(&prog);
				fprintf(stderr, "%s %s: ", PROG, c->cmd);
				ana_text_str(stderr, err);
				fputc('\n', stderr);
				status = 2;
				goto out;
			}
		} else if (!strcmp(which, "verify")) {
			ret = ana_verify_run(s, c->jobs, doc, &whole);
		}
		progress_end(&prog);
		if (ret >= 0)
			ret = ana_doc_render(doc, out, fmt);
	}
	progress_end(&prog);
	for (size_t i = damage_before; i < s->ndamage && strcmp(c->cmd, "verify"); i++)
		warn_damage(s, i);
	if (ret < 0) {
		fprintf(stderr, "%s %s: %s failed: %s\n", PROG, c->cmd, c->file,
			ret == -EIO ? "write error (disk full or closed pipe?)" : prec_strerror(ret));
		status = 1;
	} else if (!whole) {
		status = 1;
	}
out:
	ana_doc_free(doc);
	if (out != stdout && fclose(out) && !status) {
		fprintf(stderr, "%s %s: cannot write %s: %s\n", PROG, c->cmd, c->output,
			strerror(errno));
		status = 1;
	}
	ana_trace_free(s);
	return status;
}

/* ---- diff and html --diff: two sides, each a list of traces */


struct diff_side {
	struct ana_filter time;       /* --base-time / --new-time, or none */
	struct ana_trace **traces;    /* owned */
	const char **names;
	size_t n;
	char **own;                   /* names of a directory's files (strdup) */
	size_t nown;
};

/* Opens one .prec file into a side's list of traces. 0, or 2 after
 * printing why not. */
static int diff_open_file(const char *cmd, const char *path,
			  const struct ana_trace_opts *so, struct diff_side *side)
{
	struct ana_trace *s;
	int ret = ana_trace_open(&s, path, so);
	if (ret < 0) {
		fprintf(stderr, "%s %s: cannot read %s: %s; %s\n", PROG, cmd, path,
			prec_strerror(ret), open_hint(ret));
		return 2;
	}
	struct ana_trace **t = realloc(side->traces, (side->n + 1) * sizeof(*t));
	const char **nm = t ? realloc(side->names, (side->n + 1) * sizeof(*nm)) : NULL;
	if (t)
		side->traces = t;
	if (nm)
		side->names = nm;
	if (!t || !nm) {
		ana_trace_free(s);
		fprintf(stderr, "%s %s: out of memory\n", PROG, cmd);
		return 2;
	}
	side->traces[side->n] = s;
	side->names[side->n++] = path;
	for (size_t i = 0; i < s->ndamage; i++)
		warn_damage(s, i);
	if (s->torn)
		fprintf(stderr, "%s: warning: %s: torn tail at offset %llu (recording was "
			"cut short); analyzing the frames before it\n", PROG, path,
			(unsigned long long)s->torn_offset);
	return 0;
}

/* A side is a file, or a directory read as a dataset (format/SPEC.md
 * section 14: rotations joined, the same data twice read once). */
static int diff_open_side(const char *cmd, const char *path,
			  const struct ana_trace_opts *so, struct diff_side *side)
{
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return diff_open_file(cmd, path, so, side);
	char *inputs[1] = { (char *)path };
	struct ana_dataset_opts dso = { 0 };
	struct ana_dataset *ds;
	if (ana_dataset_open(&ds, inputs, 1, &dso) < 0) {
		fprintf(stderr, "%s %s: out of memory\n", PROG, cmd);
		return 2;
	}
	int ret = ds->nfiles ? 0 : 2;
	if (!ds->nfiles)
		fprintf(stderr, "%s %s: no trace to read in %s\n", PROG, cmd, path);
	for (size_t i = 0; i < ds->nskipped; i++) {
		fprintf(stderr, "%s %s: skipped ", PROG, cmd);
		ana_text_str(stderr, ds->skipped[i].path);
		fprintf(stderr, ": %s; %s\n", prec_strerror(ds->skipped[i].err),
			skip_hint(ds->skipped[i].err));
	}
	for (size_t i = 0; i < ds->nfiles && !ret; i++) {
		/* the side's names outlive the dataset */
		char *p = strdup(ds->files[i].path);
		if (!p) {
			ret = 2;
			break;
		}
		char **own = realloc(side->own, (side->nown + 1) * sizeof(*own));
		if (!own) {
			free(p);
			ret = 2;
			break;
		}
		side->own = own;
		side->own[side->nown++] = p;
		ret = diff_open_file(cmd, p, so, side);
	}
	ana_dataset_free(ds);
	return ret;
}

static void diff_side_release(struct diff_side *side)
{
	for (size_t i = 0; i < side->n; i++)
		ana_trace_free(side->traces[i]);
	free(side->traces);
	free(side->names);
	for (size_t i = 0; i < side->nown; i++)
		free(side->own[i]);
	free(side->own);
	ana_filter_release(&side->time);
}

/* Each trace of a side with its filter: the common filters, with the
 * side's window instead of --time when it has one, resolved against
 * that trace (filters[] holds the copies; they borrow the common
 * filter's lists). 0 or 2 after printing why not. */
static int diff_parts(const char *cmd, const struct ana_filter *common,
		      struct diff_side *side, struct ana_filter *filters,
		      struct ana_diff_part *parts)
{
	char err[512];
	for (size_t i = 0; i < side->n; i++) {
		struct ana_filter *f = &filters[i];
		*f = *common;
		if (side->time.has_time) {
			f->has_time = 1;
			f->t0 = side->time.t0;
			f->t1 = side->time.t1;
			f->t0_abs = side->time.t0_abs;
			f->t1_abs = side->time.t1_abs;
			f->t0_open = side->time.t0_open;
			f->t1_open = side->time.t1_open;
			f->active = 1;
		}
		if (ana_filter_resolve(f, side->traces[i], err, sizeof(err)))
			return fail_usage(cmd, "%s", err);
		parts[i].s = side->traces[i];
		parts[i].filter = f;
		parts[i].name = side->names[i];
	}
	return 0;
}

/* The diff's command line, parsed. */
struct diff_cli {
	struct cli c;                 /* the options diff shares with report */
	struct diff_side sides[2];    /* their windows; their traces once open */
	struct ana_diff_opts dopt;
	int html;
};

/* -1 to go on, else the exit status (after printing why). */
static int diff_parse(struct diff_cli *dc, int argc, char **argv)
{
	struct cli *c = &dc->c;
	const char *cmd = c->cmd;
	char err[512];
	int ret = parse_args(c, argc, argv);
	if (ret >= 0)
		return ret;
	dc->dopt.top = c->top;
	if (c->sort) {
		struct ana_report_opts ro = { 0 };
		if (ana_report_parse_sort(&ro, c->sort, err, sizeof(err)))
			return fail_usage(cmd, "%s", err);
		memcpy(dc->dopt.keys, ro.keys, sizeof(dc->dopt.keys));
		dc->dopt.nkeys = ro.nkeys;
	}
	if (c->ninputs < 1 || c->ninputs > 2)
		return fail_usage(cmd, "%s", c->ninputs ? "too many inputs: give BASE and NEW, "
				  "or one FILE with --base-time and --new-time" :
				  "missing BASE and NEW (two .prec traces)");
	if (c->ninputs == 1 && (!dc->sides[0].time.has_time || !dc->sides[1].time.has_time))
		return fail_usage(cmd, "%s", "one input: give --base-time A,B and --new-time "
				  "C,D to compare two windows of it, or two files");
	if (c->ninputs == 1 && c->filter.has_time)
		return fail_usage(cmd, "%s", "--time does not apply to one input cut by "
				  "--base-time and --new-time");
	if (dc->html && c->fmt != ANA_FMT_TEXT)
		return fail_usage(cmd, "%s", "html writes one HTML page: --json and --csv "
				  "do not apply");
	if (dc->html && !c->output && isatty(1))
		return fail_usage(cmd, "%s", "the page is HTML for a browser: give -o "
				  "FILE.html or redirect standard output");
	return -1;
}

/* The passes and the output: 0, or the exit status after printing why. */
static int diff_write(struct diff_cli *dc, struct ana_diff_part *parts, FILE *out)
{
	struct cli *c = &dc->c;
	size_t nbase = dc->sides[0].n, nparts = nbase + dc->sides[1].n;
	int ret = 0;
	if (dc->html) {
		struct ana_html_opts ho = { .sz = sizeof(ho), .jobs = c->jobs, .top = c->top };
		ret = ana_html_diff_run(parts, nbase, parts + nbase, nparts - nbase, &ho, out);
	} else {
		struct ana_diff *d = ana_diff_new(&dc->dopt);
		struct ana_doc *doc = ana_doc_new();
		ret = d && doc ? 0 : -ENOMEM;
		for (size_t i = 0; i < nparts && !ret; i++) {
			struct ana_trace *s = parts[i].s;
			const struct ana_filter *f = parts[i].filter;
			/* a window reads only its frames (pass 1 read them all) */
			if (f->has_time)
				ana_trace_set_window(s, f->tmin, f->tmax);
			ret = ana_diff_add(d, i < nbase ? ANA_DIFF_BASE : ANA_DIFF_NEW, s, f,
					   parts[i].name);
		}
		if (!ret)
			ret = ana_diff_render(d, doc);
		if (!ret)
			ret = ana_doc_render(doc, out, c->fmt);
		ana_doc_free(doc);
		ana_diff_free(d);
	}
	if (ret < 0) {
		fprintf(stderr, "%s %s: %s\n", PROG, c->cmd, ret == -EIO ?
			"write error (disk full or closed pipe?)" : prec_strerror(ret));
		return 1;
	}
	return 0;
}

static int diff_run(struct diff_cli *dc)
{
	struct cli *c = &dc->c;
	struct diff_side *sides = dc->sides;
	int split = c->ninputs == 1;
	struct progress prog = { 0 };
	prog.enabled = c->progress && isatty(2);
	clock_gettime(CLOCK_MONOTONIC, &prog.start);
	struct ana_trace_opts so = { .jobs = c->jobs, .symbols = 1, .symfs = c->symfs,
				     .no_demangle = c->no_demangle,
				     .progress = prog.enabled ? on_progress : NULL,
				     .ctx = &prog };
	/* As report: pass 1 skips what a sample pass never reads; the
	 * samples are counted by the first full pass unless a window
	 * means no pass is full. The page shows NEW's timeline and counts:
	 * its pass 1 reads everything. */
	so.pass1_kinds = PREC_KINDS_ALL &
		~(PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH) |
		  PREC_KIND(PERFREC__PACKET__DATA_GROUP) | PREC_KIND(PERFREC__PACKET__DATA_RAW));
	if (!c->filter.has_time && !sides[0].time.has_time && !sides[1].time.has_time)
		so.deferred_kinds = PREC_KIND(PERFREC__PACKET__DATA_SAMPLE);
	if (dc->html) {
		so.pass1_kinds = 0;
		so.deferred_kinds = 0;
	}
	for (size_t i = 0; i < c->ninputs; i++) {
		int st = diff_open_side(c->cmd, c->inputs[i], &so, &sides[i]);
		progress_end(&prog);
		if (st)
			return st;
	}
	if (split) {   /* the same traces, read through the other window */
		sides[1].traces = sides[0].traces;
		sides[1].names = sides[0].names;
		sides[1].n = sides[0].n;
	}
	size_t nparts = sides[0].n + sides[1].n;
	struct ana_filter *filters = calloc(nparts, sizeof(*filters));
	struct ana_diff_part *parts = calloc(nparts, sizeof(*parts));
	int status = 2;
	FILE *out = stdout;
	if (!filters || !parts)
		fprintf(stderr, "%s %s: out of memory\n", PROG, c->cmd);
	else if (!(status = diff_parts(c->cmd, &c->filter, &sides[0], filters, parts)) &&
		 !(status = diff_parts(c->cmd, &c->filter, &sides[1], filters + sides[0].n,
				       parts + sides[0].n))) {
		if (c->output && !(out = fopen(c->output, "w"))) {
			fprintf(stderr, "%s %s: cannot write %s: %s\n", PROG, c->cmd, c->output,
				strerror(errno));
			status = 1;
		} else {
			status = diff_write(dc, parts, out);
			progress_end(&prog);
		}
	}
	if (out != stdout && fclose(out) && !status) {
		fprintf(stderr, "%s %s: cannot write %s: %s\n", PROG, c->cmd, c->output,
			strerror(errno));
		status = 1;
	}
	free(filters);
	free(parts);
	return status;
}

/* diff BASE NEW, and html --diff BASE NEW (argv[0] is the command). */
static int diff_main(int argc, char **argv)
{
	struct diff_cli dc;
	memset(&dc, 0, sizeof(dc));
	dc.c.cmd = argv[0];
	dc.c.progress = 1;
	dc.c.jobs = ana_cpu_count();
	dc.c.diff = 1;
	dc.html = !strcmp(argv[0], "html");
	ana_filter_init(&dc.c.filter);
	ana_filter_init(&dc.sides[0].time);
	ana_filter_init(&dc.sides[1].time);
	dc.c.side_time[0] = &dc.sides[0].time;
	dc.c.side_time[1] = &dc.sides[1].time;
	/* every input is an argument: argc bounds them */
	if (!(dc.c.inputs = calloc((size_t)argc + 1, sizeof(*dc.c.inputs)))) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		return 1;
	}
	int ret = diff_parse(&dc, argc, argv);
	if (ret < 0)
		ret = diff_run(&dc);
	if (dc.sides[1].traces == dc.sides[0].traces) {   /* one input, two windows */
		dc.sides[1].traces = NULL;
		dc.sides[1].names = NULL;
		dc.sides[1].n = 0;
	}
	diff_side_release(&dc.sides[0]);
	diff_side_release(&dc.sides[1]);
	ana_filter_release(&dc.c.filter);
	free(dc.c.inputs);
	return ret;
}

/* html --diff is the diff's page: the same two sides. */
static int is_diff(int argc, char **argv)
{
	if (!strcmp(argv[1], "diff"))
		return 1;
	for (int i = 2; !strcmp(argv[1], "html") && i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--diff"))
			return 1;
	return 0;
}

static void on_load_note(void *ctx, const char *line)
{
	(void)ctx;
	ana_text_str(stderr, line);   /* paths and hosts are the data's: escaped */
	fputc('\n', stderr);
}

static void load_fail(const char *msg)
{
	fprintf(stderr, "%s load: ", PROG);
	ana_text_str(stderr, msg);
	fputc('\n', stderr);
}

/* The URLs of --clickhouse-file: a file only its owner may read or write,
 * since the URLs may hold a password (user:password@, ?password=). NULL
 * after a message naming the file, the cause and the fix. */
static char *read_urls_file(const char *path)
{
	char buf[65536];
	struct stat st;
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f) {
		fprintf(stderr, "%s load: cannot read the --clickhouse-file %s: %s\n", PROG, path,
			strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077)) {
		fprintf(stderr, "%s load: --clickhouse-file %s is open to others than its owner "
			"(mode %03o) and may hold passwords: chmod 600 %s\n", PROG, path,
			(unsigned)(st.st_mode & 0777), path);
		fclose(f);
		return NULL;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n == sizeof(buf)) {
		fprintf(stderr, "%s load: --clickhouse-file %s is larger than %zu bytes: it "
			"should hold URLs only\n", PROG, path, sizeof(buf) - 1);
		return NULL;
	}
	buf[n] = '\0';
	return strdup(buf);
}

/* load [--clickhouse URLS | --clickhouse-file FILE] [--cluster NAME] DB...
 * (analyzer/load/load.h); without either option the URLs are
 * PERFREC_CLICKHOUSE's, so that they appear in no command line. */
static int load_main(int argc, char **argv)
{
	const char *urls_arg = NULL, *urls_file = NULL, *cluster = NULL, *dbs[argc];
	const char *from = "--clickhouse";
	char *precs[argc];
	size_t ndb = 0, nprec = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			print_help(stdout, "load");
			return 0;
		}
		if ((!strcmp(argv[i], "--clickhouse") || !strcmp(argv[i], "--clickhouse-file") ||
		     !strcmp(argv[i], "--cluster")) && i + 1 < argc) {
			*(!strcmp(argv[i], "--cluster") ? &cluster :
			  !strcmp(argv[i], "--clickhouse") ? &urls_arg : &urls_file) = argv[i + 1];
			i++;
		} else if (argv[i][0] == '-') {
			return fail_usage("load", "unknown option or missing value: %s", argv[i]);
		} else if (ana_load_is_db(argv[i])) {
			dbs[ndb++] = argv[i];
		} else {
			precs[nprec++] = argv[i];
		}
	}
	if (urls_arg && urls_file)
		return fail_usage("load", "%s", "--clickhouse and --clickhouse-file: give one");
	if (!urls_arg && !urls_file && (urls_arg = getenv(ANA_LOAD_URLS_ENV)) && *urls_arg)
		from = ANA_LOAD_URLS_ENV;
	if (!urls_file && (!urls_arg || !*urls_arg))
		return fail_usage("load", "%s", "needs the ClickHouse URLs: --clickhouse URLS, "
				  "--clickhouse-file FILE or " ANA_LOAD_URLS_ENV);
	if (!(ndb + nprec))
		return fail_usage("load", "%s", "needs at least one input: FILE, DIR or DB.sqlite");
	char *list = urls_file ? read_urls_file(urls_file) : strdup(urls_arg), *save = NULL;
	if (!list)
		return urls_file ? 2 : 1;
	if (urls_file)
		from = urls_file;
	/* (a URL is at least 8 bytes and one separator) */
	const char *urls[strlen(list) / 2 + 1];
	size_t nurls = 0;
	for (char *u = strtok_r(list, ", \t\r\n", &save); u; u = strtok_r(NULL, ", \t\r\n", &save)) {
		/* named by position, not quoted: it may hold a password */
		if (strncmp(u, "http://", 7) && strncmp(u, "https://", 8)) {
			fprintf(stderr, "%s load: URL %zu of %s does not start with http:// or "
				"https://\n", PROG, nurls + 1, from);
			free(list);
			return 2;
		}
		urls[nurls++] = u;
	}
	if (!nurls) {
		fprintf(stderr, "%s load: %s holds no URL\n", PROG, from);
		free(list);
		return 2;
	}
	struct ana_load_opts o = { .size = sizeof(o), .urls = urls, .nurls = nurls,
				   .cluster = cluster, .note = on_load_note };
	struct ana_query_opts qo = { .jobs = ana_cpu_count() };
	struct ana_loader *ld = ana_loader_new(&o);
	struct ana_load_stats st = { 0 };
	int ret = 0;
	if (!ld) {
		fprintf(stderr, "%s load: %s\n", PROG, strerror(errno));
		free(list);
		return 1;
	}
	if ((ret = ana_loader_prepare(ld)) < 0)
		load_fail(ana_loader_errmsg(ld));
	if (!ret && nprec && (ret = ana_loader_load_prec(ld, precs, nprec, &qo, &st)) < 0)
		load_fail(ana_loader_errmsg(ld));
	for (size_t i = 0; i < ndb && !ret; i++)
		if ((ret = ana_loader_load_db(ld, dbs[i], &st)) < 0)
			load_fail(ana_loader_errmsg(ld));
	if (!ret)
		fprintf(stderr, "%s load: %zu loaded, %zu already loaded, %zu still being written, "
			"%zu loaded without their end (whole = 0); %llu rows, %llu bytes\n", PROG,
			st.loaded, st.skipped, st.open, st.partial, (unsigned long long)st.rows,
			(unsigned long long)st.bytes);
	ana_loader_free(ld);
	free(list);
	if (ret)
		return ret == -EINVAL ? 2 : 1;
	return st.unreadable ? 3 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		if (argc >= 3 && !strcmp(argv[1], "help")) {
			print_help(stdout, argv[2]);
			return 0;
		}
		fputs(usage_main, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	/* ---- perf-shaped: --version (the project's version, as perfrec's) */
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("%s %s\n", PROG, PERFREC_VERSION);
		return 0;
	}
	/* ---- end perf-shaped */
	if (is_diff(argc, argv))
		return diff_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "load"))
		return load_main(argc - 1, argv + 1);
	struct cli c;
	memset(&c, 0, sizeof(c));
	/* every input is an argument or an -i: argc bounds them */
	if (!(c.inputs = calloc((size_t)argc + 1, sizeof(*c.inputs)))) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		return 1;
	}
	c.cmd = argv[1];
	c.progress = 1;
	c.jobs = ana_cpu_count();
	ana_filter_init(&c.filter);
	int known = 0;
	for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
		if (!strcmp(helps[i].name, c.cmd))
			known = 1;
	if (!known) {
		fprintf(stderr, "%s: unknown command '%s'\n\n%s", PROG, c.cmd, usage_main);
		free(c.inputs);
		return 2;
	}
	int ret = parse_args(&c, argc - 1, argv + 1);
	if (ret < 0) {
		/* One file named alone reads as it always did; anything else
		 * (several inputs, a directory, a host filter) is a dataset. */
		struct stat st;
		c.dataset = c.ninputs > 1 || c.filter.nhosts ||
			    (stat(c.inputs[0], &st) == 0 && S_ISDIR(st.st_mode));
		ret = !strcmp(c.cmd, "query") ? run_query(&c) : run_file(&c);
	}
	ana_filter_release(&c.filter);
	free(c.inputs);
	return ret;
}
