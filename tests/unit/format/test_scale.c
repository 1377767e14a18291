/*
 * test_scale.c - format/scale.c: value x enabled / running in 128 bits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "format/scale.h"

static void exact_when_running_equals_enabled(void **state)
{
	struct prec_scaled s;

	(void)state;
	assert_int_equal(prec_scale(12345, 1000, 1000, &s), PREC_SCALE_EXACT);
	assert_int_equal(s.value, 12345);
	assert_true(s.running_pct == 100.0);
	assert_int_equal(s.saturated, 0);
}

static void running_slightly_above_enabled_is_exact(void **state)
{
	struct prec_scaled s;

	(void)state;
	/* The kernel reads the two clocks apart: running may pass enabled. */
	assert_int_equal(prec_scale(777, 1000, 1001, &s), PREC_SCALE_EXACT);
	assert_int_equal(s.value, 777);
}

static void not_counted_when_running_zero(void **state)
{
	struct prec_scaled s;

	(void)state;
	assert_int_equal(prec_scale(0, 5000, 0, &s), PREC_SCALE_NOT_COUNTED);
	assert_int_equal(s.value, 0);
	assert_true(s.running_pct == 0.0);
	/* Never a division by zero, whatever the value says. */
	assert_int_equal(prec_scale(99, 5000, 0, &s), PREC_SCALE_NOT_COUNTED);
	assert_int_equal(s.value, 0);
	assert_int_equal(prec_scale(99, 0, 0, &s), PREC_SCALE_NOT_COUNTED);
}

static void multiplexed_half_the_time(void **state)
{
	struct prec_scaled s;

	(void)state;
	/* Ran 40% of the window: 400 events extrapolate to 1000. */
	assert_int_equal(prec_scale(400, 1000000, 400000, &s),
			 PREC_SCALE_MULTIPLEXED);
	assert_int_equal(s.value, 1000);
	assert_true(s.running_pct > 39.999 && s.running_pct < 40.001);
	/* Truncation, not rounding: 10 * 3 / 2 = 15, 7 * 3 / 2 = 10. */
	assert_int_equal(prec_scale(7, 3, 2, &s), PREC_SCALE_MULTIPLEXED);
	assert_int_equal(s.value, 10);
}

static void product_overflows_64_bits(void **state)
{
	struct prec_scaled s;
	uint64_t v = 1ull << 62;

	(void)state;
	/* 2^62 * 3e9 overflows 64 bits; the quotient (1.5 * 2^62) fits. */
	assert_int_equal(prec_scale(v, 3000000000ull, 2000000000ull, &s),
			 PREC_SCALE_MULTIPLEXED);
	assert_int_equal(s.value, v + v / 2);
	assert_int_equal(s.saturated, 0);
	/* 2^40 events over 2^31 ns of 2^32: overflows a naive 64-bit product. */
	assert_int_equal(prec_scale(1ull << 40, 1ull << 32, 1ull << 31, &s),
			 PREC_SCALE_MULTIPLEXED);
	assert_int_equal(s.value, 1ull << 41);
}

static void quotient_overflow_saturates(void **state)
{
	struct prec_scaled s;

	(void)state;
	/* value = 2^63 with enabled = 3 * running: 3 * 2^63 > UINT64_MAX. */
	assert_int_equal(prec_scale(1ull << 63, 3000, 1000, &s),
			 PREC_SCALE_MULTIPLEXED);
	assert_int_equal(s.saturated, 1);
	assert_true(s.value == UINT64_MAX);
	/* Just under the limit does not saturate: (2^64-1)/3 * 3. */
	assert_int_equal(prec_scale(UINT64_MAX / 3, 3000, 1000, &s),
			 PREC_SCALE_MULTIPLEXED);
	assert_int_equal(s.saturated, 0);
	assert_true(s.value == UINT64_MAX / 3 * 3);
}

/* The portable path must agree with the compiler's 128-bit type. */
static void portable_matches_int128(void **state)
{
	static const uint64_t vals[] = {
		0, 1, 2, 3, 7, 1000, 0xffffffffull, 0x100000000ull,
		0x123456789abcdefull, 1ull << 62, 1ull << 63,
		(1ull << 63) + 12345, UINT64_MAX - 1, UINT64_MAX,
	};
	size_t n = sizeof(vals) / sizeof(vals[0]);

	(void)state;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			for (size_t k = 0; k < n; k++) {
				uint64_t a = vals[i], b = vals[j], c = vals[k];
				int s1, s2;
				uint64_t p, q;

				if (c == 0)
					continue;
				p = prec_muldiv_u64_portable(a, b, c, &s1);
				q = prec_muldiv_u64(a, b, c, &s2);
				assert_int_equal(s1, s2);
				assert_true(p == q);
#if defined(__SIZEOF_INT128__)
				{
					unsigned __int128 r =
						(unsigned __int128)a * b / c;

					if (r > UINT64_MAX) {
						assert_int_equal(s1, 1);
						assert_true(p == UINT64_MAX);
					} else {
						assert_int_equal(s1, 0);
						assert_true(p == (uint64_t)r);
					}
				}
#endif
			}
}

static void portable_known_values(void **state)
{
	int sat;

	(void)state;
	/* (2^64 - 1)^2 / (2^64 - 1) = 2^64 - 1: the widest exact case. */
	assert_true(prec_muldiv_u64_portable(UINT64_MAX, UINT64_MAX,
					     UINT64_MAX, &sat) == UINT64_MAX);
	assert_int_equal(sat, 0);
	assert_true(prec_muldiv_u64_portable(1ull << 63, 4, 8, &sat) ==
		    1ull << 62);
	assert_int_equal(sat, 0);
	assert_true(prec_muldiv_u64_portable(1ull << 63, 4, 2, &sat) ==
		    UINT64_MAX);
	assert_int_equal(sat, 1);
	assert_true(prec_muldiv_u64_portable(10, 10, 3, NULL) == 33);
}

static void status_names(void **state)
{
	(void)state;
	assert_string_equal(prec_scale_status_name(PREC_SCALE_EXACT), "exact");
	assert_string_equal(prec_scale_status_name(PREC_SCALE_MULTIPLEXED),
			    "multiplexed");
	assert_string_equal(prec_scale_status_name(PREC_SCALE_NOT_COUNTED),
			    "not counted");
	assert_string_equal(prec_scale_status_name(42), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_when_running_equals_enabled),
		cmocka_unit_test(running_slightly_above_enabled_is_exact),
		cmocka_unit_test(not_counted_when_running_zero),
		cmocka_unit_test(multiplexed_half_the_time),
		cmocka_unit_test(product_overflows_64_bits),
		cmocka_unit_test(quotient_overflow_saturates),
		cmocka_unit_test(portable_matches_int128),
		cmocka_unit_test(portable_known_values),
		cmocka_unit_test(status_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
