/*
 * elfread.c - portable ELF symbol reader (see elfread.h for why).
 *
 * The constants below are the ELF gABI's; we spell them out instead of
 * including <elf.h>, which macOS lacks. Reads go through rd16/rd32/rd64,
 * which take the byte order from e_ident; every structure is fetched only
 * after in_buf() has checked that it lies inside the buffer.
 */
/* strdup, open, mmap: POSIX, present on Linux and macOS alike */
#define _POSIX_C_SOURCE 200809L

#include "analyzer/elfread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
#define SHN_UNDEF 0
#define SHN_LORESERVE 0xff00
#define SHN_ABS 0xfff1
#define STT_FUNC 2
#define STT_GNU_IFUNC 10
#define STB_LOCAL 0
#define STB_GLOBAL 1
#define STB_WEAK 2
#define NT_GNU_BUILD_ID 3

struct ctx {
	const uint8_t *b;
	size_t len;
	int is64, msb;
};

static int in_buf(const struct ctx *c, uint64_t off, uint64_t n)
{
	return off <= c->len && n <= c->len - off;
}

static uint64_t rdn(const struct ctx *c, uint64_t off, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++) {
		int k = c->msb ? i : n - 1 - i;

		v = (v << 8) | c->b[off + k];
	}
	return v;
}

#define rd16(c, o) ((uint32_t)rdn((c), (o), 2))
#define rd32(c, o) ((uint32_t)rdn((c), (o), 4))
/* an address-sized field: 8 bytes in ELF64, 4 in ELF32 */
#define rdaddr(c, o) rdn((c), (o), (c)->is64 ? 8 : 4)

struct shdr {
	uint32_t name, type, link;
	uint64_t addr, offset, size, entsize;
};

struct hdr {
	uint32_t type;
	uint64_t phoff, shoff;
	uint32_t phentsize, phnum, shentsize, shnum, shstrndx;
};

static int read_hdr(struct ctx *c, struct hdr *h)
{
	static const uint8_t magic[4] = { 0x7f, 'E', 'L', 'F' };

	if (c->len < 16 || memcmp(c->b, magic, 4) != 0)
		return -EINVAL;
	if (c->b[EI_CLASS] != ELFCLASS32 && c->b[EI_CLASS] != ELFCLASS64)
		return -EINVAL;
	if (c->b[EI_DATA] != ELFDATA2LSB && c->b[EI_DATA] != ELFDATA2MSB)
		return -EINVAL;
	c->is64 = c->b[EI_CLASS] == ELFCLASS64;
	c->msb = c->b[EI_DATA] == ELFDATA2MSB;
	if (!in_buf(c, 0, c->is64 ? 64 : 52))
		return -EBADMSG;
	h->type = rd16(c, 16);
	if (c->is64) {
		h->phoff = rdn(c, 32, 8);
		h->shoff = rdn(c, 40, 8);
		h->phentsize = rd16(c, 54);
		h->phnum = rd16(c, 56);
		h->shentsize = rd16(c, 58);
		h->shnum = rd16(c, 60);
		h->shstrndx = rd16(c, 62);
	} else {
		h->phoff = rd32(c, 28);
		h->shoff = rd32(c, 32);
		h->phentsize = rd16(c, 42);
		h->phnum = rd16(c, 44);
		h->shentsize = rd16(c, 46);
		h->shnum = rd16(c, 48);
		h->shstrndx = rd16(c, 50);
	}
	if (h->phnum && h->phentsize < (c->is64 ? 56u : 32u))
		return -EBADMSG;
	if (h->shoff && h->shentsize < (c->is64 ? 64u : 40u))
		return -EBADMSG;
	if (!h->shoff)
		h->shnum = 0;
	/* More than SHN_LORESERVE sections: the count is in section 0. */
	if (h->shoff && h->shnum == 0) {
		if (!in_buf(c, h->shoff, h->shentsize))
			return -EBADMSG;
		h->shnum = (uint32_t)(c->is64 ? rdn(c, h->shoff + 32, 8) :
					       rd32(c, h->shoff + 20));
	}
	/* SHN_XINDEX: the string table's index is in section 0's sh_link */
	if (h->shoff && h->shstrndx == 0xffff && in_buf(c, h->shoff, h->shentsize))
		h->shstrndx = rd32(c, h->shoff + (c->is64 ? 40 : 24));
	if (h->phnum && !in_buf(c, h->phoff, (uint64_t)h->phnum * h->phentsize))
		return -EBADMSG;
	if (h->shnum && !in_buf(c, h->shoff, (uint64_t)h->shnum * h->shentsize))
		return -EBADMSG;
	return 0;
}

