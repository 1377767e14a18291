/*
 * test_concat.c - concatenated files (`cat a.prec b.prec`, SPEC.md section
 * 8, "Concatenated files"): each file is a part with its own header and
 * index; every frame of every part is read once; a torn, damaged or
 * index-less part is told apart from the others; a file header's bytes
 * inside a whole data frame are no part boundary.
 */
#include "fmt_helpers.h"

#include "format/layout.h"

struct file {
	unsigned char *buf;
	size_t len;
	unsigned packets;
	size_t nframes;
	struct prec_frame_info *fi;   /* the file read alone */
};

static void file_build(struct file *f, size_t frame_size, unsigned nstreams,
		       unsigned packets, int close)
{
	const struct prec_frame_info *fi;
	struct prec_reader *r;

	f->buf = fmt_build(frame_size, nstreams, packets, close, &f->len);
	f->packets = packets;
	r = prec_reader_open_mem(f->buf, f->len, NULL);
	assert_non_null(r);
	assert_int_equal(prec_reader_index(r, &fi, &f->nframes), 0);
	f->fi = malloc(f->nframes * sizeof(*fi));
	assert_non_null(f->fi);
	memcpy(f->fi, fi, f->nframes * sizeof(*fi));
	prec_reader_free(r);
}

static void file_free(struct file *f)
{
	free(f->buf);
	free(f->fi);
}

/* The bytes of f[0..n) one after the other; *off[i] where each begins. */
static unsigned char *concat(const struct file *f, size_t n, size_t *len, size_t *off)
{
	unsigned char *b;

	*len = 0;
	for (size_t i = 0; i < n; i++)
		*len += f[i].len;
	b = malloc(*len);
	assert_non_null(b);
	*len = 0;
	for (size_t i = 0; i < n; i++) {
		off[i] = *len;
		memcpy(b + *len, f[i].buf, f[i].len);
		*len += f[i].len;
	}
	return b;
}

/* Part i holds exactly the frames of file f, shifted by its offset. */
static void check_part(const struct prec_part *p, const struct prec_frame_info *fi,
		       const struct file *f, uint64_t off)
{
	uint64_t tmin = 0, tmax = 0;

	assert_int_equal(p->offset, off);
	assert_int_equal(p->end, off + f->len);
	assert_int_equal(p->data_start, off + PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE);
	assert_int_equal(p->version_major, PREC_VERSION_MAJOR);
	assert_int_equal(p->version_minor, PREC_VERSION_MINOR);
	assert_false(p->header_damaged);
	assert_int_equal(p->nframes, f->nframes);
	for (size_t j = 0; j < f->nframes; j++) {
		const struct prec_frame_info *a = &fi[p->first_frame + j], *b = &f->fi[j];
		assert_int_equal(a->offset, b->offset + off);
		assert_int_equal(a->data_offset, b->data_offset + off);
		assert_int_equal(a->compressed_size, b->compressed_size);
		assert_int_equal(a->seq, b->seq);
		assert_int_equal(a->packets, b->packets);
		if (b->t_min && (!tmin || b->t_min < tmin))
			tmin = b->t_min;
		if (b->t_max > tmax)
			tmax = b->t_max;
	}
	assert_int_equal(p->t_min, tmin);
	assert_int_equal(p->t_max, tmax);
}

/* 2, 3 and 4 closed files of different shapes: one part each, read by its
 * own index, every packet once, nothing damaged. */
static void test_whole_parts(void **state)
{
	(void)state;
	for (size_t n = 2; n <= 4; n++) {
		struct file f[4];
		size_t off[4], len, np, nf;
		unsigned want = 0;
		for (size_t i = 0; i < n; i++) {
			file_build(&f[i], 500 + 150 * i, 1 + (unsigned)i % 3, 400 + 250 * (unsigned)i, 1);
			want += f[i].packets;
		}
		unsigned char *b = concat(f, n, &len, off);
		struct fmt_damage_log log = { 0 };
		struct prec_reader_stats st;

		assert_int_equal(fmt_count(b, len, &log, &st), want);
		assert_int_equal(log.n, 0);
		assert_int_equal(st.damaged_frames, 0);
		assert_true(st.index_present);
		assert_false(st.index_rebuilt);
		assert_false(st.torn);

		struct prec_reader *r = prec_reader_open_mem(b, len, NULL);
		const struct prec_part *p;
		const struct prec_frame_info *fi;
		assert_int_equal(prec_reader_parts(r, &p, &np), 0);
		assert_int_equal(prec_reader_index(r, &fi, &nf), 0);
		assert_int_equal(np, n);
		size_t sum = 0;
		for (size_t i = 0; i < n; i++) {
			check_part(&p[i], fi, &f[i], off[i]);
			assert_true(p[i].index_present);
			assert_false(p[i].torn);
			assert_int_equal(p[i].first_frame, sum);
			sum += f[i].nframes;
		}
		assert_int_equal(nf, sum);
		prec_reader_free(r);
		free(b);
		for (size_t i = 0; i < n; i++)
			file_free(&f[i]);
	}
}

