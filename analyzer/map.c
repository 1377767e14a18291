/*
 * map.c - open addressing (linear probing) over an insertion-ordered
 * entry array. The slot table stores entry indices, so growing the entry
 * array never rehashes and growing the slot table never moves entries.
 */
#include "analyzer/map.h"

#include <stdlib.h>
#include <string.h>

void ana_map_init(struct ana_map *m, size_t key_size, size_t val_size)
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

void ana_map_release(struct ana_map *m)
{
	free(m->entries);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

void ana_sort(void *base, size_t n, size_t size,
	      int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

uint64_t ana_hash_bytes(const void *p, size_t n)
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
	while (n--) {
		h = (h ^ *b++) * 0x100000001b3ull;
	}
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h;
}

/* Keys of 4 or 8 bytes (tids, CPUs, ids: the hottest tables) are hashed
 * as one word and compared as one; other sizes byte-wise. */
static uint64_t mix64(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h;
}

static inline uint64_t key_hash(const struct ana_map *m, const void *key)
{
	if (m->key_size == 4) {
		uint32_t w;
		memcpy(&w, key, 4);
		return mix64(w);
	}
	if (m->key_size == 8) {
		uint64_t w;
		memcpy(&w, key, 8);
		return mix64(w);
	}
	return ana_hash_bytes(key, m->key_size);
}

static inline int key_eq(const struct ana_map *m, const void *a, const void *b)
{
	if (m->key_size == 4)
		return !memcmp(a, b, 4);
	if (m->key_size == 8)
		return !memcmp(a, b, 8);
	return !memcmp(a, b, m->key_size);
}

static int grow_slots(struct ana_map *m)
{
	size_t n = m->nslots ? m->nslots * 2 : 64;
	uint32_t *s = calloc(n, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < m->count; i++) {
		uint64_t h = key_hash(m, ana_map_key(m, i));
		size_t j = h & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)(i + 1);
	}
	free(m->slots);
	m->slots = s;
	m->nslots = n;
	return 0;
}

void *ana_map_find(const struct ana_map *m, const void *key)
{
	if (!m->nslots)
		return NULL;
	uint64_t h = key_hash(m, key);
	size_t j = h & (m->nslots - 1);
	while (m->slots[j]) {
		size_t i = m->slots[j] - 1;
		if (key_eq(m, ana_map_key(m, i), key))
			return ana_map_val(m, i);
		j = (j + 1) & (m->nslots - 1);
	}
	return NULL;
}

void *ana_map_get(struct ana_map *m, const void *key, int *created)
{
	if (created)
		*created = 0;
	if ((m->count + 1) * 2 > m->nslots && grow_slots(m))
		return NULL;
	uint64_t h = key_hash(m, key);
	size_t j = h & (m->nslots - 1);
	while (m->slots[j]) {
		size_t i = m->slots[j] - 1;
		if (key_eq(m, ana_map_key(m, i), key))
			return ana_map_val(m, i);
		j = (j + 1) & (m->nslots - 1);
	}
	if (m->count == UINT32_MAX - 1)
		return NULL;
	if (m->count == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		unsigned char *e = realloc(m->entries, cap * m->entry_size);
		if (!e)
			return NULL;
		m->entries = e;
		m->cap = cap;
	}
	size_t i = m->count++;
	unsigned char *e = m->entries + i * m->entry_size;
	memcpy(e, key, m->key_size);
	memset(e + m->key_size, 0, m->entry_size - m->key_size);
	m->slots[j] = (uint32_t)(i + 1);
	if (created)
		*created = 1;
	return e + m->val_off;
}
