/*
 * ring.h - reader of one perf mmap ring buffer.
 *
 * A ring is the kernel's perf_event_mmap_page followed by 2^n data pages.
 * The kernel writes records and publishes data_head; we read up to it and
 * publish data_tail once the bytes are consumed, which lets the kernel
 * reuse them. Call order for one drain:
 *
 *   rec_ring_read_begin(r);                 // data_head, acquire
 *   while ((ret = rec_ring_next(r, &hdr)) > 0)
 *       ... decode hdr (valid until the next rec_ring_next) ...
 *   rec_ring_read_done(r);                  // data_tail, release
 *
 * rec_ring_next is rec_ring_peek (the next record, left in place) then
 * rec_ring_advance (past it): a reader that merges several rings holds
 * each one's next record with peek and advances the one it takes.
 *
 * A record that wraps the end of the data area is copied into a bounce
 * buffer so the caller always sees contiguous bytes. A header with size < 8,
 * larger than the ring, or running past data_head is corruption: the ring
 * stops (rec_ring_next returns -EBADMSG from then on, error kept in
 * r->error) and never loops.
 *
 * The ring may be a real mmap (rec_ring_mmap) or any memory laid out the
 * same way (rec_ring_init_mem; unit tests feed synthetic pages).
 * Ownership: rec_ring_release() unmaps what rec_ring_mmap() mapped and frees
 * the bounce buffer; memory given to rec_ring_init_mem() stays the caller's.
 */
#ifndef REC_RING_H
#define REC_RING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct rec_ring {
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size;         /* data bytes, a power of two */
	uint64_t head;         /* data_head snapshot of this drain */
	uint64_t pos;          /* next byte to read (becomes data_tail) */
	uint16_t peeked;       /* size of the record rec_ring_peek returned */
	unsigned char *bounce; /* for wrapped records */
	size_t bounce_cap;
	int error;             /* 0, or the error that stopped the ring */
	uint64_t bytes;        /* bytes consumed in total */
	void *map;             /* what rec_ring_mmap() mapped, or NULL */
	size_t map_len;
	int fd;                /* the fd that owns the ring, or -1 */
	int cpu;
};

/* base = the metadata page; data starts at meta->data_offset (or
 * page_size when that field is 0) and is data_size bytes (power of two).
 * Starts reading at the current data_tail. Returns 0 or -EINVAL. */
int rec_ring_init_mem(struct rec_ring *r, void *base, size_t page_size,
		      size_t data_size);
/* Maps 1 + pages pages of fd (pages a power of two). Returns 0 or -errno
 * (-EPERM/-ENOMEM when over perf_event_mlock_kb). */
int rec_ring_mmap(struct rec_ring *r, int fd, int cpu, size_t pages,
		  size_t page_size);
void rec_ring_release(struct rec_ring *r);

/* Snapshots data_head. Returns the bytes available. */
uint64_t rec_ring_read_begin(struct rec_ring *r);
/* Next complete record: 1 and *hdr, 0 when none is left before head, or a
 * negative error when the ring is corrupt (it is then stopped). */
int rec_ring_next(struct rec_ring *r, const struct perf_event_header **hdr);
/* rec_ring_next without the move past the record: the same record comes
 * back until rec_ring_advance(). */
int rec_ring_peek(struct rec_ring *r, const struct perf_event_header **hdr);
/* Past the record the last rec_ring_peek returned (nothing when none).
 * Inline: a merge of rings calls it once per record. */
static inline void rec_ring_advance(struct rec_ring *r)
{
	r->pos += r->peeked;
	r->bytes += r->peeked;
	r->peeked = 0;
}
/* Publishes the consumed position to the kernel. */
void rec_ring_read_done(struct rec_ring *r);

#endif
