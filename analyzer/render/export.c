/*
 * export.c - folded stacks and pprof.
 *
 * Both walk the samples once (file order, parallel decode) and aggregate
 * distinct stacks: a stack is turned into an interned string key so the
 * table is keyed by one pointer. For pprof the key holds location ids
 * ("comm\x1f" then ids as decimal, comma-separated, leaf first).
 *
 * Names are looked up once per callchain node, not per sample: a frame's
 * samples that share (pid, ip, misc, interned callchain, the count the
 * writer cut from it, comm) name the same stack, so the first of them is
 * resolved and its stack kept in `chains`, and the others only add to that
 * stack's counts. Folded stacks are counted per node of a tree of the
 * trace's names (comm, then the frames from the outermost), so a stack
 * met again in a later frame costs a lookup per frame name, not a string
 * built and interned; the tree becomes the lines' string keys once, when
 * the trace ends. The table
 * restarts with every frame (callchain ids are the frame's own, SPEC.md);
 * a frame spans about a second, so a mapping replaced inside one frame at
 * the same address names that frame's later samples as its first. Samples
 * with a copy of the user stack (--call-graph dwarf) differ by the stack's
 * bytes: each is unwound and named itself.
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/render/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "format/base/hashmap.h"
#include "analyzer/symbols/resolve.h"
#include "analyzer/symbols/ustack.h"
#include "analyzer/read/trace.h"
#include "analyzer/render/table.h"
#include "profile.pb-c.h"

#define MAX_FRAMES 256

struct agg {
	uint64_t samples, period;
};

struct buf {
	char *p;
	size_t len, cap;
};

static int buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

/* A sample's callchain node within one frame (chains' key): zeroed
 * before filling, padding included, since it is hashed as bytes. */
struct chainkey {
	uint64_t chain, ip;
	uint32_t pid, misc;
	uint32_t cut;                   /* what the writer cut: not in the chain */
	const char *comm;
};

struct chainval {
	const char *key;                /* interned stack key (pprof) */
	uint32_t node;                  /* the stack's node (folded) */
	uint64_t cut_chains, cut_frames;   /* what resolving it added to s->cut */
};

struct ana_export {
	struct ana_strpool *pool;       /* keys and pprof names (outlives traces) */
	struct ana_trace *s;            /* the trace being added */
	const char *host;               /* its host (pooled), or NULL */
	const struct ana_filter *f;
	int pprof;
	int off_cpu;
	/* pprof's value type (the first trace's sampling event) and the
	 * traces' wall-clock span */
	const char *ev, *unit;
	uint64_t wall_lo, wall_hi;
	struct ana_loc *frames;
	struct buf key;
	struct prec_hashmap stacks;     /* const char * key -> struct agg */
	struct prec_hashmap chains;     /* struct chainkey -> struct chainval */
	struct prec_hashmap nodes;      /* struct nodekey -> struct agg (folded;
					 * the trace's names) */
	uint64_t chains_frame;          /* frame_offset chains holds ids of */
	/* pprof tables */
	struct prec_hashmap locs;       /* {dso, sym} -> uint64 id */
	struct prec_hashmap maps;       /* dso -> uint64 id */
	uint64_t nlocs, nmaps;
	uint64_t total;
};

struct lockey {
	const char *dso, *sym;
};

/* A node of the folded stack tree: its parent's id (index + 1, 0 for
 * the comm at the root) and its name. */
struct nodekey {
	uint64_t parent;
	const char *name;
};

/* Folded frames may not contain ';' and should not end in a space count:
 * replace ';' and newlines by '_' (names keep their spaces). */
static int add_frame_name(struct buf *b, const char *n)
{
	size_t start = b->len;
	int ret = buf_add(b, n, strlen(n));
	for (size_t i = start; !ret && i < b->len; i++)
		if (b->p[i] == ';' || b->p[i] == '\n' || b->p[i] == '\r')
			b->p[i] = '_';
	return ret;
}

/* A pprof key's label (host, comm) may not hold the key's separators:
 * they become '_'. */
static int add_label(struct buf *b, const char *n)
{
	size_t start = b->len;
	int ret = buf_add(b, n, strlen(n));
	for (size_t i = start; !ret && i < b->len; i++)
		if (b->p[i] == '\x1e' || b->p[i] == '\x1f')
			b->p[i] = '_';
	return ret;
}

