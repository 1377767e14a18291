/*
 * cctab.c - a decoded frame's callchains (see cctab.h).
 *
 * Entries live in one array; a node's parent is an index into it, fixed
 * when the node is defined (a later redefinition of the parent's iid does
 * not move it), so walking a chain is pointer chasing in one array and
 * ends after `depth` steps. File iids map to entries through an array
 * (the small iids writers give) or the hash map (format/base/hashmap.h);
 * sample leaves are deduplicated by (callers entry, ip, marker) through a
 * slot table over the list of leaves, so samples at one spot share one
 * expansion.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/cctab.h"
#include "format/varint.h"

/* A sample leaf: its key, and its entry. */
struct prec_cc_leaf {
	uint64_t ip, marker;
	uint32_t callers;    /* entry index + 1, 0 = none */
	uint32_t ent;        /* entry index */
};

#define LEAF 0x80000000u     /* depth bit: a sample leaf */
#define MARKED 0x40000000u   /* depth bit: the leaf is its cpumode's marker */
#define DEPTH(e) ((e)->depth & ~(LEAF | MARKED))

/* The expansion of a sample leaf's callers is kept too when it is this
 * deep: the callers many leaves share are then copied, not walked, per
 * leaf. */
#define ANCHOR_DEPTH 8

static const uint64_t none[1];

void prec_cctab_init(struct prec_cctab *t)
{
	memset(t, 0, sizeof(*t));
	prec_hashmap_init(&t->sparse, sizeof(uint64_t), sizeof(uint32_t));
}

void prec_cctab_release(struct prec_cctab *t)
{
	free(t->ents);
	free(t->dense);
	prec_hashmap_release(&t->sparse);
	free(t->leaves);
	prec_hashidx_release(&t->lidx);
	memset(t, 0, sizeof(*t));
}

void prec_cctab_clear(struct prec_cctab *t, struct prec_arena *a, size_t dense_max)
{
	t->n = 0;
	if (t->ndense)
		memset(t->dense, 0, t->ndense * sizeof(*t->dense));
	t->dense_max = dense_max;
	if (prec_hashmap_count(&t->sparse))
		prec_hashmap_clear(&t->sparse);
	if (t->nleaves)
		prec_hashidx_rebuild(&t->lidx, 0, NULL, NULL);
	t->nleaves = 0;
	t->max_iid = 0;
	t->arena = a;
}

/* entry index + 1 of iid, 0 = undefined */
static inline uint32_t lookup(const struct prec_cctab *t, uint64_t iid)
{
	const uint32_t *v;

	if (iid < t->dense_max)
		return iid < t->ndense ? t->dense[iid] : 0;
	if (!prec_hashmap_count(&t->sparse))
		return 0;
	v = prec_hashmap_find(&t->sparse, &iid);
	return v ? *v : 0;
}

static int put(struct prec_cctab *t, uint64_t iid, uint32_t ent)
{
	uint32_t *v;

	if (iid < t->dense_max) {
		if (iid >= t->ndense) {
			size_t nn = t->ndense ? t->ndense : 1024;
			while (nn <= iid)
				nn *= 2;
			if (nn > t->dense_max)
				nn = t->dense_max;
			uint32_t *nd = realloc(t->dense, nn * sizeof(*nd));
			if (!nd)
				return -ENOMEM;
			memset(nd + t->ndense, 0, (nn - t->ndense) * sizeof(*nd));
			t->dense = nd;
			t->ndense = nn;
		}
		t->dense[iid] = ent;   /* a redefinition: the later one wins */
		return 0;
	}
	v = prec_hashmap_get(&t->sparse, &iid, NULL);
	if (!v)
		return -ENOMEM;
	*v = ent;   /* a redefinition: the later one wins */
	return 0;
}

