/*
 * test_spool.c - moving whole records from a (synthetic) kernel ring into a
 * spool and reading them back (recorder/spool.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/ring/spool.h"

#define PAGE 4096
#define KDATA 4096
#define SPOOL 65536

struct fake {
	unsigned char *mem;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t head;
};

static void fake_init(struct fake *f, uint64_t start)
{
	f->mem = aligned_alloc(PAGE, PAGE + KDATA);
	assert_non_null(f->mem);
	memset(f->mem, 0, PAGE + KDATA);
	f->meta = (struct perf_event_mmap_page *)f->mem;
	f->data = f->mem + PAGE;
	f->meta->data_tail = f->meta->data_head = f->head = start;
}

static void put_record(struct fake *f, uint16_t size, unsigned seed)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, size };
	unsigned char rec[2048];

	memcpy(rec, &h, 8);
	for (size_t i = 8; i < size; i++)
		rec[i] = (unsigned char)(seed * 7 + i);
	for (size_t i = 0; i < size; i++)
		f->data[(f->head + i) % KDATA] = rec[i];
	f->head += size;
	__atomic_store_n(&f->meta->data_head, f->head, __ATOMIC_RELEASE);
}

static void check(const struct perf_event_header *h, uint16_t size, unsigned seed)
{
	const unsigned char *b = (const unsigned char *)h;

	assert_int_equal(h->size, size);
	for (size_t i = 8; i < size; i++)
		assert_int_equal(b[i], (unsigned char)(seed * 7 + i));
}

static void test_move_and_read(void **state)
{
	struct fake f;
	struct rec_ring k;
	struct rec_spool s;
	const struct perf_event_header *h;
	unsigned next = 0, seed = 0;

	(void)state;
	fake_init(&f, KDATA - 40);   /* the kernel ring wraps at once */
	assert_int_equal(rec_ring_init_mem(&k, f.mem, PAGE, KDATA), 0);
	assert_int_equal(rec_spool_init(&s, SPOOL), 0);
	/* many rounds: both rings wrap many times */
	for (int round = 0; round < 200; round++) {
		for (int j = 0; j < 5; j++) {
			uint16_t size = (uint16_t)(8 + 8 * ((seed * 13) % 60));

			put_record(&f, size, seed++);
		}
		assert_true(rec_spool_fill(&s, &k) > 0);
		/* the kernel ring is free again */
		assert_int_equal(f.meta->data_tail, f.head);
		assert_int_equal(rec_spool_pending(&k), 0);
		rec_ring_read_begin(&s.reader);
		while (rec_ring_next(&s.reader, &h) > 0) {
			check(h, (uint16_t)(8 + 8 * ((next * 13) % 60)), next);
			next++;
		}
		rec_ring_read_done(&s.reader);
	}
	assert_int_equal(next, seed);
	assert_int_equal(s.full, 0);
	rec_spool_release(&s);
	rec_ring_release(&k);
	free(f.mem);
}

static void test_full_spool_keeps_kernel_bytes(void **state)
{
	struct fake f;
	struct rec_ring k;
	struct rec_spool s;
	const struct perf_event_header *h;
	unsigned got = 0, seed = 0;
	long moved, total = 0;

	(void)state;
	fake_init(&f, 0);
	assert_int_equal(rec_ring_init_mem(&k, f.mem, PAGE, KDATA), 0);
	assert_int_equal(rec_spool_init(&s, SPOOL), 0);
	/* fill the spool to within 1000 bytes with 1000-byte records */
	while (total + 2000 <= SPOOL) {
		put_record(&f, 1000, seed++);
		moved = rec_spool_fill(&s, &k);
		assert_int_equal(moved, 1000);
		total += moved;
	}
	/* two more records: only the one that fits moves, whole */
	put_record(&f, 1000, seed++);
	put_record(&f, 1000, seed++);
	moved = rec_spool_fill(&s, &k);
	assert_int_equal(moved, 1000);
	assert_int_equal(s.full, 1);
	assert_int_equal(rec_spool_pending(&k), 1000);
	assert_int_equal(rec_spool_fill(&s, &k), 0);
	/* the consumer reads everything; then the last record moves */
	rec_ring_read_begin(&s.reader);
	while (rec_ring_next(&s.reader, &h) > 0)
		check(h, 1000, got++);
	rec_ring_read_done(&s.reader);
	assert_int_equal(got, seed - 1);
	assert_int_equal(rec_spool_fill(&s, &k), 1000);
	rec_ring_read_begin(&s.reader);
	assert_int_equal(rec_ring_next(&s.reader, &h), 1);
	check(h, 1000, got++);
	assert_int_equal(got, seed);
	rec_spool_release(&s);
	rec_ring_release(&k);
	free(f.mem);
}

