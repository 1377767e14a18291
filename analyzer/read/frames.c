/*
 * frames.c - worker pool with ordered delivery.
 *
 * State under one mutex: `claim` is the next list index a worker (or the
 * consumer) may take, `deliver` the next index the consumer waits for,
 * `slots[i]` the loaded frame for index i once it is loaded. A worker may
 * claim i only while i < deliver + lookahead, which bounds memory; the
 * consumer takes slots[deliver] when ready, or claims and loads it itself
 * when claim == deliver. Wake-ups are sent only to threads that sleep and
 * only when they can proceed (see frames.h). Frame buffers are recycled
 * through a free list so decoded-packet arrays are reused.
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/read/frames.h"
#include "format/base/grow.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ana_frames {
	struct prec_reader *r;
	const struct prec_frame_info *list;
	size_t n;
	struct ana_frames_opts o;
	size_t low;               /* wake workers when this few are ahead */

	pthread_mutex_t mu;
	pthread_cond_t cv_work;   /* workers wait for room */
	pthread_cond_t cv_ready;  /* consumer waits for a slot */
	struct ana_loaded **slots;   /* n entries; set when loaded */
	size_t claim, deliver;
	int workers_waiting;      /* sleeping on cv_work */
	int consumer_waiting;     /* sleeping on cv_ready for slots[deliver] */
	int stop;
	int oom;
	struct ana_loaded *free_list;
	struct ana_loaded **all;     /* every buffer ever made, for free */
	size_t nall, capall;
	pthread_t *threads;
	int nthreads;
};

int ana_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)(n > 256 ? 256 : n) : 1;
}

/* The frame's runs of packets in time order: a stream's frame holds each
 * CPU's batch of records as the recorder drained it, each batch in time
 * order, so a frame is a few long runs. The merge (merge.c) takes each run
 * as a cursor of its own: no sort, no copy of the packets. Run k is
 * [runs[k], runs[k + 1]); runs[nruns] = npkts. */
static int find_runs(struct ana_loaded *lf)
{
	const struct prec_packet *a = lf->pkts;
	size_t n = lf->npkts;
	lf->nruns = 0;
	if (prec_grow(&lf->runs, &lf->runcap, 2, sizeof(*lf->runs)))
		return -ENOMEM;
	lf->runs[lf->nruns++] = 0;
	for (size_t i = 1; i < n; i++) {
		if (a[i].time >= a[i - 1].time)
			continue;
		if (prec_grow(&lf->runs, &lf->runcap, lf->nruns + 2, sizeof(*lf->runs)))
			return -ENOMEM;
		lf->runs[lf->nruns++] = i;
	}
	lf->runs[lf->nruns] = n;
	return 0;
}

/* Loads list[idx] into lf. Returns 0, or -ENOMEM (fatal); frame damage is
 * stored in lf->err. */
static int load_one(struct ana_frames *af, struct ana_loaded *lf, size_t idx)
{
	lf->fi = &af->list[idx];
	lf->idx = idx;
	lf->err = 0;
	lf->npkts = 0;
	if (!lf->frame) {
		if (!(lf->frame = prec_frame_new()))
			return -ENOMEM;
		prec_frame_set_kinds(lf->frame, af->o.kinds ? af->o.kinds : PREC_KINDS_ALL);
	}
	int ret = prec_reader_load_frame(af->r, lf->fi, lf->frame);
	if (ret < 0) {
		if (ret == -ENOMEM)
			return ret;
		lf->err = ret;
		return 0;
	}
	/* The index counts the frame's packets: one array of that size, not
	 * a doubling that copies it and leaves up to half of it unused. The
	 * count is untrusted: a packet takes at least 2 bytes of the frame
	 * (a wrong count only costs the doubling below). One more slot for
	 * the call that finds the frame's end. */
	size_t want = lf->fi->packets;
	/* A switch batch is one packet of many rows, each returned: ~6
	 * bytes a row, so a fifth of the bytes leaves the doubling below
	 * for frames of unusually short rows only. */
	if ((lf->fi->kinds & PREC_KIND(PERFREC__PACKET__DATA_SWITCH_BATCH)) &&
	    want < lf->fi->raw_size / 5)
		want = lf->fi->raw_size / 5;
	if (want > lf->fi->raw_size / 2)
		want = lf->fi->raw_size / 2;
	want++;
	if (want > lf->cap) {
		/* an eighth more, so that the next frames, of about the same
		 * count, reuse it (a new array is fresh pages to fault in) */
		want += want / 8;
		free(lf->pkts);
		lf->cap = 0;
		if (!(lf->pkts = malloc(want * sizeof(*lf->pkts))))
			return -ENOMEM;
		lf->cap = want;
	}
	for (;;) {
		if (lf->npkts == lf->cap) {
			size_t cap = lf->cap ? lf->cap * 2 : 1024;
			struct prec_packet *p = realloc(lf->pkts, cap * sizeof(*p));
			if (!p)
				return -ENOMEM;
			lf->pkts = p;
			lf->cap = cap;
		}
		ret = prec_frame_next(lf->frame, &lf->pkts[lf->npkts]);
		if (ret == 0)
			break;
		if (ret < 0) {
			if (ret == -ENOMEM)
				return ret;
			lf->err = ret;
			break;
		}
		lf->npkts++;
	}
	if (af->o.find_runs) {
		/* Untimed packets that open a frame (interned data, descriptions)
		 * have time 0; they belong with the frame's first timed packet,
		 * not at the start of the trace. */
		size_t first = 0;
		while (first < lf->npkts && !lf->pkts[first].time)
			first++;
		for (size_t i = 0; i < first && first < lf->npkts; i++)
			lf->pkts[i].time = lf->pkts[first].time;
		return find_runs(lf);
	}
	return 0;
}

