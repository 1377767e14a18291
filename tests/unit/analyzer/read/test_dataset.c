/*
 * test_dataset.c - many files read as one (analyzer/read/dataset.c and the
 * commands over it).
 *
 * An archive written by tracegen: host A's session rotated into three
 * files of 100 ms (web.0-2), host B's into two, host C one file; a copy of
 * A's middle file and of B's first beside them (a `-o` copy and its
 * collector copy). Every golden file holds 80 samples (78 cpu-clock, 2
 * page-faults), so the counts are known without running the analyzer:
 * each sample once, by host 240/160/80.
 *
 * Windows across file boundaries are checked against counts worked out by
 * hand from tracegen.c's timeline (cpu-clock samples at k + 0.5 ms for the
 * task running on each CPU; page-faults at 3.2 and 33.2 ms):
 *   CPU0 runs a task in [0,10) [12,20) [20,30) [30,40) [50,60) ms,
 *   CPU1 in [0,5) [35,45) [55,70) ms.
 * Window 55..135 ms of host A: file 0 from 55 ms: CPU0 55.5..59.5 = 5,
 * CPU1 55.5..69.5 = 15; file 1 up to 35 ms: CPU0 10 + 8 + 10 + 5 = 33,
 * CPU1 5, page-faults 2. 60 in all, and file 2 is never opened.
 *
 * Hostile sets: a foreign file, an unreadable one, a symlink loop, a
 * damaged file among good ones, 10,000 tiny files.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyzer/read/dataset.h"
#include "analyzer/read/filter.h"
#include "format/error.h"
#include "format/reader.h"
#include "lib/anatest.h"
#include "lib/tracegen.h"

#define MS 1000000ull

static const char *dir;
static char arch[1024], local[1024];

static void gen(const char *path, const char *host, uint64_t offset_ms, int rotated)
{
	struct tracegen_opts o = TRACEGEN_OPTS_INIT;
	o.frame_size = 600;   /* many frames: windows select inside files */
	o.host = host;
	o.offset_ns = offset_ms * MS;
	o.rotated = rotated;
	assert_int_equal(tracegen_write(path, &o), 0);
}

static void sh(const char *fmt, ...)
{
	char cmd[9000];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	if (!(dir = anatest_tmpdir("dataset")))
		return -1;
	snprintf(arch, sizeof(arch), "%s/arch", dir);
	snprintf(local, sizeof(local), "%s/local", dir);
	char p[9000];
	snprintf(p, sizeof(p), "mkdir -p '%s/A' '%s/B' '%s/C' '%s'", arch, arch, arch, local);
	if (system(p))
		return -1;
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/A/web.%d.prec", arch, i);
		gen(p, "hostA", (uint64_t)i * 100, i < 2);
	}
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/B/db.%d.prec", arch, i);
		gen(p, "hostB", (uint64_t)i * 100, i < 1);
	}
	snprintf(p, sizeof(p), "%s/C/batch.prec", arch);
	gen(p, "hostC", 5000, 0);
	/* and a torn copy of C's file (a collector's copy cut short): the
	 * whole one is read */
	snprintf(p, sizeof(p), "cp '%s/A/web.1.prec' '%s/copy-a.prec' && "
		 "cp '%s/B/db.0.prec' '%s/copy-b.prec' && "
		 "head -c 3000 '%s/C/batch.prec' > '%s/torn-c.prec'", arch, local, arch, local,
		 arch, local);
	return system(p) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s'; rm -rf '%s'", dir, dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The number after "key," in CSV output of a kv section, or -1. */
