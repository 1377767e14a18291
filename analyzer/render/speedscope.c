/*
 * speedscope.c - speedscope's JSON file format (see speedscope.h).
 *
 * Call order: pass over the samples (merge order) -> per sample: resolve,
 * intern its frames and stack, append (stack, weight) to its thread's
 * chunk (full chunks go to the spill file) -> write "profiles" (each
 * thread's chunks read back twice: stacks, then weights) and "shared".
 * JSON objects are unordered, so the frame table, complete only at the
 * end, is written last.
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/render/speedscope.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/hashmap.h"
#include "analyzer/read/merge.h"
#include "analyzer/read/trace.h"
#include "analyzer/render/table.h"
#include "format/base/grow.h"
#include "analyzer/symbols/resolve.h"

#define MAX_FRAMES 256
#define CHUNK 256   /* samples a thread holds in memory before spilling */

struct rec {
	uint32_t stack;
	uint32_t pad;
	uint64_t weight;
};

struct chunk {
	long off;
	size_t n;
};

struct threadkey {
	uint32_t tid;
	int32_t event;   /* event position, -1 unknown */
};

struct thread {
	struct threadkey k;
	uint32_t pid;
	uint64_t samples, total;
	struct rec buf[CHUNK];
	size_t n;
	struct chunk *chunks;
	size_t nchunks, capchunks;
};

struct framekey {
	const char *dso, *sym;
};

struct sstate {
	struct ana_trace *s;
	const struct ana_filter *f;
	FILE *spill;
	struct prec_hashmap threads;   /* struct threadkey -> struct thread * */
	int nsampling;                 /* sampling events in the trace */
	struct thread **order;         /* in order of first sample */
	size_t nthreads, capthreads;
	struct prec_hashmap frames;    /* struct framekey -> uint32 index */
	struct framekey *frametab;
	size_t capframes;
	struct prec_hashmap stacks;    /* const char * key -> uint32 index */
	uint32_t *stackpool;           /* frame indices, root first */
	size_t npool, cappool;
	size_t *stackoff;              /* stack i = stackpool[stackoff[i] ..
					* stackoff[i + 1]) */
	size_t capstacks;
	struct ana_loc *locs;
	uint32_t *ids;
	char *key;
	size_t keycap;
};

static int frame_index(struct sstate *st, const struct ana_loc *loc, uint32_t *out)
{
	struct framekey k;
	memset(&k, 0, sizeof(k));
	k.dso = loc->dso;
	if (!(k.sym = ana_frame_name(st->s, loc)))
		return -ENOMEM;
	int created;
	uint32_t *v = prec_hashmap_get(&st->frames, &k, &created);
	if (!v)
		return -ENOMEM;
	if (created) {
		size_t n = prec_hashmap_count(&st->frames);
		if (prec_grow(&st->frametab, &st->capframes, n, sizeof(*st->frametab)))
			return -ENOMEM;
		st->frametab[n - 1] = k;
		*v = (uint32_t)(n - 1);
	}
	*out = *v;
	return 0;
}

/* The stack of locs[0..n) (leaf first) as an index into the stack table. */
static int stack_index(struct sstate *st, int n, uint32_t *out)
{
	size_t len = 0;
	for (int i = n - 1; i >= 0; i--) {   /* root first */
		int ret = frame_index(st, &st->locs[i], &st->ids[n - 1 - i]);
		if (ret)
			return ret;
		len += (size_t)snprintf(st->key + len, st->keycap - len, "%" PRIx32 ",",
					st->ids[n - 1 - i]);
	}
	const char *k = ana_strpool_intern_n(&st->s->pool, st->key, len);
	int created;
	uint32_t *v = k ? prec_hashmap_get(&st->stacks, &k, &created) : NULL;
	if (!v)
		return -ENOMEM;
	if (created) {
		size_t i = prec_hashmap_count(&st->stacks) - 1;
		if (prec_grow(&st->stackoff, &st->capstacks, i + 2, sizeof(*st->stackoff)) ||
		    prec_grow(&st->stackpool, &st->cappool, st->npool + (size_t)n,
			 sizeof(*st->stackpool)))
			return -ENOMEM;
		st->stackoff[i] = st->npool;
		memcpy(st->stackpool + st->npool, st->ids, (size_t)n * sizeof(*st->ids));
		st->npool += (size_t)n;
		st->stackoff[i + 1] = st->npool;
		*v = (uint32_t)i;
	}
	*out = *v;
	return 0;
}

