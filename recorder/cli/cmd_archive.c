/*
 * cmd_archive.c - `perfrec archive`: JetStream into archive files
 * (net/js_archiver.h) until SIGTERM/SIGINT; `--list` as `collect --list`.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "recorder/cli/cmd.h"
#include "recorder/cli/parse.h"
#include "recorder/cli/print.h"
#include "recorder/log.h"
#include "recorder/net/archive_load.h"
#include "recorder/net/js_archiver.h"

enum { OPT_LOAD_CLICKHOUSE = REC_OPT_FIRST_FREE, OPT_ANALYZER, OPT_LOAD_JOBS,
       OPT_CLICKHOUSE_FILE, OPT_CLICKHOUSE_ENV };

static const struct rec_cli_opt archive_opts[] = {
	REC_CLI_SECTION("archiving"),
	{ "nats", REC_OPT_NATS, "URLS", "NATS servers with JetStream, nats://HOST:PORT,..." },
	{ "stream", REC_OPT_STREAM, "NAME", "the stream collectors publish to (default PERFREC)" },
	{ "dir", REC_OPT_DIR, "DIR", "archive root: DIR/<host>/<session>.prec" },
	{ "durable", REC_OPT_DURABLE, "NAME", "the consumer archivers share (default\n"
	  "perfrec-archive): several archivers split the work" },
	{ "ack-wait", REC_OPT_ACK_WAIT, "TIME", "an unacknowledged message is delivered again\n"
	  "after (default 30s)" },
	{ "replicas", REC_OPT_REPLICAS, "N", "replicas if the stream must be created (default 3)" },
	REC_CLI_SECTION("loading into ClickHouse"),
	{ "load-clickhouse", OPT_LOAD_CLICKHOUSE, "URLS", "run 'perfrec-analyze load FILE' with these\n"
	  "URLs for each file once it is complete, without\n"
	  "waiting for it; a failed load is logged with its\n"
	  "exit status and tried again after 10s, 1m and 5m,\n"
	  "then left for a manual 'perfrec-analyze load'.\n"
	  "The loads get the URLs in their environment\n"
	  "(" REC_ARCHIVE_LOAD_URLS_ENV "), never in their command line" },
	{ "clickhouse-file", OPT_CLICKHOUSE_FILE, "FILE", "load as --load-clickhouse, with the URLs\n"
	  "in FILE (chmod 600: URLs may hold passwords, and\n"
	  "every local user reads command lines)" },
	{ "clickhouse-env", OPT_CLICKHOUSE_ENV, NULL, "load as --load-clickhouse, with the URLs in\n"
	  "the environment variable " REC_ARCHIVE_LOAD_URLS_ENV },
	{ "analyzer", OPT_ANALYZER, "PATH", "the perfrec-analyze to run (default: the one beside\n"
	  "perfrec, else PATH's)" },
	{ "load-jobs", OPT_LOAD_JOBS, "N", "loads at once, the others queued (default 2)" },
	REC_CLI_SECTION("listing"),
	{ "list", REC_OPT_LIST, NULL, "print what --dir holds and exit (as collect --list)" },
	{ "help", 'h', NULL, "this text" },
	{ NULL, 0, NULL, NULL },
};

static const char archive_usage[] =
	"usage: perfrec archive --nats URLS --dir DIR [--stream NAME] [options]\n"
	"       perfrec archive --list DIR";
static const char archive_about[] =
	"Writes the recordings that collectors (perfrec collect --nats) published to\n"
	"a JetStream stream into DIR/<host>/<session>.prec, each the exact file the\n"
	"recorder wrote. A message is acknowledged only after its bytes are synced\n"
	"to disk; restarted, an archiver resumes where its acknowledgements stopped,\n"
	"and a record delivered twice is written once. Run several on one stream\n"
	"to share the work. SIGTERM or Ctrl-C stops it with every file synced.\n"
	"With --load-clickhouse, --clickhouse-file or --clickhouse-env, each complete\n"
	"file is loaded into ClickHouse by a\n"
	"perfrec-analyze subprocess; the archive is only read. Loads are idempotent:\n"
	"files whose load was given up, or queued when the archiver stopped (each\n"
	"logged), are loaded by 'perfrec-analyze load --clickhouse URLS DIR'.\n";

/* (here, in the library, rather than in main.c: the perf-shaped commands
 * and archive's loads both use it) */
bool rec_cli_analyzer_beside(char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	buf[0] = '\0';
	if (n <= 0)
		return false;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return false;
	*slash = '\0';
	snprintf(buf, len, "%s/perfrec-analyze", self);
	return access(buf, X_OK) == 0;
}

static struct rec_js_archiver *running;

static void on_signal(int sig)
{
	(void)sig;
	if (running)
		rec_js_archiver_stop(running);
}

