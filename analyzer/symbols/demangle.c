/*
 * demangle.c - dispatch by mangling, and C++ through the C++ runtime (see
 * demangle.h).
 *
 * The runtime's demangler is chosen at build time (analyzer/CMakeLists.txt
 * finds __cxa_demangle in libstdc++ or libc++abi and defines
 * ANA_HAVE_CXA_DEMANGLE); it is declared here rather than through
 * <cxxabi.h>, a C++ header, since this is C. Its contract: a NUL-terminated
 * name in, a malloc'd string out (status 0), else NULL.
 */
/* strnlen: POSIX, present on Linux and macOS alike */
#define _POSIX_C_SOURCE 200809L

#include "analyzer/symbols/demangle.h"

#include <stdlib.h>
#include <string.h>

#ifdef ANA_HAVE_CXA_DEMANGLE
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
#endif

int ana_demangle_have_cxx(void)
{
#ifdef ANA_HAVE_CXA_DEMANGLE
	return 1;
#else
	return 0;
#endif
}

char *ana_demangle_cxx(const char *name)
{
#ifdef ANA_HAVE_CXA_DEMANGLE
	int status = 0;
	char *r;

	/* Only symbol names ("_Z..."): the runtime also takes bare type
	 * encodings ("i" is "int"), which would rename C symbols. */
	if (!name || strncmp(name, "_Z", 2) != 0 || strnlen(name, ANA_DEMANGLE_CXX_MAX + 1) >
	    ANA_DEMANGLE_CXX_MAX)
		return NULL;
	r = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(r);
		return NULL;
	}
	return r;
#else
	(void)name;
	return NULL;
#endif
}

char *ana_demangle(const char *name)
{
	char *r;

	if (!name || name[0] != '_')
		return NULL;
	if (name[1] == 'R' || (name[1] == '_' && name[2] == 'R'))
		return ana_demangle_rust_v0(name);
	if ((r = ana_demangle_rust_legacy(name)))
		return r;
	return ana_demangle_cxx(name);
}
