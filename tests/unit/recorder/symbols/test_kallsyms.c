/*
 * test_kallsyms.c - recorder/kallsyms on synthetic text (text types only,
 * modules, sizes from the next start, aliases, kptr_restrict zeros, junk)
 * and on the host's /proc/kallsyms.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "recorder/symbols/kallsyms.h"

static long by_name(const struct rec_kallsyms *k, const char *name)
{
	for (size_t i = 0; i < k->nsyms; i++)
		if (strcmp(k->syms[i].name, name) == 0)
			return (long)i;
	return -1;
}

static void test_parse_basic(void **state)
{
	/* out of order on purpose; data symbols (d D b r) are dropped */
	static const char text[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 t helper_local\n"
		"ffffffff81000040 T start_kernel\n"
		"ffffffff82000000 D some_data\n"
		"ffffffff81000200 W weak_fn\n"
		"ffffffff81000300 r rodata_thing\n"
		"ffffffffc0001000 t mod_fn_a\t[kvm]\n"
		"ffffffffc0001080 T mod_fn_b\t[kvm]\n"
		"ffffffffc0002000 t other_fn\t[nf_tables]\n"
		"ffffffffc0002100 t last_fn\t[kvm]";   /* no final newline */
	struct rec_kallsyms k;
	long i;

	(void)state;
	assert_int_equal(rec_kallsyms_parse(text, sizeof(text) - 1, &k), 0);
	assert_int_equal(k.nsyms, 9);
	assert_int_equal(k.junk, 0);
	assert_int_equal(k.text_start, 0xffffffff81000000ull);
	for (size_t j = 1; j < k.nsyms; j++)
		assert_true(k.syms[j - 1].start <= k.syms[j].start);
	assert_int_equal(by_name(&k, "some_data"), -1);
	assert_int_equal(by_name(&k, "rodata_thing"), -1);

	/* sizes: up to the next distinct start; aliases share it */
	i = by_name(&k, "_text");
	assert_int_equal(k.syms[i].size, 0x40);
	assert_int_equal(k.syms[by_name(&k, "_stext")].size, 0x40);
	assert_int_equal(k.syms[by_name(&k, "start_kernel")].size, 0xc0);
	/* the last symbol before another module's: bounded, so a module
	 * loaded later in the gap is not taken for it; the last of all: no
	 * end known */
	assert_int_equal(k.syms[by_name(&k, "weak_fn")].size, REC_KALLSYMS_OPEN_MAX);
	assert_int_equal(k.syms[by_name(&k, "last_fn")].size, 0);
	assert_int_equal(k.syms[by_name(&k, "mod_fn_b")].size, 0xf80);   /* < the bound */

	/* modules: two names, symbols point at them */
	assert_int_equal(k.nmodules, 2);
	i = by_name(&k, "mod_fn_b");
	assert_true(k.syms[i].module >= 1);
	assert_string_equal(k.modules[k.syms[i].module - 1], "kvm");
	i = by_name(&k, "other_fn");
	assert_string_equal(k.modules[k.syms[i].module - 1], "nf_tables");
	assert_int_equal(k.syms[by_name(&k, "last_fn")].module,
			 k.syms[by_name(&k, "mod_fn_a")].module);
	assert_int_equal(k.syms[by_name(&k, "start_kernel")].module, 0);

	/* lookups */
	assert_string_equal(k.syms[rec_kallsyms_find(&k, 0xffffffff81000050ull)].name,
			    "start_kernel");
	assert_string_equal(k.syms[rec_kallsyms_find(&k, 0xffffffff81000000ull)].name,
			    "_stext");   /* first alias in sorted order */
	assert_string_equal(k.syms[rec_kallsyms_find(&k, 0xffffffffc000107full)].name,
			    "mod_fn_a");
	assert_int_equal(rec_kallsyms_find(&k, 0xffffffff80000000ull), -1);
	assert_int_equal(rec_kallsyms_find(&k, 0xffffffff81000200ull + REC_KALLSYMS_OPEN_MAX), -1);
	assert_int_equal(rec_kallsyms_find(&k, 0xffffffffc0002100ull), -1);
	rec_kallsyms_release(&k);
}

