/*
 * cmd.h - the perfrec commands. Each takes its own argv (argv[0] is the
 * command's name) and returns the process exit status; only these and
 * main.c print.
 *
 * Exit status: 0 success (for `record -- CMD` and `stat -- CMD`: the
 * command's own status, 128 + signal when it was killed); 1 the work
 * failed; 2 bad usage.
 */
#ifndef REC_CLI_CMD_H
#define REC_CLI_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recorder/cli/netopts.h"
#include "recorder/cli/options.h"
#include "recorder/recording/recording.h"

/* Where perfrec-analyze is run from (the perf-shaped commands, archive's
 * loads): the one installed beside this executable (a package installs both
 * in one bin/), else the first "perfrec-analyze" in PATH. Writes the path
 * beside this executable into buf ("" when unknown); true when a program
 * can run there. */
bool rec_cli_analyzer_beside(char *buf, size_t len);

/* perfrec's whole argv, written into the FileHeader of what it records. */
void rec_cli_set_self(int argc, char **argv);

int rec_cli_record(int argc, char **argv);
int rec_cli_stat(int argc, char **argv);
int rec_cli_list(int argc, char **argv);
int rec_cli_collect(int argc, char **argv);
int rec_cli_archive(int argc, char **argv);
/* `--list DIR` of collect and archive: a table of the archived sessions.
 * Returns the exit status. */
int rec_cli_list_archive(const char *dir);
int rec_cli_daemon(int argc, char **argv);
int rec_cli_ctl(int argc, char **argv);
/* The process `perfrec daemon` starts for each session (not for people). */
int rec_cli_session(int argc, char **argv);

/* What `perfrec record` parsed (exposed so tests can check that record
 * and stat accept the same forms). */
struct rec_cli_record_args {
	struct rec_cli_common c;
	/* the recording's own options, parsed straight into it (sampling,
	 * call graphs, rings, spools, symbols, the writer, BPF); what comes
	 * from c (events, targets, command, duration) is added by
	 * rec_cli_record_recording_opts() */
	struct rec_recording_opts ro;
	bool quiet, help;
	/* streaming (--to) */
	const char *to;
	const char *session, *host;
	uint64_t send_spool_bytes;
	bool frame_size_set;            /* --frame-size given: never lowered
					 * to the collector's limit */
	uint64_t finish_timeout_ns;
	bool output_given;          /* -o: keep a local copy too */
	struct rec_cli_net net;
	/* named files (recording/outputs.h), as `ctl start` words them */
	uint64_t rotate_bytes;      /* --rotate-size */
	uint64_t rotate_ns;         /* --rotate-time */
	unsigned keep;              /* --keep */
	uint64_t flight_bytes;      /* --flight */
	uint64_t max_bytes;         /* --max-size: stop there (record only) */
};

struct rec_cli_stat_args {
	struct rec_cli_common c;
	bool help;
};

/* 0, or -EINVAL after logging what is wrong. help: --help was given (the
 * caller prints it). Release with rec_cli_common_release(&a->c). */
int rec_cli_record_parse(int argc, char **argv, struct rec_cli_record_args *a);
int rec_cli_stat_parse(int argc, char **argv, struct rec_cli_stat_args *a);

/* `perfrec record`'s option table (the daemon's `ctl start --help` shows
 * it too). */
extern const struct rec_cli_opt rec_cli_record_opts[];

struct rec_evspecs;
/* The events of a (cpu-clock when none and no counters) into evl.
 * 0 or -errno (logged). */
int rec_cli_record_events(const struct rec_cli_record_args *a, struct rec_evspecs *evl);
/* The recording options a describes, sampling evl (borrowed). */
void rec_cli_record_recording_opts(const struct rec_cli_record_args *a,
				   const struct rec_evspecs *evl,
				   struct rec_recording_opts *o);

#endif
