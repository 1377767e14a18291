/*
 * diff.h - two profiles compared key by key (`perfrec-analyze diff`).
 *
 * A side is a list of traces, each read with its own filter: two files
 * are two sides of one trace each, and one trace split in time by
 * --base-time/--new-time is the same trace on both sides with two
 * filters. Every trace is aggregated by report's own pass
 * (ana_report_rows(), same keys, same filters, weight = sample period),
 * so a diff row adds up exactly what `report` shows for the same key.
 *
 * Rows are matched by the text of their keys: each trace interns its
 * strings in its own pool, so a diff interns them again in one pool of
 * its own. Each key then gets its share of its side's total period
 * (percent: recordings of different lengths or sample rates compare),
 * the change in points (new share - base share, as `perf diff` computes
 * its Delta), and the samples behind each share. Rows are sorted by
 * absolute change, largest first; ties by new share, then base share,
 * then key text, so the order depends only on the data.
 *
 * How to use:
 *
 *   struct ana_diff *d = ana_diff_new(&opts);     // keys, top
 *   ana_diff_add(d, ANA_DIFF_BASE, trace, filter);  // once per trace
 *   ana_diff_add(d, ANA_DIFF_NEW, trace2, filter2);
 *   ana_diff_render(d, doc);                       // summary + rows
 *   ana_diff_share(d, ANA_DIFF_NEW, ...);          // or read it back
 *   ana_diff_free(d);
 *
 * Traces and filters are borrowed for the duration of each call only:
 * a diff keeps copies of every string it needs.
 */
#ifndef ANA_DIFF_H
#define ANA_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "analyzer/reports/report.h"

struct ana_trace;
struct ana_filter;
struct ana_doc;
struct ana_diff;

enum ana_diff_side { ANA_DIFF_BASE = 0, ANA_DIFF_NEW = 1 };

/* One trace of a side as the command line gave it: the trace, the
 * filter to read it with (resolved against it; NULL = none) and the
 * name to show. A side is an array of them. All borrowed. */
struct ana_diff_part {
	struct ana_trace *s;
	const struct ana_filter *filter;
	const char *name;
};

struct ana_diff_opts {
	int keys[ANA_NKEYS];   /* as report's; nkeys 0 = sym */
	size_t nkeys;
	size_t top;            /* rows shown; 0 = all */
};

/* What a part is called in summaries: its name, and its window when its
 * filter has one ("t.prec 0.000-2.000 s", seconds from the trace's
 * start). Writes at most len bytes (truncated, NUL-terminated). */
void ana_diff_part_label(const struct ana_diff_part *p, char *buf, size_t len);

/* NULL with errno set (ENOMEM). o is copied. */
struct ana_diff *ana_diff_new(const struct ana_diff_opts *o);
void ana_diff_free(struct ana_diff *d);   /* NULL is fine */

/* Aggregates one trace into a side: report's pass over s with filter f
 * (resolved against s; NULL = none). name is what the summary calls the
 * trace (copied). 0 or a negative errno. */
int ana_diff_add(struct ana_diff *d, enum ana_diff_side side, struct ana_trace *s,
		 const struct ana_filter *f, const char *name);

/* Writes the comparison into doc: a "summary" section (each side's
 * traces, samples and total period) and a "rows" table (Delta, Base,
 * New in percent, the samples of each, then the keys). 0 or -ENOMEM. */
int ana_diff_render(struct ana_diff *d, struct ana_doc *doc);

/* A side's totals: samples and period that passed the filters. */
void ana_diff_totals(const struct ana_diff *d, enum ana_diff_side side,
		     uint64_t *samples, uint64_t *period);

/* The share in percent of a side's period that rows whose sym key is
 * `sym` hold (other keys summed over), e.g. for tests and the page's
 * note; 0 when absent. */
double ana_diff_sym_share(const struct ana_diff *d, enum ana_diff_side side,
			  const char *sym);

#endif
