/*
 * speedscope.c - speedscope's JSON file format (see speedscope.h).
 *
 * Call order: pass over the samples (merge order) -> per sample: resolve,
 * intern its frames and stack, append (stack, weight) to its thread's
 * chunk (full chunks go to the spill file) -> write "profiles" (each
 * thread's chunks read back twice: stacks, then weights) and "shared".
 * JSON objects are unordered, so the frame table, complete only at the
 * end, is written last. A dataset's traces are read one after the other
 * into the same tables (names pooled in the dataset's pool, threads keyed
 * by host too), and the file is written once, at the end.
 *
 * Memory: a thread holds its unspilled samples in a buffer that grows
 * with them (16 bytes each, at most CHUNK), and all threads together at
 * most BUFFERED: past it every buffer is spilled and freed. So a trace
 * of many short threads costs its thread table (about 100 bytes and a
 * chunk entry per spill each), not 4 KiB a thread.
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
#define BUFFERED 8192   /* samples all threads hold (128 KiB) before spilling */

struct rec {
	uint32_t stack;
	uint32_t pad;
	uint64_t weight;
};

struct chunk {
	long off;
	size_t n;
};

struct threadkey {               /* zeroed before filling: hashed as bytes */
	uint32_t host, tid;         /* host number (0: one host) */
	const char *event;          /* pooled event name, NULL unknown */
};

struct thread {
	struct threadkey k;
	uint32_t pid;
	const char *host;           /* pooled, NULL for one host */
	const char *name;           /* pooled: the last name a trace gave it */
	uint32_t seen;              /* the last trace (number) it had samples in */
	int clock;                  /* its event is a clock: ns weights */
	uint64_t samples, total;
	struct rec *buf;            /* n of cap, cap <= CHUNK */
	size_t n, cap;
	struct chunk *chunks;
	size_t nchunks, capchunks;
};

struct framekey {
	const char *dso, *sym;
};

struct ana_speedscope {
	struct ana_trace *s;           /* the trace being added */
	const struct ana_filter *f;
	FILE *out, *spill;
	struct ana_strpool *pool;      /* names kept across traces */
	const char *name;              /* the file's name: the first trace's */
	uint32_t ntraces;
	uint32_t host_no;              /* of the trace being added */
	const char *host;
	struct prec_hashmap hosts;     /* pooled name -> uint32 number */
	size_t buffered;               /* samples in the threads' buffers */
	struct prec_hashmap threads;   /* struct threadkey -> struct thread * */
	int nsampling;                 /* sampling events (the most of a trace) */
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

static int frame_index(struct ana_speedscope *st, const struct ana_loc *loc, uint32_t *out)
{
	struct framekey k;
	memset(&k, 0, sizeof(k));
	const char *sym = ana_frame_name(st->s, loc);
	k.sym = sym ? ana_strpool_intern(st->pool, sym) : NULL;
	k.dso = loc->dso ? ana_strpool_intern(st->pool, loc->dso) : NULL;
	if (!k.sym || (loc->dso && !k.dso))
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
static int stack_index(struct ana_speedscope *st, int n, uint32_t *out)
{
	size_t len = 0;
	for (int i = n - 1; i >= 0; i--) {   /* root first */
		int ret = frame_index(st, &st->locs[i], &st->ids[n - 1 - i]);
		if (ret)
			return ret;
		len += (size_t)snprintf(st->key + len, st->keycap - len, "%" PRIx32 ",",
					st->ids[n - 1 - i]);
	}
	const char *k = ana_strpool_intern_n(st->pool, st->key, len);
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

static int spill_chunk(struct ana_speedscope *st, struct thread *t)
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
	st->buffered -= t->n;
	t->n = 0;
	return 0;
}

/* Past BUFFERED: every thread's buffer to the spill file, and freed. */
static int spill_all(struct ana_speedscope *st)
{
	for (size_t i = 0; i < st->nthreads; i++) {
		struct thread *t = st->order[i];
		int ret = t->n ? spill_chunk(st, t) : 0;
		if (ret)
			return ret;
		free(t->buf);
		t->buf = NULL;
		t->cap = 0;
	}
	return 0;
}

static int on_sample(struct ana_speedscope *st, const struct prec_packet *p)
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
	struct threadkey tk;
	memset(&tk, 0, sizeof(tk));
	tk.host = st->host_no;
	tk.tid = smp->tid;
	int ev = ana_trace_event_of(s, smp->id);
	if (ev >= 0 && !(tk.event = ana_strpool_intern(st->pool, ana_trace_event_name(s, ev))))
		return -ENOMEM;
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
		(*tp)->host = st->host;
		/* a clock event's period is nanoseconds; others count */
		(*tp)->clock = tk.event && strstr(tk.event, "clock");
		st->order[st->nthreads++] = *tp;
	}
	struct thread *t = *tp;
	t->seen = st->ntraces;
	if (t->n == t->cap &&
	    prec_grow(&t->buf, &t->cap, t->cap ? t->cap * 2 : 16, sizeof(*t->buf)))
		return -ENOMEM;
	t->samples++;
	t->total += r.weight;
	t->buf[t->n++] = r;
	st->buffered++;
	if (t->n == CHUNK && (ret = spill_chunk(st, t)) < 0)
		return ret;
	return st->buffered >= BUFFERED ? spill_all(st) : 0;
}

