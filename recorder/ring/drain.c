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
	if (!d->spools || !d->ring_err) {
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
	free(d);
}
