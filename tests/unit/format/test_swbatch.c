/*
 * test_swbatch.c - context switches written as SwitchBatch packets (format
 * 1.2) read back as the ContextSwitch packets that were appended: every
 * field, time and position among other packets, across frame cuts, kind
 * filters and batch sizes; the batch bytes are protobuf-c's; damaged
 * columns end the frame with PREC_E_DECODE; the hand decoder reads
 * batches as protobuf-c does, or leaves them to it.
 */
#include <zstd.h>

#include "fmt_helpers.h"
#include "format/swbatch.h"
#include "format/varint.h"

/* What one appended packet was: a switch or a loss between the switches. */
struct ev {
	int is_switch;
	uint64_t time;
	Perfrec__ContextSwitch cs;
	uint64_t count;   /* the loss's */
};

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* n events on one stream: runs of switches of a few tasks on 4 CPUs,
 * times mostly rising by 1-100 us, sometimes going back (rings drained one
 * after another) or absent (0: inherits), with a loss every ~50. */
static struct ev *make_events(size_t n)
{
	struct ev *e = calloc(n, sizeof(*e));
	uint64_t t = 5000000000ull;

	assert_non_null(e);
	for (size_t i = 0; i < n; i++) {
		uint64_t r = rnd();
		t += 1000 + r % 100000;
		if (r % 97 == 0)
			t -= 300000;
		e[i].time = r % 89 == 0 ? 0 : t;
		if (r % 53 == 0) {
			e[i].count = 1 + r % 7;
			continue;
		}
		e[i].is_switch = 1;
		perfrec__context_switch__init(&e[i].cs);
		Perfrec__ContextSwitch *c = &e[i].cs;
		c->cpu = (uint32_t)(r >> 8) % 4;
		c->id = 100 + c->cpu;
		c->pid = 1000 + (uint32_t)(r >> 12) % 6;
		c->tid = c->pid + (uint32_t)(r >> 16) % 3;
		if (r % 211 == 0)
			c->pid = c->tid = UINT32_MAX;   /* an exiting task */
		c->out = (r >> 20) & 1;
		c->preempt = c->out && ((r >> 21) & 1);
		c->cpu_wide = (r >> 22) % 8 != 0;
		if (c->cpu_wide) {
			c->other_pid = 1000 + (uint32_t)(r >> 24) % 6;
			c->other_tid = c->other_pid + (uint32_t)(r >> 28) % 3;
		}
	}
	return e;
}

static unsigned char *write_events(const struct ev *e, size_t n, size_t frame_size,
				   unsigned rows, size_t *len)
{
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w;
	unsigned char *buf;

	o.frame_size = frame_size;
	o.switch_rows = rows;
	w = prec_writer_new(sink, &o);
	assert_non_null(w);
	for (size_t i = 0; i < n; i++) {
		Perfrec__Packet p = PERFREC__PACKET__INIT;
		Perfrec__ContextSwitch cs = e[i].cs;
		Perfrec__Loss l = PERFREC__LOSS__INIT;
		if (e[i].is_switch) {
			p.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
			p.context_switch = &cs;
		} else {
			l.count = e[i].count;
			p.data_case = PERFREC__PACKET__DATA_LOSS;
			p.loss = &l;
		}
		assert_int_equal(prec_writer_append(w, 2, &p, e[i].time), 0);
	}
	assert_int_equal(prec_writer_close(w), 0);
	prec_writer_free(w);
	buf = fmt_copy_sink(sink, len);
	prec_sink_free(sink);
	return buf;
}

/* Reads the file back with the kinds mask and checks what comes out
 * against the events: the same packets in order, each at its time (an
 * event appended without a time inherits one, which is not checked: after
 * a frame cut it is the frame's start). */
