/*
 * elfsym.c - ELF symbols through libelf/gelf (see elfsym.h).
 *
 * Files are opened with ELF_C_READ (pread on demand), not ELF_C_READ_MMAP:
 * a binary truncated under us then gives a libelf error instead of SIGBUS.
 * Names returned by elf_strptr() live in libelf's buffers, so they are
 * copied into our own storage before elf_end().
 */
#include "recorder/symbols/elfsym.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif
#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

struct rawsym {
	uint64_t start, size;
	uint64_t sec_end;   /* end address of the symbol's section, 0 unknown */
	const char *name;
	size_t namelen;
	int bind;
};

static int lib_init(void)
{
	/* Idempotent; returns EV_NONE only if libelf is older than us. */
	return elf_version(EV_CURRENT) == EV_NONE ? -ENOSYS : 0;
}

/* Searches one note data block for the GNU build-id. 1 = found. */
static int note_build_id(Elf_Data *d, uint8_t *out, size_t cap, size_t *len)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	if (!d || !d->d_buf)
		return 0;
	while (off < d->d_size &&
	       (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= cap) {
			memcpy(out, (const char *)d->d_buf + desc_off, nh.n_descsz);
			*len = nh.n_descsz;
			return 1;
		}
		off = next;
	}
	return 0;
}

static size_t find_build_id(Elf *elf, uint8_t *out, size_t cap)
{
	Elf_Scn *scn = NULL;
	size_t len = 0, nph;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if (note_build_id(elf_getdata(scn, NULL), out, cap, &len))
			return len;
	}
	/* No section headers (or no note sections): try PT_NOTE. */
	if (elf_getphdrnum(elf, &nph) != 0)
		return 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		if (note_build_id(elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
						       ph.p_filesz, ELF_T_NHDR),
				  out, cap, &len))
			return len;
	}
	return 0;
}

static int read_segments(Elf *elf, struct rec_elfsym_seg **segs, size_t *nsegs,
			 uint64_t *load_bias)
{
	size_t nph;

	if (elf_getphdrnum(elf, &nph) != 0)
		return 0;   /* no program headers: a relocatable or debug file */
	if (!nph)
		return 0;
	*segs = calloc(nph, sizeof(**segs));
	if (!*segs)
		return -ENOMEM;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		struct rec_elfsym_seg *g;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		g = &(*segs)[(*nsegs)++];
		g->offset = ph.p_offset;
		g->vaddr = ph.p_vaddr;
		g->filesz = ph.p_filesz;
		if (*nsegs == 1)
			*load_bias = ph.p_vaddr - ph.p_offset;
	}
	return 0;
}

/* Global before weak before local; then fewer leading '_'; then shorter. */
static int better(const struct rawsym *a, const struct rawsym *b)
{
	static const int rank[3] = { 2, 0, 1 };
	int ra = a->bind >= 0 && a->bind <= STB_WEAK ? rank[a->bind] : 3;
	int rb = b->bind >= 0 && b->bind <= STB_WEAK ? rank[b->bind] : 3;
	size_t ua = strspn(a->name, "_"), ub = strspn(b->name, "_");

	if (ra != rb)
		return ra < rb;
	if (ua != ub)
		return ua < ub;
	return a->namelen < b->namelen;
}

static int cmp_raw(const void *pa, const void *pb)
{
	const struct rawsym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Collects the function symbols of one symbol section. */
static int collect(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
		   struct rawsym **raw, size_t *nraw)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t esz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT), n;

	*raw = NULL;
	*nraw = 0;
	if (!d || !esz)
		return -EBADMSG;
	n = d->d_size / esz;
	if (!n)
		return 0;
	*raw = calloc(n, sizeof(**raw));
	if (!*raw)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(d, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF ||
		    (sym.st_shndx >= SHN_LORESERVE && sym.st_shndx != SHN_ABS &&
		     sym.st_shndx != SHN_XINDEX))
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		(*raw)[*nraw].start = sym.st_value;
		(*raw)[*nraw].size = sym.st_size;
		(*raw)[*nraw].name = name;
		(*raw)[*nraw].namelen = strlen(name);
		(*raw)[*nraw].bind = GELF_ST_BIND(sym.st_info);
		(*raw)[*nraw].sec_end = 0;
		if (sym.st_shndx != SHN_ABS && sym.st_shndx != SHN_XINDEX) {
			GElf_Shdr ss;
			Elf_Scn *sec = elf_getscn(elf, sym.st_shndx);

			if (sec && gelf_getshdr(sec, &ss) &&
			    ss.sh_addr + ss.sh_size >= ss.sh_addr)
				(*raw)[*nraw].sec_end = ss.sh_addr + ss.sh_size;
		}
		(*nraw)++;
	}
	return 0;
}

