/*
 * objfile.c - opening the file of an object the gatherer saw mapped
 * (see objfile.h), for symwrite.c (symbols) and symunwind.c (unwind
 * sections) alike.
 */
#include "recorder/symbols/objfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/base/elf.h"

static void strip_deleted(char *path)
{
	static const char suffix[] = " (deleted)";
	size_t n = strlen(path), s = sizeof(suffix) - 1;

	if (n > s && strcmp(path + n - s, suffix) == 0)
		path[n - s] = 0;
}

int rec_symgather_vdso(const void **img, size_t *len)
{
	unsigned long long lo = 0, hi = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, " [vdso]"))
			continue;
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && hi > lo)
			ret = 0;
		break;
	}
	fclose(f);
	if (ret)
		return ret;
	*img = (const void *)(uintptr_t)lo;
	*len = (size_t)(hi - lo);
	return 0;
}

int rec_symgather_vdso_mismatch(const struct sc_obj *o, const uint8_t *bid,
				size_t bid_len, const char **why)
{
	if (!o->bid_len || (bid_len == o->bid_len && !memcmp(bid, o->bid, bid_len)))
		return 0;
	*why = "another vDSO (e.g. of a 32-bit process)";
	return -ESTALE;
}

/* 1 when the build-id of fd is not the mapping's (a mapping without one
 * matches any file), 0 when it is, < 0 when fd is no ELF file. */
static int bid_mismatch(const struct sc_obj *o, int fd)
{
	uint8_t bid[64];
	int n;

	if (!o->bid_len)
		return 0;
	n = prec_elf_build_id_fd(fd, bid, sizeof(bid));
	if (n < 0)
		return n;
	return (size_t)n != o->bid_len || memcmp(bid, o->bid, o->bid_len) != 0;
}

int rec_symgather_obj_open(const struct rec_symgather *sc,
			   const struct sc_obj *o, const char **why)
{
	char *path = strdup(o->path), cand[3][4200];
	int nc = 0, ret = -ENOENT, mismatch = 0;

	*why = NULL;
	if (!path)
		return -ENOMEM;
	strip_deleted(path);
	if (sc->o.proc_root && o->pid) {
		snprintf(cand[nc++], sizeof(cand[0]), "/proc/%u/map_files/%lx-%lx",
			 o->pid, (unsigned long)o->start, (unsigned long)o->end);
		snprintf(cand[nc++], sizeof(cand[0]), "/proc/%u/root%s", o->pid,
			 path);
	}
	snprintf(cand[nc++], sizeof(cand[0]), "%s", path);
	free(path);
	for (int i = 0; i < nc; i++) {
		/* O_NONBLOCK: a FIFO put where a binary was must not hang
		 * us; only regular files are read */
		int fd = open(cand[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK), r;
		struct stat st;

		if (fd < 0) {
			/* the last candidate's error is the most telling */
			ret = -errno;
			continue;
		}
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			ret = -EINVAL;
			continue;
		}
		r = bid_mismatch(o, fd);
		if (r == 0)
			return fd;
		close(fd);
		if (r > 0)
			mismatch = 1;
		else
			ret = r;
	}
	if (mismatch) {
		*why = "build-id mismatch: the file changed since it was mapped";
		return -ESTALE;
	}
	return ret;
}
