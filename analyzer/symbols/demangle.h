/*
 * demangle.h - symbol names as perf shows them: C++ (Itanium ABI) and Rust
 * (legacy and v0 manglings) made readable.
 *
 * C++ goes to the platform C++ runtime's __cxa_demangle (libstdc++ on
 * Linux, libc++abi on macOS: the well-kept implementation every tool
 * uses), chosen at build time; without one, C++ names stay mangled. Symbol
 * names are untrusted trace bytes and that demangler recurses and keeps
 * per-byte arrays on the stack, so names longer than ANA_DEMANGLE_CXX_MAX
 * are not given to it (real symbols stay under 600 bytes: libLLVM's
 * longest is 554; fuzz_demangle runs it on arbitrary names behind this
 * bound).
 *
 * Rust: legacy symbols are Itanium-shaped (_ZN...17h<16 hex>E) with
 * $LT$-style escapes; v0 symbols (_R...) have their own grammar. Neither
 * is in any C library on macOS (libiberty has them, Linux only), so both
 * are parsed here (demangle_rust.c), bounded in input, output and
 * recursion, and printed like rustc-demangle's alternate form, which is
 * what perf and `c++filt -i` print: no hashes, no crate disambiguators.
 *
 * Every function returns a malloc'd string the caller frees, or NULL when
 * the name is not mangled, does not parse or exceeds a bound (show the
 * name as it is). Thread-safe.
 */
#ifndef ANA_DEMANGLE_H
#define ANA_DEMANGLE_H

#include <stddef.h>

#define ANA_DEMANGLE_CXX_MAX 4096
/* Rust: input bytes, output bytes, nesting (paths, types, backrefs). */
#define ANA_DEMANGLE_RUST_MAX 4096
#define ANA_DEMANGLE_RUST_OUT_MAX 16384
#define ANA_DEMANGLE_RUST_DEPTH 128

/* Any of the manglings below, Rust first (legacy Rust names are also
 * valid C++ names, but read worse as such). */
char *ana_demangle(const char *name);

char *ana_demangle_cxx(const char *name);
char *ana_demangle_rust_legacy(const char *name);
char *ana_demangle_rust_v0(const char *name);

/* 1 when this build can demangle C++ names. */
int ana_demangle_have_cxx(void);

#endif
