/*
 * clock.h - the monotonic clock (CLOCK_MONOTONIC), the one every timeout,
 * deadline and duration of both programs is measured on. Never the time
 * of day: it does not jump when the wall clock is set.
 */
#ifndef PREC_CLOCK_H
#define PREC_CLOCK_H

#include <stdint.h>

/* Now, in ns and in ms, on the same clock. */
uint64_t prec_now_ns(void);
uint64_t prec_now_ms(void);

#endif
