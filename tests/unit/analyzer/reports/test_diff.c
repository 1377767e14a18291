/*
 * test_diff.c - `perfrec-analyze diff` on traces whose split is known.
 *
 * tracegen's split traces put a given share of their samples in ping and
 * the rest in pong (tests/lib/tracegen.h). Base: 100 samples, 20% ping,
 * period 1 ms. New: 300 samples, 70% ping, period 0.5 ms: another length
 * and another period, so only shares of each side's own period give the
 * +50/-50 points the traces were made with, exactly.
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

#include "analyzer/read/filter.h"
#include "analyzer/read/trace.h"
#include "analyzer/reports/diff.h"
#include "analyzer/reports/report.h"
#include "analyzer/render/table.h"
#include "lib/anatest.h"
#include "lib/tracegen.h"

static const char *dir;
static char base_path[4096], new_path[4096], one_path[4096];

static void write_split(const char *path, int pct, int n, unsigned long long period)
{
	struct tracegen_opts o = TRACEGEN_OPTS_INIT;
	o.split = pct;
	o.split_samples = n;
	o.split_period = period;
	assert_int_equal(tracegen_write(path, &o), 0);
}

static int setup(void **state)
{
	(void)state;
	dir = anatest_tmpdir("diff");
	snprintf(base_path, sizeof(base_path), "%s/base.prec", dir);
	snprintf(new_path, sizeof(new_path), "%s/new.prec", dir);
	snprintf(one_path, sizeof(one_path), "%s/one.prec", dir);
	write_split(base_path, 20, 100, 1000000);
	write_split(new_path, 70, 300, 500000);
	write_split(one_path, 20, 100, 1000000);
	return 0;
}

static struct ana_trace *open_trace(const char *path)
{
	struct ana_trace *s;
	struct ana_trace_opts so = { .jobs = 2, .symbols = 1 };
	assert_int_equal(ana_trace_open(&s, path, &so), 0);
	return s;
}

/* The library: shares per side, totals, and report's numbers. */
static void test_shares(void **state)
{
	(void)state;
	struct ana_trace *b = open_trace(base_path), *n = open_trace(new_path);
	struct ana_diff_opts o = { .nkeys = 0 };
	struct ana_diff *d = ana_diff_new(&o);
	assert_non_null(d);
	assert_int_equal(ana_diff_add(d, ANA_DIFF_BASE, b, NULL, "base"), 0);
	assert_int_equal(ana_diff_add(d, ANA_DIFF_NEW, n, NULL, "new"), 0);
	uint64_t samples, period;
	ana_diff_totals(d, ANA_DIFF_BASE, &samples, &period);
	assert_int_equal(samples, 100);
	assert_int_equal(period, 100 * 1000000ull);
	ana_diff_totals(d, ANA_DIFF_NEW, &samples, &period);
	assert_int_equal(samples, 300);
	assert_int_equal(period, 300 * 500000ull);
	assert_true(ana_diff_sym_share(d, ANA_DIFF_BASE, "ping") == 20.0);
	assert_true(ana_diff_sym_share(d, ANA_DIFF_BASE, "pong") == 80.0);
	assert_true(ana_diff_sym_share(d, ANA_DIFF_NEW, "ping") == 70.0);
	assert_true(ana_diff_sym_share(d, ANA_DIFF_NEW, "pong") == 30.0);
	assert_true(ana_diff_sym_share(d, ANA_DIFF_NEW, "main") == 0.0);

	/* the rows as a program reads them */
	struct ana_doc *doc = ana_doc_new();
	assert_int_equal(ana_diff_render(d, doc), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(ana_doc_render(doc, f, ANA_FMT_JSON), 0);
	fclose(f);
	/* |delta| ties (50 and 50): the larger new share first */
	const char *ping = strstr(buf, "{\"delta\": 50.00, \"base\": 20.00, \"new\": 70.00, "
				  "\"base_samples\": 20, \"new_samples\": 210, \"sym\": \"ping\"}");
	const char *pong = strstr(buf, "{\"delta\": -50.00, \"base\": 80.00, \"new\": 30.00, "
				  "\"base_samples\": 80, \"new_samples\": 90, \"sym\": \"pong\"}");
	if (!ping || !pong || ping > pong)
		fail_msg("diff JSON:\n%s", buf);
	assert_non_null(strstr(buf, "\"base_samples\": 100,"));
	assert_non_null(strstr(buf, "\"new_period\": 150000000"));
	free(buf);
	ana_doc_free(doc);
	ana_diff_free(d);

	/* the same pass as report: a side of one trace adds up to it */
	struct ana_report_opts ro = { .nkeys = 1, .keys = { ANA_KEY_SYM } };
	struct ana_doc *rd = ana_doc_new();
	assert_int_equal(ana_report_run(n, &ro, rd), 0);
	f = open_memstream(&buf, &len);
	assert_int_equal(ana_doc_render(rd, f, ANA_FMT_CSV), 0);
	fclose(f);
	assert_non_null(strstr(buf, "70.00,210,105000000,ping\n"));
	assert_non_null(strstr(buf, "30.00,90,45000000,pong\n"));
	free(buf);
	ana_doc_free(rd);
	ana_trace_free(b);
	ana_trace_free(n);
}

static char *run(const char *args, int want)
{
	char *out = NULL, *err = NULL;
	size_t len;
	int st = anatest_run(dir, args, &out, &len, &err);
	if (st != want)
		fail_msg("perfrec-analyze %s: exit %d, wanted %d\nstdout:\n%s\nstderr:\n%s", args,
			 st, want, out ? out : "", err ? err : "");
	free(err);
	return out;
}

static void expect(const char *text, const char *s)
{
	if (!strstr(text, s))
		fail_msg("output lacks: %s\n--- output:\n%s", s, text);
}

/* The command line: text, CSV, keys, top. */
static void test_cli(void **state)
{
	(void)state;
	char *out = run("diff base.prec new.prec --no-progress", 0);
	/* text: the larger change first, signed, and both sides' samples */
	const char *ping = strstr(out, "+50.00%"), *pong = strstr(out, "-50.00%");
	if (!ping || !pong || ping > pong)
		fail_msg("diff text:\n%s", out);
	expect(out, "ping");
	expect(out, "base.prec");
	expect(out, "new.prec");
	free(out);

	out = run("diff base.prec new.prec --csv -s dso,sym", 0);
	expect(out, "delta,base,new,base_samples,new_samples,dso,sym\n");
	expect(out, "+50.00,20.00,70.00,20,210,pingpong,ping\n");
	expect(out, "-50.00,80.00,30.00,80,90,pingpong,pong\n");
	free(out);

	out = run("diff base.prec new.prec --csv -n 1", 0);
	expect(out, "+50.00,20.00,70.00,20,210,ping\n");
	if (strstr(out, "pong"))
		fail_msg("-n 1 kept a second row:\n%s", out);
	free(out);

	/* the sides swapped: the signs turn */
	out = run("diff new.prec base.prec --csv", 0);
	expect(out, "-50.00,70.00,20.00,210,20,ping\n");
	expect(out, "+50.00,30.00,80.00,90,80,pong\n");
	free(out);

	/* a filter that keeps nothing on either side says so */
	out = run("diff base.prec new.prec --comm nosuch", 0);
	expect(out, "no sample passed the filters on either side");
	free(out);
}

/* One trace cut in two windows: its first 20 ms are all ping (samples
 * at 0.5 .. 19.5 ms), the next 80 ms all pong. */
static void test_windows(void **state)
{
	(void)state;
	char *out = run("diff one.prec --base-time 0,0.02 --new-time 0.02,0.1 --csv", 0);
	expect(out, "-100.00,100.00,0.00,20,0,ping\n");
	expect(out, "+100.00,0.00,100.00,0,80,pong\n");
	/* each side named with its window */
	expect(out, "base,one.prec 0.000-0.020 s\n");
	expect(out, "new,one.prec 0.020-0.100 s\n");
	free(out);
	/* windows on two files: the first 10 ms of base (all ping) against
	 * the whole of new */
	out = run("diff base.prec new.prec --base-time 0,0.01 --csv", 0);
	expect(out, "-30.00,100.00,70.00,10,210,ping\n");
	expect(out, "+30.00,0.00,30.00,0,90,pong\n");
	free(out);
}

/* html --diff: NEW's page whose trees carry both sides' weights. The
 * caller tree (pre-order, heaviest first): task pingpong, main, ping,
 * pong; widths from new, "b" the base's weight through each node. */
static void test_html(void **state)
{
	(void)state;
	char path[4096];
	char *out = run("html --diff base.prec new.prec -o d.html", 0);
	free(out);
	snprintf(path, sizeof(path), "%s/d.html", dir);
	char *pg = anatest_read(path, NULL);
	assert_non_null(pg);
	expect(pg, "{\"version\":1,\"diff\":true,");
	expect(pg, "\"weight\":150000000,\"count\":300,\"base\":100000000,\"baseCount\":100,");
	expect(pg, "\"w\":[150000000,150000000,105000000,45000000],"
	       "\"s\":[0,0,105000000,45000000],\"c\":[300,300,210,90],"
	       "\"b\":[100000000,100000000,20000000,80000000]");
	/* the callee tree: ping and pong on top */
	expect(pg, "\"b\":[20000000,20000000,20000000,80000000,80000000,80000000]");
	/* the changes table and what the page compares */
	expect(pg, "Changes from the base");
	expect(pg, "<dt>Compared with</dt><dd>base.prec</dd>");
	free(pg);

	/* one trace in two windows: the same trees, other weights */
	out = run("html --diff one.prec --base-time 0,0.02 --new-time 0.02,0.1 -o w.html", 0);
	free(out);
	snprintf(path, sizeof(path), "%s/w.html", dir);
	pg = anatest_read(path, NULL);
	assert_non_null(pg);
	expect(pg, "\"weight\":80000000,\"count\":80,\"base\":20000000,\"baseCount\":20,");
	expect(pg, "<dt>Compared with</dt><dd>one.prec 0.000-0.020 s</dd>");
	free(pg);
	/* profiles only the base has (off-CPU time, page-faults samples) get
	 * no tree: there is nothing of the new side to draw */
	struct tracegen_opts to = TRACEGEN_OPTS_INIT;
	to.offcpu = 1;
	snprintf(path, sizeof(path), "%s/offcpu.prec", dir);
	assert_int_equal(tracegen_write(path, &to), 0);
	out = run("html --diff offcpu.prec new.prec -o o.html", 0);
	free(out);
	snprintf(path, sizeof(path), "%s/o.html", dir);
	pg = anatest_read(path, NULL);
	assert_non_null(pg);
	expect(pg, "\"flames\":[\n{\"kind\":\"samples\",\"title\":\"cpu-clock\",\"unit\":"
	       "\"period\",\"weight\":150000000,\"count\":300,\"base\":78000000,");
	if (strstr(pg, "\"kind\":\"offcpu\"") || strstr(pg, "\"title\":\"page-faults\""))
		fail_msg("a tree of the base's alone");
	free(pg);

	char *err = NULL;
	size_t len;
	int st = anatest_run(dir, "html --diff base.prec new.prec --json -o x.html", &out, &len,
			     &err);
	assert_int_equal(st, 2);
	free(out);
	free(err);
}

/* Usage errors name the fix and exit 2. */
static void test_usage(void **state)
{
	(void)state;
	char *out = NULL, *err = NULL;
	size_t len;
	static const struct { const char *args, *msg; } cases[] = {
		{ "diff", "missing BASE and NEW" },
		{ "diff one.prec", "give --base-time A,B and --new-time C,D" },
		{ "diff base.prec new.prec one.prec", "too many inputs" },
		{ "diff one.prec --base-time x --new-time 1,2", "bad --base-time 'x'" },
		{ "diff one.prec --base-time 0,1 --new-time 1,2 --time 0,1", "--time does not apply" },
		{ "diff base.prec new.prec -s nope", "bad --sort 'nope'" },
		{ "diff base.prec missing.prec", "cannot read missing.prec" },
		{ "diff base.prec new.prec --event nosuch", "no event 'nosuch'" },
		{ "diff base.prec new.prec --diff", "--diff belongs to html" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st = anatest_run(dir, cases[i].args, &out, &len, &err);
		if (st != 2 || !err || !strstr(err, cases[i].msg))
			fail_msg("%s: exit %d, stderr: %s", cases[i].args, st, err ? err : "");
		free(out);
		free(err);
	}
	out = run("diff --help", 0);
	expect(out, "--base-time A,B");
	expect(out, "html --diff BASE NEW");
	free(out);
	out = run("help diff", 0);
	expect(out, "usage: perfrec-analyze diff BASE NEW");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_usage),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
