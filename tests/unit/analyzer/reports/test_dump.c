/*
 * test_dump.c - analyzer/dump's context-switch line, on a synthetic trace
 * written with the real writer.
 *
 * The switch line keeps the decimal text of repeated numbers (the time's
 * seconds, pids and tids in a direct-mapped table): values that share a
 * table slot, and seconds that change between lines, must still print as
 * themselves, in text and in JSON (where a time below 2^32 ns is written
 * as it is, not as seconds and nanoseconds). Sample lines keep their
 * event's text the same way.
 */
#define _POSIX_C_SOURCE 200809L   /* open_memstream */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyzer/reports/dump.h"
#include "analyzer/read/trace.h"
#include "format/sink.h"
#include "format/writer.h"

/* 1 and 256 fall in the same slot of the table ((v ^ v >> 8) & 255). */
static const struct { uint64_t t; uint32_t tid, other; int out; } sw[] = {
	{ 3000000000ull, 1, 256, 0 },     /* below 2^32 ns */
	{ 5999999990ull, 256, 1, 1 },
	{ 6000000010ull, 1, 256, 0 },     /* the next second */
	{ 6000000020ull, 256, 1, 1 },
	{ 6000000030ull, 257, 1, 0 },
	{ 16000000000ull, 1, 257, 1 },    /* ten seconds later */
};

static char *run_dump(const void *buf, size_t len, enum ana_fmt fmt, int jobs)
{
	struct ana_trace_opts so = { .jobs = jobs, .single_pass = 1,
				     .mem = buf, .mem_len = len };
	struct ana_trace *s;
	assert_int_equal(ana_trace_open(&s, "mem", &so), 0);
	char *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	assert_non_null(f);
	struct ana_dump_opts o = { .fmt = fmt, .jobs = jobs };
	assert_int_equal(ana_dump_run(s, &o, f), 0);
	fclose(f);
	ana_trace_free(s);
	return out;
}

/* line (which starts with a newline) is in out, or opens it */
static void expect(const char *out, const char *line)
{
	if (!strstr(out, line) && strncmp(out, line + 1, strlen(line + 1)))
		fail_msg("missing '%s' in:\n%s", line, out);
}

static void test_switch_lines(void **state)
{
	(void)state;
	struct prec_writer_opts wo = PREC_WRITER_OPTS_INIT;
	struct prec_sink *sink = prec_sink_mem_new();
	assert_non_null(sink);
	struct prec_writer *w = prec_writer_new(sink, &wo);
	assert_non_null(w);
	size_t n = sizeof(sw) / sizeof(sw[0]);
	for (size_t i = 0; i < n; i++) {
		Perfrec__Packet p = PERFREC__PACKET__INIT;
		Perfrec__ContextSwitch c = PERFREC__CONTEXT_SWITCH__INIT;
		c.cpu = 1;
		c.pid = c.tid = sw[i].tid;
		c.out = sw[i].out;
		c.cpu_wide = 1;
		c.other_pid = c.other_tid = sw[i].other;
		p.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
		p.context_switch = &c;
		assert_int_equal(prec_writer_append(w, 1, &p, sw[i].t), 0);
	}
	assert_int_equal(prec_writer_close(w), 0);
	size_t len;
	const void *buf = prec_sink_mem_data(sink, &len);
	for (int jobs = 1; jobs <= 2; jobs++) {
		char *text = run_dump(buf, len, ANA_FMT_TEXT, jobs);
		char *json = run_dump(buf, len, ANA_FMT_JSON, jobs);
		for (size_t i = 0; i < n; i++) {
			char want[256];
			const char *dir = sw[i].out ? "out" : "in";
			snprintf(want, sizeof(want), "\n%llu.%09llu s1 context_switch dir=%s "
				 "cpu=1 pid=%u tid=%u preempt=0 other_pid=%u other_tid=%u\n",
				 (unsigned long long)(sw[i].t / 1000000000u),
				 (unsigned long long)(sw[i].t % 1000000000u), dir,
				 sw[i].tid, sw[i].tid, sw[i].other, sw[i].other);
			expect(text, want);
			snprintf(want, sizeof(want), "\n{\"time\":%llu,\"stream\":1,"
				 "\"kind\":\"context_switch\",\"dir\":\"%s\",\"cpu\":1,"
				 "\"pid\":%u,\"tid\":%u,\"preempt\":false,\"other_pid\":%u,"
				 "\"other_tid\":%u}\n", (unsigned long long)sw[i].t, dir,
				 sw[i].tid, sw[i].tid, sw[i].other, sw[i].other);
			expect(json, want);
		}
		free(text);
		free(json);
	}
	prec_writer_free(w);
	prec_sink_free(sink);
}

