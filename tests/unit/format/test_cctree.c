/*
 * test_cctree.c - callchains through the writer's tree (format/cctree.c)
 * and back through a reader: every sample and off-CPU packet gets exactly
 * the ips it was written with, whatever their shape (markers, shared
 * callers, the callers form, empty, deep), across frame cuts; callers are
 * stored once per frame; ids held across a cut stay valid; an id from an
 * earlier frame is refused.
 */
#include <zstd.h>

#define FMT_NO_BUILDER
#include "fmt_helpers.h"

#include "format/layout.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#define KERNEL ((uint64_t)-128)
#define USER ((uint64_t)-512)

/* Functions of a made-up program: each has a caller (lower index, -1 for
 * main) and an address; a stack is a function and its callers. */
#define NFUNC 300
struct prog {
	int caller[NFUNC];
	uint64_t addr[NFUNC];
};

static void prog_init(struct prog *p)
{
	for (int i = 0; i < NFUNC; i++) {
		p->caller[i] = i ? (int)(rnd() % (uint64_t)i) : -1;
		p->addr[i] = (i % 3 ? 0x400000 : 0x7f1234000000ull) + rnd() % 0x100000;
	}
}

/* A callchain as the kernel writes it for a sample at function f: maybe a
 * kernel part, the user part from f outwards; sometimes junk, sometimes no
 * marker at all. Returns n; *ip is the sample's ip and *misc its cpumode. */
static size_t make_chain(const struct prog *p, uint64_t *ips, uint64_t *ip,
			 uint32_t *misc)
{
	int f = (int)(rnd() % NFUNC);
	size_t n = 0;
	uint64_t leaf = p->addr[f] + rnd() % 64;
	int shape = (int)(rnd() % 10);

	if (shape == 0) {   /* no markers (an odd writer, or BPF-less tests) */
		for (int g = f; g >= 0 && n < 200; g = p->caller[g])
			ips[n++] = p->addr[g];
		*ip = ips[0];
		*misc = 0;
		return n;
	}
	if (shape <= 3) {   /* a kernel sample: the kernel part first */
		ips[n++] = KERNEL;
		*ip = 0xffffffff81000000ull + rnd() % 0x1000;
		ips[n++] = *ip;
		for (int k = (int)(rnd() % 6); k > 0; k--)
			ips[n++] = 0xffffffff81100000ull + (uint64_t)k * 0x40;
		*misc = 1;
	} else {
		*ip = leaf;
		*misc = 2;
	}
	ips[n++] = USER;
	if (*misc == 2)
		ips[n++] = leaf;
	for (int g = p->caller[f]; g >= 0 && n < 200; g = p->caller[g])
		ips[n++] = p->addr[g];
	if (shape == 9)
		ips[n++] = rnd();   /* junk of a frame-pointer-less caller */
	if (shape == 8 && *misc == 2)
		*ip += 4;           /* a sample ip that is not the chain's leaf */
	return n;
}

struct expect {
	uint64_t ips[256];
	size_t n;
	int none;
};

/* Writes `count` samples and off-CPU packets over 3 streams with frames
 * of frame_size, then reads every one back and compares. */
