/*
 * elfsym.h - function symbols, load segments and build-id of an ELF file
 * (libelf/gelf), as the recorder writes them into SymbolTable packets.
 *
 * What is read: function symbols (STT_FUNC and STT_GNU_IFUNC, defined, with
 * a name) of .symtab, or of .dynsym when there is no .symtab with functions
 * (a stripped file still names its exported functions); the PT_LOAD
 * segments; the GNU build-id note (SHT_NOTE sections, else PT_NOTE).
 * Aliases at one address collapse to one name (global before weak before
 * local, then fewer leading underscores, then the shorter name), and a
 * symbol of size 0 gets the distance to the next symbol as its size (so a
 * table filtered to the symbols that were hit stays exact).
 *
 * Address math (PIE, shared objects and non-PIE alike). Symbol starts are
 * st_value, an ELF virtual address. A runtime ip inside a mapping
 * (start, pgoff) of this file lies at
 *
 *     file_off = ip - map.start + map.pgoff
 *
 * and its ELF address is found through the PT_LOAD segment whose
 * [p_offset, p_offset + p_filesz) holds file_off:
 *
 *     vaddr = file_off - p_offset + p_vaddr          (rec_elfsym_vaddr)
 *
 * For a non-PIE executable p_vaddr is absolute (0x400000 ...) and the
 * mapping sits at that address, so vaddr == ip; for PIE and shared objects
 * p_vaddr is small and the kernel chose map.start, so vaddr == ip - (load
 * base). The load bias (first PT_LOAD's p_vaddr - p_offset) is 0 for
 * GNU-ld PIE/DSOs and 0x400000 for classic non-PIE; linkers that give
 * segments different vaddr - offset distances (lld) are covered by the
 * per-segment rule, which is why the segments travel in the trace
 * (SymbolTable.load_offsets/vaddrs/sizes) next to load_bias.
 *
 * How to use:
 *
 *   struct rec_elfsym e;
 *   if (rec_elfsym_load(path, &e) == 0) {      // or _read_fd / _read_mem
 *       ... e.syms[0 .. e.nsyms) sorted by start, e.build_id ...
 *       rec_elfsym_release(&e);
 *   }
 *
 * Ownership: struct rec_elfsym owns its arrays and names; release frees
 * them. Input bytes are untrusted: a corrupt or truncated file gives a
 * negative errno, never a crash. The library never prints.
 */
#ifndef REC_ELFSYM_H
#define REC_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

struct rec_elfsym_sym {
	uint64_t start;     /* st_value */
	uint64_t size;
	const char *name;   /* in rec_elfsym's storage */
};

struct rec_elfsym_seg {
	uint64_t offset, vaddr, filesz;
};

struct rec_elfsym {
	struct rec_elfsym_sym *syms;   /* sorted by start, one per start */
	size_t nsyms;
	struct rec_elfsym_seg *segs;   /* PT_LOAD in program-header order */
	size_t nsegs;
	uint64_t load_bias;            /* first PT_LOAD p_vaddr - p_offset */
	uint8_t build_id[64];
	size_t build_id_len;           /* 0: no GNU build-id note */
	int from_dynsym;               /* only exported symbols were found */
	int is_dyn;                    /* ET_DYN: PIE or shared object */
	char *names;
};

/* 0 or: -EINVAL not an ELF file, -EBADMSG corrupt (libelf refused a
 * header/section it needed), -ENOMEM. On error *out is zeroed. */
int rec_elfsym_read_mem(const void *buf, size_t len, struct rec_elfsym *out);
int rec_elfsym_read_fd(int fd, struct rec_elfsym *out);   /* fd borrowed */
/* Also -errno from open(). */
int rec_elfsym_load(const char *path, struct rec_elfsym *out);
void rec_elfsym_release(struct rec_elfsym *e);   /* zeroed is fine */

/* Only the build-id (cheap: notes only, no symbols). Returns its length
 * (> 0), 0 when the file has none, or a negative errno. */
int rec_elfsym_build_id_fd(int fd, uint8_t *out, size_t cap);

/* file offset -> ELF vaddr through the PT_LOAD holding it; a file offset no
 * segment holds maps by load_bias. */
uint64_t rec_elfsym_vaddr(const struct rec_elfsym *e, uint64_t file_off);
/* The same through segments segs[0..n) and load_bias. */
uint64_t rec_elfsym_segs_vaddr(const struct rec_elfsym_seg *segs, size_t n,
			       uint64_t load_bias, uint64_t file_off);

/* The symbol containing vaddr, or NULL. */
const struct rec_elfsym_sym *rec_elfsym_find(const struct rec_elfsym *e,
					     uint64_t vaddr);

/* ---- unwind sections (--call-graph dwarf)
 *
 * The DWARF call frame information of an ELF file, for unwinding user
 * stacks at record time (format/unwind) and for UnwindTable packets:
 * .eh_frame and .eh_frame_hdr, or .debug_frame when the file has no
 * .eh_frame (a compressed .debug_frame is inflated). Bytes are copied out
 * of libelf, so they live as long as the struct. A file with none of
 * them gives -ENOENT.
 *
 *   struct rec_elfsym_cfi c;
 *   if (rec_elfsym_cfi_read_fd(fd, &c) == 0) {
 *       ... c.eh_frame.data / .len / .addr, c.segs ...
 *       rec_elfsym_cfi_release(&c);
 *   }
 */

/* Larger sections are refused (-EFBIG): the largest .eh_frame of a
 * Debian system, libLLVM's, is 9 MiB; the analyzer takes 256 MiB. */
#define REC_ELFSYM_CFI_MAX (64u << 20)

struct rec_elfsym_cfi_sec {
	uint8_t *data;                 /* NULL: the file has no such section */
	size_t len;
	uint64_t addr;                 /* sh_addr */
};

struct rec_elfsym_cfi {
	struct rec_elfsym_cfi_sec eh_frame, eh_frame_hdr, debug_frame;
	struct rec_elfsym_seg *segs;   /* PT_LOAD, as in struct rec_elfsym */
	size_t nsegs;
	uint64_t load_bias;
	uint8_t build_id[64];
	size_t build_id_len;
};

/* 0, or -ENODATA (no unwind section), -EFBIG, and the errors of
 * rec_elfsym_read_*. On error *out is zeroed. */
int rec_elfsym_cfi_read_fd(int fd, struct rec_elfsym_cfi *out);   /* fd borrowed */
int rec_elfsym_cfi_read_mem(const void *buf, size_t len, struct rec_elfsym_cfi *out);
void rec_elfsym_cfi_release(struct rec_elfsym_cfi *c);   /* zeroed is fine */
/* Bytes held (sections and segments). */
size_t rec_elfsym_cfi_bytes(const struct rec_elfsym_cfi *c);

#endif
