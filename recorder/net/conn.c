/*
 * conn.c - plain or TLS byte streams; see conn.h.
 */
#include "recorder/net/conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/log.h"

struct rec_tls {
	SSL_CTX *ctx;
	bool server;
};

/* OpenSSL's error queue, oldest first, into buf. */
static const char *ssl_errors(char *buf, size_t len)
{
	unsigned long e;
	size_t n = 0;

	buf[0] = '\0';
	while ((e = ERR_get_error()) && n + 2 < len) {
		if (n)
			n += (size_t)snprintf(buf + n, len - n, "; ");
		ERR_error_string_n(e, buf + n, len - n);
		n = strlen(buf);
	}
	if (!buf[0])
		snprintf(buf, len, "unknown TLS error");
	return buf;
}

int rec_tls_new(const struct rec_tls_opts *o, struct rec_tls **out)
{
	struct rec_tls *t = calloc(1, sizeof(*t));
	char why[512];

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->server = o->server;
	t->ctx = SSL_CTX_new(o->server ? TLS_server_method() : TLS_client_method());
	if (!t->ctx)
		goto fail;
	if (!SSL_CTX_set_min_proto_version(t->ctx, TLS1_3_VERSION))
		goto fail;
	/* non-blocking writes: take what fits, retry from anywhere */
	SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
			 SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	if (o->cert && SSL_CTX_use_certificate_chain_file(t->ctx, o->cert) != 1) {
		rec_log(REC_LOG_ERROR, "TLS certificate %s: %s", o->cert,
			ssl_errors(why, sizeof(why)));
		goto err;
	}
	if (o->key && SSL_CTX_use_PrivateKey_file(t->ctx, o->key, SSL_FILETYPE_PEM) != 1) {
		rec_log(REC_LOG_ERROR, "TLS key %s: %s", o->key, ssl_errors(why, sizeof(why)));
		goto err;
	}
	if (o->cert && o->key && SSL_CTX_check_private_key(t->ctx) != 1) {
		rec_log(REC_LOG_ERROR, "TLS key %s does not belong to certificate %s",
			o->key, o->cert);
		goto err;
	}
	if (o->server && (!o->cert || !o->key)) {
		rec_log(REC_LOG_ERROR, "a TLS server needs a certificate and its key "
			"(--tls-cert, --tls-key)");
		goto err;
	}
	if (o->ca) {
		if (SSL_CTX_load_verify_locations(t->ctx, o->ca, NULL) != 1) {
			rec_log(REC_LOG_ERROR, "TLS CA %s: %s", o->ca, ssl_errors(why, sizeof(why)));
			goto err;
		}
		SSL_CTX_set_verify(t->ctx, o->server ?
				   SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT :
				   SSL_VERIFY_PEER, NULL);
	} else if (!o->server) {
		/* the system's trust store: a public CA signed the collector */
		SSL_CTX_set_default_verify_paths(t->ctx);
		SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
	}
	*out = t;
	return 0;
fail:
	rec_log(REC_LOG_ERROR, "TLS setup: %s", ssl_errors(why, sizeof(why)));
err:
	rec_tls_free(t);
	return -EPROTO;
}

void rec_tls_free(struct rec_tls *t)
{
	if (!t)
		return;
	SSL_CTX_free(t->ctx);
	free(t);
}

int rec_conn_init(struct rec_conn *c, int fd, struct rec_tls *tls,
		  const char *server_name)
{
	SSL *ssl;

	memset(c, 0, sizeof(*c));
	c->fd = fd;
	if (!tls) {
		c->handshaken = true;
		return 0;
	}
	ssl = SSL_new(tls->ctx);
	if (!ssl || SSL_set_fd(ssl, fd) != 1) {
		SSL_free(ssl);
		return -ENOMEM;
	}
	if (tls->server) {
		SSL_set_accept_state(ssl);
	} else {
		unsigned char addr[16];
		X509_VERIFY_PARAM *vp = SSL_get0_param(ssl);

		SSL_set_connect_state(ssl);
		if (server_name && *server_name) {
			/* an address is checked against the IP SANs, a name
			 * against DNS names (and sent as SNI) */
			if (inet_pton(AF_INET, server_name, addr) == 1 ||
			    inet_pton(AF_INET6, server_name, addr) == 1) {
				X509_VERIFY_PARAM_set1_ip_asc(vp, server_name);
			} else {
				SSL_set_tlsext_host_name(ssl, server_name);
				SSL_set1_host(ssl, server_name);
			}
		}
	}
	c->ssl = ssl;
	return 0;
}

/* The outcome of an SSL_* call that returned ret <= 0. */
static int ssl_result(struct rec_conn *c, int ret)
{
	int e = SSL_get_error(c->ssl, ret);

	switch (e) {
	case SSL_ERROR_WANT_READ:
		c->want = POLLIN;
		return -EAGAIN;
	case SSL_ERROR_WANT_WRITE:
		c->want = POLLOUT;
		return -EAGAIN;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	case SSL_ERROR_SYSCALL:
		if (errno && errno != EAGAIN)
			return -errno;
		ERR_clear_error();
		return -ECONNRESET;
	default: {
		long v = SSL_get_verify_result(c->ssl);

		if (v != X509_V_OK)
			snprintf(c->error, sizeof(c->error), "certificate: %s",
				 X509_verify_cert_error_string(v));
		else
			ssl_errors(c->error, sizeof(c->error));
		return -EPROTO;
	}
	}
}

int rec_conn_handshake(struct rec_conn *c)
{
	int ret;

	if (c->handshaken)
		return 0;
	ERR_clear_error();
	ret = SSL_do_handshake(c->ssl);
	if (ret == 1) {
		c->handshaken = true;
		return 0;
	}
	ret = ssl_result(c, ret);
	return ret == 0 ? -ECONNRESET : ret;
}

ssize_t rec_conn_read(struct rec_conn *c, void *buf, size_t n)
{
	int ret;

	if (!c->ssl) {
		ssize_t r = read(c->fd, buf, n);

		if (r < 0) {
			c->want = POLLIN;
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		}
		return r;
	}
	if (n > (size_t)1 << 30)
		n = (size_t)1 << 30;
	ERR_clear_error();
	ret = SSL_read(c->ssl, buf, (int)n);
	return ret > 0 ? ret : ssl_result(c, ret);
}

ssize_t rec_conn_write(struct rec_conn *c, const void *buf, size_t n)
{
	int ret;

	if (!c->ssl) {
		ssize_t r = send(c->fd, buf, n, MSG_NOSIGNAL);

		if (r < 0) {
			c->want = POLLOUT;
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		}
		return r;
	}
	if (n > (size_t)1 << 30)
		n = (size_t)1 << 30;
	ERR_clear_error();
	ret = SSL_write(c->ssl, buf, (int)n);
	if (ret > 0)
		return ret;
	ret = ssl_result(c, ret);
	return ret == 0 ? -EPIPE : ret;
}

short rec_conn_want(const struct rec_conn *c)
{
	return c->want ? c->want : POLLIN;
}

const char *rec_conn_error(const struct rec_conn *c)
{
	return c->error[0] ? c->error : "TLS failure";
}

void rec_conn_release(struct rec_conn *c)
{
	if (c->ssl) {
		SSL_shutdown(c->ssl);
		SSL_free(c->ssl);
	}
	if (c->fd >= 0)
		close(c->fd);
	c->ssl = NULL;
	c->fd = -1;
}
