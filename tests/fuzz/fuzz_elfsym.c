/*
 * fuzz_elfsym.c - the recorder's ELF symbol reader (libelf via
 * elf_memory) on arbitrary bytes: errors are fine, crashes, leaks and
 * out-of-bounds reads are not. Whatever it returns must be consistent:
 * symbols sorted by start, names non-empty, build-id within bounds.
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
