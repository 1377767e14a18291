/*
 * fuzz_record_decode.c - arbitrary bytes as a kernel ring: the ring reader,
 * the spool, the record decoder and the packet emitter must never crash,
 * hang or read out of bounds, whatever the headers and counts claim.
 *
 * Input: byte 0 picks the sample_type variant of event id 1; the rest is
 * the ring's data area (zero-padded to a power of two) with data_head at
 * the end of the input. Each record's time is read alone too, as the
 * drain's rounds do. The --call-graph dwarf variants (user registers of
 * a mask byte 0 also picks, stack copies) go through the record-time
 * unwinder of a symbol gatherer that knows no process (so every frame
 * is a frame-pointer step over the fuzzed stack bytes) and, for odd
 * inputs, keep raw stacks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/sink.h"
#include "format/writer.h"
#include "recorder/encode/decode.h"
#include "recorder/encode/emit.h"
#include "recorder/ring/ring.h"
#include "recorder/ring/spool.h"
#include "recorder/symbols/symgather.h"

#define SID (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

static struct rec_sample_fmt fmt;

static const struct rec_sample_fmt *lookup(void *arg, uint64_t id)
{
	(void)arg;
	return id == 1 ? &fmt : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t extra[] = {
		PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD,
		PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
		PERF_SAMPLE_RAW,
		PERF_SAMPLE_READ,
		PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
			PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN |
			PERF_SAMPLE_RAW,
		PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
			PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		PERF_SAMPLE_REGS_USER,
		PERF_SAMPLE_STACK_USER | PERF_SAMPLE_RAW,
	};
	/* BP SP IP (what the unwinder needs), all 24, none */
	static const uint64_t masks[4] = { 0x1c0, 0xffffff, 0, 0xf001c2 };
	struct rec_symgather_opts so = REC_SYMGATHER_OPTS_INIT;
	struct rec_symgather *sc;
	struct rec_decode_ctx ctx = { SID, lookup, NULL };
	size_t page = 4096, dsize = 4096;
	unsigned char *block;
	struct rec_ring k;
	struct rec_spool sp;
	struct prec_sink *sink;
	struct prec_writer *w;
	struct rec_emit e;
	const struct perf_event_header *h;

	if (size < 1 || size > 65536 + 1)
		return 0;
	fmt.sample_type = SID | extra[data[0] % 8];
	fmt.regs_user = masks[(data[0] >> 3) & 3];
	fmt.read_format = PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
			  (data[0] & 0x80 ? PERF_FORMAT_GROUP : 0) |
			  (data[0] & 0x40 ? (1u << 4) /* LOST */ : 0);
	data++;
	size--;
	while (dsize < size)
		dsize *= 2;
	block = aligned_alloc(page, page + dsize);
	if (!block)
		return 0;
	memset(block, 0, page + dsize);
	memcpy(block + page, data, size);
	((struct perf_event_mmap_page *)block)->data_head = size;
	if (rec_ring_init_mem(&k, block, page, dsize) < 0 ||
	    rec_spool_init(&sp, 65536 > dsize ? 65536 : dsize) < 0) {
		free(block);
		return 0;
	}
	/* no process known, nothing read from the host */
	so.kernel = 0;
	so.perf_maps = 0;
	so.proc_maps = "";
	so.machine = "x86_64";
	sc = rec_symgather_new(&so);
	sink = prec_sink_mem_new();
	w = sink ? prec_writer_new(sink, NULL) : NULL;
	if (w && rec_emit_init(&e, w, &ctx, 4) == 0) {
		e.unwind = rec_symgather_unwind_sample;
		e.unwind_ctx = sc;
		/* mappings from the fuzzed MMAP2 records cut the fuzzed
		 * frame-pointer chains (emit.c, chain_cut) */
		e.observe = rec_symgather_observe;
		e.observe_ctx = sc;
		e.mapped = rec_symgather_user_mapped;
		e.mapped_ctx = sc;
		e.raw_stacks = size & 1;
		/* bounded: every turn consumes bytes or stops the ring */
		for (int turn = 0; turn < 4; turn++) {
			long moved = rec_spool_fill(&sp, &k);

			rec_ring_read_begin(&sp.reader);
			while (rec_ring_next(&sp.reader, &h) > 0) {
				uint64_t t;

				/* the time the drain's rounds read (decode.h) */
				(void)rec_decode_time(&ctx, h, &t);
				rec_emit_record(&e, 1, 0, h);
			}
			rec_ring_read_done(&sp.reader);
			if (moved <= 0)
				break;
		}
		rec_emit_release(&e);
		prec_writer_close(w);
	}
	prec_writer_free(w);
	prec_sink_free(sink);
	rec_symgather_free(sc);
	rec_spool_release(&sp);
	rec_ring_release(&k);
	free(block);
	return 0;
}
