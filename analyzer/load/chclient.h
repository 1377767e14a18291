/*
 * chclient.h - one ClickHouse server over its HTTP interface (libcurl).
 *
 *   struct ana_ch *ch = ana_ch_new("http://127.0.0.1:8123");   // NULL: errno
 *   ana_ch_query(ch, "SELECT count() FROM files FORMAT TabSeparated", &r, &n);
 *   ana_ch_insert(ch, "INSERT INTO profile FORMAT RowBinary", NULL, rows, len);
 *   on a negative return: ana_ch_errmsg(ch)
 *   ana_ch_free(ch);
 *
 * A statement goes as the POST body (query) or, with rows, in the URL's
 * `query` parameter while the rows are the body (insert), so rows are
 * never parsed as SQL. The URL may carry ClickHouse's own parameters
 * (?database=perfrec&user=...) and user:password@ before the host;
 * messages name the URL without either, so a password is never printed.
 *
 * Errors (negative errno; ana_ch_errmsg says which and why):
 *   -ECONNREFUSED  the server cannot be reached (refused, no route, no
 *                  such host, timed out): the message names the URL
 *   -EIO           the server answered an error: the message is the URL,
 *                  the HTTP status and ClickHouse's own message
 *   -ENOMEM
 * Not thread-safe: one ana_ch per thread.
 */
#ifndef ANA_LOAD_CHCLIENT_H
#define ANA_LOAD_CHCLIENT_H

#include <stddef.h>

struct ana_ch;

/* url: "http://host:port" or https, optionally followed by ClickHouse's
 * parameters ("?database=db"); copied. */
struct ana_ch *ana_ch_new(const char *url);
void ana_ch_free(struct ana_ch *ch);

/* The URL without its user, password and parameters, as messages name it. */
const char *ana_ch_name(const struct ana_ch *ch);

/* Runs sql; the reply body is *reply, *len bytes (either may be NULL), owned by
 * ch and valid until its next call (always terminated by a NUL). */
int ana_ch_query(struct ana_ch *ch, const char *sql, const char **reply, size_t *len);

/* Runs sql (an INSERT ... FORMAT F) with data as its rows, synchronously
 * into the shards when the table is Distributed (insert_distributed_sync):
 * when it returns 0 the rows are stored and visible. query_id (may be
 * NULL) names the query on the server, which refuses a second query of
 * the same id while the first runs. */
int ana_ch_insert(struct ana_ch *ch, const char *sql, const char *query_id, const void *data,
		  size_t len);

/* The last call's error message ("" after a success). */
const char *ana_ch_errmsg(const struct ana_ch *ch);

#endif
