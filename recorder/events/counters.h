/*
 * counters.h - counting groups read periodically (--counters, perfrec stat).
 *
 * How to use (from `perfrec record` or `perfrec stat`):
 *
 *   c = rec_counters_new();
 *   rec_counters_add(c, "{task-clock,page-faults}");   // per --counters
 *   rec_counters_set_interval(c, 100 * 1000000ull);
 *   rec_counters_open(c, cpus, ncpus, pids, npids, enable_on_exec);
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

/* Errors of add and open are logged (recorder/log.h) and returned as a
 * negative errno. */
int rec_counters_add(struct rec_counters *c, const char *spec);
void rec_counters_set_interval(struct rec_counters *c, uint64_t ns);
uint64_t rec_counters_interval_ns(const struct rec_counters *c);
size_t rec_counters_ngroups(const struct rec_counters *c);
size_t rec_counters_nevents(const struct rec_counters *c);

/* cpus (pid -1 each) when npids == 0, else pids (cpu -1, inherit). */
int rec_counters_open(struct rec_counters *c, const int *cpus, size_t ncpus,
		      const int *pids, size_t npids, bool enable_on_exec);
int rec_counters_describe(struct rec_counters *c, struct prec_writer *w,
			  uint32_t first_event, uint32_t first_group);
int rec_counters_enable(struct rec_counters *c);
int rec_counters_snapshot(struct rec_counters *c, struct prec_writer *w,
			  uint64_t now_ns, bool final);

/*
 * Additions (counters engineer). Semantics of the calls above:
 *
 * rec_counters_add() parses spec with rec_evspecs_parse(). An event outside
 * braces is a group of its own. ":S" (leader sampling) is refused here: it
 * belongs to -e. Events are counting: sampling fields are cleared.
 *
 * rec_counters_open(): per target and group, members are opened in order;
 * the first member that opens is the group leader (disabled=1, and
 * enable_on_exec when asked), the rest go on its fd. A member the host
 * lacks (ENOENT/EOPNOTSUPP/ENODEV: e.g. hardware events in a VM) is left
 * out and marked: rec_counters_event_error() and EventDesc.error say why,
 * EventDesc.unsupported_on_cpus lists where. A group none of whose members
 * opens fails the call (-EOPNOTSUPP, message naming the events), unless
 * rec_counters_set_allow_unsupported(c, true) was called (perfrec stat
 * shows such events as <not supported>); even then, when no event at all
 * opens, the call fails. Any other refusal (EINVAL/ENOSPC: the kernel
 * cannot put the event in the group; EACCES; EMFILE; ESRCH) fails the
 * call with the kernel's reason and the fix: perfrec never guesses how
 * many events fit a PMU. Targets are cpus (pid -1) or pids (cpu -1,
 * inherit=1). Returns 0 or a negative errno; the message is logged.
 *
 * rec_counters_enable(): per group, DISABLE and RESET with
 * PERF_IOC_FLAG_GROUP, then ENABLE the members and the leader last, so
 * all members count over one window (see start_group() in counters.c for
 * why the group-flag ENABLE is not used). Not needed after
 * enable_on_exec: the kernel starts the groups at exec.
 *
 * rec_counters_describe(): one EventDesc per event (index first_event + i,
 * ids/cpus/pids parallel, one per opened fd; group = first_group + g,
 * member = position in the group as written) and one GroupDesc per group
 * (counting = true, interval_ns). Call after open, before snapshots.
 *
 * rec_counters_snapshot(): reads every group leader on every target and
 * appends one GroupSnapshot (stream 0, time now_ns) per group and target
 * with the kernel's ids/values/enabled/running(/lost) as read. w may be
 * NULL (perfrec stat without -o): values are only kept for the accessors
 * below. Returns 0, or a negative errno (-EPROTO when the kernel returned
 * an id this group did not open).
 */
void rec_counters_set_allow_unsupported(struct rec_counters *c, bool allow);

/* The read_format the groups were opened with (after open). */
uint64_t rec_counters_read_format(const struct rec_counters *c);
size_t rec_counters_ntargets(const struct rec_counters *c);

/* Events in the order written, i < rec_counters_nevents(). The strings are
 * owned by c and live until rec_counters_free(). */
const char *rec_counters_event_name(const struct rec_counters *c, size_t i);
/* NULL when the event opened on every target, else the reason. */
const char *rec_counters_event_error(const struct rec_counters *c, size_t i);
/* Opened on at least one target. */
bool rec_counters_event_opened(const struct rec_counters *c, size_t i);
/* perf_event_attr type and config, for display units. */
void rec_counters_event_kind(const struct rec_counters *c, size_t i,
			     uint32_t *type, uint64_t *config);
/* Group index of event i (into 0 .. rec_counters_ngroups()-1). */
size_t rec_counters_event_group(const struct rec_counters *c, size_t i);
const char *rec_counters_group_name(const struct rec_counters *c, size_t g);

/* The event's fd / kernel id on target t (-1 / 0 when not open there). */
int rec_counters_event_fd(const struct rec_counters *c, size_t i, size_t t);
uint64_t rec_counters_event_id(const struct rec_counters *c, size_t i,
			       size_t t);

/* Event i as of the last snapshot: raw value, time_enabled, time_running
 * and lost, each summed over the targets where the event is open (the
 * value found by kernel id in its group's read). */
struct rec_counter_value {
	uint64_t value;
	uint64_t enabled;
	uint64_t running;
	uint64_t lost;
};
int rec_counters_event_value(const struct rec_counters *c, size_t i,
			     struct rec_counter_value *v);

/* True when, in the last snapshot, group g was enabled but the kernel
 * never scheduled it (time_running == 0 on every target where it is open
 * while time_enabled > 0): the PMU could not fit the group. The caller
 * reports it (perfrec stat prints a warning; values show "not counted"). */
bool rec_counters_group_never_ran(const struct rec_counters *c, size_t g);

#endif
