/*
 * elf.c - the one ELF reader (see elf.h for what and why).
 *
 * The constants below are the ELF gABI's, spelled out instead of including
 * <elf.h>, which macOS lacks. Every region the parser looks at (the header,
 * the program and section header tables, a note area, a symbol table and
 * its strings, a section) is fetched whole by get(), which checks it lies
 * inside the file: from memory it is a pointer into the caller's bytes,
 * from an fd a pread copy held until the parse ends. Integers are read by
 * rd() from a fetched region in the byte order of e_ident.
 */
/* pread, open, fstat: POSIX, present on Linux and macOS alike */
#define _POSIX_C_SOURCE 200809L

#include "format/base/elf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EI_CLASS 4
#define EI_DATA 5
#define ELFCLASS32 1
#define ELFCLASS64 2
#define ELFDATA2LSB 1
#define ELFDATA2MSB 2
#define ET_DYN 3
#define PT_LOAD 1
#define PT_NOTE 4
#define SHT_SYMTAB 2
#define SHT_NOTE 7
#define SHT_NOBITS 8
#define SHT_DYNSYM 11
#define SHF_COMPRESSED 0x800
#define SHN_UNDEF 0
#define SHN_LORESERVE 0xff00
#define SHN_ABS 0xfff1
#define SHN_XINDEX 0xffff
#define STT_FUNC 2
#define STT_GNU_IFUNC 10
#define STB_WEAK 2
#define NT_GNU_BUILD_ID 3

/* A pread copy, kept until the parse ends. */
struct blk {
	struct blk *next;
	uint8_t data[];
};

struct ctx {
	const uint8_t *buf;   /* the bytes, or NULL: read from fd */
	uint64_t len;
	int fd;
	int is64, msb;
	int err;              /* why the last get() failed */
	struct blk *blks;
};

/* Why the last get() failed: always negative (a failed pread sets errno,
 * but nothing here relies on it). */
static int get_err(const struct ctx *c)
{
	return c->err < 0 ? c->err : -EIO;
}

/* [off, off + n) of the file, or NULL with c->err set. */
static const uint8_t *get(struct ctx *c, uint64_t off, uint64_t n)
{
	struct blk *b;
	uint64_t done = 0;

	if (off > c->len || n > c->len - off) {
		c->err = -EBADMSG;
		return NULL;
	}
	if (c->buf)
		return c->buf + off;
	if (n > SIZE_MAX - sizeof(*b) - 1) {
		c->err = -ENOMEM;
		return NULL;
	}
	b = malloc(sizeof(*b) + (size_t)n + 1);
	if (!b) {
		c->err = -ENOMEM;
		return NULL;
	}
	while (done < n) {
		ssize_t r = pread(c->fd, b->data + done, (size_t)(n - done),
				  (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* shorter than fstat said: truncated under us */
			c->err = r < 0 ? -errno : -EBADMSG;
			free(b);
			return NULL;
		}
		done += (uint64_t)r;
	}
	b->next = c->blks;
	c->blks = b;
	return b->data;
}

static void ctx_release(struct ctx *c)
{
	while (c->blks) {
		struct blk *b = c->blks;

		c->blks = b->next;
		free(b);
	}
}

static uint64_t rd(const struct ctx *c, const uint8_t *p, uint64_t off, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++) {
		int k = c->msb ? i : n - 1 - i;

		v = (v << 8) | p[off + k];
	}
	return v;
}

#define rd16(c, p, o) ((uint32_t)rd((c), (p), (o), 2))
#define rd32(c, p, o) ((uint32_t)rd((c), (p), (o), 4))
/* an address-sized field: 8 bytes in ELF64, 4 in ELF32 */
#define rdaddr(c, p, o) rd((c), (p), (o), (c)->is64 ? 8 : 4)

struct shdr {
	uint32_t name, type, link;
	uint64_t flags, addr, offset, size, entsize;
};

struct hdr {
	uint32_t type;
	uint64_t phoff, shoff;
	uint32_t phentsize, phnum, shentsize, shnum, shstrndx;
	const uint8_t *ph, *sh;   /* the tables, fetched */
};

