/*
 * symcache.h - the symbol tables of ELF objects, kept on disk by build-id
 * across recordings.
 *
 * Why: on a build host every recording meets the same compilers and
 * libraries, and reading an object's symbols (the ELF sections, a sort of
 * 10^5 names, the function ranges of its .eh_frame) was a third of the
 * recorder's CPU. An entry holds what symwrite.c derives from the file:
 * its symbols (those of its debug file when one was used), load segments
 * and bias, and the function ranges of its FDEs; symwrite.c reads the
 * same fields from an entry as from a file, so a hit writes exactly the
 * symbols a miss would. An entry is found by the build-id and a key of
 * the file (rec_symcache_file_key()): a stripped copy of a binary keeps
 * its build-id but not its .symtab.
 *
 * Root reads the cache, so nobody else may write it: the directory must
 * belong to the recorder's user and not be group- or world-writable
 * (rec_symcache_open() refuses it and says why), entries are opened with
 * O_NOFOLLOW and read only when they are regular files of that user, not
 * group- or world-writable (fstat), and each entry is parsed as untrusted
 * bytes: magic, version, build-id, lengths and a checksum are checked, a
 * damaged entry is ignored (a warning through rec_log) and rebuilt.
 * Entries are written to a temporary file and renamed into place, so a
 * reader sees a whole entry or none. The directory is bounded: past
 * max_bytes the entries used least recently (mtime, touched at each hit)
 * are removed.
 *
 * Entry layout (little-endian), REC_SYMCACHE_HDR bytes of header:
 *   0   magic "PRECSYMC"           8   u32 version (REC_SYMCACHE_VERSION)
 *   12  u32 build-id length        16  build-id, 64 bytes, zero-padded
 *   80  u32 source (enum below)    84  u32 flags (bit 0 ranges present,
 *                                      bit 1 ET_DYN, bit 2 from .dynsym)
 *   88  u64 load bias              96  u32 segments, symbols, eh_frame
 *                                      ranges, debug_frame ranges
 *   112 u32 bytes of names         116 u32 zero
 *   120 u64 payload bytes          128 u64 checksum: prec_hash_bytes of
 *                                      the header (checksum zero) and of
 *                                      the payload, combined
 *   136 u64 file key (rec_symcache_file_key)
 * then the payload: segments (offset, vaddr, filesz: 3 x u64), symbols
 * (start u64, size u64, name offset u32), ranges (begin, end: 2 x u64;
 * eh_frame's, then debug_frame's, each sorted by begin), names (each
 * NUL-terminated). Symbols are sorted by strictly increasing start.
 *
 * How to use (one thread):
 *
 *   c = rec_symcache_open(dir, max_bytes, why, sizeof(why)); // NULL: off
 *   ret = rec_symcache_get(c, bid, bid_len, &t);  // 0 hit, < 0 miss
 *   ... on a miss, fill t from the file (t.e as prec_elf_read_fd gives it)
 *   rec_symcache_put(c, &t);                      // after any change
 *   rec_symcache_table_release(&t);
 *   rec_symcache_free(c);
 *
 * Ownership: a table owns its prec_elf and ranges; the cache owns its
 * directory fd. Errors are negative errno; the library logs only the
 * damaged entries it ignores.
 */
#ifndef REC_SYMCACHE_H
#define REC_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "format/base/elf.h"
#include "format/unwind/cfi.h"

#define REC_SYMCACHE_VERSION 1
#define REC_SYMCACHE_HDR 144
/* Default bound of the directory: ~300 large objects' tables. */
#define REC_SYMCACHE_MAX_BYTES (256ull << 20)
/* No entry is larger (libLLVM's tables are ~20 MiB). */
#define REC_SYMCACHE_ENTRY_MAX (256u << 20)

/* Where the symbols of a table came from. */
enum rec_symcache_source {
	REC_SYMCACHE_SYMTAB = 0,   /* the object's own .symtab */
	REC_SYMCACHE_DYNSYM = 1,   /* .dynsym only, no debug file found */
	REC_SYMCACHE_DEBUG = 2,    /* the .symtab of its debug file */
};

/* A function range: the [begin, end) of one FDE, in object addresses. */
struct rec_fnrange {
	uint64_t begin, end;
};

struct rec_symcache_table {
	struct prec_elf e;          /* symbols, segments, bias, build-id */
	uint64_t file_key;          /* rec_symcache_file_key() of the file */
	int source;                 /* enum rec_symcache_source */
	int have_ranges;            /* ranges below are filled */
	struct rec_fnrange *ranges; /* [0, n_eh) .eh_frame's, then
				     * [n_eh, n_eh + n_dbg) .debug_frame's */
	size_t n_eh, n_dbg;
};

struct rec_symcache;

/* The directory from the environment: $PERFREC_SYMBOL_CACHE when set
 * ("" = no cache), else /var/cache/perfrec. */
const char *rec_symcache_default_dir(void);

/* Opens (and creates, mode 0755, when missing) the cache directory. NULL
 * with errno and a message in why (EPERM: wrong owner or mode) when it
 * cannot be used. max_bytes 0 = REC_SYMCACHE_MAX_BYTES. */
struct rec_symcache *rec_symcache_open(const char *dir, uint64_t max_bytes,
				       char *why, size_t why_len);
void rec_symcache_free(struct rec_symcache *c);   /* NULL is fine */

/* What besides the build-id tells files apart whose symbols differ: a
 * stripped copy keeps the build-id of the original but not its .symtab.
 * A hash of the file's size, ELF header and section header table (read
 * from fd: a few KiB). 0 and *key, or -EINVAL (not ELF), -errno. */
int rec_symcache_file_key(int fd, uint64_t *key);

/* The entry of build-id bid and file key: 0 and *t (release it),
 * -ENOENT when there is none, -EBADMSG when it was damaged (ignored,
 * warned about: put the rebuilt table), -EPERM when its owner or mode is
 * wrong (the same). */
int rec_symcache_get(struct rec_symcache *c, const uint8_t *bid,
		     size_t bid_len, uint64_t key, struct rec_symcache_table *t);
/* Stores t under its build-id (t->e.build_id, which must not be empty)
 * and file key, then evicts the least recently used entries past the
 * bound. */
int rec_symcache_put(struct rec_symcache *c, const struct rec_symcache_table *t);

/* An entry's bytes: 0 and *buf (malloc'd) and *len, or -ENOMEM, -E2BIG. */
int rec_symcache_encode(const struct rec_symcache_table *t, uint8_t **buf,
			size_t *len);
/* Parses an entry (untrusted bytes). bid NULL: any build-id and file
 * key. 0 and *t,
 * or -EBADMSG (with *why, static text, saying what is wrong), -ENOMEM. */
int rec_symcache_parse(const uint8_t *buf, size_t len, const uint8_t *bid,
		       size_t bid_len, uint64_t key, struct rec_symcache_table *t,
		       const char **why);
void rec_symcache_table_release(struct rec_symcache_table *t);

/* Fills t's ranges with the FDEs of a CFI table (every entry of its
 * .eh_frame, then of its .debug_frame). 0 or -ENOMEM. */
int rec_symcache_ranges_from_cfi(const struct prec_cfi_table *cfi,
				 struct rec_symcache_table *t);
/* The range holding vaddr: .eh_frame's first, then .debug_frame's (the
 * order prec_cfi_table_find() looks in). 0 and *r, or -ENOENT. */
int rec_symcache_range_find(const struct rec_symcache_table *t, uint64_t vaddr,
			    struct rec_fnrange *r);

#endif
