/*
 * symbolize.c - pid + ip + time -> mapping -> object -> symbol.
 *
 * Why it looks like this: the analyzer streams a trace, so pass 1 only
 * appends copies of the few packet kinds it needs (Mmap, fork/exec
 * TaskEvents, SymbolTable chunks) to flat arrays, a mapping's file (path
 * and build-id) kept once however many mappings name it: the mappings are
 * what grows with a system-wide trace's length. ana_symbols_finish()
 * sorts them once, links every file to its object and (optionally)
 * replaces embedded symbols by richer ones from a --symfs directory. After
 * finish nothing is modified, so ana_symbols_resolve() only reads and may
 * be called from several threads at once.
 *
 * Address spaces over time. A process's address space is the set of
 * mappings recorded for its pid between the start of its "generation" and
 * the next one. A generation starts at a fork that created the pid (the
 * child then also sees the parent's mappings as they were at the fork) or
 * at an exec (a fresh space: only mappings recorded at or after the exec
 * count). Among the mappings of the generation that cover ip, the newest
 * one recorded at or before the sample's time wins (a later mmap over the
 * same range replaces the older one); if none is that old, the oldest later
 * one is used (a synthesized /proc map can carry a time a little after the
 * first samples of its own stream).
 *
 * Object addresses. ELF symbol starts are st_value. A user ip becomes
 * file_off = ip - map.start + map.pgoff, then the ELF vaddr through the
 * PT_LOAD segment holding file_off (SymbolTable.load_offsets/vaddrs/sizes),
 * or file_off + load_bias when segments are absent. struct ana_sym.dso_off
 * is that vaddr when the object's table is known (what addr2line/nm use),
 * else the file offset. Kernel and perf-map tables are absolute.
 */
/* strdup, open, mmap: POSIX, present on Linux and macOS alike */
#define _POSIX_C_SOURCE 200809L

#include "analyzer/symbols/symbolize.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/symbols/debuginfod.h"
#include "format/base/elf.h"
#include "format/base/hashmap.h"
#include "format/reader.h"
#include "format/unwind/cfi.h"

#define KERNEL_DSO "[kernel.kallsyms]"
#define MAX_FORK_DEPTH 64
/* How many earlier symbols a lookup inspects for one that contains the
 * address (nested or overlapping symbols). */
#define SYM_BACKSCAN 16

/* ---- string arena: every string the object hands out lives here */

struct arena_blk {
	struct arena_blk *next;
	size_t used, cap;
	char data[];
};

struct arena {
	struct arena_blk *head;
};

static void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_blk *b = a->head;

	n = (n + 7) & ~(size_t)7;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 60000 ? n : 60000;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->cap = cap;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	b->used += n;
	return b->data + b->used - n;
}

static const char *arena_strdup(struct arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = arena_alloc(a, n);

	if (d)
		memcpy(d, s, n);
	return d;
}

static void arena_release(struct arena *a)
{
	while (a->head) {
		struct arena_blk *n = a->head->next;

		free(a->head);
		a->head = n;
	}
}

/* ---- growable arrays */

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > ((size_t)-1 / 2) / elem)
			return -ENOMEM;
		ncap *= 2;
	}
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

/* ---- records kept from pass 1 */

struct sym {
	uint64_t start, size;
	const char *name;
};

struct seg {
	uint64_t offset, vaddr, size;
};

/* One section of an object's unwind tables, assembled from the pieces
 * of UnwindTable packets (calloc'd at the section's size). */
struct usec {
	uint8_t *data;
	uint64_t size, addr;
};

/* Sections larger than this are refused (the largest .eh_frame of a
 * Debian system, libLLVM's, is 9 MiB). */
#define USEC_MAX (256ull << 20)

/* One symbol source: an ELF object, the kernel, a module, a perf map, or an
 * object that could not be read. Chunks of the same table are merged.
 * UnwindTable packets attach their sections to the ELF object of the same
 * path and build-id (creating it when no SymbolTable names it). */
struct obj {
	int kind;                 /* Perfrec__SymbolTable__Kind */
	const char *path;
	const uint8_t *bid;
	size_t bid_len;
	int32_t pid;              /* PERF_MAP */
	uint64_t load_bias;
	struct seg *segs;
	size_t nsegs;
	struct sym *syms;
	size_t nsyms, cap;
	const char *reason;
	int from_symfs;
	struct usec usec[3];      /* by UnwindSection.Kind */
	struct prec_cfi_table *cfi;   /* built by finish() */
};

/* A file that mappings name: its path and build-id, kept once however
 * many processes map it (a system-wide trace maps libc thousands of
 * times), with the object finish() links it to. */
struct mfile {
	const char *path;
	const uint8_t *bid;
	size_t bid_len;
	uint64_t h;
	struct obj *obj;          /* linked by finish(); NULL = no table */
};

/* One Mmap packet: what lookups by pid, address and time read, and its
 * file by index (56 bytes: a trace holds one per mapping of every process
 * it saw). */
struct map {
	uint32_t pid;
	uint32_t file;            /* index in ana_symbols.files */
	uint64_t start, end, pgoff, time, seq;
	/* largest end among this pid's maps up to this one (in sorted
	 * order): a backward scan for ip stops where max_end <= ip */
	uint64_t max_end;
};

