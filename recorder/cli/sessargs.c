/*
 * sessargs.c - a daemon session's arguments; see sessargs.h.
 */
#include "recorder/cli/sessargs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/cli/parse.h"
#include "recorder/log.h"

const struct rec_cli_opt rec_cli_session_opts[] = {
	REC_CLI_SECTION("session outputs (perfrec daemon)"),
	{ "rotate-size", REC_OPT_ROTATE_SIZE, "SIZE", "start a new file when the current one reaches\n"
	  "SIZE (e.g. 256m)" },
	{ "rotate-time", REC_OPT_ROTATE_TIME, "TIME", "start a new file this often (e.g. 1h, 10m; a\n"
	  "bare number is seconds)" },
	{ "keep", REC_OPT_KEEP, "N", "keep the newest N files of the session, delete\n"
	  "older ones it made (default: keep all)" },
	{ "flight", REC_OPT_FLIGHT, "SIZE", "flight recorder: keep only the newest SIZE of\n"
	  "frames in memory (e.g. 64m); 'perfrec ctl snapshot'\n"
	  "writes them to a file, the session goes on" },
	{ NULL, 0, NULL, NULL },
};

static int session_option(void *ctx, const struct rec_cli_parser *p, int key,
			  const char *arg)
{
	struct rec_cli_session_args *a = ctx;
	uint64_t v;

	switch (key) {
	case REC_OPT_ROTATE_SIZE:
		if (rec_parse_size(arg, &a->rotate_bytes) < 0 || a->rotate_bytes < 65536)
			return rec_cli_bad_value(p, arg, "a size of at least 64k (e.g. 256m)");
		return 0;
	case REC_OPT_ROTATE_TIME:
		if (rec_parse_duration(arg, 1000000000ull, &a->rotate_ns) < 0 ||
		    a->rotate_ns < 1000000000ull)
			return rec_cli_bad_value(p, arg, "a duration of at least 1s (e.g. 1h)");
		return 0;
	case REC_OPT_KEEP:
		if (rec_parse_uint(arg, 1000000, &v) < 0 || !v)
			return rec_cli_bad_value(p, arg, "a positive count of files");
		a->keep = (unsigned)v;
		return 0;
	case REC_OPT_FLIGHT:
		if (rec_parse_size(arg, &a->flight_bytes) < 0 || a->flight_bytes < 65536)
			return rec_cli_bad_value(p, arg, "a size of at least 64k (e.g. 64m)");
		return 0;
	default:
		return -EINVAL;
	}
}

static bool plain_name(const char *s)
{
	return s && s[0] && s[0] != '.' && !strchr(s, '/');
}

int rec_cli_session_parse(int argc, char **argv, bool trusted,
			  struct rec_cli_session_args *a)
{
	struct rec_cli_record_args *r = &a->rec;
	int ret;

	memset(a, 0, sizeof(*a));
	ret = rec_cli_record_parse_with(argc, argv, rec_cli_session_opts, session_option,
					a, r);
	if (ret < 0)
		return ret;
	if (r->help) {
		rec_log(REC_LOG_ERROR, "--help: see 'perfrec ctl start --help'");
		return -EINVAL;
	}
	if (r->c.command) {
		rec_log(REC_LOG_ERROR, "a daemon session records CPUs (-a, -C) or existing "
			"tasks (-p, -t); it does not run a command ('%s')", r->c.command[0]);
		return -EINVAL;
	}
	if (r->output_given && strcmp(r->c.output, "-") == 0) {
		rec_log(REC_LOG_ERROR, "-o -: a daemon session has no standard output; "
			"give a file name (or --to HOST:PORT to stream)");
		return -EINVAL;
	}
	if (!trusted && r->output_given && !plain_name(r->c.output)) {
		rec_log(REC_LOG_ERROR, "-o '%s': only root names a path; give a file name "
			"(it is written in the daemon's output directory)", r->c.output);
		return -EINVAL;
	}
	if (!trusted && (r->net.token_file || r->net.tls_cert || r->net.tls_key ||
			 r->net.tls_ca)) {
		rec_log(REC_LOG_ERROR, "--token-file and --tls-* name files the daemon "
			"reads as root: only root may give them (or a session file)");
		return -EINVAL;
	}
	if (a->flight_bytes && (r->to || a->rotate_bytes || a->rotate_ns || a->keep)) {
		rec_log(REC_LOG_ERROR, "--flight keeps the recording in memory: it goes "
			"with neither --to nor --rotate-size, --rotate-time, --keep");
		return -EINVAL;
	}
	if ((a->rotate_bytes || a->rotate_ns || a->keep) && !r->output_given && r->to) {
		rec_log(REC_LOG_ERROR, "--rotate-size, --rotate-time and --keep are about "
			"files: give -o as well as --to");
		return -EINVAL;
	}
	return 0;
}

void rec_cli_session_args_release(struct rec_cli_session_args *a)
{
	rec_cli_common_release(&a->rec.c);
	rec_cli_net_release(&a->rec.net);
}

void rec_cli_session_help(FILE *f)
{
	struct rec_cli_opt *t = rec_cli_record_options_with(rec_cli_session_opts);

	if (!t)
		return;
	rec_cli_help(f, "usage: perfrec ctl start NAME [record options] [session options]",
		     "Starts a session in the daemon: `perfrec record` options (events,\n"
		     "targets; no command), and where it goes: files NAME.<time>.<n>.prec\n"
		     "(or -o STEM.prec: STEM.<time>.<n>.prec) in the daemon's output directory\n"
		     "(relative names; root may give absolute ones), a collector (--to), or a\n"
		     "flight recorder in memory (--flight). The reply waits until the session\n"
		     "records, or carries the recorder's own error.\n",
		     t, "The same words, one session per file, in CONFIG/NAME.session start\n"
		     "with the daemon (see 'perfrec daemon --help').\n");
	free(t);
}
