/*
 * test_drain.c - the drain thread's rounds (recorder/ring/drain.c) over
 * synthetic kernel rings: records of several rings come back merged by
 * time, each ring's order kept; a record later than what an empty ring
 * is known to hold waits for the next round (or the end); records
 * without a time follow the one before them; late ones are counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/base/clock.h"
#include "recorder/ring/drain.h"

#define PAGE 4096
#define KDATA 4096
#define NRINGS 3
#define NO_TIME UINT64_MAX   /* a record the time function says has none */

struct fake {
	unsigned char *mem;
	uint64_t head;
};

struct fix {
	struct fake f[NRINGS];
	struct rec_ring rings[NRINGS];
	struct rec_drain *d;
	uint64_t base;   /* times are base + small offsets, all in the past */
};

/* This test's record layout: header, then the time (u64), then the seq. */
static int rec_time(void *ctx, const struct perf_event_header *h, uint64_t *t)
{
	uint64_t v;

	(void)ctx;
	assert_true(h->size >= 24);
	memcpy(&v, (const unsigned char *)h + 8, 8);
	if (v == NO_TIME)
		return -ENOENT;
	*t = v;
	return 0;
}

static uint64_t rec_seq(const struct perf_event_header *h)
{
	uint64_t v;

	memcpy(&v, (const unsigned char *)h + 16, 8);
	return v;
}

static void setup(struct fix *x)
{
	memset(x, 0, sizeof(*x));
	for (int i = 0; i < NRINGS; i++) {
		x->f[i].mem = aligned_alloc(PAGE, PAGE + KDATA);
		assert_non_null(x->f[i].mem);
		memset(x->f[i].mem, 0, PAGE + KDATA);
		assert_int_equal(rec_ring_init_mem(&x->rings[i], x->f[i].mem, PAGE, KDATA), 0);
	}
	x->base = prec_now_ns() - 1000000000ull;
	assert_int_equal(rec_drain_new(x->rings, NRINGS, KDATA, 65536, &x->d), 0);
	rec_drain_set_time(x->d, rec_time, NULL);
	assert_int_equal(rec_drain_start(x->d), 0);
}

static void teardown(struct fix *x)
{
	rec_drain_free(x->d);
	for (int i = 0; i < NRINGS; i++) {
		rec_ring_release(&x->rings[i]);
		free(x->f[i].mem);
	}
}

/* Writes a record of ring i with time t (NO_TIME: none) and seq, padded
 * to size bytes, the way the kernel writes, and publishes it. */
static void put(struct fix *x, int i, uint64_t t, uint64_t seq, uint16_t size)
{
	struct fake *f = &x->f[i];
	struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *)f->mem;
	unsigned char rec[256] = { 0 };
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, size };
	uint64_t tt = t == NO_TIME ? t : x->base + t;

	assert_true(size >= 24 && size <= sizeof(rec));
	memcpy(rec, &h, 8);
	memcpy(rec + 8, &tt, 8);
	memcpy(rec + 16, &seq, 8);
	for (size_t k = 0; k < size; k++)
		f->mem[PAGE + (f->head + k) % KDATA] = rec[k];
	f->head += size;
	__atomic_store_n(&meta->data_head, f->head, __ATOMIC_RELEASE);
}

/* Waits until the drain thread has moved everything written so far (the
 * memory rings are polled every 100 ms) and filled every spool once more
 * after that, so that each one's done_ns is past the records' times. */
