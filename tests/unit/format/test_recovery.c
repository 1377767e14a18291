/*
 * test_recovery.c - damaged files: torn tails at every byte, flipped bytes
 * in data frames and frame-info records, a damaged index, a sink that
 * fails part way, bad headers, garbage and random mutations.
 */
#include "fmt_helpers.h"

#include <zstd.h>

#include "format/layout.h"

struct ref {
	unsigned char *buf;
	size_t len;
	size_t nf;
	struct prec_frame_info *fi;   /* copy of the written index */
	uint64_t packets;             /* all packets (InternedData included) */
};

static void ref_build(struct ref *rf, int close)
{
	const struct prec_frame_info *fi;
	struct prec_reader *r;

	rf->buf = fmt_build(700, 3, 1500, close, &rf->len);
	r = prec_reader_open_mem(rf->buf, rf->len, NULL);
	assert_non_null(r);
	assert_int_equal(prec_reader_index(r, &fi, &rf->nf), 0);
	assert_true(rf->nf >= 12);
	rf->fi = malloc(rf->nf * sizeof(*fi));
	memcpy(rf->fi, fi, rf->nf * sizeof(*fi));
	rf->packets = 0;
	for (size_t i = 0; i < rf->nf; i++)
		rf->packets += rf->fi[i].packets;
	prec_reader_free(r);
}

static void ref_free(struct ref *rf)
{
	free(rf->buf);
	free(rf->fi);
}

/* Reads buf fully; returns all packets (InternedData included). */
static uint64_t read_all(const void *buf, size_t len, struct fmt_damage_log *log,
			 struct prec_reader_stats *st)
{
	struct prec_reader_opts o = PREC_READER_OPTS_INIT;
	struct prec_reader *r;
	struct prec_packet p;
	uint64_t n = 0;
	int ret;

	o.on_damage = fmt_on_damage;
	o.ctx = log;
	r = prec_reader_open_mem(buf, len, &o);
	assert_non_null(r);
	while ((ret = prec_reader_next_packet(r, &p)) > 0) {
		if (p.pkt->data_case == PERFREC__PACKET__DATA_SAMPLE)
			fmt_check_sample(&p);
		n++;
	}
	assert_int_equal(ret, 0);
	prec_reader_stats(r, st);
	prec_reader_free(r);
	return n;
}

/* Cut the file at every byte offset from the start of its 4th-last frame
 * to its end: every frame wholly before the cut reads, the torn tail is
 * reported once at the start of the first incomplete record. */
static void torn_every_offset(int close)
{
	struct ref rf;
	(void)close;

	ref_build(&rf, close);
	size_t from = (size_t)rf.fi[rf.nf - 4].offset;
	for (size_t cut = from; cut <= rf.len; cut++) {
		struct fmt_damage_log log = { 0 };
		struct prec_reader_stats st;
		uint64_t want_packets = 0, want_frames = 0, torn_at = 0;
		int torn = 0;
		for (size_t i = 0; i < rf.nf; i++) {
			uint64_t end = rf.fi[i].data_offset + rf.fi[i].compressed_size;
			if (end <= cut) {
				want_packets += rf.fi[i].packets;
				want_frames++;
			} else if (!torn) {
				torn = rf.fi[i].offset < cut;
				torn_at = rf.fi[i].offset;
			}
		}
		/* a cut inside the index (after the last frame) is torn too */
		uint64_t last_end = rf.fi[rf.nf - 1].data_offset + rf.fi[rf.nf - 1].compressed_size;
		if (!torn && cut > last_end && cut < rf.len) {
			torn = 1;
			torn_at = last_end;
		}
		unsigned char *copy = malloc(cut ? cut : 1);
		memcpy(copy, rf.buf, cut);
		uint64_t got = read_all(copy, cut, &log, &st);
		free(copy);
		if (got != want_packets)
			fail_msg("cut %zu: %llu packets, want %llu", cut,
				 (unsigned long long)got, (unsigned long long)want_packets);
		assert_int_equal(st.frames, want_frames);
		assert_int_equal(st.damaged_frames, 0);
		assert_int_equal(st.torn, torn);
		if (torn) {
			assert_int_equal(st.torn_offset, torn_at);
			assert_int_equal(log.n, 1);
			assert_int_equal(log.off[0], torn_at);
			assert_int_equal(log.err[0], PREC_E_TRUNCATED);
		} else {
			assert_int_equal(log.n, 0);
		}
		if (cut != rf.len)
			assert_false(st.index_present);
	}
	ref_free(&rf);
}

