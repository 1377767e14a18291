/*
 * symcache.c - symbol tables on disk by build-id (see symcache.h): the
 * entry codec, the directory checks, get, put and eviction.
 */
#include "recorder/symbols/symcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/base/hashmap.h"
#include "recorder/log.h"

#define MAGIC "PRECSYMC"
#define SEG_BYTES 24u
#define SYM_BYTES 20u
#define RANGE_BYTES 16u
#define OFF_CHECKSUM 128
#define FLAG_RANGES 1u
#define FLAG_DYN 2u
#define FLAG_DYNSYM 4u
#define SUFFIX ".sym"

struct rec_symcache {
	int dfd;
	uint64_t max_bytes;
	char *dir;
};

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static uint64_t checksum(const uint8_t *buf, size_t len)
{
	uint8_t hdr[REC_SYMCACHE_HDR];

	memcpy(hdr, buf, sizeof(hdr));
	memset(hdr + OFF_CHECKSUM, 0, 8);
	return prec_hash_bytes(hdr, sizeof(hdr)) * 31 +
	       prec_hash_bytes(buf + sizeof(hdr), len - sizeof(hdr));
}

void rec_symcache_table_release(struct rec_symcache_table *t)
{
	if (!t)
		return;
	prec_elf_release(&t->e);
	free(t->ranges);
	memset(t, 0, sizeof(*t));
}

int rec_symcache_encode(const struct rec_symcache_table *t, uint8_t **buf,
			size_t *len)
{
	const struct prec_elf *e = &t->e;
	size_t nr = t->have_ranges ? t->n_eh + t->n_dbg : 0, names = 0;
	uint64_t payload;
	uint8_t *b, *p;
	char *q;

	for (size_t i = 0; i < e->nsyms; i++)
		names += strlen(e->syms[i].name) + 1;
	if (e->nsegs > UINT32_MAX || e->nsyms > UINT32_MAX || nr > UINT32_MAX ||
	    names > UINT32_MAX || e->build_id_len > 64)
		return -E2BIG;
	payload = (uint64_t)e->nsegs * SEG_BYTES + (uint64_t)e->nsyms * SYM_BYTES +
		  (uint64_t)nr * RANGE_BYTES + names;
	if (payload + REC_SYMCACHE_HDR > REC_SYMCACHE_ENTRY_MAX)
		return -E2BIG;
	b = calloc(1, REC_SYMCACHE_HDR + (size_t)payload);
	if (!b)
		return -ENOMEM;
	memcpy(b, MAGIC, 8);
	put32(b + 8, REC_SYMCACHE_VERSION);
	put32(b + 12, (uint32_t)e->build_id_len);
	memcpy(b + 16, e->build_id, e->build_id_len);
	put32(b + 80, (uint32_t)t->source);
	put32(b + 84, (t->have_ranges ? FLAG_RANGES : 0) | (e->is_dyn ? FLAG_DYN : 0) |
		      (e->from_dynsym ? FLAG_DYNSYM : 0));
	put64(b + 88, e->load_bias);
	put32(b + 96, (uint32_t)e->nsegs);
	put32(b + 100, (uint32_t)e->nsyms);
	put32(b + 104, t->have_ranges ? (uint32_t)t->n_eh : 0);
	put32(b + 108, t->have_ranges ? (uint32_t)t->n_dbg : 0);
	put32(b + 112, (uint32_t)names);
	put64(b + 120, payload);
	put64(b + 136, t->file_key);
	p = b + REC_SYMCACHE_HDR;
	for (size_t i = 0; i < e->nsegs; i++, p += SEG_BYTES) {
		put64(p, e->segs[i].offset);
		put64(p + 8, e->segs[i].vaddr);
		put64(p + 16, e->segs[i].filesz);
	}
	q = (char *)p + (size_t)e->nsyms * SYM_BYTES + nr * RANGE_BYTES;
	names = 0;
	for (size_t i = 0; i < e->nsyms; i++, p += SYM_BYTES) {
		size_t n = strlen(e->syms[i].name) + 1;

		put64(p, e->syms[i].start);
		put64(p + 8, e->syms[i].size);
		put32(p + 16, (uint32_t)names);
		memcpy(q + names, e->syms[i].name, n);
		names += n;
	}
	for (size_t i = 0; i < nr; i++, p += RANGE_BYTES) {
		put64(p, t->ranges[i].begin);
		put64(p + 8, t->ranges[i].end);
	}
	*len = REC_SYMCACHE_HDR + (size_t)payload;
	put64(b + OFF_CHECKSUM, checksum(b, *len));
	*buf = b;
	return 0;
}