enum { EV_FORK, EV_EXEC };

struct task_ev {
	uint32_t pid, ppid;
	uint64_t time, seq;
	int kind;
};

struct ksym {
	uint64_t start, size;
	const char *name;
	const char *dso;
};

struct ana_symbols {
	struct arena arena;
	char *symfs;
	uint64_t seq;
	int finished;

	struct map *maps;
	size_t nmaps, cmaps;
	struct mfile *files;
	size_t nfiles, cfiles;
	struct prec_hashidx fidx;   /* (path, build-id) -> files[] */
	struct task_ev *evs;
	size_t nevs, cevs;
	struct obj **objs;
	size_t nobjs, cobjs;

	/* built by finish() */
	struct obj **by_bid;      /* ELF/UNAVAILABLE objects with a build-id */
	size_t nby_bid;
	struct obj **by_path;     /* ELF/UNAVAILABLE objects */
	size_t nby_path;
	struct obj **perfmaps;    /* PERF_MAP, by pid */
	size_t nperfmaps;
	struct ksym *ksyms;       /* kernel + modules, by start */
	size_t nksyms;
};

struct ana_symbols *ana_symbols_new(void)
{
	return calloc(1, sizeof(struct ana_symbols));
}

static void obj_free(struct obj *o)
{
	if (!o)
		return;
	free(o->segs);
	free(o->syms);
	prec_cfi_table_free(o->cfi);
	for (int i = 0; i < 3; i++)
		free(o->usec[i].data);
	free(o);
}

void ana_symbols_free(struct ana_symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nobjs; i++)
		obj_free(s->objs[i]);
	free(s->objs);
	free(s->maps);
	free(s->files);
	prec_hashidx_release(&s->fidx);
	free(s->evs);
	free(s->by_bid);
	free(s->by_path);
	free(s->perfmaps);
	free(s->ksyms);
	free(s->symfs);
	arena_release(&s->arena);
	free(s);
}

int ana_symbols_set_symfs(struct ana_symbols *s, const char *dir)
{
	char *d;

	if (!s || !dir || !*dir)
		return -EINVAL;
	d = strdup(dir);
	if (!d)
		return -ENOMEM;
	free(s->symfs);
	s->symfs = d;
	return 0;
}

static const uint8_t *copy_bytes(struct arena *a, const ProtobufCBinaryData *b)
{
	uint8_t *d;

	if (!b->len)
		return NULL;
	d = arena_alloc(a, b->len);
	if (d)
		memcpy(d, b->data, b->len);
	return d;
}

static int bid_eq(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	return al == bl && (!al || memcmp(a, b, al) == 0);
}

static uint64_t file_hash(const void *ctx, size_t i)
{
	return ((const struct ana_symbols *)ctx)->files[i].h;
}

/* The index of the file (path, bid) in s->files, added when new: 0 or
 * more, or -ENOMEM. */
static long file_of(struct ana_symbols *s, const char *path,
		    const ProtobufCBinaryData *bid)
{
	size_t plen = strlen(path);
	uint64_t h = prec_hash_bytes(path, plen) ^
		     prec_hash_u64(bid->len ? prec_hash_bytes(bid->data, bid->len) : 0);
	size_t k;

	if (s->nfiles) {
		for (k = prec_hashidx_start(&s->fidx, h); s->fidx.slots[k];
		     k = prec_hashidx_next(&s->fidx, k)) {
			const struct mfile *f = &s->files[s->fidx.slots[k] - 1];

			if (f->h == h && bid_eq(f->bid, f->bid_len, bid->data, bid->len) &&
			    !strcmp(f->path, path))
				return (long)(s->fidx.slots[k] - 1);
		}
	}
	if (s->nfiles >= UINT32_MAX ||
	    grow((void **)&s->files, &s->cfiles, s->nfiles + 1, sizeof(*s->files)) ||
	    prec_hashidx_reserve(&s->fidx, s->nfiles, 64, file_hash, s))
		return -ENOMEM;
	struct mfile *f = &s->files[s->nfiles];
	memset(f, 0, sizeof(*f));
	f->h = h;
	if (!(f->path = arena_strdup(&s->arena, path)))
		return -ENOMEM;
	if (bid->len) {
		if (!(f->bid = copy_bytes(&s->arena, bid)))
			return -ENOMEM;
		f->bid_len = bid->len;
	}
	for (k = prec_hashidx_start(&s->fidx, h); s->fidx.slots[k];
	     k = prec_hashidx_next(&s->fidx, k))
		;
	s->fidx.slots[k] = (uint32_t)++s->nfiles;
	return (long)(s->nfiles - 1);
}

static int add_mmap(struct ana_symbols *s, const struct prec_packet *p)
{
	const Perfrec__Mmap *m = p->pkt->mmap;
	const char *name = NULL;
	struct map *mp;
	long file;
	int ret;

	if (!m || !m->len || m->start + m->len < m->start)
		return 0;   /* nothing to map (or wraps): ignore */
	if (m->filename && p->frame)
		name = prec_frame_string(p->frame, m->filename);
	file = file_of(s, name ? name : "[unknown]", &m->build_id);
	if (file < 0)
		return (int)file;
	ret = grow((void **)&s->maps, &s->cmaps, s->nmaps + 1, sizeof(*s->maps));
	if (ret)
		return ret;
	mp = &s->maps[s->nmaps];
	memset(mp, 0, sizeof(*mp));
	mp->pid = m->pid;
	mp->file = (uint32_t)file;
	mp->start = m->start;
	mp->end = m->start + m->len;
	mp->pgoff = m->pgoff;
	mp->time = p->time;
	mp->seq = s->seq++;
	s->nmaps++;
	return 0;
}