static void read_check(const unsigned char *b, size_t len, const struct ev *e, size_t n,
		       uint64_t kinds, uint64_t *fields)
{
	struct prec_reader *r = prec_reader_open_mem(b, len, NULL);
	struct prec_frame *f = prec_frame_new();
	const struct prec_frame_info *fi;
	size_t nf, k = 0;

	assert_non_null(r);
	assert_int_equal(prec_reader_index(r, &fi, &nf), 0);
	prec_frame_set_kinds(f, kinds);
	*fields = 0;
	for (size_t i = 0; i < nf; i++) {
		struct prec_packet p;
		int ret;
		assert_int_equal(prec_reader_load_frame(r, &fi[i], f), 0);
		while ((ret = prec_frame_next(f, &p)) > 0) {
			/* skip the events the mask left out */
			for (;;) {
				assert_true(k < n);
				int want = e[k].is_switch ?
					   !!(kinds & PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH)) :
					   !!(kinds & PREC_KIND(PERFREC__PACKET__DATA_LOSS));
				if (want)
					break;
				k++;
			}
			if (e[k].time)
				assert_int_equal(p.time, e[k].time);
			if (e[k].is_switch) {
				const Perfrec__ContextSwitch *c = p.pkt->context_switch, *w = &e[k].cs;
				assert_int_equal(p.pkt->data_case, PERFREC__PACKET__DATA_CONTEXT_SWITCH);
				assert_int_equal(c->id, w->id);
				assert_int_equal(c->cpu, w->cpu);
				assert_int_equal(c->pid, w->pid);
				assert_int_equal(c->tid, w->tid);
				assert_int_equal(!!c->out, !!w->out);
				assert_int_equal(!!c->preempt, !!w->preempt);
				assert_int_equal(!!c->cpu_wide, !!w->cpu_wide);
				assert_int_equal(c->other_pid, w->other_pid);
				assert_int_equal(c->other_tid, w->other_tid);
			} else {
				assert_int_equal(p.pkt->data_case, PERFREC__PACKET__DATA_LOSS);
				assert_int_equal(p.pkt->loss->count, e[k].count);
			}
			k++;
		}
		assert_int_equal(ret, 0);
		/* the frame-info record counts what the file holds */
		assert_int_equal(prec_frame_packets(f), fi[i].packets);
		if (kinds == PREC_KINDS_ALL)
			assert_int_equal(prec_frame_kinds(f), fi[i].kinds);
		*fields += fi[i].packets;
	}
	/* what the mask left out at the end */
	while (k < n && !(e[k].is_switch ?
			   (kinds & PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH)) :
			   (kinds & PREC_KIND(PERFREC__PACKET__DATA_LOSS))))
		k++;
	assert_int_equal(k, n);
	prec_frame_free(f);
	prec_reader_free(r);
}

/* The events written with batches of rows and with a packet each (0) read
 * back the same. */
static void roundtrip(size_t n, size_t frame_size, unsigned rows)
{
	struct ev *e = make_events(n);
	size_t len, len0;
	uint64_t fields, fields0;
	unsigned char *b = write_events(e, n, frame_size, rows, &len);
	unsigned char *b0 = write_events(e, n, frame_size, 0, &len0);

	read_check(b, len, e, n, PREC_KINDS_ALL, &fields);
	read_check(b0, len0, e, n, PREC_KINDS_ALL, &fields0);
	if (rows > 1) {
		assert_true(fields < fields0);   /* batches were written */
		if (rows >= 64)
			assert_true(len < len0);
	} else if (rows == 0) {
		assert_int_equal(fields, fields0);
	}
	/* filtered passes: times unchanged, the other kind never seen */
	read_check(b, len, e, n, PREC_KIND(PERFREC__PACKET__DATA_LOSS), &fields);
	read_check(b, len, e, n, PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH), &fields);
	free(b);
	free(b0);
	free(e);
}

static void test_roundtrip_default(void **state)
{
	(void)state;
	roundtrip(20000, PREC_DEFAULT_FRAME_SIZE, PREC_DEFAULT_SWITCH_ROWS);
}

static void test_roundtrip_small_frames(void **state)
{
	(void)state;
	/* frames cut inside runs of switches: a batch never spans frames */
	roundtrip(5000, 700, PREC_DEFAULT_SWITCH_ROWS);
	roundtrip(5000, 4096, 7);
}

static void test_roundtrip_rows(void **state)
{
	(void)state;
	roundtrip(3000, PREC_DEFAULT_FRAME_SIZE, 1);
	roundtrip(3000, PREC_DEFAULT_FRAME_SIZE, 0);
	roundtrip(70000, 16u << 20, PREC_SWBATCH_MAX_ROWS);
}

/* Runs of fewer than PREC_SWBATCH_MIN_ROWS switches are written as
 * ContextSwitch packets (a packet per switch, as with switch_rows 0);
 * longer ones as batches. */