/* A single file is one part covering it, by its index or walked. */
static void test_single_file(void **state)
{
	(void)state;
	for (int close = 0; close <= 1; close++) {
		struct file f;
		const struct prec_part *p;
		size_t np;
		file_build(&f, 700, 3, 900, close);
		struct prec_reader *r = prec_reader_open_mem(f.buf, f.len, NULL);
		const struct prec_frame_info *fi;
		assert_int_equal(prec_reader_parts(r, &p, &np), 0);
		assert_int_equal(prec_reader_index(r, &fi, NULL), 0);
		assert_int_equal(np, 1);
		check_part(&p[0], fi, &f, 0);
		assert_int_equal(p[0].index_present, close);
		assert_false(p[0].torn);
		prec_reader_free(r);
		file_free(&f);
	}
}

/* A part without index (a killed writer's) between two closed ones is
 * walked; the others keep theirs. */
static void test_part_without_index(void **state)
{
	struct file f[3];
	size_t off[3], len, np;
	(void)state;

	file_build(&f[0], 600, 2, 500, 1);
	file_build(&f[1], 800, 3, 700, 0);
	file_build(&f[2], 900, 1, 300, 1);
	unsigned char *b = concat(f, 3, &len, off);
	struct fmt_damage_log log = { 0 };
	struct prec_reader_stats st;
	assert_int_equal(fmt_count(b, len, &log, &st), 500 + 700 + 300);
	assert_int_equal(log.n, 0);
	assert_false(st.index_present);
	assert_true(st.index_rebuilt);

	struct prec_reader *r = prec_reader_open_mem(b, len, NULL);
	const struct prec_part *p;
	const struct prec_frame_info *fi;
	assert_int_equal(prec_reader_parts(r, &p, &np), 0);
	assert_int_equal(prec_reader_index(r, &fi, NULL), 0);
	assert_int_equal(np, 3);
	for (size_t i = 0; i < 3; i++) {
		check_part(&p[i], fi, &f[i], off[i]);
		assert_int_equal(p[i].index_present, i != 1);
		assert_false(p[i].torn);
	}
	prec_reader_free(r);
	free(b);
	for (size_t i = 0; i < 3; i++)
		file_free(&f[i]);
}

static uint64_t count_alone(const unsigned char *buf, size_t len)
{
	struct fmt_damage_log log = { 0 };
	struct prec_reader_stats st;
	return fmt_count(buf, len, &log, &st);
}

/* The last part cut in the middle of its last frame: the file's torn
 * tail, in that part; what precedes it is read. */
static void test_torn_last_part(void **state)
{
	struct file f[2];
	size_t off[2], len, np;
	(void)state;

	file_build(&f[0], 600, 2, 500, 1);
	file_build(&f[1], 700, 3, 800, 1);
	const struct prec_frame_info *last = &f[1].fi[f[1].nframes - 1];
	size_t cut = (size_t)(last->data_offset + last->compressed_size / 2);
	uint64_t part2 = count_alone(f[1].buf, cut);
	assert_true(part2 > 0 && part2 < 800);
	f[1].len = cut;
	unsigned char *b = concat(f, 2, &len, off);

	struct fmt_damage_log log = { 0 };
	struct prec_reader_stats st;
	assert_int_equal(fmt_count(b, len, &log, &st), 500 + part2);
	assert_true(st.torn);
	assert_int_equal(st.torn_offset, off[1] + last->offset);
	assert_int_equal(st.damaged_frames, 0);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.off[0], st.torn_offset);
	assert_int_equal(log.err[0], PREC_E_TRUNCATED);

	struct prec_reader *r = prec_reader_open_mem(b, len, NULL);
	const struct prec_part *p;
	assert_int_equal(prec_reader_parts(r, &p, &np), 0);
	assert_int_equal(np, 2);
	assert_true(p[0].index_present);
	assert_false(p[0].torn);
	assert_false(p[1].index_present);
	assert_true(p[1].torn);
	assert_int_equal(p[1].torn_offset, st.torn_offset);
	assert_int_equal(p[1].offset, off[1]);
	assert_int_equal(p[1].end, len);
	assert_int_equal(p[1].nframes, f[1].nframes - 1);
	prec_reader_free(r);
	free(b);
	file_free(&f[0]);
	file_free(&f[1]);
}

