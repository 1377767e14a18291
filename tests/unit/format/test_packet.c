/*
 * test_packet.c - the hand-written encoders and decoders (Sample with
 * user registers and stack,
 * ContextSwitch, TaskEvent, Mmap, Loss, Throttle, GroupSnapshot/GroupRead,
 * InternedData)
 * (format/packet.c) agree with protobuf-c byte for byte, and on any
 * mutated input they either give up or decode exactly what protobuf-c
 * decodes.
 */
#include "fmt_helpers.h"

#include "format/arena.h"
#include "format/packet.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A value of random magnitude: zero often, else 1 to 64 bits. */
static uint64_t rval(void)
{
	unsigned bits = (unsigned)(rnd() % 66);
	if (bits == 0 || bits == 65)
		return 0;
	return rnd() >> (64 - bits);
}

static size_t pack_pc(const Perfrec__Packet *pkt, uint8_t **out)
{
	size_t n = protobuf_c_message_get_packed_size(&pkt->base);
	*out = malloc(n + 1);
	assert_int_equal(protobuf_c_message_pack(&pkt->base, *out), n);
	return n;
}

/* The one-pass encoder of small kinds writes 0x0A, the length and
 * protobuf-c's bytes ref[0..n), or declines: only raw/read samples and the
 * kinds without a small bound may decline. Returns 1 when it wrote. */
static int check_small(const Perfrec__Packet *pkt, const uint8_t *ref, size_t n)
{
	uint8_t out[PREC_FAST_SMALL_MAX + 64];
	size_t k;

	memset(out, 0xAA, sizeof(out));
	k = prec_packet_fast_pack_small(pkt, out);
	if (!k) {
		assert_true(pkt->data_case != PERFREC__PACKET__DATA_CONTEXT_SWITCH &&
			    pkt->data_case != PERFREC__PACKET__DATA_TASK &&
			    pkt->data_case != PERFREC__PACKET__DATA_THROTTLE);
		if (pkt->data_case == PERFREC__PACKET__DATA_SAMPLE)
			assert_true(pkt->sample->raw.len || pkt->sample->read ||
				    pkt->sample->regs_abi || pkt->sample->regs_mask ||
				    pkt->sample->n_regs || pkt->sample->stack.len ||
				    pkt->sample->stack_dyn_size);
		return 0;
	}
	assert_true(n < 128);
	assert_int_equal(k, n + 2);
	assert_true(k <= PREC_FAST_SMALL_MAX);
	assert_int_equal(out[0], 0x0A);
	assert_int_equal(out[1], n);
	assert_memory_equal(out + 2, ref, n);
	assert_int_equal(out[k], 0xAA);   /* nothing written past the end */
	return 1;
}

/* Fast decode of buf must equal protobuf-c's decode (delta callchains
 * normalized, as frame.c does), or give up. Returns 1 when the fast path
 * decoded it. */
static int same_decode(const uint8_t *buf, size_t len, struct prec_arena *a)
{
	struct prec_arena b;
	Perfrec__Packet *f = prec_packet_fast_unpack(buf, len, a);
	Perfrec__Packet *s;

	prec_arena_init(&b, 0);
	s = (Perfrec__Packet *)protobuf_c_message_unpack(&perfrec__packet__descriptor,
							 &b.pc, len, buf);
	if (!f) {
		prec_arena_release(&b);
		return 0;
	}
	assert_non_null(s);   /* fast never accepts what protobuf-c refuses */
	assert_int_equal(prec_packet_normalize(s, &b), 0);
	uint8_t *bf, *bs;
	size_t nf = pack_pc(f, &bf), ns = pack_pc(s, &bs);
	assert_int_equal(nf, ns);
	assert_memory_equal(bf, bs, nf);
	assert_int_equal(f->dt, s->dt);
	assert_int_equal(f->data_case, s->data_case);
	if (f->data_case == PERFREC__PACKET__DATA_INTERNED) {
		for (size_t i = 0; i < f->interned->n_strings; i++)
			assert_string_equal(f->interned->strings[i]->str,
					    s->interned->strings[i]->str);
		for (size_t i = 0; i < f->interned->n_callchains; i++)
			assert_int_equal(f->interned->callchains[i]->n_ips_delta, 0);
	}
	free(bf);
	free(bs);
	prec_arena_release(&b);
	return 1;
}

