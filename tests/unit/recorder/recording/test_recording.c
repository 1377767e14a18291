/*
 * test_recording.c - a whole recording (recorder/recording/recording.c)
 * over synthetic rings (memsource.h): start, stats, rotate, stop, the
 * recording's own stop reasons and its failures, without perf.
 *
 * Outputs go to memory sinks and are read back with format/reader.h, so
 * each check is on what a file would hold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/reader.h"
#include "format/sink.h"
#include "recorder/recording/recording.h"
#include "unit/recorder/recording/memsource.h"
#include "lib/logcap.h"

#define NCPU 2
static const int cpus[NCPU] = { 0, 1 };

/* What one output holds. */
struct out {
	size_t headers, events, ends, switches, samples, ring_errors;
	uint64_t end_records;
	char end_reason[64];
	/* switch times per cpu, in file order */
	uint64_t *times[NCPU];
	size_t ntimes[NCPU];
};

static void out_release(struct out *o)
{
	for (int c = 0; c < NCPU; c++)
		free(o->times[c]);
	memset(o, 0, sizeof(*o));
}

static void read_out(struct prec_sink *sink, struct out *o)
{
	size_t len;
	const void *buf = prec_sink_mem_data(sink, &len);
	struct prec_reader *r = prec_reader_open_mem(buf, len, NULL);
	struct prec_packet p;
	int ret;

	memset(o, 0, sizeof(*o));
	assert_non_null(r);
	while ((ret = prec_reader_next_packet(r, &p)) > 0) {
		const Perfrec__Packet *k = p.pkt;

		switch (k->data_case) {
		case PERFREC__PACKET__DATA_HEADER:
			o->headers++;
			break;
		case PERFREC__PACKET__DATA_EVENT:
			o->events++;
			break;
		case PERFREC__PACKET__DATA_SESSION_END:
			o->ends++;
			o->end_records = k->session_end->records;
			snprintf(o->end_reason, sizeof(o->end_reason), "%s",
				 k->session_end->stop_reason);
			break;
		case PERFREC__PACKET__DATA_SAMPLE:
			o->samples++;
			break;
		case PERFREC__PACKET__DATA_LOSS:
			if (k->loss->kind == PERFREC__LOSS__KIND__RING_ERROR)
				o->ring_errors++;
			break;
		case PERFREC__PACKET__DATA_CONTEXT_SWITCH: {
			uint32_t c = k->context_switch->cpu;

			assert_true(c < NCPU);
			o->times[c] = realloc(o->times[c], (o->ntimes[c] + 1) * sizeof(uint64_t));
			assert_non_null(o->times[c]);
			o->times[c][o->ntimes[c]++] = p.time;
			o->switches++;
			break;
		}
		default:
			break;
		}
	}
	assert_int_equal(ret, 0);
	prec_reader_free(r);
}

static void opts_for(struct rec_recording_opts *o, struct memsource *m)
{
	struct rec_recording_opts init = REC_RECORDING_OPTS_INIT;

	*o = init;
	o->source = &m->pub;
	o->target = REC_TARGET_CPUS;
	o->cpus = cpus;
	o->ncpus = NCPU;
	o->no_symbols = true;
	o->proc_root = "";
	o->flush_ms = 50;
}

/* Steps until the recording has taken `records` records (or 10 s). */
static void step_until(struct rec_recording *r, uint64_t records)
{
	struct rec_recording_stats st;

	for (int i = 0; i < 1000; i++) {
		rec_recording_stats(r, &st);
		if (st.st.records >= records)
			return;
		assert_int_equal(rec_recording_step(r, 10), 1);
	}
	fail_msg("only %llu of %llu records taken", (unsigned long long)st.st.records,
		 (unsigned long long)records);
}

/* n switches on every cpu with times t0, t0+1, ...; steps when a ring is
 * full. */
static void put_switches(struct memsource *m, struct rec_recording *r,
			 uint64_t t0, size_t n)
{
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < NCPU; i++)
			while (memsource_switch(m, i, t0 + k, 100 + (uint32_t)i,
						100 + (uint32_t)i, k & 1) < 0)
				assert_true(rec_recording_step(r, 10) > 0);
}

