/*
 * options.h - the command-line layer's option tables: one table per
 * command lists each option once (names, value, help), and both the
 * getopt_long arrays and the --help text are made from it, so every
 * command's help reads the same and never disagrees with what it parses.
 *
 * The options `perfrec record` and `perfrec stat` share (events, counters,
 * targets, interval, duration, output) are parsed by one function into
 * struct rec_cli_common, so the two commands accept the same forms.
 *
 * How to use (in a command):
 *
 *   static const struct rec_cli_opt opts[] = {
 *       REC_CLI_SECTION("events"),
 *       { "event", 'e', "EVENTS", "events to sample, repeatable" },
 *       ...
 *       { NULL },
 *   };
 *   struct rec_cli_parser p;
 *   rec_cli_parser_init(&p, opts);
 *   p.common = &common;                    // shared options taken here
 *   while ((key = rec_cli_next(&p, argc, argv, &arg)) > 0) {
 *       switch (key) { ... rec_cli_bad_value(&p, arg, "a duration ...") ... }
 *   }
 *   // key == 0: done, p.optind is the first operand; key < 0: error
 *   // (logged; usage error, exit 2)
 *   rec_cli_parser_release(&p);
 *
 * Messages go through recorder/log.h, like everything in the recorder.
 */
#ifndef REC_CLI_OPTIONS_H
#define REC_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "recorder/encode/meta.h"
#include "recorder/events/cpumap.h"
#include "recorder/events/threadmap.h"

struct rec_cli_opt {
	const char *name;    /* long name without "--"; NULL ends the table;
			      * "" for a short option without a long name */
	int key;             /* short letter, or an REC_OPT_* >= 256;
			      * 0 with name: a section title */
	const char *value;   /* value name shown in help, NULL for a flag;
			      * "[=NAME]": an optional value (--opt=VALUE) */
	const char *help;    /* lines separated by '\n' */
};

#define REC_CLI_SECTION(title) { title, 0, NULL, NULL }

/* Keys of long-only options, one list for every command so tables can be
 * combined without clashes. */
enum {
	REC_OPT_SWITCH = 256,
	REC_OPT_FRAME_SIZE,
	REC_OPT_FLUSH_MS,
	REC_OPT_COUNTERS,
	REC_OPT_ZSTD_LEVEL,
	REC_OPT_SPOOL,
	REC_OPT_NO_SYMBOLS,
	REC_OPT_NO_CUT,
	REC_OPT_MAX_STACK,
	REC_OPT_SYMBOLS_INTERVAL,
	REC_OPT_INTERVAL_PRINT,
	REC_OPT_TO,
	REC_OPT_TOKEN_FILE,
	REC_OPT_TLS_CERT,
	REC_OPT_TLS_KEY,
	REC_OPT_TLS_CA,
	REC_OPT_SPOOL_SIZE,
	REC_OPT_SESSION,
	REC_OPT_HOST,
	REC_OPT_LISTEN,
	REC_OPT_DIR,
	REC_OPT_LIST,
	REC_OPT_MAX_SESSIONS,
	REC_OPT_HELLO_TIMEOUT,
	REC_OPT_IDLE_TIMEOUT,
	REC_OPT_FINISH_TIMEOUT,
	REC_OPT_NATS,
	REC_OPT_STREAM,
	REC_OPT_REPLICAS,
	REC_OPT_DURABLE,
	REC_OPT_ACK_WAIT,
	REC_OPT_OFF_CPU,
	REC_OPT_FILTER,
	REC_OPT_CALL_GRAPH,
	/* daemon, ctl and session options */
	REC_OPT_SOCKET,
	REC_OPT_CONFIG,
	REC_OPT_FOREGROUND,
	REC_OPT_OUTPUT_DIR,
	REC_OPT_JSON,
	REC_OPT_TIMEOUT,
	REC_OPT_FLIGHT,
	REC_OPT_ROTATE_SIZE,
	REC_OPT_ROTATE_TIME,
	REC_OPT_KEEP,
	REC_OPT_MAX_SIZE,
	REC_OPT_TRUSTED,
	REC_OPT_SYSLOG,
	REC_OPT_FIRST_FREE,   /* later commands number from here */
};