static void read_shdr(const struct ctx *c, const struct hdr *h, uint32_t i,
		      struct shdr *s)
{
	uint64_t o = h->shoff + (uint64_t)i * h->shentsize;

	s->name = rd32(c, o);
	s->type = rd32(c, o + 4);
	if (c->is64) {
		s->addr = rdn(c, o + 16, 8);
		s->offset = rdn(c, o + 24, 8);
		s->size = rdn(c, o + 32, 8);
		s->link = rd32(c, o + 40);
		s->entsize = rdn(c, o + 56, 8);
	} else {
		s->addr = rd32(c, o + 12);
		s->offset = rd32(c, o + 16);
		s->size = rd32(c, o + 20);
		s->link = rd32(c, o + 24);
		s->entsize = rd32(c, o + 36);
	}
}

/* Scans one note area for the GNU build-id. 1 = found. */
static int find_build_id(const struct ctx *c, uint64_t off, uint64_t size,
			 struct ana_elf *out)
{
	uint64_t end;

	if (!in_buf(c, off, size))
		return 0;
	end = off + size;
	while (end - off >= 12) {
		uint32_t namesz = rd32(c, off), descsz = rd32(c, off + 4);
		uint32_t type = rd32(c, off + 8);
		uint64_t name = off + 12;
		uint64_t desc = name + (((uint64_t)namesz + 3) & ~3ull);
		uint64_t next = desc + (((uint64_t)descsz + 3) & ~3ull);

		if (next > end || desc > end)
			return 0;
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    memcmp(c->b + name, "GNU", 4) == 0 && descsz > 0 &&
		    descsz <= sizeof(out->build_id)) {
			memcpy(out->build_id, c->b + desc, descsz);
			out->build_id_len = descsz;
			return 1;
		}
		off = next;
	}
	return 0;
}

