/*
 * test_symcache.c - recorder/symbols/symcache: the entry codec (a table
 * comes back as it went in; every truncation and a flipped bit anywhere
 * are refused), the directory's owner and mode checks, entries that are
 * links or writable by others, and eviction by least recent use.
 * (test_symgather.c checks that a warm cache writes the same tables.)
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "recorder/symbols/symcache.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_symcache.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A table of n symbols with build-id byte b; ranges when asked. */
static void make_table(struct rec_symcache_table *t, size_t n, uint8_t b,
		       int ranges)
{
	char *q;

	memset(t, 0, sizeof(*t));
	t->e.build_id_len = 20;
	memset(t->e.build_id, b, 20);
	t->e.build_id[0] = 0xab;
	t->file_key = 0x1234u + b;
	t->e.load_bias = 0x1000;
	t->e.is_dyn = 1;
	t->e.from_dynsym = 1;
	t->source = REC_SYMCACHE_DYNSYM;
	t->e.nsegs = 2;
	t->e.segs = calloc(2, sizeof(*t->e.segs));
	t->e.syms = calloc(n + 1, sizeof(*t->e.syms));
	t->e.names = calloc(n + 1, 16);
	assert_non_null(t->e.segs);
	assert_non_null(t->e.syms);
	assert_non_null(t->e.names);
	t->e.segs[0] = (struct prec_elf_seg){ 0, 0x0, 0x5000 };
	t->e.segs[1] = (struct prec_elf_seg){ 0x5000, 0x6000, 0x800 };
	q = t->e.names;
	for (size_t i = 0; i < n; i++) {
		t->e.syms[i].start = 0x1000 + 0x40 * i;
		t->e.syms[i].size = 0x20 + i % 3;
		t->e.syms[i].name = q;
		q += snprintf(q, 16, "fn_%zu", i) + 1;
	}
	t->e.nsyms = n;
	if (ranges) {
		t->ranges = calloc(3, sizeof(*t->ranges));
		assert_non_null(t->ranges);
		t->ranges[0] = (struct rec_fnrange){ 0x100, 0x180 };
		t->ranges[1] = (struct rec_fnrange){ 0x200, 0x280 };
		t->ranges[2] = (struct rec_fnrange){ 0x150, 0x400 };   /* debug */
		t->n_eh = 2;
		t->n_dbg = 1;
		t->have_ranges = 1;
	}
}

static void assert_same(const struct rec_symcache_table *a,
			const struct rec_symcache_table *b)
{
	assert_int_equal(a->e.build_id_len, b->e.build_id_len);
	assert_memory_equal(a->e.build_id, b->e.build_id, a->e.build_id_len);
	assert_int_equal(a->e.load_bias, b->e.load_bias);
	assert_int_equal(a->e.is_dyn, b->e.is_dyn);
	assert_int_equal(a->e.from_dynsym, b->e.from_dynsym);
	assert_int_equal(a->source, b->source);
	assert_int_equal(a->e.nsegs, b->e.nsegs);
	assert_memory_equal(a->e.segs, b->e.segs, a->e.nsegs * sizeof(*a->e.segs));
	assert_int_equal(a->e.nsyms, b->e.nsyms);
	for (size_t i = 0; i < a->e.nsyms; i++) {
		assert_int_equal(a->e.syms[i].start, b->e.syms[i].start);
		assert_int_equal(a->e.syms[i].size, b->e.syms[i].size);
		assert_string_equal(a->e.syms[i].name, b->e.syms[i].name);
	}
	assert_int_equal(a->have_ranges, b->have_ranges);
	assert_int_equal(a->n_eh, b->n_eh);
	assert_int_equal(a->n_dbg, b->n_dbg);
	if (a->n_eh + a->n_dbg)
		assert_memory_equal(a->ranges, b->ranges,
				    (a->n_eh + a->n_dbg) * sizeof(*a->ranges));
}

