/*
 * chreply.c - see chreply.h.
 */
#include "analyzer/load/chreply.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/grow.h"

/* The first occurrence of the n bytes of pat in [p, p + len), or NULL. */
static const char *find(const char *p, size_t len, const char *pat)
{
	size_t n = strlen(pat);

	for (size_t i = 0; n <= len && i <= len - n; i++)
		if (!memcmp(p + i, pat, n))
			return p + i;
	return NULL;
}

static int parse_code(const char *p, size_t len)
{
	int code = 0;
	size_t i = 0;

	while (i < len && p[i] >= '0' && p[i] <= '9' && code < 100000)
		code = code * 10 + (p[i++] - '0');
	return i ? code : -1;
}

size_t ana_chreply_error(const char *body, size_t len, char *msg, size_t msgsz, int *code)
{
	const char *p = body, *end = body + len, *m;
	static const char exc[] = "DB::Exception: ";

	if (code)
		*code = -1;
	if (len >= 6 && !memcmp(body, "Code: ", 6) && code)
		*code = parse_code(body + 6, len - 6);
	if ((m = find(body, len, exc))) {
		p = m + sizeof(exc) - 1;
		/* the tail each version appends after the message */
		const char *t;
		if ((t = find(p, (size_t)(end - p), ", e.what() = ")))
			end = t;
		else if ((t = find(p, (size_t)(end - p), ". (")) && t > p)
			end = t;
	}
	while (end > p && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	size_t n = 0;
	for (; p < end && n + 1 < msgsz; p++)
		msg[n++] = (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p;
	msg[n] = '\0';
	return n;
}

int ana_chreply_ints(const char *body, size_t len, int64_t **vals, size_t *n)
{
	int64_t *v = NULL;
	size_t cap = 0, cnt = 0, i = 0;

	*vals = NULL;
	*n = 0;
	while (i < len) {
		int neg = 0;
		uint64_t u = 0;
		size_t digits = 0;

		if (body[i] == '-') {
			neg = 1;
			i++;
		}
		for (; i < len && body[i] >= '0' && body[i] <= '9'; i++, digits++) {
			unsigned d = (unsigned)(body[i] - '0');
			if (u > (UINT64_MAX - d) / 10)
				goto bad;
			u = u * 10 + d;
		}
		if (!digits || i >= len || body[i] != '\n')
			goto bad;
		i++;
		if (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX)
			goto bad;
		if (prec_grow(&v, &cap, cnt + 1, sizeof(*v))) {
			free(v);
			return -ENOMEM;
		}
		/* -u for u = 2^63 is INT64_MIN: through unsigned, no overflow */
		v[cnt++] = neg ? (int64_t)(0 - u) : (int64_t)u;
	}
	*vals = v;
	*n = cnt;
	return 0;
bad:
	free(v);
	return -EBADMSG;
}
