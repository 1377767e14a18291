/*
 * dataset.c - lists inputs, probes each file, groups, joins and
 * de-duplicates them (see dataset.h for the rules).
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/read/dataset.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/base/hashmap.h"
#include "format/error.h"
#include "format/frame.h"
#include "format/reader.h"

/* Directory depth searched: deeper trees are a loop or a mistake, and the
 * path buffers stay bounded. */
#define MAX_DEPTH 32

struct walk {
	struct ana_dataset *ds;
	struct ana_dataset_file *all;   /* probed, before grouping */
	size_t nall, capall;
	size_t capskip, capdup;
	struct dirid { dev_t dev; ino_t ino; } *seen;   /* directories and files */
	size_t nseen, capseen;
	int err;
};

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	size_t c = *cap ? *cap * 2 : 16;
	void *q = realloc(p, c * size);
	if (q)
		*cap = c;
	return q;
}

static void skip(struct walk *w, const char *path, int err)
{
	struct ana_dataset *ds = w->ds;
	struct ana_dataset_skip *s = grow(ds->skipped, &w->capskip, ds->nskipped, sizeof(*s));
	if (s)   /* the old array is gone once realloc moved it */
		ds->skipped = s;
	const char *p = s ? ana_strpool_intern(&ds->pool, path) : NULL;
	if (!p) {
		w->err = -ENOMEM;
		return;
	}
	s[ds->nskipped].path = p;
	s[ds->nskipped++].err = err;
}

static void dup_of(struct walk *w, const char *path, const char *kept)
{
	struct ana_dataset *ds = w->ds;
	struct ana_dataset_dup *d = grow(ds->dups, &w->capdup, ds->ndups, sizeof(*d));
	if (!d) {
		w->err = -ENOMEM;
		return;
	}
	ds->dups = d;
	d[ds->ndups].path = path;
	d[ds->ndups++].kept = kept;
}

/* 1 when (dev, ino) was met before; records it otherwise. */
static int seen(struct walk *w, const struct stat *st)
{
	for (size_t i = 0; i < w->nseen; i++)
		if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino)
			return 1;
	struct dirid *s = grow(w->seen, &w->capseen, w->nseen, sizeof(*s));
	if (!s) {
		w->err = -ENOMEM;
		return 1;
	}
	w->seen = s;
	s[w->nseen].dev = st->st_dev;
	s[w->nseen++].ino = st->st_ino;
	return 0;
}

uint64_t ana_dataset_wall(const struct ana_dataset_file *f, uint64_t t)
{
	if (!f->realtime_ns)
		return 0;
	if (t >= f->monotonic_ns)
		return f->realtime_ns + (t - f->monotonic_ns);
	uint64_t d = f->monotonic_ns - t;
	return d < f->realtime_ns ? f->realtime_ns - d : 0;
}

/* Interned names are one pointer per name: a list scan finds it. A
 * failed allocation leaves the name out of the listing, nothing else. */
static void add_event(struct ana_dataset *ds, const char *name)
{
	const char *n = ana_strpool_intern(&ds->pool, name && *name ? name : "[unnamed]");
	if (!n || ds->nevents >= 4096)
		return;
	for (size_t i = 0; i < ds->nevents; i++)
		if (ds->events[i] == n)
			return;
	const char **e = realloc(ds->events, (ds->nevents + 1) * sizeof(*e));
	if (!e)
		return;
	ds->events = e;
	e[ds->nevents++] = n;
}

/* The packets of frame fi of the kinds in mask, for the header and the end. */
static void read_meta(struct prec_reader *r, const struct prec_frame_info *fi,
		      struct prec_frame *fr, struct ana_dataset *ds,
		      struct ana_dataset_file *f)
{
	struct prec_packet p;
	prec_frame_set_kinds(fr, PREC_KIND(PERFREC__PACKET__DATA_HEADER) |
			     PREC_KIND(PERFREC__PACKET__DATA_EVENT) |
			     PREC_KIND(PERFREC__PACKET__DATA_SESSION_END));
	if (prec_reader_load_frame(r, fi, fr))
		return;
	while (prec_frame_next(fr, &p) > 0) {
		if (p.pkt->data_case == PERFREC__PACKET__DATA_HEADER && !f->host) {
			const Perfrec__FileHeader *h = p.pkt->header;
			if (h->hostname && *h->hostname)
				f->host = ana_strpool_intern(&ds->pool, h->hostname);
			f->start = h->start_time;
			f->realtime_ns = h->realtime_ns;
			f->monotonic_ns = h->monotonic_ns;
		} else if (p.pkt->data_case == PERFREC__PACKET__DATA_EVENT) {
			add_event(ds, p.pkt->event->name);
		} else if (p.pkt->data_case == PERFREC__PACKET__DATA_SESSION_END) {
			const Perfrec__SessionEnd *e = p.pkt->session_end;
			f->has_end = 1;
			f->end = e->end_time;
			f->samples = e->samples;
			f->lost = e->lost + e->dropped;
			f->rotated = e->stop_reason && !strcmp(e->stop_reason, "rotated");
		}
	}
}

