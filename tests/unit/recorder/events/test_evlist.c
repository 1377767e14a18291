/*
 * test_evlist.c - the attrs perfrec opens (recorder/events/evlist.c,
 * rec_evlist_init: no syscalls).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <time.h>

#include "recorder/events/evlist.h"
#include "lib/logcap.h"

static void test_attrs(void **state)
{
	struct rec_evspecs l = REC_EVSPECS_INIT;
	struct rec_evlist_cfg cfg = { 4000, 0, true, true, false, false, 128 };
	struct rec_evlist s;
	uint64_t base = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_CPU | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD |
			PERF_SAMPLE_CALLCHAIN;

	(void)state;
	assert_int_equal(rec_evspecs_parse(&l, "cpu-clock:u,{task-clock,page-faults}:S,mem:0x1000"), 0);
	assert_int_equal(rec_evlist_init(&s, &l, &cfg), 0);
	assert_int_equal(s.nsel, 4);
	assert_int_equal(s.dctx.sid_type, REC_SID_TYPE);

	/* event 0 carries the side-band, nobody else */
	assert_int_equal(s.sel[0].attr.mmap, 1);
	assert_int_equal(s.sel[0].attr.mmap2, 1);
	assert_int_equal(s.sel[0].attr.comm, 1);
	assert_int_equal(s.sel[0].attr.comm_exec, 1);
	assert_int_equal(s.sel[0].attr.task, 1);
	assert_int_equal(s.sel[0].attr.context_switch, 1);
	for (size_t i = 1; i < s.nsel; i++) {
		assert_int_equal(s.sel[i].attr.mmap, 0);
		assert_int_equal(s.sel[i].attr.comm, 0);
		assert_int_equal(s.sel[i].attr.task, 0);
		assert_int_equal(s.sel[i].attr.context_switch, 0);
	}
	for (size_t i = 0; i < s.nsel; i++) {
		const struct perf_event_attr *a = &s.sel[i].attr;

		assert_int_equal(a->sample_id_all, 1);
		assert_int_equal(a->use_clockid, 1);
		assert_int_equal(a->clockid, CLOCK_MONOTONIC);
		assert_int_equal(a->watermark, 1);
		assert_int_equal(a->wakeup_watermark, 128 * 4096 / 4);
		assert_int_equal(a->size, sizeof(*a));
		assert_int_equal(s.sel[i].fmt.sample_type, a->sample_type);
		assert_int_equal(s.sel[i].fmt.read_format, a->read_format);
		assert_true(a->read_format & PERF_FORMAT_ID);
	}
	/* plain sampling event: frequency, modifiers kept */
	assert_int_equal(s.sel[0].attr.sample_type, base);
	assert_int_equal(s.sel[0].attr.freq, 1);
	assert_int_equal(s.sel[0].attr.sample_freq, 4000);
	assert_int_equal(s.sel[0].attr.exclude_kernel, 1);
	assert_int_equal(s.sel[0].attr.disabled, 1);

	/* {a,b}:S: leader samples with a group read, member only counts */
	assert_int_equal(s.sel[1].attr.sample_type, base | PERF_SAMPLE_READ);
	assert_true(s.sel[1].attr.read_format & PERF_FORMAT_GROUP);
	assert_true(s.sel[1].attr.read_format & PERF_FORMAT_TOTAL_TIME_ENABLED);
	assert_true(s.sel[1].attr.read_format & PERF_FORMAT_TOTAL_TIME_RUNNING);
	assert_int_equal(s.sel[1].attr.freq, 1);
	assert_int_equal(s.sel[1].attr.disabled, 1);
	assert_int_equal(s.sel[2].attr.freq, 0);
	assert_int_equal(s.sel[2].attr.sample_period, 0);
	assert_int_equal(s.sel[2].attr.disabled, 0);   /* follows its leader */
	assert_int_equal(s.sel[2].attr.read_format, s.sel[1].attr.read_format);

	/* breakpoint: every hit */
	assert_int_equal(s.sel[3].attr.type, PERF_TYPE_BREAKPOINT);
	assert_int_equal(s.sel[3].attr.freq, 0);
	assert_int_equal(s.sel[3].attr.sample_period, 1);
	rec_evlist_release(&s);

	/* -c, a command target */
	cfg.period = 5000;
	cfg.enable_on_exec = true;
	cfg.inherit = true;
	cfg.switch_events = false;
	assert_int_equal(rec_evlist_init(&s, &l, &cfg), 0);
	assert_int_equal(s.sel[0].attr.freq, 0);
	assert_int_equal(s.sel[0].attr.sample_period, 5000);
	assert_int_equal(s.sel[0].attr.enable_on_exec, 1);
	assert_int_equal(s.sel[0].attr.inherit, 1);
	assert_int_equal(s.sel[0].attr.context_switch, 0);
	assert_int_equal(s.sel[2].attr.enable_on_exec, 0);   /* members follow */
	for (size_t i = 0; i < s.nsel; i++) {
		assert_int_equal(s.sel[i].attr.sample_stack_user, 0);
		assert_int_equal(s.sel[i].attr.exclude_callchain_user, 0);
		assert_int_equal(s.sel[i].attr.sample_max_stack, 0);   /* the kernel's */
	}
	rec_evlist_release(&s);

	/* --max-stack: the kernel's walk stops there; nothing without -g */
	cfg.max_stack = 32;
	assert_int_equal(rec_evlist_init(&s, &l, &cfg), 0);
	for (size_t i = 0; i < s.nsel; i++)
		assert_int_equal(s.sel[i].attr.sample_max_stack, 32);
	rec_evlist_release(&s);
	cfg.callchain = false;
	assert_int_equal(rec_evlist_init(&s, &l, &cfg), 0);
	for (size_t i = 0; i < s.nsel; i++)
		assert_int_equal(s.sel[i].attr.sample_max_stack, 0);
	rec_evlist_release(&s);
	cfg.callchain = true;
	cfg.max_stack = 0;

	/* --call-graph dwarf: user registers and stack on every event, the
	 * kernel's callchain without its user part (as perf sets it) */
	cfg.callchain = false;
	cfg.stack_user = 8192;
	cfg.regs_user = 0xf001c2;
	assert_int_equal(rec_evlist_init(&s, &l, &cfg), 0);
	for (size_t i = 0; i < s.nsel; i++) {
		const struct perf_event_attr *a = &s.sel[i].attr;

		assert_true(a->sample_type & PERF_SAMPLE_CALLCHAIN);
		assert_true(a->sample_type & PERF_SAMPLE_REGS_USER);
		assert_true(a->sample_type & PERF_SAMPLE_STACK_USER);
		assert_int_equal(a->sample_regs_user, 0xf001c2);
		assert_int_equal(a->sample_stack_user, 8192);
		assert_int_equal(a->exclude_callchain_user, 1);
		assert_int_equal(s.sel[i].fmt.regs_user, 0xf001c2);
		assert_int_equal(s.sel[i].fmt.sample_type, a->sample_type);
	}
	rec_evlist_release(&s);
	cfg.stack_user = 0;

	/* ring pages must be a power of two */
	cfg.mmap_pages = 100;
	assert_int_equal(rec_evlist_init(&s, &l, &cfg), -EINVAL);
	rec_evlist_release(&s);
	rec_evspecs_release(&l);
}

int main(void)
{
	logcap_install();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attrs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
