/*
 * fuzz_demangle.c - analyzer/demangle on arbitrary symbol names: the
 * platform's __cxa_demangle behind ANA_DEMANGLE_CXX_MAX, and our Rust
 * legacy and v0 demanglers. The input is one name (a NUL ends it early);
 * it is also tried with each prefix ("_Z", "_ZN", "_R") forced in front,
 * so mutations spend their time inside the grammars. Results must be NUL-
 * terminated strings within the output bounds; nothing may crash, hang,
 * overflow the stack or leak (seeds: tests/fuzz/corpus/fuzz_demangle/,
 * real C++ and Rust names).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/symbols/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const char *name)
{
	char *d = ana_demangle(name);

	if (d) {
		size_t n = strlen(d);
		if (name[1] == 'R' && n >= ANA_DEMANGLE_RUST_OUT_MAX)
			abort();
		free(d);
	}
	free(ana_demangle_rust_legacy(name));
	free(ana_demangle_rust_v0(name));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const prefixes[] = { "", "_Z", "_ZN", "_R" };
	char *s;

	if (size > 2 * ANA_DEMANGLE_RUST_MAX)
		return 0;
	s = malloc(size + 4);
	if (!s)
		return 0;
	for (size_t k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++) {
		size_t pl = strlen(prefixes[k]);
		memcpy(s, prefixes[k], pl);
		memcpy(s + pl, data, size);
		s[pl + size] = 0;
		one(s);
	}
	free(s);
	return 0;
}
