/*
 * source.c - the perf event source: recording/source.h over
 * events/evlist.h.
 */
#include "recorder/recording/source.h"

#include <errno.h>
#include <stdlib.h>

#include "recorder/bpf/bpf.h"
#include "recorder/events/evlist.h"

struct perf_source {
	struct rec_source pub;   /* first: the recording sees only this */
	struct rec_evlist set;
	struct rec_bpf_opts bo;  /* the BPF programs' settings; their
				  * events are set's cfg */
	struct rec_bpf *bpf;     /* set.cfg asked for off-CPU or a filter */
};

static struct perf_source *perf_of(struct rec_source *src)
{
	return (struct perf_source *)src;
}

static int perf_open(struct rec_source *src, const int *cpus, size_t ncpus,
		     const int *pids, size_t npids)
{
	struct perf_source *p = perf_of(src);
	const struct rec_bpf_opts *bo = &p->bo;
	int ret;

	/* BPF first: a missing privilege or kernel feature is said before
	 * any event is opened */
	if (p->set.cfg.off_cpu || p->set.cfg.filter) {
		ret = rec_bpf_new(bo, &p->bpf);
		if (ret < 0)
			return ret;
	}
	ret = rec_evlist_open(&p->set, cpus, ncpus, pids, npids);
	if (ret < 0)
		return ret;
	if (p->bpf) {
		ret = rec_bpf_attach(p->bpf, &p->set);
		if (ret < 0)
			return ret;
		src->bpf_emit = rec_bpf_emit;
		src->bpf_ctx = p->bpf;
	}
	src->rings = p->set.rings;
	src->nrings = p->set.nrings;
	src->ring_cpu = p->set.ring_cpu;
	src->dctx = &p->set.dctx;
	src->note = p->set.note;
	return 0;
}

static int perf_describe(struct rec_source *src, struct prec_writer *w)
{
	return rec_evlist_describe(&perf_of(src)->set, w);
}

static int perf_enable(struct rec_source *src)
{
	return rec_evlist_enable(&perf_of(src)->set);
}

static int perf_disable(struct rec_source *src)
{
	/* the off-CPU program first: a disabled bpf-output event would
	 * refuse its last records */
	rec_bpf_stop(perf_of(src)->bpf);
	return rec_evlist_disable(&perf_of(src)->set);
}

static int perf_tick(struct rec_source *src, struct rec_emit *e, uint64_t now_ns,
		     bool final)
{
	struct perf_source *p = perf_of(src);

	return p->bpf ? rec_bpf_tick(p->bpf, e, now_ns, final) : 0;
}

static int perf_write_lost(struct rec_source *src, struct prec_writer *w,
			   uint64_t now_ns, uint64_t *total)
{
	return rec_evlist_write_lost(&perf_of(src)->set, w, now_ns, total);
}

static void perf_free(struct rec_source *src)
{
	struct perf_source *p = perf_of(src);

	rec_bpf_free(p->bpf);
	rec_evlist_release(&p->set);
	free(p);
}

static const struct rec_source_ops perf_ops = {
	.open = perf_open,
	.describe = perf_describe,
	.enable = perf_enable,
	.disable = perf_disable,
	.write_lost = perf_write_lost,
	.tick = perf_tick,
	.free = perf_free,
};

struct rec_source *rec_source_perf_new(const struct rec_evspecs *evspecs,
				       const struct rec_evlist_cfg *cfg,
				       const struct rec_bpf_opts *bo)
{
	struct perf_source *p = calloc(1, sizeof(*p));
	int ret;

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->bo = *bo;
	ret = rec_evlist_init(&p->set, evspecs, cfg);
	if (ret < 0) {
		rec_evlist_release(&p->set);
		free(p);
		errno = -ret;
		return NULL;
	}
	p->bo.events = &p->set.cfg;
	p->pub.ops = &perf_ops;
	p->pub.nevents = (uint32_t)p->set.nsel;
	p->pub.ngroups = (uint32_t)evspecs->ngroups;
	p->pub.ring_pages = cfg->mmap_pages;
	p->pub.page_size = p->set.page_size;
	p->pub.note = "";
	return &p->pub;
}

void rec_source_free(struct rec_source *src)
{
	if (src)
		src->ops->free(src);
}
