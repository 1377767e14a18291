/*
 * test_elfsym.c - recorder/elfsym (libelf) against binaries built here.
 *
 * The shared checks (nm/readelf/addr2line oracles, corrupt and synthetic
 * images) are in unit/elfcheck.h, the same as for analyzer/elfread; this
 * file names the reader and adds what only libelf's has: the notes-only
 * build-id read of an fd.
 */
#include <fcntl.h>

#include "recorder/symbols/elfsym.h"

#define ELFCHECK_TAG     "test_elfsym"
#define ELFCHECK_ELF     struct rec_elfsym
#define ELFCHECK_SYM     struct rec_elfsym_sym
#define ELFCHECK_LOAD    rec_elfsym_load
#define ELFCHECK_PARSE   rec_elfsym_read_mem
#define ELFCHECK_RELEASE rec_elfsym_release
#define ELFCHECK_FIND    rec_elfsym_find
#define ELFCHECK_VADDR   rec_elfsym_vaddr
#include "unit/elfcheck.h"

/* The notes-only read gives the build-id the full load does (which
 * test_build_id checks against readelf). */
static void test_build_id_fd(void **state)
{
	struct rec_elfsym e;
	uint8_t bid[64];
	char p[512];
	int fd;

	(void)state;
	path_of(p, sizeof(p), "pie");
	assert_int_equal(rec_elfsym_load(p, &e), 0);
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(rec_elfsym_build_id_fd(fd, bid, sizeof(bid)), 20);
	assert_memory_equal(bid, e.build_id, 20);
	close(fd);
	rec_elfsym_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		ELFCHECK_TESTS,
		cmocka_unit_test(test_build_id_fd),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
