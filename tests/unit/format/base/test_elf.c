/*
 * test_elf.c - format/base/elf (the one ELF reader) against binaries built
 * here: the binutils oracles, corrupt and synthetic images of
 * unit/elfcheck.h, and the notes-only build-id read of an fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format/base/elf.h"

#define ELFCHECK_TAG     "test_elf"
#define ELFCHECK_ELF     struct prec_elf
#define ELFCHECK_SYM     struct prec_elf_sym
#define ELFCHECK_LOAD    prec_elf_load
#define ELFCHECK_PARSE   prec_elf_parse
#define ELFCHECK_RELEASE prec_elf_release
#define ELFCHECK_FIND    prec_elf_find
#define ELFCHECK_VADDR   prec_elf_vaddr
#include "unit/elfcheck.h"

static void test_parse_null(void **state)
{
	struct prec_elf e;

	(void)state;
	assert_int_equal(prec_elf_parse(NULL, 0, &e), -EINVAL);
}

/* The notes-only read gives the build-id the full load does (which
 * test_build_id checks against readelf). */
static void test_build_id_fd(void **state)
{
	struct prec_elf e;
	uint8_t bid[64];
	char p[512];
	int fd;

	(void)state;
	path_of(p, sizeof(p), "pie");
	assert_int_equal(prec_elf_load(p, &e), 0);
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(prec_elf_build_id_fd(fd, bid, sizeof(bid)), 20);
	assert_memory_equal(bid, e.build_id, 20);
	close(fd);
	prec_elf_release(&e);
}

/* prec_elf_find and prec_elf_vaddr agree with plain linear scans. */
static void test_find_linear(void **state)
{
	struct prec_elf e;
	char p[512];

	(void)state;
	path_of(p, sizeof(p), "pie");
	assert_int_equal(prec_elf_load(p, &e), 0);
	assert_true(e.nsyms > 0);
	for (size_t i = 0; i < e.nsyms; i++) {
		const struct prec_elf_sym *s = &e.syms[i];

		if (s->size)
			assert_ptr_equal(prec_elf_find(&e, s->start + s->size - 1), s);
	}
	for (size_t i = 0; i < e.nsegs; i++)
		assert_int_equal(prec_elf_vaddr(&e, e.segs[i].offset),
				 e.segs[i].vaddr);
	prec_elf_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		ELFCHECK_TESTS,
		cmocka_unit_test(test_parse_null),
		cmocka_unit_test(test_build_id_fd),
		cmocka_unit_test(test_find_linear),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
