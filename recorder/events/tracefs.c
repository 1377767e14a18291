/*
 * tracefs.c - find (or mount) tracefs; declared in evparse.h.
 *
 * Order: an already mounted /sys/kernel/tracing, then the debugfs path
 * /sys/kernel/debug/tracing, then we try to mount tracefs on
 * /sys/kernel/tracing ourselves (root only). The found path is cached: it
 * does not change while we run.
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

static bool has_events(const char *dir)
{
	char p[128];
	struct stat st;

	snprintf(p, sizeof(p), "%s/events", dir);
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int rec_tracefs_path(char *buf, size_t len, char *why, size_t whylen)
{
	static const char *const dirs[] = { "/sys/kernel/tracing",
					    "/sys/kernel/debug/tracing" };
	int merr;

	if (!cached[0]) {
		for (size_t i = 0; i < 2 && !cached[0]; i++)
			if (has_events(dirs[i]))
				snprintf(cached, sizeof(cached), "%s", dirs[i]);
	}
	if (!cached[0]) {
		if (mount("tracefs", dirs[0], "tracefs", 0, NULL) == 0 &&
		    has_events(dirs[0])) {
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
