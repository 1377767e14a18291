/*
 * timeline.c - lanes of exact spans and downsampled buckets.
 *
 * Lanes are kept sorted by CPU (few of them: binary search, insertion by
 * shifting), so they are always ready to read in order.
 */
#include "analyzer/render/timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct ana_timeline {
	uint64_t t0, t1, bw;
	size_t nbuckets, max_lanes;
	struct ana_tl_lane *lanes;
	size_t nlanes, cap;
	uint64_t dropped;
};

struct ana_timeline *ana_timeline_new(uint64_t t0, uint64_t t1, size_t nbuckets,
				      size_t max_lanes)
{
	if (!nbuckets || nbuckets > (1u << 24)) {
		errno = EINVAL;
		return NULL;
	}
	struct ana_timeline *tl = calloc(1, sizeof(*tl));
	if (!tl)
		return NULL;
	tl->t0 = t0;
	tl->t1 = t1 < t0 ? t0 : t1;
	tl->nbuckets = nbuckets;
	tl->max_lanes = max_lanes;
	/* nbuckets x bw > t1 - t0: every instant of the window has a bucket */
	tl->bw = (tl->t1 - t0) / nbuckets + 1;
	return tl;
}

void ana_timeline_free(struct ana_timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->nlanes; i++) {
		free(tl->lanes[i].spans);
		free(tl->lanes[i].buckets);
	}
	free(tl->lanes);
	free(tl);
}

/* The lane of cpu, created when create; NULL when absent, full or out of
 * memory (*err set then). */
static struct ana_tl_lane *lane_of(struct ana_timeline *tl, uint32_t cpu, int *err)
{
	size_t lo = 0, hi = tl->nlanes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tl->lanes[mid].cpu < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < tl->nlanes && tl->lanes[lo].cpu == cpu)
		return &tl->lanes[lo];
	if (tl->nlanes >= tl->max_lanes)
		return NULL;
	if (tl->nlanes == tl->cap) {
		size_t cap = tl->cap ? tl->cap * 2 : 8;
		struct ana_tl_lane *l = realloc(tl->lanes, cap * sizeof(*l));
		if (!l) {
			*err = -ENOMEM;
			return NULL;
		}
		tl->lanes = l;
		tl->cap = cap;
	}
	memmove(&tl->lanes[lo + 1], &tl->lanes[lo], (tl->nlanes - lo) * sizeof(*tl->lanes));
	memset(&tl->lanes[lo], 0, sizeof(*tl->lanes));
	tl->lanes[lo].cpu = cpu;
	tl->nlanes++;
	return &tl->lanes[lo];
}

int ana_timeline_lane_add(struct ana_timeline *tl, uint32_t cpu)
{
	int err = 0;
	if (!lane_of(tl, cpu, &err) && err)
		return err;
	return 0;
}

static void bucket_add(struct ana_tl_bucket *b, uint32_t task, uint64_t ns)
{
	b->busy += ns;
	b->n++;
	for (uint32_t i = 0; i < b->nslots; i++)
		if (b->task[i] == task) {
			b->ns[i] += ns;
			return;
		}
	if (b->nslots < ANA_TL_SLOTS) {
		b->task[b->nslots] = task;
		b->ns[b->nslots++] = ns;
	}
}

int ana_timeline_add(struct ana_timeline *tl, uint32_t cpu, uint32_t task,
		     uint64_t start, uint64_t end)
{
	if (start < tl->t0)
		start = tl->t0;
	if (end > tl->t1)
		end = tl->t1;
	if (end <= start)
		return 0;
	int err = 0;
	struct ana_tl_lane *l = lane_of(tl, cpu, &err);
	if (!l) {
		if (err)
			return err;
		tl->dropped++;
		return 0;
	}
	uint64_t d = end - start;
	/* Spans never overlap on a sane CPU, so at most nbuckets of them are
	 * a bucket long; records lost in a trace can make them overlap, and
	 * the cap keeps even that bounded (the rest go to buckets). */
	if (d >= tl->bw && l->nspans < 2 * tl->nbuckets + 16) {
		if (l->nspans == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 64;
			struct ana_tl_span *s = realloc(l->spans, cap * sizeof(*s));
			if (!s)
				return -ENOMEM;
			l->spans = s;
			l->cap = cap;
		}
		l->spans[l->nspans++] = (struct ana_tl_span){ start, end, task };
	} else {
		if (!l->buckets && !(l->buckets = calloc(tl->nbuckets, sizeof(*l->buckets))))
			return -ENOMEM;
		uint64_t a = start;
		size_t i = (size_t)((a - tl->t0) / tl->bw);
		while (a < end && i < tl->nbuckets) {
			uint64_t off = (uint64_t)(i + 1) * tl->bw;
			uint64_t edge = off > UINT64_MAX - tl->t0 ? UINT64_MAX : tl->t0 + off;
			uint64_t e = end < edge ? end : edge;
			bucket_add(&l->buckets[i], task, e - a);
			a = e;
			i++;
		}
	}
	l->busy += d;
	l->intervals++;
	return 0;
}

size_t ana_timeline_lanes(struct ana_timeline *tl)
{
	return tl->nlanes;
}

const struct ana_tl_lane *ana_timeline_lane(struct ana_timeline *tl, size_t i)
{
	return i < tl->nlanes ? &tl->lanes[i] : NULL;
}

uint64_t ana_timeline_t0(const struct ana_timeline *tl)
{
	return tl->t0;
}

uint64_t ana_timeline_t1(const struct ana_timeline *tl)
{
	return tl->t1;
}

uint64_t ana_timeline_bucket_ns(const struct ana_timeline *tl)
{
	return tl->bw;
}

size_t ana_timeline_nbuckets(const struct ana_timeline *tl)
{
	return tl->nbuckets;
}

uint64_t ana_timeline_dropped(const struct ana_timeline *tl)
{
	return tl->dropped;
}

int ana_tl_bucket_top(const struct ana_tl_bucket *b)
{
	int top = -1;
	for (uint32_t i = 0; i < b->nslots; i++)
		if (top < 0 || b->ns[i] > b->ns[top])
			top = (int)i;
	return top;
}
