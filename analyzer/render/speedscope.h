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
 * spilled per thread into a temporary file in chunks of up to 256, then
 * each thread's chunks are read back in order when its profile is
 * written. Memory is the frame and stack tables, about 100 bytes per
 * thread and at most 128 KiB of samples not yet spilled (speedscope.c), not
 * the trace. Strings are written by ana_json_str() (escaped). Takes the
 * report filters.
 *
 * A dataset: its traces are read in turn into one file (a host's files
 * are in time order, so each thread's samples stay so); with several
 * hosts a profile is per host and thread, named "comm (host H, pid P,
 * tid T)".
 *
 * How to use:
 *
 *   ana_speedscope_new(&x, filter, pool, out);   // borrows all three
 *   for each trace s: ana_speedscope_add(x, s, host or NULL)
 *   ana_speedscope_finish(x);                    // writes the file
 *   ana_speedscope_free(x);
 *
 * Each returns 0 or a negative errno (-EIO: out or the temporary file
 * could not be written).
 */
#ifndef ANA_SPEEDSCOPE_H
#define ANA_SPEEDSCOPE_H

#include <stdio.h>

#include "analyzer/read/filter.h"

struct ana_trace;
struct ana_strpool;
struct ana_speedscope;

int ana_speedscope_new(struct ana_speedscope **x, const struct ana_filter *f,
		       struct ana_strpool *pool, FILE *out);
int ana_speedscope_add(struct ana_speedscope *x, struct ana_trace *s, const char *host);
int ana_speedscope_finish(struct ana_speedscope *x);
void ana_speedscope_free(struct ana_speedscope *x);   /* NULL is fine */

#endif
