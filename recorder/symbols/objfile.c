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

#include "format/base/clock.h"
#include "format/base/elf.h"
#include "recorder/symbols/elfcfi.h"

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

/* Reads o's unwind sections: from its file, or our own image for the
 * [vdso]. 0, or < 0 with *why set when there is more to say. */
static int read_cfi(const struct rec_symgather *sc, const struct sc_obj *o,
		    struct rec_elfcfi *c, const char **why)
{
	int fd, ret;

	*why = NULL;
	if (strcmp(o->path, VDSO_PATH) == 0) {
		const void *img = NULL;
		size_t len = 0;

		ret = rec_symgather_vdso(&img, &len);
		if (ret)
			return ret;
		ret = rec_elfcfi_read_mem(img, len, c);
		if (!ret && (ret = rec_symgather_vdso_mismatch(o, c->build_id,
							       c->build_id_len, why)))
			rec_elfcfi_release(c);
		return ret;
	}
	fd = rec_symgather_obj_open(sc, o, why);
	if (fd < 0)
		return fd;
	ret = rec_elfcfi_read_fd(fd, c);
	close(fd);
	return ret;
}

struct sc_cfi *rec_symgather_obj_cfi(struct rec_symgather *sc, struct sc_obj *o)
{
	struct prec_cfi_sections s = { sizeof(s) };
	struct sc_cfi *c;
	uint64_t t0;
	int ret;

	if (o->cfi || o->cfi_err)
		return o->cfi;
	t0 = prec_now_ns();
	c = calloc(1, sizeof(*c));
	if (!c) {
		/* not remembered: the next frame may find memory */
		return NULL;
	}
	ret = read_cfi(sc, o, &c->c, &o->cfi_why);
	if (ret) {
		o->cfi_err = ret;
		sc->st.unwind_unavailable++;
		goto err_free;
	}
	s.eh_frame = c->c.eh_frame.data;
	s.eh_frame_len = c->c.eh_frame.len;
	s.eh_frame_addr = c->c.eh_frame.addr;
	s.eh_frame_hdr = c->c.eh_frame_hdr.data;
	s.eh_frame_hdr_len = c->c.eh_frame_hdr.len;
	s.eh_frame_hdr_addr = c->c.eh_frame_hdr.addr;
	s.debug_frame = c->c.debug_frame.data;
	s.debug_frame_len = c->c.debug_frame.len;
	c->t = prec_cfi_table_new(&s);
	if (!c->t) {
		rec_elfcfi_release(&c->c);
		goto err_free;   /* ENOMEM: tried again later */
	}
	o->cfi = c;
	sc->st.unwind_objects++;
	sc->st.unwind_held += rec_elfcfi_bytes(&c->c);
	sc->st.unwind_load_ns += prec_now_ns() - t0;
	return c;
err_free:
	free(c);
	sc->st.unwind_load_ns += prec_now_ns() - t0;
	return NULL;
}
