/*
 * ring.c - perf mmap ring reader; see ring.h for the call order.
 */
#include "recorder/ring/ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int set_layout(struct rec_ring *r, void *base, size_t page_size,
		      size_t data_size)
{
	struct perf_event_mmap_page *meta = base;
	uint64_t off = meta->data_offset ? meta->data_offset : page_size;

	if (!data_size || (data_size & (data_size - 1)))
		return -EINVAL;
	r->meta = meta;
	r->data = (unsigned char *)base + off;
	r->size = data_size;
	r->pos = __atomic_load_n(&meta->data_tail, __ATOMIC_RELAXED);
	r->head = r->pos;
	return 0;
}

int rec_ring_init_mem(struct rec_ring *r, void *base, size_t page_size,
		      size_t data_size)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->cpu = -1;
	return set_layout(r, base, page_size, data_size);
}

int rec_ring_mmap(struct rec_ring *r, int fd, int cpu, size_t pages,
		  size_t page_size)
{
	size_t len = (pages + 1) * page_size;
	void *m;
	int ret;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->cpu = cpu;
	if (!pages || (pages & (pages - 1)))
		return -EINVAL;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	r->map = m;
	r->map_len = len;
	r->fd = fd;
	/* The kernel fills data_offset/data_size (4.1+); fall back to the
	 * classic layout otherwise. */
	{
		struct perf_event_mmap_page *meta = m;
		size_t dsz = meta->data_size ? (size_t)meta->data_size
					     : pages * page_size;

		ret = set_layout(r, m, page_size, dsz);
	}
	if (ret < 0) {
		munmap(m, len);
		r->map = NULL;
	}
	return ret;
}

void rec_ring_release(struct rec_ring *r)
{
	if (!r)
		return;
	if (r->map)
		munmap(r->map, r->map_len);
	free(r->bounce);
	r->map = NULL;
	r->bounce = NULL;
	r->bounce_cap = 0;
	r->meta = NULL;
}

uint64_t rec_ring_read_begin(struct rec_ring *r)
{
	if (r->error)
		return 0;
	/* Pairs with the kernel's store of data_head after it wrote the
	 * records: everything before head is visible once we see head. */
	r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	if (r->head - r->pos > r->size) {
		/* The kernel never overruns data_tail in non-overwrite mode. */
		r->error = -EBADMSG;
		return 0;
	}
	return r->head - r->pos;
}

static void copy_out(const struct rec_ring *r, uint64_t pos, void *dst,
		     size_t n)
{
	uint64_t off = pos & (r->size - 1);
	size_t first = n;

	if (off + n > r->size)
		first = (size_t)(r->size - off);
	memcpy(dst, r->data + off, first);
	if (first < n)
		memcpy((unsigned char *)dst + first, r->data, n - first);
}

int rec_ring_peek(struct rec_ring *r, const struct perf_event_header **hdr)
{
	struct perf_event_header h;
	uint64_t avail, off;

	if (r->error)
		return r->error;
	avail = r->head - r->pos;
	if (avail == 0)
		return 0;
	if (avail < sizeof(h)) {
		r->error = -EBADMSG;
		return r->error;
	}
	copy_out(r, r->pos, &h, sizeof(h));
	if (h.size < sizeof(h) || h.size > r->size || h.size > avail) {
		r->error = -EBADMSG;
		return r->error;
	}
	off = r->pos & (r->size - 1);
	if (off + h.size <= r->size) {
		*hdr = (const struct perf_event_header *)(r->data + off);
	} else {
		if (r->bounce_cap < h.size) {
			/* 64 KiB covers every record (size is a u16). */
			unsigned char *nb = realloc(r->bounce, 65536);

			if (!nb)
				return -ENOMEM;
			r->bounce = nb;
			r->bounce_cap = 65536;
		}
		copy_out(r, r->pos, r->bounce, h.size);
		*hdr = (const struct perf_event_header *)r->bounce;
	}
	r->peeked = h.size;
	return 1;
}

int rec_ring_next(struct rec_ring *r, const struct perf_event_header **hdr)
{
	int ret = rec_ring_peek(r, hdr);

	if (ret > 0)
		rec_ring_advance(r);
	return ret;
}

void rec_ring_read_done(struct rec_ring *r)
{
	/* Our reads of the records happen before the kernel may reuse the
	 * bytes: release. */
	__atomic_store_n(&r->meta->data_tail, r->pos, __ATOMIC_RELEASE);
}