static long long kv(const char *out, const char *key)
{
	char k[128];
	snprintf(k, sizeof(k), "\n%s,", key);
	const char *p = strstr(out, k);
	if (!p && !strncmp(out, k + 1, strlen(k + 1)))
		p = out - 1;
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

static void test_groups(void **state)
{
	(void)state;
	char *in[] = { arch, local };
	struct ana_dataset *ds;
	assert_int_equal(ana_dataset_open(&ds, in, 2, NULL), 0);
	assert_int_equal(ds->nfiles, 6);
	assert_int_equal(ds->nhosts, 3);
	assert_int_equal(ds->nsessions, 3);
	assert_int_equal(ds->ndups, 3);
	assert_int_equal(ds->nskipped, 0);
	for (size_t i = 0; i < ds->ndups; i++)
		if (strstr(ds->dups[i].path, "torn-c"))
			assert_non_null(strstr(ds->dups[i].kept, "C/batch.prec"));
	/* by host, then time; rotations share their session */
	assert_string_equal(ds->files[0].host, "hostA");
	assert_true(strstr(ds->files[0].path, "web.0.prec"));
	assert_true(strstr(ds->files[1].path, "web.1.prec") || strstr(ds->files[1].path, "copy-a"));
	assert_int_equal(ds->files[1].session_no, ds->files[0].session_no);
	assert_int_equal(ds->files[2].session_no, ds->files[0].session_no);
	assert_string_equal(ds->files[2].session, "web.0");
	assert_int_equal(ds->files[3].session_no, ds->files[4].session_no);
	assert_int_not_equal(ds->files[3].session_no, ds->files[2].session_no);
	assert_string_equal(ds->files[5].host, "hostC");
	assert_int_equal(ds->files[5].state, ANA_FILE_WHOLE);
	assert_int_equal(ds->files[0].end, ds->files[1].start);
	assert_int_equal(ds->files[0].state, ANA_FILE_WHOLE);
	assert_int_equal(ds->files[0].samples, 80);
	/* equal names are one pointer */
	assert_ptr_equal(ds->files[0].host, ds->files[2].host);
	assert_int_equal(ds->nevents, 5);
	ana_dataset_free(ds);
}

static void test_report_once(void **state)
{
	(void)state;
	char args[9000], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "report '%s' '%s' -s host --csv", arch, local);
	assert_int_equal(anatest_run(dir, args, &out, NULL, &err), 0);
	assert_int_equal(kv(out, "samples"), 480);
	assert_int_equal(kv(out, "samples_shown"), 480);
	assert_non_null(strstr(out, ",240,"));
	assert_non_null(strstr(out, ",hostA\n"));
	assert_non_null(strstr(out, ",160,"));
	assert_non_null(strstr(out, ",80,"));
	assert_non_null(strstr(err, "copy-a.prec holds the same data as"));
	assert_non_null(strstr(err, "copy-b.prec holds the same data as"));
	free(out);
	free(err);
	err = NULL;

	/* a pid means nothing without its host: the host joins the key */
	snprintf(args, sizeof(args), "report '%s' -s pid --csv", arch);
	assert_int_equal(anatest_run(dir, args, &out, NULL, NULL), 0);
	assert_non_null(strstr(out, "host,pid"));
	free(out);

	/* --host reads only that host's files */
	snprintf(args, sizeof(args), "report '%s' --host hostB,hostC -s host --csv", arch);
	assert_int_equal(anatest_run(dir, args, &out, NULL, NULL), 0);
	assert_int_equal(kv(out, "samples"), 240);
	assert_null(strstr(out, "hostA"));
	free(out);

	/* sched: the sums of the files' own */
	long long sum = 0;
	for (int i = 0; i < 3; i++) {
		snprintf(args, sizeof(args), "sched '%s/A/web.%d.prec' --csv", arch, i);
		assert_int_equal(anatest_run(dir, args, &out, NULL, NULL), 0);
		sum += kv(out, "switch_records");
		free(out);
	}
	snprintf(args, sizeof(args), "sched '%s/A' --csv", arch);
	assert_int_equal(anatest_run(dir, args, &out, NULL, NULL), 0);
	assert_int_equal(kv(out, "switch_records"), sum);
	/* tid 100 switched in 3 times per file */
	assert_non_null(strstr(out, "pingpong,100,100,105.000,"));
	free(out);

	/* counters: one session's files read as one recording; several
	 * sessions are refused (their ids are their own) */
	snprintf(args, sizeof(args), "counters '%s/A' --csv", arch);
	assert_int_equal(anatest_run(dir, args, &out, NULL, NULL), 0);
	assert_int_equal(kv(out, "snapshots"), 3 * 8 * 2);
	free(out);
	snprintf(args, sizeof(args), "counters '%s'", arch);
	assert_int_equal(anatest_run(dir, args, &out, NULL, &err), 2);
	assert_non_null(strstr(err, "3 sessions"));
	free(out);
	free(err);
}

