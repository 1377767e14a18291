/*
 * fuzz_elfsym.c - the recorder's ELF symbol reader (libelf via
 * elf_memory) on arbitrary bytes: errors are fine, crashes, leaks and
 * out-of-bounds reads are not. Whatever it returns must be consistent:
 * symbols sorted by start, names non-empty, build-id within bounds. The
 * unwind-section reader (--call-graph dwarf) gets the same bytes: its
 * sections must be readable to their lengths, within the bound.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/symbols/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_elfsym e;
	struct rec_elfsym_cfi c;

	if (rec_elfsym_cfi_read_mem(data, size, &c) == 0) {
		const struct rec_elfsym_cfi_sec *s[3] = { &c.eh_frame, &c.eh_frame_hdr,
							  &c.debug_frame };
		volatile uint8_t x = 0;

		if (!c.eh_frame.data && !c.debug_frame.data)
			abort();
		for (int k = 0; k < 3; k++) {
			if (s[k]->len > REC_ELFSYM_CFI_MAX || (s[k]->len && !s[k]->data))
				abort();
			for (size_t i = 0; i < s[k]->len; i += 64)
				x ^= s[k]->data[i];
		}
		(void)x;
		rec_elfsym_cfi_release(&c);
	}
	if (rec_elfsym_read_mem(data, size, &e) != 0)
		return 0;
	if (e.build_id_len > sizeof(e.build_id))
		abort();
	for (size_t i = 0; i < e.nsyms; i++) {
		if (!e.syms[i].name[0])
			abort();
		if (i && e.syms[i - 1].start >= e.syms[i].start)
			abort();
		(void)rec_elfsym_find(&e, e.syms[i].start);
	}
	for (size_t i = 0; i < e.nsegs; i++)
		(void)rec_elfsym_vaddr(&e, e.segs[i].offset);
	rec_elfsym_release(&e);
	return 0;
}