#define BAD(text) do { *why = (text); ret = -EBADMSG; goto err; } while (0)

int rec_symcache_parse(const uint8_t *buf, size_t len, const uint8_t *bid,
		       size_t bid_len, uint64_t key, struct rec_symcache_table *t,
		       const char **why)
{
	const uint8_t *p;
	uint32_t flags, nsegs, nsyms, n_eh, n_dbg, names;
	uint64_t payload;
	const char *q;
	int ret;

	memset(t, 0, sizeof(*t));
	*why = NULL;
	if (len < REC_SYMCACHE_HDR || memcmp(buf, MAGIC, 8) != 0)
		BAD("not a symbol cache entry (magic)");
	if (get32(buf + 8) != REC_SYMCACHE_VERSION)
		BAD("another version");
	t->e.build_id_len = get32(buf + 12);
	if (t->e.build_id_len > 64 || !t->e.build_id_len)
		BAD("build-id length");
	memcpy(t->e.build_id, buf + 16, t->e.build_id_len);
	t->file_key = get64(buf + 136);
	if (bid && (bid_len != t->e.build_id_len || memcmp(bid, buf + 16, bid_len) ||
		    key != t->file_key))
		BAD("another build-id or file");
	t->source = (int)get32(buf + 80);
	flags = get32(buf + 84);
	if (t->source > REC_SYMCACHE_DEBUG || flags & ~7u || get32(buf + 116))
		BAD("unknown source or flags");
	t->have_ranges = !!(flags & FLAG_RANGES);
	t->e.is_dyn = !!(flags & FLAG_DYN);
	t->e.from_dynsym = !!(flags & FLAG_DYNSYM);
	t->e.load_bias = get64(buf + 88);
	nsegs = get32(buf + 96);
	nsyms = get32(buf + 100);
	n_eh = get32(buf + 104);
	n_dbg = get32(buf + 108);
	names = get32(buf + 112);
	payload = get64(buf + 120);
	if (!t->have_ranges && (n_eh || n_dbg))
		BAD("ranges without their flag");
	/* 32-bit counts: the sums below cannot overflow 64 bits */
	if (payload != (uint64_t)nsegs * SEG_BYTES + (uint64_t)nsyms * SYM_BYTES +
		       ((uint64_t)n_eh + n_dbg) * RANGE_BYTES + names ||
	    payload != len - REC_SYMCACHE_HDR)
		BAD("lengths do not add up (truncated?)");
	if (get64(buf + OFF_CHECKSUM) != checksum(buf, len))
		BAD("checksum");
	if (nsyms && (!names || buf[len - 1] != 0))
		BAD("names not terminated");
	t->e.segs = calloc(nsegs ? nsegs : 1, sizeof(*t->e.segs));
	t->e.syms = calloc(nsyms ? nsyms : 1, sizeof(*t->e.syms));
	t->ranges = calloc((size_t)n_eh + n_dbg + 1, sizeof(*t->ranges));
	t->e.names = malloc(names + 1);
	if (!t->e.segs || !t->e.syms || !t->ranges || !t->e.names) {
		ret = -ENOMEM;
		goto err;
	}
	p = buf + REC_SYMCACHE_HDR;
	for (uint32_t i = 0; i < nsegs; i++, p += SEG_BYTES) {
		t->e.segs[i].offset = get64(p);
		t->e.segs[i].vaddr = get64(p + 8);
		t->e.segs[i].filesz = get64(p + 16);
	}
	t->e.nsegs = nsegs;
	q = (const char *)p + (size_t)nsyms * SYM_BYTES + ((size_t)n_eh + n_dbg) * RANGE_BYTES;
	memcpy(t->e.names, q, names);
	t->e.names[names] = 0;
	for (uint32_t i = 0; i < nsyms; i++, p += SYM_BYTES) {
		uint32_t off = get32(p + 16);

		t->e.syms[i].start = get64(p);
		t->e.syms[i].size = get64(p + 8);
		if (off >= names)
			BAD("name offset");
		if (i && t->e.syms[i].start <= t->e.syms[i - 1].start)
			BAD("symbols out of order");
		t->e.syms[i].name = t->e.names + off;
	}
	t->e.nsyms = nsyms;
	for (uint32_t i = 0; i < n_eh + n_dbg; i++, p += RANGE_BYTES) {
		t->ranges[i].begin = get64(p);
		t->ranges[i].end = get64(p + 8);
		if (t->ranges[i].end <= t->ranges[i].begin)
			BAD("empty range");
		if (i && i != n_eh && t->ranges[i].begin < t->ranges[i - 1].begin)
			BAD("ranges out of order");
	}
	t->n_eh = n_eh;
	t->n_dbg = n_dbg;
	return 0;
err:
	rec_symcache_table_release(t);
	return ret;
}

