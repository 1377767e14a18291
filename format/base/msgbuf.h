/*
 * msgbuf.h - length-prefixed messages: every message is a u32 big-endian
 * length N, then N bytes. The stream connections (recorder/net/wire.h,
 * format/SPEC.md section 10) and the daemon's control socket
 * (recorder/daemon/ctlmsg.h) both carry them.
 *
 * Bytes from a peer are untrusted: a length is checked against the
 * buffer's limit before anything is allocated for it, and the buffer
 * grows only as bytes actually arrive, so a peer that announces a large
 * message and sends nothing costs nothing.
 *
 * How to read a connection:
 *
 *   struct prec_msgbuf in;
 *   prec_msgbuf_init(&in, max);
 *   on readable:
 *       p = prec_msgbuf_space(&in, &room);   n = read(fd, p, room);
 *       prec_msgbuf_commit(&in, n);
 *       while ((ret = prec_msgbuf_next(&in, &msg, &len)) > 0)
 *           ... msg/len valid until the next prec_msgbuf_* call ...
 *       ret < 0: a bad length: refuse the peer
 *   prec_msgbuf_release(&in);
 *
 * A server bounds what its peers make it hold: in->max is the largest
 * message the next one may be (it may change between messages), and
 * in->budget, when set (after init, before the first prec_msgbuf_space),
 * is the memory every buffer of the server draws from together. A
 * buffer never exceeds its largest message plus its prefix, and an empty
 * one above 1 MiB is given back.
 */
#ifndef PREC_MSGBUF_H
#define PREC_MSGBUF_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of the length prefix. */
#define PREC_MSGBUF_PREFIX 4

/* Memory that several buffers share: they grow only while the sum of
 * them stays within max. One thread uses it (no lock). */
struct prec_msgbuf_budget {
	size_t used;    /* bytes the buffers hold */
	size_t max;
	size_t peak;    /* the most used ever held */
};

struct prec_msgbuf {
	unsigned char *buf;
	size_t len;     /* bytes held */
	size_t pos;     /* start of the next message */
	size_t cap;
	size_t max;     /* largest message accepted; may change between
			 * messages */
	struct prec_msgbuf_budget *budget;   /* shared bound, or NULL */
};

void prec_msgbuf_init(struct prec_msgbuf *in, size_t max);
/* Room to read into (at least 1 byte): grows toward the announced size of
 * the message being received. NULL with errno ENOMEM when out of memory,
 * ENOBUFS when growing would take the budget past its max. */
void *prec_msgbuf_space(struct prec_msgbuf *in, size_t *room);
void prec_msgbuf_commit(struct prec_msgbuf *in, size_t n);
/* 1 and the next whole message; 0: more bytes needed; -EMSGSIZE: its
 * length is above the limit (*len says what was announced). */
int prec_msgbuf_next(struct prec_msgbuf *in, const unsigned char **msg,
		     size_t *len);
/* Bytes of a message still being received (for "slow peer" deadlines). */
size_t prec_msgbuf_partial(const struct prec_msgbuf *in);
void prec_msgbuf_release(struct prec_msgbuf *in);

/* Writes the prefix of an n-byte message; the message follows it. */
void prec_msgbuf_put_len(unsigned char out[PREC_MSGBUF_PREFIX], uint32_t n);

#endif
