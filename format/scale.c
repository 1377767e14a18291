/*
 * scale.c - counter scaling; see scale.h.
 */
#include "format/scale.h"

#include <stddef.h>

/* 64 x 64 -> 128 multiply from 32-bit halves: *hi:*lo = a * b. */
static void mul_64x64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
	uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32;
	uint64_t b_lo = b & 0xffffffffu, b_hi = b >> 32;
	uint64_t ll = a_lo * b_lo;
	uint64_t lh = a_lo * b_hi;
	uint64_t hl = a_hi * b_lo;
	uint64_t hh = a_hi * b_hi;
	/* The middle column: carries from ll's top half plus both cross
	 * products' low halves; at most 3 * (2^32 - 1), fits 64 bits. */
	uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);

	*lo = (mid << 32) | (ll & 0xffffffffu);
	*hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

uint64_t prec_muldiv_u64_portable(uint64_t a, uint64_t b, uint64_t c,
				  int *saturated)
{
	uint64_t hi, lo, q = 0, r = 0;

	if (saturated)
		*saturated = 0;
	mul_64x64(a, b, &hi, &lo);
	/* The quotient fits 64 bits exactly when hi < c. */
	if (hi >= c) {
		if (saturated)
			*saturated = 1;
		return UINT64_MAX;
	}
	/* Restoring division of hi:lo by c, one bit of lo at a time; the
	 * remainder starts as hi (< c). r can reach 2c - 1 > 2^64 before the
	 * subtraction, so the bit shifted out of r is kept in `top`. */
	r = hi;
	for (int i = 63; i >= 0; i--) {
		uint64_t top = r >> 63;

		r = (r << 1) | ((lo >> i) & 1u);
		q <<= 1;
		if (top || r >= c) {
			r -= c;   /* wraps correctly when top is set */
			q |= 1u;
		}
	}
	return q;
}

uint64_t prec_muldiv_u64(uint64_t a, uint64_t b, uint64_t c, int *saturated)
{
#if defined(__SIZEOF_INT128__)
	unsigned __int128 p = (unsigned __int128)a * b / c;

	if (saturated)
		*saturated = p > UINT64_MAX;
	return p > UINT64_MAX ? UINT64_MAX : (uint64_t)p;
#else
	return prec_muldiv_u64_portable(a, b, c, saturated);
#endif
}

int prec_scale(uint64_t raw, uint64_t enabled, uint64_t running,
	       struct prec_scaled *out)
{
	out->saturated = 0;
	if (running == 0) {
		out->value = 0;
		out->running_pct = 0.0;
		return PREC_SCALE_NOT_COUNTED;
	}
	if (running >= enabled) {
		out->value = raw;
		out->running_pct = 100.0;
		return PREC_SCALE_EXACT;
	}
	out->value = prec_muldiv_u64(raw, enabled, running, &out->saturated);
	out->running_pct = 100.0 * (double)running / (double)enabled;
	return PREC_SCALE_MULTIPLEXED;
}

const char *prec_scale_status_name(int status)
{
	switch (status) {
	case PREC_SCALE_EXACT: return "exact";
	case PREC_SCALE_MULTIPLEXED: return "multiplexed";
	case PREC_SCALE_NOT_COUNTED: return "not counted";
	}
	return "unknown";
}