static void test_corrupt_kernel_ring(void **state)
{
	struct fake f;
	struct rec_ring k;
	struct rec_spool s;
	const struct perf_event_header *h;
	struct perf_event_header bad = { PERF_RECORD_SAMPLE, 0, 0 };

	(void)state;
	fake_init(&f, 0);
	assert_int_equal(rec_ring_init_mem(&k, f.mem, PAGE, KDATA), 0);
	assert_int_equal(rec_spool_init(&s, SPOOL), 0);
	put_record(&f, 64, 1);
	memcpy(f.data + f.head, &bad, 8);   /* size 0 */
	f.head += 8;
	put_record(&f, 64, 2);
	assert_int_equal(rec_spool_fill(&s, &k), -EBADMSG);
	assert_int_equal(k.error, -EBADMSG);
	assert_int_equal(rec_spool_fill(&s, &k), -EBADMSG);   /* stays stopped */
	/* the good record before the bad header made it */
	rec_ring_read_begin(&s.reader);
	assert_int_equal(rec_ring_next(&s.reader, &h), 1);
	check(h, 64, 1);
	assert_int_equal(rec_ring_next(&s.reader, &h), 0);
	rec_spool_release(&s);
	rec_ring_release(&k);
	free(f.mem);
	assert_int_equal(rec_spool_init(&s, 1000), -EINVAL);
}

/* One producer thread, one consumer: every record arrives once, in order. */
struct prod {
	struct fake f;
	struct rec_ring k;
	struct rec_spool s;
	unsigned n;
	int done;
};

