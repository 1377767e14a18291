/*
 * test_html.c - `perfrec-analyze html`: escaping of trace strings, the
 * page of the golden trace (its counters' ticks), bounded size on a long
 * trace (merged ticks), empty traces,
 * options, the command line, a page over one host's rotated files and
 * one over two hosts.
 *
 * Trace strings are untrusted: with tracegen's hostile names (a symbol
 * "</script><img src=x onerror=alert(1)>", a comm, the host, an event and
 * an object path made of markup) the page must hold exactly its own three
 * <script> elements and no element from the trace, the names appearing
 * escaped in the HTML and in the JSON data block. (tests/browser/ renders
 * that page in Chromium and checks the document it builds.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "analyzer/render/html.h"
#include "analyzer/read/trace.h"
#include "analyzer/render/table.h"
#include "format/sink.h"
#include "format/writer.h"
#include "lib/anatest.h"
#include "lib/tracegen.h"

static const char *dir;

static char *escaped(void (*fn)(FILE *, const char *), const char *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	assert_non_null(f);
	fn(f, s);
	fclose(f);
	return out;
}

static void test_escape(void **state)
{
	(void)state;
	char *h = escaped(ana_html_str, TRACEGEN_HOSTILE_SYM);
	assert_string_equal(h, "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;");
	free(h);
	h = escaped(ana_html_str, "a&b \"q\" 'p'\x01\x7f\tz\xc3\xa9");
	assert_string_equal(h, "a&amp;b &quot;q&quot; &#39;p&#39;&#xfffd;&#xfffd;\tz\xc3\xa9");
	free(h);
	h = escaped(ana_json_str_html, TRACEGEN_HOSTILE_SYM);
	assert_string_equal(h, "\"\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e\"");
	free(h);
	h = escaped(ana_json_str_html, "<!--\"\\&\n");
	assert_string_equal(h, "\"\\u003c!--\\\"\\\\\\u0026\\n\"");
	free(h);
	/* plain JSON output is unchanged */
	h = escaped(ana_json_str, "<a>&");
	assert_string_equal(h, "\"<a>&\"");
	free(h);
}

/* Writes the page of the trace at path with o; returns it (malloc'd). */
static char *page(const char *path, const struct ana_html_opts *o, size_t *len)
{
	struct ana_trace_opts so = { .jobs = 2, .symbols = 1 };
	struct ana_trace *s;
	assert_int_equal(ana_trace_open(&s, path, &so), 0);
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	assert_non_null(f);
	assert_int_equal(ana_html_run(s, o, f), 0);
	fclose(f);
	ana_trace_free(s);
	if (len)
		*len = n;
	return out;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0, l = strlen(needle);
	for (const char *p = hay; *p; p++)
		if (!strncasecmp(p, needle, l))
			n++;
	return n;
}

static void expect(const char *pg, const char *s)
{
	if (!strstr(pg, s))
		fail_msg("page lacks: %s", s);
}

static void test_hostile_names(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof(path), "%s/hostile.prec", dir);
	struct tracegen_opts o = TRACEGEN_OPTS_INIT;
	o.hostile = 1;
	assert_int_equal(tracegen_write(path, &o), 0);
	char *pg = page(path, NULL, NULL);
	/* the page's own scripts only: error counter, data block, code */
	assert_int_equal(count(pg, "<script"), 3);
	assert_int_equal(count(pg, "</script"), 3);
	assert_int_equal(count(pg, "<img"), 0);
	assert_int_equal(count(pg, "<svg"), 0);
	assert_int_equal(count(pg, "<iframe"), 0);
	assert_int_equal(count(pg, "<b>"), 0);
	assert_int_equal(count(pg, "<!--perfrec:"), 0);
	/* ... and each name is there, escaped */
	expect(pg, "<td>&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;</td>");
	expect(pg, "\"\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e\"");
	expect(pg, "<td>&quot;&gt;&lt;svg onload=alert(2)&gt;</td>");
	expect(pg, "\"\\\"\\u003e\\u003csvg onload=alert(2)\\u003e\"");
	expect(pg, "<span class=\"host\">&lt;b&gt;host&lt;/b&gt;&amp;amp;</span>");
	expect(pg, "<title>perfrec: &lt;b&gt;host&lt;/b&gt;&amp;amp;</title>");
	expect(pg, "&lt;script&gt;alert(3)&lt;/script&gt; (every 1)");
	expect(pg, "\"title\":\"\\u003cscript\\u003ealert(3)\\u003c/script\\u003e\"");
	expect(pg, "<td>&lt;iframe src=x&gt;&#39;</td>");
	free(pg);
}

