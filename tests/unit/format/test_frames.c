/*
 * test_frames.c - frames and the index: many frames over several streams,
 * cuts by size and by age, interning across cuts, the index (written and
 * rebuilt), time windows, parallel frame decoding.
 */
#include <pthread.h>

#include "fmt_helpers.h"

/* Many small frames over 5 streams: every packet comes back once, in
 * per-stream order, with callchains and strings resolved. */
static void test_many_frames(void **state)
{
	size_t len, nf;
	unsigned char *buf = fmt_build(2048, 5, 20000, 1, &len);
	struct prec_reader *r = prec_reader_open_mem(buf, len, NULL);
	const struct prec_frame_info *fi;
	struct prec_reader_stats st;
	struct prec_packet p;
	uint64_t last[6] = { 0 }, count = 0, idx_packets = 0;
	uint8_t *seen = calloc(20000, 1);
	int ret;
	(void)state;

	assert_non_null(r);
	assert_int_equal(prec_reader_index(r, &fi, &nf), 0);
	assert_true(nf > 100);
	for (size_t i = 0; i < nf; i++) {
		assert_int_equal(fi[i].seq, i);
		assert_true(fi[i].stream >= 1 && fi[i].stream <= 5);
		assert_true(fi[i].t_min <= fi[i].t_max);
		idx_packets += fi[i].packets;
	}
	while ((ret = prec_reader_next_packet(r, &p)) > 0) {
		if (p.pkt->data_case == PERFREC__PACKET__DATA_INTERNED)
			continue;
		assert_int_equal(p.pkt->data_case, PERFREC__PACKET__DATA_SAMPLE);
		fmt_check_sample(&p);
		uint64_t i = p.pkt->sample->period;
		assert_true(i < 20000);
		assert_int_equal(p.stream, 1 + i % 5);
		assert_false(seen[i]);
		seen[i] = 1;
		/* per stream, packets come in write order */
		assert_true(p.time > last[p.stream]);
		last[p.stream] = p.time;
		count++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(count, 20000);
	prec_reader_stats(r, &st);
	assert_int_equal(st.frames, nf);
	assert_int_equal(st.packets, idx_packets);
	assert_true(st.index_present);
	assert_false(st.index_rebuilt);
	assert_int_equal(st.damaged_frames, 0);
	free(seen);
	prec_reader_free(r);
	free(buf);
}

/* Size cuts: every frame but each stream's last holds >= frame_size bytes
 * of packets and less than frame_size + one packet (+ its InternedData). */
static void test_cut_by_size(void **state)
{
	size_t len, nf;
	unsigned char *buf = fmt_build(1500, 3, 6000, 1, &len);
	struct prec_reader *r = prec_reader_open_mem(buf, len, NULL);
	const struct prec_frame_info *fi;
	int last_of_stream[4] = { -1, -1, -1, -1 };
	(void)state;

	assert_int_equal(prec_reader_index(r, &fi, &nf), 0);
	for (size_t i = 0; i < nf; i++)
		last_of_stream[fi[i].stream] = (int)i;
	for (size_t i = 0; i < nf; i++) {
		if ((int)i == last_of_stream[fi[i].stream])
			continue;
		assert_true(fi[i].raw_size >= 1500);
		assert_true(fi[i].raw_size < 1500 + 200);
	}
	prec_reader_free(r);
	free(buf);
}

/* Age cuts: flush_due cuts exactly the frames opened flush_ms before now. */
static void test_cut_by_age(void **state)
{
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w;
	struct prec_writer_stats ws;
	Perfrec__Packet pkt;
	Perfrec__Sample s;
	const uint64_t ms = 1000000;
	(void)state;

	o.flush_ms = 10;
	w = prec_writer_new(sink, &o);
	fmt_sample(&pkt, &s, 0, 1, 1, 0);
	assert_int_equal(prec_writer_append(w, 1, &pkt, 100 * ms), 0);
	assert_int_equal(prec_writer_append(w, 2, &pkt, 105 * ms), 0);
	assert_int_equal(prec_writer_flush_due(w, 109 * ms), 0);
	prec_writer_stats(w, &ws);
	assert_int_equal(ws.frames, 0);
	assert_int_equal(prec_writer_flush_due(w, 110 * ms), 0);   /* stream 1 only */
	prec_writer_stats(w, &ws);
	assert_int_equal(ws.frames, 1);
	assert_int_equal(prec_writer_append(w, 1, &pkt, 111 * ms), 0);
	assert_int_equal(prec_writer_flush_due(w, 115 * ms), 0);   /* stream 2 */
	prec_writer_stats(w, &ws);
	assert_int_equal(ws.frames, 2);
	/* untimed packets start ageing at the first flush_due that sees them */
	assert_int_equal(prec_writer_append(w, 3, &pkt, 0), 0);
	assert_int_equal(prec_writer_flush_due(w, 200 * ms), 0);   /* cuts stream 1 */
	prec_writer_stats(w, &ws);
	assert_int_equal(ws.frames, 3);
	assert_int_equal(prec_writer_flush_due(w, 209 * ms), 0);
	prec_writer_stats(w, &ws);
	assert_int_equal(ws.frames, 3);
	assert_int_equal(prec_writer_flush_due(w, 210 * ms), 0);
	prec_writer_stats(w, &ws);
	assert_int_equal(ws.frames, 4);
	assert_int_equal(prec_writer_close(w), 0);

	size_t len, nf;
	const void *data = prec_sink_mem_data(sink, &len);
	struct prec_reader *r = prec_reader_open_mem(data, len, NULL);
	const struct prec_frame_info *fi;
	assert_int_equal(prec_reader_index(r, &fi, &nf), 0);
	assert_int_equal(nf, 4);
	assert_int_equal(fi[0].stream, 1);
	assert_int_equal(fi[0].t_min, 100 * ms);
	assert_int_equal(fi[1].stream, 2);
	assert_int_equal(fi[1].t_max, 105 * ms);
	assert_int_equal(fi[2].stream, 1);
	assert_int_equal(fi[2].t_min, 111 * ms);
	assert_int_equal(fi[3].stream, 3);
	assert_int_equal(fi[3].t_min, 0);
	assert_int_equal(fi[3].t_max, 0);
	prec_reader_free(r);
	prec_writer_free(w);
	prec_sink_free(sink);
}

/* An iid handed out just before a cut stays valid for the packet that
 * uses it, and a value used in two frames is defined in each of them. */
static void test_intern_across_cut(void **state)
{
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__TaskEvent te = PERFREC__TASK_EVENT__INIT;
	struct prec_frame *f = prec_frame_new();
	struct prec_packet p;
	(void)state;

	pkt.data_case = PERFREC__PACKET__DATA_TASK;
	pkt.task = &te;
	te.comm = prec_writer_intern_string(w, 1, "first");
	assert_int_equal(prec_writer_append(w, 1, &pkt, 10), 0);
	te.comm = prec_writer_intern_string(w, 1, "pending");
	assert_int_equal(te.comm, 2);
	assert_int_equal(prec_writer_flush(w), 0);   /* cut between intern and use */
	assert_int_equal(prec_writer_append(w, 1, &pkt, 20), 0);
	te.comm = prec_writer_intern_string(w, 1, "first");   /* again, new frame */
	assert_int_equal(prec_writer_append(w, 1, &pkt, 30), 0);
	assert_int_equal(prec_writer_close(w), 0);

	size_t len, nf;
	const void *data = prec_sink_mem_data(sink, &len);
	struct prec_reader *r = prec_reader_open_mem(data, len, NULL);
	const struct prec_frame_info *fi;
	assert_int_equal(prec_reader_index(r, &fi, &nf), 0);
	assert_int_equal(nf, 2);
	/* decode frame 2 alone: it must define both of its strings */
	assert_int_equal(prec_reader_load_frame(r, &fi[1], f), 0);
	const char *want[] = { "pending", "first" };
	int k = 0;
	while (prec_frame_next(f, &p) > 0) {
		if (p.pkt->data_case != PERFREC__PACKET__DATA_TASK)
			continue;
		assert_true(k < 2);
		assert_non_null(prec_frame_string(f, p.pkt->task->comm));
		assert_string_equal(prec_frame_string(f, p.pkt->task->comm), want[k]);
		assert_int_equal(p.time, k ? 30 : 20);
		k++;
	}
	assert_int_equal(k, 2);
	assert_null(prec_frame_string(f, 0));
	assert_null(prec_frame_string(f, 999));
	assert_null(prec_frame_callchain(f, 1, NULL));
	prec_frame_free(f);
	prec_reader_free(r);
	prec_writer_free(w);
	prec_sink_free(sink);
}

/* A file whose writer never closed (no index) reads fully, and its rebuilt
 * index equals the one the writer wrote on close. */
static void test_rebuilt_index_equals_written(void **state)
{
	size_t len_c, len_o, nc, no;
	unsigned char *closed = fmt_build(1024, 4, 5000, 1, &len_c);
	unsigned char *open_ = fmt_build(1024, 4, 5000, 0, &len_o);
	const struct prec_frame_info *fc, *fo;
	struct prec_reader_stats sc, so;
	struct fmt_damage_log log = { 0 };
	(void)state;

	assert_true(len_o < len_c);
	assert_memory_equal(closed, open_, len_o);   /* same bytes but the index */
	struct prec_reader *rc = prec_reader_open_mem(closed, len_c, NULL);
	struct prec_reader *ro = prec_reader_open_mem(open_, len_o, NULL);
	assert_int_equal(prec_reader_index(rc, &fc, &nc), 0);
	assert_int_equal(prec_reader_index(ro, &fo, &no), 0);
	assert_int_equal(nc, no);
	assert_true(nc > 20);
	for (size_t i = 0; i < nc; i++) {
		assert_int_equal(fc[i].offset, fo[i].offset);
		assert_int_equal(fc[i].data_offset, fo[i].data_offset);
		assert_int_equal(fc[i].compressed_size, fo[i].compressed_size);
		assert_int_equal(fc[i].raw_size, fo[i].raw_size);
		assert_int_equal(fc[i].stream, fo[i].stream);
		assert_int_equal(fc[i].packets, fo[i].packets);
		assert_int_equal(fc[i].t_min, fo[i].t_min);
		assert_int_equal(fc[i].t_max, fo[i].t_max);
		assert_int_equal(fc[i].seq, fo[i].seq);
	}
	prec_reader_stats(rc, &sc);
	prec_reader_stats(ro, &so);
	assert_true(sc.index_present);
	assert_false(so.index_present);
	assert_true(so.index_rebuilt);
	assert_int_equal(fmt_count(open_, len_o, &log, &so), 5000);
	assert_int_equal(log.n, 0);
	assert_false(so.torn);
	prec_reader_free(rc);
	prec_reader_free(ro);
	free(closed);
	free(open_);
}

/* write_index = 0: close writes no index; the reader walks. */
static void test_no_index_option(void **state)
{
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w;
	Perfrec__Packet pkt;
	Perfrec__Sample s;
	struct prec_reader_stats st;
	struct fmt_damage_log log = { 0 };
	size_t len;
	(void)state;

	o.write_index = 0;
	o.frame_size = 100;
	w = prec_writer_new(sink, &o);
	fmt_sample(&pkt, &s, 0, 1, 1, 0);
	for (int i = 0; i < 50; i++)
		assert_int_equal(prec_writer_append(w, 0, &pkt, 5 + (uint64_t)i), 0);
	assert_int_equal(prec_writer_close(w), 0);
	const void *data = prec_sink_mem_data(sink, &len);
	assert_int_equal(fmt_count(data, len, &log, &st), 50);
	assert_false(st.index_present);
	assert_true(st.index_rebuilt);
	assert_false(st.torn);
	prec_writer_free(w);
	prec_sink_free(sink);
}

/* set_window returns exactly the frames whose [t_min, t_max] meets it. */
static void test_window(void **state)
{
	size_t len, nf;
	/* one stream: frames cover consecutive time ranges */
	unsigned char *buf = fmt_build(512, 1, 3000, 1, &len);
	struct prec_reader *r = prec_reader_open_mem(buf, len, NULL);
	const struct prec_frame_info *fi;
	struct prec_frame_info got;
	struct prec_packet p;
	uint64_t t0 = 1000 + 10 * 1000, t1 = 1000 + 10 * 1500;
	size_t want = 0, n = 0;
	(void)state;

	assert_int_equal(prec_reader_index(r, &fi, &nf), 0);
	for (size_t i = 0; i < nf; i++)
		if (fi[i].t_max >= t0 && fi[i].t_min <= t1)
			want++;
	assert_true(want >= 2 && want < nf / 2);
	prec_reader_set_window(r, t0, t1);
	while (prec_reader_next_frame(r, &got) > 0) {
		assert_true(got.t_max >= t0 && got.t_min <= t1);
		n++;
	}
	assert_int_equal(n, want);
	/* packets: everything from the window's frames, and all of the window */
	prec_reader_rewind(r);
	uint64_t in = 0;
	while (prec_reader_next_packet(r, &p) > 0) {
		if (p.pkt->data_case != PERFREC__PACKET__DATA_SAMPLE)
			continue;
		if (p.time >= t0 && p.time <= t1)
			in++;
	}
	assert_int_equal(in, 501);
	prec_reader_free(r);
	free(buf);
}

/* Two closed files concatenated read as the frames of both, each part by
 * its own index (SPEC 8); test_concat.c has the rest. */
static void test_concatenated(void **state)
{
	size_t la, lb, nf;
	unsigned char *a = fmt_build(800, 2, 700, 1, &la);
	unsigned char *b = fmt_build(800, 3, 900, 1, &lb);
	unsigned char *ab = malloc(la + lb);
	struct fmt_damage_log log = { 0 };
	struct prec_reader_stats st;
	(void)state;

	memcpy(ab, a, la);
	memcpy(ab + la, b, lb);
	assert_int_equal(fmt_count(ab, la + lb, &log, &st), 700 + 900);
	assert_int_equal(log.n, 0);
	assert_true(st.index_present);
	assert_false(st.index_rebuilt);
	struct prec_reader *r = prec_reader_open_mem(ab, la + lb, NULL);
	const struct prec_frame_info *fi;
	assert_int_equal(prec_reader_index(r, &fi, &nf), 0);
	assert_int_equal(fi[0].seq, 0);
	assert_true(fi[nf - 1].offset > la);
	prec_reader_free(r);
	free(a);
	free(b);
	free(ab);
}

/* Workers decode frames in parallel with their own prec_frame. */
struct worker {
	struct prec_reader *r;
	const struct prec_frame_info *fi;
	size_t from, to;
	uint64_t samples;
	int err;
};

static void *work(void *arg)
{
	struct worker *wk = arg;
	struct prec_frame *f = prec_frame_new();
	struct prec_packet p;

	for (size_t i = wk->from; i < wk->to; i++) {
		int ret = prec_reader_load_frame(wk->r, &wk->fi[i], f);
		if (ret < 0) {
			wk->err = ret;
			break;
		}
		while ((ret = prec_frame_next(f, &p)) > 0) {
			if (p.pkt->data_case != PERFREC__PACKET__DATA_SAMPLE)
				continue;
			size_t n;
			if (!prec_frame_callchain(f, p.pkt->sample->callchain, &n) ||
			    n != 3 + p.pkt->sample->ip % 5)
				wk->err = -1;
			wk->samples++;
		}
		if (ret < 0)
			wk->err = ret;
	}
	prec_frame_free(f);
	return NULL;
}

static void test_parallel(void **state)
{
	size_t len, nf;
	unsigned char *buf = fmt_build(1024, 4, 8000, 1, &len);
	char path[] = "/tmp/prec_par_XXXXXX";
	int fd = mkstemp(path);
	(void)state;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	struct prec_reader *r = prec_reader_open(path, NULL);
	const struct prec_frame_info *fi;
	struct prec_reader_stats st;
	assert_int_equal(prec_reader_index(r, &fi, &nf), 0);
	struct worker wk[3];
	pthread_t th[3];
	for (int i = 0; i < 3; i++) {
		wk[i] = (struct worker){ r, fi, nf * i / 3, nf * (i + 1) / 3, 0, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, work, &wk[i]), 0);
	}
	uint64_t total = 0;
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(wk[i].err, 0);
		total += wk[i].samples;
	}
	assert_int_equal(total, 8000);
	prec_reader_stats(r, &st);
	assert_int_equal(st.frames, nf);
	prec_reader_free(r);
	unlink(path);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_frames),
		cmocka_unit_test(test_cut_by_size),
		cmocka_unit_test(test_cut_by_age),
		cmocka_unit_test(test_intern_across_cut),
		cmocka_unit_test(test_rebuilt_index_equals_written),
		cmocka_unit_test(test_no_index_option),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_concatenated),
		cmocka_unit_test(test_parallel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