static void test_window(void **state)
{
	(void)state;
	char args[9000], *out = NULL;
	snprintf(args, sizeof(args), "report '%s/A' --time 0.055,0.135 --csv", arch);
	assert_int_equal(anatest_run(dir, args, &out, NULL, NULL), 0);
	assert_int_equal(kv(out, "samples_shown"), 60);
	assert_int_equal(kv(out, "samples"), 160);   /* web.2 never opened */
	free(out);
	/* the same window as wall-clock times: tracegen's clock reference
	 * puts its start at 2023-11-14 22:13:20 UTC */
	snprintf(args, sizeof(args), "report '%s/A' --since '2023-11-14 22:13:20.055' "
		 "--until 2023-11-14T23:13:20.135+01:00 --csv", arch);
	assert_int_equal(anatest_run(dir, args, &out, NULL, NULL), 0);
	assert_int_equal(kv(out, "samples_shown"), 60);
	free(out);
	/* a window that only host C's file meets */
	snprintf(args, sizeof(args), "report '%s' --since '2023-11-14 22:13:25' "
		 "-s host --csv", arch);
	assert_int_equal(anatest_run(dir, args, &out, NULL, NULL), 0);
	assert_int_equal(kv(out, "samples"), 80);
	assert_int_equal(kv(out, "samples_shown"), 80);
	free(out);
}

static void test_wall_parse(void **state)
{
	(void)state;
	uint64_t ns, now = 1700000000ull * 1000000000ull;
	assert_int_equal(ana_parse_wall("2026-11-26 03:00", now, &ns), 0);
	assert_int_equal(ns, 1795662000ull * 1000000000ull);
	assert_int_equal(ana_parse_wall("2026-11-26T04:00:00+01:00", now, &ns), 0);
	assert_int_equal(ns, 1795662000ull * 1000000000ull);
	assert_int_equal(ana_parse_wall("2026-11-26T03:00:00Z", now, &ns), 0);
	assert_int_equal(ns, 1795662000ull * 1000000000ull);
	assert_int_equal(ana_parse_wall("-2h", now, &ns), 0);
	assert_int_equal(ns, now - 7200ull * 1000000000ull);
	assert_int_equal(ana_parse_wall("2026-13-01", now, &ns), -EINVAL);
	assert_int_equal(ana_parse_wall("yesterday", now, &ns), -EINVAL);
	assert_int_equal(ana_parse_wall("-2x", now, &ns), -EINVAL);
	assert_int_equal(ana_parse_wall("2026-11-26 03:00 junk", now, &ns), -EINVAL);
}

static void test_info_dir(void **state)
{
	(void)state;
	char args[9000], *out = NULL;
	snprintf(args, sizeof(args), "info '%s' '%s'", arch, local);
	assert_int_equal(anatest_run(dir, args, &out, NULL, NULL), 0);
	assert_non_null(strstr(out, "hostA  web.0    2023-11-14 22:13:20"));
	assert_non_null(strstr(out, "duplicate_files  3"));
	/* each event once, though six files describe it */
	const char *p = strstr(out, "\ncpu-clock\n");
	assert_non_null(p);
	assert_null(strstr(p + 1, "\ncpu-clock\n"));
	free(out);
	/* one file: today's output */
	snprintf(args, sizeof(args), "info '%s/C/batch.prec'", arch);
	assert_int_equal(anatest_run(dir, args, &out, NULL, NULL), 0);
	assert_null(strstr(out, "Sessions"));
	assert_non_null(strstr(out, "hostC"));
	free(out);
}