/* A new entry; its index + 1, or 0 when out of memory. */
static uint32_t ent_new(struct prec_cctab *t, uint64_t addr, uint32_t parent,
			uint32_t depth, const uint64_t *ips)
{
	struct prec_cc_ent *e;

	if (t->n >= UINT32_MAX - 1)
		return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		e = realloc(t->ents, cap * sizeof(*e));
		if (!e)
			return 0;
		t->ents = e;
		t->cap = cap;
	}
	e = &t->ents[t->n];
	e->addr = addr;
	e->ips = ips;
	e->parent = parent;
	e->depth = depth;
	return (uint32_t)++t->n;
}

int prec_cctab_add_chain(struct prec_cctab *t, uint64_t iid, const uint64_t *ips,
			 size_t n)
{
	uint32_t e;

	if (!iid || (iid & PREC_CC_SYNTH) || n >= MARKED || (n && !ips))
		return 0;   /* "none", a reserved iid, or beyond any frame */
	e = ent_new(t, n ? ips[0] : 0, 0, (uint32_t)n, n ? ips : none);
	if (!e || put(t, iid, e) < 0)
		return -ENOMEM;
	if (iid > t->max_iid)
		t->max_iid = iid;
	return 0;
}

int prec_cctab_add_run(struct prec_cctab *t, uint64_t iid, uint64_t parent,
		       const uint64_t *vals, size_t n)
{
	size_t nodes = 0, i;
	uint64_t first, base = 0;
	uint32_t pent = 0, pdepth = 0;

	for (i = 0; i < n; nodes++)
		i += vals[i] == 1 ? 2 : 1;
	if (i > n)
		nodes--;   /* an escape with nothing after it: no node */
	first = iid ? iid : t->max_iid + 1;
	if (!nodes || !first || first >= PREC_CC_SYNTH || nodes > PREC_CC_SYNTH - first)
		return 0;   /* nothing, or iids out of range: no node */
	if (first + nodes - 1 > t->max_iid)
		t->max_iid = first + nodes - 1;
	if (parent) {
		pent = (parent & PREC_CC_SYNTH) ? 0 : lookup(t, parent);
		if (!pent)
			return 0;   /* undefined parent: the run defines nothing */
		base = t->ents[pent - 1].addr;
		pdepth = DEPTH(&t->ents[pent - 1]);
	}
	i = 0;
	for (size_t k = 0; k < nodes; k++) {
		uint64_t v = vals[i++];
		uint64_t a = v == 1 ? (uint64_t)prec_unzigzag(vals[i++])
				    : base + (uint64_t)prec_unzigzag(v);
		if (pdepth >= PREC_CC_MAX_DEPTH)
			return 0;   /* too deep: this node and those after it undefined */
		uint32_t e = ent_new(t, a, pent, pdepth + 1, NULL);
		if (!e || put(t, first + k, e) < 0)
			return -ENOMEM;
		base = a;
		pent = e;
		pdepth++;
	}
	return 0;
}

static uint64_t leaf_hash(uint32_t callers, uint64_t ip, uint64_t marker)
{
	uint64_t h = (ip * 0x9E3779B97F4A7C15ull + callers) ^ marker;
	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 29;
	return h;
}

/* The hash of leaf i (prec_hashidx_reserve rehashes through it). */
static uint64_t leaf_hash_of(const void *ctx, size_t i)
{
	const struct prec_cc_leaf *l = &((const struct prec_cctab *)ctx)->leaves[i];

	return leaf_hash(l->callers, l->ip, l->marker);
}

