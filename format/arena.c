/*
 * arena.c - bump allocator for decoded packets (see arena.h).
 */
#include <stdint.h>
#include <stdlib.h>

#include "format/arena.h"

#define ALIGN 16u
#define MIN_CHUNK (256u * 1024u)

struct prec_arena_chunk {
	struct prec_arena_chunk *next;
	size_t size;                         /* usable bytes in data */
	_Alignas(16) unsigned char data[];
};

static void *pc_alloc(void *data, size_t n)
{
	return prec_arena_alloc(data, n);
}

static void pc_free(void *data, void *p)
{
	(void)data;
	(void)p;   /* released by prec_arena_reset() */
}

void prec_arena_init(struct prec_arena *a, size_t limit)
{
	a->head = NULL;
	a->base = NULL;
	a->cap = 0;
	a->used = 0;
	a->total = 0;
	a->limit = limit;
	a->pc.alloc = pc_alloc;
	a->pc.free = pc_free;
	a->pc.allocator_data = a;
}

void prec_arena_release(struct prec_arena *a)
{
	struct prec_arena_chunk *c = a->head;

	while (c) {
		struct prec_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
	a->base = NULL;
	a->cap = 0;
	a->used = a->total = 0;
}

void prec_arena_reset(struct prec_arena *a)
{
	/* One chunk was enough: keep it. Several (the frame outgrew the
	 * head, which then doubled until it fitted): replace them by one
	 * chunk of what they handed out plus an eighth, so the next frame of
	 * the same size fits without growing, and the memory held is about
	 * what a frame needs, not the doubling's sum (each chunk is touched
	 * page by page the first time: a decoded frame's page faults were a
	 * fifth of a switch-heavy pass). Without memory the arena starts
	 * empty and grows again on the next allocation. */
	if (a->head && a->head->next) {
		size_t want = a->total + a->total / 8;
		want = (want + MIN_CHUNK - 1) / MIN_CHUNK * MIN_CHUNK;
		if (a->limit && want > a->limit)
			want = a->limit;
		prec_arena_release(a);
		struct prec_arena_chunk *c = malloc(sizeof(*c) + want);
		if (c) {
			c->size = want;
			c->next = NULL;
			a->head = c;
			a->base = c->data;
			a->cap = want;
		}
	}
	a->used = 0;
	a->total = 0;
}

void *prec_arena_alloc_slow(struct prec_arena *a, size_t n)
{
	void *p;

	if (n > SIZE_MAX / 2)
		return NULL;
	n = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	if (n == 0)
		n = ALIGN;
	if (a->limit && a->total + n > a->limit)
		return NULL;
	if (!a->head || a->head->size - a->used < n) {
		size_t size = a->head ? a->head->size * 2 : MIN_CHUNK;
		if (size < n)
			size = n;
		struct prec_arena_chunk *c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->next = a->head;
		a->head = c;
		a->base = c->data;
		a->cap = size;
		a->used = 0;
	}
	p = a->head->data + a->used;
	a->used += n;
	a->total += n;
	return p;
}

void prec_arena_shrink_last(struct prec_arena *a, void *p, size_t n)
{
	size_t off, keep;

	if (!a->head || !p)
		return;
	off = (size_t)((unsigned char *)p - a->head->data);
	if (off > a->used)
		return;   /* not in the head chunk: keep it whole */
	keep = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	if (keep == 0)
		keep = ALIGN;
	if (off + keep >= a->used)
		return;
	a->total -= a->used - (off + keep);
	a->used = off + keep;
}
