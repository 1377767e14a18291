/*
 * test_elfread.c - analyzer/elfread (portable, no libelf) against binaries
 * built here; the same checks as test_elfsym.c (unit/elfcheck.h).
 *
 * The reader has no lookups of its own (symbolize.c has the binary
 * searches), so the checks run with plain linear oracles for "symbol at
 * vaddr" and "file offset -> vaddr".
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "analyzer/elfread.h"

static const struct ana_elf_sym *t_find(const struct ana_elf *e, uint64_t a)
{
	for (size_t i = 0; i < e->nsyms; i++)
		if (a >= e->syms[i].start && a - e->syms[i].start < e->syms[i].size)
			return &e->syms[i];
	return NULL;
}

static uint64_t t_vaddr(const struct ana_elf *e, uint64_t off)
{
	for (size_t i = 0; i < e->nsegs; i++)
		if (off >= e->segs[i].offset &&
		    off - e->segs[i].offset < e->segs[i].filesz)
			return off - e->segs[i].offset + e->segs[i].vaddr;
	return off + e->load_bias;
}

#define ELFCHECK_TAG     "test_elfread"
#define ELFCHECK_ELF     struct ana_elf
#define ELFCHECK_SYM     struct ana_elf_sym
#define ELFCHECK_LOAD    ana_elf_load
#define ELFCHECK_PARSE   ana_elf_parse
#define ELFCHECK_RELEASE ana_elf_release
#define ELFCHECK_FIND    t_find
#define ELFCHECK_VADDR   t_vaddr
#include "unit/elfcheck.h"

static void test_parse_null(void **state)
{
	struct ana_elf e;

	(void)state;
	assert_int_equal(ana_elf_parse(NULL, 0, &e), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		ELFCHECK_TESTS,
		cmocka_unit_test(test_parse_null),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
