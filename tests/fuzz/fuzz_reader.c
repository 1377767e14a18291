/*
 * fuzz_reader.c - libFuzzer target for the .prec reader: any bytes as a
 * file (open, index or rebuild, damage list, every packet, iid lookups,
 * each indexed frame decoded on its own) and as a lone zstd data frame.
 * The input is also fed, as one Packet, to the hand-written packet decoder
 * and to protobuf-c, which must agree; whatever protobuf-c decodes, the
 * hand-written encoder must encode to protobuf-c's bytes. The lone frame is
 * also read with packet-kind filters, which must return the unfiltered
 * pass's packets of those kinds, with the same times and iid values.
 * The input is also walked as a stored file a collector resumes
 * (prec_record_recover). The reader's parts (a concatenation of files)
 * must cover the file in order and hold their frames. Seeds:
 * tests/fuzz/corpus/fuzz_reader/ (small valid, unindexed, torn and
 * concatenated files, a lone frame, sample and interned packets, switch
 * batches of format 1.2 as a file, a frame and a packet).
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
	/* the encoder: any packet protobuf-c decodes (normalized: the writer
	 * never sees ips_delta) encodes to protobuf-c's bytes, or is refused */
	s = (Perfrec__Packet *)protobuf_c_message_unpack(
		&perfrec__packet__descriptor, &b.pc, size, data);
	if (s && prec_packet_normalize(s, &b) == 0) {
		size_t fn = prec_packet_fast_size(s);
		if (fn) {
			size_t pn = protobuf_c_message_get_packed_size(&s->base);
			uint8_t *fb = malloc(fn + 1), *pb = malloc(pn + 1);
			if (!fb || !pb || fn != pn || prec_packet_fast_pack(s, fb) != fn)
				__builtin_trap();
			protobuf_c_message_pack(&s->base, pb);
			if (memcmp(fb, pb, fn) != 0)
				__builtin_trap();
			/* the one-pass writer path of the small kinds */
			uint8_t sb[PREC_FAST_SMALL_MAX];
			size_t k = prec_packet_fast_pack_small(s, sb);
			if (k && (k != pn + 2 || sb[0] != 0x0A || sb[1] != pn ||
				  memcmp(sb + 2, pb, pn) != 0))
				__builtin_trap();
			free(fb);
			free(pb);
		}
	}
	prec_arena_reset(&b);
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

/* What use_packet() saw of one packet, for comparing filtered passes. */
struct seen {
	int kind;
	uint64_t time, val;
};

#define MAX_SEEN 2048

static uint64_t use_packet(const struct prec_packet *p, uint64_t *sink)
{
	const Perfrec__Packet *k = p->pkt;
	uint64_t before = *sink;
	size_t n = 0;

	switch (k->data_case) {
	case PERFREC__PACKET__DATA_SAMPLE: {
		const uint64_t *ips = prec_frame_callchain(p->frame, k->sample->callchain, &n);
		for (size_t i = 0; ips && i < n; i++)
			*sink += ips[i];
		for (size_t i = 0; i < k->sample->n_regs; i++)
			*sink += k->sample->regs[i];
		for (size_t i = 0; i < k->sample->stack.len; i++)
			*sink += k->sample->stack.data[i];
		break;
	}
	case PERFREC__PACKET__DATA_UNWIND:
		for (size_t i = 0; i < k->unwind->n_sections; i++) {
			const Perfrec__UnwindSection *us = k->unwind->sections[i];
			for (size_t j = 0; j < us->data.len; j++)
				*sink += us->data.data[j];
		}
		break;
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
	case PERFREC__PACKET__DATA_CONTEXT_SWITCH: {
		/* rows of a switch batch too: the filtered passes must
		 * return the same values */
		const Perfrec__ContextSwitch *c = k->context_switch;
		*sink += c->id + c->cpu + c->pid + c->tid + c->other_pid + c->other_tid +
			 (uint64_t)(c->out | c->preempt << 1 | c->cpu_wide << 2);
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
	return *sink - before;
}

/* Reads the loaded frame f with `mask`; what it returns lands in out[]
 * (up to MAX_SEEN). Returns the count, *end the final prec_frame_next(). */
static size_t read_frame(struct prec_frame *f, uint64_t mask, struct seen *out,
			 int *end, uint64_t *sink)
{
	struct prec_packet p;
	size_t n = 0;
	int ret;

	prec_frame_set_kinds(f, mask);
	while ((ret = prec_frame_next(f, &p)) > 0) {
		if (mask != PREC_KINDS_ALL && !(mask & PREC_KIND(p.pkt->data_case)))
			__builtin_trap();   /* a filtered-out kind came back */
		uint64_t v = use_packet(&p, sink);
		if (n < MAX_SEEN)
			out[n] = (struct seen){ p.pkt->data_case, p.time, v };
		n++;
	}
	*end = ret;
	return n;
}

/* The filtered passes over a lone frame agree with the unfiltered one:
 * same packets of the kept kinds, same times, same iid values. Where the
 * unfiltered pass stops at a damaged packet, a filtered pass that skipped
 * it may go on: only the part before is compared then. */
static void check_filters(const uint8_t *data, size_t size, size_t max_raw,
			  struct prec_frame *f, uint64_t *sink)
{
	static struct seen all[MAX_SEEN], got[MAX_SEEN];
	static const uint64_t masks[] = {
		PREC_KIND(PERFREC__PACKET__DATA_SAMPLE),
		PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH) |
			PREC_KIND(PERFREC__PACKET__DATA_TASK) |
			PREC_KIND(PERFREC__PACKET__DATA_MMAP),
		PREC_KIND(PERFREC__PACKET__DATA_INTERNED),
		0,
	};
	size_t nall, n;
	int end_all, end;

	if (prec_frame_load(f, data, size, max_raw) != 0)
		return;
	nall = read_frame(f, PREC_KINDS_ALL, all, &end_all, sink);
	if (nall > MAX_SEEN)
		return;
	for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
		size_t k = 0;
		if (prec_frame_load(f, data, size, max_raw) != 0)
			__builtin_trap();   /* loaded once, must load again */
		n = read_frame(f, masks[m], got, &end, sink);
		for (size_t i = 0; i < nall; i++) {
			if (!(masks[m] & PREC_KIND(all[i].kind)))
				continue;
			if (k >= n || k >= MAX_SEEN || got[k].kind != all[i].kind ||
			    got[k].time != all[i].time || got[k].val != all[i].val)
				__builtin_trap();
			k++;
		}
		/* a clean unfiltered pass: the filtered one returns nothing more
		 * and ends the same way */
		if (end_all == 0 && (k != n || end != 0))
			__builtin_trap();
	}
	prec_frame_set_kinds(f, PREC_KINDS_ALL);
}

