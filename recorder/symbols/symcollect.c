/*
 * symcollect.c - the recorder's symbol collector (see symcollect.h).
 *
 * State:
 *  - procs: pid -> sorted, non-overlapping mappings (a new mapping trims
 *    what it covers, like the kernel does), plus the addresses the pid hit
 *    outside any ELF mapping (candidates for its perf-PID.map);
 *  - objs: one per (path, build-id); the file offsets hit in it since the
 *    last write, and the symbol starts already written;
 *  - the kernel symbols read at new(), with a state byte per symbol
 *    (0 untouched, 1 hit, 2 written);
 *  - pending: hits whose pid or mapping was not known yet.
 *
 * Hit handling is O(log maps) per address and touches no files; all file
 * reading happens in rec_symcollect_write(), which is what stats.time_ns
 * measures (plus the kallsyms read in new()).
 */
#include "recorder/symbols/symcollect.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recorder/encode/decode.h"
#include "recorder/symbols/elfsym.h"
#include "recorder/symbols/kallsyms.h"
#include "recorder/symbols/perfmap.h"

#define NO_OBJ UINT32_MAX
#define EMPTY_KEY UINT64_MAX
/* PERF_CONTEXT_* markers in callchains (uapi perf_event.h): every value
 * at or above PERF_CONTEXT_MAX is a marker, not an address. */
#define CTX_MAX ((uint64_t)-4095)
#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)
#define KERNEL_PATH "[kernel.kallsyms]"
#define VDSO_PATH "[vdso]"
/* Approximate bytes an interned name adds besides its text: iid varint,
 * field tags and length prefixes of the InternedString entry. */
#define NAME_OVERHEAD 4

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- u64 set / map: open addressing, linear probing, EMPTY_KEY free */

struct u64map {
	uint64_t *keys;
	uint64_t *vals;   /* NULL for a set */
	size_t cap, n;
	int with_vals;
};

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	return k ^ (k >> 33);
}

static void u64map_release(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->cap = m->n = 0;
}

static void u64map_clear(struct u64map *m)
{
	if (m->keys)
		memset(m->keys, 0xff, m->cap * sizeof(*m->keys));
	m->n = 0;
}

static uint64_t *u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = mix(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return m->with_vals ? &m->vals[i] : &m->keys[i];
		if (m->keys[i] == EMPTY_KEY)
			return NULL;
	}
}

static int u64map_put(struct u64map *m, uint64_t key, uint64_t val);

static int u64map_grow(struct u64map *m)
{
	struct u64map nm = { 0 };
	size_t cap = m->cap ? m->cap * 2 : 64;

	nm.with_vals = m->with_vals;
	nm.cap = cap;
	nm.keys = malloc(cap * sizeof(*nm.keys));
	if (m->with_vals)
		nm.vals = malloc(cap * sizeof(*nm.vals));
	if (!nm.keys || (m->with_vals && !nm.vals)) {
		u64map_release(&nm);
		return -ENOMEM;
	}
	memset(nm.keys, 0xff, cap * sizeof(*nm.keys));
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] != EMPTY_KEY)
			u64map_put(&nm, m->keys[i],
				   m->with_vals ? m->vals[i] : 0);
	u64map_release(m);
	*m = nm;
	return 0;
}

/* Inserts or overwrites. 1 = added, 0 = was there, < 0 error. */
static int u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	size_t i;

	if (key == EMPTY_KEY)
		return 0;   /* not representable; an ip of -1 names nothing */
	if ((m->n + 1) * 4 > m->cap * 3) {
		int ret = u64map_grow(m);

		if (ret)
			return ret;
	}
	for (i = mix(key) & (m->cap - 1); m->keys[i] != EMPTY_KEY;
	     i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			if (m->with_vals)
				m->vals[i] = val;
			return 0;
		}
	}
	m->keys[i] = key;
	if (m->with_vals)
		m->vals[i] = val;
	m->n++;
	return 1;
}

/* ---- objects and processes */

struct sc_obj {
	char *path;
	uint8_t bid[64];
	size_t bid_len;
	uint32_t pid;             /* a process that mapped it (for /proc) */
	uint64_t start, end;      /* that mapping (for map_files) */
	struct u64map hits;       /* file offsets hit since the last write */
	struct u64map done;       /* symbol starts written */
	int written;              /* the table header went out */
	int full_done;            /* full table / UNAVAILABLE: nothing more */
	uint8_t file_bid[64];     /* build-id of the file first read */
	size_t file_bid_len;
	uint32_t next;            /* hash chain */
};

struct sc_map {
	uint64_t start, end, pgoff;
	uint32_t obj;             /* NO_OBJ: not an ELF file (anon ...) */
};

struct sc_proc {
	uint32_t pid;
	int known;                /* maps came from /proc, a fork or an exec */
	struct sc_map *maps;      /* sorted by start, non-overlapping */
	size_t n, cap;
	/* The space before the last exec: rings are drained CPU by CPU, so
	 * samples taken before an exec can be decoded after it. */
	struct sc_map *old;
	size_t nold;
	struct u64map jit_hits;   /* ips outside ELF mappings */
	struct u64map jit_done;   /* perf-map symbol starts written */
};

struct pending {
	uint32_t pid;
	int ret_addr;
	uint64_t ip;
};

#define HCACHE_BITS 14
#define HCACHE_SIZE (1u << HCACHE_BITS)
/* tag = gen << 2 | kernel << 1 | ret_addr; gen 0 never matches (empty) */
struct hit_slot {
	uint64_t ip;
	uint32_t pid;
	uint32_t tag;
};

struct rec_symcollect {
	struct rec_symcollect_opts o;

	struct sc_obj **objs;
	size_t nobjs, cobjs;
	struct u64map obj_index;  /* hash(path, bid) -> first obj + 1 */

	struct sc_proc **procs;
	size_t nprocs, cprocs;
	struct u64map proc_index; /* pid -> proc index */

	struct pending *pend;
	size_t npend, cpend;