/* Mutations of the n bytes at ref - a byte flipped, the bytes truncated,
 * two random bytes appended - each decoded by both paths (same_decode()
 * compares them; a mutation may fail to decode). */
static void check_mutations(const uint8_t *ref, size_t n, int rounds,
			    struct prec_arena *a)
{
	uint8_t *mut = malloc(n + 2);
	assert_non_null(mut);
	for (int m = 0; m < rounds && n; m++) {
		size_t ml = n;
		memcpy(mut, ref, n);
		switch (rnd() % 3) {
		case 0: mut[rnd() % n] ^= (uint8_t)(1 + rnd() % 255); break;
		case 1: ml = rnd() % n; break;
		default:
			mut[ml++] = (uint8_t)rnd();
			mut[ml++] = (uint8_t)rnd();
			break;
		}
		same_decode(mut, ml, a);
	}
	free(mut);
}

static void test_sample_encode_decode(void **state)
{
	struct prec_arena a;
	(void)state;

	assert_true(prec_packet_fast_ok());
	prec_arena_init(&a, 0);
	for (int it = 0; it < 20000; it++) {
		Perfrec__Packet pkt;
		Perfrec__Sample s;
		uint8_t raw[40], stack[300];
		uint64_t regs[24];
		fmt_sample(&pkt, &s, (uint32_t)rval(), (uint32_t)rval(), rval(), rval());
		pkt.dt = (int64_t)rval() * ((rnd() & 1) ? -1 : 1);
		s.id = rval();
		s.tid = (uint32_t)rval();
		s.period = rval();
		s.addr = rval();
		s.misc = (uint32_t)rval();
		s.stream_id = rval();
		s.callchain_callers = rnd() % 3 == 0;   /* 1.1, field 18 */
		s.callchain_cut = rnd() % 3 == 0 ? (uint32_t)rval() : 0;   /* field 19 */
		if (rnd() % 3 == 0) {
			s.raw.len = rnd() % sizeof(raw);
			for (size_t i = 0; i < s.raw.len; i++)
				raw[i] = (uint8_t)rnd();
			s.raw.data = raw;
		}
		if (rnd() % 3 == 0) {   /* --call-graph dwarf: user regs + stack */
			s.regs_abi = (uint32_t)(rnd() % 3);
			s.regs_mask = rval();
			s.n_regs = rnd() % 24;
			for (size_t i = 0; i < s.n_regs; i++)
				regs[i] = rval();
			s.regs = s.n_regs ? regs : NULL;
			s.stack.len = rnd() % 4 ? rnd() % sizeof(stack) : 0;
			for (size_t i = 0; i < s.stack.len; i++)
				stack[i] = (uint8_t)rnd();
			s.stack.data = stack;
			s.stack_dyn_size = rval();
		}
		uint8_t *ref, fast[1024];
		size_t n = pack_pc(&pkt, &ref);
		assert_int_equal(prec_packet_fast_size(&pkt), n);
		assert_int_equal(prec_packet_fast_pack(&pkt, fast), n);
		assert_memory_equal(fast, ref, n);
		assert_true(same_decode(ref, n, &a));
		check_small(&pkt, ref, n);
		check_mutations(ref, n, 4, &a);
		free(ref);
		prec_arena_reset(&a);
	}
	prec_arena_release(&a);
}

