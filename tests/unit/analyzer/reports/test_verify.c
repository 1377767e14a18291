/*
 * test_verify.c - `verify` of concatenated files (`cat a.prec b.prec`):
 * exit 0 when every part is whole, one row per part whose frames and
 * packets are those of the file it was, and a torn, damaged or index-less
 * part named by its number and offset while the others stay ok.
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

/* Four different recordings: the golden trace, the same by kind and twice
 * as long, with off-CPU data in small frames, and one left without index
 * (a killed recorder's). */
enum { GOLDEN, BYKIND, OFFCPU, NOINDEX, NFILES };

static const char *dir;
static char *buf[NFILES];
static size_t len[NFILES];
static long packets[NFILES], frames[NFILES];

/* "key,N" of verify --csv. */
static long csv_num(const char *csv, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), "\n%s,", key);
	const char *p = strstr(csv, k);
	return p ? strtol(p + strlen(k), NULL, 10) : -1;
}

static int setup(void **state)
{
	static const char *names[NFILES] = { "golden", "bykind", "offcpu", "noindex" };
	(void)state;
	dir = anatest_tmpdir("verify");
	if (!dir)
		return -1;
	for (int i = 0; i < NFILES; i++) {
		struct tracegen_opts o = TRACEGEN_OPTS_INIT;
		char path[4096], args[256];
		char *out = NULL;
		o.by_kind = i == BYKIND;
		o.repeat = i == BYKIND ? 2 : 1;
		o.offcpu = i == OFFCPU;
		o.frame_size = i == OFFCPU ? 500 : 0;
		o.write_index = i != NOINDEX;
		snprintf(path, sizeof(path), "%s/%s.prec", dir, names[i]);
		if (tracegen_write(path, &o))
			return -1;
		buf[i] = anatest_read(path, &len[i]);
		snprintf(args, sizeof(args), "verify %s.prec --csv", names[i]);
		int st = anatest_run(dir, args, &out, NULL, NULL);
		if (!buf[i] || !out || st != (i == NOINDEX ? 1 : 0))
			return -1;
		packets[i] = csv_num(out, "packets");
		frames[i] = csv_num(out, "frames");
		free(out);
		if (packets[i] <= 0 || frames[i] <= 0)
			return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < NFILES; i++)
		free(buf[i]);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Writes the files `which` one after the other as name; off[] where each
 * begins. The file `cut` (or -1) loses its last `cut_bytes`. */
static size_t write_cat(const char *name, const int *which, size_t n, size_t *off,
			int cut, size_t cut_bytes)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += len[which[i]];
	char *b = malloc(total);
	assert_non_null(b);
	total = 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = len[which[i]] - ((int)i == cut ? cut_bytes : 0);
		off[i] = total;
		memcpy(b + total, buf[which[i]], l);
		total += l;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(anatest_write(path, b, total), 0);
	free(b);
	return total;
}

struct row {
	size_t part;
	unsigned long long offset, bytes;
	long frames, damaged, packets;
	char index[16], torn[8], status[16];
};

/* The "parts" rows of verify --csv. */
static size_t parse_parts(const char *csv, struct row *rows, size_t max)
{
	const char *p = strstr(csv, "# parts\n");
	size_t n = 0;
	assert_non_null(p);
	p = strchr(p + 8, '\n');   /* past the column names */
	assert_non_null(p);
	while (p && p[1] && p[1] != '\n' && p[1] != '#' && n < max) {
		struct row *r = &rows[n];
		assert_int_equal(sscanf(p + 1, "%zu,%llu,%llu,%ld,%ld,%ld,%15[^,],%7[^,],%15[^\n]",
					&r->part, &r->offset, &r->bytes, &r->frames, &r->damaged,
					&r->packets, r->index, r->torn, r->status), 9);
		n++;
		p = strchr(p + 1, '\n');
	}
	return n;
}

/* 2, 3 and 4 whole files: exit 0, one ok row per file, with its offset,
 * size, frames and packets; the packets of the whole are their sum. */
