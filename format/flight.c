/*
 * flight.c - the flight-recorder sink; see flight.h.
 *
 * Records are copied out of the byte stream as they complete (the writer
 * writes one record per call, so usually straight from its buffer) into
 * three lists by phase. Only the window list ever loses records, from its
 * head (the oldest).
 */
#include "format/flight.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "format/error.h"
#include "format/index.h"
#include "format/record.h"

struct frec {
	struct frec *next;
	enum prec_record_kind kind;
	struct prec_frame_info info;   /* FRAME: offsets relative to the record */
	size_t len;
	unsigned char bytes[];
};

struct flist {
	struct frec *head, *tail;
	size_t n;
};

enum phase { PREAMBLE, WINDOW, END };

struct flight {
	uint64_t max;
	enum phase phase;
	struct frec *header;
	struct flist part[3];          /* by phase */
	unsigned char *pend;           /* an incomplete record's first bytes */
	size_t plen, pcap;
	int err;                       /* sticky */
	struct prec_flight_stats st;
};

static const struct prec_sink_ops flight_ops;

static struct flight *flight_of(const struct prec_sink *s)
{
	return s && s->ops == &flight_ops ? s->priv : NULL;
}

static void flist_push(struct flist *l, struct frec *r)
{
	r->next = NULL;
	if (l->tail)
		l->tail->next = r;
	else
		l->head = r;
	l->tail = r;
	l->n++;
}

static void flist_free(struct flist *l)
{
	struct frec *r = l->head, *next;

	for (; r; r = next) {
		next = r->next;
		free(r);
	}
	memset(l, 0, sizeof(*l));
}

/* Drops the oldest window frames while over budget, keeping the newest. */
static void trim(struct flight *f)
{
	struct flist *w = &f->part[WINDOW];

	while (f->st.held_bytes > f->max && w->n > 1) {
		struct frec *r = w->head;

		w->head = r->next;
		w->n--;
		f->st.held_bytes -= r->len;
		if (r->kind == PREC_RECORD_FRAME) {
			const struct prec_frame_info *fi = &r->info;

			f->st.frames--;
			f->st.dropped_frames++;
			f->st.dropped_packets += fi->packets;
			if (fi->t_min && (!f->st.dropped_t_min || fi->t_min < f->st.dropped_t_min))
				f->st.dropped_t_min = fi->t_min;
			if (fi->t_max > f->st.dropped_t_max)
				f->st.dropped_t_max = fi->t_max;
		}
		f->st.dropped_bytes += r->len;
		free(r);
	}
	f->st.window_t_min = w->head && w->head->kind == PREC_RECORD_FRAME ?
			     w->head->info.t_min : 0;
}

/* One complete record of len bytes. */
static int take(struct flight *f, const unsigned char *b, const struct prec_record *rec)
{
	struct frec *r;

	if (rec->kind == PREC_RECORD_INDEX)
		return 0;   /* rebuilt by save() for the saved file's offsets */
	if (rec->kind == PREC_RECORD_HEADER && f->header)
		return PREC_E_CORRUPT;   /* one stream per sink */
	if (rec->kind != PREC_RECORD_HEADER && !f->header)
		return PREC_E_MAGIC;
	r = malloc(sizeof(*r) + rec->len);
	if (!r)
		return -ENOMEM;
	r->kind = rec->kind;
	r->info = rec->info;
	r->len = rec->len;
	memcpy(r->bytes, b, rec->len);
	f->st.held_bytes += rec->len;
	if (rec->kind == PREC_RECORD_HEADER) {
		r->next = NULL;
		f->header = r;
		f->st.preamble_bytes += rec->len;
		return 0;
	}
	if (rec->kind == PREC_RECORD_FRAME)
		f->st.frames++;
	if (f->phase == PREAMBLE)
		f->st.preamble_bytes += rec->len;
	flist_push(&f->part[f->phase], r);
	if (f->phase == WINDOW)
		trim(f);
	return 0;
}

/* Takes the complete records at the start of b; returns the bytes used
 * (>= 0) or an error. */
static long long take_all(struct flight *f, const unsigned char *b, size_t n)
{
	struct prec_record rec;
	size_t pos = 0;
	int ret;

	for (;;) {
		/* no size cap: the writer's index of a long output may be large */
		ret = prec_record_scan(b + pos, n - pos, SIZE_MAX, &rec);
		if (ret < 0)
			return ret;
		if (ret == 0)
			return (long long)pos;
		ret = take(f, b + pos, &rec);
		if (ret < 0)
			return ret;
		pos += rec.len;
	}
}