/* Packets the fast encoder leaves to protobuf-c. */
static void test_sample_fallbacks(void **state)
{
	Perfrec__Packet pkt;
	Perfrec__Sample s;
	Perfrec__GroupRead gr = PERFREC__GROUP_READ__INIT;
	Perfrec__Note note = PERFREC__NOTE__INIT;
	struct prec_arena a;
	(void)state;

	prec_arena_init(&a, 0);
	perfrec__packet__init(&pkt);
	pkt.data_case = PERFREC__PACKET__DATA_NOTE;
	pkt.note = &note;
	assert_int_equal(prec_packet_fast_size(&pkt), 0);
	/* a oneof case without its message is protobuf-c's business */
	pkt.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
	pkt.note = NULL;
	assert_int_equal(prec_packet_fast_size(&pkt), 0);
	/* an array with a count but no memory */
	fmt_sample(&pkt, &s, 1, 2, 3, 4);
	s.read = &gr;
	gr.n_values = 1;
	assert_int_equal(prec_packet_fast_size(&pkt), 0);
	gr.n_values = 0;
	/* a sample with an (empty, then filled) read: fast both ways */
	uint8_t *b, fb[64];
	size_t n = pack_pc(&pkt, &b);
	assert_int_equal(prec_packet_fast_size(&pkt), n);
	assert_int_equal(prec_packet_fast_pack(&pkt, fb), n);
	assert_memory_equal(fb, b, n);
	assert_int_equal(same_decode(b, n, &a), 1);
	free(b);
	gr.time_enabled = 5;
	n = pack_pc(&pkt, &b);
	assert_int_equal(same_decode(b, n, &a), 1);
	free(b);
	/* an unknown Sample field (number 20): protobuf-c keeps it */
	uint8_t unk[] = { 0x22, 0x04, 0x08, 0x01, 0xA0, 0x01 };   /* truncated */
	assert_null(prec_packet_fast_unpack(unk, sizeof(unk), &a));
	uint8_t unk2[] = { 0x22, 0x05, 0x08, 0x01, 0xA0, 0x01, 0x07 };
	assert_null(prec_packet_fast_unpack(unk2, sizeof(unk2), &a));
	assert_int_equal(same_decode(unk2, sizeof(unk2), &a), 0);
	/* ... and so the encoder leaves such a packet to protobuf-c */
	Perfrec__Packet *u = (Perfrec__Packet *)protobuf_c_message_unpack(
		&perfrec__packet__descriptor, &a.pc, sizeof(unk2), unk2);
	assert_non_null(u);
	assert_int_equal(u->sample->base.n_unknown_fields, 1);
	assert_int_equal(prec_packet_fast_size(u), 0);
	/* the same for the other fast kinds: an unknown field 20 in a switch,
	 * and an unknown Packet field 30 next to a switch */
	uint8_t unk3[] = { 0x2A, 0x05, 0x08, 0x01, 0xA0, 0x01, 0x07 };
	assert_null(prec_packet_fast_unpack(unk3, sizeof(unk3), &a));
	u = (Perfrec__Packet *)protobuf_c_message_unpack(
		&perfrec__packet__descriptor, &a.pc, sizeof(unk3), unk3);
	assert_non_null(u);
	assert_int_equal(prec_packet_fast_size(u), 0);
	uint8_t unk4[] = { 0x2A, 0x02, 0x08, 0x01, 0xF0, 0x01, 0x07 };
	assert_null(prec_packet_fast_unpack(unk4, sizeof(unk4), &a));
	u = (Perfrec__Packet *)protobuf_c_message_unpack(
		&perfrec__packet__descriptor, &a.pc, sizeof(unk4), unk4);
	assert_non_null(u);
	assert_int_equal(u->base.n_unknown_fields, 1);
	assert_int_equal(prec_packet_fast_size(u), 0);
	/* a read given twice (protobuf-c merges them) and a packed array given
	 * twice (protobuf-c appends): left to protobuf-c */
	uint8_t twice[] = { 0x52, 0x08, 0x22, 0x02, 0x08, 0x01, 0x22, 0x02, 0x10, 0x02 };
	assert_null(prec_packet_fast_unpack(twice, sizeof(twice), &a));
	uint8_t twice2[] = { 0x52, 0x08, 0x22, 0x06, 0x1A, 0x01, 0x05, 0x1A, 0x01, 0x06 };
	assert_null(prec_packet_fast_unpack(twice2, sizeof(twice2), &a));
	/* unpacked repeated values (protobuf-c accepts them): give up */
	uint8_t unpacked[] = { 0x52, 0x04, 0x22, 0x02, 0x18, 0x05 };
	assert_null(prec_packet_fast_unpack(unpacked, sizeof(unpacked), &a));
	assert_int_equal(same_decode(unpacked, sizeof(unpacked), &a), 0);
	/* user regs given twice (protobuf-c appends), unpacked (field 15,
	 * wire type 0), empty then filled: protobuf-c's; the stack given
	 * twice: the last wins, both ways */
	uint8_t regs2[] = { 0x22, 0x06, 0x7A, 0x01, 0x05, 0x7A, 0x01, 0x06 };
	assert_null(prec_packet_fast_unpack(regs2, sizeof(regs2), &a));
	uint8_t regs_unp[] = { 0x22, 0x02, 0x78, 0x05 };
	assert_null(prec_packet_fast_unpack(regs_unp, sizeof(regs_unp), &a));
	assert_int_equal(same_decode(regs_unp, sizeof(regs_unp), &a), 0);
	uint8_t regs_empty[] = { 0x22, 0x05, 0x7A, 0x00, 0x7A, 0x01, 0x06 };
	assert_null(prec_packet_fast_unpack(regs_empty, sizeof(regs_empty), &a));
	uint8_t regs_one_empty[] = { 0x22, 0x04, 0x7A, 0x00, 0x68, 0x02 };
	assert_int_equal(same_decode(regs_one_empty, sizeof(regs_one_empty), &a), 1);
	uint8_t stack2[] = { 0x22, 0x0A, 0x82, 0x01, 0x02, 0xAA, 0xBB, 0x82, 0x01, 0x01, 0xCC,
			     0x00 };
	stack2[1] = 0x09;
	assert_int_equal(same_decode(stack2, sizeof(stack2) - 1, &a), 1);
	{
		Perfrec__Packet *sp = prec_packet_fast_unpack(stack2, sizeof(stack2) - 1, &a);
		assert_non_null(sp);
		assert_int_equal(sp->sample->stack.len, 1);
		assert_int_equal(sp->sample->stack.data[0], 0xCC);
	}
	/* a Loss reason with an embedded NUL */
	uint8_t lnul[] = { 0x42, 0x04, 0x2A, 0x02, 'a', 0x00 };
	assert_null(prec_packet_fast_unpack(lnul, sizeof(lnul), &a));
	/* strings that are not UTF-8 decode as protobuf-c decodes them */
	uint8_t bad[] = { 0x5A, 0x08, 0x0A, 0x06, 0x08, 0x01, 0x12, 0x02, 0xFF, 0xFE };
	same_decode(bad, sizeof(bad), &a);
	/* embedded NUL: left to protobuf-c */
	uint8_t nul[] = { 0x5A, 0x08, 0x0A, 0x06, 0x08, 0x01, 0x12, 0x02, 'a', 0x00 };
	assert_null(prec_packet_fast_unpack(nul, sizeof(nul), &a));
	/* an empty packet is not a fast-path kind */
	assert_null(prec_packet_fast_unpack((const uint8_t *)"", 0, &a));
	prec_arena_release(&a);
}