static void test_hostile(void **state)
{
	(void)state;
	char h[4400], args[9000], *out = NULL, *err = NULL;
	snprintf(h, sizeof(h), "%s/hostile", dir);
	sh("mkdir -p '%s/sub' && cp '%s/C/batch.prec' '%s/good.prec' && "
	   "cp '%s/A/web.0.prec' '%s/damaged.prec' && "
	   "printf 'not a trace' > '%s/foreign.prec' && printf x > '%s/notes.txt' && "
	   "cp '%s/B/db.0.prec' '%s/sub/locked.prec' && chmod 000 '%s/sub/locked.prec' && "
	   "ln -s .. '%s/sub/loop'", h, arch, h, arch, h, h, h, arch, h, h, h);
	/* flip bytes inside a data frame of the damaged file that report
	 * reads (one holding samples: it skips the others unread) */
	snprintf(args, sizeof(args), "%s/damaged.prec", h);
	size_t len, nfr, at = 0;
	const struct prec_frame_info *fr;
	struct prec_reader *rd = prec_reader_open(args, NULL);
	assert_non_null(rd);
	assert_int_equal(prec_reader_index(rd, &fr, &nfr), 0);
	for (size_t i = 0; i < nfr && !at; i++)
		if (fr[i].kinds & PREC_KIND(PERFREC__PACKET__DATA_SAMPLE))
			at = (size_t)(fr[i].data_offset + fr[i].compressed_size / 2);
	prec_reader_free(rd);
	assert_true(at > 0);
	char *b = anatest_read(args, &len);
	assert_non_null(b);
	for (size_t i = at; i < at + 16 && i < len; i++)
		b[i] ^= 0x5a;
	assert_int_equal(anatest_write(args, b, len), 0);
	free(b);

	snprintf(args, sizeof(args), "report '%s' -s host --csv", h);
	int rc = anatest_run(dir, args, &out, NULL, &err);
	assert_int_equal(rc, 3);   /* analyzed, something skipped */
	assert_non_null(strstr(err, "foreign.prec: unknown file type"));
	assert_non_null(strstr(err, "loop"));
	assert_non_null(strstr(err, "damaged.prec: damaged frame"));
	assert_null(strstr(err, "notes.txt"));   /* not an input in a directory */
	if (geteuid() != 0)
		assert_non_null(strstr(err, "locked.prec"));
	assert_non_null(strstr(out, "hostC"));
	assert_non_null(strstr(out, "hostA"));   /* the damaged file's good frames */
	free(out);
	free(err);

	/* nothing readable at all: exit 2 */
	snprintf(args, sizeof(args), "report '%s/foreign.prec' '%s/none.prec'", h, h);
	assert_int_equal(anatest_run(dir, args, &out, NULL, &err), 2);
	assert_non_null(strstr(err, "no trace to read"));
	free(out);
	free(err);
}

static void test_many_tiny(void **state)
{
	(void)state;
	char t[4400], args[9000], *out = NULL, *err = NULL;
	snprintf(t, sizeof(t), "%s/tiny", dir);
	sh("mkdir -p '%s' && cd '%s' && for i in $(seq 1 10000); do printf x > t$i.prec; done && "
	   "cp '%s/C/batch.prec' '%s/zz.prec'", t, t, arch, t);
	snprintf(args, sizeof(args), "report '%s' --csv -s host", t);
	assert_int_equal(anatest_run(dir, args, &out, NULL, &err), 3);
	assert_int_equal(kv(out, "samples"), 80);
	size_t lines = 0;
	for (const char *p = err; (p = strchr(p, '\n')); p++)
		lines++;
	assert_int_equal(lines, 10000);
	free(out);
	free(err);

	/* the probe holds no descriptor between files */
	char *in[] = { t };
	struct ana_dataset *ds;
	int fd0 = dup(0);
	close(fd0);
	assert_int_equal(ana_dataset_open(&ds, in, 1, NULL), 0);
	int fd1 = dup(0);
	close(fd1);
	assert_int_equal(fd0, fd1);
	assert_int_equal(ds->nskipped, 10000);
	assert_int_equal(ds->nfiles, 1);
	ana_dataset_free(ds);
}

static void test_probe_mem(void **state)
{
	(void)state;
	char p[9000];
	snprintf(p, sizeof(p), "%s/A/web.1.prec", arch);
	size_t len;
	char *b = anatest_read(p, &len);
	assert_non_null(b);
	char *in[] = { arch };
	struct ana_dataset *ds;
	assert_int_equal(ana_dataset_open(&ds, in, 1, NULL), 0);
	struct ana_dataset_file f;
	assert_int_equal(ana_dataset_probe_mem(ds, b, len, "x.prec", &f), 0);
	assert_int_equal(f.start, 1000000000ull + 100 * MS);
	assert_int_equal(f.end, f.start + 100 * MS);
	assert_true(f.rotated);
	/* every prefix probes or fails cleanly */
	for (size_t n = 0; n < len; n += 97) {
		int ret = ana_dataset_probe_mem(ds, b, n, "x.prec", &f);
		assert_true(ret == 0 || ret < 0);
		if (ret == 0)
			assert_int_not_equal(f.state, ANA_FILE_WHOLE);
	}
	ana_dataset_free(ds);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_report_once),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_wall_parse),
		cmocka_unit_test(test_info_dir),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_many_tiny),
		cmocka_unit_test(test_probe_mem),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