static void test_codec(void **state)
{
	struct rec_symcache_table t, u;
	struct rec_fnrange r;
	const char *why;
	uint8_t *buf;
	size_t len;

	(void)state;
	make_table(&t, 50, 0x11, 1);
	assert_int_equal(rec_symcache_encode(&t, &buf, &len), 0);
	assert_int_equal(rec_symcache_parse(buf, len, t.e.build_id, 20, t.file_key, &u, &why), 0);
	assert_same(&t, &u);
	/* ranges: .eh_frame's first, then .debug_frame's */
	assert_int_equal(rec_symcache_range_find(&u, 0x160, &r), 0);
	assert_int_equal(r.begin, 0x100);
	assert_int_equal(rec_symcache_range_find(&u, 0x190, &r), 0);
	assert_int_equal(r.begin, 0x150);
	assert_int_equal(rec_symcache_range_find(&u, 0x400, &r), -ENOENT);
	assert_int_equal(rec_symcache_range_find(&u, 0x50, &r), -ENOENT);
	rec_symcache_table_release(&u);
	/* another file of the same build-id (a stripped copy) */
	assert_int_equal(rec_symcache_parse(buf, len, t.e.build_id, 20, t.file_key + 1,
					    &u, &why), -EBADMSG);
	/* another build-id asked for */
	assert_int_equal(rec_symcache_parse(buf, len, (const uint8_t *)"xxxxxxxxxxxxxxxxxxxx",
					    20, t.file_key, &u, &why), -EBADMSG);
	assert_non_null(why);
	/* every truncation, and one flipped bit at every byte */
	for (size_t n = 0; n < len; n++)
		assert_int_equal(rec_symcache_parse(buf, n, NULL, 0, 0, &u, &why), -EBADMSG);
	for (size_t i = 0; i < len; i++) {
		buf[i] ^= 0x08;
		assert_int_equal(rec_symcache_parse(buf, len, NULL, 0, 0, &u, &why), -EBADMSG);
		buf[i] ^= 0x08;
	}
	assert_int_equal(rec_symcache_parse(buf, len, NULL, 0, 0, &u, &why), 0);
	rec_symcache_table_release(&u);
	free(buf);
	rec_symcache_table_release(&t);
	/* no symbols, no ranges */
	make_table(&t, 0, 0x12, 0);
	assert_int_equal(rec_symcache_encode(&t, &buf, &len), 0);
	assert_int_equal(rec_symcache_parse(buf, len, NULL, 0, 0, &u, &why), 0);
	assert_same(&t, &u);
	assert_int_equal(rec_symcache_range_find(&u, 0x160, &r), -ENOENT);
	rec_symcache_table_release(&u);
	free(buf);
	rec_symcache_table_release(&t);
}

static void test_dir_checks(void **state)
{
	char dir[300], link[300], why[512];
	struct rec_symcache *c;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/c", tmpdir);
	c = rec_symcache_open(dir, 0, why, sizeof(why));   /* created */
	assert_non_null(c);
	rec_symcache_free(c);
	assert_int_equal(chmod(dir, 0777), 0);
	c = rec_symcache_open(dir, 0, why, sizeof(why));
	assert_null(c);
	assert_int_equal(errno, EPERM);
	assert_non_null(strstr(why, "world-writable"));
	assert_non_null(strstr(why, "chmod go-w"));
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(link, sizeof(link), "%s/l", tmpdir);
	assert_int_equal(symlink(dir, link), 0);
	c = rec_symcache_open(link, 0, why, sizeof(why));
	assert_null(c);
	assert_non_null(strstr(why, "symbolic link"));
	if (geteuid() == 0) {
		assert_int_equal(chown(dir, 1, 1), 0);
		c = rec_symcache_open(dir, 0, why, sizeof(why));
		assert_null(c);
		assert_int_equal(errno, EPERM);
		assert_non_null(strstr(why, "owned by uid 1"));
		assert_int_equal(chown(dir, 0, 0), 0);
	}
}

