/*
 * cfi.c - DWARF CFI: entries, the search table, the row interpreter and
 * the expression evaluator (see cfi.h for why and how).
 *
 * Reading. Every read goes through struct cur, a position inside one
 * entry (or section) whose reads past the end return 0 and set a sticky
 * `bad` flag; callers test it once per entry. Positions are offsets from
 * the section's first byte so that pc-relative pointers know their own
 * address (sec_addr + pos). LEB128 numbers longer than 10 bytes are bad.
 * Arithmetic on values from the bytes is unsigned (wrapping, never UB).
 *
 * Bounds. Loops over instructions consume at least one byte per turn and
 * stop at the entry's end; the index walk consumes at least one length
 * field per entry; the expression evaluator counts its steps
 * (PREC_CFI_EXPR_STEPS) because bra/skip can jump backwards.
 */
#include "format/unwind/cfi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/opts.h"
#include "format/error.h"

/* DW_EH_PE_* (LSB, "DWARF Extensions": pointer encodings) */
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SIGNED 0x08
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_TEXTREL 0x20
#define PE_DATAREL 0x30
#define PE_FUNCREL 0x40
#define PE_ALIGNED 0x50
#define PE_INDIRECT 0x80
#define PE_OMIT 0xff

/* ---- reading */

struct cur {
	const uint8_t *b;   /* section byte 0 */
	size_t pos, end;    /* end: of the entry (or section) being read */
	int bad;
};

static uint64_t rd_n(struct cur *c, unsigned n)
{
	uint64_t v = 0;

	if (c->pos > c->end || c->end - c->pos < n) {
		c->bad = 1;
		c->pos = c->end;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->b[c->pos + i] << (8 * i);
	c->pos += n;
	return v;
}

static uint64_t sext(uint64_t v, unsigned bytes)
{
	unsigned sh = 64 - 8 * bytes;

	return bytes == 0 || bytes >= 8 ? v : (uint64_t)((int64_t)(v << sh) >> sh);
}

/* LEB128, at most 10 bytes; bits past 64 are dropped. */
static uint64_t rd_leb(struct cur *c, int is_signed)
{
	uint64_t v = 0;

	for (unsigned i = 0, sh = 0; i < 10; i++, sh += 7) {
		if (c->pos >= c->end)
			break;
		uint8_t b = c->b[c->pos++];
		if (sh < 64)
			v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			if (is_signed && sh + 7 < 64 && (b & 0x40))
				v |= ~0ull << (sh + 7);
			return v;
		}
	}
	c->bad = 1;
	return 0;
}

static uint64_t rd_uleb(struct cur *c)
{
	return rd_leb(c, 0);
}

static int64_t rd_sleb(struct cur *c)
{
	return (int64_t)rd_leb(c, 1);
}

/* Bases of the relative pointer encodings; a base not known (0 in has)
 * makes that encoding unsupported. */
struct pbase {
	uint64_t sec_addr;     /* address of section byte 0: pcrel */
	uint64_t data;         /* datarel (.eh_frame_hdr: its own start) */
	uint64_t func;         /* funcrel */
	unsigned has_data : 1, has_func : 1;
	unsigned asz;
};

/* A DW_EH_PE_* encoded pointer. *indirect set when the value is the
 * address of the pointer (0x80): the caller must not use it as an address
 * of code. 0, PREC_E_CFI or PREC_E_CFI_UNSUPPORTED. */
static int rd_enc(struct cur *c, uint8_t enc, const struct pbase *pb, uint64_t *out,
		  int *indirect)
{
	uint64_t field, v;

	*out = 0;
	if (enc == PE_OMIT)
		return PREC_E_CFI;
	if ((enc & 0x70) == PE_ALIGNED) {
		uint64_t a = pb->sec_addr + c->pos;
		size_t pad = (size_t)((pb->asz - a % pb->asz) % pb->asz);
		c->pos += pad;
		if (c->pos > c->end) {
			c->bad = 1;
			return PREC_E_CFI;
		}
	}
	field = pb->sec_addr + c->pos;
	switch (enc & 0x0f) {
	case PE_ABSPTR: v = rd_n(c, pb->asz); break;
	case PE_SIGNED: v = sext(rd_n(c, pb->asz), pb->asz); break;
	case PE_ULEB128: v = rd_uleb(c); break;
	case PE_UDATA2: v = rd_n(c, 2); break;
	case PE_UDATA4: v = rd_n(c, 4); break;
	case PE_UDATA8: v = rd_n(c, 8); break;
	case PE_SLEB128: v = (uint64_t)rd_sleb(c); break;
	case PE_SDATA2: v = sext(rd_n(c, 2), 2); break;
	case PE_SDATA4: v = sext(rd_n(c, 4), 4); break;
	case PE_SDATA8: v = rd_n(c, 8); break;
	default: return PREC_E_CFI_UNSUPPORTED;
	}
	if (c->bad)
		return PREC_E_CFI;
	switch (enc & 0x70) {
	case 0:
	case PE_ALIGNED:
		break;
	case PE_PCREL:
		v += field;
		break;
	case PE_DATAREL:
		if (!pb->has_data)
			return PREC_E_CFI_UNSUPPORTED;
		v += pb->data;
		break;
	case PE_FUNCREL:
		if (!pb->has_func)
			return PREC_E_CFI_UNSUPPORTED;
		v += pb->func;
		break;
	default:   /* textrel (no .text base here), 0x60, 0x70 */
		return PREC_E_CFI_UNSUPPORTED;
	}
	if (pb->asz == 4)
		v &= 0xffffffffu;
	if (indirect)
		*indirect = (enc & PE_INDIRECT) != 0;
	else if (enc & PE_INDIRECT)
		return PREC_E_CFI_UNSUPPORTED;
	*out = v;
	return 0;
}