/* The first part cut anywhere after its header, then a whole file: the
 * first part reads as it would alone (torn, no damage), the second part
 * whole by its index, wherever the cut falls: inside a frame-info record,
 * a data frame (whose info record then names bytes of the next part) or
 * the index. */
static void test_torn_middle_part(void **state)
{
	struct file f[2];
	size_t hdr = PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE, tried = 0;
	(void)state;

	file_build(&f[0], 300, 2, 120, 1);
	file_build(&f[1], 500, 3, 400, 1);
	size_t la = f[0].len;
	unsigned char *b = malloc(la + f[1].len);
	assert_non_null(b);
	memcpy(b + la, f[1].buf, f[1].len);
	for (size_t cut = hdr; cut <= la; cut++) {
		size_t len = cut + f[1].len, np;
		memcpy(b, f[0].buf, cut);
		memmove(b + cut, f[1].buf, f[1].len);
		uint64_t part1 = count_alone(f[0].buf, cut);
		struct fmt_damage_log log = { 0 };
		struct prec_reader_stats st;
		assert_int_equal(fmt_count(b, len, &log, &st), part1 + 400);
		assert_int_equal(st.damaged_frames, 0);
		assert_false(st.torn);

		struct prec_reader *r = prec_reader_open_mem(b, len, NULL);
		const struct prec_part *p;
		const struct prec_frame_info *fi;
		assert_int_equal(prec_reader_parts(r, &p, &np), 0);
		assert_int_equal(prec_reader_index(r, &fi, NULL), 0);
		assert_int_equal(np, 2);
		assert_int_equal(p[0].end, cut);
		assert_int_equal(p[0].index_present, cut == la);
		check_part(&p[1], fi, &f[1], cut);
		assert_true(p[1].index_present);
		/* torn unless the cut falls between two records */
		if (p[0].torn) {
			assert_int_equal(log.n, 1);
			assert_int_equal(log.off[0], p[0].torn_offset);
			assert_int_equal(log.err[0], PREC_E_TRUNCATED);
			assert_true(p[0].torn_offset < cut);
			tried++;
		} else {
			assert_int_equal(log.n, 0);
		}
		prec_reader_free(r);
	}
	assert_true(tried > (la - hdr) / 2);
	free(b);
	file_free(&f[0]);
	file_free(&f[1]);
}

/* Damage inside a middle part is that part's: a flipped byte in a data
 * frame is one damaged frame, named by its offset in the concatenation;
 * a flipped byte in the part's file header is damage PREC_E_HEADER at
 * the part's offset, and its frames are read all the same. */
static void test_damaged_middle_part(void **state)
{
	struct file f[3];
	size_t off[3], len, np;
	(void)state;

	file_build(&f[0], 600, 2, 500, 1);
	file_build(&f[1], 700, 3, 600, 1);
	file_build(&f[2], 800, 1, 300, 1);
	unsigned char *b = concat(f, 3, &len, off);

	/* a data frame */
	const struct prec_frame_info *mid = &f[1].fi[f[1].nframes / 2];
	size_t at = off[1] + (size_t)mid->data_offset + mid->compressed_size / 2;
	b[at] ^= 0x55;
	struct fmt_damage_log log = { 0 };
	struct prec_reader_stats st;
	uint64_t n = fmt_count(b, len, &log, &st);
	assert_true(n < 500 + 600 + 300 && n >= 500 + 600 + 300 - mid->packets);
	assert_int_equal(st.damaged_frames, 1);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.off[0], off[1] + mid->offset);
	assert_true(st.index_present);
	b[at] ^= 0x55;

	/* the part's file header (its CRC) */
	b[off[1] + PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE - 1] ^= 0x01;
	memset(&log, 0, sizeof(log));
	assert_int_equal(fmt_count(b, len, &log, &st), 500 + 600 + 300);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.off[0], off[1]);
	assert_int_equal(log.err[0], PREC_E_HEADER);
	struct prec_reader *r = prec_reader_open_mem(b, len, NULL);
	const struct prec_part *p;
	assert_int_equal(prec_reader_parts(r, &p, &np), 0);
	assert_int_equal(np, 3);
	assert_int_equal(p[1].offset, off[1]);
	assert_true(p[1].header_damaged);
	assert_int_equal(p[1].nframes, f[1].nframes);
	assert_false(p[0].header_damaged);
	assert_false(p[2].header_damaged);
	prec_reader_free(r);

	free(b);
	for (size_t i = 0; i < 3; i++)
		file_free(&f[i]);
}