static void test_short_runs(void **state)
{
	const size_t n = 3000;
	struct ev *e = make_events(n);
	size_t len, len0;
	uint64_t fields, fields0;
	(void)state;

	for (size_t i = 0; i < n; i++)
		if (i % (PREC_SWBATCH_MIN_ROWS) == 0) {
			e[i].is_switch = 0;
			e[i].count = 1;
		} else if (!e[i].is_switch) {
			e[i].is_switch = 1;   /* runs of exactly MIN_ROWS - 1 */
			perfrec__context_switch__init(&e[i].cs);
		}
	unsigned char *b = write_events(e, n, PREC_DEFAULT_FRAME_SIZE, PREC_DEFAULT_SWITCH_ROWS, &len);
	unsigned char *b0 = write_events(e, n, PREC_DEFAULT_FRAME_SIZE, 0, &len0);
	read_check(b, len, e, n, PREC_KINDS_ALL, &fields);
	read_check(b0, len0, e, n, PREC_KINDS_ALL, &fields0);
	assert_int_equal(fields, fields0);
	assert_int_equal(len, len0);
	free(b);
	free(b0);
	/* one more switch a run: every run a batch */
	for (size_t i = 0; i + 1 < n; i++)
		if (!e[i].is_switch) {
			e[i].is_switch = 1;
			e[i].cs = e[i + 1].cs;
			i += PREC_SWBATCH_MIN_ROWS;   /* next loss stays */
		}
	b = write_events(e, n, PREC_DEFAULT_FRAME_SIZE, PREC_DEFAULT_SWITCH_ROWS, &len);
	read_check(b, len, e, n, PREC_KINDS_ALL, &fields);
	assert_true(fields < fields0);
	free(b);
	free(e);
}

/* Bytes per switch of a switch-heavy stream (two tasks ping-ponging on
 * two CPUs, 5-20 us apart, as tests/bench's pingpong mix): the columns
 * keep a row near 6 bytes before zstd, against ~27 for a packet each. */
static void test_row_bytes(void **state)
{
	struct prec_writer_stats st;
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, &o);
	uint64_t t = 1000000000ull;
	const size_t n = 100000;
	(void)state;

	for (size_t i = 0; i < n; i++) {
		Perfrec__Packet p = PERFREC__PACKET__INIT;
		Perfrec__ContextSwitch cs = PERFREC__CONTEXT_SWITCH__INIT;
		t += 5000 + rnd() % 15000;
		cs.cpu = (uint32_t)(i / 2) % 2;
		cs.id = 40 + cs.cpu;
		cs.pid = 2000;
		cs.tid = 2001 + (uint32_t)(i / 4) % 2;
		cs.out = i % 2;
		cs.cpu_wide = 1;
		cs.other_pid = 2000;
		cs.other_tid = 4003 - cs.tid;
		p.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
		p.context_switch = &cs;
		assert_int_equal(prec_writer_append(w, 2, &p, t), 0);
	}
	assert_int_equal(prec_writer_close(w), 0);
	prec_writer_stats(w, &st);
	print_message("%zu switches: %.2f raw bytes each, %.2f compressed\n", n,
		      (double)st.bytes_raw / n, (double)st.bytes_written / n);
	assert_true(st.bytes_raw < 7 * n);
	prec_writer_free(w);
	prec_sink_free(sink);
}

/* The batch's bytes are exactly what protobuf-c packs for the message
 * they decode to. */