/* ---- the table */

struct span {
	uint64_t begin, end, offset;
	int section;
};

struct prec_cfi_table {
	struct prec_cfi_sections s;
	unsigned asz;
	/* .eh_frame_hdr's table, when usable */
	const uint8_t *hdr_table;
	uint64_t hdr_count;
	uint8_t hdr_enc;
	unsigned hdr_entsz;       /* bytes of one value of the pair */
	/* sorted FDE ranges of whatever the hdr does not cover */
	struct span *idx;
	size_t nidx;
	int idx_eh;               /* the index covers .eh_frame too */
};

static void sec_of(const struct prec_cfi_table *t, int section, const uint8_t **b,
		   size_t *len, uint64_t *addr)
{
	if (section == PREC_CFI_DEBUG_FRAME) {
		*b = t->s.debug_frame;
		*len = t->s.debug_frame_len;
		*addr = 0;
	} else {
		*b = t->s.eh_frame;
		*len = t->s.eh_frame_len;
		*addr = t->s.eh_frame_addr;
	}
}

/* Reads an entry's length: 0 and *end (one past the entry), *offsz (4 or
 * 8); -ENOENT for a zero terminator or nothing left; PREC_E_CFI. */
static int entry_bounds(struct cur *c, size_t sec_len, size_t *end, unsigned *offsz)
{
	uint64_t len;

	c->end = sec_len;
	if (c->pos >= sec_len)
		return -ENOENT;
	len = rd_n(c, 4);
	*offsz = 4;
	if (len == 0xffffffffu) {
		len = rd_n(c, 8);
		*offsz = 8;
	}
	if (c->bad)
		return PREC_E_CFI;
	if (len == 0)
		return -ENOENT;
	if (len > sec_len - c->pos)
		return PREC_E_CFI;
	*end = c->pos + (size_t)len;
	c->end = *end;
	return 0;
}

static int is_cie_id(int section, uint64_t id, unsigned offsz)
{
	if (section == PREC_CFI_EH_FRAME)
		return id == 0;
	return offsz == 8 ? id == UINT64_MAX : id == 0xffffffffu;
}

/* Parses the CIE at off. 0, -ENOENT (terminator), 1 (an FDE is there),
 * PREC_E_CFI, PREC_E_CFI_UNSUPPORTED. */
static int parse_cie(const struct prec_cfi_table *t, int section, uint64_t off,
		     struct prec_cfi_cie *cie)
{
	const uint8_t *b;
	size_t len, end, aug_at, aug_n;
	uint64_t addr;
	unsigned offsz;
	struct cur c;
	int ret;

	sec_of(t, section, &b, &len, &addr);
	if (off >= len)
		return PREC_E_CFI;
	c.b = b;
	c.pos = (size_t)off;
	c.bad = 0;
	ret = entry_bounds(&c, len, &end, &offsz);
	if (ret)
		return ret;
	if (!is_cie_id(section, rd_n(&c, offsz), offsz))
		return c.bad ? PREC_E_CFI : 1;
	memset(cie, 0, sizeof(*cie));
	cie->version = (uint8_t)rd_n(&c, 1);
	if (cie->version != 1 && cie->version != 3 &&
	    !(cie->version == 4 && section == PREC_CFI_DEBUG_FRAME))
		return c.bad ? PREC_E_CFI : PREC_E_CFI_UNSUPPORTED;
	aug_at = c.pos;
	while (c.pos < c.end && b[c.pos])
		c.pos++;
	if (c.pos >= c.end)
		return PREC_E_CFI;
	aug_n = c.pos - aug_at;
	c.pos++;
	cie->addr_size = (uint8_t)t->asz;
	if (cie->version == 4) {
		uint8_t as = (uint8_t)rd_n(&c, 1), seg = (uint8_t)rd_n(&c, 1);
		if (c.bad || (as != 4 && as != 8))
			return PREC_E_CFI;
		if (seg)
			return PREC_E_CFI_UNSUPPORTED;
		cie->addr_size = as;
	}
	cie->code_align = rd_uleb(&c);
	cie->data_align = rd_sleb(&c);
	cie->ra_col = cie->version == 1 ? rd_n(&c, 1) : rd_uleb(&c);
	cie->fde_enc = PE_ABSPTR;
	cie->lsda_enc = PE_OMIT;
	if (c.bad)
		return PREC_E_CFI;
	if (aug_n && b[aug_at] == 'z') {
		uint64_t alen = rd_uleb(&c);
		struct pbase pb = { addr, 0, 0, 0, 0, cie->addr_size };
		size_t aend;

		if (c.bad || alen > c.end - c.pos)
			return PREC_E_CFI;
		aend = c.pos + (size_t)alen;
		cie->has_aug_data = 1;
		/* Letters we do not know end the walk: the length lets the
		 * rest be skipped (what GCC's unwinder does). */
		for (size_t i = 1; i < aug_n; i++) {
			char ch = (char)b[aug_at + i];
			struct cur a = { b, c.pos, aend, 0 };
			if (ch == 'R') {
				cie->fde_enc = (uint8_t)rd_n(&a, 1);
			} else if (ch == 'L') {
				cie->lsda_enc = (uint8_t)rd_n(&a, 1);
			} else if (ch == 'P') {
				uint64_t v;
				int ind;
				uint8_t penc = (uint8_t)rd_n(&a, 1);
				if (a.bad)
					return PREC_E_CFI;
				ret = rd_enc(&a, penc, &pb, &v, &ind);
				if (ret)
					return ret;
			} else if (ch == 'S') {
				cie->signal_frame = 1;
			} else if (ch == 'B' || ch == 'G') {
				/* aarch64 B-key signing, MTE tagged frames: no data */
			} else {
				break;
			}
			if (a.bad)
				return PREC_E_CFI;
			c.pos = a.pos;
		}
		c.pos = aend;
	} else if (aug_n == 2 && b[aug_at] == 'e' && b[aug_at + 1] == 'h') {
		rd_n(&c, cie->addr_size);   /* old GCC's eh_ptr */
	} else if (aug_n) {
		return PREC_E_CFI_UNSUPPORTED;   /* layout unknown without 'z' */
	}
	if (c.bad || c.pos > c.end)
		return PREC_E_CFI;
	cie->insns = b + c.pos;
	cie->insns_len = c.end - c.pos;
	return 0;
}