static void *producer(void *arg)
{
	struct prod *p = arg;
	unsigned seed = 0;

	while (seed < p->n) {
		/* the "kernel" writes while there is room in its ring */
		uint64_t tail = __atomic_load_n(&p->f.meta->data_tail, __ATOMIC_ACQUIRE);

		if (p->f.head - tail + 256 <= KDATA) {
			put_record(&p->f, (uint16_t)(16 + 8 * (seed % 30)), seed);
			seed++;
		}
		rec_spool_fill(&p->s, &p->k);
	}
	while (rec_spool_pending(&p->k))
		rec_spool_fill(&p->s, &p->k);
	__atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_threads(void **state)
{
	static struct prod p;
	const struct perf_event_header *h;
	pthread_t th;
	unsigned got = 0;

	(void)state;
	fake_init(&p.f, 0);
	assert_int_equal(rec_ring_init_mem(&p.k, p.f.mem, PAGE, KDATA), 0);
	assert_int_equal(rec_spool_init(&p.s, SPOOL), 0);
	p.n = 200000;
	assert_int_equal(pthread_create(&th, NULL, producer, &p), 0);
	for (;;) {
		int done = __atomic_load_n(&p.done, __ATOMIC_ACQUIRE);

		rec_ring_read_begin(&p.s.reader);
		while (rec_ring_next(&p.s.reader, &h) > 0) {
			check(h, (uint16_t)(16 + 8 * (got % 30)), got);
			got++;
		}
		rec_ring_read_done(&p.s.reader);
		if (done && !rec_ring_read_begin(&p.s.reader))
			break;
	}
	pthread_join(th, NULL);
	assert_int_equal(got, p.n);
	rec_spool_release(&p.s);
	rec_ring_release(&p.k);
	free(p.f.mem);
}

/* A growing spool: fill it with its data wrapping, ask to double, move
 * nothing until the consumer syncs, then read every record in order. */
static void test_grow_wrapped(void **state)
{
	struct fake f;
	struct rec_ring k;
	struct rec_spool s;
	const struct perf_event_header *h;
	unsigned got = 0, seed = 0;

	(void)state;
	fake_init(&f, 0);
	assert_int_equal(rec_ring_init_mem(&k, f.mem, PAGE, KDATA), 0);
	assert_int_equal(rec_spool_init_grow(&s, SPOOL, 4 * SPOOL), 0);
	assert_int_equal(rec_spool_init_grow(&s, SPOOL, SPOOL / 2), -EINVAL);
	assert_int_equal(rec_spool_init_grow(&s, SPOOL, 4 * SPOOL), 0);
	/* 40000 bytes in, 40000 read: the next data wraps the 64 KiB */
	for (int i = 0; i < 40; i++) {
		put_record(&f, 1000, seed++);
		assert_int_equal(rec_spool_fill(&s, &k), 1000);
	}
	rec_spool_sync(&s);
	rec_ring_read_begin(&s.reader);
	while (rec_ring_next(&s.reader, &h) > 0)
		check(h, 1000, got++);
	rec_ring_read_done(&s.reader);
	/* fill until full: the fill that stops asks to grow */
	while (!s.full) {
		put_record(&f, 1000, seed++);
		rec_spool_fill(&s, &k);
	}
	assert_int_equal(s.grow_to, 2 * SPOOL);
	assert_int_equal(rec_spool_pending(&k), 1000);
	assert_int_equal(rec_spool_fill(&s, &k), 0);   /* waits for the ack */
	/* the consumer reads half, then switches */
	rec_ring_read_begin(&s.reader);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(rec_ring_next(&s.reader, &h), 1);
		check(h, 1000, got++);
	}
	rec_ring_read_done(&s.reader);
	rec_spool_sync(&s);
	assert_int_equal(s.grow_to, 0);
	assert_int_equal(s.reader.size, 2 * SPOOL);
	assert_int_equal(s.grown, 1);
	/* the producer goes on with the new size, room for 60 more */
	for (int i = 0; i < 60; i++) {
		assert_true(rec_spool_fill(&s, &k) > 0);
		put_record(&f, 1000, seed++);
	}
	assert_true(rec_spool_fill(&s, &k) > 0);
	rec_spool_sync(&s);
	rec_ring_read_begin(&s.reader);
	while (rec_ring_next(&s.reader, &h) > 0)
		check(h, 1000, got++);
	rec_ring_read_done(&s.reader);
	assert_int_equal(got, seed);
	assert_int_equal(rec_spool_pending(&k), 0);
	rec_spool_release(&s);
	rec_ring_release(&k);
	free(f.mem);
}

/* Threads with a slow consumer: the spool grows to its cap, in order. */
static void test_threads_grow(void **state)
{
	static struct prod p;
	const struct perf_event_header *h;
	pthread_t th;
	unsigned got = 0;

	(void)state;
	fake_init(&p.f, 0);
	assert_int_equal(rec_ring_init_mem(&p.k, p.f.mem, PAGE, KDATA), 0);
	assert_int_equal(rec_spool_init_grow(&p.s, SPOOL, 8 * SPOOL), 0);
	p.n = 200000;
	assert_int_equal(pthread_create(&th, NULL, producer, &p), 0);
	for (;;) {
		int done = __atomic_load_n(&p.done, __ATOMIC_ACQUIRE), n = 0;

		rec_spool_sync(&p.s);
		rec_ring_read_begin(&p.s.reader);
		while (n++ < 40 && rec_ring_next(&p.s.reader, &h) > 0) {
			check(h, (uint16_t)(16 + 8 * (got % 30)), got);
			got++;
		}
		rec_ring_read_done(&p.s.reader);
		if (done && !rec_ring_read_begin(&p.s.reader))
			break;
		/* slow until the spool has grown: a producer slowed more than
		 * this loop (ASan, a loaded machine) never fills the spool
		 * against a consumer that only yields */
		if (!p.s.grown)
			usleep(200);
		else if (got % 7 == 0)
			sched_yield();
	}
	pthread_join(th, NULL);
	assert_int_equal(got, p.n);
	assert_true(p.s.grown >= 1);
	assert_true(p.s.size <= 8 * SPOOL);
	rec_spool_release(&p.s);
	rec_ring_release(&p.k);
	free(p.f.mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_move_and_read),
		cmocka_unit_test(test_full_spool_keeps_kernel_bytes),
		cmocka_unit_test(test_corrupt_kernel_ring),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_grow_wrapped),
		cmocka_unit_test(test_threads_grow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
