/*
 * main.c - the perfrec command: picks the subcommand (cli/cmd.h).
 *
 * Only the command-line layer (cli/) prints and exits; everything it
 * calls returns errors and logs messages through recorder/log.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "recorder/cli/cmd.h"

#ifndef PERFREC_VERSION
#define PERFREC_VERSION "0"
#endif

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *about;
};

static const struct command commands[] = {
	{ "record", rec_cli_record, "sample events per CPU (or per task) into a .prec file" },
	{ "stat", rec_cli_stat, "count event groups and print them live, like perf stat" },
	{ "list", rec_cli_list, "list the events this host supports" },
	{ "collect", rec_cli_collect, "archive the recordings streamed with record --to" },
	{ "archive", rec_cli_archive, "write what collectors published to JetStream into files" },
	{ "daemon", rec_cli_daemon, "run recording sessions as a service (control socket)" },
	{ "ctl", rec_cli_ctl, "start, stop, rotate, snapshot and watch the daemon's sessions" },
	{ "session", rec_cli_session, NULL },   /* started by the daemon */
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: perfrec COMMAND [options]\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (commands[i].about)
			fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].about);
	fprintf(f, "  %-9s %s\n", "help", "this text; 'perfrec help COMMAND' for its options");
	fprintf(f, "\n  --version print the version\n\n"
		"Read the files with perfrec-analyze; as with perf, 'perfrec report|script|\n"
		"diff|html|info ...' runs 'perfrec-analyze report|script|...' for you.\n");
}

/* ---- perf-shaped commands: the analyzer's commands through perfrec */

static const char *const analyzer_commands[] = { "report", "script", "diff", "html", "info" };

static int is_analyzer_command(const char *name)
{
	for (size_t i = 0; i < sizeof(analyzer_commands) / sizeof(analyzer_commands[0]); i++)
		if (!strcmp(analyzer_commands[i], name))
			return 1;
	return 0;
}

/* Replaces this process with perfrec-analyze ARGV: the one beside this
 * binary, else PATH's. Returns only on failure, with the exit status. */
static int exec_analyzer(char **argv)
{
	char beside[PATH_MAX + 32];
	int err = ENOENT;

	if (rec_cli_analyzer_beside(beside, sizeof(beside))) {
		execv(beside, argv);
		err = errno;
	}
	execvp("perfrec-analyze", argv);
	if (errno != ENOENT)
		err = errno;
	fprintf(stderr, "perfrec: cannot run perfrec-analyze (%s): looked for %s and in PATH;"
		" install perfrec-analyze beside perfrec or add its directory to PATH\n",
		strerror(err), beside[0] ? beside : "it beside perfrec");
	return 127;
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;
	const struct command *c;

	rec_cli_set_self(argc, argv);
	if (!name) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("perfrec %s\n", PERFREC_VERSION);
		return 0;
	}
	if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
		usage(stdout);
		return 0;
	}
	if (argc > 2 && !strcmp(name, "help") && is_analyzer_command(argv[2])) {
		char *help[] = { (char *)"perfrec-analyze", argv[2], (char *)"--help", NULL };
		return exec_analyzer(help);
	}
	if (is_analyzer_command(name)) {
		argv[0] = (char *)"perfrec-analyze";
		return exec_analyzer(argv);
	}
	if (!strcmp(name, "help")) {
		char *help[] = { argc > 2 ? argv[2] : NULL, (char *)"--help", NULL };

		c = argc > 2 ? find(argv[2]) : NULL;
		if (!c) {
			usage(stdout);
			return argc > 2 ? 2 : 0;
		}
		return c->run(2, help);
	}
	c = find(name);
	if (!c) {
		fprintf(stderr, "perfrec: unknown command '%s'\n\n", name);
		usage(stderr);
		return 2;
	}
	return c->run(argc - 1, argv + 1);
}