static void test_whole(void **state)
{
	static const int sets[3][4] = {
		{ GOLDEN, BYKIND }, { BYKIND, OFFCPU, GOLDEN }, { GOLDEN, OFFCPU, BYKIND, GOLDEN },
	};
	(void)state;
	for (size_t s = 0; s < 3; s++) {
		size_t n = s + 2, off[4];
		write_cat("whole.prec", sets[s], n, off, -1, 0);
		char *out = NULL;
		struct row rows[8];
		long sum = 0, fsum = 0;
		assert_int_equal(anatest_run(dir, "verify whole.prec --csv", &out, NULL, NULL), 0);
		assert_int_equal(csv_num(out, "parts"), (long)n);
		assert_non_null(strstr(out, "\nstatus,ok\n"));
		assert_non_null(strstr(out, "\nindex,present\n"));
		assert_int_equal(parse_parts(out, rows, 8), n);
		for (size_t i = 0; i < n; i++) {
			int f = sets[s][i];
			assert_int_equal(rows[i].part, i + 1);
			assert_int_equal(rows[i].offset, off[i]);
			assert_int_equal(rows[i].bytes, len[f]);
			assert_int_equal(rows[i].frames, frames[f]);
			assert_int_equal(rows[i].packets, packets[f]);
			assert_int_equal(rows[i].damaged, 0);
			assert_string_equal(rows[i].index, "present");
			assert_string_equal(rows[i].torn, "no");
			assert_string_equal(rows[i].status, "ok");
			sum += packets[f];
			fsum += frames[f];
		}
		assert_int_equal(csv_num(out, "packets"), sum);
		assert_int_equal(csv_num(out, "frames"), fsum);
		assert_int_equal(csv_num(out, "good_frames"), fsum);
		free(out);
	}
	/* the text output says the same in a table */
	char *out = NULL;
	assert_int_equal(anatest_run(dir, "verify whole.prec", &out, NULL, NULL), 0);
	assert_non_null(strstr(out, "parts           4"));
	assert_non_null(strstr(out, "status          ok"));
	assert_non_null(strstr(out, "Parts"));
	free(out);
}


/* The "# NAME" section of a CSV document (malloc'd), up to the next one. */
static char *csv_section(const char *csv, const char *name)
{
	char h[64];
	snprintf(h, sizeof(h), "# %s\n", name);
	const char *p = strstr(csv, h);
	assert_non_null(p);
	const char *e = strstr(p + strlen(h), "\n# ");
	size_t n = e ? (size_t)(e - p) : strlen(p);
	char *r = malloc(n + 1);
	assert_non_null(r);
	memcpy(r, p, n);
	r[n] = '\0';
	return r;
}

/* info of a concatenation of two files of one recording lists its events
 * and groups once, as info of one of them does (the parts each describe
 * them again). */
