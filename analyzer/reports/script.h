/*
 * script.h - every sample with its symbolized stack, in `perf script`'s
 * layout (`perfrec-analyze script`, `perfrec script`), so the tools
 * written for perf script's output read it: FlameGraph's
 * stackcollapse-perf.pl, speedscope, Firefox Profiler's importer.
 *
 * One sample is a header line, its frames leaf first, and an empty line:
 *
 *   comm  pid/tid  [cpu] sec.usec:     period event: 
 *   \t     ip sym+0xoff (dso)
 *
 * (the header ends with ": " as perf's does; dso is the object's file
 * name; a frame without a symbol is "[unknown] (dso)"). Samples come in
 * the report pass's order: file order, which is time order within each
 * CPU's frames. The report's filters apply. A dataset is written file by
 * file (each host's files in time order, one host after the other).
 */
#ifndef ANA_SCRIPT_H
#define ANA_SCRIPT_H

#include <stdio.h>

#include "analyzer/read/filter.h"

struct ana_trace;

struct ana_script_opts {
	const struct ana_filter *filter;   /* NULL = none */
	/* a dataset of several hosts: the trace's host, shown after the comm
	 * ("comm @host": perf script's tools take the comm up to the pid) */
	const char *host;
};

/* Writes the samples to out. 0, -EIO on a write error, or a negative
 * errno from the pass. */
int ana_script_run(struct ana_trace *s, const struct ana_script_opts *o, FILE *out);

#endif
