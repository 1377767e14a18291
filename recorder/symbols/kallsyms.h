/*
 * kallsyms.h - kernel text symbols from /proc/kallsyms.
 *
 * Read once at the start of a recording (modules may unload later). Only
 * text symbols are kept (types t T w W). Module symbols ("addr t name
 * [module]") are kept with their module name; the gatherer writes them as
 * one KERNEL_MODULE SymbolTable per module, path "[module]", so reports can
 * name the module as the dso. Symbols of the core kernel go into the KERNEL
 * table. Sizes: kallsyms has none, so each symbol runs to the start of the
 * next symbol, except where that one belongs to another module: the last
 * text symbol of the core kernel or of a module runs to the next start or
 * REC_KALLSYMS_OPEN_MAX bytes, whichever is less, so the address of a
 * module loaded later (it lands in such a gap) is not taken for that
 * symbol and can be told unknown (the gatherer then reads kallsyms
 * again). The last symbol of all gets size 0 (its end is not guessed).
 *
 * kptr_restrict: when the kernel hides addresses every line reads as
 * 0000000000000000; rec_kallsyms_parse() then returns REC_KALLSYMS_HIDDEN
 * with no symbols, so the recorder can say so once ("kernel addresses
 * hidden by kptr_restrict") and record that fact.
 *
 * How to use:
 *
 *   struct rec_kallsyms k;
 *   ret = rec_kallsyms_load(NULL, &k);   // NULL = /proc/kallsyms
 *   ret == 0: k.syms[0 .. k.nsyms) sorted by start;
 *   ret == REC_KALLSYMS_HIDDEN: addresses hidden, k is empty;
 *   ret < 0: -errno.
 *   rec_kallsyms_release(&k);            // always, also after errors
 *
 * Ownership: struct rec_kallsyms owns all arrays and names. Malformed lines
 * are skipped and counted in `junk`, never fatal.
 */
#ifndef REC_KALLSYMS_H
#define REC_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#define REC_KALLSYMS_HIDDEN 1
/* 16 KiB: above the size of all but a few dozen of ~60k kernel text
 * functions, well below the distance to the next module. */
#define REC_KALLSYMS_OPEN_MAX 16384u

struct rec_ksym {
	uint64_t start, size;
	const char *name;
	uint32_t module;     /* 0 = core kernel, else index into modules + 1 */
};

struct rec_kallsyms {
	struct rec_ksym *syms;   /* sorted by start */
	size_t nsyms;
	const char **modules;    /* module names, without brackets */
	size_t nmodules;
	uint64_t text_start;     /* _stext, 0 if not seen */
	size_t junk;             /* lines that did not parse */
	char *names;             /* storage for names and module names */
};

/* Parses kallsyms text (not NUL-terminated; len bytes). 0,
 * REC_KALLSYMS_HIDDEN or -ENOMEM. */
int rec_kallsyms_parse(const char *text, size_t len, struct rec_kallsyms *out);
/* Reads the file (NULL = /proc/kallsyms) and parses it. */
int rec_kallsyms_load(const char *path, struct rec_kallsyms *out);
void rec_kallsyms_release(struct rec_kallsyms *k);

/* What the text of kallsyms at path (NULL = /proc/kallsyms) depends
 * on, in 64 bits, read far more cheaply than the text itself: for
 * /proc/kallsyms, the loaded modules (name and address of each line of
 * /proc/modules, none when the kernel has no module support) and the ids of the loaded BPF programs (whose JIT code,
 * trampolines included, kallsyms lists as "[bpf]"); for another file,
 * its inode, size and mtime. Equal fingerprints: a new read would give
 * the same symbols, so the gatherer skips it. 0 and *fp, or -errno when
 * it cannot tell (no right to list BPF programs): read then. */
int rec_kallsyms_fingerprint(const char *path, uint64_t *fp);

/* Index of the symbol containing addr, or -1. */
long rec_kallsyms_find(const struct rec_kallsyms *k, uint64_t addr);

#endif
