/*
 * record.c - record boundaries of a .prec byte stream (see record.h).
 */
#include <string.h>

#include "format/error.h"
#include "format/layout.h"
#include "format/record.h"
#include "format/frame_int.h"

int prec_record_scan(const void *buf, size_t len, size_t max_len,
		     struct prec_record *rec)
{
	const uint8_t *b = buf;
	uint32_t magic, size;
	uint64_t total;

	if (!rec || (!buf && len))
		return PREC_E_CORRUPT;
	if (!max_len)
		max_len = PREC_DEFAULT_MAX_FRAME_RAW + 64 * 1024;
	memset(rec, 0, sizeof(*rec));
	if (len < PREC_SKIP_HDR) {
		/* a prefix of a skippable magic may still become a record */
		static const uint8_t skip[3] = { 0x2A, 0x4D, 0x18 };
		if (len >= 1 && (b[0] & 0xF0) != 0x50)
			return PREC_E_MAGIC;
		if (len >= 2 && memcmp(b + 1, skip, len - 1 < 3 ? len - 1 : 3) != 0)
			return PREC_E_MAGIC;
		return 0;
	}
	magic = prec_get32(b);
	size = prec_get32(b + 4);
	if (!prec_is_skippable(magic))
		return PREC_E_MAGIC;
	total = PREC_SKIP_HDR + (uint64_t)size;
	switch (magic & 0xF) {
	case PREC_KIND_FILE_HEADER:
		if (size < PREC_FILE_HEADER_SIZE || size > PREC_FILE_HEADER_MAX)
			return PREC_E_CORRUPT;
		if (len < total)
			return 0;
		if (memcmp(b + 8, PREC_FILE_MAGIC, 8) != 0)
			return PREC_E_MAGIC;
		rec->major = prec_get16(b + 16);
		rec->minor = prec_get16(b + 18);
		if (rec->major > PREC_VERSION_MAJOR)
			return PREC_E_VERSION;
		if (prec_crc32(b + 8, size - 4) != prec_get32(b + 8 + size - 4))
			return PREC_E_CHECKSUM;
		rec->kind = PREC_RECORD_HEADER;
		break;
	case PREC_KIND_FRAME_INFO: {
		const uint8_t *p = b + PREC_SKIP_HDR;
		if (size < PREC_INFO_MIN || size > PREC_INFO_MAX)
			return PREC_E_CORRUPT;
		if (len < total)
			return 0;
		if (prec_crc32(p, size - 4) != prec_get32(p + size - 4))
			return PREC_E_CHECKSUM;
		rec->info.offset = 0;
		rec->info.data_offset = total;
		prec_info_decode(p, size, &rec->info);
		if (rec->info.compressed_size < 4)
			return PREC_E_CORRUPT;
		total += rec->info.compressed_size;
		if (total > max_len)
			return PREC_E_TOO_BIG;
		if (len < rec->info.data_offset + 4)
			return 0;
		if (prec_get32(b + rec->info.data_offset) != PREC_ZSTD_MAGIC)
			return PREC_E_CORRUPT;
		if (len < total)
			return 0;
		rec->kind = PREC_RECORD_FRAME;
		break;
	}
	case PREC_KIND_INDEX:
		rec->kind = PREC_RECORD_INDEX;
		break;
	default:
		rec->kind = PREC_RECORD_OTHER;
		break;
	}
	if (total > max_len)
		return PREC_E_TOO_BIG;
	if (len < total)
		return 0;
	rec->len = (size_t)total;
	return 1;
}