static void test_torn_every_offset_open(void **state)
{
	(void)state;
	torn_every_offset(0);
}

static void test_torn_every_offset_closed(void **state)
{
	(void)state;
	torn_every_offset(1);
}

/* Flip every byte of one data frame, one at a time: the frame is reported
 * (by its info record's offset), every other frame reads. */
static void flip_data(int close)
{
	struct ref rf;

	ref_build(&rf, close);
	size_t k = rf.nf / 2;
	const struct prec_frame_info *d = &rf.fi[k];
	for (uint64_t pos = d->data_offset; pos < d->data_offset + d->compressed_size; pos++) {
		struct fmt_damage_log log = { 0 };
		struct prec_reader_stats st;
		rf.buf[pos] ^= 0xFF;
		uint64_t got = read_all(rf.buf, rf.len, &log, &st);
		rf.buf[pos] ^= 0xFF;
		if (log.n != 1 || log.off[0] != d->offset)
			fail_msg("flip at %llu (frame byte %llu): %zu reports, first at %llu (want %llu)",
				 (unsigned long long)pos,
				 (unsigned long long)(pos - d->data_offset), log.n,
				 (unsigned long long)(log.n ? log.off[0] : 0),
				 (unsigned long long)d->offset);
		assert_true(log.err[0] == PREC_E_CHECKSUM || log.err[0] == PREC_E_DECOMPRESS ||
			    log.err[0] == PREC_E_CORRUPT || log.err[0] == PREC_E_TRUNCATED ||
			    log.err[0] == PREC_E_DECODE);
		assert_int_equal(got, rf.packets - d->packets);
		assert_int_equal(st.frames, rf.nf - 1);
		assert_int_equal(st.damaged_frames, 1);
		assert_false(st.torn);
	}
	ref_free(&rf);
}

static void test_flip_data_indexed(void **state)
{
	(void)state;
	flip_data(1);
}

static void test_flip_data_walked(void **state)
{
	(void)state;
	flip_data(0);
}

/* Flip every byte of one frame-info record of a file without index: the
 * record is reported at its offset and its data frame is still recovered
 * (by walking its zstd blocks), so every packet reads. */
static void test_flip_info(void **state)
{
	struct ref rf;
	(void)state;

	ref_build(&rf, 0);
	size_t k = rf.nf / 2;
	const struct prec_frame_info *d = &rf.fi[k];
	for (uint64_t pos = d->offset; pos < d->data_offset; pos++) {
		struct fmt_damage_log log = { 0 };
		struct prec_reader_stats st;
		rf.buf[pos] ^= 0xFF;
		uint64_t got = read_all(rf.buf, rf.len, &log, &st);
		const struct prec_frame_info *fi;
		size_t nf;
		struct prec_reader *r = prec_reader_open_mem(rf.buf, rf.len, NULL);
		assert_int_equal(prec_reader_index(r, &fi, &nf), 0);
		rf.buf[pos] ^= 0xFF;
		if (log.n != 1 || log.off[0] != d->offset)
			fail_msg("info flip at byte %llu: %zu reports, first at %llu",
				 (unsigned long long)(pos - d->offset), log.n,
				 (unsigned long long)(log.n ? log.off[0] : 0));
		assert_true(log.err[0] == PREC_E_CHECKSUM || log.err[0] == PREC_E_CORRUPT);
		/* the recovered frame has unknown metadata but all its packets */
		assert_int_equal(nf, rf.nf);
		assert_int_equal(fi[k].stream, PREC_STREAM_UNKNOWN);
		assert_int_equal(fi[k].data_offset, d->data_offset);
		assert_int_equal(fi[k].compressed_size, d->compressed_size);
		assert_int_equal(fi[k + 1].offset, rf.fi[k + 1].offset);
		assert_int_equal(got, rf.packets);
		assert_int_equal(st.frames, rf.nf);
		assert_int_equal(st.damaged_frames, 1);
		prec_reader_free(r);
	}
	ref_free(&rf);
}