/* Sort, keep one name per start, fill zero sizes, copy names. */
static int finish_syms(struct rawsym *raw, size_t nraw, struct rec_elfsym *out)
{
	size_t nout = 0, bytes = 1;
	char *q;

	if (nraw > 1)
		qsort(raw, nraw, sizeof(*raw), cmp_raw);
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
	for (size_t i = 0; i < nout; i++) {
		if (raw[i].size == 0 && i + 1 < nout) {
			uint64_t end = raw[i + 1].start;

			if (raw[i].sec_end > raw[i].start && raw[i].sec_end < end)
				end = raw[i].sec_end;
			raw[i].size = end - raw[i].start;
		}
		bytes += raw[i].namelen + 1;
	}
	out->syms = nout ? calloc(nout, sizeof(*out->syms)) : NULL;
	out->names = malloc(bytes);
	if ((nout && !out->syms) || !out->names)
		return -ENOMEM;
	q = out->names;
	for (size_t i = 0; i < nout; i++) {
		memcpy(q, raw[i].name, raw[i].namelen + 1);
		out->syms[i].start = raw[i].start;
		out->syms[i].size = raw[i].size;
		out->syms[i].name = q;
		q += raw[i].namelen + 1;
	}
	out->nsyms = nout;
	return 0;
}

/* libelf accepts files whose tables lie past the end (it then just finds
 * fewer sections); a truncated file must be an error, not "no symbols". */
static int check_extents(Elf *elf, const GElf_Ehdr *eh, uint64_t fsize)
{
	size_t shnum, phnum;

	/* libelf quietly reports 0 sections for a table past the end: take
	 * the counts from the header itself as well */
	if (elf_getshdrnum(elf, &shnum) != 0 || elf_getphdrnum(elf, &phnum) != 0)
		return -EBADMSG;
	if (eh->e_shnum > shnum)
		shnum = eh->e_shnum;
	if (eh->e_phnum > phnum)
		phnum = eh->e_phnum;
	if (eh->e_shoff && !shnum)
		shnum = 1;   /* extended numbering: section 0 must exist */
	if (shnum && (eh->e_shoff > fsize || eh->e_shentsize == 0 ||
		      (fsize - eh->e_shoff) / eh->e_shentsize < shnum))
		return -EBADMSG;
	if (phnum && (eh->e_phoff > fsize || eh->e_phentsize == 0 ||
		      (fsize - eh->e_phoff) / eh->e_phentsize < phnum))
		return -EBADMSG;
	return 0;
}

static int check_section(const GElf_Shdr *sh, uint64_t fsize)
{
	if (sh->sh_type == SHT_NOBITS)
		return 0;
	return sh->sh_offset <= fsize && sh->sh_size <= fsize - sh->sh_offset ?
	       0 : -EBADMSG;
}

static int read_elf(Elf *elf, uint64_t fsize, struct rec_elfsym *out)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr sh, symtab_sh = { 0 }, dynsym_sh = { 0 };
	struct rawsym *raw = NULL;
	GElf_Ehdr eh;
	size_t nraw = 0;
	int ret;

	if (elf_kind(elf) != ELF_K_ELF)
		return -EINVAL;
	if (!gelf_getehdr(elf, &eh))
		return -EBADMSG;
	ret = check_extents(elf, &eh, fsize);
	if (ret)
		return ret;
	out->is_dyn = eh.e_type == ET_DYN;
	out->build_id_len = find_build_id(elf, out->build_id,
					  sizeof(out->build_id));
	ret = read_segments(elf, &out->segs, &out->nsegs, &out->load_bias);
	if (ret)
		return ret;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh))
			return -EBADMSG;
		if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) &&
		    check_section(&sh, fsize))
			return -EBADMSG;
		if (sh.sh_type == SHT_SYMTAB && !symtab) {
			symtab = scn;
			symtab_sh = sh;
		} else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
			dynsym = scn;
			dynsym_sh = sh;
		}
	}
	if (symtab) {
		ret = collect(elf, symtab, &symtab_sh, &raw, &nraw);
		if (ret)
			goto out;
	}
	if (!nraw && dynsym) {
		free(raw);
		ret = collect(elf, dynsym, &dynsym_sh, &raw, &nraw);
		if (ret)
			goto out;
		out->from_dynsym = 1;
	}
	ret = finish_syms(raw, nraw, out);