static void test_protobuf_bytes(void **state)
{
	struct ev *e = make_events(3000);
	struct prec_swbatch b;
	uint8_t *out = malloc(1 << 20), *again = malloc(1 << 20);
	(void)state;

	prec_swbatch_init(&b, 4096);
	for (size_t i = 0; i < 3000; i++)
		if (e[i].is_switch)
			assert_int_equal(prec_swbatch_add(&b, &e[i].cs, (int64_t)(rnd() % 200000) - 20000), 0);
	size_t sz = prec_swbatch_size(&b);
	assert_int_equal(prec_swbatch_pack(&b, out), sz);
	Perfrec__Packet *p = perfrec__packet__unpack(NULL, sz, out);
	assert_non_null(p);
	assert_int_equal(p->data_case, PERFREC__PACKET__DATA_SWITCH_BATCH);
	assert_int_equal(p->switch_batch->n_dt, b.n);
	assert_int_equal(p->dt, b.sum);
	assert_int_equal(protobuf_c_message_get_packed_size(&p->base), sz);
	assert_int_equal(protobuf_c_message_pack(&p->base, again), sz);
	assert_memory_equal(out, again, sz);
	perfrec__packet__free_unpacked(p, NULL);
	/* cleared, the next batch starts with empty tables */
	prec_swbatch_clear(&b);
	assert_int_equal(prec_swbatch_add(&b, &e[0].cs, 0), 0);
	sz = prec_swbatch_size(&b);
	assert_int_equal(prec_swbatch_pack(&b, out), sz);
	p = perfrec__packet__unpack(NULL, sz, out);
	assert_non_null(p);
	assert_int_equal(p->switch_batch->n_key_id, 1);
	assert_true(p->switch_batch->n_task_pid <= 2);
	perfrec__packet__free_unpacked(p, NULL);
	prec_swbatch_release(&b);
	free(out);
	free(again);
	free(e);
}

/* One frame holding Trace.packet { bytes of pkt }: what prec_frame_next()
 * makes of it. */
static int frame_of(const Perfrec__Packet *pkt, int *rows)
{
	size_t sz = protobuf_c_message_get_packed_size(&pkt->base);
	uint8_t *raw = malloc(sz + 16), *z;
	size_t n = 0, zl;
	struct prec_frame *f = prec_frame_new();
	struct prec_packet p;
	int ret;

	raw[n++] = 0x0A;
	for (size_t v = sz; ; v >>= 7) {
		raw[n++] = (uint8_t)(v & 0x7F) | (v >= 0x80 ? 0x80 : 0);
		if (v < 0x80)
			break;
	}
	n += protobuf_c_message_pack(&pkt->base, raw + n);
	z = malloc(ZSTD_compressBound(n));
	zl = ZSTD_compress(z, ZSTD_compressBound(n), raw, n, 1);
	assert_false(ZSTD_isError(zl));
	assert_int_equal(prec_frame_load(f, z, zl, 1 << 26), 0);
	*rows = 0;
	while ((ret = prec_frame_next(f, &p)) > 0)
		(*rows)++;
	prec_frame_free(f);
	free(z);
	free(raw);
	return ret;
}

static void test_damage(void **state)
{
	uint64_t ids[2] = { 7, 8 };
	uint32_t cpus[2] = { 0, 1 }, flags[2] = { 1, 0 };
	uint32_t pids[3] = { 0, 10, 20 }, tids[3] = { 0, 11, 21 };
	int64_t dts[3] = { 100, 5, -3 };
	uint32_t key[3] = { 0, 1, 0 }, task[3] = { 1, 2, 1 }, other[3] = { 0, 0, 2 };
	Perfrec__SwitchBatch m = PERFREC__SWITCH_BATCH__INIT;
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	int rows;
	(void)state;

	m.n_key_id = m.n_key_cpu = m.n_key_flags = 2;
	m.key_id = ids;
	m.key_cpu = cpus;
	m.key_flags = flags;
	m.n_task_pid = m.n_task_tid = 3;
	m.task_pid = pids;
	m.task_tid = tids;
	m.n_dt = m.n_key = m.n_task = m.n_other = 3;
	m.dt = dts;
	m.key = key;
	m.task = task;
	m.other = other;
	p.data_case = PERFREC__PACKET__DATA_SWITCH_BATCH;
	p.switch_batch = &m;
	p.dt = 102;
	assert_int_equal(frame_of(&p, &rows), 0);
	assert_int_equal(rows, 3);

	p.dt = 103;   /* not the sum of the rows' dts */
	assert_int_equal(frame_of(&p, &rows), PREC_E_DECODE);
	p.dt = 102;
	key[1] = 2;   /* past the key table */
	assert_int_equal(frame_of(&p, &rows), PREC_E_DECODE);
	key[1] = 1;
	other[2] = 3;   /* past the task table */
	assert_int_equal(frame_of(&p, &rows), PREC_E_DECODE);
	other[2] = 2;
	m.n_other = 2;   /* a short column */
	assert_int_equal(frame_of(&p, &rows), PREC_E_DECODE);
	m.n_other = 3;
	m.n_key_cpu = 1;   /* a short table */
	assert_int_equal(frame_of(&p, &rows), PREC_E_DECODE);
	m.n_key_cpu = 2;
	m.n_task_tid = 2;
	assert_int_equal(frame_of(&p, &rows), PREC_E_DECODE);
	m.n_task_tid = 3;
	m.n_dt = m.n_key = m.n_task = m.n_other = 0;   /* no rows */
	p.dt = 0;
	assert_int_equal(frame_of(&p, &rows), PREC_E_DECODE);
	/* a batch too large for a reader (values that do not compress
	 * past the reader's ratio limit) */
	size_t big = PREC_SWBATCH_MAX_ROWS + 1;
	int64_t *bd = calloc(big, sizeof(*bd));
	uint32_t *bz = calloc(big, sizeof(*bz));
	uint64_t sum = 0;
	for (size_t i = 0; i < big; i++) {
		bd[i] = (int64_t)(rnd() % 100000);
		bz[i] = (uint32_t)(rnd() % 2);
		if (i < big - 1)
			sum += (uint64_t)bd[i];
	}
	p.dt = (int64_t)(sum + (uint64_t)bd[big - 1]);
	m.n_dt = m.n_key = m.n_task = m.n_other = big;
	m.dt = bd;
	m.key = m.task = m.other = bz;
	assert_int_equal(frame_of(&p, &rows), PREC_E_DECODE);
	m.n_dt = m.n_key = m.n_task = m.n_other = big - 1;
	p.dt = (int64_t)sum;
	assert_int_equal(frame_of(&p, &rows), 0);
	assert_int_equal(rows, (int)(big - 1));
	free(bd);
	free(bz);
}

