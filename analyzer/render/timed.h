/*
 * timed.h - the exports that keep time, by --format name.
 *
 *   perfetto    Perfetto TracePackets (perfetto.h)
 *   speedscope  speedscope's JSON file format (speedscope.h)
 *   otlp        an OTLP ExportProfilesServiceRequest (otlp.h)
 *
 * One table, so the command line's check, its binary-output rule and the
 * dispatch cannot disagree.
 */
#ifndef ANA_TIMED_H
#define ANA_TIMED_H

#include <stdio.h>

#include "analyzer/read/filter.h"

struct ana_trace;
struct prec_packet;

/* 1 when fmt names an export of this table. */
int ana_export_timed_known(const char *fmt);
/* 1 when its output is binary (not for a terminal). */
int ana_export_timed_binary(const char *fmt);
/* Runs it: 0 or a negative errno (-EINVAL for an unknown fmt). */
int ana_export_timed(struct ana_trace *s, const struct ana_filter *f, const char *fmt,
		     FILE *out);

#endif
