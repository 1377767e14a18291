/*
 * test_ring.c - the mmap ring reader (recorder/ring.c) on synthetic pages:
 * records written the way the kernel writes them, wraps, zero-payload
 * records, and corrupt headers that must stop the ring, never loop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/ring/ring.h"

#define PAGE 4096
#define DATA 512

struct fake {
	unsigned char *mem;   /* PAGE meta + DATA bytes */
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t head;        /* where the "kernel" writes next */
};

static void fake_init(struct fake *f, uint64_t start)
{
	f->mem = aligned_alloc(PAGE, 2 * PAGE);
	assert_non_null(f->mem);
	memset(f->mem, 0, PAGE + DATA);
	f->meta = (struct perf_event_mmap_page *)f->mem;
	f->data = f->mem + PAGE;
	f->meta->data_tail = start;
	f->meta->data_head = start;
	f->head = start;
}

/* Writes bytes at the kernel's position, wrapping like the kernel does. */
static void put(struct fake *f, const void *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		f->data[(f->head + i) % DATA] = ((const unsigned char *)buf)[i];
	f->head += n;
}

/* A record of `size` bytes: header then a byte pattern seeded by `seed`. */
static void put_record(struct fake *f, uint32_t type, uint16_t size, unsigned seed)
{
	struct perf_event_header h = { type, 0, size };
	unsigned char body[1024];

	assert_true(size >= 8 && (size_t)size - 8 <= sizeof(body));
	for (size_t i = 0; i < (size_t)size - 8; i++)
		body[i] = (unsigned char)(seed + i);
	put(f, &h, sizeof(h));
	put(f, body, size - 8u);
}

static void publish(struct fake *f)
{
	f->meta->data_head = f->head;
}

static void check_record(const struct perf_event_header *h, uint32_t type,
			 uint16_t size, unsigned seed)
{
	const unsigned char *b = (const unsigned char *)(h + 1);

	assert_int_equal(h->type, type);
	assert_int_equal(h->size, size);
	for (size_t i = 0; i < (size_t)size - 8; i++)
		assert_int_equal(b[i], (unsigned char)(seed + i));
}

static void test_plain_records(void **state)
{
	struct fake f;
	struct rec_ring r;
	const struct perf_event_header *h;

	(void)state;
	fake_init(&f, 0);
	assert_int_equal(rec_ring_init_mem(&r, f.mem, PAGE, DATA), 0);
	assert_int_equal(rec_ring_read_begin(&r), 0);
	assert_int_equal(rec_ring_next(&r, &h), 0);

	put_record(&f, PERF_RECORD_SAMPLE, 48, 1);
	put_record(&f, PERF_RECORD_SWITCH, 8, 0);     /* header only: valid */
	put_record(&f, PERF_RECORD_COMM, 40, 7);
	publish(&f);
	assert_int_equal(rec_ring_read_begin(&r), 96);
	assert_int_equal(rec_ring_next(&r, &h), 1);
	check_record(h, PERF_RECORD_SAMPLE, 48, 1);
	assert_ptr_equal(h, f.data);   /* contiguous: no copy */
	assert_int_equal(rec_ring_next(&r, &h), 1);
	check_record(h, PERF_RECORD_SWITCH, 8, 0);
	assert_int_equal(rec_ring_next(&r, &h), 1);
	check_record(h, PERF_RECORD_COMM, 40, 7);
	assert_int_equal(rec_ring_next(&r, &h), 0);
	/* the tail moves only when the drain is done */
	assert_int_equal(f.meta->data_tail, 0);
	rec_ring_read_done(&r);
	assert_int_equal(f.meta->data_tail, 96);
	assert_int_equal(r.bytes, 96);

	/* more data later: the next drain starts where the last one ended */
	put_record(&f, PERF_RECORD_EXIT, 48, 3);
	publish(&f);
	assert_int_equal(rec_ring_read_begin(&r), 48);
	assert_int_equal(rec_ring_next(&r, &h), 1);
	check_record(h, PERF_RECORD_EXIT, 48, 3);
	rec_ring_read_done(&r);
	assert_int_equal(f.meta->data_tail, 144);
	rec_ring_release(&r);
	free(f.mem);
}

