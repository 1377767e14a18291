/*
 * hostinfo.h - the FileHeader packet: host, clocks, CPUs.
 *
 * rec_hostinfo_init() fills hdr from uname, /proc and sysfs; the caller
 * then sets the recording fields (cmdline, target, workload, start_time)
 * with pointers it keeps alive until the header is written.
 * Ownership: every string and array hdr points to that init allocated is
 * freed by rec_hostinfo_release().
 */
#ifndef REC_HOSTINFO_H
#define REC_HOSTINFO_H

#include <stdint.h>
#include <sys/utsname.h>

#include "perfrec.pb-c.h"

struct rec_hostinfo {
	Perfrec__FileHeader hdr;
	struct utsname uts;
	char hostname[256];
	char cpu_model[256];
	char version[32];
	Perfrec__CpuInfo *cpus;
	Perfrec__CpuInfo **cpu_ptrs;
};

int rec_hostinfo_init(struct rec_hostinfo *h, const char *version);
void rec_hostinfo_release(struct rec_hostinfo *h);

/* An int from a one-line file such as /proc/sys/kernel/perf_event_paranoid,
 * or def when it cannot be read. */
int rec_read_int_file(const char *path, int def);

#endif
