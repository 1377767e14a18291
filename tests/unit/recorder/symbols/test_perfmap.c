/*
 * test_perfmap.c - recorder/perfmap: /tmp/perf-PID.map parsing, junk
 * tolerance, file loading.
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

#include "recorder/symbols/perfmap.h"

static void test_parse(void **state)
{
	static const char text[] =
		"7f0000001000 40 LazyCompile:~main /app/x.js:1\n"
		"0x7f0000000100 0x20 Builtin:ArgumentsAdaptor\r\n"
		"7F0000002000 8 UPPER\n"
		"\n"
		"this is junk\n"
		"7f0000003000\n"                  /* no size */
		"7f0000003000 10\n"               /* no name */
		"7f000000300g 10 badhex\n"
		"ffffffffffffffff 2 wraps\n"
		"11112222333344445 1 seventeen_digits\n"
		"7f0000004000 10 tail without newline";
	struct rec_perfmap m;

	(void)state;
	assert_int_equal(rec_perfmap_parse(text, sizeof(text) - 1, &m), 0);
	assert_int_equal(m.nsyms, 4);
	assert_int_equal(m.junk, 6);
	assert_int_equal(m.syms[0].start, 0x7f0000000100ull);
	assert_int_equal(m.syms[0].size, 0x20);
	assert_string_equal(m.syms[0].name, "Builtin:ArgumentsAdaptor");
	assert_int_equal(m.syms[1].start, 0x7f0000001000ull);
	assert_int_equal(m.syms[1].size, 0x40);
	assert_string_equal(m.syms[1].name, "LazyCompile:~main /app/x.js:1");
	assert_string_equal(m.syms[2].name, "UPPER");
	assert_string_equal(m.syms[3].name, "tail without newline");
	rec_perfmap_release(&m);
}

static void test_load(void **state)
{
	char dir[] = "/tmp/test_perfmap.XXXXXX", path[300];
	struct rec_perfmap m;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-4242.map", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("1000 10 jit_one\n2000 20 jit_two\n", f);
	fclose(f);
	assert_int_equal(rec_perfmap_load_pid(4242, dir, 0, &m), 0);
	assert_int_equal(m.nsyms, 2);
	assert_string_equal(m.syms[1].name, "jit_two");
	rec_perfmap_release(&m);
	/* size cap */
	assert_int_equal(rec_perfmap_load_pid(4242, dir, 8, &m), -EFBIG);
	rec_perfmap_release(&m);
	/* absent */
	assert_int_equal(rec_perfmap_load_pid(4243, dir, 0, &m), -ENOENT);
	rec_perfmap_release(&m);
	/* a symlink or a FIFO is refused, without hanging */
	{
		char other[300];

		snprintf(other, sizeof(other), "%s/perf-4244.map", dir);
		assert_int_equal(symlink(path, other), 0);
		assert_int_equal(rec_perfmap_load_pid(4244, dir, 0, &m), -ELOOP);
		rec_perfmap_release(&m);
		unlink(other);
		assert_int_equal(mkfifo(other, 0600), 0);
		assert_int_equal(rec_perfmap_load_pid(4244, dir, 0, &m), -EINVAL);
		rec_perfmap_release(&m);
		unlink(other);
	}
	unlink(path);
	rmdir(dir);
}

/* In /tmp the map must belong to root or to the process's owner. */
static void test_owner(void **state)
{
	char path[64];
	struct rec_perfmap m;
	FILE *f;

	(void)state;
	if (geteuid() != 0)
		skip();   /* chown needs root */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("1000 10 mine\n", f);
	fclose(f);
	assert_int_equal(rec_perfmap_load_pid(getpid(), NULL, 0, &m), 0);
	assert_int_equal(m.nsyms, 1);
	rec_perfmap_release(&m);
	/* /proc/self belongs to root (this test runs as root) */
	assert_int_equal(chown(path, 12345, 12345), 0);
	assert_int_equal(rec_perfmap_load_pid(getpid(), NULL, 0, &m), -EPERM);
	rec_perfmap_release(&m);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_owner),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