/* Parses the entry at off. 0 (an FDE), 1 (a CIE: fde->cie only),
 * -ENOENT, PREC_E_CFI, PREC_E_CFI_UNSUPPORTED; *next the following entry
 * when the length could be read. */
static int parse_entry(const struct prec_cfi_table *t, int section, uint64_t off,
		       struct prec_cfi_fde *fde, uint64_t *next)
{
	const uint8_t *b;
	size_t len, end, id_pos;
	uint64_t addr, id, cie_off, begin, range;
	unsigned offsz;
	struct cur c;
	int ret;

	memset(fde, 0, sizeof(*fde));
	sec_of(t, section, &b, &len, &addr);
	if (!b || off >= len)
		return -ENOENT;
	c.b = b;
	c.pos = (size_t)off;
	c.bad = 0;
	ret = entry_bounds(&c, len, &end, &offsz);
	if (ret)
		return ret;
	if (next)
		*next = end;
	fde->section = section;
	fde->offset = off;
	fde->sec = b;
	fde->sec_len = len;
	fde->sec_addr = addr;
	id_pos = c.pos;
	id = rd_n(&c, offsz);
	if (c.bad)
		return PREC_E_CFI;
	if (is_cie_id(section, id, offsz)) {
		fde->cie_offset = off;
		ret = parse_cie(t, section, off, &fde->cie);
		return ret ? (ret == 1 ? PREC_E_CFI : ret) : 1;
	}
	if (section == PREC_CFI_EH_FRAME) {
		if (id > id_pos)
			return PREC_E_CFI;
		cie_off = id_pos - id;
	} else {
		cie_off = id;
	}
	fde->cie_offset = cie_off;
	ret = parse_cie(t, section, cie_off, &fde->cie);
	if (ret)
		return ret == 1 || ret == -ENOENT ? PREC_E_CFI : ret;
	if (section == PREC_CFI_EH_FRAME) {
		struct pbase pb = { addr, 0, 0, 0, 0, fde->cie.addr_size };
		ret = rd_enc(&c, fde->cie.fde_enc, &pb, &begin, NULL);
		if (ret)
			return ret;
		/* the range uses the format only, never a base */
		ret = rd_enc(&c, fde->cie.fde_enc & 0x0f, &pb, &range, NULL);
		if (ret)
			return ret;
	} else {
		begin = rd_n(&c, fde->cie.addr_size);
		range = rd_n(&c, fde->cie.addr_size);
	}
	if (fde->cie.has_aug_data) {
		uint64_t alen = rd_uleb(&c);
		if (c.bad || alen > c.end - c.pos)
			return PREC_E_CFI;
		c.pos += (size_t)alen;
	}
	if (c.bad || begin + range < begin)
		return PREC_E_CFI;
	fde->pc_begin = begin;
	fde->pc_end = begin + range;
	fde->insns = b + c.pos;
	fde->insns_len = c.end - c.pos;
	return 0;
}

int prec_cfi_entry_at(const struct prec_cfi_table *t, int section,
		      uint64_t offset, struct prec_cfi_fde *fde,
		      uint64_t *next_offset)
{
	if (!t || !fde || (section != PREC_CFI_EH_FRAME && section != PREC_CFI_DEBUG_FRAME))
		return -EINVAL;
	return parse_entry(t, section, offset, fde, next_offset);
}

/* .eh_frame_hdr: version 1, three encodings, eh_frame_ptr, fde_count, then
 * fde_count pairs (initial location, FDE address) sorted by location.
 * Used only when the pairs have a fixed size (so they can be bisected),
 * eh_frame_ptr names the .eh_frame we were given and the table fits. */