	/* Hits already recorded, so the hot path skips the map and symbol
	 * searches for the addresses callchains repeat (nearly all of them).
	 * Direct-mapped, no eviction order: a collision only costs the slow
	 * path once more. A user entry is valid for one `gen` of the address
	 * spaces: any mapping change (mmap, fork, exec) bumps gen. */
	struct hit_slot *hcache;  /* [HCACHE_SIZE] */
	uint32_t gen;

	struct rec_kallsyms ksyms;
	uint8_t *kstate;          /* per kernel symbol: 0, 1 hit, 2 written */
	int kernel_hits;          /* unwritten kernel hits exist */
	int kernel_noted;         /* hidden/unavailable kernel recorded */

	struct rec_symcollect_stats st;
};

static uint64_t hash_str(const char *s, const uint8_t *b, size_t bl)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	for (size_t i = 0; i < bl; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h == EMPTY_KEY ? 0 : h;
}

static void obj_free(struct sc_obj *o)
{
	if (!o)
		return;
	free(o->path);
	u64map_release(&o->hits);
	u64map_release(&o->done);
	free(o);
}

static void proc_free(struct sc_proc *p)
{
	if (!p)
		return;
	free(p->maps);
	free(p->old);
	u64map_release(&p->jit_hits);
	u64map_release(&p->jit_done);
	free(p);
}

void rec_symcollect_free(struct rec_symcollect *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->nobjs; i++)
		obj_free(sc->objs[i]);
	for (size_t i = 0; i < sc->nprocs; i++)
		proc_free(sc->procs[i]);
	free(sc->objs);
	free(sc->procs);
	free(sc->pend);
	u64map_release(&sc->obj_index);
	u64map_release(&sc->proc_index);
	rec_kallsyms_release(&sc->ksyms);
	free(sc->kstate);
	free(sc->hcache);
	free(sc);
}

struct rec_symcollect *rec_symcollect_new(const struct rec_symcollect_opts *o)
{
	static const struct rec_symcollect_opts def = REC_SYMCOLLECT_OPTS_INIT;
	struct rec_symcollect *sc;
	uint64_t t0 = now_ns();

	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return NULL;
	sc->o = def;
	if (o) {
		/* options structs grow at the end: copy what the caller knows */
		size_t n = o->sz < sizeof(*o) ? o->sz : sizeof(*o);

		if (n < sizeof(size_t)) {
			free(sc);
			errno = EINVAL;
			return NULL;
		}
		memcpy(&sc->o, o, n);
		sc->o.sz = sizeof(sc->o);
	}
	if (!sc->o.chunk)
		sc->o.chunk = def.chunk;
	sc->obj_index.with_vals = 1;
	sc->proc_index.with_vals = 1;
	sc->hcache = calloc(HCACHE_SIZE, sizeof(*sc->hcache));
	if (!sc->hcache) {
		free(sc);
		errno = ENOMEM;
		return NULL;
	}
	sc->gen = 1;
	if (sc->o.kernel) {
		int ret = rec_kallsyms_load(sc->o.kallsyms_path, &sc->ksyms);

		sc->st.kernel_status = ret;
		if (ret == 0 && sc->ksyms.nsyms) {
			sc->kstate = calloc(sc->ksyms.nsyms, 1);
			if (!sc->kstate) {
				rec_symcollect_free(sc);
				errno = ENOMEM;
				return NULL;
			}
		} else if (ret == 0) {
			sc->st.kernel_status = -ENOENT;   /* no text symbols */
		}
	}
	sc->st.time_ns += now_ns() - t0;
	return sc;
}

static struct sc_proc *find_proc(const struct rec_symcollect *sc, uint32_t pid)
{
	uint64_t *v = u64map_get(&sc->proc_index, pid);

	return v ? sc->procs[*v] : NULL;
}

static int scan_proc_maps(struct rec_symcollect *sc, struct sc_proc *p);

/* scan: a pid met for the first time through a sample or an mmap existed
 * before: its older mappings come from /proc (see opts.proc_maps). */
