/*
 * elf.h - the one ELF reader: function symbols, load segments, build-id
 * and named sections, portable and bounds-checked.
 *
 * Why it exists: the recorder writes SymbolTable and UnwindTable packets
 * from the binaries it saw, and the analyzer reads richer symbol files
 * (--symfs: -dbg packages, unstripped copies) on a laptop (Linux or macOS)
 * without libelf or <elf.h>. One reader serves both, so the tables they
 * make agree. ELF32 and ELF64, either byte order; libc only.
 *
 * What is read: function symbols (STT_FUNC and STT_GNU_IFUNC, defined, with
 * a name) of .symtab, or of .dynsym when there is no .symtab with functions
 * (a stripped file still names its exported functions); the PT_LOAD
 * segments; the GNU build-id note (SHT_NOTE sections, else PT_NOTE).
 * Aliases at one address collapse to one name (global before weak before
 * local, then fewer leading underscores, then the shorter name), and a
 * symbol of size 0 runs to the next symbol within its section (so a table
 * filtered to the symbols that were hit stays exact, and _init does not
 * swallow the PLT).
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
 *     vaddr = file_off - p_offset + p_vaddr          (prec_elf_vaddr)
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
 * Files are read with pread, only the tables needed (headers, the symbol
 * and string tables, notes): a debug file's DWARF is never read, and a
 * binary truncated under us gives -EBADMSG, where a mapping of it would
 * raise SIGBUS. Every offset, size and count read from the bytes is checked
 * before use: bad bytes give an error return, never a read outside.
 *
 * How to use:
 *
 *   struct prec_elf e;
 *   if (prec_elf_load(path, &e) == 0) {     // or _read_fd / _parse (memory)
 *       ... e.syms[0 .. e.nsyms), sorted by start; prec_elf_find(&e, va) ...
 *       prec_elf_release(&e);
 *   }
 *
 * Ownership: struct prec_elf owns its arrays and names, freed by
 * prec_elf_release() (a zeroed struct is fine); buffers and fds passed in
 * are borrowed, never kept. The library never prints.
 */
#ifndef PREC_BASE_ELF_H
#define PREC_BASE_ELF_H

#include <stddef.h>
#include <stdint.h>

struct prec_elf_sym {
	uint64_t start;     /* st_value: an ELF virtual address */
	uint64_t size;
	const char *name;   /* in prec_elf's storage */
};

struct prec_elf_seg {
	uint64_t offset, vaddr, filesz;
};

struct prec_elf {
	struct prec_elf_sym *syms;   /* sorted by start; one name per start */
	size_t nsyms;
	struct prec_elf_seg *segs;   /* PT_LOAD, in program-header order */
	size_t nsegs;
	uint64_t load_bias;          /* first PT_LOAD: p_vaddr - p_offset */
	uint8_t build_id[64];
	size_t build_id_len;         /* 0: no GNU build-id note */
	int from_dynsym;             /* no .symtab: exported symbols only */
	int is_dyn;                  /* ET_DYN: PIE or shared object */
	char *names;                 /* storage of all names */
};

/* 0, or -EINVAL (not ELF / unsupported class or byte order), -EBADMSG
 * (a header, table or note lies outside the bytes), -ENOMEM; _read_fd also
 * -EINVAL for anything but a regular file and -errno of fstat/pread; _load
 * also -errno of open. On error *out is zeroed. */
int prec_elf_parse(const void *buf, size_t len, struct prec_elf *out);
int prec_elf_read_fd(int fd, struct prec_elf *out);   /* fd borrowed */
int prec_elf_load(const char *path, struct prec_elf *out);
void prec_elf_release(struct prec_elf *e);

/* Only the build-id (notes only, no symbols). Its length (> 0), 0 when
 * the file has none, or a negative errno as above. */
int prec_elf_build_id_fd(int fd, uint8_t *out, size_t cap);

/* file offset -> ELF vaddr through the PT_LOAD holding it; a file offset
 * no segment holds maps by load_bias. */
uint64_t prec_elf_vaddr(const struct prec_elf *e, uint64_t file_off);
/* The same through segments segs[0..n) and load_bias. */
uint64_t prec_elf_segs_vaddr(const struct prec_elf_seg *segs, size_t n,
			     uint64_t load_bias, uint64_t file_off);

/* The symbol containing vaddr, or NULL. */
const struct prec_elf_sym *prec_elf_find(const struct prec_elf *e,
					 uint64_t vaddr);

/* ---- sections by name (".eh_frame"), for what symbols do not cover */

/* SHF_COMPRESSED sections: the payload after the compression header. */
#define PREC_ELF_COMPRESS_ZLIB 1
#define PREC_ELF_COMPRESS_ZSTD 2

struct prec_elf_section {
	const uint8_t *data;   /* into buf (_find_section) or owned (_copy);
				* NULL for SHT_NOBITS */
	uint64_t offset, size; /* where data lies in the file, its length */
	uint64_t addr;         /* sh_addr */
	int nobits;
	uint32_t compressed;   /* 0, or PREC_ELF_COMPRESS_*: data is the
				* compressed payload */
	uint64_t raw_size;     /* compressed: the inflated size (ch_size) */
};

/* 0 and *out, -ENOENT (no such section), -EINVAL, -EBADMSG (headers or
 * the section outside the buffer). */
int prec_elf_find_section(const void *buf, size_t len, const char *name,
			  struct prec_elf_section *out);

/* Copies of the named sections names[0..n) of fd (or of buf, when fd < 0),
 * out[i] zeroed where the file has no such section or it is SHT_NOBITS or
 * empty; a section larger than max gives -EFBIG. Each out[i].data is
 * malloc'd (free it); the segments and build-id come along in seg_out when
 * it is not NULL (release it with prec_elf_release). 0, or the errors of
 * prec_elf_read_fd; on error nothing is held. */
int prec_elf_copy_sections(int fd, const void *buf, size_t len,
			   const char *const *names, size_t n, uint64_t max,
			   struct prec_elf_section *out, struct prec_elf *seg_out);

#endif