static int spill_chunk(struct sstate *st, struct thread *t)
{
	if (prec_grow(&t->chunks, &t->capchunks, t->nchunks + 1, sizeof(*t->chunks)))
		return -ENOMEM;
	if (fseek(st->spill, 0, SEEK_END))
		return -EIO;
	long off = ftell(st->spill);
	if (off < 0 || fwrite(t->buf, sizeof(t->buf[0]), t->n, st->spill) != t->n)
		return -EIO;
	t->chunks[t->nchunks].off = off;
	t->chunks[t->nchunks].n = t->n;
	t->nchunks++;
	t->n = 0;
	return 0;
}

static int on_sample(struct sstate *st, const struct prec_packet *p)
{
	const Perfrec__Sample *smp = p->pkt->sample;
	struct ana_trace *s = st->s;
	int keep = ana_filter_sample(st->f, s, p, NULL);
	if (keep <= 0)
		return keep;
	int n = ana_resolve_sample(s, p, st->locs, MAX_FRAMES);
	if (n < 0)
		return n;
	struct rec r;
	memset(&r, 0, sizeof(r));
	int ret = stack_index(st, n, &r.stack);
	if (ret)
		return ret;
	r.weight = smp->period ? smp->period : 1;
	struct threadkey tk = { smp->tid, ana_trace_event_of(s, smp->id) };
	int created;
	struct thread **tp = prec_hashmap_get(&st->threads, &tk, &created);
	if (!tp)
		return -ENOMEM;
	if (created) {
		if (prec_grow(&st->order, &st->capthreads, st->nthreads + 1, sizeof(*st->order)) ||
		    !(*tp = calloc(1, sizeof(**tp))))
			return -ENOMEM;
		(*tp)->k = tk;
		(*tp)->pid = smp->pid;
		st->order[st->nthreads++] = *tp;
	}
	struct thread *t = *tp;
	t->samples++;
	t->total += r.weight;
	t->buf[t->n++] = r;
	return t->n == CHUNK ? spill_chunk(st, t) : 0;
}

static int read_samples(struct sstate *st)
{
	struct ana_trace *s = st->s;
	struct ana_frames_opts fo = { .jobs = s->opts.jobs,
				      .kinds = PREC_KIND(PERFREC__PACKET__DATA_SAMPLE) };
	const struct prec_frame_info *list;
	size_t n;
	int ret = ana_trace_select(s, fo.kinds, 0, s->windowed, &list, &n);
	if (ret < 0)
		return ret;
	struct ana_merge *m = ana_merge_trace(s, list, n, &fo);
	if (list != s->frames)
		free((void *)list);
	if (!m)
		return -ENOMEM;
	const struct prec_packet *p;
	while ((ret = ana_merge_next(m, &p)) > 0)
		if (p->pkt->data_case == PERFREC__PACKET__DATA_SAMPLE &&
		    (ret = on_sample(st, p)) < 0)
			break;
	ana_merge_free(m);
	return ret < 0 ? ret : 0;
}

/* Calls fn for each record of t in order: its spilled chunks, then the
 * one in memory. */
static int each_rec(struct sstate *st, struct thread *t,
		    void (*fn)(FILE *out, const struct sstate *st, const struct rec *r, int first),
		    FILE *out)
{
	struct rec buf[CHUNK];
	int first = 1;
	for (size_t c = 0; c < t->nchunks; c++) {
		if (fseek(st->spill, t->chunks[c].off, SEEK_SET) ||
		    fread(buf, sizeof(buf[0]), t->chunks[c].n, st->spill) != t->chunks[c].n)
			return -EIO;
		for (size_t i = 0; i < t->chunks[c].n; i++, first = 0)
			fn(out, st, &buf[i], first);
	}
	for (size_t i = 0; i < t->n; i++, first = 0)
		fn(out, st, &t->buf[i], first);
	return 0;
}

static void put_stack(FILE *out, const struct sstate *st, const struct rec *r, int first)
{
	fputs(first ? "[" : ",[", out);
	for (size_t i = st->stackoff[r->stack]; i < st->stackoff[r->stack + 1]; i++)
		fprintf(out, "%s%" PRIu32, i > st->stackoff[r->stack] ? "," : "", st->stackpool[i]);
	fputc(']', out);
}

