/*
 * fuzz_reader.c - libFuzzer target for the .prec reader: any bytes as a
 * file (open, index or rebuild, damage list, every packet, iid lookups,
 * each indexed frame decoded on its own) and as a lone zstd data frame.
 * The input is also fed, as one Packet, to the hand-written packet decoder
 * and to protobuf-c, which must agree.
 * Seeds: tests/fuzz/corpus/fuzz_reader/ (small valid, unindexed, torn files,
 * a lone frame, sample and interned packets).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/arena.h"
#include "format/packet.h"
#include "format/reader.h"
#include "format/record.h"

/* Differential check of the hand-written packet decoder: whatever it
 * accepts, protobuf-c must accept and both must re-encode identically. */
static void check_fast_decoder(const uint8_t *data, size_t size)
{
	struct prec_arena a, b;
	Perfrec__Packet *f, *s;

	prec_arena_init(&a, 1u << 24);
	prec_arena_init(&b, 1u << 24);
	f = prec_packet_fast_unpack(data, size, &a);
	if (f) {
		s = (Perfrec__Packet *)protobuf_c_message_unpack(
			&perfrec__packet__descriptor, &b.pc, size, data);
		if (!s || prec_packet_normalize(s, &b) < 0)
			__builtin_trap();
		size_t nf = protobuf_c_message_get_packed_size(&f->base);
		size_t ns = protobuf_c_message_get_packed_size(&s->base);
		uint8_t *bf = malloc(nf + 1), *bs = malloc(ns + 1);
		if (!bf || !bs || nf != ns)
			__builtin_trap();
		protobuf_c_message_pack(&f->base, bf);
		protobuf_c_message_pack(&s->base, bs);
		if (memcmp(bf, bs, nf) != 0)
			__builtin_trap();
		free(bf);
		free(bs);
	}
	prec_arena_release(&a);
	prec_arena_release(&b);
}

static void use_packet(const struct prec_packet *p, uint64_t *sink)
{
	const Perfrec__Packet *k = p->pkt;
	size_t n = 0;

	switch (k->data_case) {
	case PERFREC__PACKET__DATA_SAMPLE: {
		const uint64_t *ips = prec_frame_callchain(p->frame, k->sample->callchain, &n);
		for (size_t i = 0; ips && i < n; i++)
			*sink += ips[i];
		break;
	}
	case PERFREC__PACKET__DATA_TASK: {
		const char *s = prec_frame_string(p->frame, k->task->comm);
		*sink += s ? (uint64_t)s[0] : 0;
		break;
	}
	case PERFREC__PACKET__DATA_MMAP: {
		const char *s = prec_frame_string(p->frame, k->mmap->filename);
		*sink += s ? (uint64_t)s[0] : 0;
		break;
	}
	case PERFREC__PACKET__DATA_SYMBOLS:
		for (size_t i = 0; i < k->symbols->n_names; i++) {
			const char *s = prec_frame_string(p->frame, k->symbols->names[i]);
			*sink += s ? (uint64_t)s[0] : 0;
		}
		break;
	default:
		break;
	}
	*sink += p->time;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prec_reader_opts o = PREC_READER_OPTS_INIT;
	const struct prec_frame_info *fi;
	const struct prec_damage *d;
	struct prec_reader_stats st;
	struct prec_reader *r;
	struct prec_frame *f;
	struct prec_packet p;
	volatile uint64_t keep;
	uint64_t sink = 0;
	size_t nf = 0, nd = 0;

	/* keep decoded sizes small so the fuzzer explores, not allocates */
	o.max_frame_raw = 1u << 20;

	check_fast_decoder(data, size);

	/* the stream splitter: records must lie within the input */
	for (size_t pos = 0; pos < size;) {
		struct prec_record rec;
		int ret = prec_record_scan(data + pos, size - pos, 1u << 20, &rec);
		if (ret == 0)
			break;
		if (ret > 0 && (rec.len == 0 || rec.len > size - pos))
			__builtin_trap();
		pos += ret > 0 ? rec.len : 1;
	}
	f = prec_frame_new();
	if (!f)
		return 0;
	if (prec_frame_load(f, data, size, o.max_frame_raw) == 0) {
		while (prec_frame_next(f, &p) > 0)
			use_packet(&p, &sink);
	}

	r = prec_reader_open_mem(data, size, &o);
	if (r) {
		if (prec_reader_index(r, &fi, &nf) == 0) {
			for (size_t i = 0; i < nf; i++) {
				if (prec_reader_load_frame(r, &fi[i], f) < 0)
					continue;
				while (prec_frame_next(f, &p) > 0)
					use_packet(&p, &sink);
			}
		}
		prec_reader_damage(r, &d, &nd);
		prec_reader_set_window(r, 0, UINT64_MAX);
		while (prec_reader_next_packet(r, &p) > 0)
			use_packet(&p, &sink);
		prec_reader_stats(r, &st);
		sink += st.packets + st.damaged_frames + nd;
		prec_reader_free(r);
	}
	prec_frame_free(f);
	keep = sink;
	(void)keep;
	return 0;
}