static void roundtrip(size_t frame_size, unsigned count)
{
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
	struct prec_sink *sink = prec_sink_mem_new();
	struct expect *ex = calloc(count, sizeof(*ex));
	struct prog prog;
	struct prec_writer *w;

	assert_non_null(ex);
	prog_init(&prog);
	o.frame_size = frame_size;
	w = prec_writer_new(sink, &o);
	assert_non_null(w);
	for (unsigned i = 0; i < count; i++) {
		Perfrec__Packet pkt;
		Perfrec__Sample s;
		Perfrec__OffCpu oc = PERFREC__OFF_CPU__INIT;
		uint32_t st = 1 + i % 3;
		uint64_t ip;
		uint32_t misc;
		struct expect *e = &ex[i];

		e->n = make_chain(&prog, e->ips, &ip, &misc);
		if (rnd() % 50 == 0)
			e->n = 0;   /* an empty callchain is a callchain too */
		uint64_t cc = prec_writer_intern_callchain(w, st, e->ips, e->n);
		assert_true(cc != 0);
		if (i % 7 == 3) {
			/* an off-CPU block with the same stack */
			oc.tid = i;
			oc.callchain = cc;
			perfrec__packet__init(&pkt);
			pkt.data_case = PERFREC__PACKET__DATA_OFF_CPU;
			pkt.off_cpu = &oc;
		} else {
			fmt_sample(&pkt, &s, st - 1, i, ip, cc);
			s.misc = misc;
			s.tid = i;
		}
		assert_int_equal(prec_writer_append(w, st, &pkt, 1000 + (uint64_t)i), 0);
		/* the packet is the caller's again, as it was */
		if (pkt.data_case == PERFREC__PACKET__DATA_SAMPLE) {
			assert_int_equal(s.callchain, cc);
			assert_false(s.callchain_callers);
		} else {
			assert_int_equal(oc.callchain, cc);
		}
		if (i % 101 == 0)
			assert_int_equal(prec_writer_flush_due(w, 1000 + (uint64_t)i + 2000000000ull), 0);
	}
	assert_int_equal(prec_writer_close(w), 0);

	size_t len;
	const void *buf = prec_sink_mem_data(sink, &len);
	struct prec_reader *r = prec_reader_open_mem(buf, len, NULL);
	struct prec_packet p;
	unsigned got = 0;
	int ret;
	assert_non_null(r);
	while ((ret = prec_reader_next_packet(r, &p)) > 0) {
		const Perfrec__Packet *k = p.pkt;
		uint64_t iid, tid;
		if (k->data_case == PERFREC__PACKET__DATA_SAMPLE) {
			assert_false(k->sample->callchain_callers);   /* readers rebuild */
			iid = k->sample->callchain;
			tid = k->sample->tid;
		} else if (k->data_case == PERFREC__PACKET__DATA_OFF_CPU) {
			iid = k->off_cpu->callchain;
			tid = k->off_cpu->tid;
		} else {
			continue;
		}
		assert_true(tid < count);
		size_t n = 99999;
		const uint64_t *ips = prec_frame_callchain(p.frame, iid, &n);
		assert_non_null(ips);
		assert_int_equal(n, ex[tid].n);
		if (n)
			assert_memory_equal(ips, ex[tid].ips, n * sizeof(*ips));
		/* a second lookup is the same array */
		assert_ptr_equal(prec_frame_callchain(p.frame, iid, &n), ips);
		got++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(got, count);
	prec_reader_free(r);
	prec_writer_free(w);
	prec_sink_free(sink);
	free(ex);
}

static void test_roundtrip_small_frames(void **state)
{
	(void)state;
	roundtrip(3000, 20000);
}

static void test_roundtrip_large_frames(void **state)
{
	(void)state;
	roundtrip(PREC_DEFAULT_FRAME_SIZE, 50000);
}

/* Writes 2000 samples at different ips under one 62-deep stack in one
 * frame, in cpumode misc; the writer's stats in *st. */
static void shared_callers(uint32_t misc, struct prec_writer_stats *st)
{
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
	struct prec_writer *w;
	uint64_t ips[64];

	o.frame_size = 16u << 20;   /* one frame */
	w = prec_writer_new(sink, &o);
	ips[0] = USER;
	for (int i = 2; i < 64; i++)
		ips[i] = 0x7f0000000000ull + (uint64_t)i * 0x1234;
	for (unsigned i = 0; i < 2000; i++) {
		Perfrec__Packet pkt;
		Perfrec__Sample s;
		ips[1] = 0x7f0000100000ull + i * 16;
		uint64_t cc = prec_writer_intern_callchain(w, 1, ips, 64);
		fmt_sample(&pkt, &s, 0, 7, ips[1], cc);
		s.misc = misc;
		assert_int_equal(prec_writer_append(w, 1, &pkt, 1000 + i), 0);
	}
	assert_int_equal(prec_writer_flush(w), 0);
	prec_writer_stats(w, st);
	prec_writer_free(w);
	prec_sink_free(sink);
}

/* Samples at many ips under one deep stack store that stack once per
 * frame: far fewer bytes than as whole chains, and in the callers form
 * the samples add no node at all. */
static void test_shared_callers(void **state)
{
	struct prec_writer_stats st;
	(void)state;

	/* user mode: one InternedData (62 nodes) and 2000 samples of 28
	 * bytes; as whole chains each sample would add 64 ips of 3+ bytes */
	shared_callers(2, &st);
	assert_int_equal(st.packets, 2001);
	assert_true(st.bytes_raw < 2000 * 30 + 62 * 8);
	/* kernel mode (the sample ip is not the chain's): a leaf and a
	 * marker node each, still sharing the callers */
	shared_callers(1, &st);
	assert_int_equal(st.packets, 4000);
	assert_true(st.bytes_raw < 2000 * 30 + 2000 * 24 + 62 * 8);
}

/* An id interned before a cut and appended after it still names its
 * chain (the tree is written again in the new frame); an id from a frame
 * already cut and appended is refused. */
static void test_cut_between(void **state)
{
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	uint64_t a[3] = { USER, 0x401000, 0x400500 }, b[2] = { 0x1000, 0x2000 };
	Perfrec__Packet pkt;
	Perfrec__Sample s;
	(void)state;

	uint64_t ca = prec_writer_intern_callchain(w, 1, a, 3);
	uint64_t cb = prec_writer_intern_callchain(w, 1, b, 2);
	fmt_sample(&pkt, &s, 0, 1, 0x401000, ca);
	s.misc = 2;
	assert_int_equal(prec_writer_append(w, 1, &pkt, 10), 0);
	/* b interned in the first frame, the frame cut, b used in the next */
	assert_int_equal(prec_writer_intern_callchain(w, 1, b, 2), cb);
	assert_int_equal(prec_writer_flush(w), 0);
	fmt_sample(&pkt, &s, 0, 2, 0x1000, cb);
	assert_int_equal(prec_writer_append(w, 1, &pkt, 20), 0);
	/* a's handle, from the first frame, after a cut that followed an
	 * append: refused, and the writer goes on */
	assert_int_equal(prec_writer_flush(w), 0);
	fmt_sample(&pkt, &s, 0, 3, 0x401000, ca);
	s.misc = 2;
	int ret = prec_writer_append(w, 1, &pkt, 30);
	if (ca & (1ull << 63))
		assert_int_equal(ret, -EINVAL);
	assert_int_equal(prec_writer_error(w), 0);
	assert_int_equal(prec_writer_close(w), 0);

	size_t len;
	const void *buf = prec_sink_mem_data(sink, &len);
	struct prec_reader *r = prec_reader_open_mem(buf, len, NULL);
	struct prec_packet p;
	int n = 0;
	while (prec_reader_next_packet(r, &p) > 0) {
		if (p.pkt->data_case != PERFREC__PACKET__DATA_SAMPLE)
			continue;
		size_t k;
		const uint64_t *ips = prec_frame_callchain(p.frame, p.pkt->sample->callchain, &k);
		assert_non_null(ips);
		if (p.pkt->sample->pid == 1) {
			assert_int_equal(k, 3);
			assert_memory_equal(ips, a, sizeof(a));
		} else {
			assert_int_equal(p.pkt->sample->pid, 2);
			assert_int_equal(k, 2);
			assert_memory_equal(ips, b, sizeof(b));
		}
		n++;
	}
	assert_int_equal(n, 2);
	prec_reader_free(r);
	prec_writer_free(w);
	prec_sink_free(sink);
}

/* The bytes say what the SPEC says: a sample in the callers form names
 * its callers' node, the nodes come as one run with an implicit iid. */
static void test_wire_form(void **state)
{
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	uint64_t a[4] = { USER, 0x401000, 0x400500, 0x400100 };
	Perfrec__Packet pkt;
	Perfrec__Sample s;
	(void)state;

	fmt_sample(&pkt, &s, 0, 1, 0x401000, prec_writer_intern_callchain(w, 1, a, 4));
	s.misc = 2;
	assert_int_equal(prec_writer_append(w, 1, &pkt, 10), 0);
	assert_int_equal(prec_writer_close(w), 0);
	size_t len;
	const uint8_t *buf = prec_sink_mem_data(sink, &len);
	/* the header, the frame's info, then the one data frame (up to
	 * the index) */
	const struct prec_frame_info *fi;
	size_t nf;
	struct prec_reader *rd = prec_reader_open_mem(buf, len, NULL);
	assert_non_null(rd);
	assert_int_equal(prec_reader_index(rd, &fi, &nf), 0);
	assert_int_equal(nf, 1);
	const uint8_t *z = buf + fi[0].data_offset;
	uint8_t raw[256];
	size_t rl = ZSTD_decompress(raw, sizeof(raw), z, fi[0].compressed_size);
	prec_reader_free(rd);
	assert_false(ZSTD_isError(rl));
	/* InternedData { callchain_nodes { iid, parent absent (implicit, a
	 * root), addrs [zz(0x400100), zz(0x400500 - 0x400100)] } }, then the
	 * sample naming node 2 with callchain_callers */
	Perfrec__Trace *t = perfrec__trace__unpack(NULL, rl, raw);
	assert_non_null(t);
	assert_int_equal(t->n_packet, 2);
	const Perfrec__InternedData *id = t->packet[0]->interned;
	assert_non_null(id);
	assert_int_equal(id->n_callchain_nodes, 1);
	assert_int_equal(id->callchain_nodes[0]->iid, 0);
	assert_int_equal(id->callchain_nodes[0]->parent, 0);
	assert_int_equal(id->callchain_nodes[0]->n_addrs, 2);
	assert_int_equal(id->callchain_nodes[0]->addrs[0], 0x800200);
	assert_int_equal(id->callchain_nodes[0]->addrs[1], 0x800);
	const Perfrec__Sample *ws = t->packet[1]->sample;
	assert_non_null(ws);
	assert_true(ws->callchain_callers);
	assert_int_equal(ws->callchain, 2);   /* the node of 0x400500 */
	assert_int_equal(ws->ip, 0x401000);
	perfrec__trace__free_unpacked(t, NULL);
	prec_writer_free(w);
	prec_sink_free(sink);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_small_frames),
		cmocka_unit_test(test_roundtrip_large_frames),
		cmocka_unit_test(test_shared_callers),
		cmocka_unit_test(test_cut_between),
		cmocka_unit_test(test_wire_form),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