/* The fd source (pread) sees the same damage as the memory source: a
 * file without index, one flipped data byte, a torn tail. */
static void test_fd_source_damage(void **state)
{
	struct ref rf;
	char path[] = "/tmp/prec_dmg_XXXXXX";
	int fd = mkstemp(path);
	(void)state;

	ref_build(&rf, 0);
	const struct prec_frame_info *d = &rf.fi[3];
	rf.buf[d->data_offset + d->compressed_size / 2] ^= 0x10;
	size_t cut = rf.len - 5;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, rf.buf, cut), (ssize_t)cut);
	close(fd);

	struct fmt_damage_log log = { 0 };
	struct prec_reader_opts o = PREC_READER_OPTS_INIT;
	struct prec_reader_stats st;
	struct prec_packet p;
	uint64_t n = 0;
	int ret, err;
	o.on_damage = fmt_on_damage;
	o.ctx = &log;
	struct prec_reader *r = prec_reader_open_err(path, &o, &err);
	assert_non_null(r);
	assert_int_equal(err, 0);
	while ((ret = prec_reader_next_packet(r, &p)) > 0)
		n++;
	assert_int_equal(ret, 0);
	prec_reader_stats(r, &st);
	assert_int_equal(n, rf.packets - d->packets - rf.fi[rf.nf - 1].packets);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.off[0], d->offset);
	assert_int_equal(log.off[1], rf.fi[rf.nf - 1].offset);
	assert_int_equal(log.err[1], PREC_E_TRUNCATED);
	assert_true(st.torn);
	assert_int_equal(st.damaged_frames, 1);
	assert_int_equal(st.frames, rf.nf - 2);
	prec_reader_free(r);
	unlink(path);
	ref_free(&rf);
}

/* Damaged index or trailer: the reader falls back to walking, all reads. */
static void test_damaged_index(void **state)
{
	struct ref rf;
	(void)state;

	ref_build(&rf, 1);
	uint64_t idx = rf.fi[rf.nf - 1].data_offset + rf.fi[rf.nf - 1].compressed_size;
	for (uint64_t pos = idx; pos < rf.len; pos += 3) {
		struct fmt_damage_log log = { 0 };
		struct prec_reader_stats st;
		rf.buf[pos] ^= 0x5A;
		uint64_t got = read_all(rf.buf, rf.len, &log, &st);
		rf.buf[pos] ^= 0x5A;
		assert_int_equal(got, rf.packets);
		assert_false(st.index_present);
		assert_true(st.index_rebuilt);
		/* a damaged index header is reported as damage (or, when its
		 * size field now runs past the end, as a torn tail) at the
		 * index's own offset, never at a frame */
		assert_true(log.n <= 1);
		if (log.n)
			assert_int_equal(log.off[0], idx);
	}
	ref_free(&rf);
}

/* A sink that fails after N bytes: the writer's error is sticky and the
 * bytes it managed to write read back to their last complete frame. */
