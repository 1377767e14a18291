/*
 * html.h - one self-contained HTML page of a trace (`perfrec-analyze html`).
 *
 * The page opens offline in any browser: our CSS and JavaScript
 * (analyzer/render/html/, embedded at build time) and the trace's aggregates are
 * all inline. It holds
 *   - a header: host, kernel, CPUs, time window, events, packet counts,
 *     losses and damage;
 *   - flame graphs: one weighted stack tree per sampling event (stacks
 *     "comm; outermost; ...; leaf", weight = period), caller and callee
 *     (inverted) trees, pruned by ana_stree_view();
 *   - a per-CPU timeline of on-CPU intervals from switch records,
 *     downsampled by ana_timeline;
 *   - under it, tracks of the busiest processes and their threads (on-CPU
 *     time, sample density, off-CPU intervals by state) and the losses,
 *     binned by ana_tracks;
 *   - the tables of report (top functions, self and children), sched (top
 *     tasks by on-CPU time, per-CPU busy) and counters, rendered from
 *     their documents, and info's in a details block; under a selection
 *     the page recomputes the top functions from the flame trees' per-bin
 *     data and the tasks' on-CPU time and switch-ins from the shown
 *     threads' per-bin runs (the "sched" data block).
 * Sizes are bounded whatever the trace length: flame trees by
 * max_nodes, the timeline by buckets x CPUs, the tracks by their bins x
 * the processes and threads shown, tables by top.
 *
 * Every trace string (comms, symbols, file and event names, host names)
 * is untrusted: it reaches the page only through ana_html_str() (HTML
 * text) or ana_json_str_html() (the data block), and the page's script
 * puts names in the document with textContent, never as markup.
 *
 * Passes over the file: the trace's pass 1, one over the Loss packets
 * when the trace has losses (the tracks' marks), then report's (samples:
 * the top-functions table and, through its on_sample hook, the flame
 * trees and the tracks' samples; with off-CPU data a second one, whose
 * intervals go to the tracks too), sched's (switches: its tables and,
 * through on_interval, the timeline and the tracks' runs) when the trace
 * has switch records, counters' when it has group snapshots. Over the
 * files of ana_html_run_files(): the Loss passes of all, then the others
 * file after file, into the same tables, trees and tracks.
 */
#ifndef ANA_HTML_H
#define ANA_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "analyzer/read/filter.h"

struct ana_trace;
struct ana_diff_part;

struct ana_html_opts {
	size_t sz;             /* sizeof(struct ana_html_opts) */
	const struct ana_filter *filter;   /* NULL = none */
	int jobs;              /* decode threads of the switch pass */
	double min_fraction;   /* flame nodes below this share of the weight
				* are pruned; 0 = ANA_HTML_MIN_FRACTION */
	size_t max_nodes;      /* per flame tree; 0 = ANA_HTML_MAX_NODES */
	size_t buckets;        /* timeline buckets per CPU; 0 = by CPU count */
	size_t top;            /* table rows; 0 = ANA_HTML_TOP */
};

/* 1/2000 keeps a node of 0.05%: about one pixel of a 2000-pixel-wide
 * graph, so nothing a person could see is pruned. */
#define ANA_HTML_MIN_FRACTION 0.0005
/* About 0.6 MB of page per tree (two trees per event) at most. */
#define ANA_HTML_MAX_NODES 16384
#define ANA_HTML_TOP 100

/* Writes the page to out. o may be NULL (defaults); an o whose sz is
 * smaller than the first member's end, or larger than this struct with
 * non-zero bytes past it, is refused with -EINVAL. 0, a negative errno,
 * or -EIO on a write error. */
int ana_html_run(struct ana_trace *s, const struct ana_html_opts *o, FILE *out);

/* The page of one host's files (rotated files), in time order, as one
 * timeline from the first file's start to the last one's end: each pass
 * reads the files in turn; the header sums their counts and the details
 * hold each file's info. The host, kernel and events named are the first
 * file's. Same returns as ana_html_run(); -EINVAL for n = 0. */
int ana_html_run_files(struct ana_trace *const *files, size_t n,
		       const struct ana_html_opts *o, FILE *out);

/* The page of several hosts: files holds each host's files in turn
 * (nfiles[h] of host h, in time order, as ana_html_run_files() takes
 * them). The page has a host selector; each host's header, tables,
 * details and data block are built as its own page's (one host's trees
 * in memory at a time) and the page's script shows the host the
 * address names (#host=NAME), else the first. One host is
 * ana_html_run_files()'s page. Same returns; -EINVAL for no host or a
 * host without files. */
int ana_html_run_hosts(struct ana_trace *const *files, const size_t *nfiles, size_t nhosts,
		       const struct ana_html_opts *o, FILE *out);

/* `html --diff`: the page of new_[0] (its filter; o->filter is not used)
 * with differential flame graphs: every side's stacks on one tree per
 * event, weights from the new side, each node also carrying the base
 * side's weight through it ("b" beside "w" in the data block, the base
 * root's weight as the flame's "base"), so the page colors each frame by
 * the change of its share (a profile only the base has gets no tree:
 * nothing of it would be drawn); and a table of the changes (diff -s sym,dso)
 * above the new side's own tables. Windows of the parts' filters are
 * set on their traces here. Same returns as ana_html_run(); -EINVAL for
 * an empty side. */
int ana_html_diff_run(const struct ana_diff_part *base, size_t nbase,
		      const struct ana_diff_part *new_, size_t nnew,
		      const struct ana_html_opts *o, FILE *out);

#endif
