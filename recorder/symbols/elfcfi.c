/*
 * elfcfi.c - unwind sections through format/base/elf.h (see elfcfi.h).
 */
#include "recorder/symbols/elfcfi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Inflates a zlib-compressed section in place of its compressed copy. */
static int inflate_sec(struct prec_elf_section *s)
{
	uLongf out_len;
	uint8_t *out;

	if (s->compressed != PREC_ELF_COMPRESS_ZLIB)
		return -EBADMSG;
	/* bound the inflated size before allocating it */
	if (s->raw_size > REC_ELFCFI_MAX)
		return -EFBIG;
	out = malloc(s->raw_size ? (size_t)s->raw_size : 1);
	if (!out)
		return -ENOMEM;
	out_len = (uLongf)s->raw_size;
	if (uncompress(out, &out_len, s->data, (uLong)s->size) != Z_OK ||
	    out_len != s->raw_size) {
		free(out);
		return -EBADMSG;
	}
	free((void *)s->data);
	s->data = out;
	s->size = s->raw_size;
	s->compressed = 0;
	return 0;
}

/* Copies the one section name of the file (fd, or buf when fd < 0) into
 * sec, inflated; its absence is no error. e gets segments and build-id. */
static int copy(int fd, const void *buf, size_t len, const char *name,
		struct rec_elfcfi_sec *sec, struct prec_elf *e)
{
	struct prec_elf_section s;
	int ret;

	ret = prec_elf_copy_sections(fd, buf, len, &name, 1, REC_ELFCFI_MAX,
				     &s, e);
	if (ret)
		return ret;
	if (s.data && s.compressed)
		ret = inflate_sec(&s);
	if (ret) {
		free((void *)s.data);
		return ret;
	}
	sec->data = (uint8_t *)s.data;
	sec->len = (size_t)s.size;
	sec->addr = s.addr;
	return 0;
}

static int read_cfi(int fd, const void *buf, size_t len, struct rec_elfcfi *out)
{
	struct prec_elf e;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = copy(fd, buf, len, ".eh_frame", &out->eh_frame, &e);
	if (ret)
		return ret;
	out->segs = e.segs;
	out->nsegs = e.nsegs;
	out->load_bias = e.load_bias;
	memcpy(out->build_id, e.build_id, sizeof(out->build_id));
	out->build_id_len = e.build_id_len;
	e.segs = NULL;
	prec_elf_release(&e);
	if (out->eh_frame.data)
		ret = copy(fd, buf, len, ".eh_frame_hdr", &out->eh_frame_hdr, NULL);
	else   /* .debug_frame only where no .eh_frame covers the code */
		ret = copy(fd, buf, len, ".debug_frame", &out->debug_frame, NULL);
	if (!ret && !out->eh_frame.data && !out->debug_frame.data)
		ret = -ENODATA;
	if (ret)
		rec_elfcfi_release(out);
	return ret;
}

int rec_elfcfi_read_fd(int fd, struct rec_elfcfi *out)
{
	if (fd < 0) {
		memset(out, 0, sizeof(*out));
		return -EBADF;
	}
	return read_cfi(fd, NULL, 0, out);
}

int rec_elfcfi_read_mem(const void *buf, size_t len, struct rec_elfcfi *out)
{
	if (!buf || !len) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return read_cfi(-1, buf, len, out);
}

void rec_elfcfi_release(struct rec_elfcfi *c)
{
	if (!c)
		return;
	free(c->eh_frame.data);
	free(c->eh_frame_hdr.data);
	free(c->debug_frame.data);
	free(c->segs);
	memset(c, 0, sizeof(*c));
}

size_t rec_elfcfi_bytes(const struct rec_elfcfi *c)
{
	return c->eh_frame.len + c->eh_frame_hdr.len + c->debug_frame.len +
	       c->nsegs * sizeof(*c->segs);
}
