/*
 * addrspace_int.h - the symbol gatherer's state and its address-space
 * model, at the bottom of symbols/: processes and their mappings, the
 * objects they map, the hits recorded against both, the kernel symbols.
 * addrspace.c owns it; the files above read the state and call down,
 * never across or back up (symgather.c lists the chain):
 *
 *   symgather.c -> symunwind.c, symwrite.c -> objfile.c -> addrspace.c
 *
 * Only the files of symbols/ include it; the rest of the recorder sees
 * the gatherer as the opaque object of symgather.h. The calls of
 * addrspace.h are defined in addrspace.c too.
 */
#ifndef REC_ADDRSPACE_INT_H
#define REC_ADDRSPACE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "format/unwind/unwind.h"
#include "recorder/symbols/addrspace.h"
#include "recorder/symbols/elfcfi.h"
#include "recorder/symbols/kallsyms.h"
#include "recorder/symbols/symcache.h"
#include "recorder/symbols/u64map.h"

#define NO_OBJ UINT32_MAX
/* PERF_CONTEXT_* markers in callchains (uapi perf_event.h): every value
 * at or above PERF_CONTEXT_MAX is a marker, not an address. */
#define CTX_MAX ((uint64_t)-4095)
#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)
#define KERNEL_PATH "[kernel.kallsyms]"
#define VDSO_PATH "[vdso]"
/* Approximate bytes an interned name adds besides its text: iid varint,
 * field tags and length prefixes of the InternedString entry. */
#define NAME_OVERHEAD 4


struct sc_obj {
	char *path;
	uint8_t bid[64];
	size_t bid_len;
	uint32_t pid;             /* a process that mapped it (for /proc) */
	uint64_t start, end;      /* that mapping (for map_files) */
	struct rec_u64map hits;       /* file offsets hit since the last write */
	struct rec_u64map done;       /* symbol starts written */
	int written;              /* the table header went out */
	int full_done;            /* full table / UNAVAILABLE: nothing more */
	uint8_t file_bid[64];     /* build-id of the file first read */
	size_t file_bid_len;
	uint32_t next;            /* hash chain */
	/* unwinding (symunwind.c): the object's CFI, read at the first
	 * unwind through it and kept for the recording's life */
	struct sc_cfi *cfi;       /* NULL: not read yet, or unreadable */
	int cfi_err;              /* < 0: unreadable (-errno), cfi_why says
				   * more when not NULL (static text) */
	const char *cfi_why;
	int unwind_need;          /* a stack kept raw went through it */
	int unwind_written;       /* its UnwindTable went out (this output) */
};

struct sc_cfi {
	struct rec_elfcfi c;  /* the sections (owned) */
	struct prec_cfi_table *t; /* over c's bytes */
};

struct sc_map {
	uint64_t start, end, pgoff;
	uint32_t obj;             /* NO_OBJ: not an ELF file (anon ...) */
};

struct sc_proc {
	uint32_t pid;
	int known;                /* maps came from /proc, a fork or an exec */
	uint32_t gen;             /* stamp of its last mapping change (see
				   * rec_symgather.hcache) */
	struct sc_map *maps;      /* sorted by start, non-overlapping */
	size_t n, cap;
	/* The space before the last exec: the rings are read in rounds
	 * merged by time (ring/drain.h), but a record the kernel published
	 * late can still come after a later one of another CPU (the drain's
	 * `late` count: a few per million), so a sample taken just before
	 * an exec may be decoded after it. */
	struct sc_map *old;
	size_t nold;
	struct rec_u64map jit_hits;   /* ips outside ELF mappings */
	struct rec_u64map jit_done;   /* perf-map symbol starts written */
};

struct pending {
	uint32_t pid;
	int ret_addr;
	uint64_t ip;
};

#define HCACHE_BITS 14
#define HCACHE_SIZE (1u << HCACHE_BITS)
/* A cached hit, one of three kinds by tag (0 never matches: empty):
 *  kernel: pid 0, tag 2 | ret_addr;
 *  user, recorded in an ELF object: tag = the process's gen << 2 | ret_addr,
 *    valid until its address space changes;
 *  user, not in an ELF object (pending, or a JIT hit): tag = the later of
 *    the process's gen and the write epoch << 2 | 2 | ret_addr, valid
 *    until the next write (which settles pending hits and starts JIT hits
 *    afresh) or a change of the address space. */