/* The parts of a file (one, or one per file of a concatenation) cover
 * it in order, and each holds the frames it lists, within its bytes. */
static void check_parts(struct prec_reader *r, size_t size)
{
	const struct prec_part *pt;
	const struct prec_frame_info *fi;
	size_t np, nf, next = 0;

	if (prec_reader_parts(r, &pt, &np) < 0 || prec_reader_index(r, &fi, &nf) < 0)
		return;
	if (np == 0 || pt[0].offset != 0 || pt[np - 1].end != size)
		__builtin_trap();
	for (size_t i = 0; i < np; i++) {
		const struct prec_part *p = &pt[i];
		if ((i && p->offset != pt[i - 1].end) || p->end < p->offset ||
		    p->data_start > p->end || p->first_frame != next ||
		    p->nframes > nf - next ||
		    (p->torn && (p->torn_offset < p->offset || p->torn_offset >= p->end)))
			__builtin_trap();
		for (size_t j = p->first_frame; j < p->first_frame + p->nframes; j++)
			if (fi[j].offset < p->offset || fi[j].data_offset > p->end ||
			    fi[j].compressed_size > p->end - fi[j].data_offset)
				__builtin_trap();
		next += p->nframes;
	}
	if (next != nf)
		__builtin_trap();
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
	/* the resume walk of a stored file: within the input, a count that
	 * records of at least 8 bytes can hold */
	{
		struct prec_record_recovery rv;

		if (prec_record_recover(data, size, NULL, NULL, &rv) != 0 || rv.end > size ||
		    rv.records > size / 8 + 1 || (!rv.damaged && !rv.certain))
			__builtin_trap();
	}
	f = prec_frame_new();
	if (!f)
		return 0;
	if (prec_frame_load(f, data, size, o.max_frame_raw) == 0) {
		while (prec_frame_next(f, &p) > 0)
			use_packet(&p, &sink);
	}
	check_filters(data, size, o.max_frame_raw, f, &sink);

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
		check_parts(r, size);
		prec_reader_set_window(r, 0, UINT64_MAX);
		while (prec_reader_next_packet(r, &p) > 0)
			use_packet(&p, &sink);
		/* and once more, samples only: the reader's own frame filters */
		prec_reader_rewind(r);
		prec_reader_set_kinds(r, PREC_KIND(PERFREC__PACKET__DATA_SAMPLE));
		while (prec_reader_next_packet(r, &p) > 0) {
			if (p.pkt->data_case != PERFREC__PACKET__DATA_SAMPLE)
				__builtin_trap();
			use_packet(&p, &sink);
		}
		prec_reader_stats(r, &st);
		sink += st.packets + st.damaged_frames + nd;
		/* the walk a checker holds against the index: its frames lie
		 * within the file, in order, and no frame claims a content over
		 * the ratio bound that loads */
		struct prec_frame_info *wf;
		struct prec_damage *wd;
		size_t nw, nwd;
		uint64_t torn;
		if (prec_reader_walk(r, &wf, &nw, &wd, &nwd, &torn) == 0) {
			for (size_t i = 0; i < nw; i++) {
				if (wf[i].data_offset > size ||
				    wf[i].compressed_size > size - wf[i].data_offset ||
				    (i && wf[i].offset < wf[i - 1].data_offset + wf[i - 1].compressed_size))
					__builtin_trap();
				if (prec_reader_load_frame(r, &wf[i], f) == 0 &&
				    wf[i].raw_size > (uint64_t)wf[i].compressed_size * PREC_MAX_RATIO)
					__builtin_trap();
			}
			sink += nw + nwd + torn;
			free(wf);
			free(wd);
		}
		prec_reader_free(r);
	}
	prec_frame_free(f);
	keep = sink;
	(void)keep;
	return 0;
}