static void test_sink_error(void **state)
{
	struct ref rf;
	(void)state;

	ref_build(&rf, 1);
	for (size_t limit = 0; limit < rf.len; limit += 101) {
		struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
		struct prec_sink *sink = prec_sink_mem_new();
		struct prec_writer *w;
		int ret = 0, err;
		o.frame_size = 700;
		assert_int_equal(prec_sink_mem_set_limit(sink, limit), 0);
		w = prec_writer_new(sink, &o);
		if (!w) {
			/* the file header itself did not fit */
			assert_true(limit < PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE);
			assert_int_equal(errno, ENOSPC);
			prec_sink_free(sink);
			continue;
		}
		for (unsigned i = 0; i < 1500 && ret == 0; i++) {
			Perfrec__Packet pkt;
			Perfrec__Sample s;
			uint64_t ips[8];
			uint32_t st = 1 + i % 3, c = i % 17;
			size_t d = fmt_chain(c, ips);
			char comm[32];
			snprintf(comm, sizeof(comm), "task-%u", i % 5);
			uint64_t cc = prec_writer_intern_callchain(w, st, ips, d);
			uint64_t sid = prec_writer_intern_string(w, st, comm);
			if (!cc || !sid) {
				ret = prec_writer_error(w);
				break;
			}
			fmt_sample(&pkt, &s, st - 1, 100 + i % 5, c, cc);
			s.id = sid;
			s.period = i;
			ret = prec_writer_append(w, st, &pkt, 1000 + 10 * (uint64_t)i);
		}
		if (ret == 0)
			ret = prec_writer_close(w);
		assert_int_equal(ret, -ENOSPC);
		err = prec_writer_error(w);
		assert_int_equal(err, -ENOSPC);
		/* sticky */
		Perfrec__Packet pkt;
		Perfrec__Sample s;
		fmt_sample(&pkt, &s, 0, 1, 1, 0);
		assert_int_equal(prec_writer_append(w, 1, &pkt, 1), -ENOSPC);
		assert_int_equal(prec_writer_flush(w), -ENOSPC);
		assert_int_equal(prec_writer_close(w), -ENOSPC);
		assert_int_equal(prec_writer_intern_string(w, 1, "x"), 0);

		/* the output is a prefix of the good file: complete frames read */
		size_t len;
		const unsigned char *data = prec_sink_mem_data(sink, &len);
		assert_int_equal(len, limit);
		assert_memory_equal(data, rf.buf, len);
		uint64_t want = 0;
		for (size_t i = 0; i < rf.nf; i++)
			if (rf.fi[i].data_offset + rf.fi[i].compressed_size <= len)
				want += rf.fi[i].packets;
		struct fmt_damage_log log = { 0 };
		struct prec_reader_stats st;
		assert_int_equal(read_all(data, len, &log, &st), want);
		assert_int_equal(st.damaged_frames, 0);
		prec_writer_free(w);
		prec_sink_free(sink);
	}
	ref_free(&rf);
}

/* File headers: every proper prefix is "truncated", a wrong magic is "not
 * a .prec file", a newer major is refused, a newer minor is read. */
static void test_headers(void **state)
{
	struct ref rf;
	int err;
	(void)state;

	ref_build(&rf, 1);
	for (size_t n = 0; n < PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE; n++) {
		assert_null(prec_reader_open_mem_err(rf.buf, n, NULL, &err));
		assert_int_equal(err, PREC_E_TRUNCATED);
	}
	assert_null(prec_reader_open_mem_err("hello, world, this is not a trace", 33, NULL, &err));
	assert_int_equal(err, PREC_E_MAGIC);
	assert_null(prec_reader_open_mem("x", 1, NULL));
	assert_int_equal(errno, EINVAL);

	unsigned char *b = rf.buf;
	/* newer minor (crc fixed up): readable */
	prec_put16(b + 18, 7);
	prec_put32(b + 24, prec_crc32(b + 8, 16));
	struct prec_reader_stats st;
	struct fmt_damage_log log = { 0 };
	assert_int_equal(read_all(b, rf.len, &log, &st), rf.packets);
	assert_int_equal(st.version_minor, 7);
	/* newer major: refused */
	prec_put16(b + 16, 2);
	prec_put32(b + 24, prec_crc32(b + 8, 16));
	assert_null(prec_reader_open_mem_err(b, rf.len, NULL, &err));
	assert_int_equal(err, PREC_E_VERSION);
	/* newer major whose crc holds at no position this reader knows (a
	 * layout that moved it): refused, not taken for damage */
	prec_put32(b + 24, prec_crc32(b + 8, 16) ^ 1);
	assert_null(prec_reader_open_mem_err(b, rf.len, NULL, &err));
	assert_int_equal(err, PREC_E_VERSION);
	/* a damaged header with nothing readable after it keeps its cause */
	prec_put16(b + 16, 1);
	assert_null(prec_reader_open_mem_err(b, PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE + 30,
					     NULL, &err));
	assert_int_equal(err, PREC_E_CHECKSUM);
	/* text with a frame-info magic in it is still not a trace */
	unsigned char txt[64];
	memset(txt, 'x', sizeof(txt));
	prec_put32(txt + 28, PREC_SKIP_MAGIC_BASE | PREC_KIND_FRAME_INFO);
	prec_put32(txt + 32, PREC_INFO_SIZE);
	assert_null(prec_reader_open_mem_err(txt, sizeof(txt), NULL, &err));
	assert_int_equal(err, PREC_E_MAGIC);
	/* from a path */
	assert_null(prec_reader_open_err("/nonexistent/x.prec", NULL, &err));
	assert_int_equal(err, -ENOENT);
	assert_null(prec_reader_open_err("/tmp", NULL, &err));
	assert_int_equal(err, -EISDIR);
	ref_free(&rf);
}

