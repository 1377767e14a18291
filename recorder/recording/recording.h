/*
 * record.h - one `perfrec record` session: open, drain, write, stop.
 *
 * rec_record_run() does the whole recording:
 *   resolve targets (CPUs, threads of pids, or fork the command)
 *   open sampling events (session.h) and counting groups (counters.h)
 *   write FileHeader, EventDesc/GroupDesc packets on stream 0
 *   enable (or exec the command: events are enable_on_exec)
 *   write existing tasks and maps from /proc (synth.h) on stream 0
 *   loop: epoll on the rings (wakeup watermark = a quarter ring, 100 ms
 *         timeout), drain every ring into stream 1 + cpu, flush due frames,
 *         counter snapshots every interval, a status line every second
 *   stop on *opts->stop (signal), duration, workload exit, targets gone,
 *         or a write error; disable, final drain, final counter snapshot,
 *         SessionEnd, index, fsync.
 *
 * The library never prints: messages go to opts->log, the live status line
 * to opts->status (NULL = none). Signals are the caller's: it sets *stop.
 */
#ifndef REC_RECORD_H
#define REC_RECORD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/sink.h"
#include "recorder/encode/emit.h"
#include "recorder/events/evparse.h"

enum rec_target {
	REC_TARGET_SYSTEM,
	REC_TARGET_CPUS,
	REC_TARGET_PIDS,
	REC_TARGET_TIDS,
	REC_TARGET_COMMAND,
};

enum rec_log_level { REC_LOG_INFO, REC_LOG_WARN, REC_LOG_ERROR };

struct rec_record_opts {
	const struct rec_evlist *evlist;   /* sampling events; may be empty
					    * when counters are given */
	enum rec_target target;
	const int *cpus;                   /* REC_TARGET_CPUS */
	size_t ncpus;
	const int *pids;                   /* REC_TARGET_PIDS / TIDS */
	size_t npids;
	char *const *argv;                 /* REC_TARGET_COMMAND, NULL-ended */
	uint64_t freq, period;
	bool callchain, switch_events;
	size_t mmap_pages;                 /* per ring; 0 = auto: 4 MiB with
					    * CAP_IPC_LOCK (256 MiB at most in
					    * all), else 128 pages like perf */
	uint64_t spool_bytes;              /* per-CPU spool, 0 = default */
	bool no_symbols;                   /* no symbol collection (issue 6) */
	uint64_t symbols_interval_ns;      /* symbol writes while recording,
					    * 0 = every 30 s */
	uint64_t duration_ns;              /* 0 = until stopped */
	const char *output;                /* file path, unless sink is set */
	struct prec_sink *sink;            /* borrowed; overrides output */
	size_t frame_size;
	uint32_t flush_ms;
	int zstd_level;                    /* 0 = the format's default */
	const char *const *counters;       /* --counters specs */
	size_t ncounters;
	uint64_t interval_ns;
	int argc;                          /* perfrec's own argv (header) */
	char **argv_self;
	volatile sig_atomic_t *stop;
	void (*log)(void *ctx, enum rec_log_level level, const char *msg);
	void (*status)(void *ctx, const char *line);
	void *ctx;
};

struct rec_record_result {
	struct rec_emit_stats st;
	uint64_t bytes_written;   /* file bytes */
	uint64_t bytes_raw;       /* packet bytes before compression */
	uint64_t duration_ns;
	uint64_t wakeups;         /* epoll returns with a ring ready */
	size_t mmap_pages;        /* data pages per ring used */
	uint64_t event_lost;      /* sum of per-event lost counts (LOST) */
	uint64_t spool_full;      /* drains that found the spool full: the
				   * encoder fell behind the kernel */
	bool have_workload;
	int workload_exit;        /* shell-style exit code of the command */
	char stop_reason[128];
};

/* Returns 0 when the recording ran and the file was closed cleanly, else a
 * negative errno with a message (cause and fix) in err. A write error
 * during recording also returns < 0; the file still reads up to its last
 * complete frame. */
int rec_record_run(const struct rec_record_opts *o,
		   struct rec_record_result *res, char *err, size_t errlen);

/* "N samples, M switch events, L lost (x.x%)" into buf. */
const char *rec_record_summary(const struct rec_record_result *res,
			       char *buf, size_t len);

#endif
