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
 * A dataset (several traces) makes one export: the stacks of every trace
 * added are counted together, so a session's rotated files read as one
 * recording. With a host name per trace (several hosts), each stack
 * starts with its host: folded lines begin "host;comm;...", pprof samples
 * carry a "host" label beside "comm".
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
struct ana_strpool;
struct ana_export;

/*
 * How to use, over the traces of a dataset:
 *
 *   ana_export_new(&x, pprof, off_cpu, filter, &ds->pool);
 *   for each trace s: open it, ana_export_add(x, s, host or NULL), free it
 *   ana_export_write(x, out);
 *   ana_export_free(x);
 *
 * The stacks' names are copied into pool (borrowed: it must outlive x),
 * so a trace can be freed once added; the filter is borrowed too.
 * Memory is the distinct stacks, not the samples. Each returns 0 or a
 * negative errno (-EIO: out could not be written).
 */
int ana_export_new(struct ana_export **out, int pprof, int off_cpu,
		   const struct ana_filter *f, struct ana_strpool *pool);
int ana_export_add(struct ana_export *x, struct ana_trace *s, const char *host);
int ana_export_write(struct ana_export *x, FILE *out);
void ana_export_free(struct ana_export *x);   /* NULL is fine */

/* One trace, pooled in its own pool. */
int ana_export_folded(struct ana_trace *s, const struct ana_filter *f, int off_cpu,
		      FILE *out);
int ana_export_pprof(struct ana_trace *s, const struct ana_filter *f, int off_cpu,
		     FILE *out);

/* Gzip-compresses buf into out (zlib, gzip header). 0 or -EIO/-ENOMEM. */
int ana_gzip_write(const void *buf, size_t len, FILE *out);

#endif
