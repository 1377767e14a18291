/*
 * synth.h - tasks and mappings that existed before recording began.
 *
 * The kernel reports COMM/FORK/MMAP2 only for what happens while events are
 * enabled. Processes already running are described from /proc instead:
 * one TaskEvent EXISTING per thread (pid, tid, ppid, comm) and one Mmap
 * (synthesized = true) per executable mapping, so their samples can be
 * attributed. Call after the events are enabled, so nothing created in
 * between is missed (a task may then appear twice, which is harmless).
 *
 * Processes that vanish while being read are skipped; only writer errors
 * are returned.
 */
#ifndef REC_SYNTH_H
#define REC_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "format/writer.h"

struct rec_synth_stats {
	uint64_t processes, threads, mmaps;
};

/* All processes when npids == 0, else only those pids (and their threads).
 * proc_root is normally "/proc" (tests may point elsewhere). Packets go to
 * `stream` with time time_ns. Returns 0 or the writer's error. */
int rec_synth_tasks(struct prec_writer *w, uint32_t stream,
		    const char *proc_root, const int *pids, size_t npids,
		    uint64_t time_ns, struct rec_synth_stats *st);

#endif