/* ---- function ranges */

static int cmp_range(const void *pa, const void *pb)
{
	const struct rec_fnrange *a = pa, *b = pb;

	if (a->begin != b->begin)
		return a->begin < b->begin ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

/* Appends the FDEs of one section; the walk stops at its end, a
 * terminator or bytes that do not parse. */
static int walk_fdes(const struct prec_cfi_table *cfi, int section,
		     struct rec_fnrange **r, size_t *n, size_t *cap)
{
	uint64_t off = 0, next = 0;
	struct prec_cfi_fde fde;
	int ret;

	while ((ret = prec_cfi_entry_at(cfi, section, off, &fde, &next)) >= 0) {
		if (next <= off)
			break;
		off = next;
		if (ret == 1 || fde.pc_end <= fde.pc_begin)
			continue;   /* a CIE, or an empty FDE (discarded code) */
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 256;
			struct rec_fnrange *nr = realloc(*r, nc * sizeof(*nr));

			if (!nr)
				return -ENOMEM;
			*r = nr;
			*cap = nc;
		}
		(*r)[*n].begin = fde.pc_begin;
		(*r)[(*n)++].end = fde.pc_end;
	}
	return ret == -ENOMEM ? ret : 0;
}

int rec_symcache_ranges_from_cfi(const struct prec_cfi_table *cfi,
				 struct rec_symcache_table *t)
{
	struct rec_fnrange *r = NULL;
	size_t n = 0, cap = 0, n_eh;
	int ret;

	ret = walk_fdes(cfi, PREC_CFI_EH_FRAME, &r, &n, &cap);
	n_eh = n;
	if (!ret)
		ret = walk_fdes(cfi, PREC_CFI_DEBUG_FRAME, &r, &n, &cap);
	if (ret) {
		free(r);
		return ret;
	}
	if (n_eh)
		qsort(r, n_eh, sizeof(*r), cmp_range);
	if (n > n_eh)
		qsort(r + n_eh, n - n_eh, sizeof(*r), cmp_range);
	free(t->ranges);
	t->ranges = r;
	t->n_eh = n_eh;
	t->n_dbg = n - n_eh;
	t->have_ranges = 1;
	return 0;
}

/* The last range of r[0, n) beginning at or before vaddr, if it holds
 * vaddr. */
static const struct rec_fnrange *find_in(const struct rec_fnrange *r, size_t n,
					 uint64_t vaddr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].begin <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && vaddr < r[lo - 1].end ? &r[lo - 1] : NULL;
}

int rec_symcache_range_find(const struct rec_symcache_table *t, uint64_t vaddr,
			    struct rec_fnrange *out)
{
	const struct rec_fnrange *r;

	if (!t->have_ranges)
		return -ENOENT;
	r = find_in(t->ranges, t->n_eh, vaddr);
	if (!r)
		r = find_in(t->ranges + t->n_eh, t->n_dbg, vaddr);
	if (!r)
		return -ENOENT;
	*out = *r;
	return 0;
}

/* ---- the directory */

const char *rec_symcache_default_dir(void)
{
	const char *d = getenv("PERFREC_SYMBOL_CACHE");

	return d ? d : "/var/cache/perfrec";
}

/* 0 when st (of the directory or an entry) may be trusted: ours, and
 * nobody else may write it; else -EPERM and why. */
static int check_owner(const struct stat *st, char *why, size_t why_len,
		       const char *what)
{
	if (st->st_uid != geteuid()) {
		snprintf(why, why_len, "%s is owned by uid %u, not by the "
			 "recorder's uid %u: chown it or remove it", what,
			 (unsigned)st->st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, why_len, "%s is group- or world-writable (mode "
			 "%03o), so anyone could plant symbols root reads: "
			 "chmod go-w it", what, (unsigned)(st->st_mode & 0777));
		return -EPERM;
	}
	return 0;
}

