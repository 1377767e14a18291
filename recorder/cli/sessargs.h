/*
 * sessargs.h - the arguments of a daemon session (`perfrec ctl start NAME
 * ...` and CONFIG/NAME.session files): every `perfrec record` option, its
 * output options (rotation, kept files, flight recorder) included.
 * One parser for the three places that read them: the daemon checks them
 * before starting anything, the session process runs them, and `ctl start
 * --help` shows them.
 *
 * Rules of a session, on top of record's:
 *   - no command (-- CMD): a session records CPUs or existing tasks;
 *   - untrusted callers (group members, not root) name no host paths: -o
 *     is a file name (in the daemon's output directory), and the token
 *     and TLS files are refused (they would be read as root);
 *   - no --max-size (a session goes on until stopped).
 * The output options (rotation, keep, flight) are record's.
 */
#ifndef REC_CLI_SESSARGS_H
#define REC_CLI_SESSARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "recorder/cli/cmd.h"

struct rec_cli_session_args {
	struct rec_cli_record_args rec;
};

/* argv[0] is a name for messages (the options start at argv[1]). 0, or
 * -EINVAL after logging what is wrong. Release with
 * rec_cli_session_args_release(). */
int rec_cli_session_parse(int argc, char **argv, bool trusted,
			  struct rec_cli_session_args *a);
void rec_cli_session_args_release(struct rec_cli_session_args *a);

/* The help of `perfrec ctl start`. */
void rec_cli_session_help(FILE *f);

#endif