static void test_start_stats_stop(void **state)
{
	struct memsource m;
	struct rec_recording_opts o;
	struct rec_recording *r;
	struct rec_recording_stats st;
	struct prec_sink *sink = prec_sink_mem_new();
	struct out out;
	size_t len;

	(void)state;
	memsource_init(&m);
	opts_for(&o, &m);
	assert_int_equal(rec_recording_new(&o, sink, "mem", &r), 0);
	rec_recording_stats(r, &st);
	assert_int_equal(st.state, REC_RECORDING_READY);
	assert_int_equal(m.described, 1);
	assert_int_equal(rec_recording_start(r), 0);
	assert_int_equal(m.enabled, 1);
	put_switches(&m, r, 1000, 3000);   /* several ring-fulls */
	for (size_t k = 0; k < 50; k++)
		while (memsource_sample(&m, k % NCPU, 5000 + k, 7, 0x400000 + k) < 0)
			assert_true(rec_recording_step(r, 10) > 0);
	step_until(r, 2 * 3000 + 50);
	rec_recording_stats(r, &st);
	assert_int_equal(st.state, REC_RECORDING_RUNNING);
	assert_int_equal(st.st.switches, 6000);
	assert_int_equal(st.st.samples, 50);
	assert_int_equal(st.nrings, NCPU);
	for (size_t i = 0; i < NCPU; i++)
		assert_int_equal(st.cpu[st.ring_cpu[i]].records, 3000 + 25);
	assert_int_equal(st.outputs, 1);
	assert_int_equal(rec_recording_stop(r, "test"), 0);
	assert_int_equal(m.disabled, 1);
	rec_recording_stats(r, &st);
	assert_int_equal(st.state, REC_RECORDING_STOPPED);
	assert_string_equal(st.stop_reason, "test");
	prec_sink_mem_data(sink, &len);
	assert_int_equal(st.bytes_written, len);
	assert_true(st.bytes_raw > st.bytes_written);   /* compressed */
	/* stop is idempotent */
	assert_int_equal(rec_recording_stop(r, "again"), 0);
	rec_recording_free(r);

	read_out(sink, &out);
	assert_int_equal(out.headers, 1);
	assert_int_equal(out.events, 1);
	assert_int_equal(out.ends, 1);
	assert_string_equal(out.end_reason, "test");
	assert_int_equal(out.switches, 6000);
	assert_int_equal(out.samples, 50);
	assert_int_equal(out.end_records, 6050);
	for (int c = 0; c < NCPU; c++)
		for (size_t k = 0; k < out.ntimes[c]; k++)
			assert_int_equal(out.times[c][k], 1000 + k);
	out_release(&out);
	prec_sink_free(sink);
	memsource_free(&m.pub);
}

/* Each output analyzes alone and the outputs join: per CPU, the switch
 * times of output k are 1000 .. and those of output k+1 follow without a
 * gap or a repeat. */
static void test_rotation_joins(void **state)
{
	struct memsource m;
	struct rec_recording_opts o;
	struct rec_recording *r;
	struct rec_recording_stats st;
	struct prec_sink *sink[3] = { prec_sink_mem_new(), prec_sink_mem_new(),
				      prec_sink_mem_new() };
	struct out out[3];
	size_t total_len = 0;

	(void)state;
	memsource_init(&m);
	opts_for(&o, &m);
	assert_int_equal(rec_recording_new(&o, sink[0], "one", &r), 0);
	assert_int_equal(rec_recording_start(r), 0);
	put_switches(&m, r, 1000, 500);
	step_until(r, 1000);
	assert_int_equal(rec_recording_rotate(r, sink[1], "two"), 0);
	/* records already in the rings but not yet taken go to the next */
	put_switches(&m, r, 1500, 700);
	assert_int_equal(rec_recording_rotate(r, sink[2], "three"), 0);
	put_switches(&m, r, 2200, 300);
	step_until(r, 3000);
	rec_recording_stats(r, &st);
	assert_int_equal(st.outputs, 3);
	assert_string_equal(st.output_name, "three");
	assert_int_equal(rec_recording_stop(r, "signal"), 0);
	rec_recording_stats(r, &st);
	rec_recording_free(r);

	{
		uint64_t expect[NCPU] = { 1000, 1000 };
		size_t switches = 0;

		for (int k = 0; k < 3; k++) {
			size_t len;

			read_out(sink[k], &out[k]);
			prec_sink_mem_data(sink[k], &len);
			total_len += len;
			assert_int_equal(out[k].headers, 1);
			assert_int_equal(out[k].events, 1);
			assert_int_equal(out[k].ends, 1);
			assert_string_equal(out[k].end_reason, k < 2 ? "rotated" : "signal");
			assert_int_equal(out[k].end_records, out[k].switches);
			switches += out[k].switches;
			for (int c = 0; c < NCPU; c++)
				for (size_t i = 0; i < out[k].ntimes[c]; i++)
					assert_int_equal(out[k].times[c][i], expect[c]++);
		}
		assert_int_equal(switches, 3000);
		assert_int_equal(expect[0], 2500);
		assert_int_equal(expect[1], 2500);
		assert_int_equal(out[0].switches, 1000);
	}
	assert_int_equal(st.bytes_written, total_len);
	for (int k = 0; k < 3; k++) {
		out_release(&out[k]);
		prec_sink_free(sink[k]);
	}
	memsource_free(&m.pub);
}

