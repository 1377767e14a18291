/*
 * perfetto.h - the trace as a Perfetto trace (ui.perfetto.dev).
 *
 * A protobuf `perfetto.protos.Trace` (Perfetto's perfetto_trace.proto; the
 * copy the tests decode against is tests/data/perfetto/): a stream of
 * TracePackets, one writer sequence per trace, written as it is read:
 *
 *   ClockSnapshot     BOOTTIME and MONOTONIC = the trace start (our times
 *                     are CLOCK_MONOTONIC; Perfetto's default clock is
 *                     BOOTTIME, which differs only by time suspended), and
 *                     REALTIME = the wall clock then (FileHeader), so the
 *                     UI shows wall-clock times.
 *   TrackDescriptor   one per process (pid, name) and thread (pid, tid,
 *                     name: the last name the trace knows), when first met;
 *                     a "perfrec losses" track; one counter track per
 *                     (counter, CPU or process).
 *   FtraceEventBundle sched_switch events per CPU, rebuilt from the on-CPU
 *                     intervals `sched` charges (so each thread's on-CPU
 *                     time in the CPU lanes equals sched's); the gap
 *                     between two intervals is the idle task. The switch
 *                     records do not say in which state a task left: the
 *                     lanes show it as sleeping (S); the off-CPU slices
 *                     carry the measured state.
 *   PerfSample        one per sample (cpu, pid, tid, callstack_iid), the
 *                     callstacks, frames, function names and mappings in
 *                     InternedData the first time they are used: a
 *                     frame per (object, symbol) as the reports name them.
 *   TrackEvent        off-CPU intervals (record --off-cpu) as slices
 *                     "off-cpu <state>" on their thread's track; counter
 *                     snapshots (--counters) as the count per interval;
 *                     losses as instants on the losses track.
 *
 * Memory: the interning tables (distinct stacks and functions), the
 * threads and counters seen, and at most a bundle of switch events per
 * CPU, not the trace. Takes the report filters: --cpu and --time for the
 * CPU lanes (as sched), all of them for samples and off-CPU intervals.

 *
 * A dataset: each trace on a writer sequence of its own; a host's files
 * share its track uuids (one timeline per host). Several hosts (a host
 * name given to ana_perfetto_add): each host is a machine (TracePacket
 * machine_id, SystemInfo.machine_name), its processes are named
 * "comm @host", and all times are wall-clock ns (each file's clock
 * reference), so the hosts line up.
 *
 * How to use:
 *
 *   ana_perfetto_new(&x, filter, pool, out);   // borrows all three
 *   for each trace s: ana_perfetto_add(x, s, host or NULL)  // writes it
 *   ana_perfetto_finish(x);                    // flushes out
 *   ana_perfetto_free(x);
 *
 * Each returns 0 or a negative errno (-EIO: out could not be written).
 */
#ifndef ANA_PERFETTO_H
#define ANA_PERFETTO_H

#include <stdio.h>

#include "analyzer/read/filter.h"

struct ana_trace;
struct ana_strpool;
struct ana_perfetto;

int ana_perfetto_new(struct ana_perfetto **x, const struct ana_filter *f,
		     struct ana_strpool *pool, FILE *out);
int ana_perfetto_add(struct ana_perfetto *x, struct ana_trace *s, const char *host);
int ana_perfetto_finish(struct ana_perfetto *x);
void ana_perfetto_free(struct ana_perfetto *x);   /* NULL is fine */

#endif
