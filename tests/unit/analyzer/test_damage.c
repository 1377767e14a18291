/*
 * test_damage.c - damaged and torn files: the analyzer says what was lost
 * and analyzes the rest; verify's exit status says whether a file is
 * whole; unreadable inputs get exit 2 and a message naming cause and fix.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/reader.h"
#include "lib/anatest.h"
#include "lib/tracegen.h"

static const char *dir;
static char *golden;
static size_t golden_len;
static struct prec_frame_info frames[64];
static size_t nframes;

static int setup(void **state)
{
	(void)state;
	dir = anatest_tmpdir("damage");
	if (!dir)
		return -1;
	char path[4096];
	snprintf(path, sizeof(path), "%s/golden.prec", dir);
	if (tracegen_write(path, NULL))
		return -1;
	golden = anatest_read(path, &golden_len);
	struct prec_reader *r = prec_reader_open(path, NULL);
	const struct prec_frame_info *fr;
	if (!golden || !r || prec_reader_index(r, &fr, &nframes) || nframes > 64)
		return -1;
	memcpy(frames, fr, nframes * sizeof(*fr));
	prec_reader_free(r);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(golden);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_variant(const char *name, const char *buf, size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(anatest_write(path, buf, len), 0);
}

/* "samples_shown,N" from report --csv. */
static long shown(const char *csv)
{
	const char *p = strstr(csv, "samples_shown,");
	return p ? strtol(p + 14, NULL, 10) : -1;
}

static void test_whole(void **state)
{
	(void)state;
	char *out = NULL;
	assert_int_equal(anatest_run(dir, "verify golden.prec", &out, NULL, NULL), 0);
	assert_non_null(strstr(out, "status          ok"));
	free(out);
}

/* A flipped byte inside one CPU frame's compressed data: that frame is
 * named, the rest is analyzed. */
static void test_flipped_byte(void **state)
{
	(void)state;
	const struct prec_frame_info *victim = NULL;
	for (size_t i = 0; i < nframes; i++)
		if (frames[i].stream == 1 && frames[i].packets > 10) {
			victim = &frames[i];
			break;
		}
	assert_non_null(victim);
	char *buf = malloc(golden_len);
	assert_non_null(buf);
	memcpy(buf, golden, golden_len);
	buf[victim->data_offset + victim->compressed_size / 2] ^= 0x5a;
	write_variant("flipped.prec", buf, golden_len);
	free(buf);

	char *out = NULL, *err = NULL;
	assert_int_equal(anatest_run(dir, "verify flipped.prec", &out, NULL, &err), 1);
	assert_non_null(strstr(out, "damaged_frames  1"));
	assert_non_null(strstr(out, "status          damaged"));
	char where[64];
	snprintf(where, sizeof(where), "%llu", (unsigned long long)victim->offset);
	assert_non_null(strstr(out, where));
	free(out);
	free(err);

	assert_int_equal(anatest_run(dir, "report flipped.prec --csv", &out, NULL, &err), 0);
	long n = shown(out);
	assert_true(n > 0 && n < 80);
	assert_non_null(strstr(err, "damaged frame at offset"));
	assert_non_null(strstr(out, "damaged_frames,1"));
	free(out);
	free(err);

	/* sched and dump go on too. */
	assert_int_equal(anatest_run(dir, "sched flipped.prec --csv", &out, NULL, &err), 0);
	assert_non_null(strstr(out, "switch_records,"));
	assert_null(strstr(out, "switch_records,26\n"));
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "dump flipped.prec", &out, NULL, &err), 0);
	assert_non_null(strstr(err, "damaged frame"));
	free(out);
	free(err);
}

/* Cut in the middle of the last frame: no index, torn tail; everything
 * before the cut is analyzed. */
static void test_torn(void **state)
{
	(void)state;
	const struct prec_frame_info *last = &frames[0];
	for (size_t i = 0; i < nframes; i++)
		if (frames[i].data_offset > last->data_offset)
			last = &frames[i];
	size_t cut = (size_t)(last->data_offset + last->compressed_size / 2);
	write_variant("torn.prec", golden, cut);

	char *out = NULL, *err = NULL;
	assert_int_equal(anatest_run(dir, "verify torn.prec", &out, NULL, &err), 1);
	assert_non_null(strstr(out, "torn_tail       yes"));
	assert_non_null(strstr(out, "torn tail"));
	assert_non_null(strstr(out, "index           rebuilt"));
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "report torn.prec --csv", &out, NULL, &err), 0);
	assert_non_null(strstr(err, "torn tail"));
	long n = shown(out);
	assert_true(n > 0 && n <= 80);
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "info torn.prec", &out, NULL, &err), 0);
	assert_non_null(strstr(out, "torn_tail            yes"));
	free(out);
	free(err);
}

/* Every prefix of the file: never a crash, exit 0 (analyzed) or 2 (not a
 * trace at all), never anything else. */
static void test_every_cut(void **state)
{
	(void)state;
	for (size_t cut = 0; cut < golden_len; cut += golden_len / 37 + 1) {
		write_variant("cut.prec", golden, cut);
		int st = anatest_run(dir, "report cut.prec --csv", NULL, NULL, NULL);
		assert_true(st == 0 || st == 2);
		st = anatest_run(dir, "sched cut.prec", NULL, NULL, NULL);
		assert_true(st == 0 || st == 2);
	}
}

static void test_not_a_trace(void **state)
{
	(void)state;
	write_variant("text.prec", "hello world, not a trace\n", 25);
	char *out = NULL, *err = NULL;
	assert_int_equal(anatest_run(dir, "report text.prec", &out, NULL, &err), 2);
	assert_non_null(strstr(err, "cannot read text.prec"));
	assert_non_null(strstr(err, "not a .prec file"));
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "info missing.prec", &out, NULL, &err), 2);
	assert_non_null(strstr(err, "check the path"));
	free(out);
	free(err);
}

static void test_usage_errors(void **state)
{
	(void)state;
	char *out = NULL, *err = NULL;
	assert_int_equal(anatest_run(dir, "report golden.prec --sort bogus", &out, NULL, &err), 2);
	assert_non_null(strstr(err, "keys are comm, pid, tid"));
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "report golden.prec --time 5", &out, NULL, &err), 2);
	assert_non_null(strstr(err, "START,END"));
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "report golden.prec --event nope", &out, NULL, &err), 2);
	assert_non_null(strstr(err, "events: cpu-clock, page-faults"));
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "counters golden.prec --hist", &out, NULL, &err), 2);
	assert_non_null(strstr(err, "does not apply"));
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "bogus golden.prec", &out, NULL, &err), 2);
	assert_non_null(strstr(err, "unknown command 'bogus'"));
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "sched --help", &out, NULL, &err), 0);
	assert_non_null(strstr(out, "usage: perfrec-analyze sched FILE"));
	assert_non_null(strstr(out, "--time START,END"));
	free(out);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_flipped_byte),
		cmocka_unit_test(test_torn),
		cmocka_unit_test(test_every_cut),
		cmocka_unit_test(test_not_a_trace),
		cmocka_unit_test(test_usage_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