static int loc_id(struct ana_export *st, const struct ana_loc *fr, uint64_t *id)
{
	struct lockey k;
	memset(&k, 0, sizeof(k));
	/* pooled in the export's pool: equal across the dataset's traces */
	const char *sym = ana_frame_name(st->s, fr);
	k.sym = sym ? ana_strpool_intern(st->pool, sym) : NULL;
	k.dso = fr->dso ? ana_strpool_intern(st->pool, fr->dso) : NULL;
	if (!k.sym || (fr->dso && !k.dso))
		return -ENOMEM;
	int created;
	uint64_t *v = prec_hashmap_get(&st->locs, &k, &created);
	if (!v)
		return -ENOMEM;
	if (created)
		*v = ++st->nlocs;
	*id = *v;
	if (fr->dso) {
		uint64_t *m = prec_hashmap_get(&st->maps, &k.dso, &created);
		if (!m)
			return -ENOMEM;
		if (created)
			*m = ++st->nmaps;
	}
	return 0;
}

/* The pprof stack key of frames[0..n) under comm, interned in the
 * export's pool: [host "\x1e"] comm "\x1f" and location ids, leaf first
 * (folded stacks are keyed by fold_nodes()). NULL when out of memory. */
static const char *stack_key(struct ana_export *st, const char *comm, int n)
{
	st->key.len = 0;
	int ret = 0;
	if (st->host)
		ret = add_label(&st->key, st->host);
	if (!ret && st->host)
		ret = buf_add(&st->key, "\x1e", 1);
	if (!ret)
		ret = add_label(&st->key, comm);
	if (!ret)
		ret = buf_add(&st->key, "\x1f", 1);
	for (int i = 0; !ret && i < n; i++) {
		uint64_t id;
		char num[24];
		ret = loc_id(st, &st->frames[i], &id);
		if (ret)
			break;
		int len = snprintf(num, sizeof(num), "%s%" PRIu64, i ? "," : "", id);
		ret = buf_add(&st->key, num, (size_t)len);
	}
	return ret ? NULL : ana_strpool_intern_n(st->pool, st->key.p, st->key.len);
}

static int add_stack(struct ana_export *st, const char *k, uint64_t count, uint64_t weight)
{
	struct agg *a = prec_hashmap_get(&st->stacks, &k, NULL);
	if (!a)
		return -ENOMEM;
	a->samples += count;
	a->period += weight;
	st->total++;
	return 0;
}

/* The folded stack tree's node of frames[0..n) under comm: 0 when out of
 * memory. */
static uint32_t stack_node(struct ana_export *st, const char *comm, int n)
{
	uint32_t id = 0;
	for (int i = n; i >= 0; i--) {   /* i == n: the comm */
		struct nodekey k;
		memset(&k, 0, sizeof(k));
		k.parent = id;
		k.name = i == n ? comm : ana_frame_name(st->s, &st->frames[i]);
		if (!k.name)
			return 0;
		struct agg *a = prec_hashmap_get(&st->nodes, &k, NULL);
		if (!a)
			return 0;
		id = (uint32_t)prec_hashmap_index(&st->nodes, a) + 1;
	}
	return id;
}

/* One stack of frames[0..n) under comm counted: by node (folded) or by
 * key (pprof); *cv, when given, keeps which for the chain's next samples. */
static int count_frames(struct ana_export *st, const char *comm, int n,
			uint64_t count, uint64_t weight, struct chainval *cv)
{
	if (st->pprof) {
		const char *k = stack_key(st, comm, n);
		if (!k)
			return -ENOMEM;
		if (cv)
			cv->key = k;
		return add_stack(st, k, count, weight);
	}
	uint32_t id = stack_node(st, comm, n);
	if (!id)
		return -ENOMEM;
	if (cv)
		cv->node = id;
	struct agg *a = prec_hashmap_val(&st->nodes, id - 1);
	a->samples += count;
	a->period += weight;
	st->total++;
	return 0;
}

static int count_again(struct ana_export *st, const struct chainval *cv,
		       uint64_t count, uint64_t weight)
{
	if (st->pprof)
		return add_stack(st, cv->key, count, weight);
	struct agg *a = prec_hashmap_val(&st->nodes, cv->node - 1);
	a->samples += count;
	a->period += weight;
	st->total++;
	return 0;
}

