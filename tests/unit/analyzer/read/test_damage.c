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

#include <zstd.h>

#include "format/layout.h"
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

/* Every byte of one frame-info record flipped in a file that has its
 * index: the readers of the other commands take the index and never read
 * that record, so only verify finds it. Each flip must make verify exit 1
 * and name the record's offset; the other commands read every packet. */
static void test_flipped_info_indexed(void **state)
{
	(void)state;
	const struct prec_frame_info *victim = &frames[nframes / 2];
	size_t size = (size_t)(victim->data_offset - victim->offset), missed = 0;
	char *buf = malloc(golden_len), where[64], *out = NULL, *err = NULL;
	assert_non_null(buf);
	snprintf(where, sizeof(where), "%llu", (unsigned long long)victim->offset);
	for (size_t i = 0; i < size; i++) {
		memcpy(buf, golden, golden_len);
		buf[victim->offset + i] ^= 0x5a;
		write_variant("info.prec", buf, golden_len);
		int st = anatest_run(dir, "verify info.prec", &out, NULL, NULL);
		if (st != 1 || !strstr(out, "status          damaged") || !strstr(out, where) ||
		    !strstr(out, "index           present")) {
			missed++;
			print_message("flip of record byte %zu not reported:\n%s", i, out);
		}
		free(out);
	}
	print_message("frame-info flips reported by verify: %zu of %zu\n", size - missed, size);
	assert_int_equal(missed, 0);
	/* the others read on: the index names the frame */
	assert_int_equal(anatest_run(dir, "report info.prec --csv", &out, NULL, &err), 0);
	assert_int_equal(shown(out), 80);
	free(out);
	free(err);
	free(buf);
}

/* One flipped bit anywhere in the 28-byte file header: the file reads
 * whole, the other commands warn once, verify exits 1 and names it. */
static void test_header_damage(void **state)
{
	(void)state;
	char *buf = malloc(golden_len), *out = NULL, *err = NULL;
	assert_non_null(buf);
	for (size_t bit = 0; bit < 28 * 8; bit += 13) {
		memcpy(buf, golden, golden_len);
		buf[bit / 8] ^= (char)(1u << (bit % 8));
		write_variant("header.prec", buf, golden_len);
		assert_int_equal(anatest_run(dir, "report header.prec --csv", &out, NULL, &err), 0);
		assert_int_equal(shown(out), 80);
		const char *w = strstr(err, "warning: damaged file header");
		assert_non_null(w);
		assert_null(strstr(w + strlen("warning: damaged file header"), "damaged file header"));
		assert_null(strstr(err, "damaged frame"));           /* named as what it is */
		free(out);
		free(err);
		assert_int_equal(anatest_run(dir, "verify header.prec", &out, NULL, &err), 1);
		assert_non_null(strstr(out, "file header damaged"));
		free(out);
		free(err);
	}
	free(buf);
}

/* A decompression bomb appended to a whole file: a frame of 16 MiB of
 * empty packets in a few hundred bytes. Every command skips it without
 * decompressing it; verify names it by its offset. */
static void test_bomb(void **state)
{
	(void)state;
	const size_t raw = 16u << 20;
	char *content = calloc(1, raw);
	assert_non_null(content);
	for (size_t i = 0; i < raw; i += 2)
		content[i] = 0x0A;
	size_t zcap = ZSTD_compressBound(raw);
	char *buf = malloc(golden_len + 60 + zcap);
	assert_non_null(buf);
	memcpy(buf, golden, golden_len);
	/* a copy of the first frame's info record, sized for the bomb */
	const struct prec_frame_info *f0 = &frames[0];
	size_t ilen = (size_t)(f0->data_offset - f0->offset), at = golden_len;
	size_t zn = ZSTD_compress(buf + at + ilen, zcap, content, raw, 3);
	assert_false(ZSTD_isError(zn));
	memcpy(buf + at, golden + f0->offset, ilen);
	uint8_t *p = (uint8_t *)buf + at + PREC_SKIP_HDR;
	size_t plen = ilen - PREC_SKIP_HDR;
	prec_put32(p + PREC_INFO_CSIZE, (uint32_t)zn);
	prec_put32(p + PREC_INFO_RSIZE, (uint32_t)raw);
	prec_put32(p + plen - 4, prec_crc32(p, plen - 4));
	write_variant("bomb.prec", buf, at + ilen + zn);
	char *out = NULL, *err = NULL, where[64];
	snprintf(where, sizeof(where), "%zu", at);
	assert_int_equal(anatest_run(dir, "verify bomb.prec", &out, NULL, &err), 1);
	assert_non_null(strstr(out, where));
	assert_non_null(strstr(out, "decompression bomb"));
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "report bomb.prec --csv", &out, NULL, &err), 0);
	assert_int_equal(shown(out), 80);
	assert_non_null(strstr(err, "decompression bomb"));
	free(out);
	free(err);
	free(buf);
	free(content);
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
	/* said once: the reader's cause and the hint do not repeat each other */
	const char *said = strstr(err, "not a .prec file");
	assert_non_null(said);
	assert_null(strstr(said + 1, "not a .prec file"));
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
		cmocka_unit_test(test_flipped_info_indexed),
		cmocka_unit_test(test_header_damage),
		cmocka_unit_test(test_bomb),
		cmocka_unit_test(test_torn),
		cmocka_unit_test(test_every_cut),
		cmocka_unit_test(test_not_a_trace),
		cmocka_unit_test(test_usage_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