static struct sc_proc *get_proc(struct rec_symcollect *sc, uint32_t pid,
				int scan)
{
	struct sc_proc *p = find_proc(sc, pid);

	if (p) {
		if (scan && !p->known) {
			p->known = 1;
			if (scan_proc_maps(sc, p) < 0)
				return NULL;
		}
		return p;
	}
	if (sc->nprocs == sc->cprocs) {
		size_t nc = sc->cprocs ? sc->cprocs * 2 : 64;
		struct sc_proc **np = realloc(sc->procs, nc * sizeof(*np));

		if (!np)
			return NULL;
		sc->procs = np;
		sc->cprocs = nc;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (u64map_put(&sc->proc_index, pid, sc->nprocs) < 0) {
		free(p);
		return NULL;
	}
	sc->procs[sc->nprocs++] = p;
	if (scan) {
		p->known = 1;
		if (scan_proc_maps(sc, p) < 0)
			return NULL;
	}
	return p;
}

/* Paths that never name an ELF file we could read. */
static int is_elf_candidate(const char *path)
{
	static const char *const skip[] = { "//anon", "/dev/", "/memfd:",
		"/SYSV", "anon_inode:", "/anon_hugepage", NULL };

	if (path && strcmp(path, VDSO_PATH) == 0)
		return 1;   /* read from our own memory, see load_vdso() */
	if (!path || path[0] != '/')
		return 0;   /* "", "[heap]", "[stack]", "[anon:x]" */
	for (int i = 0; skip[i]; i++)
		if (strncmp(path, skip[i], strlen(skip[i])) == 0)
			return 0;
	return 1;
}

static long get_obj(struct rec_symcollect *sc,
		    const struct rec_symcollect_map *m)
{
	size_t bl = m->build_id ? m->build_id_len : 0;
	uint64_t h, *first;
	struct sc_obj *o;
	int ret;

	if (bl > sizeof(o->bid))
		bl = 0;   /* not a build-id we know: ignore it */
	h = hash_str(m->path, m->build_id, bl);
	first = u64map_get(&sc->obj_index, h);
	for (uint32_t i = first ? (uint32_t)*first : NO_OBJ; i != NO_OBJ;
	     i = sc->objs[i]->next) {
		o = sc->objs[i];
		if (o->bid_len == bl && (!bl || !memcmp(o->bid, m->build_id, bl)) &&
		    strcmp(o->path, m->path) == 0)
			return (long)i;
	}
	if (sc->nobjs == sc->cobjs) {
		size_t nc = sc->cobjs ? sc->cobjs * 2 : 64;
		struct sc_obj **no = realloc(sc->objs, nc * sizeof(*no));

		if (!no)
			return -ENOMEM;
		sc->objs = no;
		sc->cobjs = nc;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->path = strdup(m->path);
	if (!o->path) {
		free(o);
		return -ENOMEM;
	}
	if (bl)
		memcpy(o->bid, m->build_id, bl);
	o->bid_len = bl;
	o->pid = m->pid;
	o->start = m->start;
	o->end = m->start + m->len;
	o->next = first ? (uint32_t)*first : NO_OBJ;
	ret = u64map_put(&sc->obj_index, h, sc->nobjs);
	if (ret < 0) {
		obj_free(o);
		return ret;
	}
	sc->objs[sc->nobjs] = o;
	return (long)sc->nobjs++;
}

static size_t map_upper(const struct sc_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {   /* first map with start > addr */
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct sc_map *find_map(const struct sc_proc *p, uint64_t ip)
{
	size_t i = map_upper(p, ip);

	if (i && ip < p->maps[i - 1].end)
		return &p->maps[i - 1];
	for (size_t k = 0; k < p->nold; k++)   /* rarely non-empty */
		if (ip >= p->old[k].start && ip < p->old[k].end)
			return &p->old[k];
	return NULL;
}

static int proc_reserve(struct sc_proc *p, size_t more)
{
	size_t nc;
	struct sc_map *nm;

	if (p->n + more <= p->cap)
		return 0;
	nc = p->cap ? p->cap * 2 : 32;
	while (nc < p->n + more)
		nc *= 2;
	nm = realloc(p->maps, nc * sizeof(*nm));
	if (!nm)
		return -ENOMEM;
	p->maps = nm;
	p->cap = nc;
	return 0;
}

/* Puts [s, e) in, trimming or splitting what it overlaps. 1 when it
 * overlapped something (addresses now name another mapping), 0 when not,
 * < 0 on error. */
static int proc_insert(struct sc_proc *p, const struct sc_map *nm)
{
	size_t i, j;
	int ret = proc_reserve(p, 2);

	if (ret)
		return ret;
	/* i: first map that ends after nm->start */
	for (i = map_upper(p, nm->start); i > 0 && p->maps[i - 1].end > nm->start;)
		i--;
	for (j = i; j < p->n && p->maps[j].start < nm->end; j++)
		;
	/* maps [i, j) overlap nm; keep their parts outside it */
	if (i < j) {
		struct sc_map head = p->maps[i], tail = p->maps[j - 1];
		struct sc_map keep[2];
		size_t nk = 0;

		if (head.start < nm->start) {
			head.end = nm->start;
			keep[nk++] = head;
		}
		if (tail.end > nm->end) {
			tail.pgoff += nm->end - tail.start;
			tail.start = nm->end;
			keep[nk++] = tail;
		}
		/* replace [i, j) by keep[0..nk) + nm, in start order */
		memmove(&p->maps[i + nk + 1], &p->maps[j],
			(p->n - j) * sizeof(*p->maps));
		p->n = p->n - (j - i) + nk + 1;
		if (nk && keep[0].start < nm->start) {
			p->maps[i] = keep[0];
			p->maps[i + 1] = *nm;
			if (nk == 2)
				p->maps[i + 2] = keep[1];
		} else {
			p->maps[i] = *nm;
			if (nk)
				p->maps[i + 1] = keep[0];
		}
		return 1;
	}
	memmove(&p->maps[i + 1], &p->maps[i], (p->n - i) * sizeof(*p->maps));
	p->maps[i] = *nm;
	p->n++;
	return 0;
}

static int add_map(struct rec_symcollect *sc, struct sc_proc *p,
		   const struct rec_symcollect_map *m);

int rec_symcollect_add_mmap(struct rec_symcollect *sc,
			    const struct rec_symcollect_map *m)
{
	struct sc_proc *p;

	if (!sc || !m || !m->len || m->start + m->len < m->start)
		return -EINVAL;
	p = get_proc(sc, m->pid, 1);
	if (!p)
		return -ENOMEM;
	return add_map(sc, p, m);
}

/* Address spaces changed: cached user hits may now name other objects.
 * Only changes that can move an address already matched count (a mapping
 * over an old one, fork, exec): on a busy host new processes map a lot,
 * and bumping on every mmap emptied the cache all the time. */
static void new_gen(struct rec_symcollect *sc)
{
	if (++sc->gen >= (1u << 30)) {   /* tag room used up: start over */
		memset(sc->hcache, 0, HCACHE_SIZE * sizeof(*sc->hcache));
		sc->gen = 1;
	}
}

static int add_map(struct rec_symcollect *sc, struct sc_proc *p,
		   const struct rec_symcollect_map *m)
{
	struct sc_map nm;
	int ret;

	nm.start = m->start;
	nm.end = m->start + m->len;
	nm.pgoff = m->pgoff;
	nm.obj = NO_OBJ;
	if (is_elf_candidate(m->path)) {
		long oi = get_obj(sc, m);

		if (oi < 0)
			return (int)oi;
		nm.obj = (uint32_t)oi;
	}
	ret = proc_insert(p, &nm);
	if (ret > 0)
		new_gen(sc);
	return ret < 0 ? ret : 0;
}

int rec_symcollect_fork(struct rec_symcollect *sc, uint32_t pid, uint32_t ppid)
{
	struct sc_proc *parent, *child;

	if (!sc)
		return -EINVAL;
	if (pid == ppid)
		return 0;   /* a thread: same address space */
	/* a parent we never met existed before: /proc knows its maps */
	parent = get_proc(sc, ppid, 1);
	child = get_proc(sc, pid, 0);
	if (!parent || !child)
		return -ENOMEM;
	/* get_proc may have moved sc->procs, not the procs themselves */
	new_gen(sc);
	child->known = 1;
	child->n = 0;
	if (!parent || !parent->n)
		return 0;
	if (proc_reserve(child, parent->n))
		return -ENOMEM;
	memcpy(child->maps, parent->maps, parent->n * sizeof(*parent->maps));
	child->n = parent->n;
	return 0;
}

int rec_symcollect_exec(struct rec_symcollect *sc, uint32_t pid)
{
	struct sc_proc *p;

	if (!sc)
		return -EINVAL;
	p = get_proc(sc, pid, 0);
	if (!p)
		return -ENOMEM;
	p->known = 1;
	new_gen(sc);
	/* a fresh address space; MMAP2s follow. The old one stays
	 * reachable for late samples, one generation deep. */
	free(p->old);
	p->old = p->maps;
	p->nold = p->n;
	p->maps = NULL;
	p->n = p->cap = 0;
	return 0;
}

int rec_symcollect_exit(struct rec_symcollect *sc, uint32_t pid)
{
	if (!sc)
		return -EINVAL;
	/* Nothing to drop yet: samples of the process may still sit in
	 * other CPUs' rings. Its maps are kept until the collector is freed
	 * (a few KB per process). */
	(void)pid;
	return 0;
}

/* ret_addr: the byte before ip counts too (see user_hit()). */
static void kernel_hit(struct rec_symcollect *sc, uint64_t ip, int ret_addr)
{
	long i;

	if (!sc->kstate)
		return;
	i = rec_kallsyms_find(&sc->ksyms, ip);
	if (i >= 0 && !sc->kstate[i]) {
		sc->kstate[i] = 1;
		sc->kernel_hits = 1;
	}
	/* ip - 1 is in the same symbol unless ip is its first byte */
	if (ret_addr && (i < 0 || ip == sc->ksyms.syms[i].start))
		kernel_hit(sc, ip - 1, 0);
}

/* 2 = recorded in an ELF object (cacheable: the same ip would add
 * nothing until the mappings change), 1 = handled otherwise (JIT hits
 * are cleared at every write, so they are not cached), 0 = not yet.
 * ret_addr: a callchain return address; the call it returns from may be
 * the last instruction of its function, so the byte before counts too. */
static int user_hit(struct rec_symcollect *sc, uint32_t pid, uint64_t ip,
		    int ret_addr, int last_chance)
{
	struct sc_proc *p = find_proc(sc, pid);
	const struct sc_map *m;
	int ret;

	if (!p || !p->known) {
		p = get_proc(sc, pid, 1);
		if (!p)
			return -ENOMEM;
	}
	m = find_map(p, ip);
	if (m && m->obj != NO_OBJ) {
		struct sc_obj *o = sc->objs[m->obj];

		if (o->full_done)
			return 2;
		ret = u64map_put(&o->hits, ip - m->start + m->pgoff, 0);
		if (ret >= 0 && ret_addr && ip > m->start)
			ret = u64map_put(&o->hits, ip - 1 - m->start + m->pgoff, 0);
		return ret < 0 ? ret : 2;
	}
	if (m || last_chance) {
		/* anonymous memory, or nothing mapped: JIT code maybe */
		if (!sc->o.perf_maps)
			return 1;
		ret = u64map_put(&p->jit_hits, ip, 0);
		if (ret >= 0 && ret_addr && ip)
			ret = u64map_put(&p->jit_hits, ip - 1, 0);
		return ret < 0 ? ret : 1;
	}
	return 0;
}

static int hit(struct rec_symcollect *sc, uint32_t pid, uint64_t ip,
	       int kernel, int ret_addr)
{
	uint32_t tag = (kernel ? 2u : sc->gen << 2) | (ret_addr ? 1u : 0u);
	struct hit_slot *c;
	int ret;

	if (kernel)
		pid = 0;   /* one kernel address space */
	c = &sc->hcache[mix(ip ^ ((uint64_t)pid << 40)) >> (64 - HCACHE_BITS)];
	if (c->ip == ip && c->pid == pid && c->tag == tag)
		return 0;
	if (kernel) {
		kernel_hit(sc, ip, ret_addr);
		c->ip = ip;
		c->pid = pid;
		c->tag = tag;
		return 0;
	}
	ret = user_hit(sc, pid, ip, ret_addr, 0);
	if (ret == 2) {
		c->ip = ip;
		c->pid = pid;
		c->tag = tag;
	}
	if (ret != 0)
		return ret < 0 ? ret : 0;
	/* the mapping may still be in another CPU's ring: retry at write */
	if (sc->npend && sc->pend[sc->npend - 1].pid == pid &&
	    sc->pend[sc->npend - 1].ip == ip)
		return 0;
	if (sc->npend >= sc->o.max_pending) {
		sc->st.pending_dropped++;
		return 0;
	}
	if (sc->npend == sc->cpend) {
		size_t nc = sc->cpend ? sc->cpend * 2 : 256;
		struct pending *np = realloc(sc->pend, nc * sizeof(*np));

		if (!np)
			return -ENOMEM;
		sc->pend = np;
		sc->cpend = nc;
	}
	sc->pend[sc->npend].pid = pid;
	sc->pend[sc->npend].ip = ip;
	sc->pend[sc->npend].ret_addr = ret_addr;
	sc->npend++;
	return 0;
}

int rec_symcollect_hit(struct rec_symcollect *sc, uint32_t pid, uint64_t ip,
		       int kernel)
{
	if (!sc)
		return -EINVAL;
	return hit(sc, pid, ip, kernel, 0);
}

int rec_symcollect_hit_callchain(struct rec_symcollect *sc, uint32_t pid,
				 const uint64_t *ips, size_t n, int kernel)
{
	int ret;

	int first = 1;

	if (!sc || (n && !ips))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (ips[i] >= CTX_MAX) {
			/* hypervisor and guest frames belong to another
			 * address space: skip them up to the next marker */
			kernel = ips[i] == CTX_KERNEL ? 1 :
				 ips[i] == CTX_USER ? 0 : -1;
			continue;
		}
		if (kernel < 0)
			continue;
		/* the first address is the sampled ip; the rest return
		 * addresses */
		ret = hit(sc, pid, ips[i], kernel, !first);
		first = 0;
		if (ret)
			return ret;
	}
	return 0;
}

/* Adds the executable file mappings of PROC/PID/maps ("lo-hi perms off
 * dev ino path"). A process that is gone or unreadable adds nothing. */
static int scan_proc_maps(struct rec_symcollect *sc, struct sc_proc *p)
{
	const char *root = sc->o.proc_maps ? sc->o.proc_maps : "/proc";
	uint64_t t0;
	char path[256], line[4352];
	FILE *f;
	int ret = 0;

	if (!*root)
		return 0;
	t0 = now_ns();
	snprintf(path, sizeof(path), "%s/%u/maps", root, p->pid);
	f = fopen(path, "re");
	if (!f)
		goto out;
	sc->st.procs_scanned++;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8];
		int name = 0;
		struct rec_symcollect_map m = { 0 };
		size_t n;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perms,
			   &off, &name) < 4 || !name || !strchr(perms, 'x') ||
		    hi <= lo)
			continue;
		n = strlen(line + name);
		while (n && (line[name + n - 1] == '\n' || line[name + n - 1] == ' '))
			line[name + --n] = 0;
		m.pid = p->pid;
		m.start = lo;
		m.len = hi - lo;
		m.pgoff = off;
		m.path = line + name;
		ret = add_map(sc, p, &m);
		if (ret < 0)
			break;
	}
	fclose(f);
