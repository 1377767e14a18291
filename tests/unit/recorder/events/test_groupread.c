/*
 * test_groupread.c - recorder/groupread.c: decoding read_format buffers.
 *
 * Buffers are built here word by word in the layout of linux/perf_event.h
 * ("read_format"), independently of the decoder's own size arithmetic.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "recorder/events/groupread.h"

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif

#define RF_ALL (PERF_FORMAT_GROUP | PERF_FORMAT_ID | \
		PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

/* Words of a GROUP read; returns the number written. */
static size_t build_group(uint64_t *w, uint64_t rf, uint64_t nr,
			  uint64_t enabled, uint64_t running,
			  const uint64_t *values, const uint64_t *ids,
			  const uint64_t *lost)
{
	size_t n = 0;

	w[n++] = nr;
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		w[n++] = enabled;
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		w[n++] = running;
	for (uint64_t i = 0; i < nr; i++) {
		w[n++] = values[i];
		if (rf & PERF_FORMAT_ID)
			w[n++] = ids[i];
		if (rf & PERF_FORMAT_LOST)
			w[n++] = lost[i];
	}
	return n;
}

static void fill(uint64_t *values, uint64_t *ids, uint64_t *lost, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		values[i] = 1000003ull * (i + 1);
		ids[i] = 500 + 7 * i;
		lost[i] = i * 3;
	}
}

static void check_members(size_t nr, uint64_t rf)
{
	uint64_t values[80], ids[80], lost[80], w[3 + 3 * 80 + 4];
	struct rec_group_read gr;
	size_t words;
	long got;

	fill(values, ids, lost, nr);
	words = build_group(w, rf, nr, 2000000, 1500000, values, ids, lost);
	got = rec_group_read_parse(w, words * 8, rf, &gr);
	assert_int_equal(got, (long)(words * 8));
	assert_int_equal(rec_group_read_size(rf, (uint32_t)nr), words * 8);
	assert_int_equal(gr.nr, nr);
	assert_int_equal(gr.time_enabled, 2000000);
	assert_int_equal(gr.time_running, 1500000);
	assert_int_equal(gr.has_lost, !!(rf & PERF_FORMAT_LOST));
	for (size_t i = 0; i < nr; i++) {
		assert_int_equal(gr.values[i], values[i]);
		assert_int_equal(gr.ids[i], ids[i]);
		assert_int_equal(gr.lost[i], rf & PERF_FORMAT_LOST ? lost[i] : 0);
		assert_int_equal(rec_group_read_find(&gr, ids[i]), (int)i);
	}
}

static void group_1_to_64_members(void **state)
{
	(void)state;
	for (size_t nr = 1; nr <= REC_GROUP_MAX; nr++) {
		check_members(nr, RF_ALL);
		check_members(nr, RF_ALL | PERF_FORMAT_LOST);
	}
}

static void group_too_many_members(void **state)
{
	uint64_t w[4] = { REC_GROUP_MAX + 1, 1, 1, 0 };
	struct rec_group_read gr;

	(void)state;
	assert_int_equal(rec_group_read_parse(w, sizeof(w), RF_ALL, &gr),
			 -E2BIG);
	/* An absurd count must not wrap the size arithmetic. */
	w[0] = 1ull << 61;
	assert_int_equal(rec_group_read_parse(w, sizeof(w), RF_ALL, &gr),
			 -E2BIG);
	w[0] = UINT64_MAX;
	assert_int_equal(rec_group_read_parse(w, sizeof(w), RF_ALL, &gr),
			 -E2BIG);
}

