/*
 * perfetto.h - the trace as a Perfetto trace (ui.perfetto.dev).
 *
 * A protobuf `perfetto.protos.Trace` (Perfetto's perfetto_trace.proto; the
 * copy the tests decode against is tests/data/perfetto/): a stream of
 * TracePackets, one writer sequence, written as the trace is read:
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
 */
#ifndef ANA_PERFETTO_H
#define ANA_PERFETTO_H

#include <stdio.h>

#include "analyzer/read/filter.h"

struct ana_trace;

/* Returns 0 or a negative errno (-EIO: out could not be written). */
int ana_export_perfetto(struct ana_trace *s, const struct ana_filter *f, FILE *out);

#endif
