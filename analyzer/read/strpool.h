/*
 * strpool.h - interned strings with stable addresses.
 *
 * Trace strings (comms, object paths, symbol names) are interned per frame
 * in the file; the analyzer copies the ones it keeps into one pool so that
 * equal strings have equal pointers (aggregation keys compare pointers) and
 * outlive the frame they came from.
 *
 * Ownership: the pool owns every string it returns; they live until
 * ana_strpool_release().
 */
#ifndef ANA_STRPOOL_H
#define ANA_STRPOOL_H

#include <stddef.h>
#include <stdint.h>

struct ana_strpool {
	struct ana_str_slot { const char *s; uint64_t h; size_t len; } *slots;
	size_t nslots, count;
	struct ana_str_chunk *chunks;
};

void ana_strpool_init(struct ana_strpool *p);
void ana_strpool_release(struct ana_strpool *p);
/* The pooled copy of s (len bytes, need not be NUL-terminated); NULL on
 * ENOMEM. */
const char *ana_strpool_intern_n(struct ana_strpool *p, const char *s, size_t len);
const char *ana_strpool_intern(struct ana_strpool *p, const char *s);
/* *s replaced by its pooled copy (NULL stays NULL): 0 or -ENOMEM. */
int ana_strpool_intern_in(struct ana_strpool *p, const char **s);

#endif
