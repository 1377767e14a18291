/*
 * export.h - stacks for flame-graph tools.
 *
 * folded: one line per distinct stack, "comm;outermost;...;leaf COUNT",
 *   sorted, COUNT = samples (flamegraph.pl, speedscope, inferno).
 * pprof: a gzip-compressed perftools.profiles.Profile (proto/profile.proto)
 *   with two sample values, [samples/count, <event>/<unit>] (the period),
 *   one Location and Function per distinct (object, symbol), a Mapping per
 *   object and the comm as a "comm" label.
 *
 * Both take the report filters; both use the trace's symbolizer.
 *
 * off_cpu: the stacks of OffCpu packets (record --off-cpu) instead of
 * samples, weighted by blocked time: folded COUNT is microseconds (the
 * sum of a stack's ns, rounded; stacks under half a microsecond are left
 * out), pprof values are [blocks/count, off-cpu/nanoseconds]. A block
 * without a recorded stack is "comm;[no stack]".
 */
#ifndef ANA_EXPORT_H
#define ANA_EXPORT_H

#include <stdio.h>

#include "analyzer/read/filter.h"

struct ana_trace;

int ana_export_folded(struct ana_trace *s, const struct ana_filter *f, int off_cpu,
		      FILE *out);
int ana_export_pprof(struct ana_trace *s, const struct ana_filter *f, int off_cpu,
		     FILE *out);

/* Gzip-compresses buf into out (zlib, gzip header). 0 or -EIO/-ENOMEM. */
int ana_gzip_write(const void *buf, size_t len, FILE *out);

#endif
