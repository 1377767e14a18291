/*
 * speedscope.h - the samples as a speedscope file (www.speedscope.app).
 *
 * speedscope's JSON file format (its file-format-schema.json, version
 * 0.6+): one "sampled" profile per thread, named "comm (pid P, tid T)"
 * (per thread and event, the event's name added, when the trace has
 * several sampling events: their weights do not add up),
 * its samples in time order (the time-ordered view is the thread's
 * timeline, the left-heavy and sandwich views its totals), each sample's
 * stack a list of indices, root first, into one shared frame table (a
 * frame per (object, symbol) as the reports name them: "name", and the
 * object as "file"). Weights are the samples' periods: nanoseconds for a
 * clock event (cpu-clock, task-clock), else counts (unit "none"). The
 * profile with the most samples opens first.
 *
 * Streaming: samples are read in global time order (ana_merge) and
 * spilled per thread into a temporary file in chunks of 256, then each
 * thread's chunks are read back in order when its profile is written.
 * Memory is the frame and stack tables and a chunk per thread, not the
 * trace. Strings are written by ana_json_str() (escaped). Takes the report
 * filters.
 */
#ifndef ANA_SPEEDSCOPE_H
#define ANA_SPEEDSCOPE_H

#include <stdio.h>

#include "analyzer/read/filter.h"

struct ana_trace;

/* Returns 0 or a negative errno (-EIO: out or the temporary file could
 * not be written). */
int ana_export_speedscope(struct ana_trace *s, const struct ana_filter *f, FILE *out);

#endif
