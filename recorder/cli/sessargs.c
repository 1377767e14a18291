/*
 * sessargs.c - a daemon session's arguments; see sessargs.h.
 */
#include "recorder/cli/sessargs.h"

#include <errno.h>
#include <string.h>

#include "recorder/cli/parse.h"
#include "recorder/log.h"

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
	ret = rec_cli_record_parse(argc, argv, r);
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
	if (r->max_bytes) {
		rec_log(REC_LOG_ERROR, "--max-size: a session goes on until stopped; "
			"--rotate-size and --keep bound its files");
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
	rec_cli_help(f, "usage: perfrec ctl start NAME [record options] [session options]",
		     "Starts a session in the daemon: `perfrec record` options (events,\n"
		     "targets; no command), and where it goes: files NAME.<time>.<n>.prec\n"
		     "(or -o STEM.prec: STEM.<time>.<n>.prec) in the daemon's output directory\n"
		     "(relative names; root may give absolute ones), a collector (--to), or a\n"
		     "flight recorder in memory (--flight). The reply waits until the session\n"
		     "records, or carries the recorder's own error.\n",
		     rec_cli_record_opts, "The same words, one session per file, in CONFIG/NAME.session start\n"
		     "with the daemon (see 'perfrec daemon --help').\n");
}