int rec_cli_archive(int argc, char **argv)
{
	struct rec_js_archiver_opts o = REC_JS_ARCHIVER_OPTS_INIT;
	struct rec_cli_parser p;
	struct rec_js_archiver *a = NULL;
	struct sigaction sa;
	const char *arg;
	char analyzer[PATH_MAX + 32];
	bool do_list = false, env_urls = false;
	uint64_t v;
	int key, ret = 0, code = 2;

	rec_cli_print_install(false);
	if (rec_cli_parser_init(&p, archive_opts) < 0)
		return 1;
	while ((key = rec_cli_next(&p, argc, argv, &arg)) > 0) {
		switch (key) {
		case REC_OPT_NATS:
			o.urls = arg;
			break;
		case REC_OPT_STREAM:
			o.stream = arg;
			break;
		case REC_OPT_DIR:
			o.dir = arg;
			break;
		case REC_OPT_DURABLE:
			o.durable = arg;
			break;
		case REC_OPT_ACK_WAIT:
			if (rec_parse_duration(arg, 1000000000ull, &v) < 0 || v < 100000000ull ||
			    v > 3600000000000ull)
				ret = rec_cli_bad_value(&p, arg, "a duration from 100ms to 1h");
			o.ack_wait_ms = (uint32_t)(v / 1000000);
			break;
		case REC_OPT_REPLICAS:
			if (rec_parse_uint(arg, 5, &v) < 0 || !v)
				ret = rec_cli_bad_value(&p, arg, "1 to 5 replicas");
			o.replicas = (int)v;
			break;
		case REC_OPT_LIST:
			do_list = true;
			break;
		case OPT_LOAD_CLICKHOUSE:
			o.load_clickhouse = arg;
			break;
		case OPT_CLICKHOUSE_FILE:
			o.load_clickhouse_file = arg;
			break;
		case OPT_CLICKHOUSE_ENV:
			env_urls = true;
			break;
		case OPT_ANALYZER:
			o.analyzer = arg;
			break;
		case OPT_LOAD_JOBS:
			if (rec_parse_uint(arg, 64, &v) < 0 || !v)
				ret = rec_cli_bad_value(&p, arg, "1 to 64 loads");
			o.load_jobs = (int)v;
			break;
		case 'h':
			rec_cli_help(stdout, archive_usage, archive_about, archive_opts, NULL);
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
	if (!o.dir && do_list && p.optind < argc)
		o.dir = argv[p.optind++];
	if (p.optind < argc) {
		rec_log(REC_LOG_ERROR, "unexpected argument '%s'", argv[p.optind]);
		goto usage;
	}
	if (!o.dir) {
		rec_log(REC_LOG_ERROR, "--dir DIR is needed: where the files go");
		goto usage;
	}
	if (do_list) {
		code = rec_cli_list_archive(o.dir);
		goto out;
	}
	if (!o.urls) {
		rec_log(REC_LOG_ERROR, "--nats URLS is needed: the JetStream servers");
		goto usage;
	}
	if (!!o.load_clickhouse + !!o.load_clickhouse_file + env_urls > 1) {
		rec_log(REC_LOG_ERROR, "--load-clickhouse, --clickhouse-file and --clickhouse-env "
			"name the URLs three ways: give one");
		goto usage;
	}
	if (env_urls) {
		o.load_clickhouse = getenv(REC_ARCHIVE_LOAD_URLS_ENV);
		if (!o.load_clickhouse || !*o.load_clickhouse) {
			rec_log(REC_LOG_ERROR, "--clickhouse-env: " REC_ARCHIVE_LOAD_URLS_ENV
				" is not set; set it to the ClickHouse URLs");
			goto usage;
		}
	}
	if ((o.analyzer || o.load_jobs) && !o.load_clickhouse && !o.load_clickhouse_file) {
		rec_log(REC_LOG_ERROR, "--analyzer and --load-jobs go with --load-clickhouse URLS, "
			"--clickhouse-file or --clickhouse-env");
		goto usage;
	}
	if ((o.load_clickhouse || o.load_clickhouse_file) && !o.analyzer) {
		o.analyzer = rec_cli_analyzer_beside(analyzer, sizeof(analyzer)) ? analyzer
										  : "perfrec-analyze";
	}
	code = 1;
	if (mkdir(o.dir, 0750) < 0 && errno != EEXIST) {
		rec_log(REC_LOG_ERROR, "cannot create %s: %s", o.dir, strerror(errno));
		goto out;
	}
	if (rec_js_archiver_new(&o, &a) < 0)
		goto out;
	running = a;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rec_log(REC_LOG_INFO, "archive: consuming %s from %s into %s",
		o.stream ? o.stream : "PERFREC", o.urls, o.dir);
	ret = rec_js_archiver_run(a);
	running = NULL;
	{
		struct rec_js_archiver_stats st;

		rec_js_archiver_stats(a, &st);
		rec_log(REC_LOG_INFO, "archive: stopped: %llu messages, %llu records "
			"(%llu bytes) written, %llu duplicates, %llu early (read again from the "
			"stream), %llu retried, %llu dropped, %llu sessions completed, %llu loaded "
			"(%llu failed loads, %llu waiting)",
			(unsigned long long)st.messages,
			(unsigned long long)st.written, (unsigned long long)st.bytes,
			(unsigned long long)st.duplicates, (unsigned long long)st.early,
			(unsigned long long)st.retried,
			(unsigned long long)st.dropped, (unsigned long long)st.completed,
			(unsigned long long)st.loaded, (unsigned long long)st.load_failures,
			(unsigned long long)st.load_waiting);
	}
	code = ret < 0 ? 1 : 0;
	goto out;
usage:
	fprintf(stderr, "perfrec: see 'perfrec archive --help'\n");
	code = 2;
out:
	rec_js_archiver_free(a);
	rec_cli_parser_release(&p);
	return code;
}
