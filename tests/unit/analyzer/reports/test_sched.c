/*
 * test_sched.c - analyzer/sched accounting of exiting tasks, on synthetic
 * traces written with the real writer.
 *
 * CPU-wide switch records name an exiting task's last switch-out with
 * pid/tid -1 (the task is already unhashed): it belongs to the task last
 * switched in on that CPU, and to nobody when that task already switched
 * out. Per-task recordings get no last switch-out at all: the EXIT task
 * event ends the task's on-CPU time (else it would run to the end of the
 * recording).
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

#include "analyzer/reports/sched.h"
#include "analyzer/read/trace.h"
#include "format/sink.h"
#include "format/writer.h"

#define MS 1000000ull
#define T0 1000000000ull
#define NOBODY UINT32_MAX

struct tw {
	struct prec_sink *sink;
	struct prec_writer *w;
};

static void tw_open(struct tw *t)
{
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
	t->sink = prec_sink_mem_new();
	assert_non_null(t->sink);
	t->w = prec_writer_new(t->sink, &o);
	assert_non_null(t->w);

	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__FileHeader h = PERFREC__FILE_HEADER__INIT;
	h.start_time = T0;
	h.cpus_online = 2;
	p.data_case = PERFREC__PACKET__DATA_HEADER;
	p.header = &h;
	assert_int_equal(prec_writer_append(t->w, 0, &p, 0), 0);
}

static void sw_pid(struct tw *t, unsigned ms, uint32_t cpu, uint32_t pid,
		   uint32_t tid, int out, int preempt, int cpu_wide)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__ContextSwitch c = PERFREC__CONTEXT_SWITCH__INIT;
	c.cpu = cpu;
	c.pid = pid;
	c.tid = tid;
	c.out = out;
	c.preempt = preempt;
	c.cpu_wide = cpu_wide;
	p.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
	p.context_switch = &c;
	assert_int_equal(prec_writer_append(t->w, 1 + cpu, &p, T0 + ms * MS), 0);
}

/* Single-threaded tasks: pid = tid (and -1 stays -1). */
static void sw(struct tw *t, unsigned ms, uint32_t cpu, uint32_t tid, int out,
	       int preempt, int cpu_wide)
{
	sw_pid(t, ms, cpu, tid, tid, out, preempt, cpu_wide);
}

static void task(struct tw *t, unsigned ms, uint32_t cpu, int kind, uint32_t tid,
		 const char *comm)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__TaskEvent e = PERFREC__TASK_EVENT__INIT;
	e.kind = kind;
	e.pid = e.tid = tid;
	e.ppid = e.ptid = 1;
	e.cpu = cpu;
	if (comm)
		e.comm = prec_writer_intern_string(t->w, 1 + cpu, comm);
	p.data_case = PERFREC__PACKET__DATA_TASK;
	p.task = &e;
	assert_int_equal(prec_writer_append(t->w, 1 + cpu, &p, T0 + ms * MS), 0);
}

static void end(struct tw *t, unsigned ms)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__SessionEnd e = PERFREC__SESSION_END__INIT;
	e.end_time = T0 + ms * MS;
	p.data_case = PERFREC__PACKET__DATA_SESSION_END;
	p.session_end = &e;
	assert_int_equal(prec_writer_append(t->w, 0, &p, T0 + ms * MS), 0);
}

/* Closes the trace, runs sched on it (as the CLI does: single pass) with
 * jobs threads, and returns its CSV output (malloc'd). */
static char *run_sched(struct tw *t, int jobs)
{
	assert_int_equal(prec_writer_close(t->w), 0);
	size_t len;
	const void *buf = prec_sink_mem_data(t->sink, &len);
	struct ana_trace_opts so = { .jobs = jobs, .single_pass = 1,
				       .mem = buf, .mem_len = len };
	struct ana_trace *s;
	assert_int_equal(ana_trace_open(&s, "mem", &so), 0);
	struct ana_doc *doc = ana_doc_new();
	assert_non_null(doc);
	struct ana_sched_opts o = { .sort = ANA_SS_TID, .jobs = jobs };
	assert_int_equal(ana_sched_run(s, &o, doc), 0);
	char *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	assert_non_null(f);
	assert_int_equal(ana_doc_render(doc, f, ANA_FMT_CSV), 0);
	fclose(f);
	ana_doc_free(doc);
	ana_trace_free(s);
	return out;
}

