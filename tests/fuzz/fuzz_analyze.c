/*
 * fuzz_analyze.c - every analyzer command over arbitrary bytes.
 *
 * Input: one byte that selects the command, then the bytes of a trace,
 * opened from memory as perfrec-analyze opens a file. One session and one
 * command per input, so an execution costs one pass over a small trace
 * rather than every command over it (the fuzzer mutates the selector like
 * any other byte, so every command sees every input it finds). Bit 7 of
 * the selector decodes with two threads (parallel decode, time merge).
 * C_QUERY reads the trace as a dataset of one file through the query's
 * virtual tables (analyzer/query/), every table by a fixed set of SQL
 * statements. No input may crash, hang, leak or trip a sanitizer; errors
 * are fine.
 *
 * Seeds (corpus/fuzz_analyze/CMD-TRACE.prec): a trace with the selector
 * of a command in front, made as
 *   { printf '\x01'; cat golden-1.1.prec; } > corpus/fuzz_analyze/report-golden-1.1.prec
 * Inputs are kept small (run.sh: -max_len) so an execution stays short.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/query/query.h"
#include "analyzer/read/dataset.h"
#include "analyzer/reports/counters.h"
#include "analyzer/reports/diff.h"
#include "analyzer/reports/dump.h"
#include "analyzer/render/export.h"
#include "analyzer/render/html.h"
#include "analyzer/render/timed.h"
#include "analyzer/reports/info.h"
#include "analyzer/reports/report.h"
#include "analyzer/reports/sched.h"
#include "analyzer/reports/script.h"
#include "analyzer/read/trace.h"
#include "analyzer/render/table.h"
#include "analyzer/reports/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum cmd {
	C_INFO, C_REPORT, C_REPORT_OFFCPU, C_FOLDED, C_FOLDED_OFFCPU, C_PPROF,
	C_PPROF_OFFCPU, C_HTML, C_SCHED, C_COUNTERS, C_VERIFY, C_DUMP, C_DUMP_FILE,
	C_PERFETTO, C_SPEEDSCOPE, C_OTLP, C_REPORT_TREE, C_SCRIPT,
	C_DIFF, C_HTML_DIFF,   /* the trace against itself */
	C_QUERY,
	C_COUNT
};

