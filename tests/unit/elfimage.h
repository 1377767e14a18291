/*
 * elfimage.h - builds small synthetic ELF images in memory for the symbol
 * reader tests (tests/unit/format/base/test_elf.c), so the reader is
 * checked on ELF32/ELF64 in either byte order without a cross toolchain.
 *
 * The image: ELF header, two program headers (PT_LOAD at file offset
 * 0x1000 -> vaddr ELFIMG_VADDR, PT_NOTE over the note), a GNU build-id note
 * of 20 bytes (0x11 0x22 ...), .text (NOBITS-sized placeholder), .symtab,
 * .strtab and .shstrtab. Symbols:
 *
 *   alpha     FUNC   GLOBAL  ELFIMG_VADDR + 0x100  size 0x20
 *   __alpha   FUNC   LOCAL   same address          (alias: alpha wins)
 *   beta      FUNC   LOCAL   ELFIMG_VADDR + 0x200  size 0x10
 *   gamma_if  IFUNC  GLOBAL  ELFIMG_VADDR + 0x300  size 0
 *   data_obj  OBJECT GLOBAL  ELFIMG_VADDR + 0x400  size 8   (not a function)
 *   undef_fn  FUNC   GLOBAL  undefined                    (skipped)
 *
 * Header only (static functions) because tests are single files.
 */
#ifndef TESTS_ELFIMAGE_H
#define TESTS_ELFIMAGE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ELFIMG_VADDR 0x10000ull
#define ELFIMG_LOAD_OFF 0x1000ull

struct elfimg {
	uint8_t *b;
	size_t len;
	int is64, msb;
};

static void elfimg_put(struct elfimg *im, size_t off, uint64_t v, int n)
{
	for (int i = 0; i < n; i++) {
		int k = im->msb ? n - 1 - i : i;

		im->b[off + (size_t)k] = (uint8_t)(v >> (8 * i));
	}
}