out:
	sc->st.time_ns += now_ns() - t0;
	return ret;
}

#define CPUMODE_MASK 7
#define CPUMODE_KERNEL 1
#define CPUMODE_USER 2
#define MISC_COMM_EXEC (1 << 13)

int rec_symcollect_feed(struct rec_symcollect *sc, const struct rec_record *r)
{
	if (!sc || !r)
		return -EINVAL;
	switch (r->type) {
	case PERF_RECORD_SAMPLE: {
		int mode = r->misc & CPUMODE_MASK, ret = 0;
		uint64_t buf[64];

		if (mode != CPUMODE_KERNEL && mode != CPUMODE_USER)
			return 0;   /* hypervisor / guest: not ours to name */
		if (r->sample.ip)
			ret = rec_symcollect_hit(sc, r->sid.pid, r->sample.ip,
						 mode == CPUMODE_KERNEL);
		/* ips may be unaligned in the ring: copy in slices */
		for (uint64_t i = 0; !ret && i < r->sample.nr; i += 64) {
			size_t k = r->sample.nr - i < 64 ? (size_t)(r->sample.nr - i) : 64;

			memcpy(buf, (const uint8_t *)r->sample.ips + i * 8, k * 8);
			/* the first slice starts in the sample's own mode;
			 * later ones continue after a marker anyway */
			ret = rec_symcollect_hit_callchain(sc, r->sid.pid, buf, k,
							   mode == CPUMODE_KERNEL);
		}
		return ret;
	}
	case PERF_RECORD_MMAP2: {
		struct rec_symcollect_map m = { 0 };

		if (!r->mmap2.filename || !r->mmap2.len)
			return 0;
		m.pid = r->mmap2.pid;
		m.start = r->mmap2.addr;
		m.len = r->mmap2.len;
		m.pgoff = r->mmap2.pgoff;
		m.path = r->mmap2.filename;
		if (r->mmap2.build_id_size) {
			m.build_id = r->mmap2.build_id;
			m.build_id_len = r->mmap2.build_id_size;
		}
		if (m.pid == UINT32_MAX)
			return 0;   /* kernel maps: the kernel table covers them */
		return rec_symcollect_add_mmap(sc, &m);
	}
	case PERF_RECORD_FORK:
		return rec_symcollect_fork(sc, r->task.pid, r->task.ppid);
	case PERF_RECORD_COMM:
		if (r->misc & MISC_COMM_EXEC)
			return rec_symcollect_exec(sc, r->comm.pid);
		return 0;
	case PERF_RECORD_EXIT:
		if (r->task.pid == r->task.tid)
			return rec_symcollect_exit(sc, r->task.pid);
		return 0;
	default:
		return 0;
	}
}

