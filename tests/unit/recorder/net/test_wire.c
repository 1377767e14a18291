/*
 * test_wire.c - the stream protocol's codec (recorder/net/wire.c): frames
 * encoded and decoded by hand are exactly protobuf-c's bytes; the input
 * buffer finds messages however TCP cuts them, refuses oversized
 * lengths before allocating, holds no more than its largest message and
 * keeps within a shared budget; NULs hidden in a hello's texts are found;
 * names that could leave the archive directory
 * are refused; tokens compare in full.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/net/wire.h"

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* protobuf-c's encoding of Frame{seq, data}, with the length prefix. */
static unsigned char *pbc_frame(uint64_t seq, const unsigned char *data, size_t n,
				size_t *len)
{
	Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
	Perfrec__Control__Frame f = PERFREC__CONTROL__FRAME__INIT;
	unsigned char *b;

	f.seq = seq;
	f.data.data = (uint8_t *)data;
	f.data.len = n;
	m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_FRAME;
	m.frame = &f;
	assert_int_equal(rec_wire_pack(&m, &b, len), 0);
	return b;
}

static void test_frame_bytes_match_protobuf_c(void **state)
{
	static const uint64_t seqs[] = { 0, 1, 127, 128, 16383, 16384, 1ull << 35,
					 UINT64_MAX };
	static const size_t lens[] = { 0, 1, 127, 128, 300, 16383, 16384, 70000 };
	unsigned char *data = malloc(70000);

	(void)state;
	for (size_t i = 0; i < 70000; i++)
		data[i] = (unsigned char)rnd();
	for (size_t a = 0; a < sizeof(seqs) / sizeof(seqs[0]); a++) {
		for (size_t b = 0; b < sizeof(lens) / sizeof(lens[0]); b++) {
			unsigned char hdr[REC_WIRE_FRAME_HDR_MAX];
			size_t hl = rec_wire_frame_header(seqs[a], lens[b], hdr), pl;
			unsigned char *p = pbc_frame(seqs[a], data, lens[b], &pl);
			const unsigned char *d;
			uint64_t seq;
			size_t dl;

			assert_int_equal(hl + lens[b], pl);
			assert_memory_equal(hdr, p, hl);
			assert_memory_equal(data, p + hl, lens[b]);
			/* and the hand decoder reads protobuf-c's bytes */
			assert_int_equal(rec_wire_parse_frame(p + 4, pl - 4, &seq, &d, &dl), 1);
			assert_true(seq == seqs[a]);
			assert_int_equal(dl, lens[b]);
			assert_ptr_equal(d, p + hl);
			free(p);
		}
	}
	free(data);
}

static void test_parse_frame_other_and_bad(void **state)
{
	Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
	Perfrec__Control__Ack a = PERFREC__CONTROL__ACK__INIT;
	unsigned char *b, bad[8];
	const unsigned char *d;
	uint64_t seq;
	size_t n, dl;

	(void)state;
	a.seq = 5;
	m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_ACK;
	m.ack = &a;
	assert_int_equal(rec_wire_pack(&m, &b, &n), 0);
	assert_int_equal(rec_wire_parse_frame(b + 4, n - 4, &seq, &d, &dl), 0);
	free(b);
	/* a frame whose data length runs past the message */
	bad[0] = 0x1a;
	bad[1] = 4;
	bad[2] = 0x12;
	bad[3] = 9;   /* 9 bytes of data announced, 1 present */
	bad[4] = 0;
	bad[5] = 0;
	assert_int_equal(rec_wire_parse_frame(bad, 6, &seq, &d, &dl), -EBADMSG);
	/* an outer length past the end */
	bad[1] = 100;
	assert_int_equal(rec_wire_parse_frame(bad, 6, &seq, &d, &dl), -EBADMSG);
	/* a varint that never ends */
	memset(bad, 0xff, sizeof(bad));
	assert_int_equal(rec_wire_parse_frame(bad, sizeof(bad), &seq, &d, &dl), -EBADMSG);
	/* unknown fields inside a frame are skipped, empty data is fine */
	{
		const unsigned char ok[] = { 0x1a, 0x05, 0x08, 0x07, 0x28, 0x01, 0x12, 0x00 };

		assert_int_equal(rec_wire_parse_frame(ok, 7, &seq, &d, &dl), -EBADMSG);
		{
			const unsigned char ok2[] = { 0x1a, 0x06, 0x08, 0x07, 0x28, 0x01,
						      0x12, 0x00 };

			assert_int_equal(rec_wire_parse_frame(ok2, sizeof(ok2), &seq, &d, &dl), 1);
			assert_true(seq == 7);
			assert_int_equal(dl, 0);
		}
	}
}