static uint32_t r32(void)
{
	return (uint32_t)rval();
}

/* int32/enum values: negative ones take 10 bytes on the wire */
static int32_t ri32(void)
{
	switch (rnd() % 4) {
	case 0: return 0;
	case 1: return -(int32_t)(rnd() % 5) - 1;
	case 2: return (int32_t)(rnd() % 5);
	default: return (int32_t)(uint32_t)rnd();
	}
}

/* a bool as callers may set it: 0, 1, or another non-zero int */
static int rbool(void)
{
	return (int)(rnd() % 3 == 0 ? 0 : rnd() % 4);
}

static void rand_read(Perfrec__GroupRead *r, uint64_t (*v)[6])
{
	perfrec__group_read__init(r);
	r->time_enabled = rval();
	r->time_running = rval();
	r->n_ids = rnd() % 6;
	r->n_values = rnd() % 6;
	r->n_lost = rnd() % 3 ? 0 : rnd() % 6;
	for (int k = 0; k < 6; k++) {
		v[0][k] = rval();
		v[1][k] = rval();
		v[2][k] = rval();
	}
	r->ids = r->n_ids ? v[0] : NULL;
	r->values = r->n_values ? v[1] : NULL;
	r->lost = r->n_lost ? v[2] : NULL;
}

/* Every kind with a fast path, random field values: the fast encoder gives
 * protobuf-c's bytes, the fast decoder protobuf-c's values, and mutated
 * bytes either decode as protobuf-c decodes them or are left to it. */
