/*
 * grow.h - a growing array's capacity, doubled as needed.
 *
 *   if (prec_grow(&v, &cap, n + 1, sizeof(*v)))   // v holds cap items
 *       return -ENOMEM;                           // v unchanged
 *   v[n++] = item;
 */
#ifndef PREC_GROW_H
#define PREC_GROW_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* *pp (an array of size-byte items, *cap of them) holds at least need:
 * 0, or -ENOMEM with *pp and *cap unchanged. */
static inline int prec_grow(void *pp, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return -ENOMEM;
		c *= 2;
	}
	if (size && c > SIZE_MAX / size)
		return -ENOMEM;
	void *p = realloc(*(void **)pp, c * size);
	if (!p)
		return -ENOMEM;
	*(void **)pp = p;
	*cap = c;
	return 0;
}

#endif