static int pend_add(struct flight *f, const void *b, size_t n)
{
	if (f->pcap - f->plen < n) {
		size_t cap = f->pcap ? f->pcap : 4096;
		unsigned char *nb;

		while (cap - f->plen < n) {
			if (cap > SIZE_MAX / 2)
				return -ENOMEM;
			cap *= 2;
		}
		nb = realloc(f->pend, cap);
		if (!nb)
			return -ENOMEM;
		f->pend = nb;
		f->pcap = cap;
	}
	memcpy(f->pend + f->plen, b, n);
	f->plen += n;
	return 0;
}

static int flight_write(struct prec_sink *sink, const void *buf, size_t n)
{
	struct flight *f = sink->priv;
	long long used;
	int ret;

	if (f->err)
		return f->err;
	if (!f->plen) {
		/* the usual case: whole records straight from the writer */
		used = take_all(f, buf, n);
		if (used >= 0 && (size_t)used < n)
			used = pend_add(f, (const unsigned char *)buf + used, n - (size_t)used);
		ret = used < 0 ? (int)used : 0;
	} else {
		ret = pend_add(f, buf, n);
		if (!ret) {
			used = take_all(f, f->pend, f->plen);
			if (used < 0) {
				ret = (int)used;
			} else {
				memmove(f->pend, f->pend + used, f->plen - (size_t)used);
				f->plen -= (size_t)used;
			}
		}
	}
	if (ret < 0)
		f->err = ret;
	return ret;
}

static void flight_destroy(struct prec_sink *sink)
{
	struct flight *f = sink->priv;

	if (!f)
		return;
	free(f->header);
	for (int i = 0; i < 3; i++)
		flist_free(&f->part[i]);
	free(f->pend);
	free(f);
}

static const struct prec_sink_ops flight_ops = {
	.write = flight_write, .sync = NULL, .destroy = flight_destroy,
};

struct prec_sink *prec_flight_new(uint64_t max_bytes)
{
	struct prec_sink *sink = calloc(1, sizeof(*sink));
	struct flight *f = calloc(1, sizeof(*f));

	if (!sink || !f) {
		free(sink);
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	f->max = max_bytes;
	f->st.max_bytes = max_bytes;
	sink->ops = &flight_ops;
	sink->priv = f;
	return sink;
}

int prec_flight_arm(struct prec_sink *s)
{
	struct flight *f = flight_of(s);

	if (!f)
		return -EINVAL;
	if (f->phase == PREAMBLE)
		f->phase = WINDOW;
	return 0;
}

int prec_flight_seal(struct prec_sink *s)
{
	struct flight *f = flight_of(s);

	if (!f)
		return -EINVAL;
	f->phase = END;
	return 0;
}

int prec_flight_stats(const struct prec_sink *s, struct prec_flight_stats *st)
{
	const struct flight *f = flight_of(s);

	if (!f)
		return -EINVAL;
	*st = f->st;
	return 0;
}

int prec_flight_save(const struct prec_sink *s, struct prec_sink *out)
{
	const struct flight *f = flight_of(s);
	struct prec_frame_info *idx;
	uint64_t off = 0;
	uint8_t *ib;
	size_t n = 0, ilen;
	int ret;

	if (!f || !f->header)
		return -EINVAL;
	idx = calloc(f->st.frames + 1, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	ret = prec_sink_write(out, f->header->bytes, f->header->len);
	off += f->header->len;
	for (int i = 0; i < 3 && !ret; i++) {
		for (const struct frec *r = f->part[i].head; r && !ret; r = r->next) {
			if (r->kind == PREC_RECORD_FRAME) {
				idx[n] = r->info;
				idx[n].offset = off;
				idx[n].data_offset = off + r->info.data_offset;
				n++;
			}
			ret = prec_sink_write(out, r->bytes, r->len);
			off += r->len;
		}
	}
	if (!ret) {
		ret = prec_index_encode(idx, n, off, &ib, &ilen);
		if (!ret) {
			ret = prec_sink_write(out, ib, ilen);
			free(ib);
		}
	}
	free(idx);
	if (!ret)
		ret = prec_sink_sync(out);
	return ret;
}