static FILE *sink(void)
{
	static FILE *f;
	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

/* Every table, a window, cpu and stack_id lookups, a join, the view. */
static const char *const query_sql[] = {
	"SELECT count(*), sum(period), count(DISTINCT stack_id), max(sym), max(dso), "
	"max(comm), max(event) FROM samples",
	"SELECT * FROM samples WHERE time_ns BETWEEN 1 AND 9223372036854775807 AND cpu = 0 "
	"LIMIT 50",
	"SELECT count(*), max(sym), max(addr) FROM stacks",
	"SELECT k.* FROM samples s JOIN stacks k USING (stack_id) LIMIT 50",
	"SELECT * FROM switches LIMIT 100",
	"SELECT count(*), sum(next_tid) FROM switches WHERE time_ns > 0",
	"SELECT * FROM offcpu LIMIT 50",
	"SELECT * FROM counters LIMIT 50",
	"SELECT * FROM tasks",
	"SELECT * FROM losses",
	"SELECT * FROM files",
	"SELECT * FROM profile LIMIT 20",
};

/* The trace as a dataset of one file, read through the query's tables. */
static int run_query(const uint8_t *buf, size_t len, int jobs)
{
	struct ana_dataset *ds;
	if (ana_dataset_open(&ds, NULL, 0, NULL) < 0)
		return 0;
	struct ana_dataset_file *f = calloc(1, sizeof(*f));
	if (f && ana_dataset_probe_mem(ds, buf, len, "fuzz.prec", f) == 0) {
		free(ds->files);   /* an empty dataset's (none) */
		ds->files = f;     /* freed with the dataset */
		ds->nfiles = 1;
		f = NULL;
		const void *mem[1] = { buf };
		size_t mem_len[1] = { len };
		struct ana_query_opts qo = { .jobs = jobs, .mem = mem, .mem_len = mem_len };
		struct ana_query *q;
		if (ana_query_new(&q, ds, &qo) == 0) {
			for (size_t i = 0; i < sizeof(query_sql) / sizeof(query_sql[0]); i++) {
				struct ana_doc *d = ana_doc_new();
				char err[256];
				if (d && ana_query_run(q, query_sql[i], d, err, sizeof(err)) == 0)
					ana_doc_render(d, sink(), (enum ana_fmt)(i % 3));
				ana_doc_free(d);
			}
			ana_query_free(q);
		}
	}
	free(f);
	ana_dataset_free(ds);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int jobs = data[0] & 0x80 ? 2 : 1;
	enum cmd c = (enum cmd)((data[0] & 0x7F) % C_COUNT);
	if (c == C_QUERY)
		return run_query(data + 1, size - 1, jobs);
	/* as perfrec-analyze's main sets its session up per command */
	int report = c == C_REPORT || c == C_REPORT_OFFCPU || c == C_REPORT_TREE ||
		     c == C_SCRIPT;
	int syms = report || c == C_FOLDED || c == C_FOLDED_OFFCPU || c == C_PPROF ||
		   c == C_PPROF_OFFCPU || c == C_HTML || c == C_PERFETTO || c == C_SPEEDSCOPE ||
		   c == C_OTLP || c == C_DIFF || c == C_HTML_DIFF;
	int single = c == C_SCHED || c == C_COUNTERS || c == C_VERIFY || c == C_DUMP ||
		     c == C_DUMP_FILE;
	struct ana_trace_opts so = { .jobs = jobs, .symbols = syms,
				       .single_pass = single, .mem = data + 1,
				       .mem_len = size - 1 };
	if (report) {
		so.pass1_kinds = PREC_KINDS_ALL &
			~(PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH) |
			  PREC_KIND(PERFREC__PACKET__DATA_GROUP) |
			  PREC_KIND(PERFREC__PACKET__DATA_RAW));
		so.deferred_kinds = PREC_KIND(c == C_REPORT_OFFCPU ?
					      PERFREC__PACKET__DATA_OFF_CPU :
					      PERFREC__PACKET__DATA_SAMPLE);
	}
	struct ana_trace *s;
	if (ana_trace_open(&s, "fuzz.prec", &so) < 0)
		return 0;
	struct ana_doc *d = ana_doc_new();
	char err[256];
	int whole;
	struct ana_report_opts ro = { .children = 1, .off_cpu = c == C_REPORT_OFFCPU,
				      .tree = c == C_REPORT_TREE };
	struct ana_script_opts sco = { .filter = NULL };
	struct ana_sched_opts sc = { .hist = 1, .jobs = jobs };
	struct ana_counters_opts co = { .interval = 1, .ratio = "a/b" };
	struct ana_dump_opts dop = { .fmt = ANA_FMT_JSON, .jobs = jobs,
				     .file_order = c == C_DUMP_FILE };
	switch (c) {
	case C_INFO: ana_info_run(s, 5, d); break;
	case C_REPORT:
	case C_REPORT_OFFCPU:
	case C_REPORT_TREE: ana_report_run(s, &ro, d); break;
	case C_SCRIPT: ana_script_run(s, &sco, sink()); break;
	case C_FOLDED: ana_export_folded(s, NULL, 0, sink()); break;
	case C_FOLDED_OFFCPU: ana_export_folded(s, NULL, 1, sink()); break;
	case C_PPROF: ana_export_pprof(s, NULL, 0, sink()); break;
	case C_PPROF_OFFCPU: ana_export_pprof(s, NULL, 1, sink()); break;
	case C_HTML: ana_html_run(s, NULL, sink()); break;
	case C_SCHED: ana_sched_run(s, &sc, d); break;
	case C_COUNTERS: ana_counters_run(s, &co, d, err, sizeof(err)); break;
	case C_VERIFY: ana_verify_run(s, jobs, d, &whole); break;
	case C_DUMP:
	case C_DUMP_FILE: ana_dump_run(s, &dop, sink()); break;
	case C_PERFETTO: ana_export_timed(s, NULL, "perfetto", sink()); break;
	case C_SPEEDSCOPE: ana_export_timed(s, NULL, "speedscope", sink()); break;
	case C_OTLP: ana_export_timed(s, NULL, "otlp", sink()); break;
	case C_DIFF: {
		struct ana_diff_opts dfo = { .nkeys = 2, .keys = { ANA_KEY_COMM, ANA_KEY_SYM } };
		struct ana_diff *df = ana_diff_new(&dfo);
		if (df && !ana_diff_add(df, ANA_DIFF_BASE, s, NULL, "a") &&
		    !ana_diff_add(df, ANA_DIFF_NEW, s, NULL, "b") && d)
			ana_diff_render(df, d);
		ana_diff_free(df);
		break;
	}
	case C_HTML_DIFF: {
		struct ana_diff_part part = { s, NULL, "fuzz" };
		ana_html_diff_run(&part, 1, &part, 1, NULL, sink());
		break;
	}
	case C_QUERY:
	case C_COUNT: break;
	}
	if (d)
		ana_doc_render(d, sink(), c % 3 == 0 || c == C_REPORT_TREE ? ANA_FMT_TEXT :
				   c % 3 == 1 ? ANA_FMT_JSON : ANA_FMT_CSV);
	ana_doc_free(d);
	ana_trace_free(s);
	return 0;
}