static int read_hdr(struct ctx *c, struct hdr *h)
{
	static const uint8_t magic[4] = { 0x7f, 'E', 'L', 'F' };
	const uint8_t *e = get(c, 0, 16), *s0;

	memset(h, 0, sizeof(*h));
	if (!e)
		return c->err == -ENOMEM ? -ENOMEM : -EINVAL;
	if (memcmp(e, magic, 4) != 0)
		return -EINVAL;
	if (e[EI_CLASS] != ELFCLASS32 && e[EI_CLASS] != ELFCLASS64)
		return -EINVAL;
	if (e[EI_DATA] != ELFDATA2LSB && e[EI_DATA] != ELFDATA2MSB)
		return -EINVAL;
	c->is64 = e[EI_CLASS] == ELFCLASS64;
	c->msb = e[EI_DATA] == ELFDATA2MSB;
	e = get(c, 0, c->is64 ? 64 : 52);
	if (!e)
		return get_err(c);
	h->type = rd16(c, e, 16);
	if (c->is64) {
		h->phoff = rd(c, e, 32, 8);
		h->shoff = rd(c, e, 40, 8);
		h->phentsize = rd16(c, e, 54);
		h->phnum = rd16(c, e, 56);
		h->shentsize = rd16(c, e, 58);
		h->shnum = rd16(c, e, 60);
		h->shstrndx = rd16(c, e, 62);
	} else {
		h->phoff = rd32(c, e, 28);
		h->shoff = rd32(c, e, 32);
		h->phentsize = rd16(c, e, 42);
		h->phnum = rd16(c, e, 44);
		h->shentsize = rd16(c, e, 46);
		h->shnum = rd16(c, e, 48);
		h->shstrndx = rd16(c, e, 50);
	}
	if (h->phnum && h->phentsize < (c->is64 ? 56u : 32u))
		return -EBADMSG;
	if (h->shoff && h->shentsize < (c->is64 ? 64u : 40u))
		return -EBADMSG;
	if (!h->shoff)
		h->shnum = 0;
	/* More than SHN_LORESERVE sections: the count is in section 0, and
	 * with SHN_XINDEX the string table's index in its sh_link. */
	if (h->shoff && (h->shnum == 0 || h->shstrndx == SHN_XINDEX)) {
		s0 = get(c, h->shoff, h->shentsize);
		if (!s0)
			return get_err(c);
		if (h->shnum == 0)
			h->shnum = (uint32_t)(c->is64 ? rd(c, s0, 32, 8) :
						       rd32(c, s0, 20));
		if (h->shstrndx == SHN_XINDEX)
			h->shstrndx = rd32(c, s0, c->is64 ? 40 : 24);
	}
	if (h->phnum) {
		h->ph = get(c, h->phoff, (uint64_t)h->phnum * h->phentsize);
		if (!h->ph)
			return get_err(c);
	}
	if (h->shnum) {
		h->sh = get(c, h->shoff, (uint64_t)h->shnum * h->shentsize);
		if (!h->sh)
			return get_err(c);
	}
	return 0;
}

static void read_shdr(const struct ctx *c, const struct hdr *h, uint32_t i,
		      struct shdr *s)
{
	uint64_t o = (uint64_t)i * h->shentsize;
	const uint8_t *p = h->sh;

	s->name = rd32(c, p, o);
	s->type = rd32(c, p, o + 4);
	if (c->is64) {
		s->flags = rd(c, p, o + 8, 8);
		s->addr = rd(c, p, o + 16, 8);
		s->offset = rd(c, p, o + 24, 8);
		s->size = rd(c, p, o + 32, 8);
		s->link = rd32(c, p, o + 40);
		s->entsize = rd(c, p, o + 56, 8);
	} else {
		s->flags = rd32(c, p, o + 8);
		s->addr = rd32(c, p, o + 12);
		s->offset = rd32(c, p, o + 16);
		s->size = rd32(c, p, o + 20);
		s->link = rd32(c, p, o + 24);
		s->entsize = rd32(c, p, o + 36);
	}
}

/* Scans one note area for the GNU build-id. 1 = found, 0 = not there (or
 * the area lies outside the file), < 0 only for -ENOMEM / -EIO. */
