/*
 * test_parallel.c - decoding with worker threads gives exactly the output
 * of the single-threaded path, for every subcommand, on a trace with
 * hundreds of small frames (so workers really run ahead and the time merge
 * really interleaves frames of different streams).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyzer/read/frames.h"
#include "analyzer/read/merge.h"
#include "format/reader.h"
#include "format/sink.h"
#include "format/writer.h"
#include "lib/anatest.h"
#include "lib/tracegen.h"

static const char *dir;

static int setup(void **state)
{
	(void)state;
	dir = anatest_tmpdir("parallel");
	if (!dir)
		return -1;
	char path[4096];
	snprintf(path, sizeof(path), "%s/big.prec", dir);
	struct tracegen_opts o = TRACEGEN_OPTS_INIT;
	o.repeat = 40;
	o.frame_size = 300;
	return tracegen_write(path, &o) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void same_output(const char *args)
{
	char a1[512], a2[512], a3[512];
	char *o1 = NULL, *o2 = NULL, *o3 = NULL;
	size_t l1 = 0, l2 = 0, l3 = 0;
	snprintf(a1, sizeof(a1), "%s -j1", args);
	snprintf(a2, sizeof(a2), "%s -j4", args);
	snprintf(a3, sizeof(a3), "%s -j3", args);
	assert_int_equal(anatest_run(dir, a1, &o1, &l1, NULL), 0);
	assert_int_equal(anatest_run(dir, a2, &o2, &l2, NULL), 0);
	assert_int_equal(anatest_run(dir, a3, &o3, &l3, NULL), 0);
	assert_true(l1 > 100);
	assert_int_equal(l1, l2);
	assert_int_equal(l1, l3);
	assert_memory_equal(o1, o2, l1);
	assert_memory_equal(o1, o3, l1);
	free(o1);
	free(o2);
	free(o3);
}

static void test_report(void **s) { (void)s; same_output("report big.prec --sort comm,tid,cpu,sym"); }
static void test_children(void **s) { (void)s; same_output("report big.prec --children --json"); }
static void test_sched(void **s) { (void)s; same_output("sched big.prec --hist"); }
static void test_counters(void **s) { (void)s; same_output("counters big.prec -I"); }
static void test_dump(void **s) { (void)s; same_output("dump big.prec"); }
static void test_dump_json(void **s) { (void)s; same_output("dump big.prec --json --file-order"); }
static void test_folded(void **s) { (void)s; same_output("export big.prec -f folded"); }
static void test_verify(void **s) { (void)s; same_output("verify big.prec"); }
static void test_info(void **s) { (void)s; same_output("info big.prec --json"); }
static void test_html(void **s) { (void)s; same_output("html big.prec"); }

/* The repeated timeline scales every count: 40 copies of the golden one. */
static void test_totals(void **state)
{
	(void)state;
	char *out = NULL;
	assert_int_equal(anatest_run(dir, "sched big.prec --csv -j4", &out, NULL, NULL), 0);
	assert_non_null(strstr(out, "switch_records,1040\n"));
	free(out);
	assert_int_equal(anatest_run(dir, "report big.prec --csv --sort comm", &out, NULL, NULL), 0);
	assert_non_null(strstr(out, "samples_shown,3200\n"));
	/* 40 x 45 pingpong samples (35 + 8 before the rename + 2 faults of
	 * period 1): period 40 x 43000002 */
	assert_non_null(strstr(out, ",1800,1720000080,pingpong\n"));
	free(out);
}

/* Library level: the merge yields non-decreasing times and every packet
 * exactly once, and never holds more than a few frames at once. */
static void test_merge_order(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof(path), "%s/big.prec", dir);
	struct prec_reader *r = prec_reader_open(path, NULL);
	assert_non_null(r);
	const struct prec_frame_info *fr;
	size_t n;
	assert_int_equal(prec_reader_index(r, &fr, &n), 0);
	assert_true(n > 200);
	/* every packet the frames return, read one frame after another (a
	 * switch batch is one packet of its frame but returns its rows) */
	uint64_t total = 0;
	struct prec_frame *f = prec_frame_new();
	assert_non_null(f);
	for (size_t i = 0; i < n; i++) {
		struct prec_packet pk;
		assert_int_equal(prec_reader_load_frame(r, &fr[i], f), 0);
		while (prec_frame_next(f, &pk) > 0)
			total++;
	}
	prec_frame_free(f);
	for (int jobs = 1; jobs <= 4; jobs += 3) {
		struct ana_frames_opts o = { .jobs = jobs };
		struct ana_merge *m = ana_merge_new(r, fr, n, &o);
		assert_non_null(m);
		const struct prec_packet *p;
		uint64_t last = 0, count = 0;
		int ret;
		while ((ret = ana_merge_next(m, &p)) > 0) {
			assert_true(p->time >= last);
			last = p->time;
			count++;
		}
		assert_int_equal(ret, 0);
		assert_int_equal(count, total);
		/* Bounded memory: only the frames overlapping the current
		 * time (a few per stream, 3 streams) plus the decode
		 * lookahead are ever held, out of hundreds. */
		size_t held = ana_merge_buffers(m);
		struct ana_frames *af = ana_frames_new(r, fr, n, &o);
		size_t la = ana_frames_lookahead(af);
		print_message("jobs %d: %zu frames, at most %zu held by the merge "
			      "(lookahead %zu)\n", jobs, n, held, la);
		assert_true(la >= 2 * (size_t)jobs + 2 && la <= 64);
		assert_true(held >= 1);
		assert_true(held <= 3 * 3 + la);
		ana_merge_free(m);
		/* File order: the lookahead plus the one being consumed. */
		struct ana_loaded *lf;
		uint64_t pk = 0;
		size_t maxp = 0;
		while (ana_frames_next(af, &lf) > 0) {
			pk += lf->npkts;
			/* The packet array is sized by the index's count, not
			 * grown by doubling: never larger than the largest
			 * frame loaded so far, plus the slot that finds its
			 * end, plus an eighth (a recycled buffer keeps its
			 * array). Frames of switch batches return rows. */
			if (lf->fi->kinds & PREC_KIND(PERFREC__PACKET__DATA_SWITCH_BATCH)) {
				/* rows: more packets returned than stored,
				 * the array sized by the frame's bytes (or
				 * a recycled one's size) */
				size_t rmax = lf->fi->raw_size / 5 + 1;
				assert_true(lf->npkts > lf->fi->packets);
				assert_true(lf->cap > lf->npkts &&
					    lf->cap <= 2 * (rmax + rmax / 8) + maxp + 1 + (maxp + 1) / 8);
				if (lf->cap > maxp)
					maxp = lf->cap;   /* kept when recycled */
				ana_frames_release(af, lf);
				continue;
			}
			if (lf->fi->packets > maxp)
				maxp = lf->fi->packets;
			assert_int_equal(lf->npkts, lf->fi->packets);
			assert_true(lf->cap > lf->npkts && lf->cap <= maxp + 1 + (maxp + 1) / 8);
			ana_frames_release(af, lf);
		}
		assert_int_equal(pk, total);
		assert_true(ana_frames_buffers(af) <= la + 1);
		ana_frames_free(af);
	}
	prec_reader_free(r);
}

