/*
 * test_tables.c - the analyzer's building blocks: hash map, string pool,
 * filters (parsing untrusted option text, matching) and the document
 * renderers (text alignment, JSON escaping, CSV quoting).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyzer/filter.h"
#include "analyzer/map.h"
#include "analyzer/strpool.h"
#include "analyzer/table.h"

struct key {
	uint32_t a, b;
};

static void test_map(void **state)
{
	(void)state;
	struct ana_map m;
	ana_map_init(&m, sizeof(struct key), sizeof(uint64_t));
	/* Enough entries to grow both tables several times. */
	for (uint32_t i = 0; i < 20000; i++) {
		struct key k = { i % 5000, i / 5000 };
		int created;
		uint64_t *v = ana_map_get(&m, &k, &created);
		assert_non_null(v);
		assert_true(created);
		*v = i;
	}
	assert_int_equal(ana_map_count(&m), 20000);
	for (uint32_t i = 0; i < 20000; i++) {
		struct key k = { i % 5000, i / 5000 };
		int created;
		uint64_t *v = ana_map_get(&m, &k, &created);
		assert_false(created);
		assert_int_equal(*v, i);
		/* insertion order is iteration order */
		assert_memory_equal(ana_map_key(&m, i), &k, sizeof(k));
	}
	struct key missing = { 6000, 0 };
	assert_null(ana_map_find(&m, &missing));
	ana_map_release(&m);
	/* An empty map finds nothing and releases cleanly. */
	ana_map_init(&m, sizeof(struct key), 1);
	assert_null(ana_map_find(&m, &missing));
	ana_map_release(&m);
}

static void test_strpool(void **state)
{
	(void)state;
	struct ana_strpool p;
	ana_strpool_init(&p);
	const char *a = ana_strpool_intern(&p, "hello");
	const char *b = ana_strpool_intern_n(&p, "hello world", 5);
	const char *c = ana_strpool_intern(&p, "hello world");
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(a, c);
	assert_string_equal(c, "hello world");
	/* Strings with embedded NULs are distinct from their prefixes. */
	const char *d = ana_strpool_intern_n(&p, "ab\0c", 4);
	const char *e = ana_strpool_intern_n(&p, "ab", 2);
	assert_ptr_not_equal(d, e);
	char buf[32];
	const char *first = NULL;
	for (int i = 0; i < 10000; i++) {
		snprintf(buf, sizeof(buf), "s%d", i);
		const char *s = ana_strpool_intern(&p, buf);
		assert_string_equal(s, buf);
		if (!i)
			first = s;
	}
	assert_ptr_equal(ana_strpool_intern(&p, "s0"), first);   /* stable */
	ana_strpool_release(&p);
}

static void test_filter_parse(void **state)
{
	(void)state;
	struct ana_filter f;
	char err[256];
	ana_filter_init(&f);
	assert_int_equal(ana_filter_parse(&f, "cpu", "0,2-3", err, sizeof(err)), 0);
	assert_true(ana_filter_cpu(&f, 0));
	assert_false(ana_filter_cpu(&f, 1));
	assert_true(ana_filter_cpu(&f, 2));
	assert_true(ana_filter_cpu(&f, 3));
	assert_false(ana_filter_cpu(&f, 4));
	assert_true(ana_filter_pid(&f, 77));   /* unset filters pass */
	assert_int_equal(ana_filter_parse(&f, "comm", "bash,sshd", err, sizeof(err)), 0);
	assert_true(ana_filter_comm(&f, "sshd"));
	assert_false(ana_filter_comm(&f, "ssh"));
	assert_false(ana_filter_comm(&f, NULL));
	static const char *const bad_cpu[] = { "", "a", "1,", ",1", "3-1", "1-",
		"99999999999999999999999", "1--2", "-1" };
	for (size_t i = 0; i < sizeof(bad_cpu) / sizeof(bad_cpu[0]); i++) {
		err[0] = '\0';
		assert_int_equal(ana_filter_parse(&f, "cpu", bad_cpu[i], err, sizeof(err)), -22);
		assert_non_null(strstr(err, "bad --cpu"));
	}
	static const char *const bad_time[] = { "", ",", "1", "a,b", "1,2,3", "-1,2",
		"nan,1", "inf,", "@,1" };
	for (size_t i = 0; i < sizeof(bad_time) / sizeof(bad_time[0]); i++) {
		err[0] = '\0';
		assert_int_equal(ana_filter_parse(&f, "time", bad_time[i], err, sizeof(err)), -22);
		assert_non_null(strstr(err, "bad --time"));
	}
	assert_int_equal(ana_filter_parse(&f, "comm", "a,,b", err, sizeof(err)), -22);
	ana_filter_release(&f);
}

