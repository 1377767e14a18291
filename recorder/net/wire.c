/*
 * wire.c - message framing, frames without protobuf-c, names and tokens;
 * see wire.h.
 */
#include "recorder/net/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/varint.h"

/* protobuf field keys of the frame path */
#define KEY_HELLO ((1u << 3) | 2u)   /* StreamMessage.hello, length-delimited */
#define KEY_FRAME ((3u << 3) | 2u)   /* StreamMessage.frame, length-delimited */
#define KEY_SEQ ((1u << 3) | 0u)     /* Frame.seq, varint */
#define KEY_DATA ((2u << 3) | 2u)    /* Frame.data, length-delimited */
#define GROW_MIN (64u << 10)
/* An empty buffer larger than this is given back: a peer that once sent
 * a large frame does not keep its memory while it sends small ones. */
#define KEEP_MAX (1u << 20)

void rec_wire_in_init(struct rec_wire_in *in, size_t max)
{
	memset(in, 0, sizeof(*in));
	in->max = max;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void set_cap(struct rec_wire_in *in, unsigned char *buf, size_t cap)
{
	if (in->budget) {
		in->budget->used = in->budget->used - in->cap + cap;
		if (in->budget->used > in->budget->peak)
			in->budget->peak = in->budget->used;
	}
	in->buf = buf;
	in->cap = cap;
}

void *rec_wire_in_space(struct rec_wire_in *in, size_t *room)
{
	/* consumed messages go; what is left is part of one message */
	if (in->pos) {
		memmove(in->buf, in->buf + in->pos, in->len - in->pos);
		in->len -= in->pos;
		in->pos = 0;
	}
	if (!in->len && in->cap > KEEP_MAX) {
		free(in->buf);
		set_cap(in, NULL, 0);
	}
	if (in->cap == in->len) {
		size_t need = 0, cap, most = 4 + in->max;
		unsigned char *nb;

		if (in->len >= 4 && be32(in->buf) <= in->max)
			need = 4 + (size_t)be32(in->buf);
		/* double as bytes arrive, so memory follows what the peer
		 * actually sent, never just what it announced; stop at the
		 * message's end, and never above the largest message */
		cap = in->len * 2 > in->len + GROW_MIN ? in->len * 2 : in->len + GROW_MIN;
		if (need > in->len && cap > need)
			cap = need;
		if (cap > most && most > in->len)
			cap = most;
		if (in->budget && (in->budget->used > in->budget->max ||
				   cap - in->cap > in->budget->max - in->budget->used)) {
			errno = ENOBUFS;
			return NULL;
		}
		nb = realloc(in->buf, cap);
		if (!nb) {
			errno = ENOMEM;
			return NULL;
		}
		set_cap(in, nb, cap);
	}
	*room = in->cap - in->len;
	return in->buf + in->len;
}

void rec_wire_in_commit(struct rec_wire_in *in, size_t n)
{
	in->len += n;
}

int rec_wire_in_next(struct rec_wire_in *in, const unsigned char **msg,
		     size_t *len)
{
	size_t have = in->len - in->pos, n;

	if (have < 4)
		return 0;
	n = be32(in->buf + in->pos);
	if (n > in->max) {
		*len = n;
		return -EMSGSIZE;
	}
	if (have - 4 < n)
		return 0;
	*msg = in->buf + in->pos + 4;
	*len = n;
	in->pos += 4 + n;
	return 1;
}

size_t rec_wire_in_partial(const struct rec_wire_in *in)
{
	return in->len - in->pos;
}

void rec_wire_in_release(struct rec_wire_in *in)
{
	free(in->buf);
	set_cap(in, NULL, 0);
	memset(in, 0, sizeof(*in));
}

size_t rec_wire_frame_header(uint64_t seq, size_t data_len,
			     unsigned char out[REC_WIRE_FRAME_HDR_MAX])
{
	/* Frame{seq, data} as protobuf-c writes it: fields in number order,
	 * a zero seq and empty data omitted (proto3) */
	size_t inner = (seq ? 1 + prec_varint_size(seq) : 0) +
		       (data_len ? 1 + prec_varint_size(data_len) + data_len : 0);
	size_t total = 1 + prec_varint_size(inner) + inner, n = 4;

	out[0] = (unsigned char)(total >> 24);
	out[1] = (unsigned char)(total >> 16);
	out[2] = (unsigned char)(total >> 8);
	out[3] = (unsigned char)total;
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
	b[0] = (unsigned char)(n >> 24);
	b[1] = (unsigned char)(n >> 16);
	b[2] = (unsigned char)(n >> 8);
	b[3] = (unsigned char)n;
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
