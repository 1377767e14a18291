/*
 * netopts.h - the options that secure a connection, shared by `perfrec
 * record --to` and `perfrec collect` (and later the daemon and archiver):
 * the token file and TLS files, read and checked in one place.
 */
#ifndef REC_CLI_NETOPTS_H
#define REC_CLI_NETOPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "recorder/cli/options.h"

struct rec_tls;

struct rec_cli_net {
	const char *token_file;
	const char *tls_cert, *tls_key, *tls_ca;
	char *token;          /* read from token_file */
	size_t token_len;
	struct rec_tls *tls;  /* made by rec_cli_net_load() when any TLS file is given */
};

#define REC_CLI_NET_OPTS \
	{ "token-file", REC_OPT_TOKEN_FILE, "FILE", "shared secret (the file's first line, 1..1024\n" \
	  "bytes); give the same file on both sides" }, \
	{ "tls-cert", REC_OPT_TLS_CERT, "FILE", "TLS 1.3 certificate (PEM)" }, \
	{ "tls-key", REC_OPT_TLS_KEY, "FILE", "its private key (PEM)" }, \
	{ "tls-ca", REC_OPT_TLS_CA, "FILE", "CA (PEM) that signed the peer's certificate" }

/* 1 when key is one of REC_CLI_NET_OPTS (stored), 0 otherwise. */
int rec_cli_net_option(struct rec_cli_net *n, int key, const char *arg);
/* Reads the token file and sets up TLS (server: as `collect` does).
 * 0 or -errno (logged: which file, what is wrong). */
int rec_cli_net_load(struct rec_cli_net *n, bool server);
void rec_cli_net_release(struct rec_cli_net *n);

#endif
