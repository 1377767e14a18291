/*
 * timed.h - the exports that keep time, by --format name.
 *
 *   perfetto    Perfetto TracePackets (perfetto.h)
 *   speedscope  speedscope's JSON file format (speedscope.h)
 *   otlp        an OTLP ExportProfilesServiceRequest (otlp.h)
 *
 * One table, so the command line's check, its binary-output rule and the
 * dispatch cannot disagree.
 *
 * How to use, over the traces of a dataset (one file: ana_export_timed):
 *
 *   ret = ana_timed_new(&x, fmt, filter, pool, out);  // borrows all
 *   for each trace s: ana_timed_add(x, s, host);      // NULL: one host
 *   ret = ana_timed_finish(x);                        // writes the rest
 *   ana_timed_free(x);
 *
 * Every int function returns 0 or a negative errno (-EINVAL: an unknown
 * fmt; -EIO: out could not be written).
 */
#ifndef ANA_TIMED_H
#define ANA_TIMED_H

#include <stdio.h>

#include "analyzer/read/filter.h"

struct ana_trace;
struct ana_strpool;
struct ana_timed;

/* 1 when fmt names an export of this table. */
int ana_export_timed_known(const char *fmt);
/* 1 when its output is binary (not for a terminal). */
int ana_export_timed_binary(const char *fmt);

int ana_timed_new(struct ana_timed **x, const char *fmt, const struct ana_filter *f,
		  struct ana_strpool *pool, FILE *out);
int ana_timed_add(struct ana_timed *x, struct ana_trace *s, const char *host);
int ana_timed_finish(struct ana_timed *x);
void ana_timed_free(struct ana_timed *x);   /* NULL is fine */

/* One trace: new, add, finish and free, pooled in the trace. */
int ana_export_timed(struct ana_trace *s, const struct ana_filter *f, const char *fmt,
		     FILE *out);

#endif
