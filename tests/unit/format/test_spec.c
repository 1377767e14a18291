/*
 * test_spec.c - format/SPEC.md matches the bytes the writer produces.
 *
 * An independent walker written from SPEC.md only (its own bitwise CRC,
 * offsets spelled out as numbers, not format/layout.h) parses a written
 * file: header, every frame-info record + zstd frame, index, trailer; it
 * decompresses each frame with plain zstd, splits the Trace.packet fields
 * and recomputes packet counts and time ranges from the dt fields.
 */
#include <zstd.h>

#include "fmt_helpers.h"

static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
	}
	return ~c;
}

static uint32_t u32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t u64(const uint8_t *p) { return u32(p) | (uint64_t)u32(p + 4) << 32; }

static uint64_t varint(const uint8_t **p)
{
	uint64_t v = 0;
	for (int s = 0;; s += 7) {
		uint8_t b = *(*p)++;
		v |= (uint64_t)(b & 0x7F) << s;
		if (!(b & 0x80))
			return v;
	}
}

struct spec_frame {
	uint64_t off, data_off;
	uint32_t stream, packets, csize, rsize;
	uint64_t t_min, t_max, seq, kinds;
};

static uint64_t spec_rows;   /* rows of the switch batches walked */
static uint64_t spec_switches;   /* ContextSwitch packets walked */

static void check_file(const uint8_t *b, size_t len, int closed, size_t *nframes_out)
{
	struct spec_frame fr[4096];
	size_t nf = 0, pos;

	/* section 3: file header */
	assert_true(len >= 28);
	assert_int_equal(u32(b), 0x184D2A50);
	assert_int_equal(u32(b + 4), 20);
	assert_memory_equal(b + 8, "PERFREC\0", 8);
	assert_int_equal(b[16] | b[17] << 8, 1);
	assert_int_equal(b[18] | b[19] << 8, 2);   /* minor 2: switch batches */
	assert_int_equal(u32(b + 20), 0);
	assert_int_equal(u32(b + 24), crc_bitwise(b + 8, 16));
	pos = 28;

	/* sections 4, 5: info + data pairs until the index (or the end) */
	while (pos < len && u32(b + pos) == 0x184D2A51) {
		const uint8_t *p = b + pos + 8;
		struct spec_frame *f = &fr[nf];
		assert_true(nf < 4096);
		assert_int_equal(u32(b + pos + 4), 52);
		assert_int_equal(u32(p + 48), crc_bitwise(p, 48));
		f->off = pos;
		f->data_off = pos + 60;
		f->stream = u32(p);
		f->packets = u32(p + 4);
		f->t_min = u64(p + 8);
		f->t_max = u64(p + 16);
		f->csize = u32(p + 24);
		f->rsize = u32(p + 28);
		f->seq = u64(p + 32);
		f->kinds = u64(p + 40);
		assert_int_equal(f->seq, nf);
		const uint8_t *z = b + f->data_off;
		assert_int_equal(u32(z), 0xFD2FB528);
		assert_true(z[4] & 0x04);   /* content checksum flag */
		assert_int_equal(ZSTD_findFrameCompressedSize(z, f->csize), f->csize);
		assert_int_equal(ZSTD_getFrameContentSize(z, f->csize), f->rsize);
		uint8_t *raw = malloc(f->rsize);
		assert_int_equal(ZSTD_decompress(raw, f->rsize, z, f->csize), f->rsize);
		/* section 6: 0x0A len Packet..., dt zigzag deltas */
		const uint8_t *q = raw, *e = raw + f->rsize;
		uint32_t n = 0;
		uint64_t t = 0, tmin = 0, tmax = 0, kinds = 0;
		while (q < e) {
			assert_int_equal(*q++, 0x0A);
			uint64_t l = varint(&q);
			const uint8_t *pk = q;
			q += l;
			assert_true(q <= e);
			int64_t dt = 0;
			if (l && pk[0] == 0x08) {
				pk++;
				uint64_t zz = varint(&pk);
				dt = (int64_t)(zz >> 1) ^ -(int64_t)(zz & 1);
			}
			/* section 4: the frame's kinds bit is the oneof field
			 * number of every packet (the field after dt) */
			uint64_t kind = pk < q ? varint(&pk) >> 3 : 0;
			if (kind)
				kinds |= 1ull << kind;
			if (kind == 5)
				spec_switches++;
			if (kind == 20) {
				/* section 6, switch batches: each row is timed
				 * by the dt column, which adds up to the
				 * packet's dt */
				uint64_t rt = t, bl = varint(&pk);
				const uint8_t *be = pk + bl;
				while (pk < be) {
					uint64_t key = varint(&pk), fl = varint(&pk);
					const uint8_t *fe = pk + fl;
					assert_int_equal(key & 7, 2);
					if (key >> 3 != 6) {
						pk = fe;
						continue;
					}
					while (pk < fe) {
						uint64_t zz = varint(&pk);
						int64_t rd = (int64_t)(zz >> 1) ^ -(int64_t)(zz & 1);
						rt += (uint64_t)rd;
						if (rd && (!tmin || rt < tmin))
							tmin = rt;
						if (rd && rt > tmax)
							tmax = rt;
						spec_rows++;
					}
				}
				assert_int_equal(rt, t + (uint64_t)dt);
			}
			if (dt) {
				t += (uint64_t)dt;
				if (!tmin || t < tmin)
					tmin = t;
				if (t > tmax)
					tmax = t;
			}
			n++;
		}
		assert_int_equal(n, f->packets);
		assert_int_equal(tmin, f->t_min);
		assert_int_equal(tmax, f->t_max);
		assert_int_equal(kinds, f->kinds);
		free(raw);
		pos = f->data_off + f->csize;
		nf++;
	}

	/* section 7: index + trailer */
	if (closed) {
		const uint8_t *ix = b + pos;
		assert_int_equal(u32(ix), 0x184D2A52);
		uint32_t size = u32(ix + 4);
		assert_int_equal(pos + 8 + size, len);
		const uint8_t *p = ix + 8;
		assert_int_equal(u32(p), nf);
		assert_int_equal(u32(p + 4), 64);
		assert_int_equal(size, 8 + nf * 64 + 4 + 16);
		assert_int_equal(u32(p + 8 + nf * 64), crc_bitwise(p, 8 + nf * 64));
		for (size_t i = 0; i < nf; i++) {
			const uint8_t *en = p + 8 + i * 64;
			assert_int_equal(u64(en), fr[i].off);
			assert_int_equal(u64(en + 8), fr[i].data_off);
			assert_int_equal(u32(en + 16), fr[i].stream);
			assert_int_equal(u32(en + 20), fr[i].packets);
			assert_int_equal(u64(en + 24), fr[i].t_min);
			assert_int_equal(u64(en + 32), fr[i].t_max);
			assert_int_equal(u32(en + 40), fr[i].csize);
			assert_int_equal(u32(en + 44), fr[i].rsize);
			assert_int_equal(u64(en + 48), fr[i].seq);
			assert_int_equal(u64(en + 56), fr[i].kinds);
		}
		assert_int_equal(u64(b + len - 16), pos);
		assert_memory_equal(b + len - 8, "PRECIDX\0", 8);
	} else {
		assert_int_equal(pos, len);
	}

	/* the library's view is the same */
	struct prec_reader *r = prec_reader_open_mem(b, len, NULL);
	const struct prec_frame_info *fi;
	size_t n;
	assert_int_equal(prec_reader_index(r, &fi, &n), 0);
	assert_int_equal(n, nf);
	for (size_t i = 0; i < nf; i++) {
		assert_int_equal(fi[i].offset, fr[i].off);
		assert_int_equal(fi[i].data_offset, fr[i].data_off);
		assert_int_equal(fi[i].packets, fr[i].packets);
		assert_int_equal(fi[i].t_min, fr[i].t_min);
		assert_int_equal(fi[i].t_max, fr[i].t_max);
		assert_int_equal(fi[i].kinds, fr[i].kinds);
		assert_true(fi[i].kinds != 0);
	}
	prec_reader_free(r);
	*nframes_out = nf;
}

