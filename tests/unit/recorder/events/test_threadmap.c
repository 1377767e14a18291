/*
 * test_threadmap.c - pid/tid lists and thread expansion
 * (recorder/events/threadmap.c) on a fake /proc tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/events/threadmap.h"
#include "lib/logcap.h"

static void test_parse(void **state)
{
	struct rec_threadmap m = REC_THREADMAP_INIT;

	(void)state;
	assert_int_equal(rec_threadmap_parse(&m, "7,1-3,2"), 0);
	assert_int_equal(m.n, 4);
	assert_int_equal(m.tid[0], 1);
	assert_int_equal(m.tid[3], 7);
	rec_threadmap_release(&m);
	assert_int_equal(rec_threadmap_parse(&m, "0"), -EINVAL);
	assert_int_equal(rec_threadmap_parse(&m, "0-2"), -EINVAL);
	assert_int_equal(rec_threadmap_parse(&m, "5-1"), -EINVAL);
	assert_int_equal(rec_threadmap_parse(&m, "1,,2"), -EINVAL);
	assert_int_equal(rec_threadmap_parse(&m, ""), -EINVAL);
	assert_int_equal(rec_threadmap_parse(&m, "4194305"), -EINVAL);
	/* a range is bounded before anything is allocated */
	assert_int_equal(rec_threadmap_parse(&m, "1-4000000"), -E2BIG);
	assert_null(m.tid);
}

static void test_expand(void **state)
{
	char root[] = "/tmp/perfrec-threadmap-XXXXXX", path[256];
	struct rec_threadmap m = REC_THREADMAP_INIT;
	int self = getpid(), ids[2];
	int other = 0x3ffffff0;   /* above any pid_max: no such task */

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/%d", root, self);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/task", root, self);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/task/%d", root, self, self + 1);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/task/%d", root, self, self);
	assert_int_equal(mkdir(path, 0755), 0);

	/* a process: its threads */
	ids[0] = self;
	assert_int_equal(rec_threadmap_expand(&m, ids, 1, true, root), 0);
	assert_int_equal(m.n, 2);
	assert_int_equal(m.tid[0], self);
	assert_int_equal(m.tid[1], self + 1);
	assert_true(rec_threadmap_alive(&m));
	rec_threadmap_release(&m);
	/* threads: as given */
	assert_int_equal(rec_threadmap_expand(&m, ids, 1, false, root), 0);
	assert_int_equal(m.n, 1);
	rec_threadmap_release(&m);
	/* a process without a task list (here: pid 1 in the fake tree) */
	ids[0] = 1;
	assert_int_equal(rec_threadmap_expand(&m, ids, 1, true, root), 0);
	assert_int_equal(m.n, 1);
	assert_int_equal(m.tid[0], 1);
	rec_threadmap_release(&m);
	/* a process whose task list is empty (exiting): no thread, no
	 * sort of a NULL list */
	snprintf(path, sizeof(path), "%s/%d/task/%d", root, self, self + 1);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/%d/task/%d", root, self, self);
	assert_int_equal(rmdir(path), 0);
	ids[0] = self;
	assert_int_equal(rec_threadmap_expand(&m, ids, 1, true, root), 0);
	assert_int_equal(m.n, 0);
	rec_threadmap_release(&m);
	/* a pid that does not exist: named */
	logcap_clear();
	ids[0] = self;
	ids[1] = other;
	assert_int_equal(rec_threadmap_expand(&m, ids, 2, true, root), -ESRCH);
	assert_non_null(strstr(logcap_err(), "no such process"));
	assert_int_equal(m.n, 0);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
		assert_int_equal(system(cmd), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_expand),
	};

	logcap_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
