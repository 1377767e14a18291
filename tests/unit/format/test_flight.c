/*
 * test_flight.c - the flight-recorder sink (format/flight.h): the preamble
 * and the end are always kept, the window holds the newest frames within
 * the budget (dropped whole, counted), a saved file reads alone with a
 * valid index whatever was dropped, and bad byte streams are refused.
 */
#define FMT_NO_BUILDER
#include "fmt_helpers.h"

#include <stdbool.h>

#include "format/flight.h"
#include "format/index.h"
#include "format/layout.h"
#include "format/record.h"

/* Appends one sample (period = n, so the reader can tell which) on stream
 * st at time t, and cuts its frame at once. */
static void put(struct prec_writer *w, uint32_t st, uint64_t n, uint64_t t)
{
	Perfrec__Packet pkt;
	Perfrec__Sample s;

	fmt_sample(&pkt, &s, st, 7, 0x1000 + n, 0);
	s.period = n;
	assert_int_equal(prec_writer_append(w, st, &pkt, t), 0);
	assert_int_equal(prec_writer_flush(w), 0);
}

struct seen {
	uint64_t periods[4096];
	size_t n;
	struct prec_reader_stats st;
	size_t nframes;
};

static void read_all(const void *buf, size_t len, struct seen *sn)
{
	struct prec_reader *r = prec_reader_open_mem(buf, len, NULL);
	const struct prec_frame_info *fi;
	struct prec_packet p;
	int ret;

	assert_non_null(r);
	memset(sn, 0, sizeof(*sn));
	assert_int_equal(prec_reader_index(r, &fi, &sn->nframes), 0);
	while ((ret = prec_reader_next_packet(r, &p)) > 0)
		if (p.pkt->data_case == PERFREC__PACKET__DATA_SAMPLE && sn->n < 4096)
			sn->periods[sn->n++] = p.pkt->sample->period;
	assert_int_equal(ret, 0);
	prec_reader_stats(r, &sn->st);
	prec_reader_free(r);
}

static bool has(const struct seen *sn, uint64_t period)
{
	for (size_t i = 0; i < sn->n; i++)
		if (sn->periods[i] == period)
			return true;
	return false;
}

/* A stream of: 3 preamble frames (periods 1..3), 200 window frames
 * (1000..1199), 2 end frames (9000, 9001), closed with an index. */
static struct prec_sink *fill(uint64_t max, struct prec_flight_stats *st)
{
	struct prec_sink *s = prec_flight_new(max);
	struct prec_writer *w;

	assert_non_null(s);
	w = prec_writer_new(s, NULL);
	assert_non_null(w);
	for (uint64_t i = 1; i <= 3; i++)
		put(w, 0, i, 100 + i);
	assert_int_equal(prec_flight_arm(s), 0);
	for (uint64_t i = 0; i < 200; i++)
		put(w, 1 + (uint32_t)(i % 2), 1000 + i, 1000 + i);
	assert_int_equal(prec_flight_seal(s), 0);
	put(w, 0, 9000, 5000);
	put(w, 0, 9001, 5001);
	assert_int_equal(prec_writer_close(w), 0);
	prec_writer_free(w);
	assert_int_equal(prec_flight_stats(s, st), 0);
	return s;
}

static void test_keeps_newest(void **state)
{
	struct prec_flight_stats st;
	struct prec_sink *s = fill(8192, &st), *out = prec_sink_mem_new();
	struct seen *sn = malloc(sizeof(*sn));
	const void *b;
	size_t len;

	(void)state;
	assert_true(st.dropped_frames > 0);
	assert_true(st.dropped_frames < 200);
	assert_int_equal(st.frames, 3 + 200 - st.dropped_frames + 2);
	assert_int_equal(st.dropped_packets, st.dropped_frames);   /* one packet each */
	assert_int_equal(st.dropped_t_min, 1000);
	assert_int_equal(st.dropped_t_max, 1000 + st.dropped_frames - 1);
	assert_int_equal(st.window_t_min, 1000 + st.dropped_frames);

	assert_int_equal(prec_flight_save(s, out), 0);
	b = prec_sink_mem_data(out, &len);
	read_all(b, len, sn);
	assert_true(sn->st.index_present);
	assert_false(sn->st.torn);
	assert_int_equal(sn->st.damaged_frames, 0);
	assert_int_equal(sn->nframes, st.frames);
	for (uint64_t i = 1; i <= 3; i++)
		assert_true(has(sn, i));          /* preamble */
	assert_true(has(sn, 9000) && has(sn, 9001));   /* end */
	assert_true(has(sn, 1199));           /* newest window frame */
	assert_false(has(sn, 1000));          /* oldest: dropped */
	/* what is kept of the window is one unbroken run of the newest */
	for (uint64_t i = 1000 + st.dropped_frames; i < 1200; i++)
		assert_true(has(sn, i));
	assert_int_equal(sn->n, 3 + 2 + 200 - st.dropped_frames);
	free(sn);
	prec_sink_free(out);
	prec_sink_free(s);
}

