/*
 * intern.h - the writer's per-frame interning table (internal to format/).
 *
 * Maps a byte key (a string, or a callchain's ips) to an iid >= 1. Keys are
 * copied into the table. Entries added since the last prec_intern_emitted()
 * are "pending": the writer must still put them in an InternedData packet.
 *
 * prec_intern_reset() starts a new frame: every emitted entry is dropped,
 * pending ones are kept with their iids (their InternedData goes into the
 * new frame), so an iid handed out just before a cut stays valid for the
 * packet that uses it.
 *
 * The lookup is format/base/hashmap.h's slot table over ents; keys are
 * variable-size, so they live in this table's own arena.
 *
 * Key storage is 8-byte aligned, so a callchain key can be read in place
 * as uint64_t[]; string keys are stored with a NUL after them.
 */
#ifndef PREC_INTERN_H
#define PREC_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "format/base/hashmap.h"

struct prec_intern_entry {
	uint64_t hash;
	uint64_t iid;
	size_t off;      /* into keys */
	size_t len;      /* key bytes (without the NUL of strings) */
};

struct prec_intern {
	struct prec_intern_entry *ents;
	size_t n, cap;
	size_t emitted;        /* ents[0..emitted) are in the frame already */
	struct prec_hashidx idx;   /* the slots over ents[0..n) */
	uint64_t *keys;        /* key bytes, each key starts 8-aligned */
	size_t keys_len, keys_cap;   /* in bytes */
	uint64_t next_iid;
};

void prec_intern_init(struct prec_intern *t);
void prec_intern_release(struct prec_intern *t);

/* iid of key (adding it as pending if new), or 0 on allocation failure. */
uint64_t prec_intern_get(struct prec_intern *t, const void *key, size_t len);
/* Mark all pending entries as emitted. */
static inline void prec_intern_emitted(struct prec_intern *t) { t->emitted = t->n; }
static inline size_t prec_intern_pending(const struct prec_intern *t)
{
	return t->n - t->emitted;
}
static inline const void *prec_intern_key(const struct prec_intern *t, size_t i)
{
	return (const char *)t->keys + t->ents[i].off;
}
/* Start a new frame (see above). Returns 0 or -ENOMEM. */
int prec_intern_reset(struct prec_intern *t);

#endif