static void put_weight(FILE *out, const struct sstate *st, const struct rec *r, int first)
{
	(void)st;
	fprintf(out, "%s%" PRIu64, first ? "" : ",", r->weight);
}

/* A clock event's period is nanoseconds; other events count. */
static const char *unit_of(struct ana_trace *s, int event)
{
	return event >= 0 && strstr(ana_trace_event_name(s, event), "clock") ?
	       "nanoseconds" : "none";
}

static int write_file(struct sstate *st, FILE *out)
{
	struct ana_trace *s = st->s;
	size_t active = 0;
	for (size_t i = 1; i < st->nthreads; i++)
		if (st->order[i]->samples > st->order[active]->samples)
			active = i;
	const char *base = strrchr(s->path, '/');
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
	      "\"exporter\":\"perfrec-analyze\",\"name\":", out);
	ana_json_str(out, base ? base + 1 : s->path);
	fprintf(out, ",\"activeProfileIndex\":%zu,\n\"profiles\":[", active);
	for (size_t i = 0; i < st->nthreads; i++) {
		struct thread *t = st->order[i];
		char name[512];
		const char *comm = ana_trace_comm_name(s, t->k.tid, s->t_max);
		if (!comm)
			return -ENOMEM;
		int len = snprintf(name, sizeof(name), "%s (pid %" PRIu32 ", tid %" PRIu32 ")",
				   comm, t->pid, t->k.tid);
		if (st->nsampling > 1 && len > 0 && (size_t)len < sizeof(name))
			snprintf(name + len, sizeof(name) - (size_t)len, " %s",
				 t->k.event >= 0 ? ana_trace_event_name(s, t->k.event) : "?");
		fprintf(out, "%s\n{\"type\":\"sampled\",\"name\":", i ? "," : "");
		ana_json_str(out, name);
		fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64
			",\n\"samples\":[", unit_of(s, t->k.event), t->total);
		int ret = each_rec(st, t, put_stack, out);
		if (!ret) {
			fputs("],\n\"weights\":[", out);
			ret = each_rec(st, t, put_weight, out);
		}
		if (ret)
			return ret;
		fputs("]}", out);
	}
	fputs("],\n\"shared\":{\"frames\":[", out);
	size_t nf = prec_hashmap_count(&st->frames);
	for (size_t i = 0; i < nf; i++) {
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		ana_json_str(out, st->frametab[i].sym);
		if (st->frametab[i].dso) {
			fputs(",\"file\":", out);
			ana_json_str(out, st->frametab[i].dso);
		}
		fputc('}', out);
	}
	fputs("]}}\n", out);
	return fflush(out) || ferror(out) ? -EIO : 0;
}

int ana_export_speedscope(struct ana_trace *s, const struct ana_filter *f, FILE *out)
{
	struct sstate st;
	memset(&st, 0, sizeof(st));
	st.s = s;
	st.f = f;
	prec_hashmap_init(&st.threads, sizeof(struct threadkey), sizeof(struct thread *));
	for (size_t i = 0; i < s->nevents; i++)
		st.nsampling += s->events[i]->sampling != 0;
	prec_hashmap_init(&st.frames, sizeof(struct framekey), sizeof(uint32_t));
	prec_hashmap_init(&st.stacks, sizeof(const char *), sizeof(uint32_t));
	st.keycap = MAX_FRAMES * 9 + 1;   /* hex index and a comma per frame */
	st.locs = calloc(MAX_FRAMES, sizeof(*st.locs));
	st.ids = calloc(MAX_FRAMES, sizeof(*st.ids));
	st.key = malloc(st.keycap);
	int ret = -ENOMEM;
	if (!st.locs || !st.ids || !st.key)
		goto out;
	ret = -EIO;
	if (!(st.spill = tmpfile()))
		goto out;
	if ((ret = read_samples(&st)) < 0)
		goto out;
	ret = write_file(&st, out);
out:
	if (st.spill)
		fclose(st.spill);
	for (size_t i = 0; i < st.nthreads; i++) {
		free(st.order[i]->chunks);
		free(st.order[i]);
	}
	free(st.order);
	free(st.frametab);
	free(st.stackpool);
	free(st.stackoff);
	free(st.locs);
	free(st.ids);
	free(st.key);
	prec_hashmap_release(&st.threads);
	prec_hashmap_release(&st.frames);
	prec_hashmap_release(&st.stacks);
	return ret;
}
