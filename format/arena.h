/*
 * arena.h - bump allocator for decoded packets (internal to format/).
 *
 * protobuf-c allocates every submessage, string and repeated field of an
 * unpacked Packet separately. A frame holds thousands of packets that all
 * die together when the next frame is loaded, so the frame hands
 * protobuf-c this allocator: alloc bumps a pointer, free does nothing, and
 * prec_arena_reset() recycles everything at once.
 *
 * Call order: prec_arena_init -> (alloc ...)* -> prec_arena_reset -> ... ->
 * prec_arena_release. Memory stays allocated across resets: one chunk is
 * kept, sized to what the reset's round handed out when it took several,
 * so steady-state decoding does no malloc at all.
 */
#ifndef PREC_ARENA_H
#define PREC_ARENA_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

struct prec_arena_chunk;

struct prec_arena {
	struct prec_arena_chunk *head;   /* current chunk, older ones linked */
	unsigned char *base;             /* head's bytes, NULL without head */
	size_t cap;                      /* head's usable bytes, 0 without head */
	size_t used;                     /* bytes used in head */
	size_t total;                    /* bytes handed out since the reset */
	size_t limit;                    /* refuse to grow beyond this; 0 = none */
	ProtobufCAllocator pc;           /* allocator_data = this arena */
};

void prec_arena_init(struct prec_arena *a, size_t limit);
void prec_arena_release(struct prec_arena *a);
void prec_arena_reset(struct prec_arena *a);
/* 16-byte aligned; NULL when out of memory or past the limit. */
void *prec_arena_alloc_slow(struct prec_arena *a, size_t n);
static inline void *prec_arena_alloc(struct prec_arena *a, size_t n)
{
	/* Inline: a small block that fits the head chunk and the limit (one
	 * per decoded packet); anything else, including n = 0, takes the
	 * out-of-line path, which gives the same result. */
	size_t r = (n + 15) & ~(size_t)15;
	if (n - 1 < 4096 && a->cap - a->used >= r &&
	    (!a->limit || a->total + r <= a->limit)) {
		void *p = a->base + a->used;
		a->used += r;
		a->total += r;
		return p;
	}
	return prec_arena_alloc_slow(a, n);
}
/* Gives back the tail of the LAST allocation p, keeping its first n bytes
 * (for arrays allocated at an upper bound and filled to their real size). */
void prec_arena_shrink_last(struct prec_arena *a, void *p, size_t n);

#endif
