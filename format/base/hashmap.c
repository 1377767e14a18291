/*
 * hashmap.c - see hashmap.h. The slot table stores entry indices, so the
 * entry array grows by realloc without rehashing and the slots grow
 * without moving entries.
 */
#include "format/base/hashmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t prec_hash_bytes(const void *p, size_t n)
{
	/* FNV-1a over 8-byte words then a final avalanche (splitmix64). */
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull ^ n;

	while (n >= 8) {
		uint64_t w;

		memcpy(&w, b, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
		b += 8;
		n -= 8;
	}
	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h;
}

void prec_sort(void *base, size_t n, size_t size,
	       int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* ---- the slot table */

static void put_all(struct prec_hashidx *x, size_t n,
		    prec_hashidx_hash_fn hash, const void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		size_t s = prec_hashidx_start(x, hash(ctx, i));

		while (x->slots[s])
			s = prec_hashidx_next(x, s);
		x->slots[s] = (uint32_t)(i + 1);
	}
}

int prec_hashidx_reserve(struct prec_hashidx *x, size_t n, size_t min_slots,
			 prec_hashidx_hash_fn hash, const void *ctx)
{
	struct prec_hashidx g;

	if (n >= UINT32_MAX - 1)
		return -EOVERFLOW;
	if ((n + 1) * 2 <= x->nslots)
		return 0;
	g.nslots = x->nslots ? x->nslots * 2 : min_slots;
	while ((n + 1) * 2 > g.nslots)
		g.nslots *= 2;
	g.slots = calloc(g.nslots, sizeof(*g.slots));
	if (!g.slots)
		return -ENOMEM;
	put_all(&g, n, hash, ctx);
	free(x->slots);
	*x = g;
	return 0;
}

void prec_hashidx_rebuild(struct prec_hashidx *x, size_t n,
			  prec_hashidx_hash_fn hash, const void *ctx)
{
	if (!x->nslots)
		return;
	memset(x->slots, 0, x->nslots * sizeof(*x->slots));
	put_all(x, n, hash, ctx);
}

void prec_hashidx_release(struct prec_hashidx *x)
{
	free(x->slots);
	x->slots = NULL;
	x->nslots = 0;
}

/* ---- the map */

void prec_hashmap_init(struct prec_hashmap *m, size_t key_size, size_t val_size)
{
	memset(m, 0, sizeof(*m));
	m->key_size = key_size;
	m->val_size = val_size;
	/* Values and entries stay 8-byte aligned: counters are uint64_t. */
	m->val_off = (key_size + 7) & ~(size_t)7;
	m->entry_size = m->val_off + ((val_size + 7) & ~(size_t)7);
	if (m->entry_size == 0)
		m->entry_size = 8;
}

void prec_hashmap_release(struct prec_hashmap *m)
{
	free(m->entries);
	prec_hashidx_release(&m->idx);
	memset(m, 0, sizeof(*m));
}

/* Keys of 4 or 8 bytes (tids, CPUs, ids, addresses: the hottest tables)
 * are hashed as one word and compared as one; other sizes byte-wise. */
static inline uint64_t key_hash(const struct prec_hashmap *m, const void *key)
{
	if (m->key_size == 4) {
		uint32_t w;

		memcpy(&w, key, 4);
		return prec_hash_u64(w);
	}
	if (m->key_size == 8) {
		uint64_t w;

		memcpy(&w, key, 8);
		return prec_hash_u64(w);
	}
	return prec_hash_bytes(key, m->key_size);
}

static inline int key_eq(const struct prec_hashmap *m, const void *a,
			 const void *b)
{
	if (m->key_size == 4)
		return !memcmp(a, b, 4);
	if (m->key_size == 8)
		return !memcmp(a, b, 8);
	return !memcmp(a, b, m->key_size);
}

static uint64_t entry_hash(const void *ctx, size_t i)
{
	const struct prec_hashmap *m = ctx;

	return key_hash(m, prec_hashmap_key(m, i));
}

void prec_hashmap_clear(struct prec_hashmap *m)
{
	m->count = 0;
	prec_hashidx_rebuild(&m->idx, 0, entry_hash, m);
}

void *prec_hashmap_find(const struct prec_hashmap *m, const void *key)
{
	const struct prec_hashidx *x = &m->idx;

	if (!x->nslots)
		return NULL;
	for (size_t s = prec_hashidx_start(x, key_hash(m, key)); x->slots[s];
	     s = prec_hashidx_next(x, s)) {
		size_t i = x->slots[s] - 1;

		if (key_eq(m, prec_hashmap_key(m, i), key))
			return prec_hashmap_val(m, i);
	}
	return NULL;
}

void *prec_hashmap_get(struct prec_hashmap *m, const void *key, int *created)
{
	struct prec_hashidx *x = &m->idx;
	unsigned char *e;
	size_t s, i;

	if (created)
		*created = 0;
	if (prec_hashidx_reserve(x, m->count, 64, entry_hash, m))
		return NULL;
	for (s = prec_hashidx_start(x, key_hash(m, key)); x->slots[s];
	     s = prec_hashidx_next(x, s)) {
		i = x->slots[s] - 1;
		if (key_eq(m, prec_hashmap_key(m, i), key))
			return prec_hashmap_val(m, i);
	}
	if (m->count == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;

		e = realloc(m->entries, cap * m->entry_size);
		if (!e)
			return NULL;
		m->entries = e;
		m->cap = cap;
	}
	i = m->count++;
	e = m->entries + i * m->entry_size;
	memcpy(e, key, m->key_size);
	memset(e + m->key_size, 0, m->entry_size - m->key_size);
	x->slots[s] = (uint32_t)(i + 1);
	if (created)
		*created = 1;
	return e + m->val_off;
}
