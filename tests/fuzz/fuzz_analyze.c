/*
 * fuzz_analyze.c - every analyzer report over arbitrary bytes.
 *
 * The input is opened as a trace from memory and run through info,
 * report (with children), sched, counters, verify, dump, the folded
 * and pprof exports and the HTML page, with both the serial and the threaded decoder. No
 * input may crash, hang, leak or trip a sanitizer; errors are fine.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/counters.h"
#include "analyzer/dump.h"
#include "analyzer/export.h"
#include "analyzer/html.h"
#include "analyzer/info.h"
#include "analyzer/report.h"
#include "analyzer/sched.h"
#include "analyzer/session.h"
#include "analyzer/table.h"
#include "analyzer/verify.h"

static FILE *sink(void)
{
	static FILE *f;
	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

/* One session per report, as perfrec-analyze runs them. */
static void one(const uint8_t *data, size_t size, int jobs, int which)
{
	int single = which > 0;
	struct ana_session_opts so = { .jobs = jobs, .symbols = !single,
				       .single_pass = single, .mem = data,
				       .mem_len = size };
	struct ana_session *s;
	if (ana_session_open(&s, "fuzz.prec", &so) < 0)
		return;
	struct ana_doc *d = ana_doc_new();
	char err[256];
	int whole;
	struct ana_report_opts ro = { .children = 1 };
	struct ana_report_opts rof = { .children = 1, .off_cpu = 1 };
	struct ana_sched_opts sc = { .hist = 1, .jobs = jobs };
	struct ana_counters_opts co = { .interval = 1, .ratio = "a/b" };
	struct ana_dump_opts dop = { .fmt = ANA_FMT_JSON, .jobs = jobs };
	switch (which) {
	case 0:
		ana_info_run(s, d);
		ana_report_run(s, &ro, d);
		ana_report_run(s, &rof, d);
		ana_export_folded(s, NULL, 0, sink());
		ana_export_folded(s, NULL, 1, sink());
		ana_export_pprof(s, NULL, 0, sink());
		ana_export_pprof(s, NULL, 1, sink());
		ana_html_run(s, NULL, sink());
		break;
	case 1: ana_sched_run(s, &sc, d); break;
	case 2: ana_counters_run(s, &co, d, err, sizeof(err)); break;
	case 3: ana_verify_run(s, jobs, d, &whole); break;
	default: ana_dump_run(s, &dop, sink()); break;
	}
	ana_doc_render(d, sink(), ANA_FMT_JSON);
	ana_doc_free(d);
	ana_session_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int which = 0; which < 5; which++)
		one(data, size, 1, which);
	one(data, size, 2, 1);   /* threaded decode + time merge */
	one(data, size, 2, 4);
	return 0;
}
