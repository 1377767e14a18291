/*
 * threadmap.h - the tasks a recording or a count targets: pid and tid
 * lists as given, and every thread of the given processes.
 *
 * `perfrec record -p` and `perfrec stat -p` both open their events per
 * thread, so both expand a process into its threads here (one place, one
 * behaviour). Lists use the CPU-list grammar (events/cpumap.h): "12,40-43".
 *
 * Ownership: a rec_threadmap owns its array; rec_threadmap_release() frees
 * it.
 */
#ifndef REC_THREADMAP_H
#define REC_THREADMAP_H

#include <stdbool.h>
#include <stddef.h>

struct rec_threadmap {
	int *tid;     /* sorted, unique */
	size_t n;
};

#define REC_THREADMAP_INIT { NULL, 0 }

/* Largest pid Linux can hand out (PID_MAX_LIMIT on 64-bit). */
#define REC_PID_MAX (4 * 1024 * 1024)

/* A pid or tid list: "123,456-460", ids 1..REC_PID_MAX. Returns as
 * rec_idlist_parse() (0 is refused with -EINVAL). */
int rec_threadmap_parse(struct rec_threadmap *m, const char *s);

/* The threads to open for `ids`: with `processes`, every thread of each
 * process (PROC/PID/task; a process whose task list cannot be read counts
 * as its own thread), else the ids themselves. proc_root NULL = "/proc".
 * Returns 0, or -ESRCH after logging "no such process: N" for an id that
 * does not exist, or -ENOMEM. */
int rec_threadmap_expand(struct rec_threadmap *out, const int *ids, size_t n,
			 bool processes, const char *proc_root);

/* Whether any thread of m still exists. */
bool rec_threadmap_alive(const struct rec_threadmap *m);

void rec_threadmap_release(struct rec_threadmap *m);

#endif
