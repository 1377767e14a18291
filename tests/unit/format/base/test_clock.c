/*
 * test_clock.c - format/base/clock.c: the clock never goes back, ms and
 * ns are the same clock, and a sleep is seen.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "format/base/clock.h"

static void test_monotonic(void **state)
{
	uint64_t a, b, ms;
	struct timespec ts = { 0, 20 * 1000000 };

	(void)state;
	a = prec_now_ns();
	ms = prec_now_ms();
	b = prec_now_ns();
	assert_true(a > 0 && b >= a);
	/* ms read between the two ns reads lies between them */
	assert_true(ms >= a / 1000000 && ms <= b / 1000000);
	nanosleep(&ts, NULL);
	assert_true(prec_now_ns() - b >= 20 * 1000000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monotonic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