static void tw_free(struct tw *t)
{
	prec_writer_free(t->w);
	prec_sink_free(t->sink);
}

static void expect_line(const char *csv, const char *line)
{
	char want[256];
	snprintf(want, sizeof(want), "\n%s\n", line);
	if (!strstr(csv, want))
		fail_msg("missing line '%s' in:\n%s", line, csv);
}

/* CPU-wide records, as `perfrec record -a --switch-events` writes them:
 *   CPU0: 0 idle->100   10 100->200 (100 preempted)   12 EXIT 200
 *         15 (-1)->idle (200's last switch-out: a thread, already
 *         unhashed)   30 idle->100   40 100->400   42 EXIT 400
 *         44 400->idle (preempted in its exit path)   46 idle->400
 *         48 400->idle (a process leader's last switch-out keeps its tid)
 *   CPU1: 5 (-1) with nothing switched in yet on CPU1 (names nobody)
 *         5 idle->300   50 300 out (the idle switch-in record after it
 *         was lost)   51 (-1) (300 already switched out: names nobody,
 *         must not count a second switch-out)   52 idle->500
 *         55 (-1) of process 999 (not 500's: records were lost; names
 *         nobody)
 * Expected: 100 on 20 ms, off 20 ms (10..30), 2 ins, 1 preempted, 1
 * voluntary; 200 on 5 ms (10..15: exit path included), 1 in, 1 voluntary,
 * no off-CPU time; 300 on 45 ms, 1 in, 1 voluntary; 400 on 6 ms, off 2 ms,
 * 2 ins, 1 preempted, 1 voluntary; 500 on until the end (8 ms). */
static void test_cpu_wide_exit(void **state)
{
	(void)state;
	for (int jobs = 1; jobs <= 2; jobs++) {
		struct tw t;
		tw_open(&t);
		task(&t, 0, 0, PERFREC__TASK_EVENT__KIND__EXISTING, 100, "hundred");
		task(&t, 0, 0, PERFREC__TASK_EVENT__KIND__EXISTING, 200, "twohundred");
		task(&t, 0, 1, PERFREC__TASK_EVENT__KIND__EXISTING, 300, "threehundred");
		task(&t, 0, 0, PERFREC__TASK_EVENT__KIND__EXISTING, 400, "fourhundred");
		task(&t, 0, 1, PERFREC__TASK_EVENT__KIND__EXISTING, 500, "fivehundred");
		sw(&t, 0, 0, 0, 1, 0, 1);
		sw(&t, 0, 0, 100, 0, 0, 1);
		sw(&t, 5, 1, NOBODY, 1, 0, 1);
		sw(&t, 5, 1, 300, 0, 0, 1);
		sw(&t, 10, 0, 100, 1, 1, 1);
		sw(&t, 10, 0, 200, 0, 0, 1);
		task(&t, 12, 0, PERFREC__TASK_EVENT__KIND__EXIT, 200, NULL);
		sw(&t, 15, 0, NOBODY, 1, 0, 1);
		sw(&t, 15, 0, 0, 0, 0, 1);
		sw(&t, 30, 0, 0, 1, 0, 1);
		sw(&t, 30, 0, 100, 0, 0, 1);
		sw(&t, 40, 0, 100, 1, 0, 1);
		sw(&t, 40, 0, 400, 0, 0, 1);
		task(&t, 42, 0, PERFREC__TASK_EVENT__KIND__EXIT, 400, NULL);
		sw(&t, 44, 0, 400, 1, 1, 1);
		sw(&t, 44, 0, 0, 0, 0, 1);
		sw(&t, 46, 0, 0, 1, 0, 1);
		sw(&t, 46, 0, 400, 0, 0, 1);
		sw(&t, 48, 0, 400, 1, 0, 1);
		sw(&t, 48, 0, 0, 0, 0, 1);
		sw(&t, 50, 1, 300, 1, 0, 1);
		sw(&t, 51, 1, NOBODY, 1, 0, 1);
		sw(&t, 52, 1, 500, 0, 0, 1);
		sw_pid(&t, 55, 1, 999, NOBODY, 1, 0, 1);
		end(&t, 60);
		char *csv = run_sched(&t, jobs);
		expect_line(csv, "window_ms,60.000");
		expect_line(csv, "hundred,100,100,20.000,20.000,2,1,1,20.000,0.010000");
		expect_line(csv, "twohundred,200,200,5.000,0.000,1,0,1,,");
		expect_line(csv, "threehundred,300,300,45.000,0.000,1,0,1,,");
		expect_line(csv, "fourhundred,400,400,6.000,2.000,2,1,1,2.000,0.044000");
		expect_line(csv, "fivehundred,500,500,8.000,0.000,1,0,0,,");
		expect_line(csv, "0,31.000,51.67,8");
		expect_line(csv, "1,53.000,88.33,2");
		free(csv);
		tw_free(&t);
	}
}

