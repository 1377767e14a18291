/*
 * groupopen.h - perf_event_open(2) and the group ioctls, with errors that
 * name the event, the cause and the fix.
 *
 * A thin layer under counters.c (and anyone else opening perf events): the
 * syscall has no libc wrapper, the group ioctls need PERF_IOC_FLAG_GROUP on
 * the leader, and an errno alone ("No such file or directory" for a
 * hardware event in a VM) tells a user nothing. Nothing here prints.
 */
#ifndef REC_GROUPOPEN_H
#define REC_GROUPOPEN_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif

/* perf_event_open(attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC).
 * Returns the fd, or a negative errno. */
int rec_groupopen_event(struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd);

/* True for the errors by which the kernel says "this event does not exist
 * here" (ENOENT, EOPNOTSUPP, ENODEV, ENXIO): the event is unsupported on
 * this host, as opposed to refused (EINVAL, ENOSPC), forbidden (EACCES,
 * EPERM) or out of resources (EMFILE, ENOMEM). */
bool rec_groupopen_unsupported(int err);

/* Writes into buf why opening `name` (attr) on pid/cpu failed with err
 * (negative errno) and what to do about it, e.g.
 *   "cycles: not supported on this host: no hardware PMU (VM?)"
 *   "task-clock on cpu 3: permission denied: perf_event_paranoid is 2; ..."
 * Returns buf. */
const char *rec_groupopen_explain(const struct perf_event_attr *attr,
				  const char *name, pid_t pid, int cpu,
				  int err, char *buf, size_t len);

/* The kernel id of the event behind fd (PERF_EVENT_IOC_ID). 0 or -errno. */
int rec_groupopen_id(int fd, uint64_t *id);

/* Disable, reset or enable the whole group whose leader is leader_fd
 * (PERF_EVENT_IOC_{DISABLE,RESET,ENABLE} with PERF_IOC_FLAG_GROUP), so all
 * members count over one window. 0 or -errno. */
int rec_groupopen_disable(int leader_fd);
int rec_groupopen_reset(int leader_fd);
int rec_groupopen_enable(int leader_fd);

/* Whether attr opens on the calling thread (any CPU): the event is closed
 * again at once. For feature and permission probes. */
bool rec_groupopen_probe(struct perf_event_attr *attr);

/* Whether this kernel accepts PERF_FORMAT_LOST (Linux >= 6.0): opens a
 * disabled task-clock counter on the caller with it. */
bool rec_groupopen_have_lost(void);

#endif