/* Messages cut at every possible place reassemble in order. */
static void test_input_reassembles(void **state)
{
	unsigned char stream[4096];
	size_t total = 0, nmsg = 0;

	(void)state;
	for (int i = 0; i < 20; i++) {
		unsigned char hdr[REC_WIRE_FRAME_HDR_MAX];
		size_t dl = (size_t)(rnd() % 100);
		size_t hl = rec_wire_frame_header((uint64_t)i + 1, dl, hdr);

		memcpy(stream + total, hdr, hl);
		memset(stream + total + hl, i, dl);
		total += hl + dl;
		nmsg++;
	}
	for (size_t chunk = 1; chunk <= 64; chunk++) {
		struct prec_msgbuf in;
		size_t off = 0, got = 0;

		prec_msgbuf_init(&in, REC_WIRE_MAX_MSG);
		while (off < total) {
			size_t room, n;
			void *p = prec_msgbuf_space(&in, &room);
			const unsigned char *msg, *d;
			size_t len, dl;
			uint64_t seq;

			assert_non_null(p);
			n = chunk < room ? chunk : room;
			if (n > total - off)
				n = total - off;
			memcpy(p, stream + off, n);
			prec_msgbuf_commit(&in, n);
			off += n;
			while (prec_msgbuf_next(&in, &msg, &len) > 0) {
				assert_int_equal(rec_wire_parse_frame(msg, len, &seq, &d, &dl), 1);
				assert_true(seq == got + 1);
				for (size_t k = 0; k < dl; k++)
					assert_int_equal(d[k], (unsigned char)got);
				got++;
			}
		}
		assert_int_equal(got, nmsg);
		assert_int_equal(prec_msgbuf_partial(&in), 0);
		prec_msgbuf_release(&in);
	}
}

/* A huge announced length is refused at once; a big legal one makes the
 * buffer grow only as bytes arrive. */
static void test_input_limits(void **state)
{
	struct prec_msgbuf in;
	const unsigned char *msg;
	unsigned char big[4] = { 0x7f, 0xff, 0xff, 0xff };
	unsigned char legal[4] = { 0x01, 0x00, 0x00, 0x00 };   /* 16 MiB */
	size_t room, len;
	void *p;

	(void)state;
	prec_msgbuf_init(&in, REC_WIRE_MAX_MSG);
	p = prec_msgbuf_space(&in, &room);
	memcpy(p, big, 4);
	prec_msgbuf_commit(&in, 4);
	assert_int_equal(prec_msgbuf_next(&in, &msg, &len), -EMSGSIZE);
	assert_int_equal(len, 0x7fffffff);
	assert_true(in.cap <= (128u << 10));
	prec_msgbuf_release(&in);

	prec_msgbuf_init(&in, REC_WIRE_MAX_MSG);
	p = prec_msgbuf_space(&in, &room);
	memcpy(p, legal, 4);
	prec_msgbuf_commit(&in, 4);
	assert_int_equal(prec_msgbuf_next(&in, &msg, &len), 0);
	/* announced 16 MiB, sent 4 bytes: the buffer stays small */
	for (int i = 0; i < 3; i++) {
		p = prec_msgbuf_space(&in, &room);
		assert_non_null(p);
		memset(p, 0, room < 1000 ? room : 1000);
		prec_msgbuf_commit(&in, room < 1000 ? room : 1000);
	}
	assert_true(in.cap <= (256u << 10));
	prec_msgbuf_release(&in);

	/* the small-message limit of a recorder's input */
	prec_msgbuf_init(&in, REC_WIRE_MAX_SMALL);
	p = prec_msgbuf_space(&in, &room);
	memcpy(p, legal, 4);
	prec_msgbuf_commit(&in, 4);
	assert_int_equal(prec_msgbuf_next(&in, &msg, &len), -EMSGSIZE);
	prec_msgbuf_release(&in);
}

/* Before its hello a collector's input holds at most a hello, whatever
 * length the peer announces; inputs sharing a budget grow only within
 * it, and give their memory back when released or emptied. */
