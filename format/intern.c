/*
 * intern.c - hash table behind prec_writer_intern_*() (see intern.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/intern.h"

static uint64_t hash_bytes(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0x9E3779B97F4A7C15ull ^ len;

	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
		h ^= h >> 31;
		p += 8;
		len -= 8;
	}
	if (len) {
		uint64_t w = 0;
		memcpy(&w, p, len);
		h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
		h ^= h >> 31;
	}
	h *= 0x94D049BB133111EBull;
	h ^= h >> 29;
	return h;
}

void prec_intern_init(struct prec_intern *t)
{
	memset(t, 0, sizeof(*t));
	t->next_iid = 1;
}

void prec_intern_release(struct prec_intern *t)
{
	free(t->ents);
	prec_hashidx_release(&t->idx);
	free(t->keys);
	memset(t, 0, sizeof(*t));
}

static uint64_t ent_hash(const void *ctx, size_t i)
{
	const struct prec_intern *t = ctx;

	return t->ents[i].hash;
}

uint64_t prec_intern_get(struct prec_intern *t, const void *key, size_t len)
{
	uint64_t h = hash_bytes(key, len);
	struct prec_hashidx *x = &t->idx;
	size_t s, need, off;
	struct prec_intern_entry *e;

	/* room first (load under 1/2), so the probe ends on the free slot */
	if (prec_hashidx_reserve(x, t->n, 256, ent_hash, t) < 0)
		return 0;
	for (s = prec_hashidx_start(x, h); x->slots[s]; s = prec_hashidx_next(x, s)) {
		e = &t->ents[x->slots[s] - 1];
		if (e->hash == h && e->len == len &&
		    memcmp((const char *)t->keys + e->off, key, len) == 0)
			return e->iid;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		e = realloc(t->ents, cap * sizeof(*e));
		if (!e)
			return 0;
		t->ents = e;
		t->cap = cap;
	}
	need = (len + 1 + 7) & ~(size_t)7;   /* NUL for strings, 8-aligned */
	if (need > t->keys_cap - t->keys_len) {
		size_t cap = t->keys_cap ? t->keys_cap : 4096;
		while (cap - t->keys_len < need) {
			if (cap > SIZE_MAX / 4)
				return 0;
			cap *= 2;
		}
		uint64_t *k = realloc(t->keys, cap);
		if (!k)
			return 0;
		t->keys = k;
		t->keys_cap = cap;
	}
	off = t->keys_len;
	if (len)
		memcpy((char *)t->keys + off, key, len);
	((char *)t->keys)[off + len] = '\0';
	t->keys_len += need;
	e = &t->ents[t->n];
	e->hash = h;
	e->iid = t->next_iid++;
	e->off = off;
	e->len = len;
	x->slots[s] = (uint32_t)(t->n + 1);
	t->n++;
	return e->iid;
}

int prec_intern_reset(struct prec_intern *t)
{
	size_t keep = t->n - t->emitted;

	if (keep == 0) {
		t->n = t->emitted = 0;
		t->keys_len = 0;
		t->next_iid = 1;
		prec_hashidx_rebuild(&t->idx, 0, ent_hash, t);
		return 0;
	}
	/* move the pending tail (and its keys) to the front */
	size_t koff = t->ents[t->emitted].off;
	memmove(t->keys, (char *)t->keys + koff, t->keys_len - koff);
	t->keys_len -= koff;
	memmove(t->ents, t->ents + t->emitted, keep * sizeof(*t->ents));
	for (size_t i = 0; i < keep; i++)
		t->ents[i].off -= koff;
	t->n = keep;
	t->emitted = 0;
	t->next_iid = t->ents[keep - 1].iid + 1;
	prec_hashidx_rebuild(&t->idx, keep, ent_hash, t);
	return 0;
}
