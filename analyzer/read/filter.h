/*
 * filter.h - sample/record filters shared by report, sched, dump, export.
 *
 * Parsed from the command line (untrusted): every parse function returns
 * 0 or -EINVAL and writes a message naming the bad part into err.
 *
 *   --cpu 0,2-3   --pid 10,11   --tid 12   --comm bash,sshd
 *   --event cpu-clock,sched:sched_switch
 *   --time START,END   seconds; either side may be empty (open). A value
 *       is relative to the trace start unless it is written with a
 *       leading '@' (absolute CLOCK_MONOTONIC seconds, as `dump` prints).
 *
 * Call ana_filter_resolve() once the trace is open (turns relative
 * times into absolute ns) before ana_filter_*() matching.
 */
#ifndef ANA_FILTER_H
#define ANA_FILTER_H

#include <stddef.h>
#include <stdint.h>

struct ana_trace;

struct ana_range {
	uint64_t lo, hi;   /* inclusive */
};

struct ana_filter {
	struct ana_range *cpus, *pids, *tids;
	size_t ncpus, npids, ntids;
	char **comms;
	size_t ncomms;
	char **events;
	size_t nevents;
	int has_time;
	double t0, t1;          /* as given, seconds */
	int t0_abs, t1_abs, t0_open, t1_open;
	uint64_t tmin, tmax;    /* resolved, absolute ns (inclusive) */
	int active;             /* any filter set */
};

void ana_filter_init(struct ana_filter *f);
void ana_filter_release(struct ana_filter *f);

/* which: "cpu", "pid", "tid", "comm", "event", "time". */
int ana_filter_parse(struct ana_filter *f, const char *which, const char *arg,
		     char *err, size_t errlen);
/* Resolves relative times against s->start; checks event names exist
 * (-EINVAL with a message listing the known events otherwise). */
int ana_filter_resolve(struct ana_filter *f, const struct ana_trace *s,
		       char *err, size_t errlen);

int ana_filter_cpu(const struct ana_filter *f, uint32_t cpu);
int ana_filter_pid(const struct ana_filter *f, uint32_t pid);
int ana_filter_tid(const struct ana_filter *f, uint32_t tid);
int ana_filter_comm(const struct ana_filter *f, const char *comm);
int ana_filter_event(const struct ana_filter *f, const char *name);
int ana_filter_time(const struct ana_filter *f, uint64_t t);
/* An off-CPU packet (OffCpu fields) by --cpu, --pid, --tid and --time: a
 * sum (count >= 1) has no CPU, so a --cpu filter keeps intervals only.
 * --comm and --event are the caller's. */
int ana_filter_offcpu(const struct ana_filter *f, uint64_t count, uint32_t cpu,
		      uint32_t pid, uint32_t tid, uint64_t t);

/* Parses "a,b-c" lists of unsigned numbers (also used for --cpu style
 * options elsewhere). */
int ana_parse_ranges(const char *arg, struct ana_range **out, size_t *n);

#endif