static void test_input_bounds(void **state)
{
	struct prec_msgbuf_budget b = { 0, 3u << 20 };
	struct prec_msgbuf in, in2;
	const unsigned char *msg;
	unsigned char legal[4] = { 0x01, 0x00, 0x00, 0x00 };   /* 16 MiB */
	size_t room, len, cap;
	void *p;

	(void)state;
	/* a hello-sized input: the buffer never passes one hello */
	prec_msgbuf_init(&in, REC_WIRE_MAX_HELLO);
	p = prec_msgbuf_space(&in, &room);
	assert_non_null(p);
	assert_true(in.cap <= 4 + REC_WIRE_MAX_HELLO);
	memcpy(p, "\0\0\x0f\xf0", 4);   /* 4080 bytes: a legal hello size */
	prec_msgbuf_commit(&in, 4);
	while (in.len < 4 + 4080 - 1) {
		p = prec_msgbuf_space(&in, &room);
		assert_non_null(p);
		prec_msgbuf_commit(&in, room < 4 + 4080 - 1 - in.len ? room : 4 + 4080 - 1 - in.len);
	}
	assert_int_equal(prec_msgbuf_next(&in, &msg, &len), 0);
	assert_true(in.cap <= 4 + REC_WIRE_MAX_HELLO);
	prec_msgbuf_release(&in);

	/* two inputs on a 3 MiB budget, each receiving a 16 MiB message */
	prec_msgbuf_init(&in, REC_WIRE_MAX_MSG);
	prec_msgbuf_init(&in2, REC_WIRE_MAX_MSG);
	in.budget = in2.budget = &b;
	for (struct prec_msgbuf *x = &in;; x = x == &in ? &in2 : &in) {
		p = prec_msgbuf_space(x, &room);
		if (!p)
			break;
		if (!x->len) {
			memcpy(p, legal, 4);
			prec_msgbuf_commit(x, 4);
		} else {
			prec_msgbuf_commit(x, room);
		}
		assert_int_equal(b.used, in.cap + in2.cap);
		assert_true(b.used <= b.max);
	}
	assert_int_equal(errno, ENOBUFS);
	assert_true(b.used > b.max / 2);
	cap = in.cap;
	prec_msgbuf_release(&in2);
	assert_int_equal(b.used, cap);
	/* a consumed large message gives its buffer back */
	in.len = in.pos = 0;
	p = prec_msgbuf_space(&in, &room);
	assert_non_null(p);
	assert_true(in.cap <= (64u << 10));
	assert_int_equal(b.used, in.cap);
	prec_msgbuf_release(&in);
	assert_int_equal(b.used, 0);
}

/* A NUL inside a hello's text would be cut silently by protobuf-c's C
 * strings: found in the raw bytes, named by field. */
static void test_hello_nul(void **state)
{
	Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
	Perfrec__Control__Hello h = PERFREC__CONTROL__HELLO__INIT;
	unsigned char *b, *hit;
	size_t n;

	(void)state;
	h.version = 1;
	h.host = (char *)"hostXevil";
	h.session_id = (char *)"sessY";
	h.recorder_version = (char *)"perfrec 1";
	m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_HELLO;
	m.hello = &h;
	assert_int_equal(rec_wire_pack(&m, &b, &n), 0);
	assert_int_equal(rec_wire_hello_nul(b + 4, n - 4), 0);
	hit = memchr(b, 'Y', n);
	*hit = '\0';
	assert_int_equal(rec_wire_hello_nul(b + 4, n - 4), 4);
	hit = memchr(b, 'X', n);
	*hit = '\0';
	assert_int_equal(rec_wire_hello_nul(b + 4, n - 4), 2);
	/* cut short or not a hello: nothing to name */
	assert_int_equal(rec_wire_hello_nul(b + 4, 5), 0);
	assert_int_equal(rec_wire_hello_nul((const unsigned char *)"\x1a\x00", 2), 0);
	free(b);
}

static void test_names(void **state)
{
	static const char *const ok[] = { "host1", "web-01.prod", "a", "A_b.c-d",
		"20261123T180102Z-3f9a2c11" };
	static const char *const bad[] = { "", ".", "..", "../etc", "a/b", ".hidden",
		"-rf", "a b", "x\n", "tab\t", "nul", "caf\xc3\xa9",
		"0123456789012345678901234567890123456789012345678901234567890123456789" };

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_true(rec_wire_name_ok(ok[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (i != 10)   /* "nul" is a fine name: NUL bytes cannot reach here */
			assert_false(rec_wire_name_ok(bad[i]));
	assert_false(rec_wire_name_ok(NULL));
}

static void test_tokens(void **state)
{
	(void)state;
	assert_true(rec_wire_token_equal("secret", 6, "secret", 6));
	assert_false(rec_wire_token_equal("secreT", 6, "secret", 6));
	assert_false(rec_wire_token_equal("secret!", 7, "secret", 6));
	assert_false(rec_wire_token_equal("secre", 5, "secret", 6));
	assert_false(rec_wire_token_equal("", 0, "secret", 6));
	assert_false(rec_wire_token_equal(NULL, 0, "x", 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_bytes_match_protobuf_c),
		cmocka_unit_test(test_parse_frame_other_and_bad),
		cmocka_unit_test(test_input_reassembles),
		cmocka_unit_test(test_input_limits),
		cmocka_unit_test(test_input_bounds),
		cmocka_unit_test(test_hello_nul),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_tokens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