static int add_task(struct ana_symbols *s, const struct prec_packet *p)
{
	const Perfrec__TaskEvent *t = p->pkt->task;
	struct task_ev *e;
	int ret, kind;

	if (!t)
		return 0;
	if (t->kind == PERFREC__TASK_EVENT__KIND__FORK && t->pid != t->ppid)
		kind = EV_FORK;   /* a new process; thread creation shares maps */
	else if (t->kind == PERFREC__TASK_EVENT__KIND__COMM && t->exec)
		kind = EV_EXEC;
	else
		return 0;
	ret = grow((void **)&s->evs, &s->cevs, s->nevs + 1, sizeof(*s->evs));
	if (ret)
		return ret;
	e = &s->evs[s->nevs++];
	e->pid = t->pid;
	e->ppid = t->ppid;
	e->time = p->time;
	e->seq = s->seq++;
	e->kind = kind;
	return 0;
}

static int same_obj(const struct obj *o, int kind, const char *path,
		    const ProtobufCBinaryData *bid, int32_t pid)
{
	return o->kind == kind && o->pid == pid &&
	       bid_eq(o->bid, o->bid_len, bid->data, bid->len) &&
	       strcmp(o->path, path) == 0;
}

/* A new object, appended to s->objs (which owns it). NULL on ENOMEM. */
static struct obj *obj_add(struct ana_symbols *s, int kind, const char *path,
			   const ProtobufCBinaryData *bid, int32_t pid)
{
	struct obj *o;

	if (grow((void **)&s->objs, &s->cobjs, s->nobjs + 1, sizeof(*s->objs)))
		return NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	s->objs[s->nobjs++] = o;
	o->kind = kind;
	o->pid = pid;
	o->path = arena_strdup(&s->arena, path);
	if (!o->path)
		return NULL;
	if (bid->len) {
		o->bid = copy_bytes(&s->arena, bid);
		if (!o->bid)
			return NULL;
		o->bid_len = bid->len;
	}
	return o;
}

static int take_segs(struct obj *o, const uint64_t *off, size_t noff, const uint64_t *va,
		     size_t nva, const uint64_t *sz, size_t nsz)
{
	size_t n = noff < nva ? noff : nva;

	if (nsz < n)
		n = nsz;
	if (!n || o->segs)
		return 0;
	o->segs = calloc(n, sizeof(*o->segs));
	if (!o->segs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		o->segs[i].offset = off[i];
		o->segs[i].vaddr = va[i];
		o->segs[i].size = sz[i];
	}
	o->nsegs = n;
	return 0;
}

static int add_symtab(struct ana_symbols *s, const struct prec_packet *p)
{
	const Perfrec__SymbolTable *t = p->pkt->symbols;
	const char *path;
	struct obj *o = NULL;
	uint64_t start = 0;
	size_t n;
	int ret;

	if (!t)
		return 0;
	path = t->path ? t->path : "";
	if (t->kind == PERFREC__SYMBOL_TABLE__KIND__KERNEL && !*path)
		path = KERNEL_DSO;
	/* Chunks of one table arrive one after the other: check the newest
	 * object first, then the rest. */
	for (size_t i = s->nobjs; i-- > 0;) {
		if (same_obj(s->objs[i], t->kind, path, &t->build_id, t->pid)) {
			o = s->objs[i];
			break;
		}
	}
	/* An object that so far has only unwind tables (they came first)
	 * takes the symbols of its file, build-id missing on one side or
	 * not (add_unwind() matches the same way). */
	for (size_t i = s->nobjs; !o && t->kind == PERFREC__SYMBOL_TABLE__KIND__ELF && i-- > 0;) {
		struct obj *c = s->objs[i];
		if (c->kind == PERFREC__SYMBOL_TABLE__KIND__ELF && !c->nsyms && c->pid == 0 &&
		    (c->usec[0].data || c->usec[2].data) && strcmp(c->path, path) == 0 &&
		    (!c->bid_len || !t->build_id.len ||
		     bid_eq(c->bid, c->bid_len, t->build_id.data, t->build_id.len)))
			o = c;
	}
	if (!o && !(o = obj_add(s, t->kind, path, &t->build_id, t->pid)))
		return -ENOMEM;
	o->load_bias = t->load_bias ? t->load_bias : o->load_bias;
	if (t->reason && *t->reason && !o->reason) {
		o->reason = arena_strdup(&s->arena, t->reason);
		if (!o->reason)
			return -ENOMEM;
	}
	ret = take_segs(o, t->load_offsets, t->n_load_offsets, t->load_vaddrs,
			t->n_load_vaddrs, t->load_sizes, t->n_load_sizes);
	if (ret)
		return ret;
	/* starts, sizes and names are parallel; a table whose arrays
	 * disagree is damaged: keep the common prefix. */
	n = t->n_starts;
	if (t->n_sizes < n)
		n = t->n_sizes;
	if (t->n_names < n)
		n = t->n_names;
	ret = grow((void **)&o->syms, &o->cap, o->nsyms + n, sizeof(*o->syms));
	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++) {
		const char *name = p->frame ?
			prec_frame_string(p->frame, t->names[i]) : NULL;
		struct sym *sy;

		start += t->starts[i];   /* delta-coded; wraps harmlessly */
		if (!name || !*name)
			continue;
		sy = &o->syms[o->nsyms++];
		sy->start = start;
		sy->size = t->sizes[i];
		sy->name = arena_strdup(&s->arena, name);
		if (!sy->name)
			return -ENOMEM;
	}
	return 0;
}

