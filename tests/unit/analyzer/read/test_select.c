/*
 * test_select.c - which frames an analyzer pass reads (format 1.1 frame
 * kinds, --time windows) and the counts a report defers to its own pass.
 *
 * The golden timeline written on streams by kind (tracegen's by_kind) in
 * small frames: a pass over samples must read every frame that holds a
 * sample and none that does not; the same timeline as format 1.0 wrote it
 * (tests/golden/v1.0/golden.prec: no kinds recorded) is read whole. A
 * report session whose pass 1 leaves the samples to the report's pass
 * ends with the counts of a session that read everything in pass 1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyzer/read/trace.h"
#include "lib/anatest.h"
#include "lib/tracegen.h"

#define MS 1000000ull
#define K_SAMPLE PREC_KIND(PERFREC__PACKET__DATA_SAMPLE)
#define K_SWITCH PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH)
#define K_INTERNED PREC_KIND(PERFREC__PACKET__DATA_INTERNED)

static const char *dir;
static char bykind[4200], mixed[4200];

static int setup(void **state)
{
	(void)state;
	if (!(dir = anatest_tmpdir("select")))
		return -1;
	struct tracegen_opts o = TRACEGEN_OPTS_INIT;
	o.frame_size = 600;   /* several frames per stream and 10 ms */
	snprintf(mixed, sizeof(mixed), "%s/mixed.prec", dir);
	if (tracegen_write(mixed, &o))
		return -1;
	o.by_kind = 1;
	snprintf(bykind, sizeof(bykind), "%s/bykind.prec", dir);
	return tracegen_write(bykind, &o) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct ana_trace *open_session(const char *path, const struct ana_trace_opts *so)
{
	struct ana_trace *s;
	assert_int_equal(ana_trace_open(&s, path, so), 0);
	return s;
}

static int count_cb(void *ctx, const struct prec_packet *p)
{
	(void)p;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* Frames by kind: the selection is exactly the frames listing a wanted
 * kind, whatever InternedData they hold. */
static void test_kinds(void **state)
{
	(void)state;
	struct ana_trace_opts so = { .jobs = 1 };
	struct ana_trace *s = open_session(bykind, &so);
	const struct prec_frame_info *sel;
	size_t n, with_samples = 0;
	assert_true(s->nframes > 10);
	for (size_t i = 0; i < s->nframes; i++) {
		assert_true(s->frames[i].kinds != 0);   /* 1.1: recorded */
		with_samples += !!(s->frames[i].kinds & K_SAMPLE);
		/* by kind: samples never share a frame with switches */
		assert_false((s->frames[i].kinds & K_SAMPLE) && (s->frames[i].kinds & K_SWITCH));
	}
	assert_true(with_samples > 0 && with_samples < s->nframes);

	assert_int_equal(ana_trace_select(s, K_SAMPLE | K_INTERNED, 0, 0, &sel, &n), 0);
	assert_int_equal(n, with_samples);
	for (size_t i = 0; i < n; i++)
		assert_true(sel[i].kinds & K_SAMPLE);
	/* in file order */
	for (size_t i = 1; i < n; i++)
		assert_true(sel[i].offset > sel[i - 1].offset);
	assert_ptr_not_equal(sel, s->frames);
	free((void *)sel);

	/* 0 = every kind: the list itself */
	assert_int_equal(ana_trace_select(s, 0, 0, 0, &sel, &n), 0);
	assert_ptr_equal(sel, s->frames);
	assert_int_equal(n, s->nframes);
	ana_trace_free(s);
}

/* A --time window keeps the frames that meet it and the untimed ones. */
static void test_window(void **state)
{
	(void)state;
	struct ana_trace_opts so = { .jobs = 1 };
	struct ana_trace *s = open_session(bykind, &so);
	uint64_t lo = TRACEGEN_START_NS + 30 * MS, hi = TRACEGEN_START_NS + 40 * MS;
	ana_trace_set_window(s, lo, hi);
	const struct prec_frame_info *sel;
	size_t n, want = 0;
	for (size_t i = 0; i < s->nframes; i++) {
		const struct prec_frame_info *fi = &s->frames[i];
		want += (fi->kinds & K_SAMPLE) &&
			((!fi->t_min && !fi->t_max) || (fi->t_max >= lo && fi->t_min <= hi));
	}
	assert_int_equal(ana_trace_select(s, K_SAMPLE, 0, 1, &sel, &n), 0);
	assert_int_equal(n, want);
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++)
		assert_true(sel[i].t_max >= lo && sel[i].t_min <= hi);
	free((void *)sel);
	ana_trace_free(s);
}