struct hit_slot {
	uint64_t ip;
	uint32_t pid;
	uint32_t tag;
};

struct rec_symgather {
	struct rec_symgather_opts o;

	struct sc_obj **objs;
	size_t nobjs, cobjs;
	struct rec_u64map obj_index;  /* hash(path, bid) -> first obj + 1 */

	struct sc_proc **procs;
	size_t nprocs, cprocs;
	struct rec_u64map proc_index; /* pid -> proc index */

	struct pending *pend;
	size_t npend, cpend;

	/* Hits already recorded, so the hot path skips the map and symbol
	 * searches for the addresses callchains repeat (nearly all of them).
	 * Direct-mapped, no eviction order: a collision only costs the slow
	 * path once more. A user entry is valid while its process's address
	 * space is unchanged: a change (a mapping over an old one, fork,
	 * exec) gives that process a new stamp from `gen`, which only grows,
	 * so its old entries stop matching and other processes' stay (on a
	 * build host processes fork and exec all the time: one global
	 * generation emptied the cache for everyone at each). */
	struct hit_slot *hcache;  /* [HCACHE_SIZE] */
	uint32_t gen;             /* the last stamp given */
	uint32_t epoch;           /* stamp taken at the last write */
	struct sc_proc *last_proc;    /* the process of the last user hit */

	struct rec_kallsyms ksyms;
	uint8_t *kstate;          /* per kernel symbol: 0, 1 hit, 2 written */
	int kernel_hits;          /* unwritten kernel hits exist */
	int kernel_noted;         /* hidden/unavailable kernel recorded */
	/* Kernel addresses no symbol holds (a module loaded after kallsyms
	 * was read, a BPF program): kept (bounded) until a new read of
	 * kallsyms names them. No read before kreload_ns; each read that
	 * names nothing doubles the wait (kreload_mult, up to 64). */
	struct rec_u64map kunknown;
	uint64_t kreload_ns;
	uint32_t kreload_mult;
	/* rec_kallsyms_fingerprint() taken before the last read: a reload
	 * is skipped while it is unchanged (kfinger_ok: it could be taken) */
	uint64_t kfinger;
	int kfinger_ok;

	const struct prec_unwind_arch *arch;  /* NULL: no unwinding here */
	/* CFI rows of recent frames (symunwind.c): made at the first
	 * unwind; tables live as long as the gatherer, so it is never
	 * stale */
	struct prec_unwind_cache *ucache;

	struct rec_symcache *cache;   /* NULL: no symbol cache */

	struct rec_symgather_stats st;
};

/* The address space of pid, read from /proc when the pid is new (as a
 * hit does); NULL on allocation failure. */
struct sc_proc *rec_symgather_proc(struct rec_symgather *sc, uint32_t pid);
/* The mapping of p holding ip (the space before the last exec too), or
 * NULL. */
const struct sc_map *rec_symgather_map_at(const struct sc_proc *p, uint64_t ip);
/* Frees an object's CFI (made by symunwind.c); NULL is fine. */
void rec_symgather_cfi_free(struct sc_cfi *c);

/* Reads kallsyms again when unknown kernel addresses wait and the wait
 * is over (or now when force); they then count as hits if named. 1 =
 * read, 0 = not due, < 0 = error. */
int rec_symgather_kernel_reload(struct rec_symgather *sc, int force);

/* Records a user-space hit of pid at ip: 2 = in an ELF
 * object, 1 = handled otherwise (JIT), 0 = not matched yet; < 0 error. */
int rec_symgather_user_hit(struct rec_symgather *sc, uint32_t pid,
			   uint64_t ip, int ret_addr, int last_chance);

/* A write is done: pending and JIT hits cached before it stop matching
 * (see struct hit_slot). */
void rec_symgather_new_epoch(struct rec_symgather *sc);

#endif
