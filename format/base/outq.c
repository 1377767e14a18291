/*
 * outq.c - bytes waiting to be sent; see outq.h.
 */
#include "format/base/outq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int prec_outq_add(struct prec_outq *q, const void *b, size_t n)
{
	if (q->pos && q->pos == q->len)
		q->pos = q->len = 0;
	if (q->cap - q->len < n) {
		size_t cap = q->cap ? q->cap : 1024;
		unsigned char *nb;

		while (cap - q->len < n) {
			if (cap > (size_t)-1 / 2)
				return -ENOMEM;
			cap *= 2;
		}
		nb = realloc(q->b, cap);
		if (!nb)
			return -ENOMEM;
		q->b = nb;
		q->cap = cap;
	}
	if (n)
		memcpy(q->b + q->len, b, n);
	q->len += n;
	return 0;
}

const void *prec_outq_peek(const struct prec_outq *q, size_t *n)
{
	*n = q->len - q->pos;
	return q->b ? q->b + q->pos : NULL;
}

size_t prec_outq_pending(const struct prec_outq *q)
{
	return q->len - q->pos;
}

void prec_outq_consume(struct prec_outq *q, size_t n)
{
	q->pos += n;
	if (q->pos == q->len)
		q->pos = q->len = 0;
}

void prec_outq_drop(struct prec_outq *q)
{
	q->pos = q->len = 0;
}

void prec_outq_release(struct prec_outq *q)
{
	free(q->b);
	memset(q, 0, sizeof(*q));
}