static void test_golden_page(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof(path), "%s/golden.prec", dir);
	assert_int_equal(tracegen_write(path, NULL), 0);
	size_t len;
	char *pg = page(path, NULL, &len);
	assert_true(!strncmp(pg, "<!DOCTYPE html>", 15));
	assert_int_equal(count(pg, "<!--perfrec:"), 0);
	/* header */
	expect(pg, "<dt>CPUs</dt><dd>2 online, Golden CPU @ 1.00GHz</dd>");
	expect(pg, "<li class=\"bad\">lost 5 (kernel_lost) in 1 loss records");
	/* flame trees: cpu-clock 78 samples of 1 ms, page-faults 2 */
	expect(pg, "{\"kind\":\"samples\",\"title\":\"cpu-clock\",\"unit\":\"period\","
		   "\"weight\":78000000,\"count\":78,");
	expect(pg, "\"title\":\"page-faults\",\"unit\":\"period\",\"weight\":2,\"count\":2,");
	expect(pg, "\"names\":[\"pingpong\",\"main\",\"ping\",");
	/* timeline: the golden schedule, exact busy times */
	expect(pg, "\"timeline\":{\"t0\":0,\"t1\":70000000,");
	expect(pg, "{\"cpu\":0,\"busy\":48000000,\"intervals\":5,");
	expect(pg, "{\"cpu\":1,\"busy\":30000000,\"intervals\":3,");
	/* tracks: the sched table's on-CPU times, exact; the 5 lost records */
	expect(pg, "\"tracks\":{\"t0\":0,\"bin\":175001,\"nbins\":400,");
	expect(pg, "\"loss\":[205,5]");
	expect(pg, "{\"pid\":100,\"name\":0,\"run\":63000000,\"samples\":65,\"off\":0,"
		   "\"nthreads\":2,\"k\":2,");
	expect(pg, "{\"tid\":100,\"name\":0,\"run\":35000000,");
	expect(pg, "\"run\":28000000,\"samples\":");
	expect(pg, "{\"pid\":200,\"name\":");
	expect(pg, "\"run\":15000000,\"samples\":15,");
	/* selection data: per (bin, tid, pid, view node) weight and count;
	 * page-faults' two samples, in bins 18 and 189, both of pingpong */
	expect(pg, ",\n\"sel\":{\"f\":1,\"e\":[2,100,100,2,1000000,1,2,200,200,13,1000000,1,");
	expect(pg, ",\n\"sel\":{\"f\":1,\"e\":[18,100,100,1,1,1,189,100,100,1,1,1]}");
	/* each frame's object beside its kind (a name id: libc.so.6 10,
	 * [kernel.kallsyms] 11; -1 for the tasks), for the top-functions
	 * table a selection recomputes */
	expect(pg, "\"k\":[0,1,1,1,2,2,1,1,0,1,1,1,0,1],\"o\":[-1,0,0,10,11,11,0,10,-1,0,0,10,"
		   "-1,8]");
	expect(pg, "\"libc.so.6\",\"[kernel.kallsyms]\"]");
	/* bash's code without a symbol: one "[unknown] in bash" frame, as
	 * many addresses as it had; the table keeps report's row (the page's
	 * script groups it) */
	expect(pg, "\"bash\",\"[unknown] in bash\",");
	assert_null(strstr(pg, "\"[bash]+0x123\""));
	expect(pg, "<td>[bash]+0x123</td><td>bash</td>");
	/* the tasks table's selection data: per (bin, tid) on-CPU ns and
	 * switch-ins; pingpong ran from the start (bin 0, no switch-in)
	 * and was switched in again in bin 171; pong first in bin 68 */
	expect(pg, "\"sched\":{\"f\":1,\"e\":[0,100,175001,0,1,100,175001,0,");
	expect(pg, ",171,100,100172,1,172,100,175001,0,");
	expect(pg, ",68,101,75069,1,69,101,175001,0,");
	/* tables: report, sched, counters, info, in blocks a selection
	 * finds by name */
	expect(pg, "<div class=\"doc\" data-doc=\"report\">\n<table class=\"kv\"");
	expect(pg, "<div class=\"doc\" data-doc=\"sched\">\n<table class=\"kv\"");
	expect(pg, "<td>ping</td><td>pingpong</td><td>cpu-clock</td>");
	expect(pg, "<tr><td>pong</td><td class=\"n\">100</td><td class=\"n\">101</td>"
		   "<td class=\"n\">28.000</td>");
	expect(pg, "<td>{task-clock,context-switches}</td><td>task-clock</td>");
	/* the counters table follows a time range: per counter its ticks
	 * (time, previous tick, scaled delta; -1 not counted), those of
	 * `counters --interval` */
	expect(pg, "<div class=\"doc\" data-doc=\"counters\">\n<table class=\"kv\"");
	expect(pg, "A time range shows the sum of the counters&#39; deltas");
	expect(pg, ",\n\"counters\":{\"f\":1,\"rows\":[\n"
		   "{\"g\":\"{task-clock,context-switches}\",\"e\":\"task-clock\",\"t\":["
		   "20000000,0,30666666,40000000,20000000,33333333,60000000,40000000,26666666,"
		   "70000000,60000000,13333333]},\n"
		   "{\"g\":\"{task-clock,context-switches}\",\"e\":\"context-switches\",\"t\":["
		   "20000000,0,5,40000000,20000000,4,60000000,40000000,5,70000000,60000000,2]},\n"
		   "{\"g\":\"{cycles}\",\"e\":\"cycles\",\"t\":[20000000,0,-1,");
	expect(pg, "<th>hostname</th><td>golden-host</td>");
	free(pg);

	/* a tiny node budget prunes, and says so */
	struct ana_html_opts ho = { .sz = sizeof(ho), .max_nodes = 4 };
	pg = page(path, &ho, NULL);
	expect(pg, "\"fraction\":0.");
	assert_null(strstr(pg, "\"n\":[0,1,2,3,4,5,6,7,6,1,6,7,8,9]"));
	const char *p = strstr(pg, "\"caller\":{\"n\":[");
	assert_non_null(p);
	assert_non_null(strstr(p, "],\"p\":[["));   /* placeholders listed */
	free(pg);
}