static void test_filter_time(void **state)
{
	(void)state;
	struct ana_filter f;
	char err[256];
	ana_filter_init(&f);
	assert_int_equal(ana_filter_parse(&f, "time", "0.5,@3", err, sizeof(err)), 0);
	assert_true(f.has_time);
	assert_false(f.t0_abs);
	assert_true(f.t1_abs);
	ana_filter_release(&f);
	ana_filter_init(&f);
	assert_int_equal(ana_filter_parse(&f, "time", ",2.25", err, sizeof(err)), 0);
	assert_true(f.t0_open);
	assert_false(f.t1_open);
	assert_true(f.t1 == 2.25);
	ana_filter_release(&f);
}

static char *render(struct ana_doc *d, enum ana_fmt fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(ana_doc_render(d, f, fmt), 0);
	fclose(f);
	return buf;
}

static void test_doc(void **state)
{
	(void)state;
	struct ana_doc *d = ana_doc_new();
	struct ana_table *kv = ana_doc_kv(d, "summary");
	ana_kv_str(kv, "file", "a \"b\"\n");
	ana_kv_num(kv, "n", "%d", 42);
	struct ana_table *t = ana_doc_table(d, "rows", "Title");
	ana_table_col(t, "name", "Name", ANA_STR);
	ana_table_col(t, "pct", "Share", ANA_PCT);
	ana_table_col(t, "n", "Count", ANA_NUM);
	ana_table_row(t);
	ana_cell_str(t, "x,y");
	ana_cell_num(t, "%.2f", 12.5);
	ana_cell_num(t, "%d", 7);
	ana_table_row(t);
	ana_cell_str(t, "longer name");
	ana_cell_num(t, "%.2f", 100.0);
	ana_cell_null(t, "-");

	char *text = render(d, ANA_FMT_TEXT);
	assert_string_equal(text,
		"file  a \"b\"\n\n"
		"n     42\n"
		"\n"
		"Title\n"
		"Name           Share  Count\n"
		"x,y           12.50%      7\n"
		"longer name  100.00%      -\n");
	char *json = render(d, ANA_FMT_JSON);
	assert_string_equal(json,
		"{\n  \"summary\": {\n    \"file\": \"a \\\"b\\\"\\n\",\n    \"n\": 42\n  },\n"
		"  \"rows\": [\n    {\"name\": \"x,y\", \"pct\": 12.50, \"n\": 7},\n"
		"    {\"name\": \"longer name\", \"pct\": 100.00, \"n\": null}\n  ]\n}\n");
	char *csv = render(d, ANA_FMT_CSV);
	assert_string_equal(csv,
		"# summary\nkey,value\nfile,\"a \"\"b\"\"\n\"\nn,42\n\n"
		"# rows\nname,pct,n\n\"x,y\",12.50,7\nlonger name,100.00,\n");
	free(text);
	free(json);
	free(csv);
	ana_doc_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_strpool),
		cmocka_unit_test(test_filter_parse),
		cmocka_unit_test(test_filter_time),
		cmocka_unit_test(test_doc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