/* The trace's folded stack tree into the stacks' string keys, the
 * folded lines ("host;" first when the dataset has several hosts, then
 * the comm and the frames from the outermost): each counted node once.
 * Empties the tree. */
static int fold_nodes(struct ana_export *st)
{
	const char *names[MAX_FRAMES + 2];
	int ret = 0;
	for (size_t i = 0; i < prec_hashmap_count(&st->nodes) && !ret; i++) {
		const struct agg *a = prec_hashmap_val(&st->nodes, i);
		if (!a->samples && !a->period)
			continue;
		size_t depth = 0;
		for (uint64_t id = i + 1; id && depth < MAX_FRAMES + 2;) {
			const struct nodekey *k = prec_hashmap_key(&st->nodes, (size_t)id - 1);
			names[depth++] = k->name;
			id = k->parent;
		}
		st->key.len = 0;
		if (st->host) {
			ret = add_frame_name(&st->key, st->host);
			if (!ret)
				ret = buf_add(&st->key, ";", 1);
		}
		for (size_t j = depth; j-- > 0 && !ret;) {
			if (j != depth - 1)
				ret = buf_add(&st->key, ";", 1);
			if (!ret)
				ret = add_frame_name(&st->key, names[j]);
		}
		const char *k = ret ? NULL : ana_strpool_intern_n(st->pool, st->key.p, st->key.len);
		struct agg *to = k ? prec_hashmap_get(&st->stacks, &k, NULL) : NULL;
		if (!to) {
			ret = -ENOMEM;
			break;
		}
		to->samples += a->samples;
		to->period += a->period;
	}
	prec_hashmap_clear(&st->nodes);
	return ret;
}

static int on_packet(void *ctx, const struct prec_packet *p)
{
	struct ana_export *st = ctx;
	struct ana_trace *s = st->s;
	const struct ana_filter *f = st->f;
	uint64_t count, weight;
	const char *comm;
	int n;
	if (st->off_cpu && p->pkt->data_case == PERFREC__PACKET__DATA_OFF_CPU) {
		const Perfrec__OffCpu *oc = p->pkt->off_cpu;
		if (!(comm = ana_trace_comm_name(s, oc->tid, p->time)))
			return -ENOMEM;
		if (f && (!ana_filter_offcpu(f, oc->count, oc->cpu, oc->pid, oc->tid, p->time) ||
			  !ana_filter_comm(f, comm) ||
			  !ana_filter_event(f, ana_trace_event_name(s,
					ana_trace_offcpu_event(s)))))
			return 0;
		n = ana_resolve_offcpu(s, p, st->frames, MAX_FRAMES);
		if (n < 0)
			return n;
		count = oc->count ? oc->count : 1;
		weight = oc->duration;
	} else if (!st->off_cpu && p->pkt->data_case == PERFREC__PACKET__DATA_SAMPLE) {
		const Perfrec__Sample *smp = p->pkt->sample;
		int keep = ana_filter_sample(f, s, p, &comm);
		if (keep <= 0)
			return keep;
		if (!comm && !(comm = ana_trace_comm_name(s, smp->tid, p->time)))
			return -ENOMEM;
		count = 1;
		weight = smp->period ? smp->period : 1;
		if (!ana_ustack_present(smp)) {
			struct chainkey ck;
			memset(&ck, 0, sizeof(ck));
			ck.chain = smp->callchain;
			ck.ip = smp->ip;
			ck.pid = smp->pid;
			ck.misc = smp->misc;
			ck.cut = smp->callchain_cut;
			ck.comm = comm;
			if (st->chains_frame != p->frame_offset) {
				prec_hashmap_clear(&st->chains);
				st->chains_frame = p->frame_offset;
			}
			int created;
			struct chainval *cv = prec_hashmap_get(&st->chains, &ck, &created);
			if (!cv)
				return -ENOMEM;
			if (!created) {
				s->cut.chains += cv->cut_chains;
				s->cut.frames += cv->cut_frames;
				return count_again(st, cv, count, weight);
			}
			uint64_t cc = s->cut.chains, cf = s->cut.frames;
			/* cv moves when a later insert grows the table: it is
			 * filled from a copy once the stack is counted */
			struct chainval v;
			memset(&v, 0, sizeof(v));
			n = ana_resolve_sample(s, p, st->frames, MAX_FRAMES);
			int ret = n < 0 ? n : count_frames(st, comm, n, count, weight, &v);
			if (ret < 0) {
				prec_hashmap_clear(&st->chains);   /* no half-filled entry */
				return ret;
			}
			v.cut_chains = s->cut.chains - cc;
			v.cut_frames = s->cut.frames - cf;
			*(struct chainval *)prec_hashmap_find(&st->chains, &ck) = v;
			return 0;
		}
		n = ana_resolve_sample(s, p, st->frames, MAX_FRAMES);
		if (n < 0)
			return n;
	} else {
		return 0;
	}
	return count_frames(st, comm, n, count, weight, NULL);
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(**(const char *const *const *)a, **(const char *const *const *)b);
}