/* Under af->mu. */
static struct ana_loaded *get_buffer(struct ana_frames *af)
{
	struct ana_loaded *lf = af->free_list;
	if (lf) {
		af->free_list = lf->next_free;
		lf->next_free = NULL;
		return lf;
	}
	if (af->nall == af->capall) {
		size_t cap = af->capall ? af->capall * 2 : 16;
		struct ana_loaded **a = realloc(af->all, cap * sizeof(*a));
		if (!a)
			return NULL;
		af->all = a;
		af->capall = cap;
	}
	lf = calloc(1, sizeof(*lf));
	if (lf)
		af->all[af->nall++] = lf;
	return lf;
}

static void *worker(void *arg)
{
	struct ana_frames *af = arg;
	pthread_mutex_lock(&af->mu);
	for (;;) {
		while (!af->stop && af->claim < af->n &&
		       af->claim >= af->deliver + af->o.lookahead) {
			af->workers_waiting++;
			pthread_cond_wait(&af->cv_work, &af->mu);
			af->workers_waiting--;
		}
		if (af->stop || af->claim >= af->n)
			break;
		size_t idx = af->claim++;
		struct ana_loaded *lf = get_buffer(af);
		if (!lf) {
			af->oom = 1;
			pthread_cond_signal(&af->cv_ready);
			break;
		}
		pthread_mutex_unlock(&af->mu);
		int ret = load_one(af, lf, idx);
		pthread_mutex_lock(&af->mu);
		if (ret < 0)
			af->oom = 1;
		af->slots[idx] = lf;
		/* Only the frame the consumer waits for is worth a wake-up. */
		if (af->consumer_waiting && (idx == af->deliver || af->oom))
			pthread_cond_signal(&af->cv_ready);
	}
	pthread_mutex_unlock(&af->mu);
	return NULL;
}

/* Frames of at most this many raw bytes in total may be decoded ahead of
 * the consumer (at least 2 * jobs + 2 frames, at most 64): large frames
 * keep memory small, many small frames keep the workers busy between
 * wake-ups. */
#define LOOKAHEAD_BYTES (4u << 20)
#define LOOKAHEAD_MAX 64

static size_t default_lookahead(const struct prec_frame_info *list, size_t n,
				int jobs)
{
	size_t min = 2 * (size_t)jobs + 2;
	uint64_t raw = 0;
	for (size_t i = 0; i < n; i++)
		raw += list[i].raw_size;
	uint64_t avg = n ? raw / n : 0;
	uint64_t k = avg ? LOOKAHEAD_BYTES / avg : LOOKAHEAD_MAX;
	if (k > LOOKAHEAD_MAX)
		k = LOOKAHEAD_MAX;
	return k > min ? (size_t)k : min;
}