static void test_info_events_once(void **state)
{
	static const int which[2] = { GOLDEN, BYKIND };
	size_t off[2];
	char *one = NULL, *cat = NULL;
	(void)state;
	write_cat("events.prec", which, 2, off, -1, 0);
	assert_int_equal(anatest_run(dir, "info golden.prec --csv", &one, NULL, NULL), 0);
	assert_int_equal(anatest_run(dir, "info events.prec --csv", &cat, NULL, NULL), 0);
	assert_non_null(one);
	assert_non_null(cat);
	const char *sections[] = { "events", "groups" };
	for (size_t i = 0; i < 2; i++) {
		char *a = csv_section(one, sections[i]), *b = csv_section(cat, sections[i]);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	free(one);
	free(cat);
}

/* The last part cut inside its index: that part is torn, by its number
 * and the torn record's offset; the first is ok; exit 1. */
static void test_torn_last_part(void **state)
{
	static const int which[] = { GOLDEN, BYKIND };
	size_t off[2];
	(void)state;
	write_cat("torn.prec", which, 2, off, 1, 100);
	char *out = NULL;
	struct row rows[4];
	assert_int_equal(anatest_run(dir, "verify torn.prec --csv", &out, NULL, NULL), 1);
	assert_non_null(strstr(out, "\nstatus,damaged\n"));
	assert_non_null(strstr(out, "\ntorn_tail,yes\n"));
	assert_int_equal(parse_parts(out, rows, 4), 2);
	assert_string_equal(rows[0].status, "ok");
	assert_string_equal(rows[1].status, "torn");
	assert_string_equal(rows[1].torn, "yes");
	assert_string_equal(rows[1].index, "rebuilt");
	/* cut inside the index: every frame is still there */
	assert_int_equal(rows[1].frames, frames[BYKIND]);
	assert_int_equal(rows[1].packets, packets[BYKIND]);
	assert_non_null(strstr(out, ",part 2: torn tail"));
	assert_non_null(strstr(out, ",part 2: no valid trailing index"));
	assert_null(strstr(out, ",part 1:"));
	free(out);
}

/* A first part cut in the middle of a data frame, then a whole file:
 * the first part is torn (no damage), the second whole by its index and
 * read entirely. */
static void test_torn_first_part(void **state)
{
	static const int which[] = { OFFCPU, GOLDEN };
	size_t off[2];
	(void)state;
	/* the middle of OFFCPU's last data frame */
	struct prec_reader *r = prec_reader_open_mem(buf[OFFCPU], len[OFFCPU], NULL);
	const struct prec_frame_info *fi;
	size_t nf;
	assert_int_equal(prec_reader_index(r, &fi, &nf), 0);
	size_t cut = len[OFFCPU] - (size_t)(fi[nf - 1].data_offset + fi[nf - 1].compressed_size / 2);
	uint64_t torn_at = fi[nf - 1].offset;
	prec_reader_free(r);
	write_cat("tornfirst.prec", which, 2, off, 0, cut);

	char *out = NULL;
	struct row rows[4];
	assert_int_equal(anatest_run(dir, "verify tornfirst.prec --csv", &out, NULL, NULL), 1);
	assert_int_equal(parse_parts(out, rows, 4), 2);
	assert_string_equal(rows[0].status, "torn");
	assert_int_equal(rows[0].frames, frames[OFFCPU] - 1);
	assert_int_equal(rows[0].damaged, 0);
	assert_string_equal(rows[1].status, "ok");
	assert_int_equal(rows[1].offset, off[1]);
	assert_int_equal(rows[1].packets, packets[GOLDEN]);
	char want[64];
	snprintf(want, sizeof(want), "\n%llu,part 1: torn tail", (unsigned long long)torn_at);
	assert_non_null(strstr(out, want));
	assert_int_equal(csv_num(out, "damaged_frames"), 0);
	free(out);
}

/* A flipped byte in a data frame of the middle part: that part is
 * damaged, named with the frame's offset in the concatenation; the parts
 * around it are ok. */
static void test_damaged_middle_part(void **state)
{
	static const int which[] = { GOLDEN, BYKIND, OFFCPU };
	size_t off[3];
	(void)state;
	size_t total = write_cat("damaged.prec", which, 3, off, -1, 0);
	struct prec_reader *r = prec_reader_open_mem(buf[BYKIND], len[BYKIND], NULL);
	const struct prec_frame_info *fi, *victim = NULL;
	size_t nf;
	assert_int_equal(prec_reader_index(r, &fi, &nf), 0);
	for (size_t i = 0; i < nf && !victim; i++)
		if (fi[i].packets > 10)
			victim = &fi[i];
	assert_non_null(victim);
	char path[4096];
	snprintf(path, sizeof(path), "%s/damaged.prec", dir);
	size_t l;
	char *b = anatest_read(path, &l);
	assert_int_equal(l, total);
	b[off[1] + victim->data_offset + victim->compressed_size / 2] ^= 0x5a;
	assert_int_equal(anatest_write(path, b, l), 0);
	free(b);

	char *out = NULL;
	struct row rows[4];
	assert_int_equal(anatest_run(dir, "verify damaged.prec --csv", &out, NULL, NULL), 1);
	assert_int_equal(parse_parts(out, rows, 4), 3);
	assert_string_equal(rows[0].status, "ok");
	assert_string_equal(rows[1].status, "damaged");
	assert_int_equal(rows[1].damaged, 1);
	assert_string_equal(rows[2].status, "ok");
	assert_int_equal(csv_num(out, "damaged_frames"), 1);
	char want[64];
	snprintf(want, sizeof(want), "\n%llu,part 2: frame ",
		 (unsigned long long)(off[1] + victim->offset));
	assert_non_null(strstr(out, want));
	free(out);
	prec_reader_free(r);
}

/* A part without index (a killed recorder's file) between whole ones:
 * walked, all its frames read; named as the one not ended cleanly. */
static void test_part_without_index(void **state)
{
	static const int which[] = { GOLDEN, NOINDEX, BYKIND };
	size_t off[3];
	(void)state;
	write_cat("noindex.prec", which, 3, off, -1, 0);
	char *out = NULL;
	struct row rows[4];
	assert_int_equal(anatest_run(dir, "verify noindex.prec --csv", &out, NULL, NULL), 1);
	assert_int_equal(parse_parts(out, rows, 4), 3);
	assert_string_equal(rows[0].status, "ok");
	assert_string_equal(rows[1].status, "damaged");
	assert_string_equal(rows[1].index, "rebuilt");
	assert_string_equal(rows[1].torn, "no");
	assert_int_equal(rows[1].frames, frames[NOINDEX]);
	assert_int_equal(rows[1].packets, packets[NOINDEX]);
	assert_string_equal(rows[2].status, "ok");
	assert_string_equal(rows[2].index, "present");
	assert_int_equal(csv_num(out, "packets"),
			 packets[GOLDEN] + packets[NOINDEX] + packets[BYKIND]);
	char want[96];
	snprintf(want, sizeof(want), "\n%zu,part 2: no valid trailing index", off[1]);
	assert_non_null(strstr(out, want));
	assert_int_equal(csv_num(out, "damaged_frames"), 0);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_info_events_once),
		cmocka_unit_test(test_torn_last_part),
		cmocka_unit_test(test_torn_first_part),
		cmocka_unit_test(test_damaged_middle_part),
		cmocka_unit_test(test_part_without_index),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
