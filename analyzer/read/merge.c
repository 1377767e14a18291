/*
 * merge.c - k-way merge of time-sorted frames with bounded loading.
 */
#include "analyzer/read/merge.h"
#include "format/base/grow.h"
#include "format/base/hashmap.h"
#include "analyzer/read/trace.h"

#include <errno.h>

#include <stdlib.h>
#include <string.h>

/* One run of a loaded frame (frames.h: find_runs): pkts[pos .. end). */
struct cursor {
	struct ana_loaded *lf;
	size_t pos, end;
};

struct ana_merge {
	struct prec_frame_info *list;   /* sorted by (t_min, seq) */
	size_t n, loaded;
	struct ana_frames *af;
	struct cursor *heap;
	size_t nheap, capheap;
	/* Smallest head time among the root's children (the second
	 * smallest cursor): while the root's next packet is strictly
	 * earlier, it stays the root and the heap needs no sifting. */
	uint64_t limit;
	struct ana_loaded *pending_release;
	void (*on_damage)(void *ctx, const struct prec_frame_info *fi, int err);
	void *ctx;
};

static int cmp_info(const void *a, const void *b)
{
	const struct prec_frame_info *x = a, *y = b;
	if (x->t_min != y->t_min)
		return x->t_min < y->t_min ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Heap order: (time, stream, seq, pos). */
static int before(const struct cursor *a, const struct cursor *b)
{
	const struct prec_packet *p = &a->lf->pkts[a->pos];
	const struct prec_packet *q = &b->lf->pkts[b->pos];
	if (p->time != q->time)
		return p->time < q->time;
	if (p->stream != q->stream)
		return p->stream < q->stream;
	if (a->lf->fi->seq != b->lf->fi->seq)
		return a->lf->fi->seq < b->lf->fi->seq;
	if (a->lf->idx != b->lf->idx)
		return a->lf->idx < b->lf->idx;
	return a->pos < b->pos;
}

static void sift_down(struct ana_merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, s = i;
		if (l < m->nheap && before(&m->heap[l], &m->heap[s]))
			s = l;
		if (r < m->nheap && before(&m->heap[r], &m->heap[s]))
			s = r;
		if (s == i)
			return;
		struct cursor t = m->heap[i];
		m->heap[i] = m->heap[s];
		m->heap[s] = t;
		i = s;
	}
}

static uint64_t head_time(const struct cursor *c)
{
	return c->lf->pkts[c->pos].time;
}

static void update_limit(struct ana_merge *m)
{
	m->limit = UINT64_MAX;
	for (size_t i = 1; i <= 2 && i < m->nheap; i++)
		if (head_time(&m->heap[i]) < m->limit)
			m->limit = head_time(&m->heap[i]);
}

/* Every run of lf joins the heap; lf is released once all are used up. */
static int push(struct ana_merge *m, struct ana_loaded *lf)
{
	if (prec_grow(&m->heap, &m->capheap, m->nheap + lf->nruns, sizeof(*m->heap)))
		return -ENOMEM;
	lf->live = 0;
	for (size_t k = 0; k < lf->nruns; k++) {
		if (lf->runs[k] == lf->runs[k + 1])
			continue;
		size_t i = m->nheap++;
		m->heap[i].lf = lf;
		m->heap[i].pos = lf->runs[k];
		m->heap[i].end = lf->runs[k + 1];
		lf->live++;
		while (i && before(&m->heap[i], &m->heap[(i - 1) / 2])) {
			struct cursor t = m->heap[i];
			m->heap[i] = m->heap[(i - 1) / 2];
			m->heap[(i - 1) / 2] = t;
			i = (i - 1) / 2;
		}
	}
	update_limit(m);
	return 0;
}

struct ana_merge *ana_merge_new(struct prec_reader *r,
				const struct prec_frame_info *list, size_t n,
				const struct ana_frames_opts *opts)
{
	struct ana_merge *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->list = malloc((n ? n : 1) * sizeof(*list));
	if (!m->list)
		goto err_free;
	if (n)
		memcpy(m->list, list, n * sizeof(*list));
	prec_sort(m->list, n, sizeof(*list), cmp_info);
	m->n = n;
	struct ana_frames_opts o = { 0 };
	if (opts)
		o = *opts;
	o.find_runs = 1;
	m->af = ana_frames_new(r, m->list, n, &o);
	if (!m->af)
		goto err_list;
	return m;

err_list:
	free(m->list);
err_free:
	free(m);
	errno = ENOMEM;
	return NULL;
}

void ana_merge_on_damage(struct ana_merge *m,
			 void (*cb)(void *ctx, const struct prec_frame_info *fi, int err),
			 void *ctx)
{
	m->on_damage = cb;
	m->ctx = ctx;
}

void ana_merge_progress(const struct ana_merge *m, size_t *done, size_t *total)
{
	*done = m->loaded;
	*total = m->n;
}

int ana_merge_next(struct ana_merge *m, const struct prec_packet **p)
{
	*p = NULL;
	if (m->pending_release) {
		ana_frames_release(m->af, m->pending_release);
		m->pending_release = NULL;
	}
	for (;;) {
		if (m->nheap) {
			struct cursor *top = &m->heap[0];
			uint64_t t = top->lf->pkts[top->pos].time;
			/* Frames starting at or before t must join first. */
			if (m->loaded >= m->n || t < m->list[m->loaded].t_min) {
				*p = &top->lf->pkts[top->pos];
				if (++top->pos == top->end) {
					if (!--top->lf->live)
						m->pending_release = top->lf;
					m->heap[0] = m->heap[--m->nheap];
					if (m->nheap)
						sift_down(m, 0);
					update_limit(m);
				} else if (head_time(top) >= m->limit) {
					/* Equal times need the tie-break order. */
					sift_down(m, 0);
					update_limit(m);
				}
				return 1;
			}
		}
		if (m->loaded >= m->n)
			return 0;
		struct ana_loaded *lf;
		int ret = ana_frames_next(m->af, &lf);
		if (ret < 0)
			return ret;
		if (ret == 0)
			return 0;
		m->loaded++;
		if (lf->err && m->on_damage)
			m->on_damage(m->ctx, lf->fi, lf->err);
		if (!lf->npkts) {
			ana_frames_release(m->af, lf);
			continue;
		}
		ret = push(m, lf);
		if (ret < 0) {
			ana_frames_release(m->af, lf);
			return ret;
		}
	}
}

size_t ana_merge_buffers(struct ana_merge *m)
{
	return ana_frames_buffers(m->af);
}

void ana_merge_free(struct ana_merge *m)
{
	if (!m)
		return;
	/* Frames still in the heap belong to af, which frees every buffer. */
	ana_frames_free(m->af);
	free(m->heap);
	free(m->list);
	free(m);
}

static void note_damage(void *ctx, const struct prec_frame_info *fi, int err)
{
	ana_trace_note_damage(ctx, fi->offset, err);
}

struct ana_merge *ana_merge_trace(struct ana_trace *s, const struct prec_frame_info *list,
				  size_t n, const struct ana_frames_opts *opts)
{
	struct ana_merge *m = ana_merge_new(s->reader, list, n, opts);
	if (m)
		ana_merge_on_damage(m, note_damage, s);
	return m;
}