static int write_folded(struct ana_export *st, FILE *out)
{
	int off_cpu = st->off_cpu;
	size_t n = prec_hashmap_count(&st->stacks);
	const char ***order = malloc((n ? n : 1) * sizeof(*order));
	int ret = -ENOMEM;
	if (!order)
		goto out;
	for (size_t i = 0; i < n; i++)
		order[i] = prec_hashmap_key(&st->stacks, i);
	prec_sort(order, n, sizeof(*order), cmp_strp);
	for (size_t i = 0; i < n; i++) {
		const struct agg *a = prec_hashmap_find(&st->stacks, order[i]);
		/* off-CPU: microseconds, rounded */
		uint64_t v = off_cpu ? (a->period + 500) / 1000 : a->samples;
		if (!v)
			continue;
		/* escaped: a newline in a name must not start a line */
		ana_text_str(out, *order[i]);
		fprintf(out, " %" PRIu64 "\n", v);
	}
	fflush(out);
	ret = ferror(out) ? -EIO : 0;
out:
	free(order);
	return ret;
}

int ana_gzip_write(const void *buf, size_t len, FILE *out)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	unsigned char chunk[65536];
	const unsigned char *in = buf;
	size_t left = len;
	int ret = 0, flush;
	do {
		uInt n = left > (1u << 30) ? (1u << 30) : (uInt)left;
		z.next_in = (unsigned char *)in;
		z.avail_in = n;
		in += n;
		left -= n;
		flush = left ? Z_NO_FLUSH : Z_FINISH;
		do {
			z.next_out = chunk;
			z.avail_out = sizeof(chunk);
			int zr = deflate(&z, flush);
			if (zr == Z_STREAM_ERROR) {
				ret = -EIO;
				goto out;
			}
			size_t have = sizeof(chunk) - z.avail_out;
			if (have && fwrite(chunk, 1, have, out) != have) {
				ret = -EIO;
				goto out;
			}
		} while (z.avail_out == 0);
	} while (flush != Z_FINISH);
out:
	deflateEnd(&z);
	if (!ret && fflush(out))
		ret = -EIO;
	return ret;
}

/* pprof string table: string -> index, entry 0 = "". */
struct strtab {
	struct prec_hashmap idx;   /* const char * (pooled) -> int64 */
	char **v;
	size_t n, cap;
	struct ana_strpool *pool;
};

static int64_t str_id(struct strtab *t, const char *s)
{
	const char *k = ana_strpool_intern(t->pool, s ? s : "");
	if (!k)
		return -1;
	int created;
	int64_t *v = prec_hashmap_get(&t->idx, &k, &created);
	if (!v)
		return -1;
	if (created) {
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 64;
			char **a = realloc(t->v, cap * sizeof(*a));
			if (!a)
				return -1;
			t->v = a;
			t->cap = cap;
		}
		t->v[t->n] = (char *)k;
		*v = (int64_t)t->n++;
	}
	return *v;
}

