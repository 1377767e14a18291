/*
 * test_kinds.c - the packet-kind filter (prec_frame_set_kinds(),
 * prec_reader_set_kinds()): skipped kinds are never returned, returned
 * packets have the times and contents of the unfiltered pass, iids still
 * resolve (InternedData is always applied), counts are unchanged, and odd
 * packet bytes are filtered after protobuf-c decides what they are.
 */
#include <zstd.h>

#include "fmt_helpers.h"

#define NPKT 6000

/* One returned packet, as the test compares it. */
struct seen {
	int kind;
	uint64_t time;
	uint64_t key;      /* a field identifying the packet */
	uint64_t check;    /* hash of what its iids resolve to */
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	if (!s)
		return 7;
	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

/* A mixed trace like a --switch-events recording: mostly switches, then
 * samples with callchains, tasks with comms, mmaps with file names, a few
 * losses, throttles and group snapshots; times go backwards now and then. */
static unsigned char *build_mix(size_t frame_size, size_t *len)
{
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w;
	unsigned char *buf;
	uint64_t t = 5000;

	o.frame_size = frame_size;
	w = prec_writer_new(sink, &o);
	assert_non_null(w);
	for (unsigned i = 0; i < NPKT; i++) {
		Perfrec__Packet pkt = PERFREC__PACKET__INIT;
		Perfrec__ContextSwitch cs = PERFREC__CONTEXT_SWITCH__INIT;
		Perfrec__Sample s = PERFREC__SAMPLE__INIT;
		Perfrec__TaskEvent te = PERFREC__TASK_EVENT__INIT;
		Perfrec__Mmap mm = PERFREC__MMAP__INIT;
		Perfrec__Loss lo = PERFREC__LOSS__INIT;
		Perfrec__Throttle th = PERFREC__THROTTLE__INIT;
		Perfrec__GroupSnapshot gs = PERFREC__GROUP_SNAPSHOT__INIT;
		Perfrec__GroupRead gr = PERFREC__GROUP_READ__INIT;
		uint64_t ids[2] = { 11, 12 }, vals[2] = { i, 2 * (uint64_t)i };
		uint32_t st = 1 + i % 3;
		unsigned r = (i * 2654435761u) >> 24;   /* 0..255, spread */
		char name[32];

		t += (i % 97 == 5) ? (uint64_t)-300 : 100 + i % 13;
		if (r < 180) {
			cs.cpu = st - 1;
			cs.pid = cs.tid = 100 + i % 7;
			cs.out = i & 1;
			cs.preempt = (i & 3) == 1;
			cs.cpu_wide = 1;
			cs.other_pid = cs.other_tid = i;
			pkt.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
			pkt.context_switch = &cs;
		} else if (r < 230) {
			uint64_t ips[8];
			size_t d = 3 + i % 5;
			for (size_t j = 0; j < d; j++)
				ips[j] = 0xffffffff81000000ull + i % 29 * 64 + j;
			s.callchain = prec_writer_intern_callchain(w, st, ips, d);
			s.pid = s.tid = 100 + i % 7;
			s.period = i;
			pkt.data_case = PERFREC__PACKET__DATA_SAMPLE;
			pkt.sample = &s;
		} else if (r < 240) {
			snprintf(name, sizeof(name), "comm-%u", i % 11);
			te.kind = i % 4;
			te.pid = te.tid = i;
			te.comm = prec_writer_intern_string(w, st, name);
			pkt.data_case = PERFREC__PACKET__DATA_TASK;
			pkt.task = &te;
		} else if (r < 250) {
			snprintf(name, sizeof(name), "/usr/lib/lib%u.so", i % 13);
			mm.pid = mm.tid = i;
			mm.start = 0x7f0000000000ull + i * 4096ull;
			mm.len = 8192;
			mm.filename = prec_writer_intern_string(w, st, name);
			pkt.data_case = PERFREC__PACKET__DATA_MMAP;
			pkt.mmap = &mm;
		} else if (r < 252) {
			lo.kind = PERFREC__LOSS__KIND__KERNEL_LOST;
			lo.count = i;
			pkt.data_case = PERFREC__PACKET__DATA_LOSS;
			pkt.loss = &lo;
		} else if (r < 254) {
			th.throttled = 1;
			th.id = i;
			pkt.data_case = PERFREC__PACKET__DATA_THROTTLE;
			pkt.throttle = &th;
		} else {
			gr.n_ids = gr.n_values = 2;
			gr.ids = ids;
			gr.values = vals;
			gr.time_enabled = i;
			gs.group = 1;
			gs.cpu = (int32_t)st - 1;
			gs.pid = -1;
			gs.read = &gr;
			pkt.data_case = PERFREC__PACKET__DATA_GROUP;
			pkt.group = &gs;
		}
		/* every 10th packet has no time of its own: it inherits */
		assert_int_equal(prec_writer_append(w, st, &pkt, i % 10 == 3 ? 0 : t), 0);
	}
	assert_int_equal(prec_writer_close(w), 0);
	prec_writer_free(w);
	buf = fmt_copy_sink(sink, len);
	prec_sink_free(sink);
	return buf;
}

static struct seen describe(const struct prec_packet *p)
{
	const Perfrec__Packet *k = p->pkt;
	struct seen s = { (int)k->data_case, p->time, 0, 0 };
	size_t n;
	const uint64_t *ips;

