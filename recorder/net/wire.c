/*
 * wire.c - frames without protobuf-c, names and tokens;
 * see wire.h.
 */
#include "recorder/net/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/msgbuf.h"
#include "format/varint.h"

/* protobuf field keys of the frame path */
#define KEY_HELLO ((1u << 3) | 2u)   /* StreamMessage.hello, length-delimited */
#define KEY_FRAME ((3u << 3) | 2u)   /* StreamMessage.frame, length-delimited */
#define KEY_SEQ ((1u << 3) | 0u)     /* Frame.seq, varint */
#define KEY_DATA ((2u << 3) | 2u)    /* Frame.data, length-delimited */
size_t rec_wire_frame_header(uint64_t seq, size_t data_len,
			     unsigned char out[REC_WIRE_FRAME_HDR_MAX])
{
	/* Frame{seq, data} as protobuf-c writes it: fields in number order,
	 * a zero seq and empty data omitted (proto3) */
	size_t inner = (seq ? 1 + prec_varint_size(seq) : 0) +
		       (data_len ? 1 + prec_varint_size(data_len) + data_len : 0);
	size_t total = 1 + prec_varint_size(inner) + inner, n = 4;

	prec_msgbuf_put_len(out, (uint32_t)total);
	out[n++] = KEY_FRAME;
	n = (size_t)(prec_varint_put(out + n, inner) - out);
	if (seq) {
		out[n++] = KEY_SEQ;
		n = (size_t)(prec_varint_put(out + n, seq) - out);
	}
	if (data_len) {
		out[n++] = KEY_DATA;
		n = (size_t)(prec_varint_put(out + n, data_len) - out);
	}
	return n;
}

/* A varint at *p (< end); 0 or -EBADMSG. */
static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	return prec_varint_get(p, end, v) < 0 ? -EBADMSG : 0;
}

/* Skips a field of wire type wt at *p. 0 or -EBADMSG. */
static int skip_field(const unsigned char **p, const unsigned char *end, unsigned wt)
{
	uint64_t v;

	switch (wt) {
	case 0:
		return get_varint(p, end, &v);
	case 1:
		if (end - *p < 8)
			return -EBADMSG;
		*p += 8;
		return 0;
	case 2:
		if (get_varint(p, end, &v) < 0 || v > (uint64_t)(end - *p))
			return -EBADMSG;
		*p += v;
		return 0;
	case 5:
		if (end - *p < 4)
			return -EBADMSG;
		*p += 4;
		return 0;
	default:
		return -EBADMSG;
	}
}

int rec_wire_parse_frame(const unsigned char *msg, size_t len, uint64_t *seq,
			 const unsigned char **data, size_t *data_len)
{
	const unsigned char *p = msg, *end = msg + len, *in = NULL, *in_end = NULL;
	uint64_t key, v;

	/* the outer message: the last frame field wins, other fields make it
	 * another kind of message */
	while (p < end) {
		if (get_varint(&p, end, &key) < 0)
			return -EBADMSG;
		if (key == KEY_FRAME) {
			if (get_varint(&p, end, &v) < 0 || v > (uint64_t)(end - p))
				return -EBADMSG;
			in = p;
			in_end = p + v;
			p += v;
		} else if ((key >> 3) >= 1 && (key >> 3) <= 7) {
			return 0;   /* another body of the oneof */
		} else if (skip_field(&p, end, (unsigned)(key & 7)) < 0) {
			return -EBADMSG;
		}
	}
	if (!in)
		return 0;
	*seq = 0;
	*data = NULL;
	*data_len = 0;
	p = in;
	while (p < in_end) {
		if (get_varint(&p, in_end, &key) < 0)
			return -EBADMSG;
		if (key == KEY_SEQ) {
			if (get_varint(&p, in_end, seq) < 0)
				return -EBADMSG;
		} else if (key == KEY_DATA) {
			if (get_varint(&p, in_end, &v) < 0 || v > (uint64_t)(in_end - p))
				return -EBADMSG;
			*data = p;
			*data_len = (size_t)v;
			p += v;
		} else if (skip_field(&p, in_end, (unsigned)(key & 7)) < 0) {
			return -EBADMSG;
		}
	}
	if (!*data)
		*data = in_end;   /* empty payload */
	return 1;
}

unsigned rec_wire_hello_nul(const unsigned char *msg, size_t len)
{
	const unsigned char *p = msg, *end = msg + len, *h = NULL, *h_end = NULL;
	uint64_t key, v;

	/* the outer message: its hello field (the last one, as protobuf-c) */
	while (p < end) {
		if (get_varint(&p, end, &key) < 0)
			return 0;
		if (key == KEY_HELLO) {
			if (get_varint(&p, end, &v) < 0 || v > (uint64_t)(end - p))
				return 0;
			h = p;
			h_end = p + v;
			p += v;
		} else if (skip_field(&p, end, (unsigned)(key & 7)) < 0) {
			return 0;
		}
	}
	for (p = h; p && p < h_end;) {
		unsigned field;

		if (get_varint(&p, h_end, &key) < 0)
			return 0;
		field = (unsigned)(key >> 3);
		if ((key & 7) == 2 && field >= 2 && field <= 5) {
			if (get_varint(&p, h_end, &v) < 0 || v > (uint64_t)(h_end - p))
				return 0;
			if (memchr(p, '\0', (size_t)v))
				return field;
			p += v;
		} else if (skip_field(&p, h_end, (unsigned)(key & 7)) < 0) {
			return 0;
		}
	}
	return 0;
}

int rec_wire_pack(const Perfrec__Control__StreamMessage *m, unsigned char **out,
		  size_t *len)
{
	size_t n = perfrec__control__stream_message__get_packed_size(m);
	unsigned char *b = malloc(n + 4);

	if (!b)
		return -ENOMEM;
	prec_msgbuf_put_len(b, (uint32_t)n);
	perfrec__control__stream_message__pack(m, b + 4);
	*out = b;
	*len = n + 4;
	return 0;
}

Perfrec__Control__StreamMessage *rec_wire_unpack(const unsigned char *msg,
						 size_t len)
{
	return perfrec__control__stream_message__unpack(NULL, len, msg);
}

uint64_t rec_wire_frame_limit(uint64_t max_msg)
{
	if (max_msg < REC_WIRE_FRAME_ROOM + 4096)
		return 4096;
	return max_msg - REC_WIRE_FRAME_ROOM;
}

bool rec_wire_name_ok(const char *s)
{
	size_t n = 0;

	if (!s || !*s || *s == '.' || *s == '-')
		return false;
	for (; s[n]; n++) {
		char c = s[n];

		if (n >= 64)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

bool rec_wire_token_equal(const void *a, size_t alen, const void *b, size_t blen)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned diff = alen != blen;

	for (size_t i = 0; i < blen; i++)
		diff |= (unsigned)((i < alen ? x[i] : 0) ^ y[i]);
	return diff == 0;
}
