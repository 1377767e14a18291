/*
 * groupopen.c - perf_event_open and group ioctls; see groupopen.h.
 */
#include "recorder/events/groupopen.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int rec_groupopen_event(struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
			  PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

bool rec_groupopen_unsupported(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV ||
	       err == -ENXIO;
}

static int read_int_file(const char *path, int *out)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%d", out) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/* A hardware-ish event: one that needs a PMU a VM usually lacks. */
static bool needs_hw_pmu(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_HARDWARE || a->type == PERF_TYPE_HW_CACHE ||
	       a->type == PERF_TYPE_RAW;
}

const char *rec_groupopen_explain(const struct perf_event_attr *attr,
				  const char *name, pid_t pid, int cpu,
				  int err, char *buf, size_t len)
{
	char where[64] = "";
	int paranoid = 0;

	if (cpu >= 0 && pid >= 0)
		snprintf(where, sizeof(where), " (pid %d, cpu %d)", (int)pid, cpu);
	else if (cpu >= 0)
		snprintf(where, sizeof(where), " (cpu %d)", cpu);
	else if (pid > 0)
		snprintf(where, sizeof(where), " (pid %d)", (int)pid);

	if (rec_groupopen_unsupported(err)) {
		if (needs_hw_pmu(attr))
			snprintf(buf, len, "%s: not supported on this host: no "
				 "hardware PMU (VM?)", name);
		else
			snprintf(buf, len, "%s: not supported on this host: "
				 "the kernel has no such event (%s)", name,
				 strerror(-err));
		return buf;
	}
	switch (-err) {
	case EACCES:
	case EPERM:
		if (read_int_file("/proc/sys/kernel/perf_event_paranoid",
				  &paranoid) < 0)
			paranoid = -99;
		snprintf(buf, len, "%s%s: permission denied: "
			 "perf_event_paranoid is %d; run as root, grant "
			 "CAP_PERFMON, or lower /proc/sys/kernel/"
			 "perf_event_paranoid (-1 for system-wide counting)",
			 name, where, paranoid);
		break;
	case EMFILE:
	case ENFILE:
		snprintf(buf, len, "%s%s: too many open files: raise the "
			 "open-file limit (ulimit -n)", name, where);
		break;
	case ESRCH:
		snprintf(buf, len, "%s%s: no such process", name, where);
		break;
	case ENOSPC:
		snprintf(buf, len, "%s%s: the kernel refused the group: no "
			 "room on the PMU for it (ENOSPC); split the group",
			 name, where);
		break;
	case EINVAL:
		snprintf(buf, len, "%s%s: the kernel refused the event or its "
			 "place in the group (EINVAL): the group may mix "
			 "incompatible PMUs or be too large for the PMU",
			 name, where);
		break;
	default:
		snprintf(buf, len, "%s%s: perf_event_open failed: %s", name,
			 where, strerror(-err));
	}
	return buf;
}

int rec_groupopen_id(int fd, uint64_t *id)
{
	return ioctl(fd, PERF_EVENT_IOC_ID, id) < 0 ? -errno : 0;
}

static int group_ioctl(int leader_fd, unsigned long req)
{
	return ioctl(leader_fd, req, PERF_IOC_FLAG_GROUP) < 0 ? -errno : 0;
}

int rec_groupopen_disable(int leader_fd)
{
	return group_ioctl(leader_fd, PERF_EVENT_IOC_DISABLE);
}

int rec_groupopen_reset(int leader_fd)
{
	return group_ioctl(leader_fd, PERF_EVENT_IOC_RESET);
}

int rec_groupopen_enable(int leader_fd)
{
	return group_ioctl(leader_fd, PERF_EVENT_IOC_ENABLE);
}

bool rec_groupopen_probe(struct perf_event_attr *attr)
{
	int fd = rec_groupopen_event(attr, 0, -1, -1);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

bool rec_groupopen_have_lost(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.disabled = 1;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
			PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_LOST;
	return rec_groupopen_probe(&a);
}
