/*
 * drain.c - kernel rings into spools on a thread of their own; see drain.h.
 */
#include "recorder/ring/drain.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "recorder/ring/spool.h"

#define WAIT_MS 100
/* Spool per CPU: deep enough to ride out seconds of an encoder that falls
 * behind (it starts at half a ring and doubles when full, see
 * rec_drain_new), bounded for many-CPU hosts. */
#define SPOOL_DEFAULT (32u << 20)       /* per CPU */
#define SPOOL_TOTAL_MAX (1ull << 30)    /* all CPUs together */
/* A spool's done_ns vouches for records stamped this long before it: the
 * kernel stamps a record, then writes it and publishes data_head with
 * interrupts or preemption off, microseconds later. A vCPU the host
 * deschedules in between can take longer: such records come late and
 * are counted (rec_drain_stats.late). */
#define PUBLISH_SLACK_NS 1000000ull
#define NO_LIMIT UINT64_MAX

/* The round's state of one spool. */
struct round_ring {
	const struct perf_event_header *h;  /* its next record (peeked) */
	uint64_t t;                         /* that record's time */
	uint64_t last;                      /* time of the last record taken */
	uint64_t done;                      /* the spool's done_ns this round */
	bool free;                          /* bounds nothing: all moved */
};

struct rec_drain {
	struct rec_ring *rings;   /* [n], borrowed */
	size_t n;
	struct rec_spool *spools; /* [n] */
	int *ring_err;            /* [n]: kernel ring stopped (atomic) */
	pthread_t th;
	bool started;
	int ep;                   /* epoll over the ring fds */
	int efd;                  /* eventfd: data moved / thread done */
	int stop;                 /* 1: final move, then exit; 2: exit now */
	int done;
	uint64_t wakeups;
	/* rounds (consumer side) */
	int (*time)(void *ctx, const struct perf_event_header *h, uint64_t *t);
	void *time_ctx;
	struct round_ring *rr;    /* [n] */
	size_t *heap;             /* [n]: rings with a record, by (t, index) */
	size_t nheap;
	uint64_t limit;           /* the round ends at records past it */
	size_t held;              /* ring of the record last returned, or n */
	size_t left;              /* records the round may still return */
	uint64_t taken_max;       /* latest time taken so far */
	uint64_t late;            /* records taken after a later one */
};

static void wake(struct rec_drain *d)
{
	uint64_t one = 1;

	if (write(d->efd, &one, sizeof(one)) < 0) {
		/* the count cannot overflow at our rate; the consumer also
		 * polls with a timeout */
	}
}

static void *drain_main(void *arg)
{
	struct rec_drain *d = arg;
	struct epoll_event evs[64];
	bool pending = false;

	for (;;) {
		int stop = __atomic_load_n(&d->stop, __ATOMIC_ACQUIRE);
		bool moved = false;
		int n;

		if (stop == 2)
			break;
		/* A spool that was full is retried soon; otherwise the ring's
		 * wakeup watermark (or the timeout) wakes us. */
		n = epoll_wait(d->ep, evs, 64, stop ? 0 : pending ? 2 : WAIT_MS);
		if (n > 0)
			d->wakeups++;
		for (int k = 0; k < n; k++)
			if (evs[k].events & (EPOLLHUP | EPOLLERR))
				epoll_ctl(d->ep, EPOLL_CTL_DEL,
					  d->rings[evs[k].data.u32].fd, NULL);
		pending = false;
		for (size_t i = 0; i < d->n; i++) {
			struct rec_ring *k = &d->rings[i];
			struct rec_spool *sp = &d->spools[i];
			long ret;

			if (!k->meta || __atomic_load_n(&d->ring_err[i], __ATOMIC_RELAXED))
				continue;
			ret = rec_spool_fill(sp, k);
			if (ret < 0) {
				__atomic_store_n(&d->ring_err[i], 1, __ATOMIC_RELEASE);
				moved = true;
				continue;
			}
			/* Wake the consumer only for a worthwhile batch: it
			 * polls every WAIT_MS anyway, and each wakeup costs two
			 * context switches. */
			if (ret > 0) {
				struct perf_event_mmap_page *sm = sp->reader.meta;
				uint64_t fill = sm->data_head -
					__atomic_load_n(&sm->data_tail, __ATOMIC_ACQUIRE);

				if (fill >= sp->cap / 16 || fill >= sp->size / 2 || stop)
					moved = true;
			}
			/* a spool waiting to grow needs the consumer now */
			if (sp->growing)
				moved = true;
			if (rec_spool_pending(k))
				pending = true;
		}
		if (moved)
			wake(d);
		if (stop && !pending)
			break;
		if (stop)
			usleep(1000);   /* wait for the consumer to make room */
	}
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	wake(d);
	return NULL;
}

