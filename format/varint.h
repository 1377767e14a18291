/*
 * varint.h - protobuf base-128 varints, the one copy the format library,
 * the writer and the recorder's wire framing share.
 *
 * prec_varint_size(v)      bytes v takes (1..10)
 * prec_varint_put(p, v)    writes v at p, returns the byte after it
 * prec_varint_get(&p, end, &v)
 *                          reads one varint from [*p, end): 0 and *p past
 *                          it, or -1 when it runs past end or over 10 bytes
 *                          (untrusted input: never reads beyond end)
 * prec_zigzag(v), prec_unzigzag(z)
 *                          sint64 <-> its zigzag varint value
 */
#ifndef PREC_VARINT_H
#define PREC_VARINT_H

#include <stddef.h>
#include <stdint.h>

static inline size_t prec_varint_size(uint64_t v)
{
	/* bits needed / 7, rounded up; v | 1 keeps clz defined for 0 */
	return (size_t)(((64 - __builtin_clzll(v | 1)) * 9 + 64) / 64);
}

static inline uint8_t *prec_varint_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline int prec_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			return -1;
		x |= (uint64_t)(**p & 0x7f) << shift;
		if (!(*(*p)++ & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

static inline uint64_t prec_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t prec_unzigzag(uint64_t z)
{
	return (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
}

#endif
