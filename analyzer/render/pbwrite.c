/*
 * pbwrite.c - protobuf fields into a growing buffer (see pbwrite.h).
 */
#include "analyzer/render/pbwrite.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/strescape.h"
#include "format/varint.h"

void ana_pbw_init(struct ana_pbw *w)
{
	memset(w, 0, sizeof(*w));
}

void ana_pbw_release(struct ana_pbw *w)
{
	free(w->p);
	memset(w, 0, sizeof(*w));
}

/* Room for n more bytes; 0, or -1 with w->err set. */
static int reserve(struct ana_pbw *w, size_t n)
{
	if (w->err)
		return -1;
	if (w->len + n <= w->cap)
		return 0;
	size_t cap = w->cap ? w->cap : 4096;
	while (cap < w->len + n)
		cap *= 2;
	uint8_t *p = realloc(w->p, cap);
	if (!p) {
		w->err = -ENOMEM;
		return -1;
	}
	w->p = p;
	w->cap = cap;
	return 0;
}

void ana_pbw_raw_varint(struct ana_pbw *w, uint64_t v)
{
	if (reserve(w, 10))
		return;
	w->len = (size_t)(prec_varint_put(w->p + w->len, v) - w->p);
}

static void tag(struct ana_pbw *w, uint32_t field, unsigned wire)
{
	ana_pbw_raw_varint(w, ((uint64_t)field << 3) | wire);
}

void ana_pbw_varint(struct ana_pbw *w, uint32_t field, uint64_t v)
{
	tag(w, field, 0);
	ana_pbw_raw_varint(w, v);
}

void ana_pbw_fixed64(struct ana_pbw *w, uint32_t field, uint64_t v)
{
	tag(w, field, 1);
	if (reserve(w, 8))
		return;
	for (int i = 0; i < 8; i++)
		w->p[w->len++] = (uint8_t)(v >> (8 * i));
}

void ana_pbw_double(struct ana_pbw *w, uint32_t field, double v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof(u));
	ana_pbw_fixed64(w, field, u);
}

void ana_pbw_raw(struct ana_pbw *w, const void *p, size_t n)
{
	if (!n || reserve(w, n))
		return;
	memcpy(w->p + w->len, p, n);
	w->len += n;
}

void ana_pbw_bytes(struct ana_pbw *w, uint32_t field, const void *p, size_t n)
{
	ana_pbw_len_prefix(w, field, n);
	ana_pbw_raw(w, p, n);
}

void ana_pbw_len_prefix(struct ana_pbw *w, uint32_t field, uint64_t n)
{
	tag(w, field, 2);
	ana_pbw_raw_varint(w, n);
}

size_t ana_pbw_prefix_size(uint32_t field, uint64_t n)
{
	return prec_varint_size((uint64_t)field << 3) + prec_varint_size(n);
}

/* Bytes s takes once each byte that does not start a valid UTF-8
 * character is U+FFFD (3 bytes). */
static size_t utf8_len(const char *s, size_t n)
{
	size_t out = 0;
	uint32_t cp;
	for (size_t i = 0; i < n;) {
		size_t k = prec_utf8_char(s + i, n - i, &cp);
		out += k ? k : 3;
		i += k ? k : 1;
	}
	return out;
}

void ana_pbw_str(struct ana_pbw *w, uint32_t field, const char *s)
{
	size_t n = s ? strlen(s) : 0, len = utf8_len(s, n);
	if (len == n) {
		ana_pbw_bytes(w, field, s, n);
		return;
	}
	ana_pbw_len_prefix(w, field, len);
	if (reserve(w, len))
		return;
	uint32_t cp;
	for (size_t i = 0; i < n;) {
		size_t k = prec_utf8_char(s + i, n - i, &cp);
		if (k) {
			memcpy(w->p + w->len, s + i, k);
			w->len += k;
			i += k;
		} else {
			memcpy(w->p + w->len, "\xef\xbf\xbd", 3);   /* U+FFFD */
			w->len += 3;
			i++;
		}
	}
}

void ana_pbw_begin(struct ana_pbw *w, uint32_t field)
{
	tag(w, field, 2);
	if (w->depth == ANA_PBW_DEPTH) {
		w->err = -EINVAL;
		return;
	}
	w->open[w->depth++] = w->len;
}

void ana_pbw_end(struct ana_pbw *w)
{
	if (w->depth == 0) {
		w->err = -EINVAL;
		return;
	}
	size_t start = w->open[--w->depth];
	if (w->err)
		return;
	size_t body = w->len - start;
	size_t n = prec_varint_size(body);
	if (reserve(w, n))
		return;
	memmove(w->p + start + n, w->p + start, body);
	prec_varint_put(w->p + start, body);
	w->len += n;
}

int ana_pbw_flush(struct ana_pbw *w, FILE *out)
{
	if (w->err)
		return w->err;
	if (w->depth)
		return -EINVAL;
	if (w->len && fwrite(w->p, 1, w->len, out) != w->len)
		return -EIO;
	w->len = 0;
	return 0;
}