/* A format 1.0 file says nothing about kinds: every frame is read. */
static void test_v10_reads_all(void **state)
{
	(void)state;
	char path[4200];
	snprintf(path, sizeof(path), "%s/tests/golden/v1.0/golden.prec", PERFREC_SOURCE_DIR);
	struct ana_trace_opts so = { .jobs = 1 };
	struct ana_trace *s = open_session(path, &so);
	const struct prec_frame_info *sel;
	size_t n;
	struct prec_reader_stats rs;
	prec_reader_stats(s->reader, &rs);
	assert_int_equal(rs.version_minor, 0);
	for (size_t i = 0; i < s->nframes; i++)
		assert_int_equal(s->frames[i].kinds, 0);
	assert_int_equal(ana_trace_select(s, K_SAMPLE, 0, 0, &sel, &n), 0);
	assert_ptr_equal(sel, s->frames);
	assert_int_equal(n, s->nframes);
	ana_trace_free(s);
}

/* Deferred samples: pass 1 leaves them, the report's pass counts them
 * once, and the summary equals reading everything up front. Both
 * layouts, serial and parallel. */
static void check_deferred(const char *path, int jobs)
{
	struct ana_trace_opts full = { .jobs = jobs };
	struct ana_trace *a = open_session(path, &full);
	struct ana_trace_opts so = { .jobs = jobs,
		.pass1_kinds = PREC_KINDS_ALL & ~K_SWITCH, .deferred_kinds = K_SAMPLE };
	struct ana_trace *b = open_session(path, &so);
	uint64_t seen = 0;

	assert_int_equal(a->samples, 80);   /* tracegen's timeline */
	assert_int_equal(b->samples, 0);
	/* the time range is whole before the samples are read */
	assert_int_equal(b->t_min, a->t_min);
	assert_int_equal(b->t_max, a->t_max);
	/* a windowed pass does not see every sample: it counts nothing */
	ana_trace_set_window(b, a->t_min, a->t_min + 20 * MS);
	ana_trace_set_kinds(b, K_SAMPLE);
	assert_int_equal(ana_trace_scan(b, "test", count_cb, &seen), 0);
	assert_true(seen > 0 && seen < 80);
	assert_int_equal(b->samples, 0);
	/* the whole pass counts them, once */
	b->windowed = 0;
	seen = 0;
	assert_int_equal(ana_trace_scan(b, "test", count_cb, &seen), 0);
	assert_int_equal(seen, 80);
	assert_int_equal(b->samples, 80);
	assert_int_equal(b->kind_count[PERFREC__PACKET__DATA_SAMPLE],
			 a->kind_count[PERFREC__PACKET__DATA_SAMPLE]);
	seen = 0;
	assert_int_equal(ana_trace_scan(b, "test", count_cb, &seen), 0);
	assert_int_equal(b->samples, 80);
	ana_trace_free(a);
	ana_trace_free(b);
}

static void test_deferred(void **state)
{
	(void)state;
	check_deferred(bykind, 1);
	check_deferred(bykind, 3);
	check_deferred(mixed, 1);
	check_deferred(mixed, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_v10_reads_all),
		cmocka_unit_test(test_deferred),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
