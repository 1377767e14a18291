/*
 * elfread.h - a small, portable, bounds-checked ELF symbol reader.
 *
 * Why it exists: the analyzer must build on a laptop (Linux or macOS)
 * without libelf or <elf.h>, yet --symfs lets it read richer symbol files
 * (-dbg packages' DIR/.build-id/xx/rest.debug, or unstripped copies). This
 * reader takes what symbolization needs and nothing more: function symbols
 * (STT_FUNC and STT_GNU_IFUNC) of .symtab, else .dynsym; the PT_LOAD
 * segments; the GNU build-id note. ELF32 and ELF64, either byte order.
 *
 * Every offset, size and count read from the file is checked against the
 * buffer before it is used: bad bytes give an error return, never a read
 * outside the buffer.
 *
 * How to use:
 *
 *   struct ana_elf e;
 *   if (ana_elf_parse(buf, len, &e) == 0) {     // or ana_elf_load(path, &e)
 *       ... e.syms[0 .. e.nsyms), sorted by start ...
 *       ana_elf_release(&e);
 *   }
 *
 * Ownership: everything in struct ana_elf (symbol array, names, segments)
 * is owned by it and freed by ana_elf_release(); buf is not kept.
 */
#ifndef ANA_ELFREAD_H
#define ANA_ELFREAD_H

#include <stddef.h>
#include <stdint.h>

struct ana_elf_sym {
	uint64_t start;     /* st_value: an ELF virtual address */
	uint64_t size;
	const char *name;   /* points into ana_elf's own storage */
};

struct ana_elf_seg {
	uint64_t offset, vaddr, filesz;
};

struct ana_elf {
	struct ana_elf_sym *syms;   /* sorted by start; one name per start */
	size_t nsyms;
	struct ana_elf_seg *segs;   /* PT_LOAD, in file order */
	size_t nsegs;
	uint64_t load_bias;         /* first PT_LOAD: vaddr - offset */
	uint8_t build_id[64];
	size_t build_id_len;        /* 0 = no GNU build-id note */
	int from_dynsym;            /* no .symtab: exported symbols only */
	int is_dyn;                 /* ET_DYN (PIE or shared object) */
	char *names;                /* storage of all names */
};

/* 0, or -EINVAL (not ELF / unsupported class or byte order), -EBADMSG
 * (a header, table or note lies outside the buffer), -ENOMEM. On error
 * *out is left released (zeroed). */
int ana_elf_parse(const void *buf, size_t len, struct ana_elf *out);

/* A section by name (".eh_frame"), for readers of what symbols do not
 * cover (unwind tables). */
struct ana_elf_section {
	const uint8_t *data;   /* points into buf; NULL for SHT_NOBITS */
	uint64_t offset, size;
	uint64_t addr;         /* sh_addr */
	int nobits;
};

/* 0 and *out, -ENOENT (no such section), -EINVAL, -EBADMSG (headers or
 * the section outside the buffer). */
int ana_elf_find_section(const void *buf, size_t len, const char *name,
			 struct ana_elf_section *out);

/* Maps the file read-only and parses it. Also -errno of open/fstat/mmap. */
int ana_elf_load(const char *path, struct ana_elf *out);

void ana_elf_release(struct ana_elf *e);

#endif