static void entry_path(char *p, size_t n, const char *dir, uint8_t b)
{
	int k = snprintf(p, n, "%s/ab", dir);

	for (int i = 1; i < 20; i++)
		k += snprintf(p + k, n - (size_t)k, "%02x", b);
	snprintf(p + k, n - (size_t)k, "-%016llx.sym", 0x1234ull + b);
}

static void test_entries(void **state)
{
	char dir[300], p[400], q[400], why[512];
	struct rec_symcache_table t, u;
	struct rec_symcache *c;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/e", tmpdir);
	c = rec_symcache_open(dir, 0, why, sizeof(why));
	assert_non_null(c);
	make_table(&t, 10, 0x21, 1);
	assert_int_equal(rec_symcache_get(c, t.e.build_id, 20, t.file_key, &u), -ENOENT);
	assert_int_equal(rec_symcache_put(c, &t), 0);
	assert_int_equal(rec_symcache_get(c, t.e.build_id, 20, t.file_key, &u), 0);
	assert_same(&t, &u);
	rec_symcache_table_release(&u);
	entry_path(p, sizeof(p), dir, 0x21);
	/* writable by others: not trusted */
	assert_int_equal(chmod(p, 0666), 0);
	assert_int_equal(rec_symcache_get(c, t.e.build_id, 20, t.file_key, &u), -EPERM);
	/* a put replaces it with a sound one */
	assert_int_equal(rec_symcache_put(c, &t), 0);
	assert_int_equal(rec_symcache_get(c, t.e.build_id, 20, t.file_key, &u), 0);
	rec_symcache_table_release(&u);
	/* a link is not followed */
	snprintf(q, sizeof(q), "%s/target", tmpdir);
	assert_int_equal(rename(p, q), 0);
	assert_int_equal(symlink(q, p), 0);
	assert_true(rec_symcache_get(c, t.e.build_id, 20, t.file_key, &u) < 0);
	assert_int_equal(unlink(p), 0);
	/* truncated on disk: damaged */
	assert_int_equal(truncate(q, 100), 0);
	assert_int_equal(rename(q, p), 0);
	assert_int_equal(rec_symcache_get(c, t.e.build_id, 20, t.file_key, &u), -EBADMSG);
	rec_symcache_table_release(&t);
	rec_symcache_free(c);
}

static void test_eviction(void **state)
{
	char dir[300], p[400], why[512];
	struct rec_symcache_table t, u;
	struct rec_symcache *c;
	uint8_t *buf;
	size_t len;
	struct stat st;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/v", tmpdir);
	make_table(&t, 100, 0x30, 0);
	assert_int_equal(rec_symcache_encode(&t, &buf, &len), 0);
	free(buf);
	rec_symcache_table_release(&t);
	/* room for 4 entries: after the 5th, 3/4 of it is kept */
	c = rec_symcache_open(dir, 4 * len + len / 2, why, sizeof(why));
	assert_non_null(c);
	for (uint8_t b = 0x30; b < 0x35; b++) {
		make_table(&t, 100, b, 0);
		assert_int_equal(rec_symcache_put(c, &t), 0);
		rec_symcache_table_release(&t);
		if (b == 0x32) {
			/* 0x30 used again now: more recent than 0x32 */
			make_table(&t, 100, 0x30, 0);
			usleep(20000);
			assert_int_equal(rec_symcache_get(c, t.e.build_id, 20, t.file_key, &u), 0);
			rec_symcache_table_release(&u);
			rec_symcache_table_release(&t);
		}
		usleep(20000);   /* distinct mtimes */
	}
	/* 5 entries > 4.5: the oldest go until at most 3.375 remain */
	for (uint8_t b = 0x30; b < 0x35; b++) {
		entry_path(p, sizeof(p), dir, b);
		if (b == 0x31 || b == 0x32)
			assert_int_equal(stat(p, &st), -1);
		else
			assert_int_equal(stat(p, &st), 0);
	}
	rec_symcache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codec),
		cmocka_unit_test(test_dir_checks),
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_eviction),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