void rec_symcollect_observe(void *ctx, const struct rec_record *r)
{
	struct rec_symcollect *sc = ctx;

	if (rec_symcollect_feed(sc, r) < 0 && sc)
		sc->st.feed_errors++;
}

/* ---- writing */

struct esym {
	uint64_t start, size;
	const char *name;
};

struct table_hdr {
	Perfrec__SymbolTable__Kind kind;
	const char *path;
	const uint8_t *bid;
	size_t bid_len;
	int32_t pid;
	uint64_t load_bias, text_start;
	const struct rec_elfsym_seg *segs;
	size_t nsegs;
	const char *reason;
};

/* Emits syms (sorted by start) as one or more SymbolTable packets; a table
 * with no symbols still goes out once (it carries path, build-id, reason). */
static int emit_table(struct rec_symcollect *sc, struct prec_writer *w,
		      uint32_t stream, uint64_t t, const struct table_hdr *h,
		      const struct esym *syms, size_t n)
{
	size_t chunk = sc->o.chunk, done = 0;
	uint64_t *starts, *sizes, *names, *segv = NULL;
	int ret = 0, packets = 0;

	starts = calloc(chunk, sizeof(*starts));
	sizes = calloc(chunk, sizeof(*sizes));
	names = calloc(chunk, sizeof(*names));
	if (h->nsegs)
		segv = calloc(h->nsegs * 3, sizeof(*segv));
	if (!starts || !sizes || !names || (h->nsegs && !segv)) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < h->nsegs; i++) {
		segv[i] = h->segs[i].offset;
		segv[h->nsegs + i] = h->segs[i].vaddr;
		segv[2 * h->nsegs + i] = h->segs[i].filesz;
	}
	do {
		Perfrec__Packet pkt = PERFREC__PACKET__INIT;
		Perfrec__SymbolTable tab = PERFREC__SYMBOL_TABLE__INIT;
		size_t k = n - done < chunk ? n - done : chunk;
		uint64_t prev = 0, name_bytes = 0;

		for (size_t i = 0; i < k; i++) {
			const struct esym *s = &syms[done + i];

			names[i] = prec_writer_intern_string(w, stream, s->name);
			if (!names[i]) {
				ret = prec_writer_error(w);
				ret = ret ? ret : -ENOMEM;
				goto out;
			}
			starts[i] = s->start - prev;   /* first: absolute */
			prev = s->start;
			sizes[i] = s->size;
			name_bytes += strlen(s->name) + NAME_OVERHEAD;
		}
		tab.kind = h->kind;
		tab.path = (char *)(h->path ? h->path : "");
		tab.build_id.data = (uint8_t *)h->bid;
		tab.build_id.len = h->bid_len;
		tab.pid = h->pid;
		tab.load_bias = h->load_bias;
		tab.text_start = h->text_start;
		if (h->reason)
			tab.reason = (char *)h->reason;
		if (!done && h->nsegs) {
			tab.n_load_offsets = tab.n_load_vaddrs =
				tab.n_load_sizes = h->nsegs;
			tab.load_offsets = segv;
			tab.load_vaddrs = segv + h->nsegs;
			tab.load_sizes = segv + 2 * h->nsegs;
		}
		tab.n_starts = tab.n_sizes = tab.n_names = k;
		tab.starts = starts;
		tab.sizes = sizes;
		tab.names = names;
		pkt.data_case = PERFREC__PACKET__DATA_SYMBOLS;
		pkt.symbols = &tab;
		ret = prec_writer_append(w, stream, &pkt, t);
		if (ret)
			goto out;
		sc->st.bytes += perfrec__packet__get_packed_size(&pkt) + name_bytes;
		sc->st.tables++;
		sc->st.symbols += k;
		packets++;
		done += k;
	} while (done < n);
	ret = packets;
