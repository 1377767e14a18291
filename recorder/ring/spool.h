/*
 * spool.h - a user-space ring that whole records are moved into from a
 * kernel ring, so the kernel ring is freed at memcpy speed.
 *
 * Why: decoding, protobuf encoding and compression cost far more per record
 * than a copy. Done on the thread that frees the kernel ring, they delay
 * every drain; under load (CPUs busy, scheduling latency) the kernel ring
 * fills and records are lost. So a drain thread only moves bytes
 * (rec_spool_fill) and the encoding thread reads the spool with the usual
 * ring reader (s->reader), at its own pace.
 *
 * The spool has the kernel ring's layout (a metadata page then 2^n data
 * bytes), so the consumer side is exactly rec_ring_read_begin / next /
 * read_done on s->reader. One producer thread, one consumer thread:
 *   producer: rec_spool_fill(s, kernel_ring)   // publishes data_head (release)
 *   consumer: rec_ring_read_begin(&s->reader) ... rec_ring_read_done()
 *             // data_head acquire, data_tail release
 * Only whole records are moved, so the consumer never sees a partial one.
 * When the spool is full the rest stays in the kernel ring (the kernel
 * then counts what it cannot store in LOST records): nothing is dropped
 * silently.
 *
 * Growth: rec_spool_init_grow() maps cap bytes but uses only a small size
 * at first, so a recorder whose encoder keeps up cycles through (and the
 * kernel zeroes) only those pages. A fill that stops on a full spool asks
 * to double it (up to cap) and moves nothing more until the consumer has
 * switched: rec_spool_sync(), called by the consumer between batches,
 * copies the waiting bytes to their offsets under the new size and
 * acknowledges; the producer then goes on with the new size. Records wait
 * in the kernel ring meanwhile (one consumer turn), none is dropped.
 */
#ifndef REC_SPOOL_H
#define REC_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "recorder/ring/ring.h"

struct rec_spool {
	void *block;            /* metadata page + data, inside map */
	void *map;              /* the anonymous mapping, owned */
	size_t map_len;
	struct rec_ring reader; /* the consumer's view */
	uint64_t size;          /* producer's view of the data size */
	uint64_t cap;           /* mapped data bytes: size may grow to this */
	uint64_t grow_to;       /* requested size, 0 when none (atomic) */
	int growing;            /* producer: waiting for the consumer's ack */
	uint64_t grown;         /* times the spool doubled */
	uint64_t moved;         /* bytes moved in total (producer) */
	uint64_t full;          /* fills that stopped on a full spool */
	/* CLOCK_MONOTONIC time before the last fill read the kernel's head,
	 * when that fill moved every record up to it: the kernel ring's
	 * records of earlier times are all in the spool. 0 when the last
	 * fill left records in the kernel ring (a full spool, or one waiting
	 * to grow), or before the first fill. Published after data_head
	 * (release): read it first (acquire), then data_head. */
	uint64_t done_ns;
};

/* size: data bytes, a power of two >= 64 KiB. 0 or -errno. */
int rec_spool_init(struct rec_spool *s, size_t size);
/* size bytes in use at first, doubling under pressure up to cap (both
 * powers of two, 64 KiB <= size <= cap). 0 or -errno. */
int rec_spool_init_grow(struct rec_spool *s, size_t size, size_t cap);
void rec_spool_release(struct rec_spool *s);

/* Consumer side, between records (none held: the last one returned by
 * rec_ring_next is done with): applies a pending growth. An atomic load
 * when none is pending. */
void rec_spool_sync(struct rec_spool *s);

/* Moves the whole records available in kernel ring k (up to the free space
 * of s) and frees them in k, then sets s->done_ns. Returns bytes moved (>= 0), or -EBADMSG when
 * k is corrupt: the good records before the bad header are moved first and
 * k is stopped (k->error). */
long rec_spool_fill(struct rec_spool *s, struct rec_ring *k);

/* Bytes waiting in the kernel ring k (data_head - consumed). */
uint64_t rec_spool_pending(const struct rec_ring *k);

#endif