static int is_user_obj(const struct obj *o);

/* Places each section piece at its offset. A piece that disagrees with
 * the section's size as first seen, or lies outside it, is dropped (the
 * rest of the table still unwinds what it covers). */
static int add_unwind(struct ana_symbols *s, const struct prec_packet *p)
{
	const Perfrec__UnwindTable *t = p->pkt->unwind;
	const char *path;
	struct obj *o = NULL;
	int ret;

	if (!t || t->kind != PERFREC__UNWIND_TABLE__KIND__ELF)
		return 0;
	path = t->path ? t->path : "";
	/* The object of the same path and build-id; a build-id missing on
	 * either side does not make another object (the symbols and the
	 * unwind tables of one file must stay together). */
	for (size_t i = s->nobjs; i-- > 0;) {
		struct obj *c = s->objs[i];
		if (is_user_obj(c) && c->pid == 0 && strcmp(c->path, path) == 0 &&
		    (!c->bid_len || !t->build_id.len ||
		     bid_eq(c->bid, c->bid_len, t->build_id.data, t->build_id.len))) {
			o = c;
			break;
		}
	}
	if (o && !o->bid_len && t->build_id.len) {
		o->bid = copy_bytes(&s->arena, &t->build_id);
		if (!o->bid)
			return -ENOMEM;
		o->bid_len = t->build_id.len;
	}
	if (!o && !(o = obj_add(s, PERFREC__SYMBOL_TABLE__KIND__ELF, path, &t->build_id, 0)))
		return -ENOMEM;
	if (!o->load_bias)
		o->load_bias = t->load_bias;
	ret = take_segs(o, t->load_offsets, t->n_load_offsets, t->load_vaddrs,
			t->n_load_vaddrs, t->load_sizes, t->n_load_sizes);
	if (ret)
		return ret;
	for (size_t i = 0; i < t->n_sections; i++) {
		const Perfrec__UnwindSection *us = t->sections[i];
		struct usec *u;

		if (!us || (unsigned)us->kind > 2 || !us->size || us->size > USEC_MAX ||
		    us->offset > us->size || us->data.len > us->size - us->offset)
			continue;
		u = &o->usec[us->kind];
		if (!u->data) {
			u->data = calloc(1, (size_t)us->size);
			if (!u->data)
				return -ENOMEM;
			u->size = us->size;
			u->addr = us->addr;
		} else if (u->size != us->size || u->addr != us->addr) {
			continue;
		}
		if (us->data.len)
			memcpy(u->data + us->offset, us->data.data, us->data.len);
	}
	return 0;
}

int ana_symbols_add(struct ana_symbols *s, const struct prec_packet *p)
{
	if (!s || !p || !p->pkt)
		return -EINVAL;
	if (s->finished)
		return -EBUSY;
	switch (p->pkt->data_case) {
	case PERFREC__PACKET__DATA_MMAP:
		return add_mmap(s, p);
	case PERFREC__PACKET__DATA_TASK:
		return add_task(s, p);
	case PERFREC__PACKET__DATA_SYMBOLS:
		return add_symtab(s, p);
	case PERFREC__PACKET__DATA_UNWIND:
		return add_unwind(s, p);
	default:
		return 0;
	}
}

/* ---- finish: sort and link */

