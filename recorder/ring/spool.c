/*
 * spool.c - whole records from a kernel ring into a user ring; see spool.h.
 */
#include "recorder/ring/spool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/base/clock.h"

/* No MADV_HUGEPAGE: tried, and on a VM (record_vs_perf.sh) clearing the
 * huge pages at first touch cost 16% of the recorder's CPU against ~3% for
 * the faults of 4 KiB pages. */

int rec_spool_init(struct rec_spool *s, size_t size)
{
	return rec_spool_init_grow(s, size, size);
}

int rec_spool_init_grow(struct rec_spool *s, size_t size, size_t cap)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *meta;
	int ret;

	memset(s, 0, sizeof(*s));
	if (size < 65536 || (size & (size - 1)) || cap < size || (cap & (cap - 1)))
		return -EINVAL;
	/* pages are only touched when records reach them */
	s->map_len = page + cap;
	s->map = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->map == MAP_FAILED) {
		s->map = NULL;
		return -ENOMEM;
	}
	s->block = s->map;
	meta = s->block;
	memset(meta, 0, page);
	meta->data_offset = page;
	meta->data_size = size;
	s->size = size;
	s->cap = cap;
	ret = rec_ring_init_mem(&s->reader, s->block, page, size);
	if (ret < 0) {
		munmap(s->map, s->map_len);
		s->map = s->block = NULL;
	}
	return ret;
}

void rec_spool_release(struct rec_spool *s)
{
	if (!s)
		return;
	rec_ring_release(&s->reader);
	if (s->map)
		munmap(s->map, s->map_len);
	s->map = s->block = NULL;
}

void rec_spool_sync(struct rec_spool *s)
{
	struct rec_ring *r = &s->reader;
	unsigned char *data = r->data;
	uint64_t to = __atomic_load_n(&s->grow_to, __ATOMIC_ACQUIRE), old, p, head;

	if (!to)
		return;
	/* the producer published its last head before asking, and writes
	 * nothing more until we acknowledge */
	old = r->size;
	head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	for (p = r->pos; p < head;) {
		uint64_t from = p & (old - 1), dst = p & (to - 1), n = head - p;

		if (n > old - from)
			n = old - from;
		if (dst != from)
			memcpy(data + dst, data + from, n);
		p += n;
	}
	r->size = to;
	r->meta->data_size = to;
	s->grown++;
	__atomic_store_n(&s->grow_to, 0, __ATOMIC_RELEASE);
}

uint64_t rec_spool_pending(const struct rec_ring *k)
{
	if (!k->meta || k->error)
		return 0;
	return __atomic_load_n(&k->meta->data_head, __ATOMIC_ACQUIRE) - k->pos;
}

/* Copies n bytes at ring position pos of src into dst, splitting at the
 * end of src. */
static void copy_from(const unsigned char *src, uint64_t src_size, uint64_t pos,
		      unsigned char *dst, uint64_t n)
{
	uint64_t off = pos & (src_size - 1), first = n;

	if (off + n > src_size)
		first = src_size - off;
	memcpy(dst, src + off, first);
	if (first < n)
		memcpy(dst + first, src, n - first);
}

/* Copies n bytes from k (at k position kpos) to the spool at spool
 * position spos, splitting at the end of either ring. */
static void move_bytes(struct rec_spool *s, const struct rec_ring *k,
		       uint64_t kpos, uint64_t spos, uint64_t n)
{
	unsigned char *sdata = s->reader.data;
	uint64_t soff = spos & (s->size - 1), first = n;

	if (soff + n > s->size)
		first = s->size - soff;
	copy_from(k->data, k->size, kpos, sdata + soff, first);
	if (first < n)
		copy_from(k->data, k->size, kpos + first, sdata, n - first);
}

long rec_spool_fill(struct rec_spool *s, struct rec_ring *k)
{
	struct perf_event_mmap_page *sm = s->reader.meta;
	uint64_t head, start = k->pos, pos = k->pos, shead, stail, room, now;
	int bad = 0;

	if (k->error)
		return k->error;
	if (s->growing) {
		/* the consumer has not switched yet: records wait in k */
		if (__atomic_load_n(&s->grow_to, __ATOMIC_ACQUIRE))
			return 0;
		s->growing = 0;
		s->size *= 2;
	}
	/* the time first: a record stamped before it is below the head
	 * read next (the kernel publishes a record microseconds after its
	 * time; the reader of done_ns allows for that) */
	now = prec_now_ns();
	/* kernel's head: acquire pairs with its release after writing */
	head = __atomic_load_n(&k->meta->data_head, __ATOMIC_ACQUIRE);
	if (head - start > k->size) {
		k->error = -EBADMSG;
		return k->error;
	}
	shead = sm->data_head;   /* only this thread writes it */
	stail = __atomic_load_n(&sm->data_tail, __ATOMIC_ACQUIRE);
	room = s->size - (shead - stail);
	/* walk headers: whole, valid records that fit */
	while (pos < head) {
		struct perf_event_header h;

		if (head - pos < sizeof(h)) {
			bad = 1;
			break;
		}
		copy_from(k->data, k->size, pos, (unsigned char *)&h, sizeof(h));
		if (h.size < sizeof(h) || h.size > k->size || h.size > head - pos) {
			bad = 1;
			break;
		}
		if (pos - start + h.size > room) {
			s->full++;
			break;
		}
		pos += h.size;
	}
	if (pos > start) {
		move_bytes(s, k, start, shead, pos - start);
		/* the copy is visible before the consumer sees the new head */
		__atomic_store_n(&sm->data_head, shead + (pos - start), __ATOMIC_RELEASE);
		/* and we are done reading the kernel's bytes before it reuses them */
		k->pos = pos;
		k->bytes += pos - start;
		__atomic_store_n(&k->meta->data_tail, pos, __ATOMIC_RELEASE);
		s->moved += pos - start;
	}
	/* after data_head: a consumer that sees this time sees the records */
	__atomic_store_n(&s->done_ns, pos == head ? now : 0, __ATOMIC_RELEASE);
	if (!bad && pos < head && s->size < s->cap) {
		/* full: ask the consumer to double the spool (after the head
		 * above is published) */
		s->growing = 1;
		__atomic_store_n(&s->grow_to, s->size * 2, __ATOMIC_RELEASE);
	}
	if (bad) {
		k->error = -EBADMSG;
		return k->error;
	}
	return (long)(pos - start);
}
