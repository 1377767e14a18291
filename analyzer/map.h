/*
 * map.h - a hash table of fixed-size keys to fixed-size values.
 *
 * Every aggregation table of the analyzer is one of these: keys are small
 * structs (zero them with memset before filling so padding bytes compare
 * equal), values are counters. Entries live in one array in insertion
 * order, so iteration is deterministic for a deterministic input order and
 * memory is proportional to the number of distinct keys, never to the
 * number of records fed in.
 *
 * How to use:
 *
 *   struct ana_map m;
 *   ana_map_init(&m, sizeof(struct key), sizeof(struct val));
 *   struct val *v = ana_map_get(&m, &key, &created);   // NULL: ENOMEM
 *   for (size_t i = 0; i < ana_map_count(&m); i++)
 *       ana_map_key(&m, i), ana_map_val(&m, i);
 *   ana_map_release(&m);
 *
 * Pointers returned by ana_map_get/key/val stay valid until the next
 * insertion (the entry array may move when it grows).
 */
#ifndef ANA_MAP_H
#define ANA_MAP_H

#include <stddef.h>
#include <stdint.h>

struct ana_map {
	size_t key_size, val_size, val_off, entry_size;
	unsigned char *entries;   /* count entries: key then value */
	size_t count, cap;
	uint32_t *slots;          /* 0 = empty, else entry index + 1 */
	size_t nslots;            /* power of two */
};

void ana_map_init(struct ana_map *m, size_t key_size, size_t val_size);
void ana_map_release(struct ana_map *m);

/* The value for key, created zero-filled when absent (*created = 1 then;
 * created may be NULL). NULL when memory ran out. */
void *ana_map_get(struct ana_map *m, const void *key, int *created);
/* The value for key, or NULL when absent. */
void *ana_map_find(const struct ana_map *m, const void *key);

static inline size_t ana_map_count(const struct ana_map *m) { return m->count; }
static inline void *ana_map_key(const struct ana_map *m, size_t i)
{
	return m->entries + i * m->entry_size;
}
static inline void *ana_map_val(const struct ana_map *m, size_t i)
{
	return m->entries + i * m->entry_size + m->val_off;
}

/* Position (insertion order) of a value pointer returned by this map:
 * stable for the map's life, unlike the pointer. */
static inline size_t ana_map_index(const struct ana_map *m, const void *val)
{
	return (size_t)((const unsigned char *)val - m->entries - m->val_off) /
	       m->entry_size;
}

/* qsort that accepts a NULL base for n < 2 (plain qsort with NULL is
 * undefined even for 0 elements). */
void ana_sort(void *base, size_t n, size_t size,
	      int (*cmp)(const void *, const void *));

/* 64-bit hash of n bytes (also used for strings). */
uint64_t ana_hash_bytes(const void *p, size_t n);

#endif
