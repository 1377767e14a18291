/*
 * hot.c - libhot.so of the symbol tests (test_fde_names, test_symcache_e2e):
 * built at test time, -fPIC -shared, and stripped, so that its functions
 * have only their FDEs' ranges (.eh_frame) and, with the unstripped copy,
 * names the test knows. Not built by CMake (a shared object, not a
 * workload program).
 */
#include <stdint.h>
/* two loops with many instructions each: samples spread over many
 * addresses of the same function */
__attribute__((noinline)) static uint64_t hot_mix(uint64_t x, int n)
{
	for (int i = 0; i < n; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		x = x * 0x9e3779b97f4a7c15ull + (uint64_t)i;
		x ^= (x >> 29) * 0xbf58476d1ce4e5b9ull;
	}
	return x;
}
__attribute__((noinline)) static uint64_t hot_sum(const uint64_t *v, int n)
{
	uint64_t s = 0;
	for (int i = 0; i < n; i++)
		s += v[i] * (uint64_t)(i | 1) + (s >> 3);
	return s;
}
uint64_t hot_run(uint64_t seed)
{
	static uint64_t v[4096];
	uint64_t x = hot_mix(seed, 8192);
	for (int i = 0; i < 4096; i++)
		v[i] = x + (uint64_t)i;
	return x ^ hot_sum(v, 4096);
}