struct rec_cli_common;

struct rec_cli_parser {
	const struct rec_cli_opt *opts;
	struct rec_cli_common *common;   /* set: shared options go there */
	struct option *longopts;
	char *shortopts;
	int optind;          /* after the loop: the first operand */
	const char *token;   /* the option as typed (for messages) */
	char token_buf[64];
};

/* 0 or -ENOMEM. */
int rec_cli_parser_init(struct rec_cli_parser *p, const struct rec_cli_opt *opts);
/* The next option's key (and *arg, its value), 0 at the end of the
 * options, or -EINVAL after logging an unknown option, a missing value or
 * (with p->common) a bad value of a shared option, which are parsed into
 * p->common and not returned. Options stop at the first operand or "--"
 * (a command follows). */
int rec_cli_next(struct rec_cli_parser *p, int argc, char **argv,
		 const char **arg);
/* Options anywhere among the operands, as getopt permutes them: each
 * operand comes back in order as key REC_CLI_OPERAND with *arg the word
 * (after "--", rec_cli_next() ends and the words from p->optind on are
 * operands). Call after rec_cli_parser_init(), before rec_cli_next(). */
#define REC_CLI_OPERAND 1
void rec_cli_parser_operands_inline(struct rec_cli_parser *p);
/* Logs "bad OPT 'VALUE': not WHAT" for the current option and returns
 * -EINVAL. what: "a duration (e.g. 100ms, 2s; a bare number is ms)". */
int rec_cli_bad_value(const struct rec_cli_parser *p, const char *arg,
		      const char *what);
void rec_cli_parser_release(struct rec_cli_parser *p);

/* Help for a command: usage line(s), a paragraph, then each section of
 * opts with the options aligned, then the footer. */
void rec_cli_help(FILE *f, const char *usage, const char *about,
		  const struct rec_cli_opt *opts, const char *footer);

/* ---- the options record and stat share */

/* Help texts of the shared options, for the commands' tables. */
#define REC_CLI_TARGET_OPTS \
	{ "all-cpus", 'a', NULL, "every online CPU" }, \
	{ "cpu", 'C', "CPUS", "these CPUs, e.g. 0-3,6" }, \
	{ "pid", 'p', "PIDS", "these processes (all their threads), e.g. 12,40-43" }, \
	{ "tid", 't', "TIDS", "these threads, e.g. 41" }
#define REC_CLI_DURATION_OPT \
	{ "duration", 'd', "TIME", "stop after TIME (e.g. 10, 2.5, 500ms; a bare number\n" \
	  "is seconds); a command still running then gets\nSIGTERM" }

struct rec_cli_common {
	const char **events;      /* -e, as given */
	size_t nevents;
	const char **counters;    /* --counters, as given */
	size_t ncounters;
	bool all_cpus;            /* -a */
	bool have_cpus;           /* -C */
	struct rec_cpumap cpus;
	enum rec_target tasks;    /* -p: PIDS, -t: TIDS, else SYSTEM */
	struct rec_threadmap ids; /* -p / -t ids */
	bool have_interval;       /* -I / --interval */
	uint64_t interval_ns;
	uint64_t duration_ns;     /* -d, 0 = until stopped */
	const char *output;       /* -o */
	char **command;           /* operands after the options, or NULL */
	enum rec_target target;   /* set by rec_cli_common_finish() */
};

/* Handles key when it is a shared option: 1 taken, 0 not a shared option,
 * < 0 a bad value (logged). */
int rec_cli_common_option(struct rec_cli_common *c, const struct rec_cli_parser *p,
			  int key, const char *arg);
/* Takes the operands (a command) and decides the target: -C, -p/-t, a
 * command alone, else system-wide (-a or nothing). Refuses -p with -t,
 * -p/-t with -a/-C or with a command. 0 or -EINVAL (logged). */
int rec_cli_common_finish(struct rec_cli_common *c, int argc, char **argv,
			  int optind);
void rec_cli_common_release(struct rec_cli_common *c);

#endif
