/*
 * opts.h - options structs that start with their size (as libbpf's
 * OPTS_VALID): a caller built against an older, shorter struct still
 * works, and one built against a newer struct is refused only when it set
 * a field this library does not know.
 */
#ifndef PREC_OPTS_H
#define PREC_OPTS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The rule itself: opts (first member: size_t sz) is acceptable to a
 * library that knows its first `known` bytes when sz covers at least the
 * size field and every byte past `known` is zero (a newer caller that set
 * nothing this library does not know). */
static inline bool prec_opts_valid(const void *opts, size_t known)
{
	size_t sz;

	memcpy(&sz, opts, sizeof(sz));
	if (sz < sizeof(size_t))
		return false;
	for (size_t i = known; i < sz; i++)
		if (((const unsigned char *)opts)[i])
			return false;
	return true;
}

/* Copies the caller's options src over dst, which holds the defaults and
 * is `known` bytes; dst's sz becomes known. Returns 0, or -EINVAL when
 * src is not valid (above). */
static inline int prec_opts_copy(void *dst, size_t known, const void *src)
{
	size_t sz;

	if (!prec_opts_valid(src, known))
		return -EINVAL;
	memcpy(&sz, src, sizeof(sz));
	memcpy(dst, src, sz < known ? sz : known);
	memcpy(dst, &known, sizeof(known));
	return 0;
}

/* A constructor's copy of an options string: NULL stays NULL; a copy that
 * fails sets *err = -ENOMEM (and returns NULL), so every string is copied
 * first and the error checked once. Free the copy with free(). */
static inline char *prec_opts_strdup(const char *s, int *err)
{
	size_t n;
	char *d;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	d = malloc(n);
	if (!d) {
		*err = -ENOMEM;
		return NULL;
	}
	memcpy(d, s, n);
	return d;
}

#endif