static int write_pprof(struct ana_export *st, FILE *out)
{
	int off_cpu = st->off_cpu;
	struct strtab tab;
	memset(&tab, 0, sizeof(tab));
	prec_hashmap_init(&tab.idx, sizeof(const char *), sizeof(int64_t));
	tab.pool = st->pool;
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt[2], pt;
	Perftools__Profiles__ValueType *vtp[2] = { &vt[0], &vt[1] };
	Perftools__Profiles__Sample *samples = NULL, **samplep = NULL;
	Perftools__Profiles__Label *labels = NULL, **labelp = NULL;
	Perftools__Profiles__Location *locs = NULL, **locp = NULL;
	Perftools__Profiles__Line *lines = NULL, **linep = NULL;
	Perftools__Profiles__Function *funcs = NULL, **funcp = NULL;
	Perftools__Profiles__Mapping *maps = NULL, **mapp = NULL;
	uint64_t *ids = NULL;
	int64_t *values = NULL;
	uint8_t *packed = NULL;
	size_t nids = 0;

	int ret = -ENOMEM;
	if (str_id(&tab, "") != 0)
		goto out;

	/* Value types: samples/count and the event's period unit. */
	const char *ev = st->ev ? st->ev : "events", *unit = st->ev ? st->unit : "count";
	perftools__profiles__value_type__init(&vt[0]);
	perftools__profiles__value_type__init(&vt[1]);
	perftools__profiles__value_type__init(&pt);
	vt[0].type = str_id(&tab, off_cpu ? "blocks" : "samples");
	vt[0].unit = str_id(&tab, "count");
	vt[1].type = str_id(&tab, ev);
	vt[1].unit = str_id(&tab, unit);
	pt = vt[1];
	prof.n_sample_type = 2;
	prof.sample_type = vtp;
	prof.period_type = &pt;
	int64_t comm_key = str_id(&tab, "comm"), host_key = -1;   /* when used */

	/* Mappings. */
	size_t nm = prec_hashmap_count(&st->maps);
	maps = calloc(nm ? nm : 1, sizeof(*maps));
	mapp = calloc(nm ? nm : 1, sizeof(*mapp));
	if (!maps || !mapp)
		goto out;
	for (size_t i = 0; i < nm; i++) {
		const char *dso = *(const char **)prec_hashmap_key(&st->maps, i);
		uint64_t id = *(uint64_t *)prec_hashmap_val(&st->maps, i);
		perftools__profiles__mapping__init(&maps[id - 1]);
		maps[id - 1].id = id;
		maps[id - 1].filename = str_id(&tab, dso);
		maps[id - 1].has_functions = 1;
		mapp[id - 1] = &maps[id - 1];
	}
	prof.n_mapping = nm;
	prof.mapping = mapp;

	/* One function and one location per (dso, sym). */
	size_t nl = prec_hashmap_count(&st->locs);
	locs = calloc(nl ? nl : 1, sizeof(*locs));
	locp = calloc(nl ? nl : 1, sizeof(*locp));
	lines = calloc(nl ? nl : 1, sizeof(*lines));
	linep = calloc(nl ? nl : 1, sizeof(*linep));
	funcs = calloc(nl ? nl : 1, sizeof(*funcs));
	funcp = calloc(nl ? nl : 1, sizeof(*funcp));
	if (!locs || !locp || !lines || !linep || !funcs || !funcp)
		goto out;
	for (size_t i = 0; i < nl; i++) {
		const struct lockey *k = prec_hashmap_key(&st->locs, i);
		uint64_t id = *(uint64_t *)prec_hashmap_val(&st->locs, i);
		size_t j = id - 1;
		perftools__profiles__function__init(&funcs[j]);
		funcs[j].id = id;
		funcs[j].name = str_id(&tab, k->sym);
		funcs[j].system_name = funcs[j].name;
		funcs[j].filename = str_id(&tab, k->dso ? k->dso : "");
		funcp[j] = &funcs[j];
		perftools__profiles__line__init(&lines[j]);
		lines[j].function_id = id;
		linep[j] = &lines[j];
		perftools__profiles__location__init(&locs[j]);
		locs[j].id = id;
		if (k->dso) {
			uint64_t *m = prec_hashmap_find(&st->maps, &k->dso);
			locs[j].mapping_id = m ? *m : 0;
		}
		locs[j].n_line = 1;
		locs[j].line = &linep[j];
		locp[j] = &locs[j];
	}
	prof.n_location = nl;
	prof.location = locp;
	prof.n_function = nl;
	prof.function = funcp;

	/* Samples: parse the location ids back out of each stack key. */
	size_t ns = prec_hashmap_count(&st->stacks);
	for (size_t i = 0; i < ns; i++) {
		const char *k = *(const char **)prec_hashmap_key(&st->stacks, i);
		const char *sep = strchr(k, '\x1f');
		for (const char *q = sep ? sep + 1 : k; *q; q++)
			if (*q == ',')
				nids++;
		nids++;
	}
	samples = calloc(ns ? ns : 1, sizeof(*samples));
	samplep = calloc(ns ? ns : 1, sizeof(*samplep));
	labels = calloc(2 * (ns ? ns : 1), sizeof(*labels));   /* comm, host */
	labelp = calloc(2 * (ns ? ns : 1), sizeof(*labelp));
	ids = calloc(nids ? nids : 1, sizeof(*ids));
	values = calloc(2 * (ns ? ns : 1), sizeof(*values));
	if (!samples || !samplep || !labels || !labelp || !ids || !values)
		goto out;
	size_t used = 0;
	for (size_t i = 0; i < ns; i++) {
		const char *k = *(const char **)prec_hashmap_key(&st->stacks, i);
		const struct agg *a = prec_hashmap_val(&st->stacks, i);
		const char *sep = strchr(k, '\x1f');
		Perftools__Profiles__Sample *sm = &samples[i];
		perftools__profiles__sample__init(sm);
		sm->location_id = &ids[used];
		for (const char *q = sep ? sep + 1 : ""; *q;) {
			char *end;
			ids[used + sm->n_location_id++] = strtoull(q, &end, 10);
			q = *end == ',' ? end + 1 : end;
			if (end == q && !*end)
				break;
		}
		used += sm->n_location_id;
		values[2 * i] = (int64_t)a->samples;
		values[2 * i + 1] = (int64_t)a->period;
		sm->n_value = 2;
		sm->value = &values[2 * i];
		/* [host "\x1e"] comm "\x1f": the labels */
		const char *hsep = memchr(k, '\x1e', sep ? (size_t)(sep - k) : strlen(k));
		const char *cstart = hsep ? hsep + 1 : k;
		sm->label = &labelp[2 * i];
		for (int l = 0; l < (hsep ? 2 : 1); l++) {
			Perftools__Profiles__Label *lb = &labels[2 * i + (size_t)l];
			const char *from = l ? k : cstart;
			size_t len = l ? (size_t)(hsep - k) :
				(sep ? (size_t)(sep - cstart) : strlen(cstart));
			char name[256];
			if (len >= sizeof(name))
				len = sizeof(name) - 1;
			memcpy(name, from, len);
			name[len] = '\0';
			perftools__profiles__label__init(lb);
			if (l && host_key < 0)
				host_key = str_id(&tab, "host");
			lb->key = l ? host_key : comm_key;
			lb->str = str_id(&tab, name);
			labelp[2 * i + (size_t)l] = lb;
			sm->n_label++;
		}
		samplep[i] = sm;
	}
	prof.n_sample = ns;
	prof.sample = samplep;

	if (st->wall_lo <= st->wall_hi) {
		prof.time_nanos = (int64_t)st->wall_lo;
		prof.duration_nanos = (int64_t)(st->wall_hi - st->wall_lo);
	}
	prof.n_string_table = tab.n;
	prof.string_table = tab.v;
	for (size_t i = 0; i < tab.n; i++)
		if (!tab.v[i])
			goto out;

	size_t len = perftools__profiles__profile__get_packed_size(&prof);
	packed = malloc(len ? len : 1);
	if (!packed)
		goto out;
	perftools__profiles__profile__pack(&prof, packed);
	ret = ana_gzip_write(packed, len, out);
out:
	free(packed);
	free(samples);
	free(samplep);
	free(labels);
	free(labelp);
	free(ids);
	free(values);
	free(locs);
	free(locp);
	free(lines);
	free(linep);
	free(funcs);
	free(funcp);
	free(maps);
	free(mapp);
	free(tab.v);
	prec_hashmap_release(&tab.idx);
	return ret;
}

