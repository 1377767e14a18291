/*
 * counters.h - counting groups read periodically (--counters, perfrec stat).
 *
 * How to use (from `perfrec record` or `perfrec stat`):
 *
 *   c = rec_counters_new();
 *   rec_counters_add(c, "{task-clock,page-faults}", err, sizeof(err));  // per --counters
 *   rec_counters_set_interval(c, 100 * 1000000ull);
 *   rec_counters_open(c, cpus, ncpus, pids, npids, enable_on_exec, err, len);
 *   rec_counters_describe(c, w, first_event_index, first_group_index);
 *   rec_counters_enable(c);                  // unless enable_on_exec
 *   loop: every rec_counters_interval_ns(c):
 *       rec_counters_snapshot(c, w, now, false);
 *   rec_counters_snapshot(c, w, now, true);  // final read
 *   rec_counters_free(c);
 *
 * Each group is opened leader first, members on the leader's fd, with
 * read_format GROUP|ID|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING (+LOST when
 * the kernel takes it); values are mapped to members by kernel id.
 * Snapshots go to stream 0 of the writer as GroupSnapshot packets with raw
 * values; scaling is the reader's job (format/scale.h).
 */
#ifndef REC_COUNTERS_H
#define REC_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/writer.h"

struct rec_counters;

struct rec_counters *rec_counters_new(void);
void rec_counters_free(struct rec_counters *c);   /* NULL is fine; closes fds */

int rec_counters_add(struct rec_counters *c, const char *spec,
		     char *err, size_t errlen);
void rec_counters_set_interval(struct rec_counters *c, uint64_t ns);
uint64_t rec_counters_interval_ns(const struct rec_counters *c);
size_t rec_counters_ngroups(const struct rec_counters *c);
size_t rec_counters_nevents(const struct rec_counters *c);

/* cpus (pid -1 each) when npids == 0, else pids (cpu -1, inherit). */
int rec_counters_open(struct rec_counters *c, const int *cpus, size_t ncpus,
		      const int *pids, size_t npids, bool enable_on_exec,
		      char *err, size_t errlen);
int rec_counters_describe(struct rec_counters *c, struct prec_writer *w,
			  uint32_t first_event, uint32_t first_group);
int rec_counters_enable(struct rec_counters *c);
int rec_counters_snapshot(struct rec_counters *c, struct prec_writer *w,
			  uint64_t now_ns, bool final);

#endif
