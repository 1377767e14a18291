/*
 * fuzz_symbolize.c - analyzer/symbolize on arbitrary traces. The input is
 * an uncompressed packet stream (a `Trace` message: what `zstd -dc` of a
 * .prec file prints), so mutations reach the packets instead of dying in
 * zstd checksums; it is written into a real .prec in memory with the format
 * writer, read back, and every packet goes to ana_symbols_add() (Mmap,
 * TaskEvent and SymbolTable packets with any values: overlapping and
 * wrapping mappings, fork loops, damaged tables, UnwindTable pieces in
 * any order and size), then every sample's ip
 * and callchain entries are resolved, in user and kernel mode, at the
 * sample's time and at extreme times. Nothing may crash, hang, leak or
 * trip a sanitizer; a symbol is reported exactly when 1 is returned.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/symbols/symbolize.h"
#include "format/unwind/cfi.h"
#include "format/reader.h"
#include "format/sink.h"
#include "format/writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(struct ana_symbols *s, uint32_t pid, uint64_t ip, int kernel,
		  uint64_t t)
{
	struct ana_sym o;
	int ret = ana_symbols_resolve(s, pid, ip, kernel, t, &o);

	if ((ret == 1) != (o.sym != NULL))
		abort();
	if (o.sym)
		(void)strlen(o.sym);
	if (o.dso)
		(void)strlen(o.dso);
	/* the unwind table of the object there (UnwindTable packets): a
	 * lookup and a row, as the unwinder would */
	if (!kernel) {
		const struct prec_cfi_table *tab = NULL;
		struct prec_cfi_fde fde;
		struct prec_cfi_row row;
		uint64_t bias = 0;
		if (ana_symbols_unwind_table(s, pid, ip, t, &tab, &bias) == 1 &&
		    prec_cfi_table_find(tab, ip - bias, &fde) == 0)
			(void)prec_cfi_row_at(&fde, ip - bias, &row);
	}
}

/* Input packets -> a .prec file in memory. NULL when the input is no Trace. */
static struct prec_sink *build(const uint8_t *data, size_t size)
{
	struct prec_writer_opts wo = PREC_WRITER_OPTS_INIT;
	struct prec_sink *sink;
	struct prec_writer *w;
	Perfrec__Trace *tr;
	uint64_t t = 0;

	tr = perfrec__trace__unpack(NULL, size, data);
	if (!tr)
		return NULL;
	sink = prec_sink_mem_new();
	wo.frame_size = 16384;
	w = sink ? prec_writer_new(sink, &wo) : NULL;
	for (size_t i = 0; w && i < tr->n_packet; i++) {
		t += (uint64_t)tr->packet[i]->dt;
		if (prec_writer_append(w, 0, tr->packet[i], t) < 0 &&
		    prec_writer_error(w))
			break;
	}
	if (w)
		prec_writer_close(w);
	prec_writer_free(w);
	perfrec__trace__free_unpacked(tr, NULL);
	return sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prec_reader_opts ro = PREC_READER_OPTS_INIT;
	struct ana_symbols *s;
	struct prec_reader *r = NULL;
	struct prec_sink *sink;
	struct prec_packet p;
	const void *buf;
	size_t len;
	int n = 0;

	sink = build(data, size);
	if (!sink)
		return 0;
	buf = prec_sink_mem_data(sink, &len);
	s = ana_symbols_new();
	if (!s)
		goto out;
	r = prec_reader_open_mem(buf, len, &ro);
	if (!r)
		goto out;
	while (prec_reader_next_packet(r, &p) > 0)
		(void)ana_symbols_add(s, &p);
	if (ana_symbols_finish(s) < 0)
		goto out;
	prec_reader_rewind(r);
	while (prec_reader_next_packet(r, &p) > 0 && n < 4096) {
		const Perfrec__Sample *smp;
		const uint64_t *ips;
		size_t nips = 0;

		if (p.pkt->data_case != PERFREC__PACKET__DATA_SAMPLE)
			continue;
		smp = p.pkt->sample;
		n++;
		check(s, smp->pid, smp->ip, (smp->misc & 7) == 1, p.time);
		check(s, smp->pid, smp->ip, 0, 0);
		check(s, smp->pid, smp->ip, 1, UINT64_MAX);
		ips = smp->callchain ?
		      prec_frame_callchain(p.frame, smp->callchain, &nips) : NULL;
		for (size_t i = 0; ips && i < nips && i < 64; i++)
			check(s, smp->pid, ips[i], ips[i] >> 63, p.time);
	}
out:
	prec_reader_free(r);
	ana_symbols_free(s);
	prec_sink_free(sink);
	return 0;
}
