/*
 * symgather.h - gathers the symbols a trace needs, while it is recorded.
 *
 * Why: a .prec file must name every frame on a machine that never saw the
 * host (DESIGN.md principle 8). The recorder feeds this gatherer the
 * address spaces (mappings, forks, execs) and every address a sample or
 * callchain hit; rec_symgather_write() then emits SymbolTable packets for
 * exactly the objects that were hit. Each symbol goes out once per
 * gatherer: a later write adds only symbols hit since (more chunks of the
 * same table, which readers merge by kind/path/build-id/pid):
 *
 *  - ELF objects: symbols read once per file (format/base/elf.h), or
 *    taken from the symbol cache by build-id (opts.symcache_dir,
 *    symcache.h: the same symbols, kept across recordings), keyed by
 *    build-id and path (a stripped object takes the .symtab of its debug
 *    file when one is installed); by default only the symbols hit are
 *    written (sizes exact, so nothing else is misnamed); a hit no symbol
 *    holds (a stripped object's internal functions) is written as the
 *    function range of the .eh_frame FDE covering it, named
 *    "object+0xSTART" (objfile.h's CFI, read once per object); objects that
 *    vanished, are not ELF or changed since they were mapped become
 *    UNAVAILABLE tables with the reason;
 *  - the kernel: /proc/kallsyms is read at rec_symgather_new() (modules can
 *    unload later), and again when a kernel address no symbol holds was
 *    hit (a module loaded since), at most every opts.kallsyms_reload_ms
 *    and only when the modules or BPF programs changed since the last
 *    read (rec_kallsyms_fingerprint());
 *    one KERNEL table plus one KERNEL_MODULE table ("[mod]") per module
 *    hit; addresses hidden by kptr_restrict give an UNAVAILABLE
 *    "[kernel.kallsyms]" table and a WARNING Note instead;
 *  - JIT code: DIR/perf-PID.map of every pid that hit memory no ELF mapping
 *    covers (PERF_MAP tables, absolute addresses);
 *  - [vdso]: named from the recorder's own vDSO image (same kernel);
 *  - unwind tables (UnwindTable: .eh_frame, .eh_frame_hdr, or .debug_frame)
 *    of the objects whose CFI unwound a user stack that is written raw
 *    (see rec_symgather_unwind()).
 *
 * Processes that existed before the recording are not announced by the
 * kernel: the first sample or mmap of an unknown pid reads PROC/PID/maps
 * (opts.proc_maps); forks copy the parent's maps, execs start afresh
 * (keeping one generation back for samples decoded late).
 *
 * How to use (one thread, the recorder's writer thread):
 *
 *   struct rec_symgather_opts o = REC_SYMGATHER_OPTS_INIT;
 *   sc = rec_symgather_new(&o);                // reads kallsyms now
 *   while recording, in the order the records are decoded:
 *       rec_symgather_add_mmap(sc, &map);      // /proc maps at start, MMAP2
 *       rec_symgather_fork(sc, pid, ppid);     // PERF_RECORD_FORK, pid != ppid
 *       rec_symgather_exec(sc, pid);           // COMM with exec
 *       rec_symgather_exit(sc, pid);           // PERF_RECORD_EXIT (maps kept:
 *                                               // late samples still match)
 *       rec_symgather_hit(sc, pid, ip, kernel);            // sample ip
 *       rec_symgather_hit_callchain(sc, pid, ips, n, k);   // callchain
 *       rec_symgather_unwind(sc, pid, &regs, &stack, raw, ...); // dwarf
 *   or simply, for every decoded ring record:
 *       rec_symgather_feed(sc, &record);       // all of the above
 *   now and then for long/streamed recordings, and once at the end:
 *       rec_symgather_write(sc, writer, stream, now_ns);
 *   rec_symgather_stats(sc, &st);   // -> SessionEnd.symbol_time_ns/_bytes
 *   rec_symgather_free(sc);
 *
 * Hits that arrive before their mapping (a mapping read from /proc after
 * the process was first met, records lost in a full ring) are kept
 * (bounded) and matched again at write time.
 *
 * Ownership: the gatherer copies everything it is given but the strings
 * of its opts (paths and directories, read again while it records: keep
 * them alive until free); it borrows the writer only during
 * rec_symgather_write(), and the registers and stack of an unwind during
 * the call. It owns the unwind sections it reads and their CFI tables.
 * Errors are negative errno (or the writer's PREC_E_* code); the library
 * never prints.
 */