/* Every bit of the 28-byte file header flipped, in a file with and without
 * index: the header is redundant with the first packets, so the file reads
 * whole; the header is reported once, as damage at offset 0, and is the
 * only damage. */
static void header_flips(int close)
{
	struct ref rf;

	ref_build(&rf, close);
	for (size_t bit = 0; bit < 8 * (PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE); bit++) {
		struct fmt_damage_log log = { 0 };
		struct prec_reader_stats st;
		const struct prec_damage *d;
		size_t nd;
		int err;
		rf.buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		struct prec_reader *r = prec_reader_open_mem_err(rf.buf, rf.len, NULL, &err);
		if (!r)
			fail_msg("header bit %zu flipped: not readable: %s", bit, prec_strerror(err));
		assert_int_equal(prec_reader_damage(r, &d, &nd), 0);
		assert_int_equal(nd, 1);
		assert_int_equal(d[0].offset, 0);
		assert_int_equal(d[0].err, PREC_E_HEADER);
		prec_reader_stats(r, &st);
		assert_true(st.header_damaged);
		assert_int_equal(st.version_major, PREC_VERSION_MAJOR);
		assert_int_equal(st.version_minor, PREC_VERSION_MINOR);
		assert_int_equal(st.index_present, close);
		prec_reader_free(r);
		uint64_t got = read_all(rf.buf, rf.len, &log, &st);
		rf.buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		assert_int_equal(got, rf.packets);
		assert_int_equal(st.frames, rf.nf);
		assert_int_equal(log.n, 1);
		assert_int_equal(log.off[0], 0);
		assert_int_equal(log.err[0], PREC_E_HEADER);
		assert_int_equal(st.damaged_frames, 1);
	}
	ref_free(&rf);
}

static void test_header_flips_indexed(void **state)
{
	(void)state;
	header_flips(1);
}

static void test_header_flips_walked(void **state)
{
	(void)state;
	header_flips(0);
}

/* A whole header missing (the file starts at its first frame-info record)
 * reads like a damaged one. */
static void test_header_missing(void **state)
{
	struct ref rf;
	struct fmt_damage_log log = { 0 };
	struct prec_reader_stats st;
	size_t h = PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE;
	(void)state;

	ref_build(&rf, 0);
	assert_int_equal(read_all(rf.buf + h, rf.len - h, &log, &st), rf.packets);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.err[0], PREC_E_HEADER);
	ref_free(&rf);
}

/* A decompression bomb: frames whose content is far larger than their
 * compressed bytes (runs of one byte compress ~30000 times). The reader
 * refuses each before decompressing it (PREC_E_RATIO, reported by the
 * frame's offset), whatever its info record says, and reads the others. */