struct rec_symcache *rec_symcache_open(const char *dir, uint64_t max_bytes,
				       char *why, size_t why_len)
{
	struct rec_symcache *c;
	struct stat st;
	int dfd, err;

	if (!dir || !*dir) {
		snprintf(why, why_len, "no directory");
		errno = EINVAL;
		return NULL;
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		err = errno;
		snprintf(why, why_len, "cannot create %s: %s (set "
			 "PERFREC_SYMBOL_CACHE to a directory of yours, or to "
			 "\"\" for no cache)", dir, strerror(err));
		errno = err;
		return NULL;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		err = errno;
		/* O_NOFOLLOW | O_DIRECTORY on a link fails with ENOTDIR */
		if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
			err = ELOOP;
		snprintf(why, why_len, "cannot open %s: %s%s", dir, strerror(err),
			 err == ELOOP ? " (a symbolic link: not followed; give "
			 "the directory it points to)" : "");
		errno = err;
		return NULL;
	}
	if (fstat(dfd, &st) < 0) {
		err = errno;
		snprintf(why, why_len, "%s: %s", dir, strerror(err));
		goto err_close;
	}
	if (check_owner(&st, why, why_len, dir) < 0) {
		err = EPERM;
		goto err_close;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->dir = strdup(dir))) {
		free(c);
		err = ENOMEM;
		snprintf(why, why_len, "out of memory");
		goto err_close;
	}
	c->dfd = dfd;
	c->max_bytes = max_bytes ? max_bytes : REC_SYMCACHE_MAX_BYTES;
	return c;
err_close:
	close(dfd);
	errno = err;
	return NULL;
}

void rec_symcache_free(struct rec_symcache *c)
{
	if (!c)
		return;
	close(c->dfd);
	free(c->dir);
	free(c);
}

/* "BUILDID-KEY.sym": a stripped copy and its original side by side */
static void entry_name(char *name, size_t n, const uint8_t *bid, size_t bid_len,
		       uint64_t key)
{
	size_t k = 0;

	for (size_t i = 0; i < bid_len && k + 3 < n; i++)
		k += (size_t)snprintf(name + k, n - k, "%02x", bid[i]);
	snprintf(name + k, n - k, "-%016llx%s", (unsigned long long)key, SUFFIX);
}

static uint64_t rd(const uint8_t *p, int size, int be)
{
	uint64_t v = 0;

	for (int i = 0; i < size; i++)
		v |= (uint64_t)p[be ? size - 1 - i : i] << (8 * i);
	return v;
}

int rec_symcache_file_key(int fd, uint64_t *key)
{
	uint8_t eh[64], *sh;
	uint64_t shoff, shlen;
	struct stat st;
	int c64, be;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return -errno;
	n = pread(fd, eh, sizeof(eh), 0);
	if (n < 0)
		return -errno;
	if (n < 52 || memcmp(eh, "\177ELF", 4) != 0 || eh[4] < 1 || eh[4] > 2 ||
	    eh[5] < 1 || eh[5] > 2)
		return -EINVAL;
	c64 = eh[4] == 2;
	be = eh[5] == 2;
	if (c64 && n < 64)
		return -EINVAL;
	shoff = c64 ? rd(eh + 40, 8, be) : rd(eh + 32, 4, be);
	shlen = c64 ? rd(eh + 58, 2, be) * rd(eh + 60, 2, be) :
		      rd(eh + 46, 2, be) * rd(eh + 48, 2, be);
	if (shlen > (1u << 20) || shoff > (uint64_t)st.st_size ||
	    shlen > (uint64_t)st.st_size - shoff)
		shlen = 0;   /* no (sane) section headers: the rest decides */
	sh = malloc(shlen + 1);
	if (!sh)
		return -ENOMEM;
	n = shlen ? pread(fd, sh, (size_t)shlen, (off_t)shoff) : 0;
	if (n < 0 || (uint64_t)n != shlen) {
		free(sh);
		return n < 0 ? -errno : -EINVAL;
	}
	*key = prec_hash_bytes(eh, (size_t)(c64 ? 64 : 52)) * 31 +
	       prec_hash_bytes(sh, (size_t)shlen) + (uint64_t)st.st_size * 0x9e3779b97f4a7c15ull;
	free(sh);
	return 0;
}

