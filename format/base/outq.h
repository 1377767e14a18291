/*
 * outq.h - bytes waiting to be sent to one peer: a server queues its
 * replies here and sends them as the peer's socket takes them, so a slow
 * reader never blocks the server's loop.
 *
 *   prec_outq_add(&q, bytes, n);               queue
 *   p = prec_outq_peek(&q, &n);                 on writable: send(p, n)...
 *   prec_outq_consume(&q, sent);                ...and drop what went
 *   prec_outq_release(&q);
 *
 * Sending is the caller's (a plain socket, a TLS connection): the queue
 * only holds the bytes.
 */
#ifndef PREC_OUTQ_H
#define PREC_OUTQ_H

#include <stddef.h>

struct prec_outq {
	unsigned char *b;
	size_t len, pos, cap;   /* b[pos..len) waits */
};

/* Appends n bytes. 0 or -ENOMEM. */
int prec_outq_add(struct prec_outq *q, const void *b, size_t n);
/* The bytes waiting (*n of them; 0 when empty). */
const void *prec_outq_peek(const struct prec_outq *q, size_t *n);
size_t prec_outq_pending(const struct prec_outq *q);
/* n (<= pending) bytes were sent. */
void prec_outq_consume(struct prec_outq *q, size_t n);
/* Forgets what waits (nobody will read it). */
void prec_outq_drop(struct prec_outq *q);
void prec_outq_release(struct prec_outq *q);

#endif