/* find_runs: a frame of interleaved runs (as CPUs' batches in one
 * stream), with equal times across runs, is found to be its runs, and the
 * merge of them comes out in time order and stable (equal times keep file
 * order); two frames in a row, so the kept run arrays are reused
 * correctly. */
static void test_merge_runs(void **state)
{
	(void)state;
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	assert_non_null(w);
	/* 7 runs of lengths 1..300, times interleaved: run r holds times
	 * r, r + 7, r + 14, ... (x 10), and run 3 repeats run 2's times */
	uint64_t seq = 0, npk = 0;
	for (int frame = 0; frame < 2; frame++) {
		for (int r = 0; r < 7; r++) {
			int len = r == 0 ? 1 : 50 * r;
			for (int i = 0; i < len; i++) {
				Perfrec__Packet p = PERFREC__PACKET__INIT;
				Perfrec__Sample sm = PERFREC__SAMPLE__INIT;
				uint64_t t = 1000 + 10ull * (uint64_t)((r == 3 ? 2 : r) + 7 * i);
				sm.ip = ++seq;   /* file order */
				p.data_case = PERFREC__PACKET__DATA_SAMPLE;
				p.sample = &sm;
				assert_int_equal(prec_writer_append(w, 1, &p, t), 0);
				npk++;
			}
		}
		assert_int_equal(prec_writer_flush(w), 0);
	}
	assert_int_equal(prec_writer_close(w), 0);
	size_t len;
	const void *buf = prec_sink_mem_data(sink, &len);
	struct prec_reader *rd = prec_reader_open_mem(buf, len, NULL);
	assert_non_null(rd);
	const struct prec_frame_info *fr;
	size_t n;
	assert_int_equal(prec_reader_index(rd, &fr, &n), 0);
	assert_int_equal(n, 2);
	struct ana_frames_opts o = { .jobs = 1, .find_runs = 1 };
	struct ana_frames *af = ana_frames_new(rd, fr, n, &o);
	struct ana_loaded *lf;
	uint64_t got = 0;
	while (ana_frames_next(af, &lf) > 0) {
		assert_int_equal(lf->err, 0);
		/* 6 runs: run 0 (one packet at 1000) and run 1 (from 1010)
		 * are one run in time order */
		assert_int_equal(lf->nruns, 6);
		assert_int_equal(lf->runs[0], 0);
		assert_int_equal(lf->runs[1], 51);
		assert_int_equal(lf->runs[lf->nruns], lf->npkts);
		for (size_t k = 0; k < lf->nruns; k++)
			for (size_t i = lf->runs[k] + 1; i < lf->runs[k + 1]; i++)
				assert_true(lf->pkts[i - 1].time <= lf->pkts[i].time);
		got += lf->npkts;
		ana_frames_release(af, lf);
	}
	assert_int_equal(got, npk);
	ana_frames_free(af);
	/* The merge of both frames' runs: time order, and equal times (two
	 * runs, two frames) in file order */
	for (int jobs = 1; jobs <= 2; jobs++) {
		struct ana_frames_opts mo = { .jobs = jobs };
		struct ana_merge *m = ana_merge_new(rd, fr, n, &mo);
		assert_non_null(m);
		const struct prec_packet *p, *prev = NULL;
		uint64_t count = 0, last_ip = 0, last_t = 0;
		int ret;
		while ((ret = ana_merge_next(m, &p)) > 0) {
			assert_true(p->time >= last_t);
			if (prev && p->time == last_t)
				assert_true(p->pkt->sample->ip > last_ip);
			last_t = p->time;
			last_ip = p->pkt->sample->ip;
			prev = p;
			count++;
		}
		assert_int_equal(ret, 0);
		assert_int_equal(count, npk);
		ana_merge_free(m);
	}
	prec_reader_free(rd);
	prec_writer_free(w);
	prec_sink_free(sink);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_children),
		cmocka_unit_test(test_sched),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_dump),
		cmocka_unit_test(test_dump_json),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_verify),
		cmocka_unit_test(test_info),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_totals),
		cmocka_unit_test(test_merge_order),
		cmocka_unit_test(test_merge_runs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