/* Per-task records (perfrec record -- CMD / -p): no switch-out is written
 * for an exiting task. 100: in at 0, out at 10, in at 20, EXIT at 25, the
 * recording ends at 100. Its on-CPU time is 15 ms (not 90), and the exit
 * is its second switch-out. */
static void test_per_task_exit(void **state)
{
	(void)state;
	struct tw t;
	tw_open(&t);
	task(&t, 0, 0, PERFREC__TASK_EVENT__KIND__EXISTING, 100, "hundred");
	sw(&t, 0, 0, 100, 0, 0, 0);
	sw(&t, 10, 0, 100, 1, 0, 0);
	sw(&t, 20, 0, 100, 0, 0, 0);
	task(&t, 25, 0, PERFREC__TASK_EVENT__KIND__EXIT, 100, NULL);
	end(&t, 100);
	char *csv = run_sched(&t, 1);
	expect_line(csv, "window_ms,100.000");
	expect_line(csv, "hundred,100,100,15.000,10.000,2,0,2,10.000,0.010000");
	expect_line(csv, "0,15.000,15.00,2");
	free(csv);
	tw_free(&t);
}

/* A task whose first record is a switch-out (its switch-in came before
 * its events were enabled, as for a workload that perfrec starts) ran
 * since the CPU's previous record, not since the window start: CPU0:
 * 0 idle->100, 20 100->idle, 30 700 out (no switch-in of 700 recorded)
 * then idle in: 700 ran 10 ms. CPU1 has no record before 800's
 * switch-out at 40: 800 ran there since the start, 40 ms. */
static void test_first_record_out(void **state)
{
	(void)state;
	struct tw t;
	tw_open(&t);
	task(&t, 0, 0, PERFREC__TASK_EVENT__KIND__EXISTING, 100, "hundred");
	task(&t, 0, 0, PERFREC__TASK_EVENT__KIND__EXISTING, 700, "sevenhundred");
	sw(&t, 0, 0, 0, 1, 0, 1);
	sw(&t, 0, 0, 100, 0, 0, 1);
	sw(&t, 20, 0, 100, 1, 0, 1);
	sw(&t, 20, 0, 0, 0, 0, 1);
	sw(&t, 30, 0, 700, 1, 0, 1);
	sw(&t, 30, 0, 0, 0, 0, 1);
	sw(&t, 40, 1, 800, 1, 0, 1);
	sw(&t, 40, 1, 0, 0, 0, 1);
	end(&t, 50);
	char *csv = run_sched(&t, 1);
	expect_line(csv, "sevenhundred,700,700,10.000,0.000,0,0,1,,");
	expect_line(csv, ":800,800,800,40.000,0.000,0,0,1,,");
	expect_line(csv, "0,30.000,60.00,3");
	expect_line(csv, "1,40.000,80.00,1");
	free(csv);
	tw_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_wide_exit),
		cmocka_unit_test(test_per_task_exit),
		cmocka_unit_test(test_first_record_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
