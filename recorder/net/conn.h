/*
 * conn.h - one byte-stream connection, plain TCP or TLS 1.3 (OpenSSL),
 * behind the same four calls, for the collector (non-blocking, epoll) and
 * the sender (non-blocking, poll).
 *
 * How to use:
 *
 *   rec_tls_new(&opts, &tls);               // once; NULL tls = plain TCP
 *   rec_conn_init(&c, fd, tls, server_name);  // fd: connected, O_NONBLOCK
 *   while ((ret = rec_conn_handshake(&c)) == -EAGAIN)
 *       wait for rec_conn_want(&c) (POLLIN / POLLOUT) on fd;
 *   n = rec_conn_read(&c, buf, len);        // > 0, 0 = peer closed, -EAGAIN
 *   n = rec_conn_write(&c, buf, len);       // bytes taken (> 0) or -EAGAIN
 *   rec_conn_release(&c);                   // closes fd
 *
 * After -EAGAIN, rec_conn_want() says which readiness to wait for (TLS
 * may need to write while reading and the reverse). Errors are negative
 * errno; -EPROTO is a TLS failure, described by rec_conn_error().
 *
 * TLS: servers present cert/key and, with ca, require a client
 * certificate signed by it; clients verify the server's certificate
 * against ca (its name or IP must match server_name) and present cert/key
 * when given. TLS 1.3 only: nothing older is offered or accepted.
 */
#ifndef REC_CONN_H
#define REC_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct rec_tls;

struct rec_tls_opts {
	bool server;
	const char *cert;    /* PEM certificate (chain): server, or client auth */
	const char *key;     /* its PEM private key */
	const char *ca;      /* PEM CA: clients verify the server, servers
			      * require client certificates */
};

/* 0 and *out, or a negative errno after logging what OpenSSL refused
 * (file, key mismatch ...). */
int rec_tls_new(const struct rec_tls_opts *o, struct rec_tls **out);
void rec_tls_free(struct rec_tls *t);   /* NULL is fine */

struct rec_conn {
	int fd;
	void *ssl;           /* SSL *, NULL for plain TCP */
	bool handshaken;
	short want;          /* POLLIN / POLLOUT after -EAGAIN */
	char error[160];     /* the last TLS failure */
};

int rec_conn_init(struct rec_conn *c, int fd, struct rec_tls *tls,
		  const char *server_name);
int rec_conn_handshake(struct rec_conn *c);
ssize_t rec_conn_read(struct rec_conn *c, void *buf, size_t n);
ssize_t rec_conn_write(struct rec_conn *c, const void *buf, size_t n);
short rec_conn_want(const struct rec_conn *c);
const char *rec_conn_error(const struct rec_conn *c);
void rec_conn_release(struct rec_conn *c);

#endif