static void wait_moved(struct fix *x)
{
	for (int tries = 0; tries < 500; tries++) {
		int left = 0;

		for (int i = 0; i < NRINGS; i++) {
			const struct perf_event_mmap_page *m =
				(const struct perf_event_mmap_page *)x->f[i].mem;

			left += __atomic_load_n(&m->data_tail, __ATOMIC_ACQUIRE) != x->f[i].head;
		}
		if (!left) {
			/* two more polls: every spool's done_ns is now */
			nanosleep(&(struct timespec){ 0, 250000000 }, NULL);
			return;
		}
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	fail_msg("the drain thread moved nothing in 5 s");
}

/* One round: the seqs it returned, in order, with their rings. */
static size_t round_seqs(struct fix *x, uint64_t *seq, size_t *ring, size_t max)
{
	const struct perf_event_header *h;
	size_t n = 0, i;

	rec_drain_round_begin(x->d, max);
	while (rec_drain_round_next(x->d, &i, &h) > 0) {
		assert_true(n < max);
		seq[n] = rec_seq(h);
		ring[n++] = i;
	}
	rec_drain_round_end(x->d);
	return n;
}

static void test_merged_by_time(void **state)
{
	struct fix x;
	uint64_t seq[32];
	size_t ring[32], n;

	(void)state;
	setup(&x);
	/* seq = the expected order; ring 1 has a record with the time of
	 * one of ring 0 (the lower ring goes first) */
	put(&x, 0, 100, 1, 24);
	put(&x, 1, 150, 2, 40);
	put(&x, 2, 160, 3, 24);
	put(&x, 0, 200, 4, 24);
	put(&x, 1, 200, 5, 24);
	put(&x, 2, 300, 6, 24);
	put(&x, 1, 400, 7, 24);
	wait_moved(&x);
	n = round_seqs(&x, seq, ring, 32);
	assert_int_equal(n, 7);
	for (size_t k = 0; k < n; k++)
		assert_int_equal(seq[k], k + 1);
	assert_int_equal(ring[3], 0);
	assert_int_equal(ring[4], 1);
	/* taken: a new round has nothing */
	assert_int_equal(round_seqs(&x, seq, ring, 32), 0);
	teardown(&x);
}

static void test_own_order_and_no_time(void **state)
{
	struct fix x;
	uint64_t seq[32];
	size_t ring[32], n;
	struct rec_drain_stats st;

	(void)state;
	setup(&x);
	/* ring 0 goes back in time once (the kernel's order is kept, the
	 * record counted late) and has a record without a time, which
	 * follows the one before it */
	put(&x, 0, 100, 1, 24);
	put(&x, 0, NO_TIME, 2, 24);
	put(&x, 1, 150, 3, 24);
	put(&x, 0, 200, 4, 24);
	put(&x, 0, 120, 5, 24);
	put(&x, 1, 250, 6, 24);
	wait_moved(&x);
	n = round_seqs(&x, seq, ring, 32);
	assert_int_equal(n, 6);
	for (size_t k = 0; k < n; k++)
		assert_int_equal(seq[k], k + 1);
	assert_int_equal(rec_drain_stop(x.d, true, NULL, NULL), 0);
	rec_drain_stats(x.d, &st);
	assert_int_equal(st.late, 1);
	teardown(&x);
}

static void test_later_records_wait(void **state)
{
	struct fix x;
	uint64_t seq[32], future = 3600ull * 1000000000ull;
	size_t ring[32], n;
	struct rec_drain_stats st;

	(void)state;
	setup(&x);
	/* Ring 1's second record is stamped after anything the other spools
	 * are known to hold: it waits, and the round's limit comes from the
	 * empty rings (0 and 2), not from the one that has it. */
	put(&x, 0, 100, 1, 24);
	put(&x, 1, 200, 2, 24);
	put(&x, 1, future, 4, 24);
	wait_moved(&x);
	n = round_seqs(&x, seq, ring, 32);
	assert_int_equal(n, 2);
	assert_int_equal(seq[0], 1);
	assert_int_equal(seq[1], 2);
	/* a record of ring 2 stamped before it arrives later: it goes first */
	put(&x, 2, 300, 3, 24);
	wait_moved(&x);
	n = round_seqs(&x, seq, ring, 32);
	assert_int_equal(n, 1);
	assert_int_equal(seq[0], 3);
	/* max bounds a round */
	put(&x, 0, 400, 5, 24);
	put(&x, 2, 500, 6, 24);
	wait_moved(&x);
	assert_int_equal(round_seqs(&x, seq, ring, 1), 1);
	assert_int_equal(seq[0], 5);
	/* once the thread ended, everything goes, in order */
	assert_int_equal(rec_drain_stop(x.d, true, NULL, NULL), 0);
	n = round_seqs(&x, seq, ring, 32);
	assert_int_equal(n, 2);
	assert_int_equal(seq[0], 6);
	assert_int_equal(seq[1], 4);
	assert_false(rec_drain_pending(x.d, 1));
	rec_drain_stats(x.d, &st);
	assert_int_equal(st.late, 0);
	teardown(&x);
}

static void test_without_time_ring_after_ring(void **state)
{
	struct fix x;
	uint64_t seq[32];
	size_t ring[32], n;

	(void)state;
	setup(&x);
	rec_drain_set_time(x.d, NULL, NULL);
	put(&x, 1, 100, 3, 24);
	put(&x, 0, 200, 1, 24);
	put(&x, 1, 50, 4, 24);
	put(&x, 0, 300, 2, 24);
	wait_moved(&x);
	n = round_seqs(&x, seq, ring, 32);
	assert_int_equal(n, 4);
	for (size_t k = 0; k < n; k++)
		assert_int_equal(seq[k], k + 1);
	teardown(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merged_by_time),
		cmocka_unit_test(test_own_order_and_no_time),
		cmocka_unit_test(test_later_records_wait),
		cmocka_unit_test(test_without_time_ring_after_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