/* Room for one more leaf: in the list and in its slot table. */
static int leaves_reserve(struct prec_cctab *t)
{
	if (t->nleaves == t->cleaves) {
		size_t cap = t->cleaves ? t->cleaves * 2 : 256;
		struct prec_cc_leaf *v = realloc(t->leaves, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->leaves = v;
		t->cleaves = cap;
	}
	/* the load check inline: most leaves need no growth (no call) */
	if ((t->nleaves + 1) * 2 <= t->lidx.nslots)
		return 0;
	return prec_hashidx_reserve(&t->lidx, t->nleaves, 256, leaf_hash_of, t);
}

uint64_t prec_cctab_leaf(struct prec_cctab *t, uint64_t callers, uint64_t ip,
			 uint32_t cpumode, int *err)
{
	uint64_t marker = prec_cc_marker(cpumode), h;
	uint32_t cent = 0, cdepth = 0, e;
	size_t k;

	if (callers) {
		cent = (callers & PREC_CC_SYNTH) ? 0 : lookup(t, callers);
		if (!cent)
			return 0;
		cdepth = DEPTH(&t->ents[cent - 1]);
		if (cdepth > PREC_CC_MAX_DEPTH)
			return 0;
	}
	h = leaf_hash(cent, ip, marker);
	if (t->nleaves) {
		for (k = prec_hashidx_start(&t->lidx, h); t->lidx.slots[k];
		     k = prec_hashidx_next(&t->lidx, k)) {
			const struct prec_cc_leaf *l = &t->leaves[t->lidx.slots[k] - 1];

			if (l->ip == ip && l->callers == cent && l->marker == marker)
				return PREC_CC_SYNTH | l->ent;
		}
	}
	if (leaves_reserve(t) < 0)
		goto nomem;
	e = ent_new(t, ip, cent, cdepth + 1, NULL);
	if (e && marker)
		e = ent_new(t, marker, e, cdepth + 2, NULL);
	if (!e)
		goto nomem;
	t->ents[e - 1].depth |= LEAF | (marker ? MARKED : 0);
	for (k = prec_hashidx_start(&t->lidx, h); t->lidx.slots[k];
	     k = prec_hashidx_next(&t->lidx, k))
		;
	t->leaves[t->nleaves] = (struct prec_cc_leaf){ ip, marker, cent, e - 1 };
	t->lidx.slots[k] = (uint32_t)++t->nleaves;
	return PREC_CC_SYNTH | (e - 1);
nomem:
	*err = -ENOMEM;
	return 0;
}

/* Makes the expansion of entry e (index + 1) by walking its parents until
 * an entry that has one. */
static const uint64_t *expand(struct prec_cctab *t, uint32_t e)
{
	struct prec_cc_ent *x = &t->ents[e - 1];
	uint32_t d = DEPTH(x), i = 0, cur = e;
	uint64_t *out;

	if (x->ips)
		return x->ips;
	out = prec_arena_alloc(t->arena, (size_t)d * sizeof(*out));
	if (!out)
		return NULL;
	while (cur && i < d) {
		const struct prec_cc_ent *c = &t->ents[cur - 1];
		if (c->ips) {
			uint32_t m = DEPTH(c) < d - i ? DEPTH(c) : d - i;
			memcpy(out + i, c->ips, (size_t)m * sizeof(*out));
			break;
		}
		out[i++] = c->addr;
		cur = c->parent;
	}
	/* out holds d ips: every depth is its parent's + 1, fixed at definition */
	x->ips = out;
	return out;
}

const uint64_t *prec_cctab_get(struct prec_cctab *t, uint64_t iid, size_t *n)
{
	uint32_t e, anchor;
	const struct prec_cc_ent *x;

	*n = 0;
	if (iid & PREC_CC_SYNTH) {
		uint64_t k = iid & ~PREC_CC_SYNTH;
		if (k >= t->n || !(t->ents[k].depth & LEAF))
			return NULL;
		e = (uint32_t)k + 1;
	} else {
		e = iid ? lookup(t, iid) : 0;
		if (!e)
			return NULL;
	}
	x = &t->ents[e - 1];
	if (!x->ips) {
		/* a sample leaf's callers keep their expansion when deep:
		 * the other leaves on them then copy it */
		anchor = (x->depth & LEAF) ? x->parent : 0;
		if ((x->depth & MARKED) && anchor)
			anchor = t->ents[anchor - 1].parent;
		if (anchor && !t->ents[anchor - 1].ips &&
		    DEPTH(&t->ents[anchor - 1]) >= ANCHOR_DEPTH)
			expand(t, anchor);   /* failure: the walk below still works */
		if (!expand(t, e))
			return NULL;
	}
	*n = DEPTH(x);
	return x->ips;
}