static void test_kptr_restrict(void **state)
{
	static const char text[] =
		"0000000000000000 T _text\n"
		"0000000000000000 T _stext\n"
		"0000000000000000 t helper\n"
		"0000000000000000 t mod_fn\t[kvm]\n";
	struct rec_kallsyms k;

	(void)state;
	assert_int_equal(rec_kallsyms_parse(text, sizeof(text) - 1, &k),
			 REC_KALLSYMS_HIDDEN);
	assert_int_equal(k.nsyms, 0);
	rec_kallsyms_release(&k);
}

static void test_junk(void **state)
{
	static const char text[] =
		"\n"
		"garbage line\n"
		"ffffffff81000000 T\n"                 /* no name */
		"ffffffff81000000T nospace\n"
		"12345678901234567890 T toolong\n"      /* 20 digits */
		"zz T notahex\n"
		"ffffffff81000010 T good_one\n"
		"ffffffff81000020 t good_two\t[mod\n"   /* torn module: core */
		"ffffffff81000030 t x\t[]\n";
	struct rec_kallsyms k;

	(void)state;
	assert_int_equal(rec_kallsyms_parse(text, sizeof(text) - 1, &k), 0);
	assert_int_equal(k.nsyms, 3);
	assert_int_equal(k.junk, 5);
	assert_string_equal(k.syms[0].name, "good_one");
	assert_int_equal(k.syms[1].module, 0);
	assert_int_equal(k.nmodules, 0);
	rec_kallsyms_release(&k);

	assert_int_equal(rec_kallsyms_parse("", 0, &k), 0);
	assert_int_equal(k.nsyms, 0);
	rec_kallsyms_release(&k);
}

/* The host's own table: must parse, and name a few symbols every kernel
 * has (unless addresses are hidden, which kptr_restrict decides). */
static void test_proc_kallsyms(void **state)
{
	struct rec_kallsyms k;
	int ret;

	(void)state;
	ret = rec_kallsyms_load(NULL, &k);
	if (ret == REC_KALLSYMS_HIDDEN) {
		rec_kallsyms_release(&k);
		skip();
	}
	assert_int_equal(ret, 0);
	assert_true(k.nsyms > 1000);
	assert_int_equal(k.junk, 0);
	assert_true(k.text_start != 0);
	assert_true(by_name(&k, "schedule") >= 0);
	assert_true(by_name(&k, "do_sys_openat2") >= 0 ||
		    by_name(&k, "do_sys_open") >= 0);
	{
		long i = by_name(&k, "schedule");

		assert_int_equal(rec_kallsyms_find(&k, k.syms[i].start + 1), i);
	}
	rec_kallsyms_release(&k);
	assert_int_equal(rec_kallsyms_load("/nonexistent/kallsyms", &k), -ENOENT);
	rec_kallsyms_release(&k);
}

/* The fingerprint moves with what kallsyms depends on and only then: a
 * file's size or mtime; for /proc/kallsyms, modules and BPF programs. */
static void test_fingerprint(void **state)
{
	char path[] = "/tmp/test_kallsyms_fp.XXXXXX";
	uint64_t a = 0, b = 0, c = 0;
	int fd, ret;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "ffffffff81000000 T _stext\n", 26), 26);
	assert_int_equal(rec_kallsyms_fingerprint(path, &a), 0);
	assert_int_equal(rec_kallsyms_fingerprint(path, &b), 0);
	assert_true(a == b);
	assert_int_equal(write(fd, "\n", 1), 1);
	assert_int_equal(rec_kallsyms_fingerprint(path, &c), 0);
	assert_true(c != a);
	close(fd);
	unlink(path);
	assert_int_equal(rec_kallsyms_fingerprint(path, &c), -ENOENT);

	ret = rec_kallsyms_fingerprint(NULL, &a);
	if (ret == -EPERM)
		skip();   /* no right to list BPF programs */
	assert_int_equal(ret, 0);
	/* another program may load BPF between two calls: equal once in a
	 * few tries */
	for (int i = 0; i < 5; i++) {
		a = b;
		assert_int_equal(rec_kallsyms_fingerprint("/proc/kallsyms", &b), 0);
		if (i && a == b)
			return;
	}
	fail_msg("the fingerprint of /proc/kallsyms never held still");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_basic),
		cmocka_unit_test(test_kptr_restrict),
		cmocka_unit_test(test_junk),
		cmocka_unit_test(test_proc_kallsyms),
		cmocka_unit_test(test_fingerprint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
