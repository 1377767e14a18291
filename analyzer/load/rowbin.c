/*
 * rowbin.c - see rowbin.h.
 */
#include "analyzer/load/rowbin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/grow.h"

void ana_rowbin_init(struct ana_rowbin *b)
{
	memset(b, 0, sizeof(*b));
}

void ana_rowbin_release(struct ana_rowbin *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

void ana_rowbin_reset(struct ana_rowbin *b)
{
	b->len = 0;
	b->err = 0;
}

int ana_rowbin_error(const struct ana_rowbin *b)
{
	return b->err;
}

static void put(struct ana_rowbin *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (n > SIZE_MAX - b->len || prec_grow(&b->buf, &b->cap, b->len + n, 1)) {
		b->err = -ENOMEM;
		return;
	}
	if (n)
		memcpy(b->buf + b->len, p, n);
	b->len += n;
}

void ana_rowbin_u8(struct ana_rowbin *b, uint8_t v)
{
	put(b, &v, 1);
}

void ana_rowbin_i64(struct ana_rowbin *b, int64_t v)
{
	uint64_t u = (uint64_t)v;
	unsigned char le[8];

	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)(u >> (8 * i));
	put(b, le, sizeof(le));
}

void ana_rowbin_f64(struct ana_rowbin *b, double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	ana_rowbin_i64(b, (int64_t)u);
}

void ana_rowbin_str(struct ana_rowbin *b, const void *s, size_t n)
{
	unsigned char leb[10];
	size_t k = 0;
	uint64_t v = n;

	do {
		leb[k] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			leb[k] |= 0x80;
		k++;
	} while (v);
	size_t before = b->len;
	put(b, leb, k);
	put(b, s, n);
	if (b->err)
		b->len = before;   /* no half string: the buffer stays as it was */
}
