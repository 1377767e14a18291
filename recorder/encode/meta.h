/*
 * meta.h - the packets that frame a recording's output: FileHeader first,
 * Notes, SessionEnd last. `perfrec record` (every output of a recording,
 * rotated ones included) and `perfrec stat -o` write them through here, so
 * the two cannot drift.
 *
 * ("SessionEnd" is the trace format's name for the end of one output; the
 * name stays for compatibility with files already written.)
 */
#ifndef REC_META_H
#define REC_META_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/writer.h"
#include "recorder/encode/emit.h"

enum rec_target {
	REC_TARGET_SYSTEM,    /* every online CPU */
	REC_TARGET_CPUS,      /* chosen CPUs */
	REC_TARGET_PIDS,      /* processes, all their threads */
	REC_TARGET_TIDS,      /* threads */
	REC_TARGET_COMMAND,   /* a command perfrec starts */
};

/* "system-wide", "cpus 0,2", "pid 12,40", "tid 41", "command" into buf
 * (cut to fit). Returns buf. */
const char *rec_meta_target_string(enum rec_target t, const int *ids,
				   size_t n, char *buf, size_t len);

struct rec_meta_header {
	int argc;                    /* perfrec's own argv */
	char **argv;
	uint64_t start_ns;           /* CLOCK_MONOTONIC */
	const char *target;          /* rec_meta_target_string() */
	char *const *workload;       /* NULL-ended argv of the command, or NULL */
	pid_t workload_pid;
};

/* The FileHeader (host from encode/hostinfo.h plus h) on stream 0.
 * Returns 0 or the writer's error. */
int rec_meta_write_header(struct prec_writer *w, const struct rec_meta_header *h);

/* A Note packet (level: Perfrec__Note__Level) on stream 0. */
int rec_meta_write_note(struct prec_writer *w, int level, const char *text);

struct rec_meta_end {
	uint64_t end_ns;
	const char *reason;          /* "signal", "duration", "rotated", ... */
	int exit_status;             /* the command's, or -1 for none */
	const struct rec_emit_stats *st;   /* NULL: no kernel records (stat) */
	const struct rec_emit_cpu *cpu;    /* [ncpus], parallel to cpus */
	const int *cpus;             /* cpu ids of the rings */
	size_t ncpus;
	uint64_t symbol_bytes, symbol_time_ns;
};

/* SessionEnd on stream 0, with the writer's byte counts. Returns 0 or the
 * writer's error (-ENOMEM when the CPU table cannot be built). */
int rec_meta_write_end(struct prec_writer *w, const struct rec_meta_end *e);

#endif
