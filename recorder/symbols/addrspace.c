/*
 * addrspace.c - the symbol gatherer's model at the bottom of symbols/
 * (see addrspace_int.h): processes and their mappings, objects, the hits
 * recorded against them, and the kernel symbols.
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
 * Hit handling is O(log maps) per address and touches no files but two,
 * each bounded: /proc/PID/maps of a pid met for the first time, and
 * kallsyms again when a kernel address is unknown (rate-limited); ELF
 * symbols are read in rec_symgather_write() (symwrite.c). stats.time_ns
 * measures those (and new()'s kallsyms read).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recorder/encode/decode.h"
#include "format/base/clock.h"
#include "recorder/symbols/elfcfi.h"
#include "recorder/symbols/kallsyms.h"
#include "recorder/symbols/addrspace_int.h"

static uint64_t hash_str(const char *s, const uint8_t *b, size_t bl)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	for (size_t i = 0; i < bl; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h == REC_U64MAP_EMPTY ? 0 : h;
}

static void obj_free(struct sc_obj *o)
{
	if (!o)
		return;
	free(o->path);
	rec_u64map_release(&o->hits);
	rec_u64map_release(&o->done);
	rec_symgather_cfi_free(o->cfi);
	free(o);
}

static void proc_free(struct sc_proc *p)
{
	if (!p)
		return;
	free(p->maps);
	free(p->old);
	rec_u64map_release(&p->jit_hits);
	rec_u64map_release(&p->jit_done);
	free(p);
}

void rec_symgather_free(struct rec_symgather *sc)
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
	rec_u64map_release(&sc->obj_index);
	rec_u64map_release(&sc->proc_index);
	rec_kallsyms_release(&sc->ksyms);
	free(sc->kstate);
	rec_u64map_release(&sc->kunknown);
	prec_unwind_cache_free(sc->ucache);
	free(sc->hcache);
	rec_symcache_free(sc->cache);
	free(sc);
}

static struct sc_proc *find_proc(const struct rec_symgather *sc, uint32_t pid)
{
	uint64_t *v = rec_u64map_get(&sc->proc_index, pid);

	return v ? sc->procs[*v] : NULL;
}

/* Every process's stamp back to 1 with an empty cache: stamps given
 * later are all above it again. */
static void restart_gens(struct rec_symgather *sc)
{
	memset(sc->hcache, 0, HCACHE_SIZE * sizeof(*sc->hcache));
	sc->gen = 1;
	sc->epoch = 1;
	for (size_t i = 0; i < sc->nprocs; i++)
		sc->procs[i]->gen = 1;
}

/* A stamp above every one given before (they fit a tag: see hit_slot). */
static uint32_t new_stamp(struct rec_symgather *sc)
{
	if (sc->gen + 1 >= (1u << 30))   /* tag room used up: start over */
		restart_gens(sc);
	return ++sc->gen;
}

/* p's address space changed: its cached hits may now name other objects.
 * Only changes that can move an address already matched count (a mapping
 * over an old one, fork, exec): a new process maps a lot. */
static void new_gen(struct rec_symgather *sc, struct sc_proc *p)
{
	p->gen = new_stamp(sc);
}

void rec_symgather_new_epoch(struct rec_symgather *sc)
{
	sc->epoch = new_stamp(sc);
}

static int scan_proc_maps(struct rec_symgather *sc, struct sc_proc *p);

/* scan: a pid met for the first time through a sample or an mmap existed
 * before: its older mappings come from /proc (see opts.proc_maps). */
