/*
 * hashmap.h - the one hash map: open addressing (linear probing) over an
 * insertion-ordered entry array, in two layers.
 *
 * struct prec_hashidx is the slot table alone: slots hold entry indices
 * (index + 1, 0 = empty) into an array the caller owns, so growing the
 * entries never rehashes and growing the slots never moves entries. The
 * caller probes and compares keys itself; this is what format/intern.c
 * (variable-size keys in its own key arena) and format/cctab.c's sample
 * leaves are built on.
 *
 * struct prec_hashmap is the slot table with the entries: fixed-size keys
 * (zero them with memset before filling, so padding bytes compare equal)
 * to fixed-size values (counters: 8-byte aligned). Entries stay in
 * insertion order, so iteration is deterministic for a deterministic input
 * order and memory follows the number of distinct keys. Every aggregation
 * table of the analyzer and the recorder's sets of u64s
 * (recorder/symbols/u64map.h) are these.
 *
 * How to use:
 *
 *   struct prec_hashmap m;
 *   prec_hashmap_init(&m, sizeof(struct key), sizeof(struct val));
 *   struct val *v = prec_hashmap_get(&m, &key, &created);   // NULL: ENOMEM
 *   for (size_t i = 0; i < prec_hashmap_count(&m); i++)
 *       prec_hashmap_key(&m, i), prec_hashmap_val(&m, i);
 *   prec_hashmap_release(&m);
 *
 * Pointers returned by get/key/val stay valid until the next insertion
 * (the entry array may move when it grows). The map owns its memory;
 * _release frees it, _clear empties the map and keeps it.
 */
#ifndef PREC_BASE_HASHMAP_H
#define PREC_BASE_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

/* 64-bit hash of n bytes (also used for strings). */
uint64_t prec_hash_bytes(const void *p, size_t n);
/* A 64-bit mixer (murmur3's finalizer), for one-word keys and caches. */
static inline uint64_t prec_hash_u64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	return k ^ (k >> 33);
}

/* ---- the slot table */

struct prec_hashidx {
	uint32_t *slots;   /* 0 = empty, else entry index + 1 */
	size_t nslots;     /* power of two, or 0 before the first reserve */
};

/* Hash of entry i of the caller's array (for rehashing on growth). */
typedef uint64_t (*prec_hashidx_hash_fn)(const void *ctx, size_t i);

/* Makes room for entry n (entries 0..n-1 are in the table), keeping the
 * load under 1/2: on growth (to at least min_slots) the n entries are
 * rehashed through hash. 0, or -ENOMEM (the table is unchanged), or
 * -EOVERFLOW (n too large for 32-bit indices). */
int prec_hashidx_reserve(struct prec_hashidx *x, size_t n, size_t min_slots,
			 prec_hashidx_hash_fn hash, const void *ctx);
/* Empties the slots and puts entries 0..n-1 back (after the caller moved
 * or dropped entries). */
void prec_hashidx_rebuild(struct prec_hashidx *x, size_t n,
			  prec_hashidx_hash_fn hash, const void *ctx);
void prec_hashidx_release(struct prec_hashidx *x);

/* Probing, in the caller's loop:
 *
 *   for (s = prec_hashidx_start(x, h); x->slots[s]; s = prec_hashidx_next(x, s))
 *       if (entry x->slots[s] - 1 has the key) return it;
 *   x->slots[s] = new_index + 1;          // after prec_hashidx_reserve
 *
 * Only with x->nslots != 0. */
static inline size_t prec_hashidx_start(const struct prec_hashidx *x, uint64_t h)
{
	return (size_t)h & (x->nslots - 1);
}
static inline size_t prec_hashidx_next(const struct prec_hashidx *x, size_t s)
{
	return (s + 1) & (x->nslots - 1);
}

/* ---- the map */

struct prec_hashmap {
	size_t key_size, val_size, val_off, entry_size;
	unsigned char *entries;   /* count entries: key then value */
	size_t count, cap;
	struct prec_hashidx idx;
};

void prec_hashmap_init(struct prec_hashmap *m, size_t key_size, size_t val_size);
void prec_hashmap_release(struct prec_hashmap *m);
/* Drops every entry, keeps the memory (and the key and value sizes). */
void prec_hashmap_clear(struct prec_hashmap *m);

/* The value for key, created zero-filled when absent (*created = 1 then;
 * created may be NULL). NULL when memory ran out. */
void *prec_hashmap_get(struct prec_hashmap *m, const void *key, int *created);
/* The value for key, or NULL when absent. */
void *prec_hashmap_find(const struct prec_hashmap *m, const void *key);

static inline size_t prec_hashmap_count(const struct prec_hashmap *m)
{
	return m->count;
}
static inline void *prec_hashmap_key(const struct prec_hashmap *m, size_t i)
{
	return m->entries + i * m->entry_size;
}
static inline void *prec_hashmap_val(const struct prec_hashmap *m, size_t i)
{
	return m->entries + i * m->entry_size + m->val_off;
}
/* Position (insertion order) of a value pointer returned by this map:
 * stable for the map's life, unlike the pointer. */
static inline size_t prec_hashmap_index(const struct prec_hashmap *m,
					const void *val)
{
	return (size_t)((const unsigned char *)val - m->entries - m->val_off) /
	       m->entry_size;
}

/* qsort that accepts a NULL base for n < 2 (plain qsort with NULL is
 * undefined even for 0 elements), for sorting a map's entries. */
void prec_sort(void *base, size_t n, size_t size,
	       int (*cmp)(const void *, const void *));

#endif
