/*
 * tracks.c - per-thread activity binned over a window (see tracks.h).
 *
 * A thread's arrays are allocated when it first has that kind of data, so
 * a thread seen only in samples costs no run or off-CPU bins.
 */
#include "analyzer/render/tracks.h"

#include <errno.h>
#include <stdlib.h>

#include "format/base/hashmap.h"

struct ana_tracks {
	uint64_t t0, t1, bin;
	size_t nbins;
	struct prec_hashmap threads;     /* uint32 tid -> struct ana_track * */
	struct ana_track_proc *procs;
	size_t nprocs;
	struct ana_track **order;        /* every thread, grouped by process */
	uint64_t *loss;
};

struct ana_tracks *ana_tracks_new(uint64_t t0, uint64_t t1, size_t nbins)
{
	if (!nbins) {
		errno = EINVAL;
		return NULL;
	}
	struct ana_tracks *tk = calloc(1, sizeof(*tk));
	if (!tk)
		return NULL;
	tk->t0 = t0;
	tk->t1 = t1 < t0 ? t0 : t1;
	tk->nbins = nbins;
	/* bins cover [t0, t1] whole: rounded up, at least 1 ns */
	tk->bin = (tk->t1 - t0) / nbins + 1;
	tk->loss = calloc(nbins, sizeof(*tk->loss));
	if (!tk->loss) {
		free(tk);
		return NULL;
	}
	prec_hashmap_init(&tk->threads, sizeof(uint32_t), sizeof(struct ana_track *));
	return tk;
}

static void track_free(struct ana_track *t)
{
	if (!t)
		return;
	free(t->run);
	free(t->ins);
	free(t->smp);
	free(t->off);
	free(t->off_max);
	free(t->off_state);
	free(t);
}

void ana_tracks_free(struct ana_tracks *tk)
{
	if (!tk)
		return;
	for (size_t i = 0; i < prec_hashmap_count(&tk->threads); i++)
		track_free(*(struct ana_track **)prec_hashmap_val(&tk->threads, i));
	prec_hashmap_release(&tk->threads);
	free(tk->procs);
	free(tk->order);
	free(tk->loss);
	free(tk);
}

static struct ana_track *thread(struct ana_tracks *tk, uint32_t pid, uint32_t tid,
				const char *comm)
{
	int created;
	struct ana_track **v = prec_hashmap_get(&tk->threads, &tid, &created);
	if (!v)
		return NULL;
	if (created && !(*v = calloc(1, sizeof(**v)))) {
		/* leave no NULL behind: the map's entry stays, emptied */
		return NULL;
	}
	if (!*v)
		return NULL;
	(*v)->pid = pid;
	(*v)->tid = tid;
	if (comm)
		(*v)->comm = comm;
	return *v;
}

static int alloc_bins(void **a, size_t n, size_t size)
{
	if (!*a && !(*a = calloc(n, size)))
		return -ENOMEM;
	return 0;
}

/* Clips [start, end) to the window; 0 when nothing is left. */
static int clip(const struct ana_tracks *tk, uint64_t *start, uint64_t *end)
{
	if (*start < tk->t0)
		*start = tk->t0;
	if (*end > tk->t1)
		*end = tk->t1;
	return *end > *start;
}

int ana_tracks_run(struct ana_tracks *tk, uint32_t pid, uint32_t tid, const char *comm,
		   uint64_t start, uint64_t end)
{
	struct ana_track *t = thread(tk, pid, tid, comm);
	if (!t || alloc_bins((void **)&t->run, tk->nbins, sizeof(*t->run)) ||
	    alloc_bins((void **)&t->ins, tk->nbins, sizeof(*t->ins)))
		return -ENOMEM;
	/* a run that starts at the window start was already running there;
	 * an empty one is a switch-in and out at once */
	if (start > tk->t0 && start < tk->t1 && end >= start)
		t->ins[(start - tk->t0) / tk->bin]++;
	if (!clip(tk, &start, &end))
		return 0;
	t->run_ns += end - start;
	for (uint64_t a = start; a < end;) {
		size_t b = (size_t)((a - tk->t0) / tk->bin);
		uint64_t edge = tk->t0 + (uint64_t)(b + 1) * tk->bin, e = edge < end ? edge : end;
		t->run[b] += e - a;
		a = e;
	}
	return 0;
}

int ana_tracks_sample(struct ana_tracks *tk, uint32_t pid, uint32_t tid, const char *comm,
		      uint64_t time)
{
	struct ana_track *t = thread(tk, pid, tid, comm);
	if (!t || alloc_bins((void **)&t->smp, tk->nbins, sizeof(*t->smp)))
		return -ENOMEM;
	if (time < tk->t0 || time > tk->t1)
		return 0;
	t->samples++;
	t->smp[(time - tk->t0) / tk->bin]++;
	return 0;
}