/* Sample lines keep the text of the last event name: samples of three
 * events in turn (a bare name, one that is quoted, one longer than the
 * kept text) must each show their own name, and their callchains every
 * ip, in text and in JSON. */
static void test_sample_lines(void **state)
{
	(void)state;
	char longname[201];
	memset(longname, 'e', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	const char *names[3] = { "cycles", "my event", longname };
	struct prec_writer_opts wo = PREC_WRITER_OPTS_INIT;
	struct prec_sink *sink = prec_sink_mem_new();
	assert_non_null(sink);
	struct prec_writer *w = prec_writer_new(sink, &wo);
	assert_non_null(w);
	for (int i = 0; i < 3; i++) {
		Perfrec__Packet p = PERFREC__PACKET__INIT;
		Perfrec__EventDesc d = PERFREC__EVENT_DESC__INIT;
		uint64_t id = 10 + (uint64_t)i;
		d.index = (uint32_t)i;
		d.name = (char *)names[i];
		d.sampling = 1;
		d.group = -1;
		d.ids = &id;
		d.n_ids = 1;
		p.data_case = PERFREC__PACKET__DATA_EVENT;
		p.event = &d;
		assert_int_equal(prec_writer_append(w, 0, &p, 1000), 0);
	}
	const uint64_t ips[3] = { 0xffffffff81000010ull, 0x401000, 0 };
	for (int i = 0; i < 9; i++) {
		Perfrec__Packet p = PERFREC__PACKET__INIT;
		Perfrec__Sample m = PERFREC__SAMPLE__INIT;
		m.id = 10 + (uint64_t)(i % 3);
		m.cpu = 1;
		m.pid = m.tid = 42;
		m.ip = 0x400000 + (uint64_t)i;
		m.period = 1;
		m.callchain = prec_writer_intern_callchain(w, 1, ips, 3);
		assert_int_not_equal(m.callchain, 0);
		p.data_case = PERFREC__PACKET__DATA_SAMPLE;
		p.sample = &m;
		assert_int_equal(prec_writer_append(w, 1, &p, 2000000000ull + (uint64_t)i), 0);
	}
	assert_int_equal(prec_writer_close(w), 0);
	size_t len;
	const void *buf = prec_sink_mem_data(sink, &len);
	char *text = run_dump(buf, len, ANA_FMT_TEXT, 1);
	char *json = run_dump(buf, len, ANA_FMT_JSON, 1);
	for (int i = 0; i < 9; i++) {
		char want[512];
		const char *n = names[i % 3];
		snprintf(want, sizeof(want), "\n2.%09d s1 sample event=%s%s%s cpu=1 pid=42 "
			 "tid=42 ip=0x%x period=1 callchain=0xffffffff81000010,0x401000,0x0\n",
			 i, i % 3 == 1 ? "\"" : "", n, i % 3 == 1 ? "\"" : "", 0x400000 + i);
		expect(text, want);
		snprintf(want, sizeof(want), "\n{\"time\":%llu,\"stream\":1,\"kind\":\"sample\","
			 "\"event\":\"%s\",\"cpu\":1,\"pid\":42,\"tid\":42,\"ip\":\"0x%x\","
			 "\"period\":1,\"callchain\":[\"0xffffffff81000010\",\"0x401000\",\"0x0\"]}\n",
			 2000000000ull + (unsigned)i, n, 0x400000 + i);
		expect(json, want);
	}
	free(text);
	free(json);
	prec_writer_free(w);
	prec_sink_free(sink);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_switch_lines),
		cmocka_unit_test(test_sample_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