static int read_phdrs(const struct ctx *c, const struct hdr *h,
		      struct ana_elf *out, int want_note)
{
	for (uint32_t i = 0; i < h->phnum; i++) {
		uint64_t o = h->phoff + (uint64_t)i * h->phentsize;
		uint32_t type = rd32(c, o);
		uint64_t off, vaddr, filesz;

		if (c->is64) {
			off = rdn(c, o + 8, 8);
			vaddr = rdn(c, o + 16, 8);
			filesz = rdn(c, o + 32, 8);
		} else {
			off = rd32(c, o + 4);
			vaddr = rd32(c, o + 8);
			filesz = rd32(c, o + 16);
		}
		if (type == PT_NOTE && want_note && !out->build_id_len)
			find_build_id(c, off, filesz, out);
		if (type != PT_LOAD)
			continue;
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
	uint64_t name;   /* offset into the string table */
	uint32_t namelen;
	int bind;
};

/* Among aliases at one address the name people expect: global before weak
 * before local, then fewer leading underscores, then the shorter name. */
static int better(const struct rawsym *a, const struct rawsym *b,
		  const struct ctx *c)
{
	static const int rank[3] = { 2, 0, 1 };   /* LOCAL, GLOBAL, WEAK */
	int ra = a->bind <= STB_WEAK ? rank[a->bind] : 3;
	int rb = b->bind <= STB_WEAK ? rank[b->bind] : 3;
	uint32_t ua = 0, ub = 0;

	if (ra != rb)
		return ra < rb;
	while (ua < a->namelen && c->b[a->name + ua] == '_')
		ua++;
	while (ub < b->namelen && c->b[b->name + ub] == '_')
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
	return a->name < b->name ? -1 : a->name > b->name;
}

static int read_syms(const struct ctx *c, const struct hdr *h,
		     const struct shdr *st, struct ana_elf *out)
{
	uint64_t esz = c->is64 ? 24 : 16, n, names_len = 0;
	struct shdr str;
	struct rawsym *raw;
	size_t nraw = 0, nout = 0;
	char *q;

	if (st->link >= h->shnum || st->entsize < esz ||
	    !in_buf(c, st->offset, st->size))
		return -EBADMSG;
	read_shdr(c, h, st->link, &str);
	if (str.type == SHT_NOBITS || !in_buf(c, str.offset, str.size))
		return -EBADMSG;
	n = st->size / st->entsize;
	raw = n ? calloc(n, sizeof(*raw)) : NULL;
	if (n && !raw)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t o = st->offset + i * st->entsize;
		uint32_t name = rd32(c, o);
		uint32_t info, shndx;
		uint64_t value, size;
		const uint8_t *s, *nul;
		struct rawsym *r;

		if (c->is64) {
			info = c->b[o + 4];
			shndx = rd16(c, o + 6);
			value = rdn(c, o + 8, 8);
			size = rdn(c, o + 16, 8);
		} else {
			value = rd32(c, o + 4);
			size = rd32(c, o + 8);
			info = c->b[o + 12];
			shndx = rd16(c, o + 14);
		}
		if ((info & 0xf) != STT_FUNC && (info & 0xf) != STT_GNU_IFUNC)
			continue;
		if (shndx == SHN_UNDEF ||
		    (shndx >= SHN_LORESERVE && shndx != SHN_ABS))
			continue;
		if (name == 0 || name >= str.size)
			continue;
		s = c->b + str.offset + name;
		nul = memchr(s, 0, str.size - name);
		if (!nul || nul == s)
			continue;   /* unterminated or empty name */
		r = &raw[nraw++];
		r->start = value;
		r->size = size;
		r->name = str.offset + name;
		r->namelen = (uint32_t)(nul - s);
		r->bind = (int)(info >> 4);
		r->sec_end = 0;
		if (shndx < h->shnum) {
			struct shdr ss;

			read_shdr(c, h, shndx, &ss);
			if (ss.addr + ss.size >= ss.addr)
				r->sec_end = ss.addr + ss.size;
		}
	}
	if (nraw > 1)
		qsort(raw, nraw, sizeof(*raw), cmp_rawsym);
	/* one entry per start: the best alias, with the largest size seen */
	for (size_t i = 0; i < nraw; i++) {
		if (nout && raw[nout - 1].start == raw[i].start) {
			struct rawsym *k = &raw[nout - 1];
			uint64_t sz = k->size > raw[i].size ? k->size : raw[i].size;

			if (better(&raw[i], k, c))
				*k = raw[i];
			k->size = sz;
			continue;
		}
		raw[nout++] = raw[i];
	}
	/* A zero-size symbol runs to the next one, within its section (the
	 * recorder's elfsym.c does the same, so both give equal tables). */
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
	out->names = malloc(names_len ? names_len : 1);
	if ((nout && !out->syms) || !out->names) {
		free(raw);
		return -ENOMEM;
	}
	q = out->names;
	for (size_t i = 0; i < nout; i++) {
		memcpy(q, c->b + raw[i].name, raw[i].namelen);
		q[raw[i].namelen] = 0;
		out->syms[i].start = raw[i].start;
		out->syms[i].size = raw[i].size;
		out->syms[i].name = q;
		q += raw[i].namelen + 1;
	}
	out->nsyms = nout;
	free(raw);
	return 0;
}