out:
	free(raw);
	return ret;
}

/* What one read takes from an ELF file: symbols or unwind sections. */
struct reader {
	int (*read)(Elf *elf, uint64_t fsize, void *out);
	void (*release)(void *out);
};

static int read_and_end(Elf *elf, uint64_t fsize, const struct reader *rd,
			void *out)
{
	int ret;

	if (!elf)
		return -EINVAL;   /* libelf refused the bytes outright */
	ret = rd->read(elf, fsize, out);
	elf_end(elf);
	if (ret)
		rd->release(out);
	return ret;
}

static int read_fd(int fd, const struct reader *rd, void *out)
{
	struct stat st;
	int ret;

	ret = lib_init();
	if (ret)
		return ret;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return read_and_end(elf_begin(fd, ELF_C_READ, NULL),
			    (uint64_t)st.st_size, rd, out);
}

static int read_mem(const void *buf, size_t len, const struct reader *rd, void *out)
{
	char *copy;
	int ret;

	ret = lib_init();
	if (ret)
		return ret;
	if (!buf || !len)
		return -EINVAL;
	/* elf_memory() takes a writable image; never hand it the caller's. */
	copy = malloc(len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	ret = read_and_end(elf_memory(copy, len), len, rd, out);
	free(copy);
	return ret;
}

static int sym_read(Elf *elf, uint64_t fsize, void *out)
{
	return read_elf(elf, fsize, out);
}

static void sym_release(void *out)
{
	rec_elfsym_release(out);
}

static const struct reader sym_reader = { sym_read, sym_release };

int rec_elfsym_read_fd(int fd, struct rec_elfsym *out)
{
	memset(out, 0, sizeof(*out));
	return read_fd(fd, &sym_reader, out);
}

int rec_elfsym_read_mem(const void *buf, size_t len, struct rec_elfsym *out)
{
	memset(out, 0, sizeof(*out));
	return read_mem(buf, len, &sym_reader, out);
}

int rec_elfsym_load(const char *path, struct rec_elfsym *out)
{
	int fd, ret;

	memset(out, 0, sizeof(*out));
	/* O_NONBLOCK: a FIFO put where a binary was must not hang us (the
	 * fstat in read_fd then refuses anything but a regular file) */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	ret = rec_elfsym_read_fd(fd, out);
	close(fd);
	return ret;
}

void rec_elfsym_release(struct rec_elfsym *e)
{
	if (!e)
		return;
	free(e->syms);
	free(e->segs);
	free(e->names);
	memset(e, 0, sizeof(*e));
}

int rec_elfsym_build_id_fd(int fd, uint8_t *out, size_t cap)
{
	Elf *elf;
	int ret;

	ret = lib_init();
	if (ret)
		return ret;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -EINVAL;
	if (elf_kind(elf) != ELF_K_ELF)
		ret = -EINVAL;
	else
		ret = (int)find_build_id(elf, out, cap);
	elf_end(elf);
	return ret;
}

uint64_t rec_elfsym_segs_vaddr(const struct rec_elfsym_seg *segs, size_t n,
			       uint64_t load_bias, uint64_t file_off)
{
	for (size_t i = 0; i < n; i++) {
		const struct rec_elfsym_seg *g = &segs[i];

		if (file_off >= g->offset && file_off - g->offset < g->filesz)
			return file_off - g->offset + g->vaddr;
	}
	return file_off + load_bias;
}

uint64_t rec_elfsym_vaddr(const struct rec_elfsym *e, uint64_t file_off)
{
	return rec_elfsym_segs_vaddr(e->segs, e->nsegs, e->load_bias, file_off);
}

const struct rec_elfsym_sym *rec_elfsym_find(const struct rec_elfsym *e,
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
		const struct rec_elfsym_sym *s = &e->syms[lo - 1 - k];

		if (vaddr - s->start < s->size)
			return s;
	}
	return NULL;
}

/* ---- unwind sections */