static void test_bomb(void **state)
{
	const size_t raw = 4u << 20;
	unsigned char *content = calloc(1, raw), *z, *file;
	size_t zcap = ZSTD_compressBound(raw), zn, len = 0;
	struct ref rf;
	(void)state;

	ref_build(&rf, 0);
	for (size_t i = 0; i < raw; i += 2)
		content[i] = 0x0A;   /* empty packets */
	z = malloc(zcap);
	zn = ZSTD_compress(z, zcap, content, raw, 3);
	assert_false(ZSTD_isError(zn));
	assert_true(raw > zn * PREC_MAX_RATIO);
	/* the good file, then three bomb frames: one whose info tells the
	 * truth, one whose info claims a small content size, one whose data
	 * frame has lost its info record */
	file = malloc(rf.len + 3 * (PREC_SKIP_HDR + PREC_INFO_SIZE + zn));
	memcpy(file, rf.buf, rf.len);
	len = rf.len;
	uint64_t bomb_at[3];
	for (int k = 0; k < 3; k++) {
		uint8_t *p = file + len;
		bomb_at[k] = len;
		if (k < 2) {
			struct prec_frame_info fi = { .stream = 1, .packets = (uint32_t)(raw / 2),
						      .t_min = 1, .t_max = 2,
						      .compressed_size = (uint32_t)zn,
						      .raw_size = k == 0 ? (uint32_t)raw : 100,
						      .seq = 1000 + (uint64_t)k };
			prec_put32(p, PREC_SKIP_MAGIC_BASE | PREC_KIND_FRAME_INFO);
			prec_put32(p + 4, PREC_INFO_SIZE);
			prec_put32(p + PREC_SKIP_HDR + PREC_INFO_STREAM, fi.stream);
			prec_put32(p + PREC_SKIP_HDR + PREC_INFO_PACKETS, fi.packets);
			prec_put64(p + PREC_SKIP_HDR + PREC_INFO_T_MIN, fi.t_min);
			prec_put64(p + PREC_SKIP_HDR + PREC_INFO_T_MAX, fi.t_max);
			prec_put32(p + PREC_SKIP_HDR + PREC_INFO_CSIZE, fi.compressed_size);
			prec_put32(p + PREC_SKIP_HDR + PREC_INFO_RSIZE, fi.raw_size);
			prec_put64(p + PREC_SKIP_HDR + PREC_INFO_SEQ, fi.seq);
			prec_put64(p + PREC_SKIP_HDR + PREC_INFO_KINDS, 0);
			prec_put32(p + PREC_SKIP_HDR + PREC_INFO_SIZE - 4,
				   prec_crc32(p + PREC_SKIP_HDR, PREC_INFO_SIZE - 4));
			p += PREC_SKIP_HDR + PREC_INFO_SIZE;
		}
		memcpy(p, z, zn);
		len = (size_t)(p + zn - file);
	}
	struct fmt_damage_log log = { 0 };
	struct prec_reader_stats st;
	assert_int_equal(read_all(file, len, &log, &st), rf.packets);
	assert_int_equal(log.n, 3);
	assert_int_equal(log.off[0], bomb_at[0]);
	assert_int_equal(log.err[0], PREC_E_RATIO);
	assert_int_equal(log.off[1], bomb_at[1]);
	assert_int_equal(log.err[1], PREC_E_CORRUPT);   /* info and frame disagree */
	assert_int_equal(log.off[2], bomb_at[2]);
	assert_int_equal(log.err[2], PREC_E_RATIO);
	assert_int_equal(st.frames, rf.nf);
	uint64_t good_raw = 0;
	for (size_t i = 0; i < rf.nf; i++)
		good_raw += rf.fi[i].raw_size;
	assert_int_equal(st.bytes_raw, good_raw);
	/* a bare frame load refuses it too, and nothing is decompressed */
	struct prec_frame *f = prec_frame_new();
	assert_int_equal(prec_frame_load(f, z, zn, PREC_DEFAULT_MAX_FRAME_RAW), PREC_E_RATIO);
	prec_frame_free(f);
	free(file);
	free(z);
	free(content);
	ref_free(&rf);
}

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Random garbage after a valid header, and random mutations of a valid
 * file: the reader returns errors or packets, never crashes, and never
 * reports more packets than the file holds. */
