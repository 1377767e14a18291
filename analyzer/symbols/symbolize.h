/*
 * symbolize.h - names for addresses, from what the trace itself carries.
 *
 * A trace holds the process address spaces (Mmap packets, synthesized from
 * /proc at start and then from MMAP2 records), task lifetimes (TaskEvent:
 * fork copies the parent's maps, exec starts a fresh space) and the symbol
 * tables of the objects samples hit (SymbolTable packets: ELF symbols keyed
 * by build-id/path, the kernel's kallsyms, perf-PID.map files) and their
 * unwind tables (UnwindTable packets: DWARF CFI for copied user stacks). With them
 * an address resolves as  pid + ip -> mapping -> object -> symbol, or
 * through the kernel table for kernel addresses.
 *
 * How to use:
 *
 *   s = ana_symbols_new();
 *   ana_symbols_set_symfs(s, dir);              // optional, before resolving
 *   pass 1, every packet in file order:  ana_symbols_add(s, &packet);
 *   ana_symbols_finish(s);                      // sorts the tables
 *   pass 2: ana_symbols_resolve(s, pid, ip, kernel, time, &out);
 *   ana_symbols_free(s);
 *
 * Mapping packets are kept with their time, so an address is resolved
 * against the maps that were live at the sample's time, whichever frame the
 * mapping came from. The strings in `struct ana_sym` are owned by the
 * symbols object and live until ana_symbols_free().
 */
#ifndef ANA_SYMBOLIZE_H
#define ANA_SYMBOLIZE_H

#include <stdint.h>

#include "format/reader.h"

struct ana_symbols;
struct prec_cfi_table;

struct ana_sym {
	const char *sym;     /* function name, or NULL when unknown */
	uint64_t sym_off;    /* ip - symbol start */
	const char *dso;     /* object path ("[kernel.kallsyms]" for the
			      * kernel), or NULL when no mapping covers ip */
	uint64_t dso_off;    /* ip as an offset/address inside the object */
	int kernel;          /* resolved through the kernel table */
};

struct ana_symbols *ana_symbols_new(void);
void ana_symbols_free(struct ana_symbols *s);   /* NULL is fine */

/* Debug-file directory with richer symbol files, matched by build-id
 * (DIR/.build-id/xx/rest.debug) or by path (DIR/<object path>). */
int ana_symbols_set_symfs(struct ana_symbols *s, const char *dir);

/* Takes Mmap, TaskEvent, SymbolTable and UnwindTable packets; ignores
 * every other kind.
 * Copies what it keeps (the packet's frame may be freed afterwards). */
int ana_symbols_add(struct ana_symbols *s, const struct prec_packet *p);
int ana_symbols_finish(struct ana_symbols *s);

/* kernel: the ip is a kernel address (sample misc cpumode, or a callchain
 * entry after PERF_CONTEXT_KERNEL). Always fills out; returns 1 when a
 * symbol was found, 0 otherwise. */
int ana_symbols_resolve(struct ana_symbols *s, uint32_t pid, uint64_t ip,
			int kernel, uint64_t time, struct ana_sym *out);

/* The unwind table of the object mapped at user address pc in pid at
 * time, and the bias of that mapping (pc = object address + bias), for
 * format/unwind's find callback. 1 found, 0 no mapping or no table. The
 * table belongs to the symbols object (read-only, any thread). */
int ana_symbols_unwind_table(struct ana_symbols *s, uint32_t pid, uint64_t pc,
			     uint64_t time, const struct prec_cfi_table **table,
			     uint64_t *bias);

#endif
