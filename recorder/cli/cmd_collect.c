/*
 * cmd_collect.c - `perfrec collect`: the archive collector
 * (net/collector.h) until SIGTERM/SIGINT, and `--list`, what an archive
 * directory holds (net/archive_file.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "recorder/cli/cmd.h"
#include "recorder/cli/netopts.h"
#include "recorder/cli/parse.h"
#include "recorder/cli/print.h"
#include "recorder/log.h"
#include "recorder/net/archive_file.h"
#include "recorder/net/collector.h"
#include "recorder/net/jetstream.h"
#include "recorder/net/wire.h"
#include "recorder/recording/status.h"

#define DEFAULT_LISTEN "127.0.0.1:7878"

enum { OPT_MAX_BUFFER = REC_OPT_FIRST_FREE };

static const struct rec_cli_opt collect_opts[] = {
	REC_CLI_SECTION("serving"),
	{ "listen", REC_OPT_LISTEN, "ADDR:PORT", "where recorders connect (default " DEFAULT_LISTEN
	  ";\nloopback unless told otherwise; port 0 = any free)" },
	{ "dir", REC_OPT_DIR, "DIR", "archive root: DIR/<host>/<session>.prec" },
	{ "nats", REC_OPT_NATS, "URLS", "instead of (or as well as) --dir: publish every\n"
	  "frame to JetStream (nats://HOST:PORT,...), ack the\n"
	  "recorder once JetStream stored it; see perfrec archive" },
	{ "stream", REC_OPT_STREAM, "NAME", "JetStream stream (default PERFREC), created when\n"
	  "missing: file storage, --replicas, deny delete" },
	{ "replicas", REC_OPT_REPLICAS, "N", "replicas of a stream created here (default 3, at\n"
	  "most the cluster's size)" },
	{ "max-sessions", REC_OPT_MAX_SESSIONS, "N", "sessions streaming at once (default: what the\n"
	  "open-file limit allows, its soft limit raised to\n"
	  "the hard one at start: a session holds 2 files\n"
	  "with --dir, 1 without; at most 16384; logged)" },
	{ "hello-timeout", REC_OPT_HELLO_TIMEOUT, "TIME", "a connection must say hello within\n"
	  "(default 5s)" },
	{ "idle-timeout", REC_OPT_IDLE_TIMEOUT, "TIME", "a silent connection, or a message that\n"
	  "stops arriving, is closed after (default 60s)" },
	{ "max-buffer", OPT_MAX_BUFFER, "SIZE", "memory for messages being received, all\n"
	  "connections together (default 1g); a connection\n"
	  "that would pass it is refused and comes back later" },
	REC_CLI_SECTION("security"),
	REC_CLI_NET_OPTS,
	REC_CLI_SECTION("listing"),
	{ "list", REC_OPT_LIST, NULL, "print what --dir holds and exit: host, session,\n"
	  "start, duration, bytes, complete / open / torn / damaged" },
	{ "help", 'h', NULL, "this text" },
	{ NULL, 0, NULL, NULL },
};

/* Raises the open-file soft limit to the hard limit (a collector's
 * sessions are its files: sockets and archive files) and derives the
 * session and connection limits from it, or warns when an explicit
 * --max-sessions needs more files than the limit gives. */
static void fit_sessions(struct rec_collector_opts *o, bool dir)
{
	struct rlimit rl;
	uint64_t nofile = 1024;
	unsigned conns, fit;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < rl.rlim_max) {
			rlim_t was = rl.rlim_cur;

			rl.rlim_cur = rl.rlim_max;
			if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
				rl.rlim_cur = was;
		}
		nofile = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
	}
	fit = rec_collector_fit_streams(nofile, dir, &conns);
	if (!o->max_streams) {
		o->max_streams = fit;
		rec_log(REC_LOG_INFO, "collect: at most %u sessions at once (open-file limit "
			"%llu; --max-sessions sets it)", fit, (unsigned long long)nofile);
	} else if (o->max_streams > fit) {
		rec_log(REC_LOG_WARN, "collect: --max-sessions %u needs about %llu open files, "
			"the limit is %llu: raise ulimit -n (LimitNOFILE= under systemd), or "
			"sessions past %u will be refused when files run out", o->max_streams,
			(unsigned long long)o->max_streams * (dir ? 2 : 1) + 80,
			(unsigned long long)nofile, fit);
	}
	/* connections: the sessions', and room for hellos and replacements */
	o->max_conns = o->max_streams + o->max_streams / 8 + 16;
	if (o->max_conns < conns && o->max_streams <= fit)
		o->max_conns = conns;
}