static void take_hdr(struct prec_cfi_table *t)
{
	const struct prec_cfi_sections *s = &t->s;
	struct cur c = { s->eh_frame_hdr, 0, s->eh_frame_hdr_len, 0 };
	struct pbase pb = { s->eh_frame_hdr_addr, s->eh_frame_hdr_addr, 0, 1, 0, t->asz };
	uint64_t ptr, count;
	uint8_t ver, ptr_enc, cnt_enc, tab_enc;
	unsigned sz;

	if (!s->eh_frame_hdr || !s->eh_frame)
		return;
	ver = (uint8_t)rd_n(&c, 1);
	ptr_enc = (uint8_t)rd_n(&c, 1);
	cnt_enc = (uint8_t)rd_n(&c, 1);
	tab_enc = (uint8_t)rd_n(&c, 1);
	if (c.bad || ver != 1 || cnt_enc == PE_OMIT || tab_enc == PE_OMIT ||
	    (tab_enc & PE_INDIRECT))
		return;
	if (rd_enc(&c, ptr_enc, &pb, &ptr, NULL) || ptr != s->eh_frame_addr)
		return;
	if (rd_enc(&c, cnt_enc, &pb, &count, NULL))
		return;
	switch (tab_enc & 0x0f) {
	case PE_UDATA2: case PE_SDATA2: sz = 2; break;
	case PE_UDATA4: case PE_SDATA4: sz = 4; break;
	case PE_UDATA8: case PE_SDATA8: sz = 8; break;
	case PE_ABSPTR: case PE_SIGNED: sz = t->asz; break;
	default: return;
	}
	if ((tab_enc & 0x70) != 0 && (tab_enc & 0x70) != PE_DATAREL)
		return;
	if (count > (c.end - c.pos) / (2u * sz))
		return;
	t->hdr_table = s->eh_frame_hdr + c.pos;
	t->hdr_count = count;
	t->hdr_enc = tab_enc;
	t->hdr_entsz = sz;
}