static void test_kinds_encode_decode(void **state)
{
	struct prec_arena a;
	int decoded[20] = { 0 };
	(void)state;

	prec_arena_init(&a, 0);
	for (int it = 0; it < 40000; it++) {
		Perfrec__Packet pkt = PERFREC__PACKET__INIT;
		Perfrec__Sample s = PERFREC__SAMPLE__INIT;
		Perfrec__ContextSwitch cs = PERFREC__CONTEXT_SWITCH__INIT;
		Perfrec__TaskEvent te = PERFREC__TASK_EVENT__INIT;
		Perfrec__Mmap mm = PERFREC__MMAP__INIT;
		Perfrec__Loss lo = PERFREC__LOSS__INIT;
		Perfrec__Throttle th = PERFREC__THROTTLE__INIT;
		Perfrec__GroupSnapshot gs = PERFREC__GROUP_SNAPSHOT__INIT;
		Perfrec__GroupRead gr;
		uint64_t arrays[3][6];
		uint8_t bid[20];
		char reason[16];

		pkt.dt = (int64_t)rval() * ((rnd() & 1) ? -1 : 1);
		switch (it % 7) {
		case 0:
			cs.id = rval();
			cs.cpu = r32();
			cs.pid = r32();
			cs.tid = r32();
			cs.out = rbool();
			cs.preempt = rbool();
			cs.cpu_wide = rbool();
			cs.other_pid = r32();
			cs.other_tid = r32();
			pkt.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
			pkt.context_switch = &cs;
			break;
		case 1:
			te.kind = (Perfrec__TaskEvent__Kind)ri32();
			te.pid = r32();
			te.tid = r32();
			te.ppid = r32();
			te.ptid = r32();
			te.comm = rval();
			te.exec = rbool();
			te.cpu = r32();
			pkt.data_case = PERFREC__PACKET__DATA_TASK;
			pkt.task = &te;
			break;
		case 2:
			mm.pid = r32();
			mm.tid = r32();
			mm.start = rval();
			mm.len = rval();
			mm.pgoff = rval();
			mm.maj = r32();
			mm.min = r32();
			mm.ino = rval();
			mm.ino_generation = rval();
			mm.prot = r32();
			mm.flags = r32();
			mm.filename = rval();
			if (rnd() % 2) {
				mm.build_id.len = rnd() % sizeof(bid);
				for (size_t i = 0; i < sizeof(bid); i++)
					bid[i] = (uint8_t)rnd();
				mm.build_id.data = bid;
			}
			mm.synthesized = rbool();
			mm.misc = r32();
			mm.cpu = r32();
			pkt.data_case = PERFREC__PACKET__DATA_MMAP;
			pkt.mmap = &mm;
			break;
		case 3: {
			lo.kind = (Perfrec__Loss__Kind)ri32();
			lo.id = rval();
			lo.cpu = r32();
			lo.count = rval();
			size_t l = rnd() % sizeof(reason);
			for (size_t k = 0; k < l; k++)
				reason[k] = (char)('a' + rnd() % 26);
			reason[l] = '\0';
			/* the default "", a string, or NULL */
			lo.reason = rnd() % 3 ? reason : (rnd() % 2 ? NULL : lo.reason);
			pkt.data_case = PERFREC__PACKET__DATA_LOSS;
			pkt.loss = &lo;
			break;
		}
		case 4:
			th.throttled = rbool();
			th.id = rval();
			th.cpu = r32();
			th.stream_id = rval();
			pkt.data_case = PERFREC__PACKET__DATA_THROTTLE;
			pkt.throttle = &th;
			break;
		case 5:
			gs.group = r32();
			gs.cpu = ri32();
			gs.pid = ri32();
			gs.final = rbool();
			if (rnd() % 4) {
				rand_read(&gr, arrays);
				gs.read = &gr;
			}
			pkt.data_case = PERFREC__PACKET__DATA_GROUP;
			pkt.group = &gs;
			break;
		default:
			fmt_sample(&pkt, &s, r32(), r32(), rval(), rval());
			pkt.dt = (int64_t)rval();
			s.stream_id = rval();
			rand_read(&gr, arrays);
			s.read = &gr;
			break;
		}
		uint8_t *ref, fast[512];
		size_t n = pack_pc(&pkt, &ref);
		assert_int_equal(prec_packet_fast_size(&pkt), n);
		assert_int_equal(prec_packet_fast_pack(&pkt, fast), n);
		assert_memory_equal(fast, ref, n);
		assert_true(same_decode(ref, n, &a));
		decoded[pkt.data_case]++;
		check_small(&pkt, ref, n);
		for (int m = 0; m < 4 && n; m++) {
			uint8_t mut[600];
			size_t ml = n;
			memcpy(mut, ref, n);
			switch (rnd() % 3) {
			case 0: mut[rnd() % n] ^= (uint8_t)(1 + rnd() % 255); break;
			case 1: ml = rnd() % n; break;
			default:
				mut[ml++] = (uint8_t)rnd();
				mut[ml++] = (uint8_t)rnd();
				break;
			}
			same_decode(mut, ml, &a);
		}
		free(ref);
		prec_arena_reset(&a);
	}
	assert_true(decoded[PERFREC__PACKET__DATA_GROUP] > 5000);
	prec_arena_release(&a);
}

