/*
 * chclient.c - see chclient.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/load/chclient.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/load/chreply.h"
#include "format/base/grow.h"

/* A reply larger than this is not one the loader asked for. */
#define CH_REPLY_MAX (64u << 20)

struct ana_ch {
	CURL *curl;
	char *url;        /* as given */
	char *name;       /* url without ?params */
	char *reply;      /* the last reply, NUL-terminated */
	size_t len, cap;
	int overflow;
	char err[1024];
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct ana_ch *ana_ch_new(const char *url)
{
	struct ana_ch *ch;

	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		errno = EINVAL;
		return NULL;
	}
	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK) {
		errno = ENOMEM;
		return NULL;
	}
	if (!(ch = calloc(1, sizeof(*ch))))
		return NULL;
	if (!(ch->url = strdup(url)) || !(ch->name = strdup(url)) || !(ch->curl = curl_easy_init())) {
		ana_ch_free(ch);
		errno = ENOMEM;
		return NULL;
	}
	/* messages name the URL without user:password@ and ?parameters */
	char *host = strstr(ch->name, "://") + 3, *at = NULL;
	for (char *c = host; *c && *c != '/' && *c != '?'; c++)
		if (*c == '@')
			at = c;
	if (at)
		memmove(host, at + 1, strlen(at + 1) + 1);
	size_t n = strcspn(ch->name, "?");
	while (n > 8 && ch->name[n - 1] == '/')
		n--;
	ch->name[n] = '\0';
	return ch;
}

void ana_ch_free(struct ana_ch *ch)
{
	if (!ch)
		return;
	if (ch->curl)
		curl_easy_cleanup(ch->curl);
	free(ch->url);
	free(ch->name);
	free(ch->reply);
	free(ch);
}

const char *ana_ch_name(const struct ana_ch *ch)
{
	return ch->name;
}

const char *ana_ch_errmsg(const struct ana_ch *ch)
{
	return ch->err;
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct ana_ch *ch = ctx;
	size_t n = size * nmemb;

	if (ch->len + n + 1 > CH_REPLY_MAX || prec_grow(&ch->reply, &ch->cap, ch->len + n + 1, 1)) {
		ch->overflow = 1;
		return 0;   /* curl stops with CURLE_WRITE_ERROR */
	}
	memcpy(ch->reply + ch->len, p, n);
	ch->len += n;
	ch->reply[ch->len] = '\0';
	return n;
}

/* POST body to the URL with extra parameters (already escaped). */
static int post(struct ana_ch *ch, const char *params, const void *body, size_t len)
{
	char *full;
	size_t ulen = strlen(ch->url), plen = strlen(params);
	int has_q = strchr(ch->url, '?') != NULL;
	int slash = !has_q && ulen && ch->url[ulen - 1] != '/';

	ch->err[0] = '\0';
	ch->len = 0;
	ch->overflow = 0;
	if (prec_grow(&ch->reply, &ch->cap, 1, 1))
		return -ENOMEM;
	ch->reply[0] = '\0';
	if (!(full = malloc(ulen + plen + 3)))
		return -ENOMEM;
	sprintf(full, "%s%s%s%s", ch->url, slash ? "/" : "", has_q ? "&" : "?", params);

	CURL *c = ch->curl;
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, full);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, ch);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	/* no "Expect: 100-continue" round trip before each insert */
	struct curl_slist *hdr = curl_slist_append(NULL, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hdr);
	free(full);

	if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && ch->overflow)) {
		snprintf(ch->err, sizeof(ch->err),
			 "cannot reach ClickHouse at %s: %s (is clickhouse-server running, "
			 "and is the port its http_port?)", ch->name, curl_easy_strerror(rc));
		return -ECONNREFUSED;
	}
	if (status != 200) {
		char msg[768];
		int code;
		ana_chreply_error(ch->reply, ch->len, msg, sizeof(msg), &code);
		if (code >= 0)
			snprintf(ch->err, sizeof(ch->err), "ClickHouse at %s: error %d: %s",
				 ch->name, code, msg);
		else
			snprintf(ch->err, sizeof(ch->err), "ClickHouse at %s: HTTP %ld: %s",
				 ch->name, status, msg[0] ? msg : "(no message)");
		return -EIO;
	}
	if (ch->overflow) {
		snprintf(ch->err, sizeof(ch->err),
			 "ClickHouse at %s: a reply larger than %u MiB", ch->name, CH_REPLY_MAX >> 20);
		return -EIO;
	}
	return 0;
}

int ana_ch_query(struct ana_ch *ch, const char *sql, const char **reply, size_t *len)
{
	int ret = post(ch, "", sql, strlen(sql));

	if (reply)
		*reply = ch->reply;
	if (len)
		*len = ret ? 0 : ch->len;
	return ret;
}

int ana_ch_insert(struct ana_ch *ch, const char *sql, const char *query_id, const void *data,
		  size_t len)
{
	char *q = curl_easy_escape(ch->curl, sql, 0);
	char *id = query_id ? curl_easy_escape(ch->curl, query_id, 0) : NULL, *params = NULL;
	int ret = -ENOMEM;

	if (!q || (query_id && !id))
		goto out;
	/* A file's rows of one table are one block, inserted whole or not at
	 * all (load.h relies on it); max_insert_block_size is the rows
	 * ClickHouse parses into one block. */
	static const char fmt[] = "insert_distributed_sync=1&max_insert_block_size=100000000"
				  "%s%s&query=%s";
	if (!(params = malloc(sizeof(fmt) + strlen(q) + (id ? strlen(id) + 10 : 0))))
		goto out;
	sprintf(params, fmt, id ? "&query_id=" : "", id ? id : "", q);
	ret = post(ch, params, data, len);
out:
	curl_free(q);
	curl_free(id);
	free(params);
	return ret;
}
