/*
 * test_schema.c - the DDL of the fleet's tables (analyzer/load/schema.h),
 * keyed as docs/fleet.md says, a cluster name that is not an identifier
 * refused (it is spliced into SQL), and inserts that name their columns.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyzer/load/schema.h"

static void test_ddl(void **state)
{
	(void)state;
	char buf[2048];
	const struct ana_chtable *p = ana_chtable_find("profile"), *s = ana_chtable_find("stacks");
	assert_non_null(p);
	assert_non_null(s);
	assert_int_equal(ana_chtable_ddl(p, 0, "perfrec", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "CREATE TABLE IF NOT EXISTS profile_local (file_key Int64, "
			    "host String, minute Int64, comm String, pid Int64, stack_id Int64, "
			    "samples Int64, period Int64) ENGINE = MergeTree() PARTITION BY "
			    "toDate(toDateTime(intDiv(minute, 1000000000))) "
			    "ORDER BY (host, minute, comm, stack_id)");
	assert_int_equal(ana_chtable_ddl(p, 1, "perfrec", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "CREATE TABLE IF NOT EXISTS profile AS profile_local ENGINE = "
			    "Distributed(perfrec, currentDatabase(), profile_local, "
			    "cityHash64(host))");
	assert_int_equal(ana_chtable_ddl(s, 0, "perfrec", buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "ENGINE = ReplacingMergeTree() ORDER BY (stack_id, depth)"));
	assert_null(strstr(buf, "file_key"));
	assert_int_equal(ana_chtable_ddl(p, 1, "x), currentDatabase(), files_local, 1) --",
					 buf, sizeof(buf)), -EINVAL);
	assert_int_equal(ana_chtable_ddl(p, 1, "", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(ana_chtable_ddl(p, 0, "perfrec", buf, 40), -ENAMETOOLONG);
	/* a NULL that means something stays NULL */
	assert_int_equal(ana_chtable_ddl(ana_chtable_find("tasks"), 0, "perfrec", buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "start_ns Nullable(Int64), end_ns Nullable(Int64))"));
	/* counters name the instance read; off-CPU sums count blocks */
	assert_int_equal(ana_chtable_ddl(ana_chtable_find("counters"), 0, "perfrec", buf,
					 sizeof(buf)), 0);
	assert_non_null(strstr(buf, "(file_key Int64, host String, time_ns Int64, cpu Int64, "
			       "pid Int64, event String, "));
	assert_non_null(strstr(ana_chtable_find("counters")->select, "time_ns, cpu, pid, event"));
	assert_int_equal(ana_chtable_ddl(ana_chtable_find("offcpu_profile"), 0, "perfrec", buf,
					 sizeof(buf)), 0);
	assert_non_null(strstr(buf, "blocks Int64, off_ns Int64)"));
	assert_non_null(strstr(ana_chtable_find("offcpu_profile")->select, "sum(count)"));
	/* inserts name their columns in the rows' order */
	assert_int_equal(ana_chtable_insert(ana_chtable_find("counters"), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "INSERT INTO counters (file_key, host, time_ns, cpu, pid, event, "
			    "group_leader, value, enabled_ns, running_ns, scaled) FORMAT RowBinary");
	assert_int_equal(ana_chtable_insert(s, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "INSERT INTO stacks (stack_id, depth, sym, dso, addr) "
			    "FORMAT RowBinary");
	assert_int_equal(ana_chtable_insert(s, buf, 30), -ENAMETOOLONG);
	/* files, the marker, is loaded last */
	assert_string_equal(ana_chtables[ana_nchtables - 1].name, "files");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ddl),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