	switch (k->data_case) {
	case PERFREC__PACKET__DATA_CONTEXT_SWITCH:
		s.key = k->context_switch->other_pid;
		break;
	case PERFREC__PACKET__DATA_SAMPLE:
		s.key = k->sample->period;
		ips = prec_frame_callchain(p->frame, k->sample->callchain, &n);
		assert_non_null(ips);
		for (size_t j = 0; j < n; j++)
			s.check = s.check * 31 + ips[j];
		break;
	case PERFREC__PACKET__DATA_TASK:
		s.key = k->task->pid;
		assert_non_null(prec_frame_string(p->frame, k->task->comm));
		s.check = hash_str(prec_frame_string(p->frame, k->task->comm));
		break;
	case PERFREC__PACKET__DATA_MMAP:
		s.key = k->mmap->pid;
		assert_non_null(prec_frame_string(p->frame, k->mmap->filename));
		s.check = hash_str(prec_frame_string(p->frame, k->mmap->filename));
		break;
	case PERFREC__PACKET__DATA_LOSS:
		s.key = k->loss->count;
		break;
	case PERFREC__PACKET__DATA_THROTTLE:
		s.key = k->throttle->id;
		break;
	case PERFREC__PACKET__DATA_GROUP:
		s.key = k->group->read->time_enabled;
		s.check = k->group->read->values[1];
		break;
	case PERFREC__PACKET__DATA_INTERNED:
		s.key = k->interned->n_strings * 1000 + k->interned->n_callchains;
		break;
	default:
		break;
	}
	return s;
}

/* Every packet of buf through the sequential reader with `mask`. */
static size_t read_all(const unsigned char *buf, size_t len, uint64_t mask,
		       struct seen *out, struct prec_reader_stats *st)
{
	struct prec_reader *r = prec_reader_open_mem(buf, len, NULL);
	struct prec_packet p;
	size_t n = 0;
	int ret;

	assert_non_null(r);
	if (mask != PREC_KINDS_ALL)
		prec_reader_set_kinds(r, mask);
	while ((ret = prec_reader_next_packet(r, &p)) > 0) {
		assert_true(n < 2 * NPKT);
		out[n++] = describe(&p);
	}
	assert_int_equal(ret, 0);
	prec_reader_stats(r, st);
	prec_reader_free(r);
	return n;
}

static void check_mask(const unsigned char *buf, size_t len, uint64_t mask,
		       const struct seen *all, size_t nall,
		       const struct prec_reader_stats *st_all)
{
	struct seen *got = calloc(2 * NPKT, sizeof(*got));
	struct prec_reader_stats st;
	size_t n, k = 0;

	assert_non_null(got);
	n = read_all(buf, len, mask, got, &st);
	for (size_t i = 0; i < nall; i++) {
		if (!(mask & PREC_KIND(all[i].kind)))
			continue;
		assert_true(k < n);
		assert_int_equal(got[k].kind, all[i].kind);
		assert_int_equal(got[k].time, all[i].time);
		assert_int_equal(got[k].key, all[i].key);
		assert_int_equal(got[k].check, all[i].check);
		k++;
	}
	assert_int_equal(k, n);
	assert_int_equal(st.packets, st_all->packets);
	assert_int_equal(st.unknown_packets, st_all->unknown_packets);
	assert_int_equal(st.frames, st_all->frames);
	free(got);
}

static void test_masks(void **state)
{
	size_t len, nall;
	unsigned char *buf = build_mix(4096, &len);
	struct seen *all = calloc(2 * NPKT, sizeof(*all));
	struct prec_reader_stats st;
	size_t kinds[20] = { 0 };
	(void)state;

	assert_non_null(all);
	nall = read_all(buf, len, PREC_KINDS_ALL, all, &st);
	for (size_t i = 0; i < nall; i++)
		kinds[all[i].kind]++;
	/* the mix has every kind the filter is tested with */
	assert_int_equal(nall - kinds[PERFREC__PACKET__DATA_INTERNED], NPKT);
	assert_true(kinds[PERFREC__PACKET__DATA_CONTEXT_SWITCH] > NPKT / 2);
	assert_true(kinds[PERFREC__PACKET__DATA_SAMPLE] > 500);
	assert_true(kinds[PERFREC__PACKET__DATA_TASK] > 50);
	assert_true(kinds[PERFREC__PACKET__DATA_MMAP] > 50);
	assert_true(kinds[PERFREC__PACKET__DATA_LOSS] > 0);
	assert_true(kinds[PERFREC__PACKET__DATA_THROTTLE] > 0);
	assert_true(kinds[PERFREC__PACKET__DATA_GROUP] > 0);
	assert_true(kinds[PERFREC__PACKET__DATA_INTERNED] > 10);

	const uint64_t masks[] = {
		0,
		PREC_KIND(PERFREC__PACKET__DATA_SAMPLE),
		PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH),
		PREC_KIND(PERFREC__PACKET__DATA_TASK) | PREC_KIND(PERFREC__PACKET__DATA_MMAP),
		PREC_KIND(PERFREC__PACKET__DATA_INTERNED),
		PREC_KIND(PERFREC__PACKET__DATA_SAMPLE) | PREC_KIND(PERFREC__PACKET__DATA_INTERNED),
		PREC_KIND(PERFREC__PACKET__DATA_LOSS) | PREC_KIND(PERFREC__PACKET__DATA_THROTTLE) |
			PREC_KIND(PERFREC__PACKET__DATA_GROUP),
		~PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH),
		PREC_KINDS_ALL,
	};
	for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++)
		check_mask(buf, len, masks[m], all, nall, &st);
	free(all);
	free(buf);
}

