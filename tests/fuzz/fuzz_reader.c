/*
 * fuzz_reader.c - libFuzzer target for the .prec reader: any bytes as a
 * file (open, index or rebuild, damage list, every packet, iid lookups,
 * each indexed frame decoded on its own) and as a lone zstd data frame.
 * Seeds: tests/fuzz/corpus/fuzz_reader/ (small valid, unindexed, torn files).
 */
#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"

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