static int find_build_id(struct ctx *c, uint64_t off, uint64_t size,
			 uint8_t *out, size_t cap, size_t *len)
{
	const uint8_t *p = get(c, off, size);
	uint64_t o = 0;

	if (!p)
		return c->err == -EBADMSG ? 0 : c->err;
	while (size - o >= 12) {
		uint32_t namesz = rd32(c, p, o), descsz = rd32(c, p, o + 4);
		uint32_t type = rd32(c, p, o + 8);
		uint64_t name = o + 12;
		uint64_t desc = name + (((uint64_t)namesz + 3) & ~3ull);
		uint64_t next = desc + (((uint64_t)descsz + 3) & ~3ull);

		if (next > size || desc > size)
			return 0;
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    memcmp(p + name, "GNU", 4) == 0 && descsz > 0 &&
		    descsz <= cap) {
			memcpy(out, p + desc, descsz);
			*len = descsz;
			return 1;
		}
		o = next;
	}
	return 0;
}

/* SHT_NOTE sections first, then PT_NOTE segments. */
static int build_id(struct ctx *c, const struct hdr *h, uint8_t *out,
		    size_t cap, size_t *len)
{
	struct shdr sh;
	int ret;

	*len = 0;
	for (uint32_t i = 0; i < h->shnum; i++) {
		read_shdr(c, h, i, &sh);
		if (sh.type != SHT_NOTE)
			continue;
		ret = find_build_id(c, sh.offset, sh.size, out, cap, len);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	for (uint32_t i = 0; i < h->phnum; i++) {
		uint64_t o = (uint64_t)i * h->phentsize;

		if (rd32(c, h->ph, o) != PT_NOTE)
			continue;
		ret = find_build_id(c, c->is64 ? rd(c, h->ph, o + 8, 8) :
						 rd32(c, h->ph, o + 4),
				    c->is64 ? rd(c, h->ph, o + 32, 8) :
					      rd32(c, h->ph, o + 16),
				    out, cap, len);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	return 0;
}

static int read_phdrs(const struct ctx *c, const struct hdr *h,
		      struct prec_elf *out)
{
	for (uint32_t i = 0; i < h->phnum; i++) {
		uint64_t o = (uint64_t)i * h->phentsize;
		uint64_t off, vaddr, filesz;

		if (rd32(c, h->ph, o) != PT_LOAD)
			continue;
		if (c->is64) {
			off = rd(c, h->ph, o + 8, 8);
			vaddr = rd(c, h->ph, o + 16, 8);
			filesz = rd(c, h->ph, o + 32, 8);
		} else {
			off = rd32(c, h->ph, o + 4);
			vaddr = rd32(c, h->ph, o + 8);
			filesz = rd32(c, h->ph, o + 16);
		}
		if (!out->segs) {
			out->segs = calloc(h->phnum, sizeof(*out->segs));
			if (!out->segs)
				return -ENOMEM;
			out->load_bias = vaddr - off;
		}
		out->segs[out->nsegs].offset = off;
		out->segs[out->nsegs].vaddr = vaddr;
		out->segs[out->nsegs].filesz = filesz;
		out->nsegs++;
	}
	return 0;
}

struct rawsym {
	uint64_t start, size;
	uint64_t sec_end;   /* end address of the symbol's section, 0 unknown */
	const uint8_t *name;
	uint32_t namelen;
	int bind;
};

/* Among aliases at one address the name people expect: global before weak
 * before local, then fewer leading underscores, then the shorter name. */
static int better(const struct rawsym *a, const struct rawsym *b)
{
	static const int rank[3] = { 2, 0, 1 };   /* LOCAL, GLOBAL, WEAK */
	int ra = a->bind <= STB_WEAK ? rank[a->bind] : 3;
	int rb = b->bind <= STB_WEAK ? rank[b->bind] : 3;
	uint32_t ua = 0, ub = 0;

	if (ra != rb)
		return ra < rb;
	while (ua < a->namelen && a->name[ua] == '_')
		ua++;
	while (ub < b->namelen && b->name[ub] == '_')
		ub++;
	if (ua != ub)
		return ua < ub;
	return a->namelen < b->namelen;
}

static int cmp_rawsym(const void *pa, const void *pb)
{
	const struct rawsym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return strcmp((const char *)a->name, (const char *)b->name);
}

/* Sort, keep one name per start (the best alias, the largest size), fill
 * zero sizes, copy the names. */
static int finish_syms(struct rawsym *raw, size_t nraw, struct prec_elf *out)
{
	size_t nout = 0, names_len = 1;
	char *q;

	if (nraw > 1)
		qsort(raw, nraw, sizeof(*raw), cmp_rawsym);
	for (size_t i = 0; i < nraw; i++) {
		if (nout && raw[nout - 1].start == raw[i].start) {
			struct rawsym *k = &raw[nout - 1];
			uint64_t sz = k->size > raw[i].size ? k->size : raw[i].size;

			if (better(&raw[i], k))
				*k = raw[i];
			k->size = sz;
			continue;
		}
		raw[nout++] = raw[i];
	}
	/* A zero-size symbol (assembly, _init) runs to the next symbol, but
	 * not past its own section: _init must not swallow the PLT. */
	for (size_t i = 0; i + 1 < nout; i++) {
		uint64_t end = raw[i + 1].start;

		if (raw[i].size)
			continue;
		if (raw[i].sec_end > raw[i].start && raw[i].sec_end < end)
			end = raw[i].sec_end;
		raw[i].size = end - raw[i].start;
	}
	for (size_t i = 0; i < nout; i++)
		names_len += raw[i].namelen + 1;
	out->syms = nout ? calloc(nout, sizeof(*out->syms)) : NULL;
	out->names = malloc(names_len);
	if ((nout && !out->syms) || !out->names)
		return -ENOMEM;
	q = out->names;
	for (size_t i = 0; i < nout; i++) {
		memcpy(q, raw[i].name, raw[i].namelen);
		q[raw[i].namelen] = 0;
		out->syms[i].start = raw[i].start;
		out->syms[i].size = raw[i].size;
		out->syms[i].name = q;
		q += raw[i].namelen + 1;
	}
	out->nsyms = nout;
	return 0;
}

static int read_syms(struct ctx *c, const struct hdr *h,
		     const struct shdr *st, struct prec_elf *out)
{
	uint64_t esz = c->is64 ? 24 : 16, n;
	const uint8_t *tab, *strs;
	struct shdr str;
	struct rawsym *raw;
	size_t nraw = 0;
	int ret;

	if (st->link >= h->shnum || st->entsize < esz)
		return -EBADMSG;
	tab = get(c, st->offset, st->size);
	if (!tab)
		return get_err(c);
	read_shdr(c, h, st->link, &str);
	if (str.type == SHT_NOBITS)
		return -EBADMSG;
	strs = get(c, str.offset, str.size);
	if (!strs)
		return get_err(c);
	n = st->size / st->entsize;
	raw = n ? calloc(n, sizeof(*raw)) : NULL;
	if (n && !raw)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t o = i * st->entsize;
		uint32_t name = rd32(c, tab, o);
		uint32_t info, shndx;
		uint64_t value, size;
		const uint8_t *s, *nul;
		struct rawsym *r;

		if (c->is64) {
			info = tab[o + 4];
			shndx = rd16(c, tab, o + 6);
			value = rd(c, tab, o + 8, 8);
			size = rd(c, tab, o + 16, 8);
		} else {
			value = rd32(c, tab, o + 4);
			size = rd32(c, tab, o + 8);
			info = tab[o + 12];
			shndx = rd16(c, tab, o + 14);
		}
		if ((info & 0xf) != STT_FUNC && (info & 0xf) != STT_GNU_IFUNC)
			continue;
		if (shndx == SHN_UNDEF ||
		    (shndx >= SHN_LORESERVE && shndx != SHN_ABS &&
		     shndx != SHN_XINDEX))
			continue;
		if (name == 0 || name >= str.size)
			continue;
		s = strs + name;
		nul = memchr(s, 0, str.size - name);
		if (!nul || nul == s)
			continue;   /* unterminated or empty name */
		r = &raw[nraw++];
		r->start = value;
		r->size = size;
		r->name = s;
		r->namelen = (uint32_t)(nul - s);
		r->bind = (int)(info >> 4);
		r->sec_end = 0;
		if (shndx < h->shnum && shndx < SHN_LORESERVE) {
			struct shdr ss;

			read_shdr(c, h, shndx, &ss);
			if (ss.addr + ss.size >= ss.addr)
				r->sec_end = ss.addr + ss.size;
		}
	}
	ret = finish_syms(raw, nraw, out);
	free(raw);
	return ret;
}

static int parse(struct ctx *c, struct prec_elf *out)
{
	struct shdr symtab = { 0 }, dynsym = { 0 }, sh;
	int have_symtab = 0, have_dynsym = 0, ret;
	struct hdr h;

	ret = read_hdr(c, &h);
	if (ret)
		goto err;
	out->is_dyn = h.type == ET_DYN;
	for (uint32_t i = 0; i < h.shnum; i++) {
		read_shdr(c, &h, i, &sh);
		if (sh.type == SHT_SYMTAB && !have_symtab) {
			symtab = sh;
			have_symtab = 1;
		} else if (sh.type == SHT_DYNSYM && !have_dynsym) {
			dynsym = sh;
			have_dynsym = 1;
		}
	}
	ret = build_id(c, &h, out->build_id, sizeof(out->build_id),
		       &out->build_id_len);
	if (ret)
		goto err;
	ret = read_phdrs(c, &h, out);
	if (ret)
		goto err;
	if (have_symtab) {
		ret = read_syms(c, &h, &symtab, out);
		if (ret)
			goto err;
	}
	/* .symtab without functions (e.g. only file symbols): use .dynsym */
	if (!out->nsyms && have_dynsym) {
		free(out->syms);
		free(out->names);
		out->syms = NULL;
		out->names = NULL;
		ret = read_syms(c, &h, &dynsym, out);
		if (ret)
			goto err;
		out->from_dynsym = 1;
	}
	ctx_release(c);
	return 0;
err:
	ctx_release(c);
	prec_elf_release(out);
	return ret;
}

int prec_elf_parse(const void *buf, size_t len, struct prec_elf *out)
{
	struct ctx c = { .buf = buf, .len = len, .fd = -1 };

	memset(out, 0, sizeof(*out));
	if (!buf)
		return -EINVAL;
	return parse(&c, out);
}

/* An fd's ctx: regular files only (a FIFO would block, a device lie). */
static int ctx_fd(struct ctx *c, int fd)
{
	struct stat st;

	memset(c, 0, sizeof(*c));
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size <= 0)
		return -EINVAL;
	c->fd = fd;
	c->len = (uint64_t)st.st_size;
	return 0;
}