int ana_export_new(struct ana_export **out, int pprof, int off_cpu,
		   const struct ana_filter *f, struct ana_strpool *pool)
{
	struct ana_export *st = calloc(1, sizeof(*st));
	*out = NULL;
	if (!st)
		return -ENOMEM;
	st->pool = pool;
	st->f = f;
	st->pprof = pprof;
	st->off_cpu = off_cpu;
	st->wall_lo = UINT64_MAX;
	prec_hashmap_init(&st->stacks, sizeof(const char *), sizeof(struct agg));
	prec_hashmap_init(&st->chains, sizeof(struct chainkey), sizeof(struct chainval));
	prec_hashmap_init(&st->nodes, sizeof(struct nodekey), sizeof(struct agg));
	prec_hashmap_init(&st->locs, sizeof(struct lockey), sizeof(uint64_t));
	prec_hashmap_init(&st->maps, sizeof(const char *), sizeof(uint64_t));
	st->frames = calloc(MAX_FRAMES, sizeof(*st->frames));
	if (!st->frames) {
		ana_export_free(st);
		return -ENOMEM;
	}
	*out = st;
	return 0;
}

/* pprof's value type: the first sampling event's name, nanoseconds for
 * a clock event (a dataset's traces describe the same events). */
static int value_type(struct ana_export *st, struct ana_trace *s)
{
	const char *ev = NULL, *unit = "count";
	if (st->ev)
		return 0;
	if (st->off_cpu) {
		ev = "off-cpu";
		unit = "nanoseconds";
	}
	for (size_t i = 0; !ev && i < s->nevents; i++)
		if (s->events[i]->sampling) {
			ev = ana_trace_event_name(s, (int)i);
			if (strstr(ev, "clock"))
				unit = "nanoseconds";
		}
	if (!ev)
		return 0;   /* a later trace may name it */
	st->unit = unit;
	st->ev = ana_strpool_intern(st->pool, ev);
	return st->ev ? 0 : -ENOMEM;
}