/* A whole file header (magic, "PERFREC\0", CRC) written as a packet's
 * bytes: it is inside a data frame, which is taken whole by its info
 * record's size, so it starts no part, indexed or walked. */
static void test_header_inside_frame(void **state)
{
	(void)state;
	for (int close = 0; close <= 1; close++) {
		struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
		struct prec_sink *sink = prec_sink_mem_new();
		struct prec_writer *w;
		uint8_t hdr[PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE];
		size_t len, np;

		o.frame_size = 4096;
		w = prec_writer_new(sink, &o);
		assert_non_null(w);
		/* the header this writer wrote, as a raw record's bytes after
		 * random ones: zstd stores blocks it cannot compress as they
		 * are */
		memcpy(hdr, prec_sink_mem_data(sink, &len), sizeof(hdr));
		uint32_t x = 12345;
		for (unsigned i = 0; i < 40; i++) {
			Perfrec__Packet pkt;
			Perfrec__RawRecord raw;
			uint8_t data[2000 + sizeof(hdr)];
			perfrec__packet__init(&pkt);
			perfrec__raw_record__init(&raw);
			for (size_t k = 0; k < 2000; k++) {
				x = x * 1103515245u + 12345u;
				data[k] = (uint8_t)(x >> 16);
			}
			memcpy(data + 2000, hdr, sizeof(hdr));
			raw.data.data = data;
			raw.data.len = sizeof(data);
			raw.type = i;
			pkt.data_case = PERFREC__PACKET__DATA_RAW;
			pkt.raw = &raw;
			assert_int_equal(prec_writer_append(w, 1, &pkt, 1000 + i), 0);
		}
		if (close)
			assert_int_equal(prec_writer_close(w), 0);
		else
			assert_int_equal(prec_writer_flush(w), 0);
		prec_writer_free(w);
		unsigned char *b = fmt_copy_sink(sink, &len);
		prec_sink_free(sink);
		/* the header's bytes are in the file past its own header */
		size_t seen = 0;
		for (size_t i = 1; i + sizeof(hdr) <= len; i++)
			seen += memcmp(b + i, hdr, sizeof(hdr)) == 0;
		assert_true(seen > 0);

		struct fmt_damage_log log = { 0 };
		struct prec_reader_stats st;
		assert_int_equal(fmt_count(b, len, &log, &st), 40);
		assert_int_equal(log.n, 0);
		struct prec_reader *r = prec_reader_open_mem(b, len, NULL);
		const struct prec_part *p;
		assert_int_equal(prec_reader_parts(r, &p, &np), 0);
		assert_int_equal(np, 1);
		prec_reader_free(r);
		/* and walked, as verify does */
		r = prec_reader_open_mem(b, len, NULL);
		struct prec_frame_info *wf;
		struct prec_damage *wd;
		size_t nw, nwd;
		uint64_t torn;
		assert_int_equal(prec_reader_walk(r, &wf, &nw, &wd, &nwd, &torn), 0);
		assert_int_equal(nwd, 0);
		assert_int_equal(torn, UINT64_MAX);
		free(wf);
		free(wd);
		prec_reader_free(r);
		free(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_parts),
		cmocka_unit_test(test_single_file),
		cmocka_unit_test(test_part_without_index),
		cmocka_unit_test(test_torn_last_part),
		cmocka_unit_test(test_torn_middle_part),
		cmocka_unit_test(test_damaged_middle_part),
		cmocka_unit_test(test_header_inside_frame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