static void test_large_budget_keeps_all(void **state)
{
	struct prec_flight_stats st;
	struct prec_sink *s = fill(64 << 20, &st), *out = prec_sink_mem_new();
	struct seen *sn = malloc(sizeof(*sn));
	const void *b;
	size_t len;

	(void)state;
	assert_int_equal(st.dropped_frames, 0);
	assert_int_equal(st.frames, 205);
	assert_int_equal(prec_flight_save(s, out), 0);
	b = prec_sink_mem_data(out, &len);
	read_all(b, len, sn);
	assert_true(sn->st.index_present);
	assert_int_equal(sn->n, 205);
	free(sn);
	prec_sink_free(out);
	prec_sink_free(s);
}

/* A budget smaller than one frame still keeps the newest frame. */
static void test_tiny_budget(void **state)
{
	struct prec_flight_stats st;
	struct prec_sink *s = fill(1, &st), *out = prec_sink_mem_new();
	struct seen *sn = malloc(sizeof(*sn));
	const void *b;
	size_t len;

	(void)state;
	assert_int_equal(st.dropped_frames, 199);
	assert_int_equal(prec_flight_save(s, out), 0);
	b = prec_sink_mem_data(out, &len);
	read_all(b, len, sn);
	assert_true(sn->st.index_present);
	assert_true(has(sn, 1199));
	assert_false(has(sn, 1198));
	assert_int_equal(sn->n, 6);
	free(sn);
	prec_sink_free(out);
	prec_sink_free(s);
}

/* Bytes handed over in odd pieces split into the same records. */
static void test_split_writes(void **state)
{
	struct prec_flight_stats st, st2;
	struct prec_sink *s = fill(1 << 20, &st), *copy = prec_sink_mem_new();
	struct prec_sink *s2 = prec_flight_new(1 << 20), *o1 = prec_sink_mem_new(),
			 *o2 = prec_sink_mem_new();
	const unsigned char *b;
	const void *x, *y;
	size_t len, lx, ly;

	(void)state;
	assert_int_equal(prec_flight_save(s, copy), 0);
	b = prec_sink_mem_data(copy, &len);
	for (size_t pos = 0; pos < len;) {
		size_t n = 1 + pos % 7;

		if (n > len - pos)
			n = len - pos;
		assert_int_equal(prec_sink_write(s2, b + pos, n), 0);
		pos += n;
	}
	assert_int_equal(prec_flight_stats(s2, &st2), 0);
	assert_int_equal(st2.frames, st.frames);
	assert_int_equal(prec_flight_save(s, o1), 0);
	assert_int_equal(prec_flight_save(s2, o2), 0);
	x = prec_sink_mem_data(o1, &lx);
	y = prec_sink_mem_data(o2, &ly);
	assert_int_equal(lx, ly);
	assert_memory_equal(x, y, lx);
	prec_sink_free(o1);
	prec_sink_free(o2);
	prec_sink_free(copy);
	prec_sink_free(s2);
	prec_sink_free(s);
}

static void test_refuses_garbage(void **state)
{
	struct prec_sink *s = prec_flight_new(1 << 20), *out = prec_sink_mem_new();
	static const char junk[] = "this is not a prec stream at all";

	(void)state;
	assert_int_equal(prec_flight_save(s, out), -EINVAL);   /* nothing yet */
	assert_true(prec_sink_write(s, junk, sizeof(junk)) < 0);
	assert_true(prec_sink_write(s, junk, 4) < 0);          /* sticky */
	assert_int_equal(prec_flight_arm(out), -EINVAL);       /* not a flight sink */
	prec_sink_free(out);
	prec_sink_free(s);
}

/* The shared index encoder writes what the writer used to. */
static void test_index_encode(void **state)
{
	struct prec_frame_info fi[2];
	struct prec_record rec;
	uint8_t *b;
	size_t len;

	(void)state;
	memset(fi, 0, sizeof(fi));
	fi[0].offset = 28;
	fi[0].data_offset = 80;
	fi[1].offset = 200;
	fi[1].data_offset = 252;
	assert_int_equal(prec_index_encode(fi, 2, 400, &b, &len), 0);
	assert_int_equal(len, 8 + 8 + 2 * PREC_IDX_ENTRY_SIZE + 4 + 16);
	assert_int_equal(prec_record_scan(b, len, 0, &rec), 1);
	assert_int_equal(rec.kind, PREC_RECORD_INDEX);
	assert_int_equal(rec.len, len);
	assert_memory_equal(b + len - 8, "PRECIDX\0", 8);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keeps_newest),
		cmocka_unit_test(test_large_budget_keeps_all),
		cmocka_unit_test(test_tiny_budget),
		cmocka_unit_test(test_split_writes),
		cmocka_unit_test(test_refuses_garbage),
		cmocka_unit_test(test_index_encode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