int ana_elf_parse(const void *buf, size_t len, struct ana_elf *out)
{
	struct ctx c = { buf, len, 0, 0 };
	struct shdr symtab = { 0 }, dynsym = { 0 }, sh;
	int have_symtab = 0, have_dynsym = 0, ret;
	struct hdr h;

	memset(out, 0, sizeof(*out));
	if (!buf)
		return -EINVAL;
	ret = read_hdr(&c, &h);
	if (ret)
		return ret;
	out->is_dyn = h.type == ET_DYN;
	for (uint32_t i = 0; i < h.shnum; i++) {
		read_shdr(&c, &h, i, &sh);
		if (sh.type == SHT_SYMTAB && !have_symtab) {
			symtab = sh;
			have_symtab = 1;
		} else if (sh.type == SHT_DYNSYM && !have_dynsym) {
			dynsym = sh;
			have_dynsym = 1;
		} else if (sh.type == SHT_NOTE && !out->build_id_len) {
			find_build_id(&c, sh.offset, sh.size, out);
		}
	}
	ret = read_phdrs(&c, &h, out, 1);
	if (ret)
		goto err;
	if (have_symtab) {
		ret = read_syms(&c, &h, &symtab, out);
		if (ret)
			goto err;
	}
	/* .symtab without functions (e.g. only file symbols): use .dynsym */
	if (!out->nsyms && have_dynsym) {
		free(out->syms);
		free(out->names);
		out->syms = NULL;
		out->names = NULL;
		ret = read_syms(&c, &h, &dynsym, out);
		if (ret)
			goto err;
		out->from_dynsym = 1;
	}
	return 0;
err:
	ana_elf_release(out);
	return ret;
}

int ana_elf_find_section(const void *buf, size_t len, const char *name,
			 struct ana_elf_section *out)
{
	struct ctx c = { buf, len, 0, 0 };
	size_t nlen = name ? strlen(name) : 0;
	struct shdr str, sh;
	struct hdr h;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!buf || !name)
		return -EINVAL;
	ret = read_hdr(&c, &h);
	if (ret)
		return ret;
	if (h.shstrndx >= h.shnum)
		return -ENOENT;
	read_shdr(&c, &h, h.shstrndx, &str);
	if (str.type == SHT_NOBITS || !in_buf(&c, str.offset, str.size))
		return -EBADMSG;
	for (uint32_t i = 1; i < h.shnum; i++) {
		read_shdr(&c, &h, i, &sh);
		if (sh.name >= str.size || str.size - sh.name <= nlen ||
		    memcmp(c.b + str.offset + sh.name, name, nlen + 1) != 0)
			continue;
		out->addr = sh.addr;
		out->size = sh.size;
		out->offset = sh.offset;
		out->nobits = sh.type == SHT_NOBITS;
		if (!out->nobits && !in_buf(&c, sh.offset, sh.size))
			return -EBADMSG;
		out->data = out->nobits ? NULL : c.b + sh.offset;
		return 0;
	}
	return -ENOENT;
}

int ana_elf_load(const char *path, struct ana_elf *out)
{
	struct stat st;
	void *m;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	/* O_NONBLOCK: a FIFO in the symfs tree must not hang the analyzer */
	fd = open(path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto err_close;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0) {
		ret = -EINVAL;
		goto err_close;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		ret = -errno;
		goto err_close;
	}
	ret = ana_elf_parse(m, (size_t)st.st_size, out);
	munmap(m, (size_t)st.st_size);
err_close:
	close(fd);
	return ret;
}

void ana_elf_release(struct ana_elf *e)
{
	if (!e)
		return;
	free(e->syms);
	free(e->segs);
	free(e->names);
	memset(e, 0, sizeof(*e));
}