static void assert_same_rows(const Perfrec__Packet *a, const Perfrec__Packet *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const Perfrec__ContextSwitch *x = a[i].context_switch, *y = b[i].context_switch;
		assert_int_equal(a[i].dt, b[i].dt);
		assert_int_equal(a[i].data_case, b[i].data_case);
		assert_int_equal(x->id, y->id);
		assert_int_equal(x->cpu, y->cpu);
		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->tid, y->tid);
		assert_int_equal(x->out, y->out);
		assert_int_equal(x->preempt, y->preempt);
		assert_int_equal(x->cpu_wide, y->cpu_wide);
		assert_int_equal(x->other_pid, y->other_pid);
		assert_int_equal(x->other_tid, y->other_tid);
	}
}

/* prec_swbatch_decode() of a body, checked against protobuf-c's unpack
 * and prec_swbatch_expand() of the same bytes; returns decode's answer. */
static int decode_vs_expand(const uint8_t *body, size_t len, int64_t dt, size_t *rows)
{
	struct prec_arena a, b;
	Perfrec__Packet *ra, *rb;
	size_t na, nb;
	int ret, want;

	prec_arena_init(&a, 0);
	prec_arena_init(&b, 0);
	ret = prec_swbatch_decode(body, len, dt, &a, &ra, &na);
	Perfrec__SwitchBatch *m = perfrec__switch_batch__unpack(&b.pc, len, body);
	want = m ? prec_swbatch_expand(m, dt, &b, &rb, &nb) : PREC_E_DECODE;
	if (ret <= 0)
		assert_int_equal(ret, want);
	if (ret == 0) {
		assert_int_equal(na, nb);
		assert_same_rows(ra, rb, na);
	}
	*rows = ret == 0 ? na : want == 0 ? nb : 0;
	prec_arena_release(&a);
	prec_arena_release(&b);
	return ret;
}

/* The hand decoder reads the writer's bytes as protobuf-c and
 * prec_swbatch_expand() do, and leaves every other shape to them. */