#ifndef REC_SYMGATHER_H
#define REC_SYMGATHER_H

#include <stddef.h>
#include <stdint.h>

#include "format/unwind/unwind.h"
#include "format/writer.h"
#include "recorder/symbols/addrspace.h"

/* NULL opts = REC_SYMGATHER_OPTS_INIT. NULL + errno on failure; a kallsyms
 * that cannot be read is not a failure (see stats.kernel_status). */
struct rec_symgather *rec_symgather_new(const struct rec_symgather_opts *o);

struct rec_record;

/* Feeds one decoded kernel record (recorder/decode.h): SAMPLE (ip by its
 * cpumode, callchain), MMAP2, FORK, COMM with exec, EXIT of a process;
 * other types are ignored. Call it for every record, in decode order,
 * after its packet was written. Returns 0 or -ENOMEM. */
int rec_symgather_feed(struct rec_symgather *sc, const struct rec_record *r);
/* The same as an observer callback: ctx is the gatherer; errors only
 * leave symbols out (counted in stats.feed_errors). */
void rec_symgather_observe(void *ctx, const struct rec_record *r);

/* Whether a mapping of process pid holds user address addr, for the
 * emitter's cut of frame-pointer chains (recorder/encode/emit.h; ctx is
 * the gatherer): 1 yes, 0 no, -ENOMEM. A pid never met is read from
 * /proc first, as a hit would. The answer is final when it is asked:
 * records arrive merged by time across the CPUs' rings
 * (recorder/ring/drain.h), so every exec and mmap made before the
 * sample's `time` was fed before it (`time` is unused: the emitter's
 * callback passes it). */
int rec_symgather_user_mapped(void *ctx, uint32_t pid, uint64_t addr,
			      uint64_t time);

/* ---- user stacks (--call-graph dwarf)
 *
 * Unwinds a copy of pid's user stack through the address spaces above and
 * the DWARF CFI of the objects the stack runs through (format/unwind;
 * frame pointers where no CFI covers a pc). Each object's unwind sections
 * are read from its file at the first unwind through it and kept until
 * free (stats.unwind_held). The addresses found count as hits, so their
 * symbols are written. raw: the stack goes into the trace as it is, so
 * the objects whose CFI it used get UnwindTable packets at the next
 * write (the analyzer unwinds it offline from them). Returns the number
 * of addresses in ips (the pc, then return addresses; res says why the
 * unwind stopped, res->stack_used how many bytes of the copy it read), or
 * -EINVAL, -ENOMEM. */
int rec_symgather_unwind(struct rec_symgather *sc, uint32_t pid,
			 const struct prec_unwind_regs *regs,
			 const struct prec_unwind_stack *stack, int raw,
			 uint64_t *ips, size_t max, struct prec_unwind_result *res);
/* The register set user stacks of `machine` (uname -m; NULL = this host)
 * unwind with, and whose PERF_SAMPLE_REGS_USER mask (perf_mask_min) the
 * recording requests; NULL when format/unwind has none. */
const struct prec_unwind_arch *rec_symgather_arch(const char *machine);
/* The same for a decoded sample with user registers and stack, as the
 * emitter's unwind callback (recorder/encode/emit.h; ctx is the
 * gatherer): *keep = the bytes of the stack an offline unwind of it
 * reads, *stop = how the unwind ended. */
int rec_symgather_unwind_sample(void *ctx, const struct rec_record *r, int raw,
				uint64_t *ips, size_t max, size_t *keep, int *stop);

/* Writes the tables of everything hit and not yet written on `stream`
 * (each packet gets time_ns). Returns the number of packets written or < 0. */
int rec_symgather_write(struct rec_symgather *sc, struct prec_writer *w,
			uint32_t stream, uint64_t time_ns);

void rec_symgather_stats(const struct rec_symgather *sc,
			 struct rec_symgather_stats *st);

#endif