/* 3000 copies of the golden timeline (300 s): the page stays small, the
 * lanes hold at most their buckets, the busy times stay exact (equal to
 * sched's; on CPU1 each later copy's "bash" is first seen switching out
 * at 5 ms, so it ran since CPU1's previous record, the copy before's
 * switch at 70 ms: 30 + 2999 x 60 ms). */
static void test_bounded(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof(path), "%s/long.prec", dir);
	struct tracegen_opts o = TRACEGEN_OPTS_INIT;
	o.repeat = 3000;
	assert_int_equal(tracegen_write(path, &o), 0);
	size_t len;
	char *pg = page(path, NULL, &len);
	assert_true(len < 1024 * 1024);
	expect(pg, "\"nbuckets\":4096,");
	expect(pg, "{\"cpu\":0,\"busy\":144000000000,\"intervals\":15000,");
	expect(pg, "{\"cpu\":1,\"busy\":179970000000,\"intervals\":9000,");
	expect(pg, "<tr><td class=\"n\">0</td><td class=\"n\">144000.000</td>");
	expect(pg, "<tr><td class=\"n\">1</td><td class=\"n\">179970.000</td>");
	expect(pg, "\"weight\":234000000000,\"count\":234000,");
	/* 12,000 ticks of each of 3 counters: merged by 16 to fit the
	 * budget, each ending at its last snapshot (the 4th copy's 70 ms),
	 * its delta the sum of its 16 */
	expect(pg, "\"counters\":{\"f\":16,\"rows\":[");
	expect(pg, "\"e\":\"task-clock\",\"t\":[370000000,0,323999994,770000000,370000000,");
	free(pg);
}

/* A trace with a header and nothing else: a page with no graphs. */
static void test_empty_trace(void **state)
{
	(void)state;
	struct prec_writer_opts wo = PREC_WRITER_OPTS_INIT;
	struct prec_sink *sink = prec_sink_mem_new();
	assert_non_null(sink);
	struct prec_writer *w = prec_writer_new(sink, &wo);
	assert_non_null(w);
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__FileHeader h = PERFREC__FILE_HEADER__INIT;
	h.start_time = 1000;
	h.cpus_online = 4;
	p.data_case = PERFREC__PACKET__DATA_HEADER;
	p.header = &h;
	assert_int_equal(prec_writer_append(w, 0, &p, 0), 0);
	assert_int_equal(prec_writer_close(w), 0);
	size_t len;
	const void *buf = prec_sink_mem_data(sink, &len);
	struct ana_trace_opts so = { .jobs = 1, .symbols = 1, .mem = buf, .mem_len = len };
	struct ana_trace *s;
	assert_int_equal(ana_trace_open(&s, "mem", &so), 0);
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	assert_int_equal(ana_html_run(s, NULL, f), 0);
	fclose(f);
	expect(out, "\"flames\":[]");
	expect(out, "\"timeline\":null");
	expect(out, "No context-switch records in this trace");
	free(out);

	/* options: sz checked, trailing bytes must be zero */
	struct { struct ana_html_opts o; uint64_t more; } big;
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	f = fopen("/dev/null", "w");
	assert_int_equal(ana_html_run(s, &big.o, f), 0);
	big.more = 1;
	assert_int_equal(ana_html_run(s, &big.o, f), -EINVAL);
	big.o.sz = 0;
	assert_int_equal(ana_html_run(s, &big.o, f), -EINVAL);
	fclose(f);
	ana_trace_free(s);
	prec_writer_free(w);
	prec_sink_free(sink);
}