/* The largest packets of the small kinds still fit the one-pass bound. */
static void test_small_worst_case(void **state)
{
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__Sample s = PERFREC__SAMPLE__INIT;
	Perfrec__ContextSwitch cs = PERFREC__CONTEXT_SWITCH__INIT;
	Perfrec__TaskEvent te = PERFREC__TASK_EVENT__INIT;
	Perfrec__Throttle th = PERFREC__THROTTLE__INIT;
	uint8_t *ref;
	size_t n;
	(void)state;

	pkt.dt = INT64_MIN;
	s.id = s.ip = s.period = s.callchain = s.addr = s.stream_id = UINT64_MAX;
	s.cpu = s.pid = s.tid = s.misc = UINT32_MAX;
	s.callchain_callers = 1;
	s.callchain_cut = UINT32_MAX;
	pkt.data_case = PERFREC__PACKET__DATA_SAMPLE;
	pkt.sample = &s;
	n = pack_pc(&pkt, &ref);
	assert_int_equal(check_small(&pkt, ref, n), 1);
	free(ref);
	/* with any user-regs field it is no longer small: declined */
	s.stack_dyn_size = UINT64_MAX;
	s.regs_abi = UINT32_MAX;
	s.regs_mask = UINT64_MAX;
	n = pack_pc(&pkt, &ref);
	assert_true(n > 128);
	assert_int_equal(check_small(&pkt, ref, n), 0);
	free(ref);
	s.stack_dyn_size = 0;
	s.regs_abi = 0;
	s.regs_mask = 0;
	cs.id = UINT64_MAX;
	cs.cpu = cs.pid = cs.tid = cs.other_pid = cs.other_tid = UINT32_MAX;
	cs.out = cs.preempt = cs.cpu_wide = 7;
	pkt.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
	pkt.context_switch = &cs;
	n = pack_pc(&pkt, &ref);
	assert_int_equal(check_small(&pkt, ref, n), 1);
	free(ref);
	te.kind = (Perfrec__TaskEvent__Kind)-1;
	te.pid = te.tid = te.ppid = te.ptid = te.cpu = UINT32_MAX;
	te.comm = UINT64_MAX;
	te.exec = 1;
	pkt.data_case = PERFREC__PACKET__DATA_TASK;
	pkt.task = &te;
	n = pack_pc(&pkt, &ref);
	assert_int_equal(check_small(&pkt, ref, n), 1);
	free(ref);
	th.throttled = 1;
	th.id = th.stream_id = UINT64_MAX;
	th.cpu = UINT32_MAX;
	pkt.data_case = PERFREC__PACKET__DATA_THROTTLE;
	pkt.throttle = &th;
	n = pack_pc(&pkt, &ref);
	assert_int_equal(check_small(&pkt, ref, n), 1);
	free(ref);
}