static uint64_t hdr_value(const struct prec_cfi_table *t, uint64_t i, int which)
{
	const uint8_t *p = t->hdr_table + (i * 2 + (uint64_t)which) * t->hdr_entsz;
	uint64_t v = 0;

	/* what every toolchain writes: datarel | sdata4 */
	if (t->hdr_enc == (PE_DATAREL | PE_SDATA4)) {
		int32_t x = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
				      (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
		v = (uint64_t)(int64_t)x + t->s.eh_frame_hdr_addr;
		return t->asz == 4 ? v & 0xffffffffu : v;
	}
	for (unsigned k = 0; k < t->hdr_entsz; k++)
		v |= (uint64_t)p[k] << (8 * k);
	switch (t->hdr_enc & 0x0f) {
	case PE_SDATA2: case PE_SDATA4: case PE_SIGNED:
		v = sext(v, t->hdr_entsz);
		break;
	default:
		break;
	}
	if ((t->hdr_enc & 0x70) == PE_DATAREL)
		v += t->s.eh_frame_hdr_addr;
	if (t->asz == 4)
		v &= 0xffffffffu;
	return v;
}

static int cmp_span(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;

	if (a->begin != b->begin)
		return a->begin < b->begin ? -1 : 1;
	return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* Walks a section once and appends its FDE ranges to the index. Entries
 * that do not parse are skipped (their length still leads to the next). */
static int index_section(struct prec_cfi_table *t, int section)
{
	const uint8_t *b;
	size_t len, cap = t->nidx;
	uint64_t addr, off = 0;

	sec_of(t, section, &b, &len, &addr);
	if (!b)
		return 0;
	while (off < len) {
		struct prec_cfi_fde f;
		uint64_t next = 0;

		int ret = parse_entry(t, section, off, &f, &next);

		if (ret == -ENOENT || !next || next <= off)
			break;   /* terminator, or a length that did not read */
		off = next;
		if (ret != 0 || f.pc_begin == f.pc_end)
			continue;
		if (t->nidx == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct span *n = realloc(t->idx, ncap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			t->idx = n;
			cap = ncap;
		}
		t->idx[t->nidx].begin = f.pc_begin;
		t->idx[t->nidx].end = f.pc_end;
		t->idx[t->nidx].offset = f.offset;
		t->idx[t->nidx].section = section;
		t->nidx++;
	}
	return 0;
}

struct prec_cfi_table *prec_cfi_table_new(const struct prec_cfi_sections *s)
{
	struct prec_cfi_table *t;

	if (!s || !prec_opts_valid(s, sizeof(*s))) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	prec_opts_copy(&t->s, sizeof(t->s), s);
	t->asz = t->s.addr_size == 4 ? 4 : 8;
	if (!t->s.eh_frame)
		t->s.eh_frame_len = 0;
	if (!t->s.debug_frame)
		t->s.debug_frame_len = 0;
	take_hdr(t);
	if ((!t->hdr_table && t->s.eh_frame && index_section(t, PREC_CFI_EH_FRAME) < 0) ||
	    index_section(t, PREC_CFI_DEBUG_FRAME) < 0) {
		prec_cfi_table_free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->idx_eh = !t->hdr_table;
	if (t->nidx > 1)
		qsort(t->idx, t->nidx, sizeof(*t->idx), cmp_span);
	return t;
}

void prec_cfi_table_free(struct prec_cfi_table *t)
{
	if (!t)
		return;
	free(t->idx);
	free(t);
}

/* How many earlier index entries a lookup inspects for one covering pc
 * (FDEs may nest or overlap in hand-written assembly). */
#define IDX_BACKSCAN 8

static int find_in_index(const struct prec_cfi_table *t, uint64_t pc, int section,
			 struct prec_cfi_fde *fde)
{
	size_t lo = 0, hi = t->nidx;

	while (lo < hi) {   /* first span with begin > pc */
		size_t mid = lo + (hi - lo) / 2;
		if (t->idx[mid].begin <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = 0; k < IDX_BACKSCAN && k < lo; k++) {
		const struct span *sp = &t->idx[lo - 1 - k];
		if (sp->section != section || pc >= sp->end)
			continue;
		return parse_entry(t, section, sp->offset, fde, NULL);
	}
	return -ENOENT;
}

static int find_in_hdr(const struct prec_cfi_table *t, uint64_t pc,
		       struct prec_cfi_fde *fde)
{
	uint64_t lo = 0, hi = t->hdr_count, fde_addr;
	int ret;

	while (lo < hi) {   /* first entry with location > pc */
		uint64_t mid = lo + (hi - lo) / 2;
		if (hdr_value(t, mid, 0) <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	fde_addr = hdr_value(t, lo - 1, 1);
	if (fde_addr < t->s.eh_frame_addr ||
	    fde_addr - t->s.eh_frame_addr >= t->s.eh_frame_len)
		return PREC_E_CFI;
	ret = parse_entry(t, PREC_CFI_EH_FRAME, fde_addr - t->s.eh_frame_addr, fde, NULL);
	if (ret == 1 || ret == -ENOENT)
		return PREC_E_CFI;   /* the table points at a CIE or the end */
	if (ret)
		return ret;
	return pc >= fde->pc_begin && pc < fde->pc_end ? 0 : -ENOENT;
}

int prec_cfi_table_find(const struct prec_cfi_table *t, uint64_t pc,
			struct prec_cfi_fde *fde)
{
	int ret = -ENOENT;

	if (!t || !fde)
		return -EINVAL;
	if (t->hdr_table)
		ret = find_in_hdr(t, pc, fde);
	else if (t->idx_eh)
		ret = find_in_index(t, pc, PREC_CFI_EH_FRAME, fde);
	if (ret == -ENOENT && t->s.debug_frame)
		ret = find_in_index(t, pc, PREC_CFI_DEBUG_FRAME, fde);
	return ret;
}

/* ---- rows */

struct saved {
	struct prec_cfi_rule cols[PREC_CFI_MAX_COLS];
	uint8_t cfa_kind;
	uint16_t cfa_reg;
	int64_t cfa_off, cfa_expr_off;
	uint32_t cfa_expr_len;
};

struct interp {
	const struct prec_cfi_fde *fde;
	struct prec_cfi_row *row;
	uint64_t loc, pc;
	int done;                       /* advanced past pc */
	struct prec_cfi_rule init[PREC_CFI_MAX_COLS];   /* after the CIE */
	struct saved stack[PREC_CFI_MAX_REMEMBER];
	unsigned depth;
};

#define CFA_NONE UINT16_MAX

static uint16_t reg16(uint64_t r)
{
	return r < UINT16_MAX ? (uint16_t)r : UINT16_MAX - 1;
}

static void set_rule(struct interp *in, uint64_t reg, uint8_t kind, int64_t off,
		     uint64_t reg2, uint32_t expr_len)
{
	struct prec_cfi_rule *r;

	if (reg >= PREC_CFI_MAX_COLS)
		return;   /* a column no unwinder here needs */
	r = &in->row->cols[reg];
	r->kind = kind;
	r->off = off;
	r->reg = reg16(reg2);
	r->expr_len = expr_len;
	r->explicit_ = 1;
}

/* Moves the location by delta code units. Past pc: the row in effect at
 * pc ends there. A sum that wraps is past any pc. */
static void advance(struct interp *in, uint64_t delta)
{
	uint64_t to = in->loc + delta;

	if (to < in->loc) {
		in->row->end = UINT64_MAX;
		in->done = 1;
	} else if (to > in->pc) {
		in->row->end = to;
		in->done = 1;
	} else {
		in->loc = to;
	}
}

/* A block (DW_FORM_block: ULEB length, bytes) inside the entry: its
 * offset from section byte 0 and its length. */
static int rd_block(struct cur *c, int64_t *off, uint32_t *len)
{
	uint64_t n = rd_uleb(c);

	if (c->bad || n > c->end - c->pos || n > UINT32_MAX)
		return PREC_E_CFI;
	*off = (int64_t)c->pos;
	*len = (uint32_t)n;
	c->pos += (size_t)n;
	return 0;
}

static int64_t fac(uint64_t v, int64_t f)
{
	return (int64_t)(v * (uint64_t)f);
}

static int run(struct interp *in, const uint8_t *insns, size_t n, int is_cie)
{
	const struct prec_cfi_fde *fde = in->fde;
	const struct prec_cfi_cie *cie = &fde->cie;
	struct prec_cfi_row *row = in->row;
	/* positions are section offsets, so blocks and set_loc know where
	 * they are */
	size_t start = (size_t)(insns - fde->sec);
	struct cur c = { fde->sec, start, start + n, 0 };

	while (!in->done && c.pos < c.end) {
		uint8_t op = (uint8_t)rd_n(&c, 1);
		uint64_t reg, v = 0, reg2;
		int64_t off;
		uint32_t elen;
		int ret;

		switch (op & 0xc0) {
		case 0x40:
			advance(in, (op & 0x3f) * cie->code_align);
			continue;
		case 0x80:
			v = rd_uleb(&c);
			set_rule(in, op & 0x3f, PREC_CFI_RULE_OFFSET, fac(v, cie->data_align), 0, 0);
			continue;
		case 0xc0:
			reg = op & 0x3f;
			if (reg < PREC_CFI_MAX_COLS)
				row->cols[reg] = is_cie ? (struct prec_cfi_rule){ 0 } : in->init[reg];
			continue;
		default:
			break;
		}
		switch (op) {
		case 0x00:   /* nop */
			break;
		case 0x01: { /* set_loc */
			if (fde->section == PREC_CFI_EH_FRAME) {
				struct pbase pb = { fde->sec_addr, 0, 0, 0, 0, cie->addr_size };
				ret = rd_enc(&c, cie->fde_enc, &pb, &v, NULL);
				if (ret)
					return ret;
			} else {
				v = rd_n(&c, cie->addr_size);
			}
			/* an absolute location; one going backwards is
			 * bytes we do not trust */
			if (!c.bad && v < in->loc)
				return PREC_E_CFI;
			if (!c.bad)
				advance(in, v - in->loc);
			break;
		}
		case 0x02: advance(in, rd_n(&c, 1) * cie->code_align); break;
		case 0x03: advance(in, rd_n(&c, 2) * cie->code_align); break;
		case 0x04: advance(in, rd_n(&c, 4) * cie->code_align); break;
		case 0x05: /* offset_extended */
			reg = rd_uleb(&c);
			v = rd_uleb(&c);
			set_rule(in, reg, PREC_CFI_RULE_OFFSET, fac(v, cie->data_align), 0, 0);
			break;
		case 0x06: /* restore_extended */
			reg = rd_uleb(&c);
			if (reg < PREC_CFI_MAX_COLS)
				row->cols[reg] = is_cie ? (struct prec_cfi_rule){ 0 } : in->init[reg];
			break;
		case 0x07: /* undefined */
			set_rule(in, rd_uleb(&c), PREC_CFI_RULE_UNDEF, 0, 0, 0);
			break;
		case 0x08: /* same_value */
			set_rule(in, rd_uleb(&c), PREC_CFI_RULE_SAME, 0, 0, 0);
			break;
		case 0x09: /* register */
			reg = rd_uleb(&c);
			reg2 = rd_uleb(&c);
			set_rule(in, reg, PREC_CFI_RULE_REG, 0, reg2, 0);
			break;
		case 0x0a: { /* remember_state */
			struct saved *s;
			if (in->depth == PREC_CFI_MAX_REMEMBER)
				return PREC_E_CFI;
			s = &in->stack[in->depth++];
			memcpy(s->cols, row->cols, sizeof(s->cols));
			s->cfa_kind = row->cfa_kind;
			s->cfa_reg = row->cfa_reg;
			s->cfa_off = row->cfa_off;
			s->cfa_expr_off = row->cfa_expr_off;
			s->cfa_expr_len = row->cfa_expr_len;
			break;
		}
		case 0x0b: { /* restore_state */
			const struct saved *s;
			if (!in->depth)
				return PREC_E_CFI;
			s = &in->stack[--in->depth];
			memcpy(row->cols, s->cols, sizeof(s->cols));
			row->cfa_kind = s->cfa_kind;
			row->cfa_reg = s->cfa_reg;
			row->cfa_off = s->cfa_off;
			row->cfa_expr_off = s->cfa_expr_off;
			row->cfa_expr_len = s->cfa_expr_len;
			break;
		}
		case 0x0c: /* def_cfa */
			row->cfa_reg = reg16(rd_uleb(&c));
			row->cfa_off = (int64_t)rd_uleb(&c);
			row->cfa_kind = PREC_CFI_CFA_REG;
			break;
		/* After an expression, def_cfa_register and def_cfa_offset
		 * go back to register+offset with the other half as it was
		 * before the expression (DWARF calls this invalid; GCC's
		 * unwinder and readelf do so, and hand-written assembly in
		 * libgcrypt relies on it). */
		case 0x0d: /* def_cfa_register */
			row->cfa_reg = reg16(rd_uleb(&c));
			row->cfa_kind = PREC_CFI_CFA_REG;
			break;
		case 0x0e: /* def_cfa_offset */
			row->cfa_off = (int64_t)rd_uleb(&c);
			row->cfa_kind = PREC_CFI_CFA_REG;
			break;
		case 0x0f: /* def_cfa_expression */
			ret = rd_block(&c, &off, &elen);
			if (ret)
				return ret;
			row->cfa_kind = PREC_CFI_CFA_EXPR;
			row->cfa_expr_off = off;
			row->cfa_expr_len = elen;
			break;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = rd_uleb(&c);
			ret = rd_block(&c, &off, &elen);
			if (ret)
				return ret;
			set_rule(in, reg, op == 0x10 ? PREC_CFI_RULE_EXPR : PREC_CFI_RULE_VAL_EXPR,
				 off, 0, elen);
			break;
		case 0x11: /* offset_extended_sf */
			reg = rd_uleb(&c);
			off = rd_sleb(&c);
			set_rule(in, reg, PREC_CFI_RULE_OFFSET, fac((uint64_t)off, cie->data_align),
				 0, 0);
			break;
		case 0x12: /* def_cfa_sf */
			row->cfa_reg = reg16(rd_uleb(&c));
			row->cfa_off = fac((uint64_t)rd_sleb(&c), cie->data_align);
			row->cfa_kind = PREC_CFI_CFA_REG;
			break;
		case 0x13: /* def_cfa_offset_sf */
			row->cfa_off = fac((uint64_t)rd_sleb(&c), cie->data_align);
			row->cfa_kind = PREC_CFI_CFA_REG;
			break;
		case 0x14: /* val_offset */
			reg = rd_uleb(&c);
			v = rd_uleb(&c);
			set_rule(in, reg, PREC_CFI_RULE_VAL_OFFSET, fac(v, cie->data_align), 0, 0);
			break;
		case 0x15: /* val_offset_sf */
			reg = rd_uleb(&c);
			off = rd_sleb(&c);
			set_rule(in, reg, PREC_CFI_RULE_VAL_OFFSET,
				 fac((uint64_t)off, cie->data_align), 0, 0);
			break;
		case 0x2d: /* GNU_window_save (SPARC) / AARCH64_negate_ra_state:
			    * return addresses are taken as stored */
			break;
		case 0x2e: /* GNU_args_size */
			rd_uleb(&c);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = rd_uleb(&c);
			v = rd_uleb(&c);
			set_rule(in, reg, PREC_CFI_RULE_OFFSET, -fac(v, cie->data_align), 0, 0);
			break;
		default:
			return PREC_E_CFI_UNSUPPORTED;
		}
		if (c.bad)
			return PREC_E_CFI;
	}
	return c.bad ? PREC_E_CFI : 0;
}

int prec_cfi_row_at(const struct prec_cfi_fde *fde, uint64_t pc,
		    struct prec_cfi_row *row)
{
	/* ~6 KiB, mostly the remember stack: on the heap it would cost a
	 * malloc per frame; any thread's stack has room for it */
	struct interp state, *in = &state;
	int ret;

	if (!fde || !row || !fde->sec)
		return -EINVAL;
	if (pc < fde->pc_begin || pc >= fde->pc_end)
		return PREC_E_CFI;
	memset(row, 0, sizeof(*row));
	in->fde = fde;
	in->row = row;
	in->loc = fde->pc_begin;
	in->pc = pc;
	in->done = 0;
	in->depth = 0;
	row->cfa_reg = CFA_NONE;
	row->ra_col = fde->cie.ra_col;
	row->signal_frame = fde->cie.signal_frame;
	row->sec = fde->sec;
	row->end = fde->pc_end;
	ret = run(in, fde->cie.insns, fde->cie.insns_len, 1);
	if (ret)
		return ret;
	/* the CIE's rules are what DW_CFA_restore returns to; its
	 * location moves (were there any) do not count */
	memcpy(in->init, row->cols, sizeof(in->init));
	in->loc = fde->pc_begin;
	in->done = 0;
	row->end = fde->pc_end;
	in->depth = 0;
	ret = run(in, fde->insns, fde->insns_len, 0);
	if (ret)
		return ret;
	row->loc = in->loc;
	if (row->end > fde->pc_end)
		row->end = fde->pc_end;
	return 0;
}

const uint8_t *prec_cfi_rule_expr(const struct prec_cfi_row *row,
				  const struct prec_cfi_rule *rule, size_t *len)
{
	if (!rule) {
		if (row->cfa_kind != PREC_CFI_CFA_EXPR)
			return NULL;
		*len = row->cfa_expr_len;
		return row->sec + row->cfa_expr_off;
	}
	if (rule->kind != PREC_CFI_RULE_EXPR && rule->kind != PREC_CFI_RULE_VAL_EXPR)
		return NULL;
	*len = rule->expr_len;
	return row->sec + rule->off;
}

/* ---- expressions */

int prec_cfi_expr_eval(const uint8_t *expr, size_t len,
		       const struct prec_cfi_expr_env *env, int have_push,
		       uint64_t push, uint64_t *out)
{
	uint64_t st[PREC_CFI_EXPR_STACK];
	unsigned sp = 0, asz = env && env->addr_size == 4 ? 4 : 8;
	struct cur c = { expr, 0, len, 0 };
	int ret;

	if (!expr || !env || !out)
		return -EINVAL;
#define NEED(k) do { if (sp < (k)) return PREC_E_CFI; } while (0)
#define PUSH(x) do { \
		uint64_t x_ = (x); \
		if (sp == PREC_CFI_EXPR_STACK) \
			return PREC_E_CFI; \
		st[sp++] = x_; \
	} while (0)
	if (have_push)
		PUSH(push);
	for (unsigned steps = 0; c.pos < c.end; steps++) {
		uint8_t op;
		uint64_t a, b, v;
		int64_t so;

		if (steps == PREC_CFI_EXPR_STEPS)
			return PREC_E_CFI;
		op = (uint8_t)rd_n(&c, 1);
		if (op >= 0x30 && op <= 0x4f) {        /* lit0..31 */
			PUSH((uint64_t)(op - 0x30));
			continue;
		}
		if (op >= 0x70 && op <= 0x8f) {        /* breg0..31 */
			so = rd_sleb(&c);
			if (c.bad)
				return PREC_E_CFI;
			if (!env->reg || (ret = env->reg(env->ctx, op - 0x70u, &v)) < 0)
				return env->reg ? ret : PREC_E_CFI_UNSUPPORTED;
			PUSH(v + (uint64_t)so);
			continue;
		}
		switch (op) {
		case 0x03: v = rd_n(&c, asz); goto push_v;          /* addr */
		case 0x08: v = rd_n(&c, 1); goto push_v;            /* const1u */
		case 0x09: v = sext(rd_n(&c, 1), 1); goto push_v;
		case 0x0a: v = rd_n(&c, 2); goto push_v;
		case 0x0b: v = sext(rd_n(&c, 2), 2); goto push_v;
		case 0x0c: v = rd_n(&c, 4); goto push_v;
		case 0x0d: v = sext(rd_n(&c, 4), 4); goto push_v;
		case 0x0e: case 0x0f: v = rd_n(&c, 8); goto push_v;
		case 0x10: v = rd_uleb(&c); goto push_v;            /* constu */
		case 0x11: v = (uint64_t)rd_sleb(&c); goto push_v;  /* consts */
		case 0x12: NEED(1); PUSH(st[sp - 1]); break;        /* dup */
		case 0x13: NEED(1); sp--; break;                    /* drop */
		case 0x14: NEED(2); PUSH(st[sp - 2]); break;        /* over */
		case 0x15:                                          /* pick */
			v = rd_n(&c, 1);
			if (c.bad)
				return PREC_E_CFI;
			NEED(v + 1);
			PUSH(st[sp - 1 - v]);
			break;
		case 0x16: NEED(2); a = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = a; break;
		case 0x17: /* rot: (a b c -- c a b) with c on top */
			NEED(3);
			a = st[sp - 1];
			st[sp - 1] = st[sp - 2];
			st[sp - 2] = st[sp - 3];
			st[sp - 3] = a;
			break;
		case 0x06: case 0x94: {                             /* deref, deref_size */
			unsigned n = asz;
			if (op == 0x94) {
				n = (unsigned)rd_n(&c, 1);
				if (c.bad || n == 0 || n > 8)
					return PREC_E_CFI;
			}
			NEED(1);
			if (!env->mem)
				return PREC_E_CFI_UNSUPPORTED;
			ret = env->mem(env->ctx, st[sp - 1], n, &v);
			if (ret < 0)
				return ret;
			st[sp - 1] = v;
			break;
		}
		case 0x19: NEED(1); so = (int64_t)st[sp - 1]; st[sp - 1] = so < 0 ? 0 - st[sp - 1] : st[sp - 1]; break;
		case 0x1f: NEED(1); st[sp - 1] = 0 - st[sp - 1]; break;           /* neg */
		case 0x20: NEED(1); st[sp - 1] = ~st[sp - 1]; break;              /* not */
		case 0x23: v = rd_uleb(&c); NEED(1); st[sp - 1] += v; break;      /* plus_uconst */
		case 0x1a: case 0x1b: case 0x1c: case 0x1d: case 0x1e:
		case 0x21: case 0x22: case 0x24: case 0x25: case 0x26: case 0x27:
		case 0x29: case 0x2a: case 0x2b: case 0x2c: case 0x2d: case 0x2e:
			NEED(2);
			b = st[--sp];
			a = st[sp - 1];
			switch (op) {
			case 0x1a: v = a & b; break;
			case 0x1b: /* div, signed */
				if (!b || ((int64_t)a == INT64_MIN && (int64_t)b == -1))
					return PREC_E_CFI;
				v = (uint64_t)((int64_t)a / (int64_t)b);
				break;
			case 0x1c: v = a - b; break;
			case 0x1d: if (!b) return PREC_E_CFI; v = a % b; break;
			case 0x1e: v = a * b; break;
			case 0x21: v = a | b; break;
			case 0x22: v = a + b; break;
			case 0x24: v = b >= 64 ? 0 : a << b; break;
			case 0x25: v = b >= 64 ? 0 : a >> b; break;
			case 0x26: v = (uint64_t)((int64_t)a >> (b >= 63 ? 63 : b)); break;
			case 0x27: v = a ^ b; break;
			case 0x29: v = a == b; break;
			case 0x2a: v = (int64_t)a >= (int64_t)b; break;
			case 0x2b: v = (int64_t)a > (int64_t)b; break;
			case 0x2c: v = (int64_t)a <= (int64_t)b; break;
			case 0x2d: v = (int64_t)a < (int64_t)b; break;
			default: v = a != b; break;
			}
			st[sp - 1] = v;
			break;
		case 0x28: case 0x2f: {                             /* bra, skip */
			int64_t d = (int64_t)sext(rd_n(&c, 2), 2);
			int take = 1;
			if (c.bad)
				return PREC_E_CFI;
			if (op == 0x28) {
				NEED(1);
				take = st[--sp] != 0;
			}
			if (take) {
				if ((d < 0 && (uint64_t)-d > c.pos) ||
				    (d > 0 && (uint64_t)d > c.end - c.pos))
					return PREC_E_CFI;
				c.pos = (size_t)((int64_t)c.pos + d);
			}
			break;
		}
		case 0x92: {                                        /* bregx */
			uint64_t r = rd_uleb(&c);
			so = rd_sleb(&c);
			if (c.bad)
				return PREC_E_CFI;
			if (!env->reg || r > UINT32_MAX || (ret = env->reg(env->ctx, (unsigned)r, &v)) < 0)
				return env->reg && r <= UINT32_MAX ? ret : PREC_E_CFI_UNSUPPORTED;
			PUSH(v + (uint64_t)so);
			break;
		}
		case 0x96:                                          /* nop */
			break;
		default:
			return PREC_E_CFI_UNSUPPORTED;
		}
		if (c.bad)
			return PREC_E_CFI;
		continue;
push_v:
		if (c.bad)
			return PREC_E_CFI;
		PUSH(v);
	}
#undef NEED
#undef PUSH
	if (c.bad || !sp)
		return PREC_E_CFI;
	*out = st[sp - 1];
	return 0;
}
