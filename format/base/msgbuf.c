/*
 * msgbuf.c - length-prefixed messages; see msgbuf.h.
 */
#include "format/base/msgbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define GROW_MIN (64u << 10)
/* An empty buffer larger than this is given back: a peer that once sent
 * a large message does not keep its memory while it sends small ones. */
#define KEEP_MAX (1u << 20)

void prec_msgbuf_init(struct prec_msgbuf *in, size_t max)
{
	memset(in, 0, sizeof(*in));
	in->max = max;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void set_cap(struct prec_msgbuf *in, unsigned char *buf, size_t cap)
{
	if (in->budget) {
		in->budget->used = in->budget->used - in->cap + cap;
		if (in->budget->used > in->budget->peak)
			in->budget->peak = in->budget->used;
	}
	in->buf = buf;
	in->cap = cap;
}

void *prec_msgbuf_space(struct prec_msgbuf *in, size_t *room)
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

void prec_msgbuf_commit(struct prec_msgbuf *in, size_t n)
{
	in->len += n;
}

int prec_msgbuf_next(struct prec_msgbuf *in, const unsigned char **msg,
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

size_t prec_msgbuf_partial(const struct prec_msgbuf *in)
{
	return in->len - in->pos;
}

void prec_msgbuf_release(struct prec_msgbuf *in)
{
	free(in->buf);
	set_cap(in, NULL, 0);
	memset(in, 0, sizeof(*in));
}

void prec_msgbuf_put_len(unsigned char out[PREC_MSGBUF_PREFIX], uint32_t n)
{
	out[0] = (unsigned char)(n >> 24);
	out[1] = (unsigned char)(n >> 16);
	out[2] = (unsigned char)(n >> 8);
	out[3] = (unsigned char)n;
}
