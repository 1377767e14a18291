/*
 * drain.h - the thread that empties the kernel rings into spools.
 *
 * Why a thread of its own: see spool.h. The drain thread only moves whole
 * records (memcpy) from each kernel ring into that ring's spool and wakes
 * the consumer through an eventfd; the consumer (the recording's thread)
 * decodes and writes at its own pace.
 *
 * How to use (one consumer thread):
 *
 *   rec_drain_new(rings, n, ring_bytes, spool_bytes, &d);
 *   rec_drain_set_time(d, time, ctx);      // how to read a record's time
 *   rec_drain_start(d);
 *   loop:
 *       poll rec_drain_fd(d) (readable: records were moved), then
 *       rec_drain_ack(d);                  // clears the eventfd
 *       rec_drain_round_begin(d, max);
 *       while (rec_drain_round_next(d, &i, &h) > 0)
 *           ... decode h, a record of ring i (valid until the next call) ...
 *       rec_drain_round_end(d);            // frees what was taken
 *       for each ring i: rec_drain_ring_failed(d, i) or the spool's
 *           error (rec_drain_spool(d, i)->error): the ring stopped on a
 *           corrupt header (its later records are lost; say so once)
 *   rec_drain_stop(d, true, consume, ctx);  // final: moves what is left,
 *                                           // calling consume meanwhile
 *   ... rounds until no spool has records pending ...
 *   rec_drain_free(d);
 *
 * Rounds: the kernel writes each record into the ring of the CPU it
 * happened on, so a process's exec and mmaps can sit in one ring and its
 * first samples in another; read one ring after the other, those samples
 * came before the mappings they fall in (the symbol gatherer, the cut of
 * frame-pointer chains and DWARF unwinding need the mappings first). A
 * round returns the spools' records merged by time (each spool's own
 * order kept), up to the time every ring is known to be moved to: a
 * spool's done_ns (spool.h), less a slack for records the kernel had
 * stamped but not yet published. Later records wait in their spools for
 * the next round; once the thread has ended, rounds take everything. The
 * records wait where they are: nothing is copied, a round costs a heap
 * step per record (log2 of the rings) and the read of its time.
 *
 * Rings with fd < 0 (memory rings in tests) are polled every 100 ms
 * instead of being waited on with epoll.
 *
 * Ownership: the rings are borrowed (the caller's event source owns them
 * and keeps them mapped until rec_drain_free); the spools are the drain's.
 */
#ifndef REC_DRAIN_H
#define REC_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recorder/ring/ring.h"

struct rec_drain;

/* spool_bytes: per-ring spool cap, 0 = default (32 MiB per CPU, at most
 * 1 GiB in all, rounded down to a power of two, at least two rings).
 * Returns 0 or -errno. */
int rec_drain_new(struct rec_ring *rings, size_t n, uint64_t ring_bytes,
		  uint64_t spool_bytes, struct rec_drain **out);
/* Starts the thread. 0 or -errno. */
int rec_drain_start(struct rec_drain *d);
/* The eventfd: readable when records were moved or the thread ended. */
int rec_drain_fd(const struct rec_drain *d);
/* Clears the eventfd's count. */
void rec_drain_ack(struct rec_drain *d);

/* time(ctx, h, &t): 0 and the record's CLOCK_MONOTONIC time, or < 0 when
 * it has none (it then goes right after the record before it in its
 * ring). Without it, rounds go ring after ring. Consumer side: rounds
 * read it, the thread does not. */
void rec_drain_set_time(struct rec_drain *d,
			int (*time)(void *ctx, const struct perf_event_header *h,
				    uint64_t *t),
			void *ctx);

/* A round over the spools (see above); at most max records. Consumer
 * thread only. Between begin and end no other reading of the spools. */
void rec_drain_round_begin(struct rec_drain *d, size_t max);
/* 1 and the next record in time order with its ring's index, or 0 when
 * the round is over. The record is valid until the next call. */
int rec_drain_round_next(struct rec_drain *d, size_t *ring,
			 const struct perf_event_header **h);
/* Frees the records taken to the producer. */
void rec_drain_round_end(struct rec_drain *d);

/* The consumer's reader of spool i, and the growth hook (spool.h). */
struct rec_ring *rec_drain_spool(struct rec_drain *d, size_t i);
void rec_drain_sync(struct rec_drain *d, size_t i);
/* Records of spool i are waiting to be read. */
bool rec_drain_pending(struct rec_drain *d, size_t i);
/* Kernel ring i stopped on a corrupt record header. */
bool rec_drain_ring_failed(const struct rec_drain *d, size_t i);

/* Stops the thread. final: move every record still in the kernel rings
 * first, calling consume(ctx) while the thread waits for spool room (a
 * consume error turns the stop into an abort); !final: stop at once.
 * Returns 0 or consume's error. Idempotent. */
int rec_drain_stop(struct rec_drain *d, bool final,
		   int (*consume)(void *ctx), void *ctx);

struct rec_drain_stats {
	uint64_t wakeups;     /* epoll returns with a ring ready */
	uint64_t spool_full;  /* fills that found a spool full: the
			       * consumer fell behind the kernel */
	uint64_t moved;       /* bytes moved */
	uint64_t late;        /* records a round returned after one of a later
			       * time: stamped long before the kernel
			       * published them, or out of order in their
			       * own ring */
};
/* Only after rec_drain_stop() (or before start) for exact counts; a
 * running thread's counts are read without synchronisation. */
void rec_drain_stats(const struct rec_drain *d, struct rec_drain_stats *st);

void rec_drain_free(struct rec_drain *d);   /* stops first; NULL is fine */

#endif
