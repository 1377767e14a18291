/*
 * test_record_scan.c - prec_record_scan() splits a byte stream into
 * exactly the records of the file, whatever the chunking, and names
 * damage; prec_record_recover() counts a stored file's records whatever
 * one damaged byte hit, and cuts only a torn tail.
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

struct dmg_seen {
	size_t n;
	uint64_t first;
};

static void on_dmg(void *ctx, const struct prec_record_damage *d)
{
	struct dmg_seen *s = ctx;

	if (!s->n++)
		s->first = d->offset;
}

/* Record starts of buf (n records; off[n] = len). */
static size_t rec_offsets(const unsigned char *b, size_t len, size_t *off, size_t max)
{
	struct prec_record rec;
	size_t n = 0, pos = 0;

	while (pos < len && n + 1 < max) {
		assert_int_equal(prec_record_scan(b + pos, len - pos, 0, &rec), 1);
		off[n++] = pos;
		pos += rec.len;
	}
	off[n] = pos;
	return n;
}

/* One byte changed anywhere in a record's metadata (header, frame-info
 * magic/size/payload/CRC, the data frame's zstd header, the index and its
 * trailer), of a complete file and at the end of one still growing: the
 * record count and the end stay right, nothing is called torn, and the
 * flip is reported where the walk can see it. */
static void test_recover_every_flip(void **state)
{
	static const uint8_t masks[] = { 0x01, 0xFF };
	size_t off[512], full, n;
	unsigned char *b = fmt_build(700, 2, 300, 1, &full);
	(void)state;

	n = rec_offsets(b, full, off, 512);
	assert_true(n > 10);
	for (int open = 0; open < 2; open++) {
		size_t len = open ? off[n - 1] : full, nrec = open ? n - 1 : n;

		/* a growing file differs from a complete one at its end */
		for (size_t r = open ? nrec - 3 : 0; r < nrec; r++) {
			size_t rl = off[r + 1] - off[r];
			/* header whole; info + the zstd frame header; index whole */
			size_t span = (r == 0 || r == n - 1) ? rl : PREC_SKIP_HDR + PREC_INFO_SIZE + 6;

			for (size_t i = 0; i < span && i < rl; i++) {
				for (size_t m = 0; m < sizeof(masks); m++) {
					struct prec_record_recovery rv;
					struct dmg_seen seen = { 0 };
					size_t at = off[r] + i;

					b[at] ^= masks[m];
					assert_int_equal(prec_record_recover(b, len, on_dmg, &seen, &rv), 0);
					b[at] ^= masks[m];
					/* the magic's kind nibble: every other kind */
					for (uint8_t k = 1; i == 0 && m == 0 && k < 16; k++) {
						struct prec_record_recovery kv;
						struct dmg_seen ks = { 0 };

						b[at] ^= k;
						assert_int_equal(prec_record_recover(b, len, on_dmg, &ks, &kv), 0);
						b[at] ^= k;
						if (kv.records != nrec || kv.end != len || !kv.certain ||
						    kv.complete != !open || ks.n != 1 || ks.first != off[r])
							fail_msg("kind %u at record %zu (%s file): %llu records "
								 "of %zu, end %llu of %zu, certain %d, "
								 "complete %d", (b[at] ^ k) & 15, r + 1,
								 open ? "open" : "complete",
								 (unsigned long long)kv.records, nrec,
								 (unsigned long long)kv.end, len,
								 kv.certain, kv.complete);
					}
					if (rv.records != nrec || rv.end != len || !rv.certain ||
					    rv.complete != !open)
						fail_msg("flip 0x%02x at %zu (record %zu + %zu, %s file): "
							 "%llu records of %zu, end %llu of %zu, certain %d, "
							 "complete %d", masks[m], at, r + 1, i,
							 open ? "open" : "complete",
							 (unsigned long long)rv.records, nrec,
							 (unsigned long long)rv.end, len, rv.certain,
							 rv.complete);
					/* header and info bytes are covered by a CRC or
					 * checked: the flip is reported in its record */
					if (i < PREC_SKIP_HDR + PREC_INFO_SIZE + 4 && r + 1 < n) {
						assert_true(seen.n >= 1);
						assert_true(seen.first >= off[r] && seen.first < off[r + 1]);
					}
				}
			}
		}
	}
	free(b);
}

/* Torn tails (every proper prefix of the last record, and zeros a crash
 * left) are cut; damage that hides how many records a stretch held is
 * said, not guessed; one unmeasurable record between two numbered frames
 * is counted. */
static void test_recover_torn_and_unknown(void **state)
{
	size_t off[512], full, n, len;
	unsigned char *b = fmt_build(700, 2, 900, 0, &full), *z;
	struct prec_record_recovery rv;
	(void)state;

	n = rec_offsets(b, full, off, 512);
	assert_true(n > 12);
	for (len = off[n - 1] + 1; len < full; len++) {
		assert_int_equal(prec_record_recover(b, len, NULL, NULL, &rv), 0);
		assert_int_equal(rv.end, off[n - 1]);
		assert_int_equal(rv.records, n - 1);
		assert_true(rv.certain);
		assert_int_equal(rv.damaged, 0);
	}
	z = calloc(1, full + 3000);
	memcpy(z, b, full);
	assert_int_equal(prec_record_recover(z, full + 3000, NULL, NULL, &rv), 0);
	assert_int_equal(rv.end, full);
	assert_int_equal(rv.records, n);
	free(z);

	/* record 6's info and its data frame's magic zeroed: not measurable,
	 * but frames 4 and 6 (records 5 and 7) leave room for one */
	memset(b + off[5], 0, PREC_SKIP_HDR + PREC_INFO_SIZE + 4);
	assert_int_equal(prec_record_recover(b, full, NULL, NULL, &rv), 0);
	assert_true(rv.certain);
	assert_int_equal(rv.records, n);
	assert_int_equal(rv.end, full);
	assert_int_equal(rv.first_damage, off[5]);
	/* and record 7's too: two records or more? not known */
	memset(b + off[6], 0, PREC_SKIP_HDR + PREC_INFO_SIZE + 4);
	assert_int_equal(prec_record_recover(b, full, NULL, NULL, &rv), 0);
	assert_false(rv.certain);
	assert_int_equal(rv.first_unknown, off[5]);
	assert_int_equal(rv.end, full);
	free(b);

	/* the same in a complete file: its index says how many frames */
	b = fmt_build(700, 2, 900, 1, &full);
	n = rec_offsets(b, full, off, 512);
	memset(b + off[5], 0, off[7] - off[5] + 10);
	assert_int_equal(prec_record_recover(b, full, NULL, NULL, &rv), 0);
	assert_true(rv.certain);
	assert_true(rv.complete);
	assert_int_equal(rv.records, n);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_stream),
		cmocka_unit_test(test_scan_errors),
		cmocka_unit_test(test_recover_every_flip),
		cmocka_unit_test(test_recover_torn_and_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