out:
	free(starts);
	free(sizes);
	free(names);
	free(segv);
	return ret;
}

static int emit_note(struct rec_symcollect *sc, struct prec_writer *w,
		     uint32_t stream, uint64_t t, const char *text)
{
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__Note note = PERFREC__NOTE__INIT;
	int ret;

	note.level = PERFREC__NOTE__LEVEL__WARNING;
	note.text = (char *)text;
	pkt.data_case = PERFREC__PACKET__DATA_NOTE;
	pkt.note = &note;
	ret = prec_writer_append(w, stream, &pkt, t);
	if (ret)
		return ret;
	sc->st.bytes += perfrec__packet__get_packed_size(&pkt);
	return 1;
}

static int write_kernel(struct rec_symcollect *sc, struct prec_writer *w,
			uint32_t stream, uint64_t t)
{
	const struct rec_kallsyms *k = &sc->ksyms;
	struct esym *es = NULL;
	int total = 0, ret = 0;

	if (!sc->o.kernel)
		return 0;
	if (!sc->kstate) {
		struct table_hdr h = { 0 };
		char reason[160];

		if (sc->kernel_noted)
			return 0;
		sc->kernel_noted = 1;
		h.kind = PERFREC__SYMBOL_TABLE__KIND__UNAVAILABLE;
		h.path = KERNEL_PATH;
		h.reason = reason;
		if (sc->st.kernel_status == REC_KALLSYMS_HIDDEN)
			snprintf(reason, sizeof(reason), "kernel addresses hidden "
				 "by kptr_restrict (/proc/kallsyms reads as "
				 "zeros; set kernel.kptr_restrict=0 or run with "
				 "CAP_SYSLOG)");
		else
			snprintf(reason, sizeof(reason), "kernel symbols "
				 "unavailable: /proc/kallsyms: %s",
				 strerror(-sc->st.kernel_status));
		ret = emit_table(sc, w, stream, t, &h, NULL, 0);
		if (ret < 0)
			return ret;
		ret = emit_note(sc, w, stream, t, reason);
		return ret < 0 ? ret : 2;
	}
	if (!sc->kernel_hits && !sc->o.full_tables)
		return 0;
	es = calloc(k->nsyms, sizeof(*es));
	if (!es)
		return -ENOMEM;
	/* core kernel first (module 0), then each module in turn */
	for (size_t mod = 0; mod <= k->nmodules; mod++) {
		struct table_hdr h = { 0 };
		char path[256];
		size_t n = 0;

		for (size_t i = 0; i < k->nsyms; i++) {
			if (k->syms[i].module != mod)
				continue;
			if (sc->kstate[i] == 2 ||
			    (!sc->kstate[i] && !sc->o.full_tables))
				continue;
			sc->kstate[i] = 2;
			es[n].start = k->syms[i].start;
			es[n].size = k->syms[i].size;
			es[n].name = k->syms[i].name;
			n++;
		}
		if (!n)
			continue;
		if (mod == 0) {
			h.kind = PERFREC__SYMBOL_TABLE__KIND__KERNEL;
			h.path = KERNEL_PATH;
			h.text_start = k->text_start;
		} else {
			snprintf(path, sizeof(path), "[%s]", k->modules[mod - 1]);
			h.kind = PERFREC__SYMBOL_TABLE__KIND__KERNEL_MODULE;
			h.path = path;
		}
		ret = emit_table(sc, w, stream, t, &h, es, n);
		if (ret < 0)
			break;
		total += ret;
	}
	sc->kernel_hits = 0;
	free(es);
	return ret < 0 ? ret : total;
}

static void strip_deleted(char *path)
{
	static const char suffix[] = " (deleted)";
	size_t n = strlen(path), s = sizeof(suffix) - 1;

	if (n > s && strcmp(path + n - s, suffix) == 0)
		path[n - s] = 0;
}

/* Reads o's symbols: through the process's own view first (map_files
 * survives deletion, /proc/PID/root sees its mount namespace), then the
 * plain path. A file whose build-id differs from the mapping's is someone
 * else's. Returns 0, or < 0 with *why set. */
/* The vDSO is the kernel's: every native process of this host maps the
 * same image, so ours stands for theirs (32-bit processes have another
 * one; a build-id from the MMAP2 record tells them apart). */
static int load_vdso(struct rec_elfsym *e)
{
	unsigned long long lo = 0, hi = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, " [vdso]"))
			continue;
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && hi > lo)
			ret = 0;
		break;
	}
	fclose(f);
	if (ret)
		return ret;
	return rec_elfsym_read_mem((const void *)(uintptr_t)lo, (size_t)(hi - lo), e);
}

