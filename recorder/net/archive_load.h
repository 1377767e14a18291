/*
 * archive_load.h - hands the archive's completed files to ClickHouse: one
 * `perfrec-analyze load FILE` subprocess per file, so the recorder never
 * links the analyzer and the analyzer never links libnats.
 *
 * The URLs may hold a password (user:password@, ?password=), and every
 * local user reads a process's command line (ps, /proc/PID/cmdline):
 * they never go in the load's argv. URLs reach it in its environment
 * (PERFREC_CLICKHOUSE, which /proc/PID/environ shows to the same user
 * only), a file of them as `--clickhouse-file FILE` (read by the load;
 * refused here at the start unless only its owner may read it).
 *
 * The archiver (net/js_archiver.c) queues a file once it is complete (its
 * index is in) and closed; the loader runs at most `jobs` loads at once and
 * never waits for one, so archiving goes on while ClickHouse is slow or
 * down. A load only reads the file: the archive is never changed. A load
 * that exits non-zero is logged with its status and tried again after
 * 10 s, 1 min and 5 min; after that, or when the archiver stops first,
 * the file is logged as left for a manual `perfrec-analyze load` (loads are
 * idempotent, so loading the whole archive again stores each file once).
 *
 * How to use (one thread: the archiver's loop):
 *   rec_archive_loader_new(&opts, &l);
 *   rec_archive_loader_add(l, path);   // a completed, closed file
 *   rec_archive_loader_poll(l);        // often: reaps loads, starts queued ones
 *   rec_archive_loader_free(l);        // waits for running loads (bounded)
 */
#ifndef REC_ARCHIVE_LOAD_H
#define REC_ARCHIVE_LOAD_H

#include <stddef.h>
#include <stdint.h>

struct rec_archive_loader_opts {
	size_t sz;              /* sizeof(struct rec_archive_loader_opts) */
	const char *urls;       /* ClickHouse HTTP URLs, comma-separated (borrowed) */
	const char *analyzer;   /* perfrec-analyze to run: a path, or a name
				 * looked up in PATH (borrowed) */
	int jobs;               /* loads at once; 0 = 2 */
	uint32_t stop_wait_ms;  /* free() waits this long for running loads,
				 * then stops them; 0 = 60000 */
	const char *urls_file;  /* instead of urls: a file of them, mode 0600
				 * or stricter (borrowed) */
};

/* The load's environment variable of the URLs (analyzer/load/load.h's
 * ANA_LOAD_URLS_ENV: the same name on both sides of the subprocess). */
#define REC_ARCHIVE_LOAD_URLS_ENV "PERFREC_CLICKHOUSE"

#define REC_ARCHIVE_LOADER_OPTS_INIT { .sz = sizeof(struct rec_archive_loader_opts) }

struct rec_archive_loader;

struct rec_archive_loader_stats {
	uint64_t queued, loaded, failed, retried, abandoned;
};

/* 0, -EINVAL (neither or both of urls and urls_file, no analyzer, an
 * analyzer path that cannot run, a urls_file that cannot be read or that
 * others may read: logged), -ENOMEM. */
int rec_archive_loader_new(const struct rec_archive_loader_opts *o,
			   struct rec_archive_loader **out);
/* Queues path (copied). 0 or -ENOMEM (logged: the file is left for a
 * manual load). */
int rec_archive_loader_add(struct rec_archive_loader *l, const char *path);
/* Reaps finished loads (logging failures and queueing their retries) and
 * starts queued loads whose time has come. Never blocks. */
void rec_archive_loader_poll(struct rec_archive_loader *l);
void rec_archive_loader_stats(const struct rec_archive_loader *l,
			      struct rec_archive_loader_stats *st);
/* Waits up to stop_wait_ms for running loads, sends SIGTERM to those
 * still running, and logs every file left unloaded. NULL is fine. */
void rec_archive_loader_free(struct rec_archive_loader *l);

#endif
