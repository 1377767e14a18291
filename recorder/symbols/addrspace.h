/*
 * addrspace.h - the bottom of symbols/: the address-space model's calls
 * (mappings, forks, execs, exits, the addresses hit, a new output) and the
 * types the whole symbol gatherer shares (its options, a mapping, its
 * statistics). symgather.h includes it: the recorder's one interface is
 * symgather.h, whose "how to use" gives the call order of all of these.
 * addrspace.c defines these calls; the gatherer's state they work on is
 * in addrspace_int.h, which only the files of symbols/ include.
 */
#ifndef REC_ADDRSPACE_H
#define REC_ADDRSPACE_H

#include <stddef.h>
#include <stdint.h>

struct rec_symgather;

struct rec_symgather_opts {
	size_t sz;                  /* sizeof(struct rec_symgather_opts) */
	int kernel;                 /* read kallsyms, write kernel tables */
	const char *kallsyms_path;  /* NULL = /proc/kallsyms */
	int perf_maps;              /* read perf-PID.map files */
	const char *perfmap_dir;    /* NULL = /tmp */
	int full_tables;            /* every function, not only those hit */
	int proc_root;              /* open files as /proc/PID/root/PATH
				     * first (containers, deleted files) */
	size_t chunk;               /* symbols per SymbolTable packet */
	size_t max_pending;         /* unmatched hits kept for later */
	/* A pid first met through a sample or mmap (not a fork/exec the
	 * gatherer saw) existed before: read its executable mappings from
	 * PROC/PID/maps then, once. NULL = "/proc"; "" = never. */
	const char *proc_maps;
	/* Debug files of stripped objects (-dbg packages), looked up as
	 * DIR/.build-id/xx/rest.debug: their .symtab names local functions
	 * the .dynsym lacks. NULL = "/usr/lib/debug"; "" = never. */
	const char *debug_dir;
	/* The machine whose user stacks rec_symgather_unwind() unwinds
	 * (uname -m, format/unwind's register sets). NULL = this host. */
	const char *machine;
	/* A kernel address no symbol holds (a module loaded after the
	 * start) makes the gatherer read kallsyms again, at most this often
	 * (doubling while a read names nothing new, up to 64 times). 0 =
	 * never. */
	uint32_t kallsyms_reload_ms;
	/* Symbol tables of ELF objects kept across recordings, by build-id
	 * (symcache.h): the directory, NULL or "" = none (a recorder passes
	 * rec_symcache_default_dir()); its bound in bytes, 0 = the default
	 * (REC_SYMCACHE_MAX_BYTES). */
	const char *symcache_dir;
	uint64_t symcache_max;
};

#define REC_SYMGATHER_OPTS_INIT { sizeof(struct rec_symgather_opts), \
	1, NULL, 1, NULL, 0, 1, 4096, 1u << 20, NULL, NULL, NULL, 1000, \
	NULL, 0 }

/* One mapping. Strings and bytes are copied. */
struct rec_symgather_map {
	uint32_t pid;
	uint64_t start, len, pgoff;
	const char *path;           /* as the kernel names it */
	const uint8_t *build_id;    /* NULL / 0 when unknown */
	size_t build_id_len;
};

struct rec_symgather_stats {
	uint64_t time_ns;           /* spent in new() and write() */
	uint64_t bytes;             /* SymbolTable + Note packet bytes,
				     * interned names included (before
				     * compression) */
	uint64_t tables;            /* SymbolTable packets written */
	uint64_t objects;           /* ELF objects written with symbols */
	uint64_t unavailable;       /* objects written as UNAVAILABLE */
	uint64_t symbols;           /* symbols written */
	uint64_t fde_ranges;        /* of them, function ranges from FDEs
				     * (addresses no symbol held) */
	uint64_t pending_dropped;   /* hits lost: pending list was full */
	uint64_t procs_scanned;     /* PROC/PID/maps files read */
	uint64_t feed_errors;       /* rec_symgather_observe() failures */
	int kernel_status;          /* 0, REC_KALLSYMS_HIDDEN or -errno */
	uint64_t kallsyms_reads;    /* kallsyms re-read for unknown addresses */
	uint64_t kallsyms_unchanged;/* re-reads skipped: nothing it depends
				     * on changed (rec_kallsyms_fingerprint) */
	uint64_t kernel_unknown;    /* kernel addresses no symbol held */
	/* the symbol cache (opts.symcache_dir): tables read from it, tables
	 * read from their files instead (no entry, or a damaged one), and
	 * entries written (new ones, or ones given function ranges) */
	uint64_t symcache_hits;
	uint64_t symcache_misses;
	uint64_t symcache_damaged;  /* of the misses: damaged or untrusted */
	uint64_t symcache_stores;
	/* unwinding (rec_symgather_unwind) */
	uint64_t unwind_objects;    /* objects whose unwind sections were read */
	uint64_t unwind_unavailable;/* objects without readable ones */
	uint64_t unwind_held;       /* bytes of unwind sections in memory */
	uint64_t unwind_load_ns;    /* spent reading them */
	uint64_t unwind_tables;     /* UnwindTable packets written */
	uint64_t unwind_bytes;      /* their bytes (before compression) */
};

void rec_symgather_free(struct rec_symgather *sc);   /* NULL is fine */

int rec_symgather_add_mmap(struct rec_symgather *sc,
			   const struct rec_symgather_map *m);
int rec_symgather_fork(struct rec_symgather *sc, uint32_t pid, uint32_t ppid);
int rec_symgather_exec(struct rec_symgather *sc, uint32_t pid);
int rec_symgather_exit(struct rec_symgather *sc, uint32_t pid);

/* kernel: the ip is a kernel address (sample cpumode). */
int rec_symgather_hit(struct rec_symgather *sc, uint32_t pid, uint64_t ip,
		      int kernel);
/* ips as the kernel gave them, PERF_CONTEXT_* markers included; entries
 * before the first marker count as kernel when `kernel` is set. */
int rec_symgather_hit_callchain(struct rec_symgather *sc, uint32_t pid,
				const uint64_t *ips, size_t n, int kernel);

/* A new output begins (rotation): forget which symbols were written and
 * hit, so the next rec_symgather_write() gives the new output the tables
 * of what its own samples hit. Address spaces are kept. Write the old
 * output's tables first. */
void rec_symgather_restart(struct rec_symgather *sc);

#endif