static int load_obj(const struct rec_symcollect *sc, const struct sc_obj *o,
		    struct rec_elfsym *e, const char **why)
{
	char *path = strdup(o->path), cand[3][4200];
	int nc = 0, ret = -ENOENT, mismatch = 0;

	*why = NULL;
	if (!path)
		return -ENOMEM;
	if (strcmp(path, VDSO_PATH) == 0) {
		free(path);
		ret = load_vdso(e);
		if (!ret && o->bid_len &&
		    (e->build_id_len != o->bid_len ||
		     memcmp(e->build_id, o->bid, o->bid_len) != 0)) {
			rec_elfsym_release(e);
			*why = "another vDSO (e.g. of a 32-bit process)";
			return -ESTALE;
		}
		return ret;
	}
	strip_deleted(path);
	if (sc->o.proc_root && o->pid) {
		snprintf(cand[nc++], sizeof(cand[0]), "/proc/%u/map_files/%lx-%lx",
			 o->pid, (unsigned long)o->start, (unsigned long)o->end);
		snprintf(cand[nc++], sizeof(cand[0]), "/proc/%u/root%s", o->pid,
			 path);
	}
	snprintf(cand[nc++], sizeof(cand[0]), "%s", path);
	free(path);
	for (int i = 0; i < nc; i++) {
		int r = rec_elfsym_load(cand[i], e);

		if (r == 0 && o->bid_len &&
		    (e->build_id_len != o->bid_len ||
		     memcmp(e->build_id, o->bid, o->bid_len) != 0)) {
			rec_elfsym_release(e);
			mismatch = 1;
			continue;
		}
		if (r == 0)
			return 0;
		/* the last candidate's error is the most telling */
		ret = r;
	}
	if (mismatch) {
		*why = "build-id mismatch: the file changed since it was mapped";
		return -ESTALE;
	}
	return ret;
}

/* A stripped object (symbols from .dynsym only) with an installed debug
 * file: take the debug file's symbols, which use the same addresses. The
 * object's own segments and build-id stay. 1 = replaced. */
static int use_debug_file(const struct rec_symcollect *sc, struct rec_elfsym *e)
{
	const char *dir = sc->o.debug_dir ? sc->o.debug_dir : "/usr/lib/debug";
	struct rec_elfsym d;
	char path[4200], *q;

	if (!*dir || !e->from_dynsym || e->build_id_len < 2)
		return 0;
	q = path + snprintf(path, sizeof(path) - 200, "%s/.build-id/%02x/", dir,
			    e->build_id[0]);
	for (size_t i = 1; i < e->build_id_len; i++)
		q += sprintf(q, "%02x", e->build_id[i]);
	strcpy(q, ".debug");
	if (rec_elfsym_load(path, &d) != 0)
		return 0;
	if (d.from_dynsym || !d.nsyms ||
	    (d.build_id_len && (d.build_id_len != e->build_id_len ||
				memcmp(d.build_id, e->build_id, d.build_id_len)))) {
		rec_elfsym_release(&d);
		return 0;
	}
	free(e->syms);
	free(e->names);
	e->syms = d.syms;
	e->nsyms = d.nsyms;
	e->names = d.names;
	e->from_dynsym = 0;
	d.syms = NULL;
	d.names = NULL;
	rec_elfsym_release(&d);
	return 1;
}

static int cmp_esym(const void *pa, const void *pb)
{
	const struct esym *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

static int write_obj(struct rec_symcollect *sc, struct prec_writer *w,
		     uint32_t stream, uint64_t t, struct sc_obj *o)
{
	struct table_hdr h = { 0 };
	struct rec_elfsym e;
	struct esym *es = NULL;
	const char *why;
	char reason[256];
	size_t n = 0;
	int ret;

	h.path = o->path;
	ret = load_obj(sc, o, &e, &why);
	if (ret) {
		if (o->written) {
			/* symbols went out before; the file is gone now */
			u64map_clear(&o->hits);
			return 0;
		}
		if (!why) {
			snprintf(reason, sizeof(reason), "%s: %s",
				 ret == -EINVAL ? "not an ELF file" :
				 ret == -EBADMSG ? "corrupt ELF file" : "open",
				 strerror(-ret));
			why = reason;
		}
		h.kind = PERFREC__SYMBOL_TABLE__KIND__UNAVAILABLE;
		h.bid = o->bid;
		h.bid_len = o->bid_len;
		h.reason = why;
		o->written = o->full_done = 1;
		u64map_release(&o->hits);
		sc->st.unavailable++;
		return emit_table(sc, w, stream, t, &h, NULL, 0);
	}
	/* A later pass must read the same file as the first: a package
	 * upgrade may have replaced it meanwhile (new hits are then lost
	 * rather than named from the wrong binary). */
	if (o->written && (e.build_id_len != o->file_bid_len ||
			   memcmp(e.build_id, o->file_bid, e.build_id_len) != 0)) {
		u64map_clear(&o->hits);
		ret = 0;
		goto out;
	}
	memcpy(o->file_bid, e.build_id, e.build_id_len);
	o->file_bid_len = e.build_id_len;
	use_debug_file(sc, &e);
	h.kind = PERFREC__SYMBOL_TABLE__KIND__ELF;
	h.bid = e.build_id_len ? e.build_id : o->bid;
	h.bid_len = e.build_id_len ? e.build_id_len : o->bid_len;
	h.load_bias = e.load_bias;
	if (!o->written) {
		h.segs = e.segs;
		h.nsegs = e.nsegs;
	}
	es = calloc(e.nsyms ? e.nsyms : 1, sizeof(*es));
	if (!es) {
		ret = -ENOMEM;
		goto out;
	}
	if (sc->o.full_tables) {
		for (size_t i = 0; i < e.nsyms; i++) {
			es[n].start = e.syms[i].start;
			es[n].size = e.syms[i].size;
			es[n].name = e.syms[i].name;
			n++;
		}
		o->full_done = 1;
	} else {
		/* the symbols holding a hit (return addresses brought
		 * their byte before, see user_hit) */
		for (size_t i = 0; i < o->hits.cap; i++) {
			uint64_t off = o->hits.keys[i];
			const struct rec_elfsym_sym *s;

			if (off == EMPTY_KEY)
				continue;
			s = rec_elfsym_find(&e, rec_elfsym_vaddr(&e, off));
			if (!s || u64map_get(&o->done, s->start))
				continue;
			ret = u64map_put(&o->done, s->start, 0);
			if (ret < 0)
				goto out;
			es[n].start = s->start;
			es[n].size = s->size;
			es[n].name = s->name;
			n++;
		}
		qsort(es, n, sizeof(*es), cmp_esym);
	}
	u64map_clear(&o->hits);
	if (o->written && !n) {
		ret = 0;
		goto out;
	}
	if (!o->written)
		sc->st.objects++;
	o->written = 1;
	ret = emit_table(sc, w, stream, t, &h, es, n);
out:
	free(es);
	rec_elfsym_release(&e);
	return ret;
}

/* Which of m's symbols contain a hit: each hit finds its symbol by
 * binary search (JIT maps can hold 10^5 entries). Returns a calloc'd array
 * of m->nsyms flags (caller frees) or NULL. */
static uint8_t *perfmap_marks(const struct rec_perfmap *m,
			      const struct u64map *hits)
{
	uint8_t *mark = calloc(m->nsyms ? m->nsyms : 1, 1);

	if (!mark)
		return NULL;
	for (size_t k = 0; k < hits->cap; k++) {
		uint64_t ip = hits->keys[k];
		size_t lo = 0, hi = m->nsyms;

		if (ip == EMPTY_KEY)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (m->syms[mid].start <= ip)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t b = 0; b < 16 && b < lo; b++) {
			const struct rec_perfmap_sym *s = &m->syms[lo - 1 - b];

			if (ip - s->start < s->size) {
				mark[lo - 1 - b] = 1;
				break;
			}
		}
	}
	return mark;
}

