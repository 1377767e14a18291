/*
 * sched.h - on/off-CPU accounting from context-switch records.
 *
 * Switch records of all CPUs are consumed in global time order (ana_merge).
 * For a task T (tid; the idle tasks, tid 0, are left out):
 *   switch-out of T at t on CPU C: T's on-CPU interval [in, t] ends, its
 *     off-CPU gap starts; counted preempted when the record says the task
 *     was still runnable, voluntary otherwise.
 *   switch-in of T at t: T's off-CPU gap [out, t] ends (longest gap and
 *     the off-CPU histogram come from these gaps), a new on-CPU interval
 *     starts, switch-ins + 1.
 * Exiting tasks: CPU-wide records give a task's last switch-out pid/tid
 * -1; it is charged to the task last switched in on that CPU (if that task
 * has not switched out since). A task EXIT event ends the task's on-CPU
 * interval and counts as its last (voluntary) switch-out; a -1 switch-out
 * that follows adds the exit path's time, nothing else. Per-task
 * recordings carry no last switch-out, so without this an exited task
 * would be on a CPU until the end of the recording.
 * The analysis window is [first, last] switch record processed. A task
 * whose first record is a switch-out was running since the window start,
 * or since the previous switch record on that CPU if there is one (its
 * switch-in was not recorded; another task was on the CPU until then); a
 * task still on a CPU at the end runs until the window end. Off-CPU time
 * only counts gaps that end with a switch-in (a task that blocks until the
 * end or exits has no closed gap). A CPU's busy time is the on-CPU time of
 * the non-idle tasks that ran on it.
 *
 * Off-CPU packets (record --off-cpu: intervals and sums measured by BPF)
 * add the section "states": each task's blocked time by the state it
 * blocked in (sleeping, disk, runnable...), its blocks and its longest
 * interval. They need no switch records; sums carry no CPU, so a --cpu
 * filter keeps intervals only.
 */
#ifndef ANA_SCHED_H
#define ANA_SCHED_H

#include <stdint.h>

#include "analyzer/read/filter.h"
#include "analyzer/render/table.h"

struct ana_trace;

enum ana_sched_sort { ANA_SS_ONCPU, ANA_SS_OFFCPU, ANA_SS_SWITCHES,
		      ANA_SS_PREEMPT, ANA_SS_VOLUNTARY, ANA_SS_MAXGAP,
		      ANA_SS_TID, ANA_SS_COMM };

/* One on-CPU interval of a task, as sched charges it to a CPU. */
struct ana_sched_interval {
	uint32_t cpu, pid, tid;
	uint64_t start, end;   /* absolute ns, [start, end) */
};

struct ana_sched_opts {
	int sort;              /* enum ana_sched_sort */
	int hist;              /* add the off-CPU histogram section */
	size_t top;            /* 0 = all tasks */
	int jobs;
	const struct ana_filter *filter;
	/* Called for every on-CPU interval charged to a CPU (the "cpus"
	 * busy time is their sum; the --pid/--tid/--comm filters, which
	 * only pick table rows, are not applied). Intervals come in the
	 * order they close: per CPU in time order, then those still open
	 * at the window end. A negative return stops the pass and is
	 * returned. May be NULL. */
	int (*on_interval)(void *ctx, const struct ana_sched_interval *iv);
	void *ctx;
};

int ana_sched_parse_sort(struct ana_sched_opts *o, const char *arg,
			 char *err, size_t errlen);
/* Over several traces (a dataset), one at a time:
 *
 *   struct ana_sched *sc = ana_sched_new(&opts);   // NULL: ENOMEM
 *   for each trace: ana_sched_add(sc, s, host_start); ana_trace_free(s);
 *   ana_sched_render(sc, "what was read", doc);
 *   ana_sched_free(sc);
 *
 * Tasks, CPUs and states are per host (FileHeader.hostname): a tid means
 * nothing without its host, and a host column is shown when there are
 * several. host_start is the start of the trace's host in the dataset
 * ("Max off at s" counts from it). A file's on-CPU intervals close at its
 * end; rotated files join there without a gap (the next file's first
 * record of a running task is a switch-out, charged from that file's
 * start), so the sums are those of the recording; an off-CPU gap across a
 * file boundary is not closed. opts is copied; its filter must outlive
 * the report. file (may be NULL: the first trace's path) is the
 * summary's "file". */
struct ana_sched;
struct ana_sched *ana_sched_new(const struct ana_sched_opts *o);
int ana_sched_add(struct ana_sched *sc, struct ana_trace *s, uint64_t host_start);
int ana_sched_render(struct ana_sched *sc, const char *file, struct ana_doc *doc);
void ana_sched_free(struct ana_sched *sc);   /* NULL is fine */

/* One trace. Sections "summary", "tasks", "cpus", with hist "hist", with
 * off-CPU packets "states". */
int ana_sched_run(struct ana_trace *s, const struct ana_sched_opts *o,
		  struct ana_doc *doc);

#endif