static void short_buffers_einval(void **state)
{
	uint64_t values[16], ids[16], lost[16], w[3 + 3 * 16];
	struct rec_group_read gr;
	uint64_t rfs[] = { RF_ALL, RF_ALL | PERF_FORMAT_LOST,
			   PERF_FORMAT_GROUP, PERF_FORMAT_ID,
			   PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_LOST };

	(void)state;
	fill(values, ids, lost, 16);
	for (size_t r = 0; r < sizeof(rfs) / sizeof(rfs[0]); r++) {
		uint64_t rf = rfs[r];
		size_t words;

		if (rf & PERF_FORMAT_GROUP) {
			words = build_group(w, rf, 16, 9, 8, values, ids, lost);
		} else {
			words = 0;
			w[words++] = values[0];
			if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
				w[words++] = 9;
			if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
				w[words++] = 8;
			if (rf & PERF_FORMAT_ID)
				w[words++] = ids[0];
			if (rf & PERF_FORMAT_LOST)
				w[words++] = lost[0];
		}
		/* Every length short of the full read, byte by byte. */
		for (size_t len = 0; len < words * 8; len++)
			assert_int_equal(rec_group_read_parse(w, len, rf, &gr),
					 -EINVAL);
		assert_int_equal(rec_group_read_parse(w, words * 8, rf, &gr),
				 (long)(words * 8));
	}
}

static void no_group_layout(void **state)
{
	/* value, enabled, running, id, lost: times come before the id. */
	uint64_t w[5] = { 4242, 1000, 250, 77, 5 };
	uint64_t rf = PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
		      PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_LOST;
	struct rec_group_read gr;

	(void)state;
	assert_int_equal(rec_group_read_parse(w, sizeof(w), rf, &gr), 40);
	assert_int_equal(gr.nr, 1);
	assert_int_equal(gr.values[0], 4242);
	assert_int_equal(gr.time_enabled, 1000);
	assert_int_equal(gr.time_running, 250);
	assert_int_equal(gr.ids[0], 77);
	assert_int_equal(gr.lost[0], 5);
	assert_int_equal(rec_group_read_find(&gr, 77), 0);

	/* Without LOST: 32 bytes, lost stays 0. */
	rf &= ~(uint64_t)PERF_FORMAT_LOST;
	assert_int_equal(rec_group_read_parse(w, sizeof(w), rf, &gr), 32);
	assert_int_equal(gr.ids[0], 77);
	assert_int_equal(gr.lost[0], 0);
	assert_int_equal(gr.has_lost, 0);

	/* Only the value. */
	assert_int_equal(rec_group_read_parse(w, sizeof(w), 0, &gr), 8);
	assert_int_equal(gr.values[0], 4242);
	assert_int_equal(gr.has_id, 0);
	/* No ids read: nothing can be found by id, not even id 0. */
	assert_int_equal(rec_group_read_find(&gr, 0), -1);
}

static void group_without_times_or_ids(void **state)
{
	uint64_t w[4] = { 3, 11, 22, 33 };
	struct rec_group_read gr;

	(void)state;
	assert_int_equal(rec_group_read_parse(w, sizeof(w), PERF_FORMAT_GROUP,
					      &gr), 32);
	assert_int_equal(gr.nr, 3);
	assert_int_equal(gr.values[2], 33);
	assert_int_equal(gr.time_enabled, 0);
	assert_int_equal(rec_group_read_find(&gr, 0), -1);
}

/* Reading the fd of member 2 of {task-clock,page-faults,context-switches}
 * returns the leader first: the page-faults value must be found by its id,
 * and position 0 (the leader) must not be taken for it. */