int rec_drain_new(struct rec_ring *rings, size_t n, uint64_t ring_bytes,
		  uint64_t spool_bytes, struct rec_drain **out)
{
	struct rec_drain *d = calloc(1, sizeof(*d));
	uint64_t spool = spool_bytes ? spool_bytes : SPOOL_DEFAULT, start;
	int ret;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->rings = rings;
	d->n = n;
	d->ep = d->efd = -1;
	/* a power of two, at least two rings' worth */
	while (spool & (spool - 1))
		spool &= spool - 1;
	if (spool < 2 * ring_bytes)
		spool = 2 * ring_bytes;
	if (spool < 65536)
		spool = 65536;
	while (!spool_bytes && spool > 2 * ring_bytes && spool * n > SPOOL_TOTAL_MAX)
		spool /= 2;
	/* The default spool starts at half a ring (two wakeup watermarks) and
	 * doubles only when it fills: a spool that cycles through all its
	 * pages has the kernel zero every one of them at first touch (16% of
	 * the recorder's CPU on the bench with 32 MiB per CPU). */
	start = spool_bytes ? spool : ring_bytes / 2;
	if (start < 65536)
		start = 65536;
	if (start > spool)
		start = spool;
	d->spools = calloc(n + 1, sizeof(*d->spools));
	d->ring_err = calloc(n + 1, sizeof(*d->ring_err));
	d->rr = calloc(n + 1, sizeof(*d->rr));
	d->heap = calloc(n + 1, sizeof(*d->heap));
	d->held = n;
	if (!d->spools || !d->ring_err || !d->rr || !d->heap) {
		ret = -ENOMEM;
		goto err;
	}
	for (size_t i = 0; i < n; i++) {
		ret = rec_spool_init_grow(&d->spools[i], start, spool);
		if (ret < 0)
			goto err;
	}
	d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	d->ep = epoll_create1(EPOLL_CLOEXEC);
	if (d->efd < 0 || d->ep < 0) {
		ret = -errno;
		goto err;
	}
	for (size_t i = 0; i < n; i++) {
		struct epoll_event ev;

		if (rings[i].fd < 0)
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.u32 = (uint32_t)i;
		if (epoll_ctl(d->ep, EPOLL_CTL_ADD, rings[i].fd, &ev) < 0) {
			ret = -errno;
			goto err;
		}
	}
	*out = d;
	return 0;
err:
	rec_drain_free(d);
	return ret;
}

int rec_drain_start(struct rec_drain *d)
{
	int ret = pthread_create(&d->th, NULL, drain_main, d);

	if (ret)
		return -ret;
	d->started = true;
	return 0;
}

int rec_drain_fd(const struct rec_drain *d)
{
	return d->efd;
}