/* The mask belongs to the frame: it survives loads; set on a frame used
 * with prec_reader_load_frame() (the parallel readers' path). */
static void test_frame_mask(void **state)
{
	size_t len, nf;
	unsigned char *buf = build_mix(2048, &len);
	struct prec_reader *r = prec_reader_open_mem(buf, len, NULL);
	struct prec_frame *a = prec_frame_new(), *b = prec_frame_new();
	const struct prec_frame_info *fi;
	struct prec_packet p, q;
	uint64_t samples = 0;
	(void)state;

	assert_non_null(r);
	assert_non_null(a);
	assert_non_null(b);
	prec_frame_set_kinds(b, PREC_KIND(PERFREC__PACKET__DATA_SAMPLE));
	assert_int_equal(prec_reader_index(r, &fi, &nf), 0);
	assert_true(nf > 5);
	for (size_t i = 0; i < nf; i++) {
		assert_int_equal(prec_reader_load_frame(r, &fi[i], a), 0);
		assert_int_equal(prec_reader_load_frame(r, &fi[i], b), 0);
		while (prec_frame_next(a, &p) > 0) {
			if (p.pkt->data_case != PERFREC__PACKET__DATA_SAMPLE)
				continue;
			assert_int_equal(prec_frame_next(b, &q), 1);
			assert_int_equal(q.pkt->data_case, PERFREC__PACKET__DATA_SAMPLE);
			assert_int_equal(q.time, p.time);
			assert_int_equal(q.stream, p.stream);
			assert_int_equal(q.frame_offset, p.frame_offset);
			assert_int_equal(q.pkt->sample->period, p.pkt->sample->period);
			struct seen x = describe(&p), y = describe(&q);
			assert_int_equal(x.check, y.check);
			samples++;
		}
		assert_int_equal(prec_frame_next(b, &q), 0);
	}
	assert_true(samples > 500);
	/* PREC_KINDS_ALL turns the filter off again */
	prec_frame_set_kinds(b, PREC_KINDS_ALL);
	assert_int_equal(prec_reader_load_frame(r, &fi[0], b), 0);
	assert_int_equal(prec_frame_next(b, &q), 1);
	prec_frame_set_kinds(NULL, 0);   /* NULL is ignored */
	prec_reader_set_kinds(NULL, 0);
	prec_frame_free(a);
	prec_frame_free(b);
	prec_reader_free(r);
	free(buf);
}

/* ---- hand-made frames: odd packet bytes */

static size_t put_pkt(uint8_t *out, const uint8_t *pk, size_t n)
{
	out[0] = 0x0A;
	out[1] = (uint8_t)n;   /* all test packets are < 128 bytes */
	memcpy(out + 2, pk, n);
	return n + 2;
}

/* Loads raw packet bytes as a frame, filter `mask`; returns the number of
 * packets returned (times in *times), the final return code in *end. */