int ana_export_add(struct ana_export *st, struct ana_trace *s, const char *host)
{
	st->s = s;
	st->host = NULL;
	if (host && !(st->host = ana_strpool_intern(st->pool, host)))
		return -ENOMEM;
	/* callchain ids and comm pointers are the trace's own */
	prec_hashmap_clear(&st->chains);
	prec_hashmap_clear(&st->nodes);
	st->chains_frame = UINT64_MAX;
	int ret = value_type(st, s);
	if (ret < 0)
		return ret;
	if (s->header && s->header->realtime_ns) {
		uint64_t lo = s->header->realtime_ns + (s->start - s->header->monotonic_ns);
		uint64_t hi = lo + (s->t_max > s->start ? s->t_max - s->start : 0);
		st->wall_lo = lo < st->wall_lo ? lo : st->wall_lo;
		st->wall_hi = hi > st->wall_hi ? hi : st->wall_hi;
	}
	ana_trace_set_kinds(s, PREC_KIND(st->off_cpu ? PERFREC__PACKET__DATA_OFF_CPU :
					   PERFREC__PACKET__DATA_SAMPLE));
	ret = ana_trace_scan(s, "export", on_packet, st);
	ana_trace_set_kinds(s, 0);
	if (!st->pprof) {
		int r2 = fold_nodes(st);   /* empties the tree whatever ret is */
		if (ret >= 0)
			ret = r2;
	}
	prec_hashmap_clear(&st->chains);
	st->s = NULL;
	return ret;
}

int ana_export_write(struct ana_export *st, FILE *out)
{
	return st->pprof ? write_pprof(st, out) : write_folded(st, out);
}

void ana_export_free(struct ana_export *st)
{
	if (!st)
		return;
	free(st->frames);
	free(st->key.p);
	prec_hashmap_release(&st->stacks);
	prec_hashmap_release(&st->chains);
	prec_hashmap_release(&st->nodes);
	prec_hashmap_release(&st->locs);
	prec_hashmap_release(&st->maps);
	free(st);
}

/* One trace: an export of its own, pooled in the trace. */
static int export_one(struct ana_trace *s, const struct ana_filter *f, int pprof,
		      int off_cpu, FILE *out)
{
	struct ana_export *x;
	int ret = ana_export_new(&x, pprof, off_cpu, f, &s->pool);
	if (ret < 0)
		return ret;
	ret = ana_export_add(x, s, NULL);
	if (ret >= 0)
		ret = ana_export_write(x, out);
	ana_export_free(x);
	return ret;
}

int ana_export_folded(struct ana_trace *s, const struct ana_filter *f, int off_cpu,
		      FILE *out)
{
	return export_one(s, f, 0, off_cpu, out);
}

int ana_export_pprof(struct ana_trace *s, const struct ana_filter *f, int off_cpu,
		     FILE *out)
{
	return export_one(s, f, 1, off_cpu, out);
}

