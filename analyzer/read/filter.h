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
	char **hosts;
	size_t nhosts;
	int has_wall, has_since, has_until;
	uint64_t since, until;  /* realtime ns */
	int has_time;
	double t0, t1;          /* as given, seconds */
	int t0_abs, t1_abs, t0_open, t1_open;
	uint64_t tmin, tmax;    /* resolved, absolute ns (inclusive) */
	int active;             /* any filter set */
};

void ana_filter_init(struct ana_filter *f);
void ana_filter_release(struct ana_filter *f);

/* which: "cpu", "pid", "tid", "comm", "event", "time", "host", "since",
 * "until". */
int ana_filter_parse(struct ana_filter *f, const char *which, const char *arg,
		     char *err, size_t errlen);
/* Resolves relative times against s->start; checks event names exist
 * (-EINVAL with a message listing the known events otherwise). */
int ana_filter_resolve(struct ana_filter *f, const struct ana_trace *s,
		       char *err, size_t errlen);
/* The time part of it for a file of a dataset: --time against start (the
 * dataset's), --since/--until through the file's clock reference
 * (realtime_ns read at monotonic_ns; 0 = none: the window is empty). */
int ana_filter_resolve_clock(struct ana_filter *f, uint64_t start, uint64_t realtime_ns,
			     uint64_t monotonic_ns, char *err, size_t errlen);
/* A window of any kind (--time, --since, --until) is set. */
#define ana_filter_windowed(f) ((f)->has_time || (f)->has_wall)
int ana_filter_host(const struct ana_filter *f, const char *host);

/* Wall-clock time (above) as realtime ns; relative ones from now. 0 or
 * -EINVAL. */
int ana_parse_wall(const char *arg, uint64_t now, uint64_t *out);
/* CLOCK_REALTIME in ns. */
uint64_t ana_wall_now(void);

int ana_filter_cpu(const struct ana_filter *f, uint32_t cpu);
int ana_filter_pid(const struct ana_filter *f, uint32_t pid);
int ana_filter_tid(const struct ana_filter *f, uint32_t tid);
int ana_filter_comm(const struct ana_filter *f, const char *comm);
int ana_filter_event(const struct ana_filter *f, const char *name);

struct ana_trace;
struct prec_packet;
/* Whether the Sample packet p of s passes every filter of f (NULL: all
 * do): 1 or 0, or -ENOMEM. The task's name is looked up only when a
 * --comm filter needs it; *comm (may be NULL) gets it then, else NULL. */
int ana_filter_sample(const struct ana_filter *f, struct ana_trace *s,
		      const struct prec_packet *p, const char **comm);
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
