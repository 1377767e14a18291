/*
 * fuzz_elfread.c - the analyzer's portable ELF reader (used for --symfs
 * files) on arbitrary bytes: errors are fine; crashes, leaks and reads
 * outside the buffer are not. Results must be consistent: symbols sorted
 * by start with non-empty NUL-terminated names, build-id within bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/elfread.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ana_elf e;

	if (ana_elf_parse(data, size, &e) != 0)
		return 0;
	if (e.build_id_len > sizeof(e.build_id))
		abort();
	for (size_t i = 0; i < e.nsyms; i++) {
		if (!e.syms[i].name[0] || strlen(e.syms[i].name) > size)
			abort();
		if (i && e.syms[i - 1].start >= e.syms[i].start)
			abort();
	}
	ana_elf_release(&e);
	return 0;
}