static void test_decode(void **state)
{
	struct ev *e = make_events(4000);
	struct prec_swbatch b;
	uint8_t *out = malloc(1 << 20);
	size_t rows;
	(void)state;

	/* the writer's batches, ids and dts of every size */
	prec_swbatch_init(&b, 4096);
	for (size_t i = 0; i < 4000; i++) {
		if (!e[i].is_switch)
			continue;
		e[i].cs.id = rnd() >> (rnd() % 64);
		assert_int_equal(prec_swbatch_add(&b, &e[i].cs, (int64_t)(rnd() >> (rnd() % 64))), 0);
	}
	size_t sz = prec_swbatch_pack(&b, out);
	Perfrec__Packet *p = perfrec__packet__unpack(NULL, sz, out);
	assert_non_null(p);
	/* the body: after [0x08 dt] and the key (0xA2 0x01) and length */
	const uint8_t *q = out;
	uint64_t v = 0;
	if (*q == 0x08) {
		q++;
		assert_int_equal(prec_varint_get(&q, out + sz, &v), 0);
	}
	assert_true(q[0] == 0xA2 && q[1] == 0x01);
	q += 2;
	assert_int_equal(prec_varint_get(&q, out + sz, &v), 0);
	assert_int_equal((size_t)(q - out) + v, sz);
	assert_int_equal(decode_vs_expand(q, (size_t)v, p->dt, &rows), 0);
	assert_int_equal(rows, b.n);
	assert_int_equal(decode_vs_expand(q, (size_t)v, p->dt + 1, &rows), PREC_E_DECODE);
	perfrec__packet__free_unpacked(p, NULL);
	prec_swbatch_release(&b);

	/* one key (id 2^64 - 1: ten bytes), one task, two rows */
	uint8_t plain[] = { 0x0A, 0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,
			    0x12, 0x01, 0x00, 0x1A, 0x01, 0x01, 0x22, 0x01, 0x05,
			    0x2A, 0x01, 0x05, 0x32, 0x02, 0x06, 0x08, 0x3A, 0x02, 0x00, 0x00,
			    0x42, 0x02, 0x00, 0x00, 0x4A, 0x02, 0x00, 0x00 };
	assert_int_equal(decode_vs_expand(plain, sizeof(plain), 7, &rows), 0);
	assert_int_equal(rows, 2);
	/* a column in two fields: protobuf-c joins them */
	uint8_t split[] = { 0x0A, 0x01, 0x07, 0x12, 0x01, 0x00, 0x1A, 0x01, 0x01,
			    0x22, 0x01, 0x05, 0x2A, 0x01, 0x05, 0x32, 0x01, 0x06, 0x32, 0x01, 0x08,
			    0x3A, 0x02, 0x00, 0x00, 0x42, 0x02, 0x00, 0x00, 0x4A, 0x02, 0x00, 0x00 };
	assert_int_equal(decode_vs_expand(split, sizeof(split), 7, &rows), 1);
	assert_int_equal(rows, 2);
	/* an index of six bytes (protobuf-c's to truncate or refuse) */
	uint8_t longv[] = { 0x0A, 0x01, 0x07, 0x12, 0x01, 0x00, 0x1A, 0x01, 0x01,
			    0x22, 0x01, 0x05, 0x2A, 0x01, 0x05, 0x32, 0x02, 0x06, 0x08,
			    0x3A, 0x02, 0x00, 0x00, 0x42, 0x02, 0x00, 0x00,
			    0x4A, 0x07, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00 };
	assert_int_equal(decode_vs_expand(longv, sizeof(longv), 7, &rows), 1);
	/* an unknown field, an unpacked value */
	uint8_t unknown[sizeof(plain) + 2];
	memcpy(unknown, plain, sizeof(plain));
	unknown[sizeof(plain)] = 0x50;
	unknown[sizeof(plain) + 1] = 0x01;
	assert_int_equal(decode_vs_expand(unknown, sizeof(unknown), 7, &rows), 1);
	assert_int_equal(rows, 2);
	uint8_t unpacked[] = { 0x08, 0x07, 0x12, 0x01, 0x00, 0x1A, 0x01, 0x01 };
	assert_int_equal(decode_vs_expand(unpacked, sizeof(unpacked), 0, &rows), 1);
	/* a varint cut by its column's end; a row short of a column */
	plain[sizeof(plain) - 1] = 0x80;
	assert_int_equal(decode_vs_expand(plain, sizeof(plain), 7, &rows), 1);
	plain[sizeof(plain) - 1] = 0x00;
	plain[sizeof(plain) - 2] = 0x80;   /* other: one value of two bytes */
	assert_int_equal(decode_vs_expand(plain, sizeof(plain), 7, &rows), PREC_E_DECODE);
	free(out);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_default),
		cmocka_unit_test(test_roundtrip_small_frames),
		cmocka_unit_test(test_roundtrip_rows),
		cmocka_unit_test(test_short_runs),
		cmocka_unit_test(test_row_bytes),
		cmocka_unit_test(test_protobuf_bytes),
		cmocka_unit_test(test_damage),
		cmocka_unit_test(test_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