static void test_interned_encode_decode(void **state)
{
	struct prec_arena a;
	(void)state;

	prec_arena_init(&a, 0);
	for (int it = 0; it < 3000; it++) {
		struct prec_interned_ref sr[4], cr[4];
		struct prec_interned_run rr[4];
		Perfrec__InternedString is[4], *isp[4];
		Perfrec__Callchain cc[4], *ccp[4];
		Perfrec__CallchainNodes cn[4], *cnp[4];
		char strs[4][24];
		uint64_t ips[4][12], vals[4][12];
		size_t ns = rnd() % 4, nc = rnd() % 4, nr = rnd() % 4;
		for (size_t i = 0; i < ns; i++) {
			size_t l = rnd() % 23;
			for (size_t k = 0; k < l; k++)
				strs[i][k] = (char)(' ' + rnd() % 90);
			strs[i][l] = '\0';
			perfrec__interned_string__init(&is[i]);
			is[i].iid = rval();
			is[i].str = strs[i];
			isp[i] = &is[i];
			sr[i] = (struct prec_interned_ref){ is[i].iid, strs[i], l };
		}
		int64_t deltas[4][12];
		for (size_t i = 0; i < nc; i++) {
			size_t d = rnd() % 12;
			uint64_t prev = 0;
			for (size_t k = 0; k < d; k++) {
				/* kernel-like, user-like and random values */
				uint64_t v = rval();
				ips[i][k] = (rnd() & 1) ? 0xffffffff81000000ull + (v & 0xffffff) : v;
				deltas[i][k] = (int64_t)(ips[i][k] - prev);
				prev = ips[i][k];
			}
			perfrec__callchain__init(&cc[i]);
			cc[i].iid = rval();
			cc[i].n_ips_delta = d;   /* the writer's form */
			cc[i].ips_delta = deltas[i];
			ccp[i] = &cc[i];
			cr[i] = (struct prec_interned_ref){ cc[i].iid, ips[i], d };
		}
		/* node runs (1.1): implicit iids (0) half the time */
		for (size_t i = 0; i < nr; i++) {
			size_t d = rnd() % 12;
			for (size_t k = 0; k < d; k++)
				vals[i][k] = rnd() % 3 ? rval() : 1;   /* 1: the escape */
			perfrec__callchain_nodes__init(&cn[i]);
			cn[i].iid = rnd() & 1 ? 0 : rval();
			cn[i].parent = rval();
			cn[i].n_addrs = d;
			cn[i].addrs = vals[i];
			cnp[i] = &cn[i];
			rr[i] = (struct prec_interned_run){ cn[i].iid, cn[i].parent, vals[i], d, 0 };
		}
		Perfrec__InternedData id = PERFREC__INTERNED_DATA__INIT;
		Perfrec__Packet pkt = PERFREC__PACKET__INIT;
		id.n_strings = ns;
		id.strings = isp;
		id.n_callchains = nc;
		id.callchains = ccp;
		id.n_callchain_nodes = nr;
		id.callchain_nodes = cnp;
		pkt.data_case = PERFREC__PACKET__DATA_INTERNED;
		pkt.interned = &id;
		uint8_t *ref, fast[2048];
		size_t n = pack_pc(&pkt, &ref);
		assert_int_equal(prec_interned_size(sr, ns, cr, nc, rr, nr), n);
		assert_int_equal(prec_interned_pack(sr, ns, cr, nc, rr, nr, fast), n);
		assert_memory_equal(fast, ref, n);
		assert_true(same_decode(ref, n, &a));
		/* the decoded callchains are the original ips */
		Perfrec__Packet *dp = prec_packet_fast_unpack(ref, n, &a);
		assert_non_null(dp);
		assert_int_equal(dp->interned->n_callchains, nc);
		for (size_t i = 0; i < nc; i++) {
			assert_int_equal(dp->interned->callchains[i]->n_ips, cc[i].n_ips_delta);
			if (cc[i].n_ips_delta)
				assert_memory_equal(dp->interned->callchains[i]->ips, ips[i],
						    cc[i].n_ips_delta * sizeof(uint64_t));
		}
		/* and the runs as they were written */
		assert_int_equal(dp->interned->n_callchain_nodes, nr);
		for (size_t i = 0; i < nr; i++) {
			const Perfrec__CallchainNodes *r = dp->interned->callchain_nodes[i];
			assert_int_equal(r->iid, cn[i].iid);
			assert_int_equal(r->parent, cn[i].parent);
			assert_int_equal(r->n_addrs, cn[i].n_addrs);
			if (r->n_addrs)
				assert_memory_equal(r->addrs, vals[i], r->n_addrs * sizeof(uint64_t));
		}
		/* the plain form (field 2) decodes too */
		for (size_t i = 0; i < nc; i++) {
			cc[i].n_ips = cc[i].n_ips_delta;
			cc[i].ips = ips[i];
			cc[i].n_ips_delta = 0;
		}
		uint8_t *plain;
		size_t pn = pack_pc(&pkt, &plain);
		assert_true(same_decode(plain, pn, &a));
		free(plain);
		check_mutations(ref, n, 8, &a);
		free(ref);
		prec_arena_reset(&a);
	}
	prec_arena_release(&a);
}