/* qsort() must not see a NULL base, even for 0 elements (UBSan) */
static void sort(void *base, size_t n, size_t size,
		 int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_map(const void *pa, const void *pb)
{
	const struct map *a = pa, *b = pb;
	int c = cmp_u64(a->pid, b->pid);

	if (!c)
		c = cmp_u64(a->start, b->start);
	if (!c)
		c = cmp_u64(a->seq, b->seq);
	return c;
}

static int cmp_ev(const void *pa, const void *pb)
{
	const struct task_ev *a = pa, *b = pb;
	int c = cmp_u64(a->pid, b->pid);

	if (!c)
		c = cmp_u64(a->time, b->time);
	if (!c)
		c = cmp_u64(a->seq, b->seq);
	return c;
}

static int cmp_sym(const void *pa, const void *pb)
{
	const struct sym *a = pa, *b = pb;
	int c = cmp_u64(a->start, b->start);

	/* bigger first at one start, so the backward scan meets it last */
	return c ? c : cmp_u64(a->size, b->size);
}

static int cmp_ksym(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;
	int c = cmp_u64(a->start, b->start);

	return c ? c : cmp_u64(a->size, b->size);
}

static int cmp_bid(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	size_t n = al < bl ? al : bl;
	int c = n ? memcmp(a, b, n) : 0;

	return c ? c : cmp_u64(al, bl);
}

/* Tie-break: an object that has symbols (ELF) before an UNAVAILABLE one. */
static int cmp_obj_kind(const struct obj *a, const struct obj *b)
{
	int c = cmp_u64(b->nsyms != 0, a->nsyms != 0);

	return c ? c : cmp_u64((uint64_t)a->kind, (uint64_t)b->kind);
}

static int cmp_obj_bid(const void *pa, const void *pb)
{
	const struct obj *a = *(struct obj *const *)pa;
	const struct obj *b = *(struct obj *const *)pb;
	int c = cmp_bid(a->bid, a->bid_len, b->bid, b->bid_len);

	return c ? c : cmp_obj_kind(a, b);
}

static int cmp_obj_path(const void *pa, const void *pb)
{
	const struct obj *a = *(struct obj *const *)pa;
	const struct obj *b = *(struct obj *const *)pb;
	int c = strcmp(a->path, b->path);

	return c ? c : cmp_obj_kind(a, b);
}

static int cmp_obj_pid(const void *pa, const void *pb)
{
	const struct obj *a = *(struct obj *const *)pa;
	const struct obj *b = *(struct obj *const *)pb;

	return cmp_u64((uint32_t)a->pid, (uint32_t)b->pid);
}

static struct obj *find_by_bid(const struct ana_symbols *s,
			       const uint8_t *bid, size_t len)
{
	size_t lo = 0, hi = s->nby_bid;

	while (lo < hi) {   /* first object with bid >= key */
		size_t mid = lo + (hi - lo) / 2;
		const struct obj *o = s->by_bid[mid];

		if (cmp_bid(o->bid, o->bid_len, bid, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->nby_bid &&
	    bid_eq(s->by_bid[lo]->bid, s->by_bid[lo]->bid_len, bid, len))
		return s->by_bid[lo];
	return NULL;
}

static struct obj *find_by_path(const struct ana_symbols *s, const char *path)
{
	size_t lo = 0, hi = s->nby_path;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(s->by_path[mid]->path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->nby_path && strcmp(s->by_path[lo]->path, path) == 0)
		return s->by_path[lo];
	return NULL;
}

/* Build-id first (it names the exact file), then the path. A table found
 * by path whose build-id differs from the mapping's is a different file. */
static struct obj *find_obj(const struct ana_symbols *s, const char *path,
			    const uint8_t *bid, size_t bid_len)
{
	struct obj *o = NULL;

	if (bid_len)
		o = find_by_bid(s, bid, bid_len);
	if (!o) {
		o = find_by_path(s, path);
		if (o && bid_len && o->bid_len &&
		    !bid_eq(o->bid, o->bid_len, bid, bid_len))
			o = NULL;
	}
	return o;
}

static int is_user_obj(const struct obj *o)
{
	return o->kind == PERFREC__SYMBOL_TABLE__KIND__ELF ||
	       o->kind == PERFREC__SYMBOL_TABLE__KIND__UNAVAILABLE;
}

static int build_obj_index(struct ana_symbols *s)
{
	size_t nk = 0;

	free(s->by_bid);
	free(s->by_path);
	free(s->perfmaps);
	free(s->ksyms);
	s->by_bid = s->by_path = s->perfmaps = NULL;
	s->ksyms = NULL;
	s->nby_bid = s->nby_path = s->nperfmaps = s->nksyms = 0;
	if (s->nobjs) {
		s->by_bid = calloc(s->nobjs, sizeof(*s->by_bid));
		s->by_path = calloc(s->nobjs, sizeof(*s->by_path));
		s->perfmaps = calloc(s->nobjs, sizeof(*s->perfmaps));
		if (!s->by_bid || !s->by_path || !s->perfmaps)
			return -ENOMEM;
	}
	for (size_t i = 0; i < s->nobjs; i++) {
		struct obj *o = s->objs[i];

		if (is_user_obj(o)) {
			s->by_path[s->nby_path++] = o;
			if (o->bid_len)
				s->by_bid[s->nby_bid++] = o;
		} else if (o->kind == PERFREC__SYMBOL_TABLE__KIND__PERF_MAP) {
			s->perfmaps[s->nperfmaps++] = o;
		} else if (o->kind == PERFREC__SYMBOL_TABLE__KIND__KERNEL ||
			   o->kind == PERFREC__SYMBOL_TABLE__KIND__KERNEL_MODULE) {
			nk += o->nsyms;
		}
	}
	sort(s->by_bid, s->nby_bid, sizeof(*s->by_bid), cmp_obj_bid);
	sort(s->by_path, s->nby_path, sizeof(*s->by_path), cmp_obj_path);
	sort(s->perfmaps, s->nperfmaps, sizeof(*s->perfmaps), cmp_obj_pid);

	/* Kernel and module symbols in one absolute address space. */
	if (nk) {
		s->ksyms = calloc(nk, sizeof(*s->ksyms));
		if (!s->ksyms)
			return -ENOMEM;
	}
	for (size_t i = 0; i < s->nobjs; i++) {
		struct obj *o = s->objs[i];

		if (o->kind != PERFREC__SYMBOL_TABLE__KIND__KERNEL &&
		    o->kind != PERFREC__SYMBOL_TABLE__KIND__KERNEL_MODULE)
			continue;
		for (size_t j = 0; j < o->nsyms; j++) {
			struct ksym *k = &s->ksyms[s->nksyms++];

			k->start = o->syms[j].start;
			k->size = o->syms[j].size;
			k->name = o->syms[j].name;
			k->dso = o->kind == PERFREC__SYMBOL_TABLE__KIND__KERNEL ?
				 KERNEL_DSO : o->path;
		}
	}
	sort(s->ksyms, s->nksyms, sizeof(*s->ksyms), cmp_ksym);
	return 0;
}

/* Replace (or supply) the symbols of o from an ELF file parsed by the
 * portable reader. The embedded segments stay when the file has none. */
static int obj_take_elf(struct ana_symbols *s, struct obj *o, struct prec_elf *e)
{
	struct sym *syms = NULL;
	struct seg *segs = NULL;

	if (e->nsyms) {
		syms = calloc(e->nsyms, sizeof(*syms));
		if (!syms)
			return -ENOMEM;
	}
	for (size_t i = 0; i < e->nsyms; i++) {
		syms[i].start = e->syms[i].start;
		syms[i].size = e->syms[i].size;
		syms[i].name = arena_strdup(&s->arena, e->syms[i].name);
		if (!syms[i].name) {
			free(syms);
			return -ENOMEM;
		}
	}
	if (e->nsegs) {
		segs = calloc(e->nsegs, sizeof(*segs));
		if (!segs) {
			free(syms);
			return -ENOMEM;
		}
		for (size_t i = 0; i < e->nsegs; i++) {
			segs[i].offset = e->segs[i].offset;
			segs[i].vaddr = e->segs[i].vaddr;
			segs[i].size = e->segs[i].filesz;
		}
		free(o->segs);
		o->segs = segs;
		o->nsegs = e->nsegs;
		o->load_bias = e->load_bias;
	}
	free(o->syms);
	o->syms = syms;
	o->nsyms = o->cap = e->nsyms;
	o->kind = PERFREC__SYMBOL_TABLE__KIND__ELF;
	o->from_symfs = 1;
	return 0;
}

/* Try DIR/.build-id/xx/rest.debug, then DIR/<path>. A file found by path
 * whose build-id disagrees with the known one is not used. 1 = loaded. */
static int symfs_load(struct ana_symbols *s, const char *path,
		      const uint8_t *bid, size_t bid_len, struct prec_elf *e)
{
	size_t dl = strlen(s->symfs);
	char *fn;
	int got = 0;

	fn = malloc(dl + strlen(path) + 2 * 64 + 32);
	if (!fn)
		return -ENOMEM;
	if (bid_len >= 2 && bid_len <= 64) {
		char *q = fn + dl;

		memcpy(fn, s->symfs, dl);
		q += sprintf(q, "/.build-id/%02x/", bid[0]);
		for (size_t i = 1; i < bid_len; i++)
			q += sprintf(q, "%02x", bid[i]);
		strcpy(q, ".debug");
		if (prec_elf_load(fn, e) == 0) {
			if (!e->build_id_len ||
			    bid_eq(e->build_id, e->build_id_len, bid, bid_len))
				got = 1;
			else
				prec_elf_release(e);
		}
	}
	if (!got && path[0] == '/') {
		memcpy(fn, s->symfs, dl);
		strcpy(fn + dl, path);
		if (prec_elf_load(fn, e) == 0) {
			if (!bid_len || !e->build_id_len ||
			    bid_eq(e->build_id, e->build_id_len, bid, bid_len))
				got = 1;
			else
				prec_elf_release(e);
		}
	}
	free(fn);
	return got;
}

/* The richer file of an object: --symfs first, then the debuginfod
 * servers of DEBUGINFOD_URLS (by build-id). 1 = loaded into *e. */
static int richer_load(struct ana_symbols *s, const char *path,
		       const uint8_t *bid, size_t bid_len, struct prec_elf *e)
{
	char *dpath;
	int got = s->symfs ? symfs_load(s, path, bid, bid_len, e) : 0;

	if (got || !bid_len || !ana_debuginfod_enabled())
		return got;
	if (ana_debuginfod_find(bid, bid_len, &dpath) != 0)
		return 0;   /* no server has it (or none answers): the trace's */
	if (prec_elf_load(dpath, e) == 0) {
		if (!e->build_id_len || bid_eq(e->build_id, e->build_id_len, bid, bid_len))
			got = 1;
		else
			prec_elf_release(e);
	}
	free(dpath);
	return got;
}

static int cmp_file(const void *pa, const void *pb)
{
	const struct mfile *a = *(struct mfile *const *)pa;
	const struct mfile *b = *(struct mfile *const *)pb;
	int c = strcmp(a->path, b->path);

	return c ? c : cmp_bid(a->bid, a->bid_len, b->bid, b->bid_len);
}

/* For every file a mapping names (each path and build-id once, in their
 * order), look in symfs and debuginfod (richer_load); a hit overrides the
 * embedded table (or creates one for an object the trace lacks). */
static int apply_symfs(struct ana_symbols *s)
{
	struct mfile **order;
	int ret = 0;

	if (!s->nfiles)
		return 0;
	order = malloc(s->nfiles * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < s->nfiles; i++)
		order[i] = &s->files[i];
	sort(order, s->nfiles, sizeof(*order), cmp_file);
	for (size_t i = 0; i < s->nfiles; i++) {
		struct mfile *m = order[i];
		struct prec_elf e;
		struct obj *o;
		int got;

		if (m->path[0] != '/')
			continue;
		o = find_obj(s, m->path, m->bid, m->bid_len);
		if (o && o->from_symfs)
			continue;
		/* the mapping may lack a build-id the object's table has */
		got = o && !m->bid_len && o->bid_len ?
		      richer_load(s, m->path, o->bid, o->bid_len, &e) :
		      richer_load(s, m->path, m->bid, m->bid_len, &e);
		if (got < 0) {
			ret = got;
			break;
		}
		if (!got)
			continue;
		if (!o) {
			ret = grow((void **)&s->objs, &s->cobjs, s->nobjs + 1,
				   sizeof(*s->objs));
			o = ret ? NULL : calloc(1, sizeof(*o));
			if (!o) {
				prec_elf_release(&e);
				ret = -ENOMEM;
				break;
			}
			s->objs[s->nobjs++] = o;
			o->path = m->path;
			o->bid = m->bid;
			o->bid_len = m->bid_len;
		}
		ret = obj_take_elf(s, o, &e);
		prec_elf_release(&e);
		if (ret)
			break;
		sort(o->syms, o->nsyms, sizeof(*o->syms), cmp_sym);
		ret = build_obj_index(s);
		if (ret)
			break;
	}
	free(order);
	return ret;
}

/* The CFI table of every object that received unwind sections. */
static int build_cfi(struct ana_symbols *s)
{
	for (size_t i = 0; i < s->nobjs; i++) {
		struct obj *o = s->objs[i];
		struct prec_cfi_sections cs;

		if (o->cfi || (!o->usec[0].data && !o->usec[2].data))
			continue;
		memset(&cs, 0, sizeof(cs));
		cs.sz = sizeof(cs);
		cs.eh_frame = o->usec[0].data;
		cs.eh_frame_len = (size_t)o->usec[0].size;
		cs.eh_frame_addr = o->usec[0].addr;
		cs.eh_frame_hdr = o->usec[1].data;
		cs.eh_frame_hdr_len = (size_t)o->usec[1].size;
		cs.eh_frame_hdr_addr = o->usec[1].addr;
		cs.debug_frame = o->usec[2].data;
		cs.debug_frame_len = (size_t)o->usec[2].size;
		o->cfi = prec_cfi_table_new(&cs);
		if (!o->cfi)
			return -ENOMEM;
	}
	return 0;
}

int ana_symbols_finish(struct ana_symbols *s)
{
	int ret;

	if (!s)
		return -EINVAL;
	if (s->finished)
		return 0;
	ret = build_cfi(s);
	if (ret)
		return ret;
	sort(s->maps, s->nmaps, sizeof(*s->maps), cmp_map);
	for (size_t i = 0; i < s->nmaps; i++) {
		struct map *m = &s->maps[i];

		m->max_end = m->end;
		if (i && s->maps[i - 1].pid == m->pid &&
		    s->maps[i - 1].max_end > m->max_end)
			m->max_end = s->maps[i - 1].max_end;
	}
	sort(s->evs, s->nevs, sizeof(*s->evs), cmp_ev);
	for (size_t i = 0; i < s->nobjs; i++)
		sort(s->objs[i]->syms, s->objs[i]->nsyms,
		      sizeof(*s->objs[i]->syms), cmp_sym);
	ret = build_obj_index(s);
	if (ret)
		return ret;
	if (s->symfs || ana_debuginfod_enabled()) {
		ret = apply_symfs(s);
		ana_debuginfod_release();
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < s->nfiles; i++)
		s->files[i].obj = find_obj(s, s->files[i].path, s->files[i].bid,
					   s->files[i].bid_len);
	s->finished = 1;
	return 0;
}

/* ---- resolve */

/* The generation of pid that holds time t: [*g0, *g1), and the fork that
 * started it (NULL when it started with an exec or before the trace). */
static void generation(const struct ana_symbols *s, uint32_t pid, uint64_t t,
		       uint64_t *g0, uint64_t *g1, const struct task_ev **fork)
{
	size_t lo = 0, hi = s->nevs;

	*g0 = 0;
	*g1 = UINT64_MAX;
	*fork = NULL;
	/* first event of pid with time > t */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct task_ev *e = &s->evs[mid];

		if (e->pid < pid || (e->pid == pid && e->time <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->nevs && s->evs[lo].pid == pid)
		*g1 = s->evs[lo].time;
	if (lo > 0 && s->evs[lo - 1].pid == pid) {
		const struct task_ev *e = &s->evs[lo - 1];

		*g0 = e->time;
		if (e->kind == EV_FORK)
			*fork = e;
	}
}

static const struct map *find_map(const struct ana_symbols *s, uint32_t pid,
				  uint64_t ip, uint64_t t, int depth)
{
	const struct map *best = NULL, *later = NULL;
	const struct task_ev *fork;
	uint64_t g0, g1;
	size_t lo = 0, hi = s->nmaps;

	generation(s, pid, t, &g0, &g1, &fork);
	/* first map of pid with start > ip, then walk back over pid's maps */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct map *m = &s->maps[mid];

		if (m->pid < pid || (m->pid == pid && m->start <= ip))
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0) {
		const struct map *m = &s->maps[lo];

		if (m->pid != pid || m->max_end <= ip)
			break;   /* nothing at or before m reaches ip */
		if (ip >= m->end || m->time < g0 || m->time >= g1)
			continue;
		if (m->time <= t) {
			if (!best || m->time > best->time ||
			    (m->time == best->time && m->seq > best->seq))
				best = m;
		} else if (!later || m->time < later->time ||
			   (m->time == later->time && m->seq > later->seq)) {
			later = m;
		}
	}
	if (best)
		return best;
	/* A forked child sees its parent's space as it was at the fork;
	 * anything the child mapped itself was found above. */
	if (fork && depth < MAX_FORK_DEPTH && fork->ppid != pid) {
		const struct map *m = find_map(s, fork->ppid, ip, fork->time,
					       depth + 1);
		if (m)
			return m;
	}
	return later;
}

static const struct sym *find_sym(const struct sym *syms, size_t n,
				  uint64_t addr)
{
	size_t lo = 0, hi = n, i;

	while (lo < hi) {   /* first symbol with start > addr */
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	i = lo - 1;
	/* A zero-size symbol (assembly) runs to the next symbol's start. */
	if (syms[i].size == 0 && lo < n && syms[lo].start > addr)
		return &syms[i];
	for (size_t k = 0; k < SYM_BACKSCAN && k <= i; k++) {
		const struct sym *sy = &syms[i - k];

		if (addr - sy->start < sy->size)
			return sy;
	}
	return NULL;
}

static const struct ksym *find_ksym(const struct ana_symbols *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nksyms, i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ksyms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	i = lo - 1;
	if (s->ksyms[i].size == 0 && lo < s->nksyms && s->ksyms[lo].start > addr)
		return &s->ksyms[i];
	for (size_t k = 0; k < SYM_BACKSCAN && k <= i; k++) {
		const struct ksym *ks = &s->ksyms[i - k];

		if (addr - ks->start < ks->size)
			return ks;
	}
	return NULL;
}

static const struct obj *find_perfmap(const struct ana_symbols *s, uint32_t pid)
{
	size_t lo = 0, hi = s->nperfmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uint32_t)s->perfmaps[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->nperfmaps && (uint32_t)s->perfmaps[lo]->pid == pid)
		return s->perfmaps[lo];
	return NULL;
}

static uint64_t obj_vaddr(const struct obj *o, uint64_t file_off)
{
	for (size_t i = 0; i < o->nsegs; i++) {
		const struct seg *g = &o->segs[i];

		if (file_off >= g->offset && file_off - g->offset < g->size)
			return file_off - g->offset + g->vaddr;
	}
	return file_off + o->load_bias;
}

int ana_symbols_resolve(struct ana_symbols *s, uint32_t pid, uint64_t ip,
			int kernel, uint64_t time, struct ana_sym *out)
{
	const struct map *m;
	const struct obj *pm;

	memset(out, 0, sizeof(*out));
	if (!s || !s->finished)
		return 0;
	if (kernel) {
		const struct ksym *k = find_ksym(s, ip);

		out->kernel = 1;
		out->dso = KERNEL_DSO;
		out->dso_off = ip;
		if (!k)
			return 0;
		out->sym = k->name;
		out->sym_off = ip - k->start;
		out->dso = k->dso;
		return 1;
	}
	m = find_map(s, pid, ip, time, 0);
	if (m) {
		uint64_t file_off = ip - m->start + m->pgoff;
		const struct mfile *f = &s->files[m->file];

		out->dso = f->path;
		out->dso_off = file_off;
		if (f->obj) {
			const struct sym *sy;

			out->dso_off = obj_vaddr(f->obj, file_off);
			sy = find_sym(f->obj->syms, f->obj->nsyms, out->dso_off);
			if (sy) {
				out->sym = sy->name;
				out->sym_off = out->dso_off - sy->start;
				return 1;
			}
		}
	}
	/* JIT code: anonymous memory named by /tmp/perf-PID.map */
	pm = find_perfmap(s, pid);
	if (pm) {
		const struct sym *sy = find_sym(pm->syms, pm->nsyms, ip);

		if (sy) {
			out->sym = sy->name;
			out->sym_off = ip - sy->start;
			if (!m) {
				out->dso = pm->path;
				out->dso_off = ip;
			}
			return 1;
		}
	}
	return 0;
}

int ana_symbols_unwind_table(struct ana_symbols *s, uint32_t pid, uint64_t pc,
			     uint64_t time, const struct prec_cfi_table **table,
			     uint64_t *bias)
{
	const struct map *m;

	if (!s || !s->finished)
		return 0;
	m = find_map(s, pid, pc, time, 0);
	if (!m || !s->files[m->file].obj || !s->files[m->file].obj->cfi)
		return 0;
	*table = s->files[m->file].obj->cfi;
	*bias = pc - obj_vaddr(s->files[m->file].obj, pc - m->start + m->pgoff);
	return 1;
}
