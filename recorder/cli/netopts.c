/*
 * netopts.c - token and TLS options; see netopts.h.
 */
#include "recorder/cli/netopts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/log.h"
#include "recorder/net/conn.h"

#define TOKEN_MAX 1024

int rec_cli_net_option(struct rec_cli_net *n, int key, const char *arg)
{
	switch (key) {
	case REC_OPT_TOKEN_FILE:
		n->token_file = arg;
		return 1;
	case REC_OPT_TLS_CERT:
		n->tls_cert = arg;
		return 1;
	case REC_OPT_TLS_KEY:
		n->tls_key = arg;
		return 1;
	case REC_OPT_TLS_CA:
		n->tls_ca = arg;
		return 1;
	default:
		return 0;
	}
}

static int read_token(struct rec_cli_net *n)
{
	char buf[TOKEN_MAX + 2];
	struct stat st;
	int fd = open(n->token_file, O_RDONLY | O_CLOEXEC), ret;
	ssize_t len;

	if (fd < 0) {
		ret = -errno;
		rec_log(REC_LOG_ERROR, "cannot read the token file %s: %s", n->token_file,
			strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) == 0 && (st.st_mode & 077))
		rec_log(REC_LOG_WARN, "token file %s is readable by others (mode %03o): "
			"chmod 600 it", n->token_file, (unsigned)(st.st_mode & 0777));
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0) {
		ret = -errno;
		rec_log(REC_LOG_ERROR, "cannot read the token file %s: %s", n->token_file,
			strerror(-ret));
		return ret;
	}
	buf[len] = '\0';
	len = (ssize_t)strcspn(buf, "\r\n");
	if (len == 0 || len > TOKEN_MAX) {
		rec_log(REC_LOG_ERROR, "token file %s: the first line must hold 1 to %d "
			"bytes", n->token_file, TOKEN_MAX);
		return -EINVAL;
	}
	n->token = malloc((size_t)len);
	if (!n->token)
		return -ENOMEM;
	memcpy(n->token, buf, (size_t)len);
	n->token_len = (size_t)len;
	return 0;
}

int rec_cli_net_load(struct rec_cli_net *n, bool server)
{
	int ret;

	if (n->token_file) {
		ret = read_token(n);
		if (ret < 0)
			return ret;
	}
	if (!!n->tls_cert != !!n->tls_key) {
		rec_log(REC_LOG_ERROR, "--tls-cert and --tls-key go together");
		return -EINVAL;
	}
	if (n->tls_cert || n->tls_ca) {
		struct rec_tls_opts o = { server, n->tls_cert, n->tls_key, n->tls_ca };

		ret = rec_tls_new(&o, &n->tls);
		if (ret < 0)
			return ret;
	}
	return 0;
}

void rec_cli_net_release(struct rec_cli_net *n)
{
	if (n->token) {
		memset(n->token, 0, n->token_len);
		free(n->token);
	}
	rec_tls_free(n->tls);
	memset(n, 0, sizeof(*n));
}