/* The session's name: the file's name without its directory and .prec. */
static const char *stem(struct ana_dataset *ds, const char *name)
{
	const char *b = strrchr(name, '/');
	b = b ? b + 1 : name;
	size_t n = strlen(b);
	if (n > 5 && !strcmp(b + n - 5, ".prec"))
		n -= 5;
	return ana_strpool_intern_n(&ds->pool, b, n);
}

static int probe_reader(struct ana_dataset *ds, struct prec_reader *r,
			const char *name, struct ana_dataset_file *f)
{
	const struct prec_frame_info *fr;
	const struct prec_damage *dmg;
	size_t n, nd;
	struct prec_reader_stats st;

	memset(f, 0, sizeof(*f));
	int ret = prec_reader_index(r, &fr, &n);
	if (ret < 0)
		return ret;
	prec_reader_stats(r, &st);
	if (!n)   /* a header and nothing after it: nothing to analyze */
		return st.torn ? PREC_E_TRUNCATED : -ENODATA;
	struct prec_frame *frame = prec_frame_new();
	if (!frame)
		return -ENOMEM;
	/* The header is the first packet of stream 0; the end the last. */
	size_t first = n, last = n;
	uint64_t tmin = UINT64_MAX, tmax = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t meta = PREC_KIND(PERFREC__PACKET__DATA_HEADER) |
				PREC_KIND(PERFREC__PACKET__DATA_SESSION_END);
		if (fr[i].stream == 0 && (!fr[i].kinds || (fr[i].kinds & meta))) {
			if (first == n)
				first = i;
			last = i;
		}
		if (fr[i].t_min && fr[i].t_min < tmin)
			tmin = fr[i].t_min;
		if (fr[i].t_max > tmax)
			tmax = fr[i].t_max;
	}
	if (first < n)
		read_meta(r, &fr[first], frame, ds, f);
	if (last < n && last != first)
		read_meta(r, &fr[last], frame, ds, f);
	prec_frame_free(frame);
	if (!f->start)
		f->start = tmin == UINT64_MAX ? 0 : tmin;
	if (!f->has_end)
		f->end = tmax > f->start ? tmax : f->start;
	if (!f->host && !(f->host = ana_strpool_intern(&ds->pool, "unknown")))
		return -ENOMEM;
	if (!(f->session = stem(ds, name)) || !(f->path = ana_strpool_intern(&ds->pool, name)))
		return -ENOMEM;
	f->bytes = st.file_size;
	f->nframes = n;
	f->state = st.torn ? ANA_FILE_TORN : f->has_end && st.index_present ? ANA_FILE_WHOLE
		 : ANA_FILE_OPEN;
	f->damaged = st.header_damaged || (prec_reader_damage(r, &dmg, &nd) == 0 && nd);
	f->wall_start = ana_dataset_wall(f, f->start);
	return 0;
}

int ana_dataset_probe_mem(struct ana_dataset *ds, const void *buf, size_t len,
			  const char *name, struct ana_dataset_file *f)
{
	int err = 0;
	struct prec_reader *r = prec_reader_open_mem_err(buf, len, NULL, &err);
	if (!r)
		return err ? err : -ENOMEM;
	int ret = probe_reader(ds, r, name, f);
	prec_reader_free(r);
	return ret;
}

static void probe(struct walk *w, const char *path)
{
	int err = 0;
	struct prec_reader *r = prec_reader_open_err(path, NULL, &err);
	if (!r) {
		skip(w, path, err ? err : -errno);
		return;
	}
	struct ana_dataset_file f;
	int ret = probe_reader(w->ds, r, path, &f);
	prec_reader_free(r);
	if (ret == -ENOMEM) {
		w->err = ret;
		return;
	}
	if (ret < 0) {
		skip(w, path, ret);
		return;
	}
	struct ana_dataset_file *a = grow(w->all, &w->capall, w->nall, sizeof(*a));
	if (!a) {
		w->err = -ENOMEM;
		return;
	}
	w->all = a;
	a[w->nall++] = f;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void visit(struct walk *w, const char *path, int explicit, int depth);

/* Lists the directory first and closes it, then visits its entries in
 * name order: one descriptor at a time whatever the depth. */
static void visit_dir(struct walk *w, const char *path, int depth)
{
	if (depth >= MAX_DEPTH) {
		skip(w, path, -ELOOP);
		return;
	}
	DIR *d = opendir(path);
	if (!d) {
		skip(w, path, -errno);
		return;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')   /* ., .., and the collector's .origin files */
			continue;
		char **g = grow(names, &cap, n, sizeof(*names));
		char *s = strdup(e->d_name);
		if (!g || !s) {
			free(s);
			if (g)
				names = g;
			w->err = -ENOMEM;
			break;
		}
		names = g;
		names[n++] = s;
	}
	closedir(d);
	if (!w->err)
		prec_sort(names, n, sizeof(*names), cmp_names);
	size_t plen = strlen(path);
	for (size_t i = 0; i < n; i++) {
		if (!w->err) {
			size_t len = plen + 1 + strlen(names[i]) + 1;
			char *sub = malloc(len);
			if (!sub) {
				w->err = -ENOMEM;
			} else {
				snprintf(sub, len, "%s%s%s", path,
					 plen && path[plen - 1] == '/' ? "" : "/", names[i]);
				visit(w, sub, 0, depth + 1);
				free(sub);
			}
		}
		free(names[i]);
	}
	free(names);
}

static void visit(struct walk *w, const char *path, int explicit, int depth)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		/* a dangling link inside a directory is not an input */
		if (explicit || errno != ENOENT)
			skip(w, path, -errno);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (seen(w, &st)) {
			if (!w->err)
				skip(w, path, -ELOOP);
			return;
		}
		visit_dir(w, path, depth);
		return;
	}
	size_t n = strlen(path);
	/* In a directory only traces are inputs; a file named on the command
	 * line is one whatever its name (and is refused if it is not). */
	if (!explicit && (n < 5 || strcmp(path + n - 5, ".prec")))
		return;
	if (!S_ISREG(st.st_mode)) {
		skip(w, path, -EINVAL);
		return;
	}
	if (seen(w, &st))   /* the same file named twice: once is enough */
		return;
	probe(w, path);
}