/* A writer thread keeps the rings busy while the driver rotates: every
 * record still lands in exactly one output, in order per CPU. */
struct feeder {
	struct memsource *m;
	size_t n;
	int done;
};

static void *feed(void *arg)
{
	struct feeder *f = arg;

	for (size_t k = 0; k < f->n; k++)
		for (size_t i = 0; i < NCPU; i++)
			while (memsource_switch(f->m, i, 1000 + k, 1, 1, 0) < 0)
				usleep(200);
	__atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_rotation_under_load(void **state)
{
	enum { OUTS = 6, N = 20000 };
	struct memsource m;
	struct rec_recording_opts o;
	struct rec_recording *r;
	struct prec_sink *sink[OUTS];
	struct feeder f;
	pthread_t th;
	uint64_t expect[NCPU] = { 1000, 1000 };
	int k = 0;

	(void)state;
	for (int i = 0; i < OUTS; i++)
		sink[i] = prec_sink_mem_new();
	memsource_init(&m);
	opts_for(&o, &m);
	assert_int_equal(rec_recording_new(&o, sink[0], "0", &r), 0);
	assert_int_equal(rec_recording_start(r), 0);
	f.m = &m;
	f.n = N;
	f.done = 0;
	assert_int_equal(pthread_create(&th, NULL, feed, &f), 0);
	for (int steps = 0; !__atomic_load_n(&f.done, __ATOMIC_ACQUIRE); steps++) {
		assert_true(rec_recording_step(r, 5) > 0);
		if (steps % 7 == 6 && k + 1 < OUTS)
			assert_int_equal(rec_recording_rotate(r, sink[++k], "next"), 0);
	}
	pthread_join(th, NULL);
	assert_int_equal(rec_recording_stop(r, "signal"), 0);
	rec_recording_free(r);
	for (int i = 0; i <= k; i++) {
		struct out out;

		read_out(sink[i], &out);
		assert_int_equal(out.headers, 1);
		assert_int_equal(out.ends, 1);
		for (int c = 0; c < NCPU; c++)
			for (size_t j = 0; j < out.ntimes[c]; j++)
				assert_int_equal(out.times[c][j], expect[c]++);
		out_release(&out);
	}
	assert_true(k >= 2);   /* rotations happened mid-stream */
	assert_int_equal(expect[0], 1000 + N);
	assert_int_equal(expect[1], 1000 + N);
	for (int i = 0; i < OUTS; i++)
		prec_sink_free(sink[i]);
	memsource_free(&m.pub);
}

/* -d: the recording stops itself; stop() keeps its reason. */
static void test_duration(void **state)
{
	struct memsource m;
	struct rec_recording_opts o;
	struct rec_recording *r;
	struct rec_recording_stats st;
	struct prec_sink *sink = prec_sink_mem_new();
	struct out out;
	int ret, steps = 0;

	(void)state;
	memsource_init(&m);
	opts_for(&o, &m);
	o.duration_ns = 150 * 1000000ull;
	assert_int_equal(rec_recording_new(&o, sink, "mem", &r), 0);
	assert_int_equal(rec_recording_start(r), 0);
	while ((ret = rec_recording_step(r, 100)) > 0)
		assert_true(++steps < 100);
	assert_int_equal(ret, 0);
	rec_recording_stats(r, &st);
	assert_int_equal(st.state, REC_RECORDING_ENDING);
	assert_true(st.elapsed_ns >= o.duration_ns);
	assert_int_equal(rec_recording_stop(r, "signal"), 0);
	rec_recording_stats(r, &st);
	assert_string_equal(st.stop_reason, "duration");
	rec_recording_free(r);
	read_out(sink, &out);
	assert_string_equal(out.end_reason, "duration");
	out_release(&out);
	prec_sink_free(sink);
	memsource_free(&m.pub);
}

/* A full disk mid-recording: the step fails with the sink's error, the
 * message names the output, and what was written reads back. */
static void test_write_error(void **state)
{
	struct memsource m;
	struct rec_recording_opts o;
	struct rec_recording *r;
	struct rec_recording_stats st;
	struct prec_sink *sink = prec_sink_mem_new();
	int ret = 1;

	(void)state;
	memsource_init(&m);
	opts_for(&o, &m);
	o.frame_size = 4096;
	assert_int_equal(rec_recording_new(&o, sink, "tiny.prec", &r), 0);
	assert_int_equal(rec_recording_start(r), 0);
	{
		size_t len;

		prec_sink_mem_data(sink, &len);
		prec_sink_mem_set_limit(sink, len + 3000);
	}
	logcap_clear();
	for (uint64_t k = 0; ret > 0 && k < 100000; k++) {
		if (memsource_switch(&m, k % NCPU, 1000 + k, 1, 1, 0) < 0 || k % 100 == 0)
			ret = rec_recording_step(r, 1);
	}
	assert_int_equal(ret, -ENOSPC);
	rec_recording_stats(r, &st);
	assert_int_equal(st.state, REC_RECORDING_FAILED);
	assert_non_null(strstr(logcap_err(), "disk full while writing tiny.prec"));
	assert_int_equal(rec_recording_step(r, 1), -ENOSPC);
	assert_int_equal(rec_recording_stop(r, "signal"), -ENOSPC);
	assert_int_equal(rec_recording_rotate(r, sink, "x"), -EINVAL);
	rec_recording_free(r);
	{
		size_t len;
		const void *buf = prec_sink_mem_data(sink, &len);
		struct prec_reader *rd = prec_reader_open_mem(buf, len, NULL);
		struct prec_packet p;
		size_t n = 0;

		assert_non_null(rd);
		while (prec_reader_next_packet(rd, &p) > 0)
			n++;
		assert_true(n > 10);
		prec_reader_free(rd);
	}
	prec_sink_free(sink);
	memsource_free(&m.pub);
}

/* A corrupt record header stops that ring (a RING_ERROR loss in the
 * output, one error message); the other ring goes on. */
static void test_corrupt_ring(void **state)
{
	struct memsource m;
	struct rec_recording_opts o;
	struct rec_recording *r;
	struct prec_sink *sink = prec_sink_mem_new();
	struct perf_event_header bad = { PERF_RECORD_SAMPLE, 0, 4 };
	struct out out;

	(void)state;
	memsource_init(&m);
	opts_for(&o, &m);
	assert_int_equal(rec_recording_new(&o, sink, "mem", &r), 0);
	assert_int_equal(rec_recording_start(r), 0);
	logcap_clear();
	assert_int_equal(memsource_switch(&m, 0, 10, 1, 1, 1), 0);
	memsource_put(&m, 0, &bad, sizeof(bad));
	memsource_publish(&m, 0);
	for (int k = 0; k < 20; k++)
		assert_int_equal(memsource_switch(&m, 1, 20 + (uint64_t)k, 1, 1, 1), 0);
	step_until(r, 21);
	for (int k = 0; k < 5; k++)
		assert_int_equal(rec_recording_step(r, 20), 1);
	assert_int_equal(rec_recording_stop(r, "signal"), 0);
	rec_recording_free(r);
	read_out(sink, &out);
	assert_int_equal(out.ring_errors, 1);
	assert_int_equal(out.ntimes[0], 1);
	assert_int_equal(out.ntimes[1], 20);
	assert_non_null(strstr(logcap_err(), "ring of cpu 0 stopped"));
	out_release(&out);
	prec_sink_free(sink);
	memsource_free(&m.pub);
}

/* Options structs grow: unknown non-zero trailing bytes are refused. */
static void test_opts_size(void **state)
{
	struct memsource m;
	struct {
		struct rec_recording_opts o;
		uint64_t future;
	} big;
	struct rec_recording *r = NULL;
	struct prec_sink *sink = prec_sink_mem_new();

	(void)state;
	memsource_init(&m);
	memset(&big, 0, sizeof(big));
	opts_for(&big.o, &m);
	big.o.sz = sizeof(big);
	big.future = 1;
	assert_int_equal(rec_recording_new(&big.o, sink, "mem", &r), -EINVAL);
	assert_null(r);
	big.future = 0;
	assert_int_equal(rec_recording_new(&big.o, sink, "mem", &r), 0);
	rec_recording_free(r);   /* never started: nothing to finish */
	prec_sink_free(sink);
	memsource_free(&m.pub);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_stats_stop),
		cmocka_unit_test(test_rotation_joins),
		cmocka_unit_test(test_rotation_under_load),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_corrupt_ring),
		cmocka_unit_test(test_opts_size),
	};

	logcap_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