static void test_spec_closed(void **state)
{
	size_t len, nf;
	unsigned char *b = fmt_build(900, 3, 4000, 1, &len);
	(void)state;

	check_file(b, len, 1, &nf);
	assert_true(nf > 10);
	free(b);
}

static void test_spec_unclosed(void **state)
{
	size_t len, nf;
	unsigned char *b = fmt_build(900, 2, 1000, 0, &len);
	(void)state;

	check_file(b, len, 0, &nf);
	assert_true(nf > 3);
	free(b);
}

/* Context switches between samples on one stream, in frames cut inside
 * runs of them: every row walked by the SPEC's rules, at its time. */
static void test_spec_switches(void **state)
{
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w;
	size_t len, nf, nsw = 0;
	(void)state;

	o.frame_size = 1500;
	w = prec_writer_new(sink, &o);
	for (unsigned i = 0; i < 3000; i++) {
		Perfrec__Packet pkt;
		Perfrec__Sample smp;
		Perfrec__ContextSwitch cs = PERFREC__CONTEXT_SWITCH__INIT;
		/* times go back now and then, as rings drained in turn do */
		uint64_t t = 1000000 + 1000 * (uint64_t)i - (i % 13 == 0 ? 5000 : 0);
		if (i % 20 < 17) {   /* runs of 17: batches */
			perfrec__packet__init(&pkt);
			cs.cpu = i % 3;
			cs.pid = cs.tid = 100 + i % 7;
			cs.out = i & 1;
			pkt.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
			pkt.context_switch = &cs;
			nsw++;
		} else {
			fmt_sample(&pkt, &smp, 0, 100, 0x1000 + i, 0);
		}
		assert_int_equal(prec_writer_append(w, 2, &pkt, t), 0);
	}
	assert_int_equal(prec_writer_close(w), 0);
	prec_writer_free(w);
	size_t blen;
	const uint8_t *b = prec_sink_mem_data(sink, &blen);
	spec_rows = spec_switches = 0;
	check_file(b, blen, 1, &nf);
	/* a frame cut can leave a run too short for a batch */
	assert_int_equal(spec_rows + spec_switches, nsw);
	assert_true(spec_rows > nsw / 2);
	assert_true(nf > 5);
	(void)len;
	prec_sink_free(sink);
}

/* An empty but closed file: header + index of zero frames. */
static void test_spec_empty(void **state)
{
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	size_t len, nf;
	(void)state;

	assert_int_equal(prec_writer_close(w), 0);
	const uint8_t *b = prec_sink_mem_data(sink, &len);
	assert_int_equal(len, 28 + 8 + 8 + 4 + 16);
	check_file(b, len, 1, &nf);
	assert_int_equal(nf, 0);
	prec_writer_free(w);
	prec_sink_free(sink);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_closed),
		cmocka_unit_test(test_spec_unclosed),
		cmocka_unit_test(test_spec_empty),
		cmocka_unit_test(test_spec_switches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