static const char collect_usage[] =
	"usage: perfrec collect --dir DIR | --nats URLS [--listen ADDR:PORT] [options]\n"
	"       perfrec collect --list --dir DIR   (or: perfrec collect --list DIR)";
static const char collect_about[] =
	"Archives the recordings that `perfrec record --to ADDR:PORT` streams: each\n"
	"session becomes DIR/<host>/<session>.prec, the exact file the recorder\n"
	"would have written, readable while it grows. A frame is acknowledged only\n"
	"once it is on disk (fdatasync), so a recorder that loses its collector\n"
	"resends from there and nothing is lost or written twice. SIGTERM or\n"
	"Ctrl-C stops it; every file it holds is synced and stays readable.\n";

static struct rec_collector *running;

static void on_signal(int sig)
{
	(void)sig;
	if (running)
		rec_collector_stop(running);
}

static int print_entry(const struct rec_archive_entry *e, void *ctx)
{
	char start[32] = "-", bytes[32], dur[32];
	int *n = ctx;

	if (e->start_realtime_ns) {
		time_t t = (time_t)(e->start_realtime_ns / 1000000000ull);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	rec_status_bytes(e->bytes, bytes, sizeof(bytes));
	snprintf(dur, sizeof(dur), "%.1fs", (double)e->duration_ns / 1e9);
	if (!(*n)++)
		printf("%-24s %-32s %-20s %10s %12s  %s\n", "HOST", "SESSION", "START (UTC)",
		       "DURATION", "BYTES", "STATUS");
	printf("%-24s %-32s %-20s %10s %12s  %s", e->host, e->id, start, dur, bytes,
	       rec_archive_status_name(e->status));
	if (e->status == REC_ARCHIVE_DAMAGED)
		printf(" (%llu damaged stretch%s, the first at offset %llu; %s%s)",
		       (unsigned long long)e->damaged, e->damaged == 1 ? "" : "es",
		       (unsigned long long)e->damage_offset,
		       e->complete ? "index in" : "no index",
		       e->resumable ? "" : "; its record count is unknown: a collector "
		       "will not resume it");
	else if (e->status == REC_ARCHIVE_TORN && e->torn_bytes)
		printf(" (%llu bytes after the last whole frame)",
		       (unsigned long long)e->torn_bytes);
	else if (e->status == REC_ARCHIVE_TORN)
		printf(" (no index: the stream stopped early)");
	printf("\n");
	return 0;
}

int rec_cli_list_archive(const char *dir)
{
	int n = 0;

	if (rec_archive_list(dir, print_entry, &n) < 0)
		return 1;
	if (!n)
		printf("no sessions in %s\n", dir);
	return 0;
}

int rec_cli_collect(int argc, char **argv)
{
	struct rec_collector_opts o = REC_COLLECTOR_OPTS_INIT;
	struct rec_cli_net net;
	struct rec_cli_parser p;
	struct rec_collector *c = NULL;
	struct rec_js_opts jo = REC_JS_OPTS_INIT;
	struct rec_js *js = NULL;
	struct sigaction sa;
	const char *arg, *dir = NULL;
	bool do_list = false;
	uint64_t v;
	int key, ret = 0, code = 2;

	jo.no_reconnect_buffer = true;   /* see rec_js_opts */
	rec_cli_print_install(false);
	memset(&net, 0, sizeof(net));
	o.listen = DEFAULT_LISTEN;
	if (rec_cli_parser_init(&p, collect_opts) < 0)
		return 1;
	while ((key = rec_cli_next(&p, argc, argv, &arg)) > 0) {
		if (rec_cli_net_option(&net, key, arg))
			continue;
		switch (key) {
		case REC_OPT_LISTEN:
			o.listen = arg;
			break;
		case REC_OPT_DIR:
			dir = arg;
			break;
		case REC_OPT_NATS:
			jo.urls = arg;
			break;
		case REC_OPT_STREAM:
			jo.stream = arg;
			break;
		case REC_OPT_REPLICAS:
			if (rec_parse_uint(arg, 5, &v) < 0 || !v)
				ret = rec_cli_bad_value(&p, arg, "1 to 5 replicas");
			jo.replicas = (int)v;
			break;
		case REC_OPT_MAX_SESSIONS:
			if (rec_parse_uint(arg, 1000000, &v) < 0 || !v)
				ret = rec_cli_bad_value(&p, arg, "a positive count");
			o.max_streams = (unsigned)v;
			break;
		case REC_OPT_HELLO_TIMEOUT:
		case REC_OPT_IDLE_TIMEOUT:
			if (rec_parse_duration(arg, 1000000000ull, &v) < 0 || v < 1000000 ||
			    v > 86400000000000ull)
				ret = rec_cli_bad_value(&p, arg, "a duration from 1ms to 24h");
			if (key == REC_OPT_HELLO_TIMEOUT)
				o.hello_timeout_ms = (uint32_t)(v / 1000000);
			else
				o.idle_timeout_ms = (uint32_t)(v / 1000000);
			break;
		case OPT_MAX_BUFFER:
			if (rec_parse_size(arg, &v) < 0 || v < REC_WIRE_MAX_MSG + 4)
				ret = rec_cli_bad_value(&p, arg, "a size of at least 65m (one "
							"whole record)");
			o.max_buffer = (size_t)v;
			break;
		case REC_OPT_LIST:
			do_list = true;
			break;
		case 'h':
			rec_cli_help(stdout, collect_usage, collect_about, collect_opts, NULL);
			code = 0;
			goto out;
		default:
			ret = -EINVAL;
			break;
		}
		if (ret < 0)
			break;
	}
	if (key < 0 || ret < 0)
		goto usage;
	if (!dir && p.optind < argc && do_list)
		dir = argv[p.optind++];
	if (p.optind < argc) {
		rec_log(REC_LOG_ERROR, "unexpected argument '%s'", argv[p.optind]);
		goto usage;
	}
	if (!dir && (do_list || !jo.urls)) {
		rec_log(REC_LOG_ERROR, "--dir DIR is needed: where the archive lives "
			"(or --nats URLS: JetStream stores it)");
		goto usage;
	}
	if (do_list) {
		code = rec_cli_list_archive(dir);
		goto out;
	}
	code = 1;
	if (dir && mkdir(dir, 0750) < 0 && errno != EEXIST) {
		rec_log(REC_LOG_ERROR, "cannot create %s: %s", dir, strerror(errno));
		goto out;
	}
	if (rec_cli_net_load(&net, true) < 0)
		goto out;
	fit_sessions(&o, dir != NULL);
	if (jo.urls && rec_js_connect(&jo, &js) < 0)
		goto out;
	o.dir = dir;
	o.js = js;
	o.token = net.token;
	o.token_len = net.token_len;
	o.tls = net.tls;
	if (rec_collector_new(&o, &c) < 0)
		goto out;
	running = c;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	{
		char where[300];
		const char *colon = strrchr(o.listen, ':');

		snprintf(where, sizeof(where), "%.*s:%d", colon ? (int)(colon - o.listen) : 0,
			 o.listen, rec_collector_port(c));
		rec_log(REC_LOG_INFO, "collect: listening on %s, archiving into %s%s%s%s%s",
			where, dir ? dir : "", dir && js ? " and " : "",
			js ? "JetStream stream " : "", js ? rec_js_stream_name(js) : "",
			net.tls ? ", TLS" : "");
	}
	ret = rec_collector_run(c);
	running = NULL;
	{
		struct rec_collector_stats st;

		rec_collector_stats(c, &st);
		rec_log(REC_LOG_INFO, "collect: stopped: %llu connections (%llu refused), "
			"%llu sessions, %llu frames (%llu bytes) archived, %llu duplicates "
			"dropped", (unsigned long long)st.accepted, (unsigned long long)st.refused,
			(unsigned long long)st.streams, (unsigned long long)st.frames,
			(unsigned long long)st.bytes, (unsigned long long)st.duplicates);
	}
	code = ret < 0 ? 1 : 0;
	goto out;
usage:
	fprintf(stderr, "perfrec: see 'perfrec collect --help'\n");
	code = 2;
out:
	rec_collector_free(c);
	rec_js_free(js);
	rec_cli_net_release(&net);
	rec_cli_parser_release(&p);
	return code;
}