static void test_garbage_and_mutations(void **state)
{
	struct ref rf;
	(void)state;

	ref_build(&rf, 1);
	for (int it = 0; it < 300; it++) {
		size_t len = 32 + rnd() % 4000;
		unsigned char *g = malloc(len);
		memcpy(g, rf.buf, 28);
		for (size_t i = 28; i < len; i++)
			g[i] = (unsigned char)rnd();
		/* sprinkle magics so the walker has something to chew on */
		for (int k = 0; k < 4; k++) {
			size_t at = 28 + rnd() % (len - 28 - 4 + 1);
			prec_put32(g + at, k & 1 ? PREC_ZSTD_MAGIC
						 : PREC_SKIP_MAGIC_BASE | PREC_KIND_FRAME_INFO);
		}
		struct fmt_damage_log log = { 0 };
		struct prec_reader_stats st;
		struct prec_reader *r = prec_reader_open_mem(g, len, NULL);
		assert_non_null(r);
		prec_reader_free(r);
		read_all(g, len, &log, &st);
		free(g);
	}
	for (int it = 0; it < 300; it++) {
		unsigned char *m = malloc(rf.len);
		memcpy(m, rf.buf, rf.len);
		int flips = 1 + (int)(rnd() % 8);
		for (int k = 0; k < flips; k++)
			m[28 + rnd() % (rf.len - 28)] ^= (unsigned char)(1 + rnd() % 255);
		struct prec_reader *r = prec_reader_open_mem(m, rf.len, NULL);
		struct prec_packet p;
		uint64_t n = 0;
		int ret;
		assert_non_null(r);
		while ((ret = prec_reader_next_packet(r, &p)) > 0) {
			if (p.pkt->data_case == PERFREC__PACKET__DATA_SAMPLE) {
				size_t nn;
				prec_frame_callchain(p.frame, p.pkt->sample->callchain, &nn);
				prec_frame_string(p.frame, p.pkt->sample->id);
			}
			n++;
		}
		assert_int_equal(ret, 0);
		assert_true(n <= rf.packets);
		prec_reader_free(r);
		free(m);
	}
	ref_free(&rf);
}

/* prec_frame_load on bytes that are not exactly one good zstd frame. */
static void test_frame_load_errors(void **state)
{
	struct ref rf;
	struct prec_frame *f = prec_frame_new();
	struct prec_packet p;
	(void)state;

	ref_build(&rf, 1);
	const struct prec_frame_info *d = &rf.fi[0];
	const unsigned char *z = rf.buf + d->data_offset;
	assert_int_equal(prec_frame_load(f, z, d->compressed_size, 1 << 20), 0);
	assert_int_equal(prec_frame_next(f, &p), 1);
	assert_int_equal(prec_frame_load(f, z, d->compressed_size - 1, 1 << 20), PREC_E_TRUNCATED);
	assert_true(prec_frame_next(f, &p) < 0);
	/* two frames back to back are not one frame */
	assert_int_equal(prec_frame_load(f, z, d->compressed_size + 8, 1 << 20), PREC_E_CORRUPT);
	assert_int_equal(prec_frame_load(f, z, d->compressed_size, 16), PREC_E_TOO_BIG);
	assert_int_equal(prec_frame_load(f, "abcd", 4, 1 << 20), PREC_E_CORRUPT);
	assert_int_equal(prec_frame_load(f, NULL, 0, 1 << 20), PREC_E_CORRUPT);
	prec_frame_free(f);
	ref_free(&rf);
}

static void test_strerror(void **state)
{
	(void)state;
	/* the CRC of SPEC.md section 2 */
	assert_int_equal(prec_crc32("123456789", 9), 0xCBF43926u);
	assert_int_equal(prec_crc32("", 0), 0);
	for (int e = PREC_E_RATIO; e <= PREC_E_TRUNCATED; e++) {
		assert_non_null(prec_strerror(e));
		assert_string_not_equal(prec_strerror(e), "unknown error");
	}
	assert_string_equal(prec_strerror(-ENOSPC), strerror(ENOSPC));
	assert_string_equal(prec_strerror(-99999), "unknown error");
	assert_string_equal(prec_strerror(12345), "unknown error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torn_every_offset_open),
		cmocka_unit_test(test_torn_every_offset_closed),
		cmocka_unit_test(test_flip_data_indexed),
		cmocka_unit_test(test_flip_data_walked),
		cmocka_unit_test(test_flip_info),
		cmocka_unit_test(test_fd_source_damage),
		cmocka_unit_test(test_damaged_index),
		cmocka_unit_test(test_sink_error),
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_header_flips_indexed),
		cmocka_unit_test(test_header_flips_walked),
		cmocka_unit_test(test_header_missing),
		cmocka_unit_test(test_bomb),
		cmocka_unit_test(test_garbage_and_mutations),
		cmocka_unit_test(test_frame_load_errors),
		cmocka_unit_test(test_strerror),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
