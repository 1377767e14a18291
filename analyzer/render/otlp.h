/*
 * otlp.h - the samples as OpenTelemetry profiles (OTLP, v1development).
 *
 * An ExportProfilesServiceRequest (opentelemetry-proto's
 * collector/profiles/v1development/profiles_service.proto; the copy the
 * tests decode against is tests/data/otlp/), the body an OTLP/HTTP
 * collector takes:
 *
 *   curl --data-binary @t.otlp -H 'Content-Type: application/x-protobuf' \
 *        http://collector:4318/v1development/profiles
 *
 * One ResourceProfiles for the host (host.name, host.arch, os.type,
 * os.version), one ScopeProfiles ("perfrec" and the recorder's version),
 * one Profile per sampling event: sample_type (event, "nanoseconds" for a
 * clock event, else "count"), the wall-clock start and duration. Each
 * sample is a Sample of its own: its stack, values [period],
 * timestamps_unix_nano [its time on the wall clock: the trace's
 * CLOCK_MONOTONIC time moved by the header's pair of readings], attributes
 * process.pid, process.executable.name, thread.id, thread.name (the
 * spec's "SHOULD combine" by identity is left to the consumer: combining
 * here would hold every sample). The ProfilesDictionary holds the tables,
 * each with its zero entry first: strings, mappings (one per object),
 * locations and functions (one per (object, symbol) as the reports name
 * it), stacks (leaf first) and attributes.
 *
 * Streaming: samples are encoded as they are read into a temporary file
 * per event, whose sizes give the enclosing messages' lengths; memory is
 * the dictionary, not the trace. Takes the report filters.
 *
 * A dataset: one ResourceProfiles per host (its files' samples together,
 * a Profile per event name, the time span of its files), one dictionary
 * for all.
 *
 * How to use:
 *
 *   ana_otlp_new(&x, filter, pool, out);   // borrows all three
 *   for each trace s, host by host: ana_otlp_add(x, s, host or NULL)
 *   ana_otlp_finish(x);                    // the last host, the dictionary
 *   ana_otlp_free(x);
 *
 * A host's ResourceProfiles is written when the next host's first trace
 * is added. Each returns 0 or a negative errno (-EIO: out or a temporary
 * file could not be written).
 */
#ifndef ANA_OTLP_H
#define ANA_OTLP_H

#include <stdio.h>

#include "analyzer/read/filter.h"

struct ana_trace;
struct ana_strpool;
struct ana_otlp;

int ana_otlp_new(struct ana_otlp **x, const struct ana_filter *f, struct ana_strpool *pool,
		 FILE *out);
int ana_otlp_add(struct ana_otlp *x, struct ana_trace *s, const char *host);
int ana_otlp_finish(struct ana_otlp *x);
void ana_otlp_free(struct ana_otlp *x);   /* NULL is fine */

#endif
