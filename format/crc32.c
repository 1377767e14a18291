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

static uint32_t crc_table[8][256];
static atomic_int crc_ready;

/* Slicing by 8: table k gives the CRC of a byte followed by k zero
 * bytes, so eight bytes are folded in with eight lookups and no loop
 * carried through each byte (3-5x the byte-at-a-time speed; the index
 * of a long file is checked on every open). */
static void crc_build(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	for (int k = 1; k < 8; k++)
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = crc_table[k - 1][i];
			crc_table[k][i] = (c >> 8) ^ crc_table[0][c & 0xFF];
		}
}

static inline uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
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
	for (; n >= 8; p += 8, n -= 8) {
		uint32_t lo = c ^ le32(p), hi = le32(p + 4);
		c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^
		    crc_table[5][(lo >> 16) & 0xFF] ^ crc_table[4][lo >> 24] ^
		    crc_table[3][hi & 0xFF] ^ crc_table[2][(hi >> 8) & 0xFF] ^
		    crc_table[1][(hi >> 16) & 0xFF] ^ crc_table[0][hi >> 24];
	}
	for (; n; p++, n--)
		c = crc_table[0][(c ^ *p) & 0xFF] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}