static struct sc_proc *get_proc(struct rec_symgather *sc, uint32_t pid,
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
	new_gen(sc, p);
	if (rec_u64map_put(&sc->proc_index, pid, sc->nprocs) < 0) {
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

static long get_obj(struct rec_symgather *sc,
		    const struct rec_symgather_map *m)
{
	size_t bl = m->build_id ? m->build_id_len : 0;
	uint64_t h, *first;
	struct sc_obj *o;
	int ret;

	if (bl > sizeof(o->bid))
		bl = 0;   /* not a build-id we know: ignore it */
	h = hash_str(m->path, m->build_id, bl);
	first = rec_u64map_get(&sc->obj_index, h);
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
	ret = rec_u64map_put(&sc->obj_index, h, sc->nobjs);
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

const struct sc_map *rec_symgather_map_at(const struct sc_proc *p, uint64_t ip)
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

static int add_map(struct rec_symgather *sc, struct sc_proc *p,
		   const struct rec_symgather_map *m);

int rec_symgather_add_mmap(struct rec_symgather *sc,
			   const struct rec_symgather_map *m)
{
	struct sc_proc *p;

	if (!sc || !m || !m->len || m->start + m->len < m->start)
		return -EINVAL;
	p = get_proc(sc, m->pid, 1);
	if (!p)
		return -ENOMEM;
	return add_map(sc, p, m);
}

static int add_map(struct rec_symgather *sc, struct sc_proc *p,
		   const struct rec_symgather_map *m)
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
		new_gen(sc, p);
	return ret < 0 ? ret : 0;
}

int rec_symgather_fork(struct rec_symgather *sc, uint32_t pid, uint32_t ppid)
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
	/* get_proc may have moved sc->procs, not the procs themselves. The
	 * child's pid may be a reused one: its old entries go. */
	new_gen(sc, child);
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

int rec_symgather_exec(struct rec_symgather *sc, uint32_t pid)
{
	struct sc_proc *p;

	if (!sc)
		return -EINVAL;
	p = get_proc(sc, pid, 0);
	if (!p)
		return -ENOMEM;
	p->known = 1;
	new_gen(sc, p);
	/* a fresh address space; MMAP2s follow. The old one stays
	 * reachable for late samples, one generation deep. */
	free(p->old);
	p->old = p->maps;
	p->nold = p->n;
	p->maps = NULL;
	p->n = p->cap = 0;
	return 0;
}

int rec_symgather_exit(struct rec_symgather *sc, uint32_t pid)
{
	if (!sc)
		return -EINVAL;
	/* Nothing to drop yet: samples of the process may still sit in
	 * other CPUs' rings. Its maps are kept until the gatherer is freed
	 * (a few KB per process). */
	(void)pid;
	return 0;
}

/* Unknown kernel addresses kept for a later kallsyms read: enough for
 * the distinct addresses of a few modules' hot code. */
#define KUNKNOWN_MAX 4096
/* Past this wait multiplier a read that names nothing stops doubling. */
#define KRELOAD_MULT_MAX 64

/* The state of each symbol of the new table that the old one held too
 * (same start and name): hit or written, so nothing goes out twice. */
static void carry_kstate(const struct rec_kallsyms *old, const uint8_t *ost,
			 const struct rec_kallsyms *k, uint8_t *st)
{
	for (size_t j = 0; j < k->nsyms; j++) {
		size_t lo = 0, hi = old->nsyms;

		while (lo < hi) {   /* first old symbol with start >= new's */
			size_t mid = lo + (hi - lo) / 2;

			if (old->syms[mid].start < k->syms[j].start)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < old->nsyms && old->syms[lo].start == k->syms[j].start; lo++)
			if (strcmp(old->syms[lo].name, k->syms[j].name) == 0) {
				st[j] = ost[lo];
				break;
			}
	}
}

int rec_symgather_kernel_reload(struct rec_symgather *sc, int force)
{
	struct rec_kallsyms k;
	struct rec_u64map still = { 0 };
	uint64_t now = prec_now_ns(), t0 = now, wait;
	uint8_t *st;
	size_t named = 0;
	int ret;

	if (!sc->kstate || !sc->o.kallsyms_reload_ms || !rec_u64map_count(&sc->kunknown) ||
	    (!force && now < sc->kreload_ns))
		return 0;
	{
		/* reading kallsyms costs ~0.1 s of CPU (the kernel formats
		 * 100k+ lines); nothing it depends on changed: no new names */
		uint64_t fp = 0;
		int ok = rec_kallsyms_fingerprint(sc->o.kallsyms_path, &fp) == 0;

		if (ok && sc->kfinger_ok && fp == sc->kfinger) {
			sc->st.kallsyms_unchanged++;
			ret = 0;
			goto out;
		}
		sc->kfinger = fp;
		sc->kfinger_ok = ok;
	}
	ret = rec_kallsyms_load(sc->o.kallsyms_path, &k);
	sc->st.kallsyms_reads++;
	st = ret == 0 && k.nsyms ? calloc(k.nsyms, 1) : NULL;
	if (!st) {
		rec_kallsyms_release(&k);
		ret = ret < 0 ? ret : ret == 0 && k.nsyms ? -ENOMEM : 0;
		goto out;   /* hidden or empty now: keep the old table */
	}
	carry_kstate(&sc->ksyms, sc->kstate, &k, st);
	rec_kallsyms_release(&sc->ksyms);
	free(sc->kstate);
	sc->ksyms = k;
	sc->kstate = st;
	for (size_t i = 0; i < rec_u64map_count(&sc->kunknown); i++) {
		uint64_t ip = rec_u64map_key(&sc->kunknown, i);
		long s;

		s = rec_kallsyms_find(&sc->ksyms, ip);
		if (s < 0) {
			if (rec_u64map_put(&still, ip, 0) < 0)
				break;   /* forgotten: named by a later hit maybe */
			continue;
		}
		named++;
		if (!sc->kstate[s]) {
			sc->kstate[s] = 1;
			sc->kernel_hits = 1;
		}
	}
	rec_u64map_release(&sc->kunknown);
	sc->kunknown = still;
	ret = 1;
out:
	/* a read that named something may be followed by more loads */
	if (named)
		sc->kreload_mult = 1;
	else if (sc->kreload_mult < KRELOAD_MULT_MAX)
		sc->kreload_mult = sc->kreload_mult ? sc->kreload_mult * 2 : 2;
	wait = (uint64_t)sc->o.kallsyms_reload_ms * 1000000ull *
	       (sc->kreload_mult ? sc->kreload_mult : 1);
	sc->kreload_ns = prec_now_ns() + wait;
	sc->st.time_ns += prec_now_ns() - t0;
	return ret;
}

/* A kernel address no symbol holds: kept, and kallsyms read again when
 * it is due. */
static void kernel_unknown(struct rec_symgather *sc, uint64_t ip)
{
	int ret;

	if (rec_u64map_count(&sc->kunknown) >= KUNKNOWN_MAX)
		return;
	ret = rec_u64map_put(&sc->kunknown, ip, 0);
	if (ret > 0)
		sc->st.kernel_unknown++;
	if (ret >= 0 && sc->kreload_ns <= prec_now_ns())
		rec_symgather_kernel_reload(sc, 0);
}

/* ret_addr: the byte before ip counts too (see rec_symgather_user_hit()). */
static void kernel_hit(struct rec_symgather *sc, uint64_t ip, int ret_addr)
{
	long i;

	/* 64-bit kernels live in the upper half of the address space: a
	 * lower-half address in a kernel-mode sample is a user one (seen at
	 * a system call's return) that no kallsyms read would name, and
	 * taking it for an unknown kernel address re-read kallsyms every
	 * second (~30% of the recorder's CPU on a busy host). */
	if (!sc->kstate || !(ip >> 63))
		return;
	i = rec_kallsyms_find(&sc->ksyms, ip);
	if (i >= 0 && !sc->kstate[i]) {
		sc->kstate[i] = 1;
		sc->kernel_hits = 1;
	} else if (i < 0 && sc->o.kallsyms_reload_ms && !ret_addr) {
		/* (a return address: its call byte below counts instead) */
		kernel_unknown(sc, ip);
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
struct sc_proc *rec_symgather_proc(struct rec_symgather *sc, uint32_t pid)
{
	struct sc_proc *p = find_proc(sc, pid);

	return p && p->known ? p : get_proc(sc, pid, 1);
}

static int proc_hit(struct rec_symgather *sc, struct sc_proc *p, uint64_t ip,
		    int ret_addr, int last_chance);

int rec_symgather_user_hit(struct rec_symgather *sc, uint32_t pid,
			   uint64_t ip, int ret_addr, int last_chance)
{
	struct sc_proc *p = rec_symgather_proc(sc, pid);

	return p ? proc_hit(sc, p, ip, ret_addr, last_chance) : -ENOMEM;
}

/* rec_symgather_user_hit() in a process already found. */
static int proc_hit(struct rec_symgather *sc, struct sc_proc *p, uint64_t ip,
		    int ret_addr, int last_chance)
{
	const struct sc_map *m;
	int ret;

	m = rec_symgather_map_at(p, ip);
	if (m && m->obj != NO_OBJ) {
		struct sc_obj *o = sc->objs[m->obj];

		if (o->full_done)
			return 2;
		ret = rec_u64map_put(&o->hits, ip - m->start + m->pgoff, 0);
		if (ret >= 0 && ret_addr && ip > m->start)
			ret = rec_u64map_put(&o->hits, ip - 1 - m->start + m->pgoff, 0);
		return ret < 0 ? ret : 2;
	}
	if (m || last_chance) {
		/* anonymous memory, or nothing mapped: JIT code maybe */
		if (!sc->o.perf_maps)
			return 1;
		ret = rec_u64map_put(&p->jit_hits, ip, 0);
		if (ret >= 0 && ret_addr && ip)
			ret = rec_u64map_put(&p->jit_hits, ip - 1, 0);
		return ret < 0 ? ret : 1;
	}
	return 0;
}

/* No user code lives in the first page or above 2^56 (the largest user
 * address space of a 64-bit kernel: x86-64 with 5-level paging, arm64
 * and riscv are below). Stack scans of code built without frame
 * pointers give such "return addresses" by the thousand. */
#define USER_CODE_MIN 4096u
#define USER_CODE_END (1ull << 56)

static int hit(struct rec_symgather *sc, uint32_t pid, uint64_t ip,
	       int kernel, int ret_addr)
{
	uint32_t tag = ret_addr ? 1u : 0u, ntag = 0;
	struct sc_proc *p = NULL;
	struct hit_slot *c;
	int ret;

	if (kernel) {
		pid = 0;   /* one kernel address space */
		tag |= 2u;
	} else {
		/* a callchain's addresses are all one process's */
		p = sc->last_proc;
		if (ip < USER_CODE_MIN || ip >= USER_CODE_END)
			return 0;
		if (!p || p->pid != pid) {
			p = rec_symgather_proc(sc, pid);
			if (!p)
				return -ENOMEM;
			sc->last_proc = p;
		}
		ntag = tag | 2u | (p->gen > sc->epoch ? p->gen : sc->epoch) << 2;
		tag |= p->gen << 2;
	}
	c = &sc->hcache[prec_hash_u64(ip ^ ((uint64_t)pid << 40)) >> (64 - HCACHE_BITS)];
	if (c->ip == ip && c->pid == pid && (c->tag == tag || c->tag == ntag))
		return 0;
	if (kernel) {
		kernel_hit(sc, ip, ret_addr);
		c->ip = ip;
		c->pid = pid;
		c->tag = tag;
		return 0;
	}
	ret = proc_hit(sc, p, ip, ret_addr, 0);
	if (ret >= 0) {
		/* 2: in an ELF object, until the space changes; 1 (JIT or
		 * not ours to name) and 0 (pending) until the next write */
		c->ip = ip;
		c->pid = pid;
		c->tag = ret == 2 ? tag : ntag;
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

int rec_symgather_hit(struct rec_symgather *sc, uint32_t pid, uint64_t ip,
		      int kernel)
{
	if (!sc)
		return -EINVAL;
	return hit(sc, pid, ip, kernel, 0);
}

int rec_symgather_hit_callchain(struct rec_symgather *sc, uint32_t pid,
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
static int scan_proc_maps(struct rec_symgather *sc, struct sc_proc *p)
{
	const char *root = sc->o.proc_maps ? sc->o.proc_maps : "/proc";
	uint64_t t0;
	char path[256], line[4352];
	FILE *f;
	int ret = 0;

	if (!*root)
		return 0;
	t0 = prec_now_ns();
	snprintf(path, sizeof(path), "%s/%u/maps", root, p->pid);
	f = fopen(path, "re");
	if (!f)
		goto out;
	sc->st.procs_scanned++;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8];
		int name = 0;
		struct rec_symgather_map m = { 0 };
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
	sc->st.time_ns += prec_now_ns() - t0;
	return ret;
}


void rec_symgather_restart(struct rec_symgather *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->nobjs; i++) {
		struct sc_obj *o = sc->objs[i];

		rec_u64map_clear(&o->hits);
		rec_u64map_clear(&o->done);
		o->written = 0;
		o->full_done = 0;
		o->unwind_need = 0;
		o->unwind_written = 0;
	}
	for (size_t i = 0; i < sc->nprocs; i++) {
		rec_u64map_clear(&sc->procs[i]->jit_hits);
		rec_u64map_clear(&sc->procs[i]->jit_done);
	}
	sc->npend = 0;
	if (sc->kstate)
		memset(sc->kstate, 0, sc->ksyms.nsyms);
	rec_u64map_clear(&sc->kunknown);
	sc->kernel_hits = 0;
	sc->kernel_noted = 0;
	/* cached hits were recorded for the old output */
	restart_gens(sc);
}

void rec_symgather_cfi_free(struct sc_cfi *c)
{
	if (!c)
		return;
	prec_cfi_table_free(c->t);
	rec_elfcfi_release(&c->c);
	free(c);
}
