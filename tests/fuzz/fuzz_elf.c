/*
 * fuzz_elf.c - the ELF reader (format/base/elf.h) on arbitrary bytes:
 * errors are fine; crashes, leaks and reads outside the buffer are not.
 * Results must be consistent: symbols sorted by start with non-empty
 * names, build-id within bounds, lookups landing on a symbol; named
 * sections (found in place and copied, as the recorder's unwind reader
 * does) lie inside the bytes and are readable to their lengths.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void sections(const uint8_t *data, size_t size)
{
	static const char *const names[3] = { ".eh_frame", ".eh_frame_hdr",
					      ".debug_frame" };
	struct prec_elf_section s[3], f;
	struct prec_elf segs;
	volatile uint8_t sink = 0;

	for (int i = 0; i < 3; i++)
		if (prec_elf_find_section(data, size, names[i], &f) == 0 && f.data &&
		    (f.data < data || f.size > size ||
		     (size_t)(f.data - data) > size - f.size))
			abort();
	if (prec_elf_copy_sections(-1, data, size, names, 3, 1u << 20, s,
				   &segs) != 0)
		return;
	for (int i = 0; i < 3; i++) {
		if (s[i].data && s[i].size > (1u << 20))
			abort();
		for (uint64_t k = 0; s[i].data && k < s[i].size; k++)
			sink ^= s[i].data[k];
		free((void *)s[i].data);
	}
	if (segs.build_id_len > sizeof(segs.build_id))
		abort();
	prec_elf_release(&segs);
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prec_elf e;

	sections(data, size);
	if (prec_elf_parse(data, size, &e) != 0)
		return 0;
	if (e.build_id_len > sizeof(e.build_id))
		abort();
	for (size_t i = 0; i < e.nsyms; i++) {
		if (!e.syms[i].name[0] || strlen(e.syms[i].name) > size)
			abort();
		if (i && e.syms[i - 1].start >= e.syms[i].start)
			abort();
		if (!prec_elf_find(&e, e.syms[i].start) && e.syms[i].size)
			abort();
	}
	for (size_t i = 0; i < e.nsegs; i++)
		(void)prec_elf_vaddr(&e, e.segs[i].offset);
	prec_elf_release(&e);
	return 0;
}
