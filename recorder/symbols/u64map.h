/*
 * u64map.h - a set or map of u64 keys, on format/base/hashmap.h: what the
 * symbol gatherer keeps per object and process (file offsets hit, symbol
 * starts written, pids). REC_U64MAP_EMPTY cannot be stored (an ip of -1
 * names nothing), and a zeroed struct is an empty set, which is why this
 * thin layer exists: the gatherer's objects are calloc'd.
 *
 * Set with_vals before the first put for a map. Keys iterate in insertion
 * order: rec_u64map_count / rec_u64map_key. rec_u64map_release() frees,
 * rec_u64map_clear() empties and keeps the memory.
 */
#ifndef REC_U64MAP_H
#define REC_U64MAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format/base/hashmap.h"

#define REC_U64MAP_EMPTY UINT64_MAX

struct rec_u64map {
	struct prec_hashmap m;   /* key_size 0 until the first put */
	int with_vals;
};

void rec_u64map_release(struct rec_u64map *m);
void rec_u64map_clear(struct rec_u64map *m);
/* The value (or, for a set, the key) slot of key, or NULL. */
uint64_t *rec_u64map_get(const struct rec_u64map *m, uint64_t key);
/* Inserts or overwrites. 1 = added, 0 = was there, -ENOMEM. */
int rec_u64map_put(struct rec_u64map *m, uint64_t key, uint64_t val);

static inline size_t rec_u64map_count(const struct rec_u64map *m)
{
	return prec_hashmap_count(&m->m);
}
static inline uint64_t rec_u64map_key(const struct rec_u64map *m, size_t i)
{
	uint64_t k;

	memcpy(&k, prec_hashmap_key(&m->m, i), sizeof(k));
	return k;
}

#endif
