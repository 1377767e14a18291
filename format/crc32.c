/*
 * crc32.c - CRC-32 of the metadata records (file header, frame info, index).
 *
 * Our own table-driven implementation so format/ depends on zstd and
 * protobuf-c only. The table is built once; building it twice from two
 * threads writes identical values, but we still guard it with a flag read
 * and written atomically so sanitizers see no race.
 */
#include <stdatomic.h>

#include "format/layout.h"

static uint32_t crc_table[256];
static atomic_int crc_ready;

static void crc_build(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t prec_crc32(const void *buf, size_t n)
{
	static atomic_flag building = ATOMIC_FLAG_INIT;
	const uint8_t *p = buf;
	uint32_t c = 0xFFFFFFFFu;

	if (!atomic_load_explicit(&crc_ready, memory_order_acquire)) {
		while (atomic_flag_test_and_set_explicit(&building, memory_order_acquire))
			;
		if (!atomic_load_explicit(&crc_ready, memory_order_relaxed)) {
			crc_build();
			atomic_store_explicit(&crc_ready, 1, memory_order_release);
		}
		atomic_flag_clear_explicit(&building, memory_order_release);
	}
	for (size_t i = 0; i < n; i++)
		c = crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}
