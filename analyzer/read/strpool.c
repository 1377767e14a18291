/*
 * strpool.c - open addressing over string pointers; the bytes live in
 * chunks that never move, so returned pointers are stable.
 */
#include "analyzer/read/strpool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/hashmap.h"

struct ana_str_chunk {
	struct ana_str_chunk *next;
	size_t used, cap;
	char data[];
};

void ana_strpool_init(struct ana_strpool *p)
{
	memset(p, 0, sizeof(*p));
}

void ana_strpool_release(struct ana_strpool *p)
{
	struct ana_str_chunk *c = p->chunks;
	while (c) {
		struct ana_str_chunk *n = c->next;
		free(c);
		c = n;
	}
	free(p->slots);
	memset(p, 0, sizeof(*p));
}

static char *alloc_bytes(struct ana_strpool *p, size_t n)
{
	struct ana_str_chunk *c = p->chunks;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		c->next = p->chunks;
		p->chunks = c;
	}
	char *r = c->data + c->used;
	c->used += n;
	return r;
}

static int grow(struct ana_strpool *p)
{
	size_t n = p->nslots ? p->nslots * 2 : 256;
	struct ana_str_slot *s = calloc(n, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < p->nslots; i++) {
		if (!p->slots[i].s)
			continue;
		size_t j = p->slots[i].h & (n - 1);
		while (s[j].s)
			j = (j + 1) & (n - 1);
		s[j] = p->slots[i];
	}
	free(p->slots);
	p->slots = s;
	p->nslots = n;
	return 0;
}

const char *ana_strpool_intern_n(struct ana_strpool *p, const char *s, size_t len)
{
	if ((p->count + 1) * 2 > p->nslots && grow(p))
		return NULL;
	uint64_t h = prec_hash_bytes(s, len);
	size_t j = h & (p->nslots - 1);
	while (p->slots[j].s) {
		if (p->slots[j].h == h && p->slots[j].len == len &&
		    !memcmp(p->slots[j].s, s, len))
			return p->slots[j].s;
		j = (j + 1) & (p->nslots - 1);
	}
	char *d = alloc_bytes(p, len + 1);
	if (!d)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	p->slots[j].s = d;
	p->slots[j].h = h;
	p->slots[j].len = len;
	p->count++;
	return d;
}

const char *ana_strpool_intern(struct ana_strpool *p, const char *s)
{
	return ana_strpool_intern_n(p, s, strlen(s));
}

int ana_strpool_intern_in(struct ana_strpool *p, const char **s)
{
	if (*s && !(*s = ana_strpool_intern(p, *s)))
		return -ENOMEM;
	return 0;
}
