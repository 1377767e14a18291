/*
 * report.h - samples aggregated by chosen keys (`perfrec-analyze report`).
 *
 * Pass 2 over the trace's frames in file order (decoded in parallel,
 * aggregated in the consumer thread, so --jobs never changes a number).
 * Weight of a sample is its period (1 when the event recorded none);
 * percentages are of the total weight of the samples that passed the
 * filters.
 *
 * --children adds, for every distinct function on a sample's callchain,
 * the sample's weight to that function's inclusive total (each function
 * counted once per sample, as perf does).
 *
 * With tree, each row carries its call chains as a tree under it in text
 * output (render/calltree.h), as `perf report -g` prints them: without
 * children, the whole chains of the row's own samples (outermost caller
 * first); with children, also the chains from the function down to the
 * leaf of every sample it is on (from its outermost call when it
 * recurses). percent_limit hides the rows, and the branches of the
 * trees, under that share of the total (branches: 0.5% when 0, perf's
 * default).
 *
 * With off_cpu the rows are off-CPU time instead (OffCpu packets of
 * record --off-cpu): the weight of an interval or a sum is its blocked
 * time in ns, its count the blocks it holds, its stack the kernel then
 * user frames at the switch-out. Sums carry no CPU: the cpu key shows 0
 * for them and a --cpu filter keeps intervals only.
 */
#ifndef ANA_REPORT_H
#define ANA_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "analyzer/read/filter.h"
#include "analyzer/render/table.h"

struct ana_trace;

enum ana_key { ANA_KEY_COMM, ANA_KEY_PID, ANA_KEY_TID, ANA_KEY_CPU,
	       ANA_KEY_DSO, ANA_KEY_SYM, ANA_KEY_EVENT, ANA_KEY_HOST, ANA_NKEYS };

struct ana_loc;
struct prec_packet;

/* A sample as the report counted it, for callers that aggregate more
 * from the same pass (the HTML page's flame graphs). Everything is
 * borrowed for the duration of the call; names are interned in the
 * trace's pool and live as long as it. */
struct ana_report_sample {
	const struct prec_packet *p;       /* the Sample (OffCpu) packet */
	int event;                         /* event position, or -1 */
	const char *comm;                  /* task name, ":TID" when unknown */
	uint64_t weight;                   /* period, 1 when none (off-CPU:
					    * ns blocked) */
	const struct ana_loc *frames;    /* leaf first; every sym set to */
	int nframes;                       /* its ana_frame_name() */
};

struct ana_report_opts {
	int keys[ANA_NKEYS];
	size_t nkeys;          /* 0 = comm,dso,sym */
	size_t top;            /* 0 = all rows */
	int children;
	int tree;              /* call trees under the rows (text) */
	double percent_limit;  /* 0 = every row, trees' branches from 0.5% */
	int off_cpu;           /* off-CPU time instead of samples */
	const struct ana_filter *filter;   /* NULL = none */
	/* Called for every sample that passed the filters, with its whole
	 * resolved callchain. A negative return stops the pass and is
	 * returned. May be NULL. */
	int (*on_sample)(void *ctx, const struct ana_report_sample *smp);
	void *ctx;
};

/* Parses "comm,dso,sym" into o->keys; -EINVAL with a message in err. */
int ana_report_parse_sort(struct ana_report_opts *o, const char *arg,
			  char *err, size_t errlen);

/* A report over several traces (a dataset), one at a time:
 *
 *   struct ana_report *r = ana_report_new(&opts);   // NULL: ENOMEM
 *   for each trace: ana_report_add(r, s); ana_trace_free(s);
 *   ana_report_render(r, "what was read", doc);
 *   ana_report_free(r);
 *
 * add() runs the trace's pass and folds its rows into the report: names
 * are copied into the report's own pool (equal names from two files are
 * one row), events are matched by name, and the trace may be freed right
 * after. The key `host` is the trace's FileHeader.hostname. file (may be
 * NULL: the first trace's path) is the summary's "file". opts is copied;
 * its filter must outlive the report. */
struct ana_report;
struct ana_report *ana_report_new(const struct ana_report_opts *o);
int ana_report_add(struct ana_report *r, struct ana_trace *s);
int ana_report_render(struct ana_report *r, const char *file, struct ana_doc *doc);
void ana_report_free(struct ana_report *r);   /* NULL is fine */

/* One trace: new, add, render, free. Sections "summary" and "rows".
 * 0 or a negative errno. */
int ana_report_run(struct ana_trace *s, const struct ana_report_opts *o,
		   struct ana_doc *doc);

/* ---- the aggregate alone, for reports that combine several (diff) */

/* One row of the aggregate: its key (fields outside o's keys are 0 or
 * NULL) and its sums. Strings are borrowed from the trace (interned in
 * its pool, or its event names) and live as long as it. */
struct ana_report_row {
	const char *comm, *dso, *sym, *event, *host;
	uint32_t pid, tid, cpu;
	uint64_t samples, period;              /* self */
	uint64_t child_samples, child_period;  /* with --children */
};

/* What passed the filters in all (the denominators of the percentages). */
struct ana_report_totals {
	uint64_t samples, period, filtered_out;
};

/* Runs ana_report_run()'s pass over s and hands each row to on_row (may
 * be NULL: a pass for o->on_sample alone), in the order rows were first
 * met (not sorted), then fills tot (may be NULL). Keys default as in ana_report_run(). 0, a negative errno, or
 * the first negative on_row return. */
int ana_report_rows(struct ana_trace *s, const struct ana_report_opts *o,
		    int (*on_row)(void *ctx, const struct ana_report_row *r), void *ctx,
		    struct ana_report_totals *tot);

/* "comm", "sym", ... for an enum ana_key; NULL when out of range. */
const char *ana_report_key_name(int key);

/* The key columns of o (in o's order) and a row's cells under them: how
 * every table keyed like report shows its keys. o->nkeys must be set. */
void ana_report_key_cols(struct ana_table *t, const struct ana_report_opts *o);
void ana_report_key_cells(struct ana_table *t, const struct ana_report_opts *o,
			  const struct ana_report_row *r);

#endif
