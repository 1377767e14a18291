/*
 * u64map.c - u64 sets and maps on prec_hashmap; see u64map.h.
 */
#include "recorder/symbols/u64map.h"

#include <errno.h>

void rec_u64map_release(struct rec_u64map *m)
{
	int with_vals = m->with_vals;

	prec_hashmap_release(&m->m);
	m->with_vals = with_vals;
}

void rec_u64map_clear(struct rec_u64map *m)
{
	if (m->m.key_size)
		prec_hashmap_clear(&m->m);
}

uint64_t *rec_u64map_get(const struct rec_u64map *m, uint64_t key)
{
	uint64_t *v;

	if (!m->m.key_size || key == REC_U64MAP_EMPTY)
		return NULL;
	v = prec_hashmap_find(&m->m, &key);
	/* a set's "value slot" is its key */
	return v && !m->with_vals ? v - 1 : v;
}

int rec_u64map_put(struct rec_u64map *m, uint64_t key, uint64_t val)
{
	uint64_t *v;
	int created;

	if (key == REC_U64MAP_EMPTY)
		return 0;   /* not representable; an ip of -1 names nothing */
	if (!m->m.key_size)
		prec_hashmap_init(&m->m, sizeof(key), m->with_vals ? sizeof(val) : 0);
	v = prec_hashmap_get(&m->m, &key, &created);
	if (!v)
		return -ENOMEM;
	if (m->with_vals)
		*v = val;
	return created;
}
