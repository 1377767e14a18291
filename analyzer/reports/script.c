/*
 * script.c - samples in perf script's layout, from the report's pass
 * (its filters, callchain resolution and names: one place for them).
 */
#include "analyzer/reports/script.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "analyzer/read/trace.h"
#include "analyzer/render/table.h"
#include "analyzer/reports/report.h"
#include "analyzer/symbols/resolve.h"

struct sstate {
	struct ana_trace *s;
	const char *host;
	FILE *out;
};

static int on_sample(void *ctx, const struct ana_report_sample *rs)
{
	struct sstate *st = ctx;
	FILE *f = st->out;
	const Perfrec__Sample *smp = rs->p->pkt->sample;
	uint64_t t = rs->p->time;

	/* perf's header: what stackcollapse-perf.pl takes the comm, the
	 * pid/tid and (before the event name) the period from */
	ana_text_str(f, rs->comm);
	if (st->host) {
		fputs(" @", f);
		ana_text_str(f, st->host);
	}
	fprintf(f, " %5" PRIu32 "/%-5" PRIu32 " [%03" PRIu32 "] %" PRIu64 ".%06" PRIu64
		": %10" PRIu64 " ", smp->pid, smp->tid, smp->cpu, t / 1000000000u,
		t % 1000000000u / 1000u, rs->weight);
	ana_text_str(f, ana_trace_event_name(st->s, rs->event));
	fputs(": \n", f);
	for (int i = 0; i < rs->nframes; i++) {
		const struct ana_loc *fr = &rs->frames[i];
		/* frames[].sym is the display name; a frame the symbolizer
		 * could not name has the name ana_frame_name() gives a frame
		 * without a symbol (interned: the same pointer) */
		struct ana_loc bare = *fr;
		bare.sym = NULL;
		const char *unnamed = ana_frame_name(st->s, &bare);
		if (!unnamed)
			return -ENOMEM;
		fprintf(f, "\t%16" PRIx64 " ", fr->ip);
		if (fr->sym && fr->sym != unnamed) {
			ana_text_str(f, fr->sym);
			fprintf(f, "+0x%" PRIx64, fr->sym_off);
		} else {
			fputs("[unknown]", f);
		}
		fputs(" (", f);
		ana_text_str(f, fr->dso ? fr->dso : "[unknown]");
		fputs(")\n", f);
	}
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

int ana_script_run(struct ana_trace *s, const struct ana_script_opts *o, FILE *out)
{
	struct sstate st = { .s = s, .host = o->host, .out = out };
	/* the report pass with the cheapest key: its table is not shown */
	struct ana_report_opts ro = { .nkeys = 1, .keys = { ANA_KEY_EVENT },
				      .filter = o->filter, .on_sample = on_sample, .ctx = &st };
	struct ana_doc *doc = ana_doc_new();
	if (!doc)
		return -ENOMEM;
	int ret = ana_report_run(s, &ro, doc);
	ana_doc_free(doc);
	if (ret >= 0 && (fflush(out) || ferror(out)))
		ret = -EIO;
	return ret;
}
