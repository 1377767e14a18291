/*
 * symwrite.c - the symbol gatherer's writing part: the symbols of what
 * was hit, read from ELF files (format/base/elf.h), kallsyms and perf maps,
 * written as SymbolTable packets. See symgather.h for when; the state is
 * addrspace_int.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recorder/encode/decode.h"
#include "format/base/clock.h"
#include "recorder/symbols/elfcfi.h"
#include "recorder/symbols/kallsyms.h"
#include "recorder/symbols/perfmap.h"
#include "recorder/symbols/objfile.h"
#include "recorder/symbols/symgather.h"

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
	const struct prec_elf_seg *segs;
	size_t nsegs;
	const char *reason;
};

/* Emits syms (sorted by start) as one or more SymbolTable packets; a table
 * with no symbols still goes out once (it carries path, build-id, reason). */
static int emit_table(struct rec_symgather *sc, struct prec_writer *w,
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

static int emit_note(struct rec_symgather *sc, struct prec_writer *w,
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

static int write_kernel(struct rec_symgather *sc, struct prec_writer *w,
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

/* The vDSO is the kernel's: every native process of this host maps the
 * same image, so ours stands for theirs (32-bit processes have another
 * one; a build-id from the MMAP2 record tells them apart). */
static int load_vdso(struct prec_elf *e)
{
	const void *img;
	size_t len;
	int ret = rec_symgather_vdso(&img, &len);

	return ret ? ret : prec_elf_parse(img, len, e);
}

/* The path of the debug file of build-id bid under the gatherer's debug
 * directory: 0, or -ENOENT when debug files are not looked up. */
static int debug_path(const struct rec_symgather *sc, const uint8_t *bid,
		      size_t bid_len, char *path, size_t len)
{
	const char *dir = sc->o.debug_dir ? sc->o.debug_dir : "/usr/lib/debug";
	char *q;

	if (!*dir || bid_len < 2 || len < 300)
		return -ENOENT;
	q = path + snprintf(path, len - 200, "%s/.build-id/%02x/", dir, bid[0]);
	for (size_t i = 1; i < bid_len; i++)
		q += snprintf(q, 3, "%02x", bid[i]);
	strcpy(q, ".debug");
	return 0;
}

/* A stripped object (symbols from .dynsym only) with an installed debug
 * file: take the debug file's symbols, which use the same addresses. The
 * object's own segments and build-id stay. 1 = replaced. */
static int use_debug_file(const struct rec_symgather *sc, struct prec_elf *e)
{
	struct prec_elf d;
	char path[4200];

	if (!e->from_dynsym ||
	    debug_path(sc, e->build_id, e->build_id_len, path, sizeof(path)))
		return 0;
	if (prec_elf_load(path, &d) != 0)
		return 0;
	if (d.from_dynsym || !d.nsyms ||
	    (d.build_id_len && (d.build_id_len != e->build_id_len ||
				memcmp(d.build_id, e->build_id, d.build_id_len)))) {
		prec_elf_release(&d);
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
	prec_elf_release(&d);
	return 1;
}

/* Whether a cached table still is what the file would give: its symbols
 * came from a debug file that is still there, or from the object with no
 * debug file installed since (one would name more). */
static int cached_current(const struct rec_symgather *sc,
			  const struct rec_symcache_table *t)
{
	char path[4200];
	int have;

	if (t->source == REC_SYMCACHE_SYMTAB)
		return 1;
	have = debug_path(sc, t->e.build_id, t->e.build_id_len, path,
			  sizeof(path)) == 0 && access(path, F_OK) == 0;
	return t->source == REC_SYMCACHE_DEBUG ? have : !have;
}

/* o's symbols: for the [vdso] from our own image; else from the cache
 * by the build-id of o's file (rec_symgather_obj_open), or read from the
 * file (and its debug file). *store: 1 the table is to be put in the
 * cache (read from a file with a build-id and a key), 2 it came from
 * there, 0 neither. Returns 0, or < 0 with
 * *why set when there is more to say than the errno. */
static int load_table(struct rec_symgather *sc, const struct sc_obj *o,
		      struct rec_symcache_table *t, int *store, const char **why)
{
	uint8_t bid[64];
	uint64_t key = 0;
	int fd, ret, n = 0;

	*why = NULL;
	*store = 0;
	memset(t, 0, sizeof(*t));
	if (strcmp(o->path, VDSO_PATH) == 0) {
		ret = load_vdso(&t->e);
		if (!ret && (ret = rec_symgather_vdso_mismatch(o, t->e.build_id,
							       t->e.build_id_len, why)))
			prec_elf_release(&t->e);
		return ret;
	}
	fd = rec_symgather_obj_open(sc, o, why);
	if (fd < 0)
		return fd;
	if (sc->cache && (n = prec_elf_build_id_fd(fd, bid, sizeof(bid))) > 0 &&
	    rec_symcache_file_key(fd, &key) != 0)
		n = 0;   /* no key: not cached */
	if (n > 0) {
		ret = rec_symcache_get(sc->cache, bid, (size_t)n, key, t);
		if (ret == 0 && cached_current(sc, t)) {
			close(fd);
			sc->st.symcache_hits++;
			*store = 2;
			return 0;
		}
		rec_symcache_table_release(t);
		sc->st.symcache_misses++;
		if (ret == -EBADMSG || ret == -EPERM)
			sc->st.symcache_damaged++;
	}
	ret = prec_elf_read_fd(fd, &t->e);
	close(fd);
	if (ret)
		return ret;
	t->source = use_debug_file(sc, &t->e) ? REC_SYMCACHE_DEBUG :
		    t->e.from_dynsym ? REC_SYMCACHE_DYNSYM : REC_SYMCACHE_SYMTAB;
	t->file_key = key;
	*store = n > 0 && t->e.build_id_len == (size_t)n &&
		 !memcmp(t->e.build_id, bid, (size_t)n);
	return 0;
}

static int cmp_esym(const void *pa, const void *pb)
{
	const struct esym *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* The function range covering vaddr, for an address of o no symbol
 * holds: the FDE of o's unwind sections that covers it (a compiler emits
 * one per function, stripped or not), clipped to the gap between the
 * table's symbols so that no address changes name. The FDEs' ranges come
 * with a cached table, or are taken from o's CFI at the first need
 * (*dirty: the table gained them). 0 and [*start, *start + *size), or
 * -ENOENT (no CFI, or no FDE covers it), -ENOMEM. */
static int fde_range(struct rec_symgather *sc, struct sc_obj *o,
		     struct rec_symcache_table *t, uint64_t vaddr,
		     uint64_t *start, uint64_t *size, int *dirty)
{
	const struct prec_elf *e = &t->e;
	struct rec_fnrange fr;
	uint64_t lo, hi;
	size_t a = 0, b = e->nsyms;

	if (!t->have_ranges) {
		const struct sc_cfi *c = rec_symgather_obj_cfi(sc, o);

		if (c) {
			if (rec_symcache_ranges_from_cfi(c->t, t) < 0)
				return -ENOMEM;
			*dirty = 1;
		} else if (o->cfi_err && o->cfi_err != -ENOMEM) {
			t->have_ranges = 1;   /* none: the file has no CFI */
			*dirty = 1;
		} else {
			return -ENOENT;
		}
	}
	if (rec_symcache_range_find(t, vaddr, &fr) != 0)
		return -ENOENT;
	lo = fr.begin;
	hi = fr.end;
	while (a < b) {   /* first symbol starting after vaddr */
		size_t mid = a + (b - a) / 2;

		if (e->syms[mid].start <= vaddr)
			a = mid + 1;
		else
			b = mid;
	}
	if (a < e->nsyms && e->syms[a].start < hi)
		hi = e->syms[a].start;
	for (size_t k = 0; k < 16 && k < a; k++) {
		const struct prec_elf_sym *s = &e->syms[a - 1 - k];
		uint64_t end = s->start + s->size;

		if (end > lo && end <= vaddr)
			lo = end;
	}
	*start = lo;
	*size = hi - lo;
	return 0;
}

/* "libname.so+0x1a2b0": a function range's name (its start, in the
 * object's addresses, as perf prints an address of a DSO). NULL + ENOMEM. */
static char *range_name(const char *path, uint64_t start)
{
	const char *base = strrchr(path, '/');
	char *name;
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base) + 24;
	name = malloc(n);
	if (name)
		snprintf(name, n, "%s+0x%llx", base, (unsigned long long)start);
	return name;
}

static int write_obj(struct rec_symgather *sc, struct prec_writer *w,
		     uint32_t stream, uint64_t t, struct sc_obj *o)
{
	struct table_hdr h = { 0 };
	struct rec_symcache_table tab;
	struct prec_elf *e = &tab.e;
	struct esym *es = NULL;
	char **rnames = NULL;
	const char *why;
	char reason[256];
	size_t n = 0, nr = 0, nhits = rec_u64map_count(&o->hits);
	int ret, store = 0, dirty = 0;

	h.path = o->path;
	ret = load_table(sc, o, &tab, &store, &why);
	if (ret) {
		if (o->written) {
			/* symbols went out before; the file is gone now */
			rec_u64map_clear(&o->hits);
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
		rec_u64map_release(&o->hits);
		sc->st.unavailable++;
		return emit_table(sc, w, stream, t, &h, NULL, 0);
	}
	/* A later pass must read the same file as the first: a package
	 * upgrade may have replaced it meanwhile (new hits are then lost
	 * rather than named from the wrong binary). */
	if (o->written && (e->build_id_len != o->file_bid_len ||
			   memcmp(e->build_id, o->file_bid, e->build_id_len) != 0)) {
		rec_u64map_clear(&o->hits);
		ret = 0;
		goto out;
	}
	memcpy(o->file_bid, e->build_id, e->build_id_len);
	o->file_bid_len = e->build_id_len;
	h.kind = PERFREC__SYMBOL_TABLE__KIND__ELF;
	h.bid = e->build_id_len ? e->build_id : o->bid;
	h.bid_len = e->build_id_len ? e->build_id_len : o->bid_len;
	h.load_bias = e->load_bias;
	if (!o->written) {
		h.segs = e->segs;
		h.nsegs = e->nsegs;
	}
	es = calloc(e->nsyms + nhits + 1, sizeof(*es));
	rnames = calloc(nhits + 1, sizeof(*rnames));
	if (!es || !rnames) {
		ret = -ENOMEM;
		goto out;
	}
	if (sc->o.full_tables) {
		for (size_t i = 0; i < e->nsyms; i++) {
			es[n].start = e->syms[i].start;
			es[n].size = e->syms[i].size;
			es[n].name = e->syms[i].name;
			n++;
		}
		o->full_done = 1;
	}
	/* the symbols holding a hit (return addresses brought their byte
	 * before, see user_hit), or else the function range of its FDE */
	for (size_t i = 0; i < nhits; i++) {
		uint64_t off = rec_u64map_key(&o->hits, i), va, start, size;
		const struct prec_elf_sym *s;

		va = prec_elf_vaddr(e, off);
		s = prec_elf_find(e, va);
		if (s && sc->o.full_tables)
			continue;   /* written above */
		if (s) {
			start = s->start;
			size = s->size;
		} else if ((ret = fde_range(sc, o, &tab, va, &start, &size,
					    &dirty)) != 0) {
			if (ret == -ENOMEM)
				goto out;
			continue;
		}
		if (rec_u64map_get(&o->done, start))
			continue;
		ret = rec_u64map_put(&o->done, start, 0);
		if (ret < 0)
			goto out;
		es[n].start = start;
		es[n].size = size;
		if (s) {
			es[n].name = s->name;
		} else {
			rnames[nr] = range_name(o->path, start);
			if (!rnames[nr]) {
				ret = -ENOMEM;
				goto out;
			}
			es[n].name = rnames[nr++];
			sc->st.fde_ranges++;
		}
		n++;
	}
	qsort(es, n, sizeof(*es), cmp_esym);
	rec_u64map_clear(&o->hits);
	if (o->written && !n) {
		ret = 0;
		goto out;
	}
	if (!o->written)
		sc->st.objects++;
	o->written = 1;
	ret = emit_table(sc, w, stream, t, &h, es, n);
out:
	/* the cache gets what the file gave, or the ranges a cached table
	 * gained; a full disk only costs the next recording the read */
	if (ret >= 0 && (store == 1 || (store == 2 && dirty))) {
		if (rec_symcache_put(sc->cache, &tab) == 0)
			sc->st.symcache_stores++;
	}
	for (size_t i = 0; i < nr; i++)
		free(rnames[i]);
	free(rnames);
	free(es);
	rec_symcache_table_release(&tab);
	return ret;
}

/* Which of m's symbols contain a hit: each hit finds its symbol by
 * binary search (JIT maps can hold 10^5 entries). Returns a calloc'd array
 * of m->nsyms flags (caller frees) or NULL. */
static uint8_t *perfmap_marks(const struct rec_perfmap *m,
			      const struct rec_u64map *hits)
{
	uint8_t *mark = calloc(m->nsyms ? m->nsyms : 1, 1);

	if (!mark)
		return NULL;
	for (size_t k = 0; k < rec_u64map_count(hits); k++) {
		uint64_t ip = rec_u64map_key(hits, k);
		size_t lo = 0, hi = m->nsyms;

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

static int write_perfmap(struct rec_symgather *sc, struct prec_writer *w,
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
		rec_u64map_clear(&p->jit_hits);
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
		ret = rec_u64map_put(&p->jit_done, s->start, 0);
		if (ret < 0)
			goto out;
		if (ret == 0)
			continue;   /* written before */
		es[n].start = s->start;
		es[n].size = s->size;
		es[n].name = s->name;
		n++;
	}
	rec_u64map_clear(&p->jit_hits);
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

/* Unwind sections go out in pieces of at most this many bytes: libc's
 * .eh_frame (150 KiB) in one packet, libLLVM's (9 MiB) in 36. */
#define UNWIND_PIECE (256u << 10)

/* The unwind sections of o as UnwindTable packets (the first also carries
 * the load segments); an object whose sections could not be read gets one
 * UNAVAILABLE table with the reason. Returns the packets written or < 0. */
static int write_unwind(struct rec_symgather *sc, struct prec_writer *w,
			uint32_t stream, uint64_t t, struct sc_obj *o)
{
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__UnwindTable ut = PERFREC__UNWIND_TABLE__INIT;
	Perfrec__UnwindSection sec = PERFREC__UNWIND_SECTION__INIT;
	Perfrec__UnwindSection *secs[1] = { &sec };
	const struct rec_elfcfi *c = o->cfi ? &o->cfi->c : NULL;
	const struct rec_elfcfi_sec *parts[3];
	uint64_t *segv = NULL;
	char reason[160];
	int ret = 0, packets = 0;

	o->unwind_need = 0;
	o->unwind_written = 1;
	ut.kind = PERFREC__UNWIND_TABLE__KIND__ELF;
	ut.path = o->path;
	pkt.data_case = PERFREC__PACKET__DATA_UNWIND;
	pkt.unwind = &ut;
	if (!c) {
		ut.kind = PERFREC__UNWIND_TABLE__KIND__UNAVAILABLE;
		ut.build_id.data = o->bid;
		ut.build_id.len = o->bid_len;
		snprintf(reason, sizeof(reason), "%s", o->cfi_why ? o->cfi_why :
			 o->cfi_err == -ENODATA ? "no .eh_frame or .debug_frame" :
			 strerror(-o->cfi_err));
		ut.reason = reason;
		ret = prec_writer_append(w, stream, &pkt, t);
		if (ret)
			return ret;
		sc->st.unwind_tables++;
		sc->st.unwind_bytes += perfrec__packet__get_packed_size(&pkt);
		return 1;
	}
	if (c->nsegs) {
		segv = calloc(c->nsegs * 3, sizeof(*segv));
		if (!segv)
			return -ENOMEM;
		for (size_t i = 0; i < c->nsegs; i++) {
			segv[i] = c->segs[i].offset;
			segv[c->nsegs + i] = c->segs[i].vaddr;
			segv[2 * c->nsegs + i] = c->segs[i].filesz;
		}
	}
	ut.build_id.data = c->build_id_len ? (uint8_t *)c->build_id : o->bid;
	ut.build_id.len = c->build_id_len ? c->build_id_len : o->bid_len;
	ut.load_bias = c->load_bias;
	ut.n_sections = 1;
	ut.sections = secs;
	parts[PERFREC__UNWIND_SECTION__KIND__EH_FRAME] = &c->eh_frame;
	parts[PERFREC__UNWIND_SECTION__KIND__EH_FRAME_HDR] = &c->eh_frame_hdr;
	parts[PERFREC__UNWIND_SECTION__KIND__DEBUG_FRAME] = &c->debug_frame;
	for (int k = 0; k < 3; k++) {
		const struct rec_elfcfi_sec *part = parts[k];

		for (size_t off = 0; part->data && off < part->len; off += UNWIND_PIECE) {
			if (!packets && segv) {
				ut.n_load_offsets = ut.n_load_vaddrs =
					ut.n_load_sizes = c->nsegs;
				ut.load_offsets = segv;
				ut.load_vaddrs = segv + c->nsegs;
				ut.load_sizes = segv + 2 * c->nsegs;
			} else {
				ut.n_load_offsets = ut.n_load_vaddrs = ut.n_load_sizes = 0;
			}
			sec.kind = (Perfrec__UnwindSection__Kind)k;
			sec.addr = part->addr;
			sec.size = part->len;
			sec.offset = off;
			sec.data.data = part->data + off;
			sec.data.len = part->len - off < UNWIND_PIECE ?
				       part->len - off : UNWIND_PIECE;
			ret = prec_writer_append(w, stream, &pkt, t);
			if (ret)
				goto out;
			sc->st.unwind_tables++;
			sc->st.unwind_bytes += perfrec__packet__get_packed_size(&pkt);
			packets++;
		}
	}
	ret = packets;
out:
	free(segv);
	return ret;
}

int rec_symgather_write(struct rec_symgather *sc, struct prec_writer *w,
			uint32_t stream, uint64_t time_ns)
{
	uint64_t t0 = prec_now_ns();
	int total = 0, ret = 0;

	if (!sc || !w)
		return -EINVAL;
	/* hits that came before their mapping: match them now, for good */
	for (size_t i = 0; i < sc->npend; i++) {
		ret = rec_symgather_user_hit(sc, sc->pend[i].pid, sc->pend[i].ip,
			       sc->pend[i].ret_addr, 1);
		if (ret < 0)
			goto out;
	}
	sc->npend = 0;
	ret = rec_symgather_kernel_reload(sc, 0);
	if (ret < 0 && ret != -ENOMEM)
		ret = 0;   /* kallsyms unreadable now: the old table stays */
	if (ret < 0)
		goto out;
	ret = write_kernel(sc, w, stream, time_ns);
	if (ret < 0)
		goto out;
	total += ret;
	for (size_t i = 0; i < sc->nobjs; i++) {
		struct sc_obj *o = sc->objs[i];

		if (o->full_done || !rec_u64map_count(&o->hits))
			continue;
		ret = write_obj(sc, w, stream, time_ns, o);
		if (ret < 0)
			goto out;
		total += ret;
	}
	for (size_t i = 0; i < sc->nobjs; i++) {
		struct sc_obj *o = sc->objs[i];

		if (!o->unwind_need || o->unwind_written)
			continue;
		ret = write_unwind(sc, w, stream, time_ns, o);
		if (ret < 0)
			goto out;
		total += ret;
	}
	for (size_t i = 0; sc->o.perf_maps && i < sc->nprocs; i++) {
		struct sc_proc *p = sc->procs[i];

		if (!rec_u64map_count(&p->jit_hits))
			continue;
		ret = write_perfmap(sc, w, stream, time_ns, p);
		if (ret < 0)
			goto out;
		total += ret;
	}
	ret = total;
out:
	rec_symgather_new_epoch(sc);
	sc->st.time_ns += prec_now_ns() - t0;
	return ret;
}
