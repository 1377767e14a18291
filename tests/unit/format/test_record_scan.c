/*
 * test_record.c - prec_record_scan() splits a byte stream into exactly the
 * records of the file, whatever the chunking, and names damage.
 */
#include "fmt_helpers.h"

#include "format/layout.h"
#include "format/record.h"

/* Byte-by-byte arrival: 0 until a record is complete, then exactly it. */
static void test_split_stream(void **state)
{
	size_t len, nf;
	unsigned char *b = fmt_build(600, 3, 1200, 1, &len);
	struct prec_reader *r = prec_reader_open_mem(b, len, NULL);
	const struct prec_frame_info *fi;
	struct prec_record rec;
	size_t pos = 0, frames = 0;
	int kinds[4] = { 0 };
	(void)state;

	assert_int_equal(prec_reader_index(r, &fi, &nf), 0);
	while (pos < len) {
		size_t have = 0;
		int ret;
		while ((ret = prec_record_scan(b + pos, have, 0, &rec)) == 0) {
			assert_true(pos + have < len);
			have++;
		}
		assert_int_equal(ret, 1);
		assert_int_equal(rec.len, have);   /* complete at its last byte */
		kinds[rec.kind]++;
		if (rec.kind == PREC_RECORD_HEADER) {
			assert_int_equal(pos, 0);
			assert_int_equal(rec.major, 1);
		}
		if (rec.kind == PREC_RECORD_FRAME) {
			const struct prec_frame_info *e = &fi[frames++];
			assert_int_equal(e->offset, pos);
			assert_int_equal(e->data_offset, pos + rec.info.data_offset);
			assert_int_equal(e->compressed_size, rec.info.compressed_size);
			assert_int_equal(e->seq, rec.info.seq);
			assert_int_equal(e->packets, rec.info.packets);
			assert_int_equal(e->t_max, rec.info.t_max);
		}
		if (rec.kind == PREC_RECORD_INDEX)
			assert_int_equal(pos + rec.len, len);
		pos += rec.len;
	}
	assert_int_equal(pos, len);
	assert_int_equal(frames, nf);
	assert_int_equal(kinds[PREC_RECORD_HEADER], 1);
	assert_int_equal(kinds[PREC_RECORD_INDEX], 1);
	assert_int_equal(kinds[PREC_RECORD_OTHER], 0);
	prec_reader_free(r);
	free(b);
}

static void test_scan_errors(void **state)
{
	size_t len;
	unsigned char *b = fmt_build(600, 1, 200, 1, &len);
	struct prec_record rec;
	(void)state;

	assert_int_equal(prec_record_scan("x", 1, 0, &rec), PREC_E_MAGIC);
	assert_int_equal(prec_record_scan("\x50\x2A\x4D", 3, 0, &rec), 0);
	assert_int_equal(prec_record_scan("\x50\x2A\x4E", 3, 0, &rec), PREC_E_MAGIC);
	assert_int_equal(prec_record_scan(b + 28 + PREC_SKIP_HDR + PREC_INFO_SIZE, 16, 0, &rec), PREC_E_MAGIC);   /* zstd bytes */
	/* frame info: CRC damage, size too small, too big for max_len */
	b[28 + 8 + 3] ^= 1;
	assert_int_equal(prec_record_scan(b + 28, len - 28, 0, &rec), PREC_E_CHECKSUM);
	b[28 + 8 + 3] ^= 1;
	assert_int_equal(prec_record_scan(b + 28, len - 28, 0, &rec), 1);
	assert_int_equal(prec_record_scan(b + 28, len - 28, 100, &rec), PREC_E_TOO_BIG);
	b[28 + 4] = 40;
	assert_int_equal(prec_record_scan(b + 28, len - 28, 0, &rec), PREC_E_CORRUPT);
	b[28 + 4] = PREC_INFO_SIZE;
	/* data frame that is not zstd */
	b[28 + PREC_SKIP_HDR + PREC_INFO_SIZE] ^= 0xFF;
	assert_int_equal(prec_record_scan(b + 28, len - 28, 0, &rec), PREC_E_CORRUPT);
	b[28 + PREC_SKIP_HDR + PREC_INFO_SIZE] ^= 0xFF;
	/* header: newer major, bad crc */
	prec_put16(b + 16, 9);
	prec_put32(b + 24, prec_crc32(b + 8, 16));
	assert_int_equal(prec_record_scan(b, len, 0, &rec), PREC_E_VERSION);
	prec_put16(b + 16, 1);
	assert_int_equal(prec_record_scan(b, len, 0, &rec), PREC_E_CHECKSUM);
	/* reserved kind: skipped as OTHER */
	uint8_t other[12] = { 0x57, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4 };
	assert_int_equal(prec_record_scan(other, 11, 0, &rec), 0);
	assert_int_equal(prec_record_scan(other, 12, 0, &rec), 1);
	assert_int_equal(rec.kind, PREC_RECORD_OTHER);
	assert_int_equal(rec.len, 12);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_stream),
		cmocka_unit_test(test_scan_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