int prec_elf_read_fd(int fd, struct prec_elf *out)
{
	struct ctx c;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = ctx_fd(&c, fd);
	return ret ? ret : parse(&c, out);
}

int prec_elf_load(const char *path, struct prec_elf *out)
{
	int fd, ret;

	memset(out, 0, sizeof(*out));
	/* O_NONBLOCK: a FIFO put where a binary was must not hang us (the
	 * fstat then refuses anything but a regular file) */
	fd = open(path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	ret = prec_elf_read_fd(fd, out);
	close(fd);
	return ret;
}

void prec_elf_release(struct prec_elf *e)
{
	if (!e)
		return;
	free(e->syms);
	free(e->segs);
	free(e->names);
	memset(e, 0, sizeof(*e));
}

int prec_elf_build_id_fd(int fd, uint8_t *out, size_t cap)
{
	struct ctx c;
	struct hdr h;
	size_t len = 0;
	int ret;

	ret = ctx_fd(&c, fd);
	if (ret)
		return ret;
	ret = read_hdr(&c, &h);
	if (!ret)
		ret = build_id(&c, &h, out, cap, &len);
	ctx_release(&c);
	return ret ? ret : (int)len;
}

uint64_t prec_elf_segs_vaddr(const struct prec_elf_seg *segs, size_t n,
			     uint64_t load_bias, uint64_t file_off)
{
	for (size_t i = 0; i < n; i++) {
		const struct prec_elf_seg *g = &segs[i];

		if (file_off >= g->offset && file_off - g->offset < g->filesz)
			return file_off - g->offset + g->vaddr;
	}
	return file_off + load_bias;
}

uint64_t prec_elf_vaddr(const struct prec_elf *e, uint64_t file_off)
{
	return prec_elf_segs_vaddr(e->segs, e->nsegs, e->load_bias, file_off);
}

const struct prec_elf_sym *prec_elf_find(const struct prec_elf *e,
					 uint64_t vaddr)
{
	size_t lo = 0, hi = e->nsyms;

	while (lo < hi) {   /* first symbol with start > vaddr */
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Symbols do not overlap after finish_syms() except for nested
	 * ones; look back a little for a container. */
	for (size_t k = 0; k < 16 && k < lo; k++) {
		const struct prec_elf_sym *s = &e->syms[lo - 1 - k];

		if (vaddr - s->start < s->size)
			return s;
	}
	return NULL;
}

/* ---- sections by name */

/* Finds name among the section headers: 1 and *sh, 0 not there, < 0. */
static int lookup(struct ctx *c, const struct hdr *h, const char *name,
		  struct shdr *sh)
{
	size_t nlen = strlen(name);
	const uint8_t *strs;
	struct shdr str;

	if (h->shstrndx >= h->shnum)
		return 0;
	read_shdr(c, h, h->shstrndx, &str);
	if (str.type == SHT_NOBITS)
		return -EBADMSG;
	strs = get(c, str.offset, str.size);
	if (!strs)
		return get_err(c);
	for (uint32_t i = 1; i < h->shnum; i++) {
		read_shdr(c, h, i, sh);
		if (sh->name >= str.size || str.size - sh->name <= nlen ||
		    memcmp(strs + sh->name, name, nlen + 1) != 0)
			continue;
		return 1;
	}
	return 0;
}

/* The section's bytes (its payload, past a compression header). */
static int take(struct ctx *c, const struct shdr *sh,
		struct prec_elf_section *out)
{
	uint64_t chdr = c->is64 ? 24 : 12;
	const uint8_t *p;

	memset(out, 0, sizeof(*out));
	out->addr = sh->addr;
	out->size = sh->size;
	out->offset = sh->offset;
	out->nobits = sh->type == SHT_NOBITS;
	if (out->nobits)
		return 0;
	p = get(c, sh->offset, sh->size);
	if (!p)
		return get_err(c);
	out->data = p;
	if (!(sh->flags & SHF_COMPRESSED))
		return 0;
	if (sh->size < chdr)
		return -EBADMSG;
	out->compressed = rd32(c, p, 0);
	out->raw_size = c->is64 ? rd(c, p, 8, 8) : rd32(c, p, 4);
	out->data = p + chdr;
	out->offset += chdr;
	out->size -= chdr;
	return 0;
}

int prec_elf_find_section(const void *buf, size_t len, const char *name,
			  struct prec_elf_section *out)
{
	struct ctx c = { .buf = buf, .len = len, .fd = -1 };
	struct shdr sh;
	struct hdr h;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!buf || !name)
		return -EINVAL;
	ret = read_hdr(&c, &h);
	if (ret)
		return ret;
	ret = lookup(&c, &h, name, &sh);
	if (ret <= 0)
		return ret ? ret : -ENOENT;
	return take(&c, &sh, out);
}

int prec_elf_copy_sections(int fd, const void *buf, size_t len,
			   const char *const *names, size_t n, uint64_t max,
			   struct prec_elf_section *out,
			   struct prec_elf *seg_out)
{
	struct ctx c = { .buf = buf, .len = len, .fd = -1 };
	struct shdr sh;
	struct hdr h;
	int ret;

	memset(out, 0, n * sizeof(*out));
	if (seg_out)
		memset(seg_out, 0, sizeof(*seg_out));
	if (fd >= 0)
		ret = ctx_fd(&c, fd);
	else
		ret = buf ? 0 : -EINVAL;
	if (ret)
		return ret;
	ret = read_hdr(&c, &h);
	if (ret)
		goto err;
	if (seg_out) {
		seg_out->is_dyn = h.type == ET_DYN;
		ret = build_id(&c, &h, seg_out->build_id,
			       sizeof(seg_out->build_id),
			       &seg_out->build_id_len);
		if (!ret)
			ret = read_phdrs(&c, &h, seg_out);
		if (ret)
			goto err;
	}
	for (size_t i = 0; i < n; i++) {
		struct prec_elf_section s;
		uint8_t *copy;

		ret = lookup(&c, &h, names[i], &sh);
		if (ret < 0)
			goto err;
		if (!ret || sh.type == SHT_NOBITS || !sh.size)
			continue;   /* a debug file's placeholder: nothing there */
		if (sh.size > max) {
			ret = -EFBIG;
			goto err;
		}
		ret = take(&c, &sh, &s);
		if (ret)
			goto err;
		copy = malloc(s.size ? s.size : 1);
		if (!copy) {
			ret = -ENOMEM;
			goto err;
		}
		memcpy(copy, s.data, s.size);
		s.data = copy;
		out[i] = s;
	}
	ctx_release(&c);
	return 0;
err:
	ctx_release(&c);
	for (size_t i = 0; i < n; i++)
		free((void *)out[i].data);
	memset(out, 0, n * sizeof(*out));
	prec_elf_release(seg_out);
	return ret;
}
