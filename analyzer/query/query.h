/*
 * query.h - SQL over a dataset: SQLite virtual tables that decode frames
 * on demand (perfrec-analyze query).
 *
 * The tables (docs/query.md gives every column and unit) are eponymous
 * virtual tables of an in-memory SQLite database: samples, stacks,
 * switches, offcpu, counters, tasks, losses, files, and the view
 * profile. Nothing is imported first: a scan opens the dataset's files
 * one at a time and decodes only the frames it needs. Conditions on
 * time_ns (ranges), host and cpu (equality) reach the scan through
 * xBestIndex, so a window opens only the files whose range meets it and
 * reads only the frames whose indexed time range meets it; SQLite checks
 * every condition again on the rows, so the pushdown only saves work.
 *
 * A query is read-only: an authorizer allows only reading statements
 * (no ATTACH, no writes, no CREATE, no pragma that sets a value), and
 * loading extensions is off.
 *
 * How to use:
 *
 *   struct ana_query *q;
 *   ret = ana_query_new(&q, ds, &opts);          // ds borrowed, outlives q
 *   ret = ana_query_run(q, sql, doc, err, sizeof(err));   // one section per
 *                                                // statement with columns
 *   ret = ana_query_write_db(q, "out.sqlite", err, sizeof(err));
 *   ana_query_stats(q, &st);                      // frames decoded, files opened
 *   ana_query_free(q);
 *
 * Errors: ANA_QUERY_E_SQL when SQLite refused the SQL (err holds
 * SQLite's message), else a negative errno or PREC_E_* code from reading
 * the dataset (err names the file). Damaged frames are skipped after
 * their decodable packets and counted in the stats, as the reports do.
 */
#ifndef ANA_QUERY_H
#define ANA_QUERY_H

#include <stddef.h>
#include <stdint.h>

struct ana_dataset;
struct ana_doc;
struct ana_query;

/* The SQL was refused by SQLite (syntax, unknown column, not allowed). */
#define ANA_QUERY_E_SQL (-100000)

struct ana_query_opts {
	int jobs;            /* decode threads per scan; <= 1 serial */
	const char *symfs;   /* as report's --symfs (may be NULL) */
	int no_demangle, no_cut;
	/* Read file i of the dataset from mem[i] (mem_len[i] bytes) instead
	 * of its path (tests, fuzzing); NULL = from the paths. Borrowed. */
	const void *const *mem;
	const size_t *mem_len;
};

struct ana_query_stats {
	uint64_t files_opened;   /* trace opens by scans */
	uint64_t frames_read;    /* frames the scans decoded (after pass 1) */
	uint64_t frames_total;   /* frames of the files the scans opened */
	uint64_t damaged;        /* damaged frames met */
	uint64_t files_skipped;  /* files that could not be read (not opened) */
	const char *skip_cause;  /* the last of them: "path: cause" (the query's) */
};

/* ds is borrowed and must outlive q. Returns 0 or -ENOMEM / -EINVAL
 * (SQLite could not be set up). */
int ana_query_new(struct ana_query **out, struct ana_dataset *ds,
		  const struct ana_query_opts *opts);
void ana_query_free(struct ana_query *q);   /* NULL is fine */

/* Runs every statement of sql; each statement that returns columns adds
 * a table section to doc ("rows", then "rows2", ...). Values keep their
 * SQLite types: integers and reals as numbers, text as strings (escaped
 * by the document's writers), NULL as null. */
int ana_query_run(struct ana_query *q, const char *sql, struct ana_doc *doc,
		  char *err, size_t errlen);

/* Writes every table, and the profile view's rows as a table, into a new
 * SQLite file at path (replaced atomically: written beside it, then
 * renamed), with the same names and column types. */
int ana_query_write_db(struct ana_query *q, const char *path, char *err, size_t errlen);

void ana_query_stats(const struct ana_query *q, struct ana_query_stats *st);

/* The stack_id of a resolved stack of n locations, leaf first: FNV-1a
 * 64 over each location's "sym\0dso\0" bytes (an absent dso as ""), as a
 * signed integer; never 0 (0 is "no stack"). The same stack has the same
 * id in every file, host and program that computes it so. */
int64_t ana_query_stack_id(const char *const *syms, const char *const *dsos, size_t n);

#endif