void rec_drain_ack(struct rec_drain *d)
{
	uint64_t v;

	if (read(d->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing to clear */
	}
}

struct rec_ring *rec_drain_spool(struct rec_drain *d, size_t i)
{
	return &d->spools[i].reader;
}

void rec_drain_sync(struct rec_drain *d, size_t i)
{
	rec_spool_sync(&d->spools[i]);
}

bool rec_drain_pending(struct rec_drain *d, size_t i)
{
	struct rec_ring *r = &d->spools[i].reader;

	return r->head != r->pos || rec_ring_read_begin(r);
}

bool rec_drain_ring_failed(const struct rec_drain *d, size_t i)
{
	return __atomic_load_n(&d->ring_err[i], __ATOMIC_ACQUIRE);
}

void rec_drain_set_time(struct rec_drain *d,
			int (*time)(void *ctx, const struct perf_event_header *h,
				    uint64_t *t),
			void *ctx)
{
	d->time = time;
	d->time_ctx = ctx;
}

/* Heap order: earlier time first, the lower ring on a tie (so records
 * without a time go ring after ring, as before any ordering). */
static inline bool before(const struct rec_drain *d, size_t a, size_t b)
{
	const struct round_ring *x = &d->rr[a], *y = &d->rr[b];

	return x->t < y->t || (x->t == y->t && a < b);
}

static void heap_down(struct rec_drain *d, size_t k)
{
	for (;;) {
		size_t l = 2 * k + 1, m = k;

		if (l < d->nheap && before(d, d->heap[l], d->heap[m]))
			m = l;
		if (l + 1 < d->nheap && before(d, d->heap[l + 1], d->heap[m]))
			m = l + 1;
		if (m == k)
			return;
		size_t tmp = d->heap[k];

		d->heap[k] = d->heap[m];
		d->heap[m] = tmp;
		k = m;
	}
}

static void heap_up(struct rec_drain *d, size_t k)
{
	while (k) {
		size_t p = (k - 1) / 2, tmp;

		if (!before(d, d->heap[k], d->heap[p]))
			return;
		tmp = d->heap[k];
		d->heap[k] = d->heap[p];
		d->heap[p] = tmp;
		k = p;
	}
}

/* Peeks spool i's next record: true when there is one (rr[i].h, .t);
 * false when the spool is empty for this round, which then bounds the
 * round by the spool's limit. */
static inline bool round_peek(struct rec_drain *d, size_t i)
{
	struct round_ring *rr = &d->rr[i];
	struct rec_ring *sp = &d->spools[i].reader;
	int ret = rec_ring_peek(sp, &rr->h);

	if (ret > 0) {
		uint64_t t;

		/* a record without a time goes right after the one before */
		rr->t = d->time && d->time(d->time_ctx, rr->h, &t) == 0 ? t : rr->last;
		return true;
	}
	/* Empty, the spool holds back the other rings' records past what
	 * it is known to have: the kernel ring's records before its last
	 * full move, or, when records were left in the kernel ring, those
	 * up to the last one taken (the kernel ring keeps its order). A
	 * spool stopped on a corrupt record gets nothing more. */
	if (!rr->free && !(ret < 0 && sp->error)) {
		uint64_t limit = rr->done > PUBLISH_SLACK_NS ?
				 rr->done - PUBLISH_SLACK_NS :
				 rr->done ? 0 : rr->last;

		if (limit < d->limit)
			d->limit = limit;
	}
	return false;
}

void rec_drain_round_begin(struct rec_drain *d, size_t max)
{
	/* once the thread has ended every record is in the spools */
	bool all = __atomic_load_n(&d->done, __ATOMIC_ACQUIRE);

	d->nheap = 0;
	d->limit = NO_LIMIT;
	d->held = d->n;
	d->left = max;
	for (size_t i = 0; i < d->n; i++) {
		struct round_ring *rr = &d->rr[i];
		struct rec_spool *sp = &d->spools[i];

		if (!d->rings[i].meta)
			continue;
		rec_spool_sync(sp);
		/* done_ns before the head (spool.h) */
		rr->done = __atomic_load_n(&sp->done_ns, __ATOMIC_ACQUIRE);
		rec_ring_read_begin(&sp->reader);
		rr->free = all || __atomic_load_n(&d->ring_err[i], __ATOMIC_ACQUIRE);
		if (round_peek(d, i)) {
			d->heap[d->nheap++] = i;
			heap_up(d, d->nheap - 1);
		}
	}
}

int rec_drain_round_next(struct rec_drain *d, size_t *ring,
			 const struct perf_event_header **h)
{
	size_t i = d->held;

	if (i < d->n) {
		/* the record returned last is done with: past it, and apply a
		 * growth while none of this spool is held */
		struct rec_ring *sp = &d->spools[i].reader;

		rec_ring_advance(sp);
		rec_spool_sync(&d->spools[i]);
		d->held = d->n;
		if (!round_peek(d, i))
			d->heap[0] = d->heap[--d->nheap];
		/* still first (one ring, or ahead of both children): no move */
		if (d->nheap > 1 && !(before(d, d->heap[0], d->heap[1]) &&
				      (d->nheap < 3 || before(d, d->heap[0], d->heap[2]))))
			heap_down(d, 0);
	}
	if (!d->nheap || !d->left)
		return 0;
	i = d->heap[0];
	if (d->rr[i].t > d->limit)
		return 0;
	d->left--;
	d->held = i;
	if (d->rr[i].t > d->rr[i].last)
		d->rr[i].last = d->rr[i].t;
	if (d->rr[i].t < d->taken_max)
		d->late++;
	else
		d->taken_max = d->rr[i].t;
	*ring = i;
	*h = d->rr[i].h;
	return 1;
}

void rec_drain_round_end(struct rec_drain *d)
{
	if (d->held < d->n)
		rec_ring_advance(&d->spools[d->held].reader);
	d->held = d->n;
	d->nheap = 0;
	for (size_t i = 0; i < d->n; i++) {
		if (!d->rings[i].meta)
			continue;
		rec_ring_read_done(&d->spools[i].reader);
		rec_spool_sync(&d->spools[i]);
	}
}

int rec_drain_stop(struct rec_drain *d, bool final,
		   int (*consume)(void *ctx), void *ctx)
{
	int ret = 0;

	if (!d || !d->started)
		return 0;
	__atomic_store_n(&d->stop, final ? 1 : 2, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&d->done, __ATOMIC_ACQUIRE)) {
		struct pollfd pfd = { d->efd, POLLIN, 0 };

		if (final && !ret && consume) {
			ret = consume(ctx);
			if (ret < 0)
				__atomic_store_n(&d->stop, 2, __ATOMIC_RELEASE);
		}
		if (poll(&pfd, 1, 10) > 0)
			rec_drain_ack(d);
	}
	pthread_join(d->th, NULL);
	d->started = false;
	return ret;
}

void rec_drain_stats(const struct rec_drain *d, struct rec_drain_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!d)
		return;
	st->wakeups = d->wakeups;
	st->late = d->late;
	for (size_t i = 0; d->spools && i < d->n; i++) {
		st->spool_full += d->spools[i].full;
		st->moved += d->spools[i].moved;
	}
}

void rec_drain_free(struct rec_drain *d)
{
	if (!d)
		return;
	rec_drain_stop(d, false, NULL, NULL);
	if (d->ep >= 0)
		close(d->ep);
	if (d->efd >= 0)
		close(d->efd);
	for (size_t i = 0; d->spools && i < d->n; i++)
		rec_spool_release(&d->spools[i]);
	free(d->spools);
	free(d->ring_err);
	free(d->rr);
	free(d->heap);
	free(d);
}