static int read_samples(struct ana_speedscope *st)
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
static int each_rec(struct ana_speedscope *st, struct thread *t,
		    void (*fn)(FILE *out, const struct ana_speedscope *st, const struct rec *r, int first),
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

static void put_stack(FILE *out, const struct ana_speedscope *st, const struct rec *r, int first)
{
	fputs(first ? "[" : ",[", out);
	for (size_t i = st->stackoff[r->stack]; i < st->stackoff[r->stack + 1]; i++)
		fprintf(out, "%s%" PRIu32, i > st->stackoff[r->stack] ? "," : "", st->stackpool[i]);
	fputc(']', out);
}

static void put_weight(FILE *out, const struct ana_speedscope *st, const struct rec *r, int first)
{
	(void)st;
	fprintf(out, "%s%" PRIu64, first ? "" : ",", r->weight);
}

static int write_file(struct ana_speedscope *st, FILE *out)
{
	size_t active = 0;
	for (size_t i = 1; i < st->nthreads; i++)
		if (st->order[i]->samples > st->order[active]->samples)
			active = i;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
	      "\"exporter\":\"perfrec-analyze\",\"name\":", out);
	ana_json_str(out, st->name ? st->name : "");
	fprintf(out, ",\"activeProfileIndex\":%zu,\n\"profiles\":[", active);
	for (size_t i = 0; i < st->nthreads; i++) {
		struct thread *t = st->order[i];
		char name[512];
		int len = snprintf(name, sizeof(name), "%s (%s%s%spid %" PRIu32 ", tid %" PRIu32 ")",
				   t->name, t->host ? "host " : "", t->host ? t->host : "",
				   t->host ? ", " : "", t->pid, t->k.tid);
		if (st->nsampling > 1 && len > 0 && (size_t)len < sizeof(name))
			snprintf(name + len, sizeof(name) - (size_t)len, " %s",
				 t->k.event ? t->k.event : "?");
		fprintf(out, "%s\n{\"type\":\"sampled\",\"name\":", i ? "," : "");
		ana_json_str(out, name);
		fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64
			",\n\"samples\":[", t->clock ? "nanoseconds" : "none", t->total);
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

int ana_speedscope_new(struct ana_speedscope **out, const struct ana_filter *f,
		       struct ana_strpool *pool, FILE *fout)
{
	struct ana_speedscope *st = calloc(1, sizeof(*st));
	*out = NULL;
	if (!st)
		return -ENOMEM;
	st->f = f;
	st->out = fout;
	st->pool = pool;
	prec_hashmap_init(&st->hosts, sizeof(const char *), sizeof(uint32_t));
	prec_hashmap_init(&st->threads, sizeof(struct threadkey), sizeof(struct thread *));
	prec_hashmap_init(&st->frames, sizeof(struct framekey), sizeof(uint32_t));
	prec_hashmap_init(&st->stacks, sizeof(const char *), sizeof(uint32_t));
	st->keycap = MAX_FRAMES * 9 + 1;   /* hex index and a comma per frame */
	st->locs = calloc(MAX_FRAMES, sizeof(*st->locs));
	st->ids = calloc(MAX_FRAMES, sizeof(*st->ids));
	st->key = malloc(st->keycap);
	if (!st->locs || !st->ids || !st->key || !(st->spill = tmpfile())) {
		int ret = st->locs && st->ids && st->key ? -EIO : -ENOMEM;
		ana_speedscope_free(st);
		return ret;
	}
	*out = st;
	return 0;
}

int ana_speedscope_add(struct ana_speedscope *st, struct ana_trace *s, const char *host)
{
	st->s = s;
	st->ntraces++;
	st->host = NULL;
	st->host_no = 0;
	if (!st->name) {
		const char *base = strrchr(s->path, '/');
		if (!(st->name = ana_strpool_intern(st->pool, base ? base + 1 : s->path)))
			return -ENOMEM;
	}
	if (host) {
		const char *h = ana_strpool_intern(st->pool, host);
		int created;
		uint32_t *no = h ? prec_hashmap_get(&st->hosts, &h, &created) : NULL;
		if (!no)
			return -ENOMEM;
		if (created)
			*no = (uint32_t)prec_hashmap_count(&st->hosts);
		st->host = h;
		st->host_no = *no;
	}
	int nsampling = 0;
	for (size_t i = 0; i < s->nevents; i++)
		nsampling += s->events[i]->sampling != 0;
	if (nsampling > st->nsampling)
		st->nsampling = nsampling;
	int ret = read_samples(st);
	/* the threads' names: the last this trace knows (what they became) */
	for (size_t i = 0; ret >= 0 && i < st->nthreads; i++) {
		struct thread *t = st->order[i];
		if (t->seen != st->ntraces)
			continue;
		const char *comm = ana_trace_comm_name(s, t->k.tid, s->t_max);
		if (!comm || !(t->name = ana_strpool_intern(st->pool, comm)))
			ret = -ENOMEM;
	}
	st->s = NULL;
	return ret;
}

int ana_speedscope_finish(struct ana_speedscope *st)
{
	return write_file(st, st->out);
}

void ana_speedscope_free(struct ana_speedscope *st)
{
	if (!st)
		return;
	if (st->spill)
		fclose(st->spill);
	for (size_t i = 0; i < st->nthreads; i++) {
		free(st->order[i]->buf);
		free(st->order[i]->chunks);
		free(st->order[i]);
	}
	free(st->order);
	free(st->frametab);
	free(st->stackpool);
	free(st->stackoff);
	free(st->locs);
	free(st->ids);
	free(st->key);
	prec_hashmap_release(&st->hosts);
	prec_hashmap_release(&st->threads);
	prec_hashmap_release(&st->frames);
	prec_hashmap_release(&st->stacks);
	free(st);
}