/* ContextSwitch bodies of one- and two-byte varint fields, in any order,
 * repeated, with an odd field now and then (wire type, field number,
 * three-byte or non-canonical varint, a cut): the short decoder and its
 * fallback must both agree with protobuf-c. */
static void test_switch_shapes(void **state)
{
	struct prec_arena a;
	int fast = 0;
	(void)state;

	prec_arena_init(&a, 0);
	for (int it = 0; it < 40000; it++) {
		uint8_t body[64], pkt[80];
		size_t bl = 0, nf = rnd() % 12;
		for (size_t i = 0; i < nf; i++) {
			unsigned field = 1 + (unsigned)(rnd() % 9);
			unsigned odd = rnd() % 40 == 0 ? 1 + (unsigned)(rnd() % 5) : 0;
			uint64_t v = rnd() % 3 ? rnd() % 128 : rnd() % 16384;
			if (odd == 1)
				field = 10 + (unsigned)(rnd() % 5);
			body[bl++] = (uint8_t)(field << 3 | (odd == 2 ? 2 : 0));
			if (odd == 3) {
				body[bl++] = 0x80 | (uint8_t)(rnd() & 0x7F);
				body[bl++] = 0x80 | (uint8_t)(rnd() & 0x7F);
				body[bl++] = (uint8_t)(1 + rnd() % 127);
			} else if (odd == 4) {
				body[bl++] = 0x80 | (uint8_t)(v & 0x7F);
				body[bl++] = 0;
			} else if (v < 128) {
				body[bl++] = (uint8_t)v;
			} else {
				body[bl++] = 0x80 | (uint8_t)(v & 0x7F);
				body[bl++] = (uint8_t)(v >> 7);
			}
		}
		if (bl && rnd() % 40 == 0)
			bl--;   /* cut inside the last field */
		size_t n = 0;
		pkt[n++] = 0x08;
		pkt[n++] = (uint8_t)(rnd() % 128);
		pkt[n++] = 0x2A;   /* field 5, ContextSwitch */
		pkt[n++] = (uint8_t)bl;
		memcpy(pkt + n, body, bl);
		n += bl;
		fast += same_decode(pkt, n, &a);
		prec_arena_reset(&a);
	}
	assert_true(fast > 20000);
	prec_arena_release(&a);
}

/* Arena: alignment, limit, shrinking the last allocation. */
static void test_arena(void **state)
{
	struct prec_arena a;
	(void)state;

	prec_arena_init(&a, 4096);
	char *p = prec_arena_alloc(&a, 3);
	char *q = prec_arena_alloc(&a, 100);
	assert_non_null(p);
	assert_non_null(q);
	assert_int_equal((uintptr_t)p % 16, 0);
	assert_int_equal((uintptr_t)q % 16, 0);
	assert_true(q >= p + 16);
	prec_arena_shrink_last(&a, q, 10);
	char *r = prec_arena_alloc(&a, 1);
	assert_ptr_equal(r, q + 16);
	assert_null(prec_arena_alloc(&a, 5000));   /* over the limit */
	prec_arena_reset(&a);
	assert_non_null(prec_arena_alloc(&a, 4000));
	prec_arena_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_encode_decode),
		cmocka_unit_test(test_sample_fallbacks),
		cmocka_unit_test(test_kinds_encode_decode),
		cmocka_unit_test(test_switch_shapes),
		cmocka_unit_test(test_small_worst_case),
		cmocka_unit_test(test_interned_encode_decode),
		cmocka_unit_test(test_arena),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
