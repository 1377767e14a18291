/*
 * recording_int.h - the recording's state, shared by recording.c (life
 * cycle, targets, events, the drain/consume loop) and output.c (one
 * output: its first packets, its end, rotation to the next, write
 * errors). A chain: recording.c calls output.c, never the reverse. Not part of
 * the interface: see recording.h.
 */
#ifndef REC_RECORDING_INT_H
#define REC_RECORDING_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "format/writer.h"
#include "recorder/events/counters.h"
#include "recorder/events/cpumap.h"
#include "recorder/events/threadmap.h"
#include "recorder/recording/recording.h"
#include "recorder/recording/workload.h"
#include "recorder/ring/drain.h"
#include "recorder/symbols/symgather.h"

struct rec_recording {
	struct rec_recording_opts o;
	enum rec_recording_state state;
	const char *stop_reason;     /* static string */
	int err;                     /* the write error that failed it */

	/* targets */
	struct rec_cpumap cpus;
	struct rec_threadmap tids;   /* task targets, expanded */
	char target[256];
	struct rec_workload wl;
	bool have_wl, wl_started;

	/* events */
	struct rec_evspecs dummy;     /* only counters were asked for */
	struct rec_source *src;
	bool own_src;
	struct rec_counters *ctr;
	char notes[2][256];          /* Note packets every output repeats */

	/* output */
	struct prec_writer *w;
	char output_name[256];
	struct rec_emit e;
	bool emit_ok;
	struct rec_emit_stats base;  /* e.st when the output began */
	struct rec_emit_cpu *cpu_base;   /* e.cpu when the output began */
	struct rec_emit_cpu *cpu_out;    /* scratch: this output's counts */
	uint64_t out_start_ns;
	uint64_t done_written, done_raw; /* outputs already ended */
	uint32_t outputs;
	struct rec_symgather *syms;
	bool syms_write;             /* syms writes tables (not --no-symbols) */
	bool *ring_reported;

	/* running */
	struct rec_drain *drain;
	uint64_t start_ns;
	uint64_t next_ctr, next_syms, ctr_ival, syms_ival, next_tick;
	uint64_t event_lost;
};

/* output.c: recording.c calls into it, it never calls recording.c */

/* A write error: logged once; the recording can only be released from
 * now on. Returns e. */
int recording_fail_write(struct rec_recording *r, int e);
bool recording_task_target(const struct rec_recording *r);
int recording_open_writer(struct rec_recording *r, struct prec_sink *sink,
			  const char *name, struct prec_writer **out);
int recording_write_preamble(struct rec_recording *r, uint64_t start_ns);
int recording_write_tasks(struct rec_recording *r);
void recording_begin_output(struct rec_recording *r, uint64_t now);
int recording_end_output(struct rec_recording *r, uint64_t now,
			 const char *reason, bool final_counters);

#endif
