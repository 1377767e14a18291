/*
 * test_tables.c - the analyzer's building blocks: hash map, string pool,
 * filters (parsing untrusted option text, matching) and the document
 * renderers (text alignment, JSON escaping, CSV quoting), and what
 * reaches a terminal from a trace whose names hold control characters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyzer/read/filter.h"
#include "format/base/hashmap.h"
#include "analyzer/read/strpool.h"
#include "analyzer/render/table.h"
#include "format/strescape.h"
#include "lib/anatest.h"
#include "lib/tracegen.h"

struct key {
	uint32_t a, b;
};

static void test_map(void **state)
{
	(void)state;
	struct prec_hashmap m;
	prec_hashmap_init(&m, sizeof(struct key), sizeof(uint64_t));
	/* Enough entries to grow both tables several times. */
	for (uint32_t i = 0; i < 20000; i++) {
		struct key k = { i % 5000, i / 5000 };
		int created;
		uint64_t *v = prec_hashmap_get(&m, &k, &created);
		assert_non_null(v);
		assert_true(created);
		*v = i;
	}
	assert_int_equal(prec_hashmap_count(&m), 20000);
	for (uint32_t i = 0; i < 20000; i++) {
		struct key k = { i % 5000, i / 5000 };
		int created;
		uint64_t *v = prec_hashmap_get(&m, &k, &created);
		assert_false(created);
		assert_int_equal(*v, i);
		/* insertion order is iteration order */
		assert_memory_equal(prec_hashmap_key(&m, i), &k, sizeof(k));
	}
	struct key missing = { 6000, 0 };
	assert_null(prec_hashmap_find(&m, &missing));
	prec_hashmap_release(&m);
	/* An empty map finds nothing and releases cleanly. */
	prec_hashmap_init(&m, sizeof(struct key), 1);
	assert_null(prec_hashmap_find(&m, &missing));
	prec_hashmap_release(&m);
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
		"file  a \"b\"\\x0a\n"
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
		"# summary\nkey,value\nfile,\"a \"\"b\"\"\\x0a\"\nn,42\n\n"
		"# rows\nname,pct,n\n\"x,y\",12.50,7\nlonger name,100.00,\n");
	free(text);
	free(json);
	free(csv);
	ana_doc_free(d);
}

/* Control characters in cells: escaped in text and CSV, with the columns
 * aligned on what is written; \u escapes (and U+FFFD for bytes that are
 * not UTF-8) in JSON. */
static void test_doc_controls(void **state)
{
	(void)state;
	struct ana_doc *d = ana_doc_new();
	struct ana_table *t = ana_doc_table(d, "rows", NULL);
	ana_table_col(t, "name", "Name", ANA_STR);
	ana_table_col(t, "n", "N", ANA_NUM);
	ana_table_row(t);
	ana_cell_str(t, "\x1b[1mA\x9b\xc2\x9bz\xe2\x82\xac");
	ana_cell_num(t, "%d", 1);
	ana_table_row(t);
	ana_cell_str(t, "tab\there");
	ana_cell_num(t, "%d", 22);

	char *text = render(d, ANA_FMT_TEXT);
	assert_string_equal(text,
		"Name                       N\n"
		"\\x1b[1mA\\x9b\\xc2\\x9bz\xe2\x82\xac   1\n"
		"tab\\x09here               22\n");
	char *csv = render(d, ANA_FMT_CSV);
	assert_string_equal(csv, "name,n\n\\x1b[1mA\\x9b\\xc2\\x9bz\xe2\x82\xac,1\n"
			    "tab\\x09here,22\n");
	char *json = render(d, ANA_FMT_JSON);
	assert_non_null(strstr(json, "\"\\u001b[1mA\\ufffd\\u009bz\xe2\x82\xac\""));
	assert_non_null(strstr(json, "\"tab\\there\""));
	free(text);
	free(csv);
	free(json);
	ana_doc_free(d);
}

/* What a terminal would act on: a C0 byte other than the line ends this
 * output writes itself, DEL, a C1 code point (UTF-8 or a lone byte), or a
 * byte that is not UTF-8. NULL when there is none. */
static const char *raw_control(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = prec_utf8_char(s + i, n - i, &cp);
		if (!k || (prec_is_control(cp) && cp != '\n'))
			return s + i;
		i += k;
	}
	return NULL;
}

/* tracegen's hostile trace through every text, CSV and JSON output:
 * the names are shown, escaped, and no control byte from the trace gets
 * through. */
static void test_hostile_controls(void **state)
{
	(void)state;
	static const char *const cmds[] = {
		"info hostile.prec", "info hostile.prec --csv", "info hostile.prec --json",
		"report hostile.prec", "report hostile.prec --csv",
		"report hostile.prec --sort comm,sym,dso", "report hostile.prec --children",
		"report hostile.prec --json", "sched hostile.prec", "sched hostile.prec --csv",
		"dump hostile.prec", "dump hostile.prec --json",
		"export hostile.prec --format folded", "export hostile.prec --format csv",
		"export hostile.prec --format json",
		"report hostile.prec --event nosuch",   /* the error lists the events */
	};
	const char *dir = anatest_tmpdir("hostile-text");
	char path[4096];
	snprintf(path, sizeof(path), "%s/hostile.prec", dir);
	struct tracegen_opts o = TRACEGEN_OPTS_INIT;
	o.hostile = 1;
	assert_int_equal(tracegen_write(path, &o), 0);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *out = NULL, *err = NULL;
		size_t len = 0;
		int st = anatest_run(dir, cmds[i], &out, &len, &err);
		const char *bad = raw_control(out, len);
		if (bad)
			fail_msg("%s: raw control byte 0x%02x at %zu: ...%.40s", cmds[i],
				 (unsigned char)*bad, (size_t)(bad - out), bad > out + 20 ? bad - 20 : out);
		bad = raw_control(err, strlen(err));
		if (bad)
			fail_msg("%s: raw control byte 0x%02x on stderr: %s", cmds[i],
				 (unsigned char)*bad, err);
		if (st != (strstr(cmds[i], "nosuch") ? 2 : 0))
			fail_msg("%s: exit status %d: %s", cmds[i], st, err);
		if (!strstr(cmds[i], "nosuch")) {
			/* a name never starts a line of its own */
			assert_null(strstr(out, "\nforged line"));
		}
		/* the hostile comm is shown (escaped) where comms are */
		if (!strncmp(cmds[i], "sched", 5) || !strncmp(cmds[i], "info hostile.prec", 17) ||
		    !strncmp(cmds[i], "dump", 4)) {
			const char *want = strstr(cmds[i], "--json") ? "\\u001b]0;owned\\u0007pong" :
					   !strncmp(cmds[i], "dump", 4) ? "\\u001b]0;owned\\u0007pong" :
					   "\\x1b]0;owned\\x07pong\\x0d\\x0aforged line \\x9b31m"
					   "\\xc2\\x9b1m\\xff\\xc0\\xaf\\x7f\\x08\\x09end";
			if (!strstr(out, want))
				fail_msg("%s: no %s in:\n%s", cmds[i], want, out);
		}
		free(out);
		free(err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_strpool),
		cmocka_unit_test(test_filter_parse),
		cmocka_unit_test(test_filter_time),
		cmocka_unit_test(test_doc),
		cmocka_unit_test(test_doc_controls),
		cmocka_unit_test(test_hostile_controls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
