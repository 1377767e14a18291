/*
 * scale.h - scale a multiplexed counter value: value x enabled / running.
 *
 * When the kernel has more counting events than hardware counters it
 * time-shares them; a counter then ran for time_running out of
 * time_enabled nanoseconds, and its value is extrapolated to the whole
 * window. The recorder stores raw values and times; this is the one place
 * where both the analyzer and `perfrec stat` turn them into displayed
 * values, so they agree.
 *
 * The product value * enabled does not fit 64 bits for realistic inputs
 * (a count of 2^40 over 2^30 ns already overflows), so it is computed in
 * 128 bits. running == 0 means the counter never ran: its value is "not
 * counted", never a division by zero.
 *
 * Portable C11: no Linux headers, builds on a laptop.
 */
#ifndef PREC_SCALE_H
#define PREC_SCALE_H

#include <stdint.h>

enum prec_scale_status {
	PREC_SCALE_EXACT = 0,        /* ran the whole time (or no times known) */
	PREC_SCALE_MULTIPLEXED = 1,  /* 0 < running < enabled: value extrapolated */
	PREC_SCALE_NOT_COUNTED = 2,  /* running == 0: no value */
};

struct prec_scaled {
	uint64_t value;     /* scaled value; 0 when not counted */
	double running_pct; /* 100 * running / enabled; 100 when exact, 0 when not counted */
	int saturated;      /* the scaled value exceeded UINT64_MAX and was clamped */
};

/* Scales raw by enabled / running into *out and returns a
 * prec_scale_status. running == 0 is always "not counted" (value 0),
 * whatever raw and enabled say: callers that read without
 * TOTAL_TIME_* have nothing to scale and should not call this.
 * running >= enabled (the kernel's two
 * clocks are read at slightly different moments, so running may exceed
 * enabled by a little) counts as exact: raw is returned unchanged. */
int prec_scale(uint64_t raw, uint64_t enabled, uint64_t running,
	       struct prec_scaled *out);

/* floor(a * b / c) in 128-bit precision. c must be > 0. Sets *saturated
 * (when not NULL) and returns UINT64_MAX when the quotient exceeds 64 bits. */
uint64_t prec_muldiv_u64(uint64_t a, uint64_t b, uint64_t c, int *saturated);

/* The same computed with 64-bit operations only (shift-subtract long
 * division); prec_muldiv_u64 uses it where the compiler has no 128-bit
 * integer type. Exposed so tests check both agree. */
uint64_t prec_muldiv_u64_portable(uint64_t a, uint64_t b, uint64_t c,
				  int *saturated);

/* Status name for messages: "exact", "multiplexed", "not counted". */
const char *prec_scale_status_name(int status);

#endif
