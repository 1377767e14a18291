/*
 * u64map.c - u64 sets and maps; see u64map.h.
 */
#include "recorder/symbols/u64map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t rec_u64map_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	return k ^ (k >> 33);
}

void rec_u64map_release(struct rec_u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->cap = m->n = 0;
}

void rec_u64map_clear(struct rec_u64map *m)
{
	if (m->keys)
		memset(m->keys, 0xff, m->cap * sizeof(*m->keys));
	m->n = 0;
}

uint64_t *rec_u64map_get(const struct rec_u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = rec_u64map_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return m->with_vals ? &m->vals[i] : &m->keys[i];
		if (m->keys[i] == REC_U64MAP_EMPTY)
			return NULL;
	}
}


static int u64map_grow(struct rec_u64map *m)
{
	struct rec_u64map nm = { 0 };
	size_t cap = m->cap ? m->cap * 2 : 64;

	nm.with_vals = m->with_vals;
	nm.cap = cap;
	nm.keys = malloc(cap * sizeof(*nm.keys));
	if (m->with_vals)
		nm.vals = malloc(cap * sizeof(*nm.vals));
	if (!nm.keys || (m->with_vals && !nm.vals)) {
		rec_u64map_release(&nm);
		return -ENOMEM;
	}
	memset(nm.keys, 0xff, cap * sizeof(*nm.keys));
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] != REC_U64MAP_EMPTY)
			rec_u64map_put(&nm, m->keys[i],
				   m->with_vals ? m->vals[i] : 0);
	rec_u64map_release(m);
	*m = nm;
	return 0;
}

/* Inserts or overwrites. 1 = added, 0 = was there, < 0 error. */
int rec_u64map_put(struct rec_u64map *m, uint64_t key, uint64_t val)
{
	size_t i;

	if (key == REC_U64MAP_EMPTY)
		return 0;   /* not representable; an ip of -1 names nothing */
	if ((m->n + 1) * 4 > m->cap * 3) {
		int ret = u64map_grow(m);

		if (ret)
			return ret;
	}
	for (i = rec_u64map_hash(key) & (m->cap - 1); m->keys[i] != REC_U64MAP_EMPTY;
	     i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			if (m->with_vals)
				m->vals[i] = val;
			return 0;
		}
	}
	m->keys[i] = key;
	if (m->with_vals)
		m->vals[i] = val;
	m->n++;
	return 1;
}
