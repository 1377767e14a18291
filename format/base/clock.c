/*
 * clock.c - the monotonic clock; see clock.h.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* clock_gettime under -std=c11 */
#endif

#include "format/base/clock.h"

#include <time.h>

uint64_t prec_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t prec_now_ms(void)
{
	return prec_now_ns() / 1000000;
}