static int host_wanted(const struct ana_dataset_opts *o, const char *host)
{
	if (!o || !o->nhosts)
		return 1;
	for (size_t i = 0; i < o->nhosts; i++)
		if (!strcmp(o->hosts[i], host))
			return 1;
	return 0;
}

static int in_window(const struct ana_dataset_opts *o, const struct ana_dataset_file *f)
{
	if (!o || !o->windowed)
		return 1;
	uint64_t a = f->start, b = f->end;
	if (o->wall) {
		a = ana_dataset_wall(f, f->start);
		b = ana_dataset_wall(f, f->end);
		if (!f->realtime_ns)   /* no clock reference: cannot tell, keep */
			return 1;
	}
	return b >= o->lo && a <= o->hi;
}

/* Order: host, start, then the better copy first (whole over open over
 * torn, then the larger), then path: equal inputs give equal datasets. */
static int cmp_files(const void *pa, const void *pb)
{
	const struct ana_dataset_file *a = pa, *b = pb;
	int c = strcmp(a->host, b->host);
	if (c)
		return c;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->realtime_ns != b->realtime_ns)
		return a->realtime_ns < b->realtime_ns ? -1 : 1;
	if (a->state != b->state)
		return a->state < b->state ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return strcmp(a->path, b->path);
}

/* Same host, same recording start to the nanosecond, same clock
 * reference: the same file's bytes (or a prefix of them). */
static int same_data(const struct ana_dataset_file *a, const struct ana_dataset_file *b)
{
	return a->host == b->host && a->start == b->start &&
	       a->realtime_ns == b->realtime_ns && a->monotonic_ns == b->monotonic_ns;
}

static void group(struct walk *w, const struct ana_dataset_opts *o)
{
	struct ana_dataset *ds = w->ds;
	prec_sort(w->all, w->nall, sizeof(*w->all), cmp_files);
	ds->files = calloc(w->nall ? w->nall : 1, sizeof(*ds->files));
	if (!ds->files) {
		w->err = -ENOMEM;
		return;
	}
	/* Sessions join by section 13: same host, previous file rotated at
	 * exactly this file's start. Each session's files and the previous
	 * kept file of each host are tracked in dataset order. */
	const struct ana_dataset_file *prev = NULL;
	for (size_t i = 0; i < w->nall; i++) {
		struct ana_dataset_file *f = &w->all[i];
		if (prev && same_data(prev, f)) {
			dup_of(w, f->path, prev->path);
			continue;
		}
		prev = f;
		if (!host_wanted(o, f->host) || !in_window(o, f)) {
			ds->outside++;
			continue;
		}
		struct ana_dataset_file *last = ds->nfiles ? &ds->files[ds->nfiles - 1] : NULL;
		if (last && last->host == f->host && last->rotated && last->end == f->start) {
			f->session = last->session;
			f->session_no = last->session_no;
		} else {
			f->session_no = ds->nsessions++;
		}
		if (!last || last->host != f->host)
			ds->nhosts++;
		if (!ds->nfiles || f->start < ds->start)
			ds->start = f->start;
		ds->files[ds->nfiles++] = *f;
	}
}

int ana_dataset_open(struct ana_dataset **out, char *const *inputs, size_t n,
		     const struct ana_dataset_opts *opts)
{
	struct ana_dataset *ds = calloc(1, sizeof(*ds));
	*out = NULL;
	if (!ds)
		return -ENOMEM;
	ana_strpool_init(&ds->pool);
	struct walk w = { .ds = ds };
	for (size_t i = 0; i < n && !w.err; i++)
		visit(&w, inputs[i], 1, 0);
	if (!w.err)
		group(&w, opts);
	free(w.all);
	free(w.seen);
	if (w.err) {
		ana_dataset_free(ds);
		return w.err;
	}
	*out = ds;
	return 0;
}

void ana_dataset_free(struct ana_dataset *ds)
{
	if (!ds)
		return;
	free(ds->files);
	free(ds->skipped);
	free(ds->dups);
	free(ds->events);
	ana_strpool_release(&ds->pool);
	free(ds);
}