static int write_perfmap(struct rec_symcollect *sc, struct prec_writer *w,
			 uint32_t stream, uint64_t t, struct sc_proc *p)
{
	struct table_hdr h = { 0 };
	struct rec_perfmap m;
	struct esym *es = NULL;
	uint8_t *mark = NULL;
	char path[64];
	size_t n = 0;
	int ret;

	ret = rec_perfmap_load_pid((pid_t)p->pid, sc->o.perfmap_dir, 0, &m);
	if (ret) {
		u64map_clear(&p->jit_hits);
		return 0;   /* no (readable) JIT map: nothing to add */
	}
	es = calloc(m.nsyms ? m.nsyms : 1, sizeof(*es));
	mark = sc->o.full_tables ? NULL : perfmap_marks(&m, &p->jit_hits);
	if (!es || (!sc->o.full_tables && !mark)) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < m.nsyms; i++) {
		const struct rec_perfmap_sym *s = &m.syms[i];

		if (mark && !mark[i])
			continue;
		ret = u64map_put(&p->jit_done, s->start, 0);
		if (ret < 0)
			goto out;
		if (ret == 0)
			continue;   /* written before */
		es[n].start = s->start;
		es[n].size = s->size;
		es[n].name = s->name;
		n++;
	}
	u64map_clear(&p->jit_hits);
	ret = 0;
	if (!n)
		goto out;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", p->pid);
	h.kind = PERFREC__SYMBOL_TABLE__KIND__PERF_MAP;
	h.path = path;
	h.pid = (int32_t)p->pid;
	ret = emit_table(sc, w, stream, t, &h, es, n);
out:
	free(mark);
	free(es);
	rec_perfmap_release(&m);
	return ret;
}

int rec_symcollect_write(struct rec_symcollect *sc, struct prec_writer *w,
			 uint32_t stream, uint64_t time_ns)
{
	uint64_t t0 = now_ns();
	int total = 0, ret = 0;

	if (!sc || !w)
		return -EINVAL;
	/* hits that came before their mapping: match them now, for good */
	for (size_t i = 0; i < sc->npend; i++) {
		ret = user_hit(sc, sc->pend[i].pid, sc->pend[i].ip,
			       sc->pend[i].ret_addr, 1);
		if (ret < 0)
			goto out;
	}
	sc->npend = 0;
	ret = write_kernel(sc, w, stream, time_ns);
	if (ret < 0)
		goto out;
	total += ret;
	for (size_t i = 0; i < sc->nobjs; i++) {
		struct sc_obj *o = sc->objs[i];

		if (o->full_done || !o->hits.n)
			continue;
		ret = write_obj(sc, w, stream, time_ns, o);
		if (ret < 0)
			goto out;
		total += ret;
	}
	for (size_t i = 0; sc->o.perf_maps && i < sc->nprocs; i++) {
		struct sc_proc *p = sc->procs[i];

		if (!p->jit_hits.n)
			continue;
		ret = write_perfmap(sc, w, stream, time_ns, p);
		if (ret < 0)
			goto out;
		total += ret;
	}
	ret = total;
out:
	sc->st.time_ns += now_ns() - t0;
	return ret;
}

void rec_symcollect_restart(struct rec_symcollect *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->nobjs; i++) {
		struct sc_obj *o = sc->objs[i];

		u64map_clear(&o->hits);
		u64map_clear(&o->done);
		o->written = 0;
		o->full_done = 0;
	}
	for (size_t i = 0; i < sc->nprocs; i++) {
		u64map_clear(&sc->procs[i]->jit_hits);
		u64map_clear(&sc->procs[i]->jit_done);
	}
	sc->npend = 0;
	if (sc->kstate)
		memset(sc->kstate, 0, sc->ksyms.nsyms);
	sc->kernel_hits = 0;
	sc->kernel_noted = 0;
	/* cached hits were recorded for the old output */
	memset(sc->hcache, 0, HCACHE_SIZE * sizeof(*sc->hcache));
	sc->gen = 1;
}

void rec_symcollect_stats(const struct rec_symcollect *sc,
			  struct rec_symcollect_stats *st)
{
	if (!sc) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = sc->st;
}