static void member_read_maps_by_id(void **state)
{
	const uint64_t leader_id = 901, pf_id = 902, cs_id = 903;
	uint64_t values[3] = { 123456789, 4096, 17 };
	uint64_t ids[3] = { leader_id, pf_id, cs_id };
	uint64_t lost[3] = { 0, 0, 0 };
	uint64_t w[16];
	struct rec_group_read gr;
	size_t words;
	int i;

	(void)state;
	words = build_group(w, RF_ALL, 3, 1000, 1000, values, ids, lost);
	assert_int_equal(rec_group_read_parse(w, words * 8, RF_ALL, &gr),
			 (long)(words * 8));
	i = rec_group_read_find(&gr, pf_id);
	assert_int_equal(i, 1);
	assert_int_equal(gr.values[i], 4096);
	assert_int_not_equal(gr.values[0], 4096);
	i = rec_group_read_find(&gr, cs_id);
	assert_int_equal(gr.values[i], 17);
	assert_int_equal(rec_group_read_find(&gr, 904), -1);

	/* Same members, kernel order differs (a member was added first):
	 * find still follows the id, not the position. */
	uint64_t values2[3] = { 17, 123456789, 4096 };
	uint64_t ids2[3] = { cs_id, leader_id, pf_id };

	words = build_group(w, RF_ALL, 3, 1000, 1000, values2, ids2, lost);
	assert_int_equal(rec_group_read_parse(w, words * 8, RF_ALL, &gr),
			 (long)(words * 8));
	assert_int_equal(gr.values[rec_group_read_find(&gr, pf_id)], 4096);
	assert_int_equal(gr.values[rec_group_read_find(&gr, leader_id)],
			 123456789);
}

static void multiplexed_times_kept_raw(void **state)
{
	uint64_t values[2] = { 1000, 2000 }, ids[2] = { 1, 2 }, lost[2] = { 0 };
	uint64_t w[16];
	struct rec_group_read gr;
	size_t words;

	(void)state;
	/* time_running < time_enabled: the decoder does not scale. */
	words = build_group(w, RF_ALL, 2, 3000000, 1000000, values, ids, lost);
	assert_int_equal(rec_group_read_parse(w, words * 8, RF_ALL, &gr),
			 (long)(words * 8));
	assert_int_equal(gr.time_enabled, 3000000);
	assert_int_equal(gr.time_running, 1000000);
	assert_int_equal(gr.values[0], 1000);
	assert_int_equal(gr.values[1], 2000);
}

static void unaligned_and_trailing_bytes(void **state)
{
	uint64_t values[4], ids[4], lost[4], w[3 + 3 * 4];
	unsigned char buf[sizeof(w) + 16];
	struct rec_group_read gr;
	size_t words;

	(void)state;
	fill(values, ids, lost, 4);
	words = build_group(w, RF_ALL | PERF_FORMAT_LOST, 4, 50, 40, values,
			    ids, lost);
	/* Inside a sample the read sits at any offset, followed by more. */
	memset(buf, 0xee, sizeof(buf));
	memcpy(buf + 3, w, words * 8);
	assert_int_equal(rec_group_read_parse(buf + 3, words * 8 + 5,
					      RF_ALL | PERF_FORMAT_LOST, &gr),
			 (long)(words * 8));
	assert_int_equal(gr.values[3], values[3]);
	assert_int_equal(gr.lost[3], lost[3]);
	assert_int_equal(gr.ids[2], ids[2]);
}

static void size_formula(void **state)
{
	(void)state;
	assert_int_equal(rec_group_read_size(RF_ALL, 3), 8 * (3 + 3 * 2));
	assert_int_equal(rec_group_read_size(RF_ALL | PERF_FORMAT_LOST, 3),
			 8 * (3 + 3 * 3));
	assert_int_equal(rec_group_read_size(PERF_FORMAT_GROUP, 5), 8 * 6);
	assert_int_equal(rec_group_read_size(0, 99), 8);
	assert_int_equal(rec_group_read_size(PERF_FORMAT_ID, 99), 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(group_1_to_64_members),
		cmocka_unit_test(group_too_many_members),
		cmocka_unit_test(short_buffers_einval),
		cmocka_unit_test(no_group_layout),
		cmocka_unit_test(group_without_times_or_ids),
		cmocka_unit_test(member_read_maps_by_id),
		cmocka_unit_test(multiplexed_times_kept_raw),
		cmocka_unit_test(unaligned_and_trailing_bytes),
		cmocka_unit_test(size_formula),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