struct ana_frames *ana_frames_new(struct prec_reader *r,
				  const struct prec_frame_info *list, size_t n,
				  const struct ana_frames_opts *opts)
{
	struct ana_frames *af = calloc(1, sizeof(*af));
	if (!af)
		return NULL;
	af->r = r;
	af->list = list;
	af->n = n;
	if (opts)
		af->o = *opts;
	if (af->o.jobs < 1)
		af->o.jobs = 1;
	if (!af->o.lookahead)
		af->o.lookahead = default_lookahead(list, n, af->o.jobs);
	/* Sleeping workers are woken in a batch once half the lookahead is
	 * consumed, not once per frame. */
	af->low = af->o.lookahead / 2;
	af->slots = calloc(n ? n : 1, sizeof(*af->slots));
	if (!af->slots) {
		free(af);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&af->mu, NULL);
	pthread_cond_init(&af->cv_work, NULL);
	pthread_cond_init(&af->cv_ready, NULL);
	/* The consumer loads the frame it needs itself when no worker has
	 * taken it yet, so jobs - 1 workers keep jobs threads decoding. */
	if (af->o.jobs > 1 && n > 1) {
		int nt = af->o.jobs - 1;
		if ((size_t)nt > n)
			nt = (int)n;
		af->threads = calloc((size_t)nt, sizeof(pthread_t));
		for (int i = 0; af->threads && i < nt; i++) {
			if (pthread_create(&af->threads[i], NULL, worker, af))
				break;
			af->nthreads++;
		}
	}
	return af;
}

/* Under af->mu, after deliver moved on. */
static void wake_workers(struct ana_frames *af)
{
	if (af->workers_waiting && af->claim < af->n &&
	    af->claim <= af->deliver + af->low)
		pthread_cond_broadcast(&af->cv_work);
}

int ana_frames_next(struct ana_frames *af, struct ana_loaded **out)
{
	*out = NULL;
	if (af->deliver >= af->n)
		return 0;
	size_t idx = af->deliver;
	if (!af->nthreads) {
		/* Serial path: the same load_one, in the caller's thread. */
		struct ana_loaded *lf = get_buffer(af);
		if (!lf)
			return -ENOMEM;
		int ret = load_one(af, lf, idx);
		if (ret < 0) {
			lf->next_free = af->free_list;
			af->free_list = lf;
			return ret;
		}
		af->deliver++;
		af->claim = af->deliver;
		*out = lf;
		return 1;
	}
	pthread_mutex_lock(&af->mu);
	while (!af->slots[idx] && !af->oom) {
		if (af->claim == idx) {
			/* Nobody took it: load it here rather than wait. */
			af->claim++;
			struct ana_loaded *lf = get_buffer(af);
			if (!lf) {
				af->oom = 1;
				break;
			}
			pthread_mutex_unlock(&af->mu);
			int ret = load_one(af, lf, idx);
			pthread_mutex_lock(&af->mu);
			if (ret < 0)
				af->oom = 1;
			af->slots[idx] = lf;
			break;
		}
		af->consumer_waiting = 1;
		pthread_cond_wait(&af->cv_ready, &af->mu);
		af->consumer_waiting = 0;
	}
	if (af->oom) {
		pthread_mutex_unlock(&af->mu);
		return -ENOMEM;
	}
	*out = af->slots[idx];
	af->slots[idx] = NULL;
	af->deliver++;
	wake_workers(af);
	pthread_mutex_unlock(&af->mu);
	return 1;
}

void ana_frames_release(struct ana_frames *af, struct ana_loaded *lf)
{
	if (!lf)
		return;
	pthread_mutex_lock(&af->mu);
	lf->next_free = af->free_list;
	af->free_list = lf;
	pthread_mutex_unlock(&af->mu);
}

size_t ana_frames_lookahead(const struct ana_frames *af)
{
	return af->o.lookahead;
}

size_t ana_frames_buffers(struct ana_frames *af)
{
	pthread_mutex_lock(&af->mu);
	size_t n = af->nall;
	pthread_mutex_unlock(&af->mu);
	return n;
}

void ana_frames_free(struct ana_frames *af)
{
	if (!af)
		return;
	pthread_mutex_lock(&af->mu);
	af->stop = 1;
	pthread_cond_broadcast(&af->cv_work);
	pthread_mutex_unlock(&af->mu);
	for (int i = 0; i < af->nthreads; i++)
		pthread_join(af->threads[i], NULL);
	free(af->threads);
	for (size_t i = 0; i < af->nall; i++) {
		prec_frame_free(af->all[i]->frame);
		free(af->all[i]->pkts);
		free(af->all[i]->runs);
		free(af->all[i]);
	}
	free(af->all);
	free(af->slots);
	pthread_cond_destroy(&af->cv_work);
	pthread_cond_destroy(&af->cv_ready);
	pthread_mutex_destroy(&af->mu);
	free(af);
}