static void test_wrapped_record(void **state)
{
	struct fake f;
	struct rec_ring r;
	const struct perf_event_header *h;

	(void)state;
	/* start 16 bytes before the end: a 64-byte record wraps */
	fake_init(&f, DATA - 16 + 10 * DATA);
	assert_int_equal(rec_ring_init_mem(&r, f.mem, PAGE, DATA), 0);
	put_record(&f, PERF_RECORD_SAMPLE, 64, 9);
	put_record(&f, PERF_RECORD_MMAP2, 120, 50);
	publish(&f);
	assert_int_equal(rec_ring_read_begin(&r), 184);
	assert_int_equal(rec_ring_next(&r, &h), 1);
	check_record(h, PERF_RECORD_SAMPLE, 64, 9);
	assert_ptr_not_equal(h, f.data + DATA - 16);   /* bounce copy */
	assert_int_equal(rec_ring_next(&r, &h), 1);
	check_record(h, PERF_RECORD_MMAP2, 120, 50);
	assert_int_equal(rec_ring_next(&r, &h), 0);
	rec_ring_read_done(&r);
	assert_int_equal(f.meta->data_tail, f.head);
	rec_ring_release(&r);
	free(f.mem);
}

/* peek leaves the record in place (a wrapped one too), advance moves past
 * it; the tail and the bytes count only what was advanced past. */
static void test_peek_advance(void **state)
{
	struct fake f;
	struct rec_ring r;
	const struct perf_event_header *h, *h2;

	(void)state;
	fake_init(&f, DATA - 16);
	assert_int_equal(rec_ring_init_mem(&r, f.mem, PAGE, DATA), 0);
	rec_ring_advance(&r);                          /* nothing peeked */
	put_record(&f, PERF_RECORD_SAMPLE, 64, 9);     /* wraps */
	put_record(&f, PERF_RECORD_COMM, 40, 7);
	publish(&f);
	assert_int_equal(rec_ring_read_begin(&r), 104);
	assert_int_equal(rec_ring_peek(&r, &h), 1);
	check_record(h, PERF_RECORD_SAMPLE, 64, 9);
	assert_int_equal(rec_ring_peek(&r, &h2), 1);
	check_record(h2, PERF_RECORD_SAMPLE, 64, 9);
	assert_int_equal(r.bytes, 0);
	rec_ring_advance(&r);
	rec_ring_advance(&r);                          /* once per peek */
	assert_int_equal(r.bytes, 64);
	assert_int_equal(rec_ring_peek(&r, &h), 1);
	check_record(h, PERF_RECORD_COMM, 40, 7);
	rec_ring_read_done(&r);
	assert_int_equal(f.meta->data_tail, DATA - 16 + 64);
	/* next = peek + advance */
	assert_int_equal(rec_ring_next(&r, &h), 1);
	check_record(h, PERF_RECORD_COMM, 40, 7);
	assert_int_equal(rec_ring_peek(&r, &h), 0);
	rec_ring_read_done(&r);
	assert_int_equal(f.meta->data_tail, f.head);
	rec_ring_release(&r);
	free(f.mem);
}

static void test_wrapped_header(void **state)
{
	struct fake f;
	struct rec_ring r;
	const struct perf_event_header *h;

	(void)state;
	/* the 8-byte header itself is split 4 + 4 across the end */
	fake_init(&f, DATA - 8);
	put_record(&f, PERF_RECORD_COMM, 8, 0);
	publish(&f);
	assert_int_equal(rec_ring_init_mem(&r, f.mem, PAGE, DATA), 0);
	/* a record ending exactly at the end, then one from offset 0 */
	assert_int_equal(rec_ring_read_begin(&r), 8);
	assert_int_equal(rec_ring_next(&r, &h), 1);
	check_record(h, PERF_RECORD_COMM, 8, 0);
	rec_ring_read_done(&r);
	rec_ring_release(&r);
	free(f.mem);

	fake_init(&f, DATA - 4);
	put_record(&f, PERF_RECORD_FORK, 40, 77);
	publish(&f);
	assert_int_equal(rec_ring_init_mem(&r, f.mem, PAGE, DATA), 0);
	assert_int_equal(rec_ring_read_begin(&r), 40);
	assert_int_equal(rec_ring_next(&r, &h), 1);
	check_record(h, PERF_RECORD_FORK, 40, 77);
	rec_ring_release(&r);
	free(f.mem);
}

