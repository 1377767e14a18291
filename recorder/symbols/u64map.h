/*
 * u64map.h - a set or map of u64 keys: open addressing, linear probing,
 * REC_U64MAP_EMPTY marks a free slot (so that key cannot be stored). What
 * the symbol collector keeps per object and process: file offsets hit,
 * symbol starts written, pids.
 *
 * A zeroed struct is an empty set; set with_vals before the first put for
 * a map. rec_u64map_release() frees, rec_u64map_clear() empties and keeps
 * the memory.
 */
#ifndef REC_U64MAP_H
#define REC_U64MAP_H

#include <stddef.h>
#include <stdint.h>

#define REC_U64MAP_EMPTY UINT64_MAX

struct rec_u64map {
	uint64_t *keys;
	uint64_t *vals;   /* NULL for a set */
	size_t cap, n;
	int with_vals;
};

/* A 64-bit mixer (murmur3's finalizer), also for the collector's caches. */
uint64_t rec_u64map_hash(uint64_t k);
void rec_u64map_release(struct rec_u64map *m);
void rec_u64map_clear(struct rec_u64map *m);
/* The value (or, for a set, the key) slot of key, or NULL. */
uint64_t *rec_u64map_get(const struct rec_u64map *m, uint64_t key);
/* Inserts or overwrites. 1 = added, 0 = was there, -ENOMEM. */
int rec_u64map_put(struct rec_u64map *m, uint64_t key, uint64_t val);

#endif
