/*
 * tracefs.c - find (or mount) tracefs; declared in evparse.h.
 *
 * Order: an already mounted /sys/kernel/tracing, then the debugfs path
 * /sys/kernel/debug/tracing, then we try to mount tracefs on
 * /sys/kernel/tracing ourselves (root only). The found path is cached: it
 * does not change while we run. A tracefs this user may not search (it
 * is mounted 0700 by default) is not "unmounted": the message says so and
 * how to open it, and no mount is tried.
 */
#include "recorder/events/tracefs.h"

#include <stdbool.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static char cached[64];

/* 0 when dir/events is a directory we can reach, else -errno (-EACCES:
 * dir is there but this user may not search it). */
static int has_events(const char *dir)
{
	char p[128];
	struct stat st;

	snprintf(p, sizeof(p), "%s/events", dir);
	if (stat(p, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int rec_tracefs_denied(const char *dir, char *why, size_t whylen)
{
	struct stat st;

	if (!why || !whylen)
		return -EACCES;
	if (stat(dir, &st) < 0)
		st.st_mode = 0;
	snprintf(why, whylen, "tracefs on %s (mode %04o) is not readable by this "
		 "user: as root, 'mount -o remount,mode=755 %s' opens it (perf's "
		 "advice), or run perfrec as root or with CAP_DAC_READ_SEARCH (and "
		 "CAP_PERFMON)", dir, (unsigned)(st.st_mode & 07777), dir);
	return -EACCES;
}

int rec_tracefs_path(char *buf, size_t len, char *why, size_t whylen)
{
	static const char *const dirs[] = { "/sys/kernel/tracing",
					    "/sys/kernel/debug/tracing" };
	const char *denied = NULL;
	int merr;

	if (!cached[0]) {
		for (size_t i = 0; i < 2 && !cached[0]; i++) {
			int r = has_events(dirs[i]);

			if (!r)
				snprintf(cached, sizeof(cached), "%s", dirs[i]);
			else if (r == -EACCES && !denied)
				denied = dirs[i];
		}
	}
	if (!cached[0] && denied)
		return rec_tracefs_denied(denied, why, whylen);
	if (!cached[0]) {
		if (mount("tracefs", dirs[0], "tracefs", 0, NULL) == 0 &&
		    !has_events(dirs[0])) {
			snprintf(cached, sizeof(cached), "%s", dirs[0]);
		} else {
			merr = errno ? errno : ENOENT;
			if (why && whylen)
				snprintf(why, whylen,
					 "tracefs is not mounted and mounting it on %s failed (%s): "
					 "run 'mount -t tracefs nodev %s' as root, or check that the "
					 "kernel has CONFIG_TRACING",
					 dirs[0], strerror(merr), dirs[0]);
			return -merr;
		}
	}
	if (strlen(cached) + 1 > len) {
		if (why && whylen)
			snprintf(why, whylen, "tracefs path buffer too small");
		return -ENAMETOOLONG;
	}
	memcpy(buf, cached, strlen(cached) + 1);
	return 0;
}
