/*
 * evparse.h - event strings to perf_event_attr.
 *
 * One string names the type and the config together, so a type can never be
 * paired with the wrong config:
 *
 *   cpu-clock, page-faults, cycles ...      software / hardware by name
 *   L1-dcache-load-misses ...                hw-cache
 *   r1a8                                     raw (PERF_TYPE_RAW)
 *   cpu/event=0x3c,umask=0x1/, software/config=3/   any PMU in
 *                                            /sys/bus/event_source/devices
 *   sched:sched_switch                       tracepoint (tracefs found or
 *                                            mounted; sample RAW and kernel
 *                                            samples forced on)
 *   mem:0xADDR[/len][:rwx]                   breakpoint
 *   name:u  name:k  name:S ...               modifiers
 *   {a,b,c}  {a,b}:S                         groups (leader first)
 *
 * A list is comma separated at the top level: "cpu-clock,{a,b}:S".
 *
 * Words as libperf's: the parsed strings are the event specs (rec_evspecs,
 * each a rec_event); opened, each becomes an evsel of the evlist
 * (evlist.h).
 *
 * Ownership: rec_evspecs owns its events and their strings;
 * rec_evspecs_release() frees them. Parsing never prints: an error is
 * logged (recorder/log.h) with the bad part of the string quoted.
 */
#ifndef REC_EVPARSE_H
#define REC_EVPARSE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rec_event {
	char *name;                   /* this event as the user wrote it */
	struct perf_event_attr attr;  /* type/config/bp/exclude_* set; sampling
				       * and read_format fields left to the caller */
	char *pmu;                    /* PMU directory name, or NULL */
	bool tracepoint;
	uint64_t tp_id;
	char *tp_format;              /* tracefs format text, or NULL */
	int group;                    /* index of its group, -1 = none */
	int member;                   /* position in the group, 0 = leader */
	bool leader_sample;           /* group written with :S */
};

struct rec_group {
	char *name;        /* "{a,b}" as written, modifiers included */
	size_t first;      /* index of the leader in rec_evspecs.ev */
	size_t n;          /* members, leader included */
	bool leader_sample;
};

struct rec_evspecs {
	struct rec_event *ev;
	size_t n;
	struct rec_group *groups;
	size_t ngroups;
};

#define REC_EVSPECS_INIT { NULL, 0, NULL, 0 }

/* Appends the events of str to l (call repeatedly for several -e).
 * Returns 0, or a negative errno after logging a message such as
 *   "unknown event 'cpu-clok' (at 'cpu-clok,...'): see 'perfrec list'".
 * On failure l is left as it was. */
int rec_evspecs_parse(struct rec_evspecs *l, const char *str);
void rec_evspecs_release(struct rec_evspecs *l);


#endif
