/*
 * opts.h - options structs that start with their size (as libbpf's
 * OPTS_VALID): a caller built against an older, shorter struct still
 * works, and one built against a newer struct is refused only when it set
 * a field this library does not know.
 */
#ifndef REC_OPTS_H
#define REC_OPTS_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* Copies the caller's options src (first member: size_t sz) over dst,
 * which holds the defaults and is `known` bytes. Returns 0, or -EINVAL
 * when sz is smaller than the size field itself or when bytes past
 * `known` are not zero. */
static inline int rec_opts_copy(void *dst, size_t known, const void *src)
{
	size_t sz;

	memcpy(&sz, src, sizeof(sz));
	if (sz < sizeof(size_t))
		return -EINVAL;
	for (size_t i = known; i < sz; i++)
		if (((const unsigned char *)src)[i])
			return -EINVAL;
	memcpy(dst, src, sz < known ? sz : known);
	memcpy(dst, &known, sizeof(known));
	return 0;
}

#endif