static void test_cli(void **state)
{
	(void)state;
	char *out = NULL, *err = NULL;
	size_t len = 0;
	assert_int_equal(anatest_run(dir, "html golden.prec --cpu 1 --comm pong", &out, &len, &err), 0);
	assert_true(!strncmp(out, "<!DOCTYPE html>", 15));
	expect(out, "<dt>Filters</dt><dd>cpu 1; comm pong</dd>");
	/* only pong's run on CPU1 (35-45 ms) and CPU 1's lane */
	expect(out, "\"lanes\":[\n{\"cpu\":1,\"busy\":10000000,\"intervals\":1,");
	assert_null(strstr(out, "{\"cpu\":0,"));
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "html golden.prec -o page.html", &out, &len, &err), 0);
	assert_int_equal(len, 0);
	free(out);
	free(err);
	char p[4096];
	snprintf(p, sizeof(p), "%s/page.html", dir);
	out = anatest_read(p, &len);
	assert_non_null(out);
	assert_true(len > 10000);
	free(out);
	assert_int_equal(anatest_run(dir, "html golden.prec --json", &out, &len, &err), 2);
	expect(err, "--json and --csv do not apply");
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "html golden.prec --hist", &out, &len, &err), 2);
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "html --help", &out, &len, &err), 0);
	expect(out, "usage: perfrec-analyze html FILE");
	free(out);
	free(err);
}

/* One host's rotated files are one page: the flame graph's and the
 * timeline's totals are the two files', the header counts them; two
 * hosts are refused, naming --host, and --host picks one. */
static void test_dataset(void **state)
{
	(void)state;
	char path[4096];
	struct tracegen_opts o = TRACEGEN_OPTS_INIT;
	o.rotated = 1;
	snprintf(path, sizeof(path), "%s/rot1.prec", dir);
	assert_int_equal(tracegen_write(path, &o), 0);
	o.offset_ns = 100000000;
	snprintf(path, sizeof(path), "%s/rot2.prec", dir);
	assert_int_equal(tracegen_write(path, &o), 0);
	o = (struct tracegen_opts)TRACEGEN_OPTS_INIT;
	o.host = "other-host";
	snprintf(path, sizeof(path), "%s/other.prec", dir);
	assert_int_equal(tracegen_write(path, &o), 0);

	char *out = NULL, *err = NULL;
	size_t len = 0;
	assert_int_equal(anatest_run(dir, "html rot1.prec", &out, &len, &err), 0);
	expect(out, "\"weight\":78000000,\"count\":78,");
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "html rot2.prec rot1.prec", &out, &len, &err), 0);
	expect(out, "\"weight\":156000000,\"count\":156,");
	expect(out, " \xc2\xb7 2 files</span>");
	expect(out, "<dt>Files</dt><dd>");
	/* one timeline over both: CPU 0's busy time twice one file's */
	expect(out, "{\"cpu\":0,\"busy\":96000000,");
	free(out);
	free(err);
	/* two hosts: one page, a part per host (rot1's and rot2's files of
	 * the golden host in one part: two files; other-host's one), each
	 * part's data its own page's, the host selector in the header */
	assert_int_equal(anatest_run(dir, "html rot1.prec rot2.prec other.prec", &out, &len,
				     &err), 0);
	expect(out, "<title>perfrec: 2 hosts</title>");
	expect(out, "<select id=\"host-which\"");
	expect(out, "{\"version\":1,\"hosts\":[\"golden-host\",\"other-host\"],\"parts\":[\n"
		   "{\"version\":1,");
	expect(out, "\"weight\":156000000,\"count\":156,");
	expect(out, "\"weight\":78000000,\"count\":78,");
	expect(out, "<div class=\"host-part\" data-host-index=\"0\">\n<h1>perfrec trace "
		   "<span class=\"host\">golden-host</span>");
	expect(out, "<div class=\"host-part\" data-host-index=\"1\" hidden>\n<h1>perfrec trace "
		   "<span class=\"host\">other-host</span>");
	assert_int_equal(count(out, "<div class=\"doc\" data-doc=\"report\">"), 2);
	free(out);
	free(err);
	assert_int_equal(anatest_run(dir, "html rot1.prec rot2.prec other.prec --host other-host",
				     &out, &len, &err), 0);
	expect(out, "\"weight\":78000000,\"count\":78,");
	expect(out, "<span class=\"host\">other-host</span>");
	free(out);
	free(err);
}

static int setup(void **state)
{
	(void)state;
	dir = anatest_tmpdir("html");
	return dir ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_hostile_names),
		cmocka_unit_test(test_golden_page),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_empty_trace),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_dataset),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