/* Returns a malloc'd image (caller frees) of *len bytes. */
static uint8_t *elfimg_build(int is64, int msb, size_t *len)
{
	static const char strtab[] =
		"\0alpha\0__alpha\0beta\0gamma_if\0data_obj\0undef_fn";
	static const char shstr[] =
		"\0.text\0.symtab\0.strtab\0.note.gnu.build-id\0.shstrtab";
	/* name offsets in strtab */
	enum { N_ALPHA = 1, N__ALPHA = 7, N_BETA = 15, N_GAMMA = 20,
	       N_DATA = 29, N_UNDEF = 38 };
	/* name offsets in shstr */
	enum { S_TEXT = 1, S_SYMTAB = 7, S_STRTAB = 15, S_NOTE = 23,
	       S_SHSTR = 42 };
	struct elfimg im;
	size_t ehsz = is64 ? 64 : 52, phsz = is64 ? 56 : 32;
	size_t shsz = is64 ? 64 : 40, symsz = is64 ? 24 : 16;
	size_t note_off = 0x200, str_off = 0x300, shstr_off = 0x380;
	size_t sym_off = 0x400, nsyms = 7, sh_off = 0x2000, total;
	struct { uint32_t name; uint8_t info; uint16_t shndx; uint64_t value, size; }
	syms[7] = {
		{ 0, 0, 0, 0, 0 },
		{ N_ALPHA, 0x12, 1, ELFIMG_VADDR + 0x100, 0x20 },
		{ N__ALPHA, 0x02, 1, ELFIMG_VADDR + 0x100, 0x20 },
		{ N_BETA, 0x02, 1, ELFIMG_VADDR + 0x200, 0x10 },
		{ N_GAMMA, 0x1a, 1, ELFIMG_VADDR + 0x300, 0 },
		{ N_DATA, 0x11, 1, ELFIMG_VADDR + 0x400, 8 },
		{ N_UNDEF, 0x12, 0, 0, 0 },
	};

	total = sh_off + 6 * shsz;
	im.b = calloc(1, total);
	im.len = total;
	im.is64 = is64;
	im.msb = msb;
	if (!im.b)
		return NULL;
	/* ELF header */
	memcpy(im.b, "\x7f" "ELF", 4);
	im.b[4] = is64 ? 2 : 1;
	im.b[5] = msb ? 2 : 1;
	im.b[6] = 1;
	elfimg_put(&im, 16, 3, 2);             /* ET_DYN */
	elfimg_put(&im, 18, is64 ? 62 : 3, 2); /* EM_X86_64 / EM_386 */
	elfimg_put(&im, 20, 1, 4);
	if (is64) {
		elfimg_put(&im, 32, ehsz, 8);       /* phoff */
		elfimg_put(&im, 40, sh_off, 8);     /* shoff */
		elfimg_put(&im, 52, ehsz, 2);
		elfimg_put(&im, 54, phsz, 2);
		elfimg_put(&im, 56, 2, 2);
		elfimg_put(&im, 58, shsz, 2);
		elfimg_put(&im, 60, 6, 2);
		elfimg_put(&im, 62, 5, 2);
	} else {
		elfimg_put(&im, 28, ehsz, 4);
		elfimg_put(&im, 32, sh_off, 4);
		elfimg_put(&im, 40, ehsz, 2);
		elfimg_put(&im, 42, phsz, 2);
		elfimg_put(&im, 44, 2, 2);
		elfimg_put(&im, 46, shsz, 2);
		elfimg_put(&im, 48, 6, 2);
		elfimg_put(&im, 50, 5, 2);
	}
	/* program headers: PT_LOAD, PT_NOTE */
	for (int i = 0; i < 2; i++) {
		size_t o = ehsz + (size_t)i * phsz;
		uint64_t off = i ? note_off : ELFIMG_LOAD_OFF;
		uint64_t va = i ? note_off : ELFIMG_VADDR;
		uint64_t sz = i ? 36 : 0x1000;

		elfimg_put(&im, o, i ? 4 : 1, 4);
		if (is64) {
			elfimg_put(&im, o + 4, 5, 4);
			elfimg_put(&im, o + 8, off, 8);
			elfimg_put(&im, o + 16, va, 8);
			elfimg_put(&im, o + 24, va, 8);
			elfimg_put(&im, o + 32, sz, 8);
			elfimg_put(&im, o + 40, sz, 8);
			elfimg_put(&im, o + 48, 4, 8);
		} else {
			elfimg_put(&im, o + 4, off, 4);
			elfimg_put(&im, o + 8, va, 4);
			elfimg_put(&im, o + 12, va, 4);
			elfimg_put(&im, o + 16, sz, 4);
			elfimg_put(&im, o + 20, sz, 4);
			elfimg_put(&im, o + 24, 5, 4);
			elfimg_put(&im, o + 28, 4, 4);
		}
	}
	/* build-id note: namesz 4, descsz 20, type 3, "GNU\0", 0x11 0x22 ... */
	elfimg_put(&im, note_off, 4, 4);
	elfimg_put(&im, note_off + 4, 20, 4);
	elfimg_put(&im, note_off + 8, 3, 4);
	memcpy(im.b + note_off + 12, "GNU", 4);
	for (int i = 0; i < 20; i++)
		im.b[note_off + 16 + (size_t)i] = (uint8_t)(0x11 * (i + 1));
	memcpy(im.b + str_off, strtab, sizeof(strtab));
	memcpy(im.b + shstr_off, shstr, sizeof(shstr));
	for (size_t i = 0; i < nsyms; i++) {
		size_t o = sym_off + i * symsz;

		elfimg_put(&im, o, syms[i].name, 4);
		if (is64) {
			im.b[o + 4] = syms[i].info;
			elfimg_put(&im, o + 6, syms[i].shndx, 2);
			elfimg_put(&im, o + 8, syms[i].value, 8);
			elfimg_put(&im, o + 16, syms[i].size, 8);
		} else {
			elfimg_put(&im, o + 4, syms[i].value, 4);
			elfimg_put(&im, o + 8, syms[i].size, 4);
			im.b[o + 12] = syms[i].info;
			elfimg_put(&im, o + 14, syms[i].shndx, 2);
		}
	}
	/* sections: null, .text, .symtab, .strtab, .note, .shstrtab */
	{
		struct { uint32_t name, type, link, info; uint64_t flags, addr,
			 off, size, align, entsize; } sh[6] = {
			{ 0 },
			{ S_TEXT, 1, 0, 0, 6, ELFIMG_VADDR, ELFIMG_LOAD_OFF,
			  0x1000, 16, 0 },
			{ S_SYMTAB, 2, 3, 2, 0, 0, sym_off, nsyms * symsz, 8,
			  symsz },
			{ S_STRTAB, 3, 0, 0, 0, 0, str_off, sizeof(strtab), 1, 0 },
			{ S_NOTE, 7, 0, 0, 2, note_off, note_off, 36, 4, 0 },
			{ S_SHSTR, 3, 0, 0, 0, 0, shstr_off, sizeof(shstr), 1, 0 },
		};

		for (int i = 0; i < 6; i++) {
			size_t o = sh_off + (size_t)i * shsz;

			elfimg_put(&im, o, sh[i].name, 4);
			elfimg_put(&im, o + 4, sh[i].type, 4);
			if (is64) {
				elfimg_put(&im, o + 8, sh[i].flags, 8);
				elfimg_put(&im, o + 16, sh[i].addr, 8);
				elfimg_put(&im, o + 24, sh[i].off, 8);
				elfimg_put(&im, o + 32, sh[i].size, 8);
				elfimg_put(&im, o + 40, sh[i].link, 4);
				elfimg_put(&im, o + 44, sh[i].info, 4);
				elfimg_put(&im, o + 48, sh[i].align, 8);
				elfimg_put(&im, o + 56, sh[i].entsize, 8);
			} else {
				elfimg_put(&im, o + 8, sh[i].flags, 4);
				elfimg_put(&im, o + 12, sh[i].addr, 4);
				elfimg_put(&im, o + 16, sh[i].off, 4);
				elfimg_put(&im, o + 20, sh[i].size, 4);
				elfimg_put(&im, o + 24, sh[i].link, 4);
				elfimg_put(&im, o + 28, sh[i].info, 4);
				elfimg_put(&im, o + 32, sh[i].align, 4);
				elfimg_put(&im, o + 36, sh[i].entsize, 4);
			}
		}
	}
	*len = total;
	return im.b;
}

#endif