static int read_all(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EBADMSG;   /* shrank under us */
		got += (size_t)n;
	}
	return 0;
}

int rec_symcache_get(struct rec_symcache *c, const uint8_t *bid,
		     size_t bid_len, uint64_t key, struct rec_symcache_table *t)
{
	char name[160], why[256];
	const char *bad = NULL;
	uint8_t *buf;
	struct stat st;
	int fd, ret;

	memset(t, 0, sizeof(*t));
	if (!c || !bid_len || bid_len > 64)
		return -EINVAL;
	entry_name(name, sizeof(name), bid, bid_len, key);
	fd = openat(c->dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode))
		snprintf(why, sizeof(why), "%s is not a regular file", name);
	if (!S_ISREG(st.st_mode) || check_owner(&st, why, sizeof(why), name) < 0) {
		rec_log(REC_LOG_WARN, "symbol cache %s: %s; ignored", c->dir, why);
		ret = -EPERM;
		goto out;
	}
	if (st.st_size < REC_SYMCACHE_HDR || (uint64_t)st.st_size > REC_SYMCACHE_ENTRY_MAX) {
		bad = "size";
		ret = -EBADMSG;
		goto out;
	}
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	ret = read_all(fd, buf, (size_t)st.st_size);
	if (!ret)
		ret = rec_symcache_parse(buf, (size_t)st.st_size, bid, bid_len, key,
					 t, &bad);
	free(buf);
	if (!ret)
		futimens(fd, NULL);   /* used now: evicted last */
	if (ret == -EBADMSG && !bad)
		bad = "truncated";
out:
	if (ret == -EBADMSG)
		rec_log(REC_LOG_WARN, "symbol cache %s: entry %s is damaged (%s); "
			"ignored and rebuilt", c->dir, name, bad);
	close(fd);
	return ret;
}

struct ent {
	int64_t mtime_ns;
	uint64_t bytes;
	char name[160];
};

static int cmp_ent(const void *pa, const void *pb)
{
	const struct ent *a = pa, *b = pb;

	return a->mtime_ns < b->mtime_ns ? -1 : a->mtime_ns > b->mtime_ns;
}

/* Removes the least recently used entries until the directory holds at
 * most 3/4 of the bound (so that not every put scans it again). */
static void evict(struct rec_symcache *c)
{
	struct ent *e = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *d;
	int fd = dup(c->dfd);
	DIR *dir;

	if (fd < 0)
		return;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	rewinddir(dir);
	while ((d = readdir(dir))) {
		size_t l = strlen(d->d_name);
		struct stat st;

		if (l <= strlen(SUFFIX) || l >= sizeof(e->name) ||
		    strcmp(d->d_name + l - strlen(SUFFIX), SUFFIX) != 0 ||
		    fstatat(c->dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct ent *ne = realloc(e, nc * sizeof(*ne));

			if (!ne)
				goto out;
			e = ne;
			cap = nc;
		}
		e[n].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		e[n].bytes = (uint64_t)st.st_size;
		memcpy(e[n].name, d->d_name, l + 1);
		total += e[n].bytes;
		n++;
	}
	if (total <= c->max_bytes)
		goto out;
	qsort(e, n, sizeof(*e), cmp_ent);
	for (size_t i = 0; i < n && total > c->max_bytes / 4 * 3; i++)
		if (unlinkat(c->dfd, e[i].name, 0) == 0)
			total -= e[i].bytes;
out:
	free(e);
	closedir(dir);
}

int rec_symcache_put(struct rec_symcache *c, const struct rec_symcache_table *t)
{
	char name[160], tmp[200];
	uint8_t *buf;
	size_t len, done = 0;
	int fd, ret;

	if (!c || !t->e.build_id_len)
		return -EINVAL;
	ret = rec_symcache_encode(t, &buf, &len);
	if (ret)
		return ret;
	entry_name(name, sizeof(name), t->e.build_id, t->e.build_id_len,
		   t->file_key);
	snprintf(tmp, sizeof(tmp), ".tmp.%d.%s", (int)getpid(), name);
	fd = openat(c->dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		done += (size_t)n;
	}
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && renameat(c->dfd, tmp, c->dfd, name) < 0)
		ret = -errno;
	if (ret)
		unlinkat(c->dfd, tmp, 0);
	else
		evict(c);
out:
	free(buf);
	return ret;
}