int ana_tracks_offcpu(struct ana_tracks *tk, uint32_t pid, uint32_t tid, const char *comm,
		      int state, uint64_t start, uint64_t end)
{
	struct ana_track *t = thread(tk, pid, tid, comm);
	if (!t || alloc_bins((void **)&t->off, tk->nbins, sizeof(*t->off)) ||
	    alloc_bins((void **)&t->off_max, tk->nbins, sizeof(*t->off_max)) ||
	    alloc_bins((void **)&t->off_state, tk->nbins, sizeof(*t->off_state)))
		return -ENOMEM;
	if (state < 0 || state >= ANA_TK_NSTATES)
		state = ANA_TK_NSTATES - 1;
	if (!clip(tk, &start, &end))
		return 0;
	t->off_ns += end - start;
	for (uint64_t a = start; a < end;) {
		size_t b = (size_t)((a - tk->t0) / tk->bin);
		uint64_t edge = tk->t0 + (uint64_t)(b + 1) * tk->bin, e = edge < end ? edge : end;
		t->off[b] += e - a;
		if (e - a > t->off_max[b]) {
			t->off_max[b] = e - a;
			t->off_state[b] = (uint8_t)state;
		}
		a = e;
	}
	return 0;
}

void ana_tracks_loss(struct ana_tracks *tk, uint64_t time, uint64_t count)
{
	if (time >= tk->t0 && time <= tk->t1)
		tk->loss[(time - tk->t0) / tk->bin] += count;
}

/* Busiest first: on-CPU time, samples, off-CPU time, then the id. */
static int busier(uint64_t ra, uint64_t sa, uint64_t oa, uint32_t ia,
		  uint64_t rb, uint64_t sb, uint64_t ob, uint32_t ib)
{
	if (ra != rb)
		return ra > rb ? -1 : 1;
	if (sa != sb)
		return sa > sb ? -1 : 1;
	if (oa != ob)
		return oa > ob ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

/* Threads by process, then busiest first. */
static int cmp_thread(const void *a, const void *b)
{
	const struct ana_track *x = *(struct ana_track *const *)a;
	const struct ana_track *y = *(struct ana_track *const *)b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return busier(x->run_ns, x->samples, x->off_ns, x->tid,
		      y->run_ns, y->samples, y->off_ns, y->tid);
}

static int cmp_proc(const void *a, const void *b)
{
	const struct ana_track_proc *x = a, *y = b;
	return busier(x->run_ns, x->samples, x->off_ns, x->pid,
		      y->run_ns, y->samples, y->off_ns, y->pid);
}

int ana_tracks_sort(struct ana_tracks *tk)
{
	size_t n = prec_hashmap_count(&tk->threads), np = 0;
	if (tk->order)
		return 0;
	tk->order = malloc((n ? n : 1) * sizeof(*tk->order));
	if (!tk->order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct ana_track *t = *(struct ana_track **)prec_hashmap_val(&tk->threads, i);
		if (t)
			tk->order[np++] = t;
	}
	n = np;
	prec_sort(tk->order, n, sizeof(*tk->order), cmp_thread);
	np = 0;
	for (size_t i = 0; i < n; i++)
		np += !i || tk->order[i]->pid != tk->order[i - 1]->pid;
	tk->procs = calloc(np ? np : 1, sizeof(*tk->procs));
	if (!tk->procs)
		return -ENOMEM;
	for (size_t i = 0, j; i < n; i = j) {
		struct ana_track_proc *p = &tk->procs[tk->nprocs++];
		p->pid = tk->order[i]->pid;
		p->threads = &tk->order[i];
		for (j = i; j < n && tk->order[j]->pid == p->pid; j++) {
			const struct ana_track *t = tk->order[j];
			p->run_ns += t->run_ns;
			p->samples += t->samples;
			p->off_ns += t->off_ns;
			if (t->tid == p->pid || !p->comm)
				p->comm = t->comm;
		}
		p->nthreads = j - i;
	}
	/* each process's threads are a run of order, which stays put:
	 * sorting the processes moves only their structs */
	prec_sort(tk->procs, tk->nprocs, sizeof(*tk->procs), cmp_proc);
	return 0;
}

size_t ana_tracks_nprocs(const struct ana_tracks *tk)
{
	return tk->nprocs;
}

const struct ana_track_proc *ana_tracks_proc(const struct ana_tracks *tk, size_t i)
{
	return i < tk->nprocs ? &tk->procs[i] : NULL;
}

size_t ana_tracks_nthreads(const struct ana_tracks *tk)
{
	return prec_hashmap_count(&tk->threads);
}

uint64_t ana_tracks_t0(const struct ana_tracks *tk)
{
	return tk->t0;
}

uint64_t ana_tracks_bin_ns(const struct ana_tracks *tk)
{
	return tk->bin;
}

size_t ana_tracks_nbins(const struct ana_tracks *tk)
{
	return tk->nbins;
}

const uint64_t *ana_tracks_losses(const struct ana_tracks *tk)
{
	return tk->loss;
}