static size_t run_raw(const uint8_t *raw, size_t n, uint64_t mask,
		      uint64_t *times, int *kinds, int *end)
{
	size_t cap = ZSTD_compressBound(n), k = 0;
	void *z = malloc(cap);
	struct prec_frame *f = prec_frame_new();
	struct prec_packet p;
	size_t zn;
	int ret;

	assert_non_null(z);
	assert_non_null(f);
	zn = ZSTD_compress(z, cap, raw, n, 1);
	assert_false(ZSTD_isError(zn));
	prec_frame_set_kinds(f, mask);
	assert_int_equal(prec_frame_load(f, z, zn, 1 << 20), 0);
	while ((ret = prec_frame_next(f, &p)) > 0) {
		times[k] = p.time;
		kinds[k] = p.pkt->data_case;
		k++;
	}
	*end = ret;
	prec_frame_free(f);
	free(z);
	return k;
}

static void test_odd_bytes(void **state)
{
	/* dt=+100 switch; dt twice (protobuf-c: last wins) then a sample;
	 * a switch whose dt is a non-canonical varint; a packet with an
	 * unknown field and a task; a packet with only dt (unknown kind);
	 * dt=-50 then two oneof fields (switch, then sample: last wins) */
	static const uint8_t p1[] = { 0x08, 0xC8, 0x01, 0x2A, 0x02, 0x10, 0x01 };
	static const uint8_t p2[] = { 0x08, 0x02, 0x08, 0x04, 0x22, 0x02, 0x10, 0x01 };
	static const uint8_t p3[] = { 0x08, 0x94, 0x80, 0x00, 0x2A, 0x00 };
	static const uint8_t p4[] = { 0xF8, 0x07, 0x05, 0x32, 0x02, 0x10, 0x09 };
	static const uint8_t p5[] = { 0x08, 0x06 };
	static const uint8_t p6[] = { 0x08, 0x63, 0x2A, 0x00, 0x22, 0x02, 0x18, 0x03 };
	uint8_t raw[256];
	uint64_t ta[16], tb[16];
	int ka[16], kb[16], ea, eb;
	size_t n = 0, na, nb;
	(void)state;

	n += put_pkt(raw + n, p1, sizeof(p1));
	n += put_pkt(raw + n, p2, sizeof(p2));
	n += put_pkt(raw + n, p3, sizeof(p3));
	n += put_pkt(raw + n, p4, sizeof(p4));
	n += put_pkt(raw + n, p5, sizeof(p5));
	n += put_pkt(raw + n, p6, sizeof(p6));

	na = run_raw(raw, n, PREC_KINDS_ALL, ta, ka, &ea);
	assert_int_equal(ea, 0);
	assert_int_equal(na, 5);   /* p5 has no kind: skipped, counted unknown */
	assert_int_equal(ta[0], 100);
	assert_int_equal(ka[1], PERFREC__PACKET__DATA_SAMPLE);
	assert_int_equal(ta[1], 102);   /* the second dt (2) wins */
	assert_int_equal(ta[2], 112);
	assert_int_equal(ka[3], PERFREC__PACKET__DATA_TASK);
	assert_int_equal(ka[4], PERFREC__PACKET__DATA_SAMPLE);

	/* only samples: the same times as the unfiltered pass */
	nb = run_raw(raw, n, PREC_KIND(PERFREC__PACKET__DATA_SAMPLE), tb, kb, &eb);
	assert_int_equal(eb, 0);
	assert_int_equal(nb, 2);
	assert_int_equal(kb[0], PERFREC__PACKET__DATA_SAMPLE);
	assert_int_equal(tb[0], ta[1]);
	assert_int_equal(kb[1], PERFREC__PACKET__DATA_SAMPLE);
	assert_int_equal(tb[1], ta[4]);

	/* only switches: p6 is a sample (its last oneof field) */
	nb = run_raw(raw, n, PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH), tb, kb, &eb);
	assert_int_equal(eb, 0);
	assert_int_equal(nb, 2);
	assert_int_equal(tb[0], ta[0]);
	assert_int_equal(tb[1], ta[2]);

	/* a damaged sample body: the unfiltered pass stops there, a pass that
	 * skips samples does not look inside it (documented in reader.h) */
	static const uint8_t bad[] = { 0x08, 0x02, 0x22, 0x02, 0x10, 0x80 };
	n = 0;
	n += put_pkt(raw + n, p1, sizeof(p1));
	n += put_pkt(raw + n, bad, sizeof(bad));
	n += put_pkt(raw + n, p1, sizeof(p1));
	na = run_raw(raw, n, PREC_KINDS_ALL, ta, ka, &ea);
	assert_int_equal(na, 1);
	assert_int_equal(ea, PREC_E_DECODE);
	nb = run_raw(raw, n, PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH), tb, kb, &eb);
	assert_int_equal(eb, 0);
	assert_int_equal(nb, 2);
	assert_int_equal(tb[1], 201);   /* 100, +1 from the skipped sample, +100 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_masks),
		cmocka_unit_test(test_frame_mask),
		cmocka_unit_test(test_odd_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