static void test_full_ring_of_records(void **state)
{
	struct fake f;
	struct rec_ring r;
	const struct perf_event_header *h;
	unsigned n = 0;

	(void)state;
	/* exactly DATA bytes outstanding (head - tail == size) is legal */
	fake_init(&f, 100 * 8);
	for (unsigned i = 0; i < DATA / 32; i++)
		put_record(&f, PERF_RECORD_SAMPLE, 32, i);
	publish(&f);
	assert_int_equal(rec_ring_init_mem(&r, f.mem, PAGE, DATA), 0);
	assert_int_equal(rec_ring_read_begin(&r), DATA);
	while (rec_ring_next(&r, &h) == 1) {
		check_record(h, PERF_RECORD_SAMPLE, 32, n);
		n++;
	}
	assert_int_equal(n, DATA / 32);
	assert_int_equal(r.error, 0);
	rec_ring_release(&r);
	free(f.mem);
}

/* Corrupt headers: the ring stops with an error, stays stopped, and the
 * tail never moves past the bad record. */
static void corrupt_case(uint16_t bad_size, uint64_t start)
{
	struct fake f;
	struct rec_ring r;
	const struct perf_event_header *h;
	struct perf_event_header bad = { PERF_RECORD_SAMPLE, 0, bad_size };

	fake_init(&f, start);
	put_record(&f, PERF_RECORD_SAMPLE, 24, 5);
	put(&f, &bad, sizeof(bad));
	put_record(&f, PERF_RECORD_SAMPLE, 24, 6);
	publish(&f);
	assert_int_equal(rec_ring_init_mem(&r, f.mem, PAGE, DATA), 0);
	rec_ring_read_begin(&r);
	assert_int_equal(rec_ring_next(&r, &h), 1);
	check_record(h, PERF_RECORD_SAMPLE, 24, 5);
	assert_int_equal(rec_ring_next(&r, &h), -EBADMSG);
	assert_int_equal(r.error, -EBADMSG);
	/* stopped: every later call fails at once */
	for (int i = 0; i < 3; i++)
		assert_int_equal(rec_ring_next(&r, &h), -EBADMSG);
	assert_int_equal(rec_ring_read_begin(&r), 0);
	rec_ring_read_done(&r);
	assert_int_equal(f.meta->data_tail, start + 24);
	rec_ring_release(&r);
	free(f.mem);
}

static void test_corrupt_sizes(void **state)
{
	(void)state;
	corrupt_case(0, 0);            /* size 0 would loop forever */
	corrupt_case(4, 0);            /* smaller than a header */
	corrupt_case(7, DATA - 24);    /* ... also when wrapping */
	corrupt_case(DATA + 8, 0);     /* larger than the ring */
	corrupt_case(400, 0);          /* runs past data_head */
}

static void test_head_beyond_ring(void **state)
{
	struct fake f;
	struct rec_ring r;
	const struct perf_event_header *h;

	(void)state;
	fake_init(&f, 0);
	assert_int_equal(rec_ring_init_mem(&r, f.mem, PAGE, DATA), 0);
	f.meta->data_head = DATA + 8;   /* more than a ring's worth unread */
	assert_int_equal(rec_ring_read_begin(&r), 0);
	assert_int_equal(rec_ring_next(&r, &h), -EBADMSG);
	rec_ring_release(&r);

	/* a tail of fewer than 8 bytes before head is also corrupt */
	f.meta->data_head = 4;
	f.meta->data_tail = 0;
	assert_int_equal(rec_ring_init_mem(&r, f.mem, PAGE, DATA), 0);
	assert_int_equal(rec_ring_read_begin(&r), 4);
	assert_int_equal(rec_ring_next(&r, &h), -EBADMSG);
	rec_ring_release(&r);
	free(f.mem);
}

static void test_bad_layout(void **state)
{
	struct fake f;
	struct rec_ring r;

	(void)state;
	fake_init(&f, 0);
	assert_int_equal(rec_ring_init_mem(&r, f.mem, PAGE, 300), -EINVAL);
	assert_int_equal(rec_ring_init_mem(&r, f.mem, PAGE, 0), -EINVAL);
	/* data_offset from the kernel wins over the page size */
	f.meta->data_offset = 256;
	assert_int_equal(rec_ring_init_mem(&r, f.mem, PAGE, 256), 0);
	assert_ptr_equal(r.data, f.mem + 256);
	rec_ring_release(&r);
	free(f.mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_records),
		cmocka_unit_test(test_wrapped_record),
		cmocka_unit_test(test_peek_advance),
		cmocka_unit_test(test_wrapped_header),
		cmocka_unit_test(test_full_ring_of_records),
		cmocka_unit_test(test_corrupt_sizes),
		cmocka_unit_test(test_head_beyond_ring),
		cmocka_unit_test(test_bad_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