/* Copies one section's bytes (inflating a compressed one) into sec. */
static int take_section(Elf_Scn *scn, const GElf_Shdr *sh, uint64_t fsize,
			struct rec_elfsym_cfi_sec *sec)
{
	Elf_Data *d;

	if (sh->sh_type == SHT_NOBITS || !sh->sh_size)
		return 0;   /* a debug file's placeholder: nothing there */
	if (check_section(sh, fsize))
		return -EBADMSG;
	if (sh->sh_flags & SHF_COMPRESSED) {
		GElf_Chdr ch;

		/* bound the inflated size before libelf allocates it */
		if (!gelf_getchdr(scn, &ch))
			return -EBADMSG;
		if (ch.ch_size > REC_ELFSYM_CFI_MAX)
			return -EFBIG;
		if (elf_compress(scn, 0, 0) < 0)
			return -EBADMSG;
	} else if (sh->sh_size > REC_ELFSYM_CFI_MAX) {
		return -EFBIG;
	}
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return d ? 0 : -EBADMSG;
	if (d->d_size > REC_ELFSYM_CFI_MAX)
		return -EFBIG;
	sec->data = malloc(d->d_size);
	if (!sec->data)
		return -ENOMEM;
	memcpy(sec->data, d->d_buf, d->d_size);
	sec->len = d->d_size;
	sec->addr = sh->sh_addr;
	return 0;
}

static int cfi_read(Elf *elf, uint64_t fsize, void *arg)
{
	struct rec_elfsym_cfi *out = arg;
	Elf_Scn *scn = NULL, *eh = NULL, *hdr = NULL, *dbg = NULL;
	GElf_Shdr sh, eh_sh = { 0 }, hdr_sh = { 0 }, dbg_sh = { 0 };
	GElf_Ehdr ehdr;
	size_t shstrndx;
	int ret;

	if (elf_kind(elf) != ELF_K_ELF)
		return -EINVAL;
	if (!gelf_getehdr(elf, &ehdr))
		return -EBADMSG;
	ret = check_extents(elf, &ehdr, fsize);
	if (ret)
		return ret;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -EBADMSG;
	out->build_id_len = find_build_id(elf, out->build_id, sizeof(out->build_id));
	ret = read_segments(elf, &out->segs, &out->nsegs, &out->load_bias);
	if (ret)
		return ret;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return -EBADMSG;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!eh && strcmp(name, ".eh_frame") == 0) {
			eh = scn;
			eh_sh = sh;
		} else if (!hdr && strcmp(name, ".eh_frame_hdr") == 0) {
			hdr = scn;
			hdr_sh = sh;
		} else if (!dbg && strcmp(name, ".debug_frame") == 0) {
			dbg = scn;
			dbg_sh = sh;
		}
	}
	if (eh && (ret = take_section(eh, &eh_sh, fsize, &out->eh_frame)))
		return ret;
	if (out->eh_frame.data && hdr &&
	    (ret = take_section(hdr, &hdr_sh, fsize, &out->eh_frame_hdr)))
		return ret;
	/* .debug_frame only where no .eh_frame covers the code */
	if (!out->eh_frame.data && dbg &&
	    (ret = take_section(dbg, &dbg_sh, fsize, &out->debug_frame)))
		return ret;
	return out->eh_frame.data || out->debug_frame.data ? 0 : -ENODATA;
}

static void cfi_release(void *out)
{
	rec_elfsym_cfi_release(out);
}

static const struct reader cfi_reader = { cfi_read, cfi_release };

int rec_elfsym_cfi_read_fd(int fd, struct rec_elfsym_cfi *out)
{
	memset(out, 0, sizeof(*out));
	return read_fd(fd, &cfi_reader, out);
}

int rec_elfsym_cfi_read_mem(const void *buf, size_t len, struct rec_elfsym_cfi *out)
{
	memset(out, 0, sizeof(*out));
	return read_mem(buf, len, &cfi_reader, out);
}

void rec_elfsym_cfi_release(struct rec_elfsym_cfi *c)
{
	if (!c)
		return;
	free(c->eh_frame.data);
	free(c->eh_frame_hdr.data);
	free(c->debug_frame.data);
	free(c->segs);
	memset(c, 0, sizeof(*c));
}

size_t rec_elfsym_cfi_bytes(const struct rec_elfsym_cfi *c)
{
	return c->eh_frame.len + c->eh_frame_hdr.len + c->debug_frame.len +
	       c->nsegs * sizeof(*c->segs);
}
