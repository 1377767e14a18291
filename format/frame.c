/*
 * frame.c - one decoded data frame (see frame.h).
 *
 * prec_frame_load() decompresses a whole zstd frame into f->raw after
 * checking that the bytes are exactly one frame with a known content size
 * within max_raw. prec_frame_next() then walks raw field by field
 * (0x0A, varint length, Packet bytes), unpacking each Packet into the
 * frame's arena, resolving dt into absolute time and applying InternedData
 * to the frame's iid tables as it meets them (callchains: cctab.h; a
 * Sample in the callers form gets the iid of its whole callchain there). Nothing in raw is trusted:
 * every length is checked against the bytes left.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include "format/error.h"
#include "format/frame_int.h"
#include "format/layout.h"
#include "format/packet.h"
#include "format/swbatch.h"

struct prec_frame *prec_frame_new(void)
{
	struct prec_frame *f = calloc(1, sizeof(*f));

	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	f->dctx = ZSTD_createDCtx();
	if (!f->dctx) {
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	prec_arena_init(&f->arena, 0);
	prec_cctab_init(&f->chains);
	f->fast = prec_packet_fast_ok();
	f->kinds = PREC_KINDS_ALL;
	return f;
}

void prec_frame_free(struct prec_frame *f)
{
	if (!f)
		return;
	ZSTD_freeDCtx(f->dctx);
	free(f->raw);
	free(f->zbuf);
	free(f->strings.slots);
	prec_cctab_release(&f->chains);
	prec_arena_release(&f->arena);
	free(f);
}

static void table_clear(struct prec_iid_table *t)
{
	if (t->count)
		memset(t->slots, 0, t->nslots * sizeof(*t->slots));
	t->count = 0;
}

static size_t slot_of(uint64_t iid, size_t nslots)
{
	return (size_t)((iid * 0x9E3779B97F4A7C15ull) >> 17) & (nslots - 1);
}

static int table_put(struct prec_iid_table *t, uint64_t iid, const void *p, size_t n)
{
	size_t s;

	if (iid == 0)
		return 0;   /* "none" cannot be defined */
	if ((t->count + 1) * 2 > t->nslots) {
		size_t nn = t->nslots ? t->nslots * 2 : 64;
		struct prec_iid_slot *ns = calloc(nn, sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		for (size_t i = 0; i < t->nslots; i++) {
			if (!t->slots[i].iid)
				continue;
			size_t k = slot_of(t->slots[i].iid, nn);
			while (ns[k].iid)
				k = (k + 1) & (nn - 1);
			ns[k] = t->slots[i];
		}
		free(t->slots);
		t->slots = ns;
		t->nslots = nn;
	}
	for (s = slot_of(iid, t->nslots); t->slots[s].iid; s = (s + 1) & (t->nslots - 1)) {
		if (t->slots[s].iid == iid)
			break;   /* redefinition: the later value wins */
	}
	if (!t->slots[s].iid)
		t->count++;
	t->slots[s].iid = iid;
	t->slots[s].p = p;
	t->slots[s].n = n;
	return 0;
}

static const struct prec_iid_slot *table_get(const struct prec_iid_table *t, uint64_t iid)
{
	if (!iid || !t->count)
		return NULL;
	for (size_t s = slot_of(iid, t->nslots); t->slots[s].iid; s = (s + 1) & (t->nslots - 1)) {
		if (t->slots[s].iid == iid)
			return &t->slots[s];
	}
	return NULL;
}

static void frame_reset(struct prec_frame *f)
{
	f->raw_len = 0;
	f->pos = 0;
	f->time = 0;
	f->err = 0;
	f->loaded = 0;
	f->stream = 0;
	f->offset = 0;
	f->on_end = NULL;
	f->on_end_ctx = NULL;
	f->accounted = 0;
	f->packets = 0;
	f->seen_kinds = 0;
	f->unknown = 0;
	f->rows = NULL;
	f->nrows = f->row = 0;
	prec_arena_reset(&f->arena);
	table_clear(&f->strings);
	prec_cctab_clear(&f->chains, &f->arena, 0);
}

/* Maps a zstd error to ours: a checksum error names damage, a frame that
 * stops early names truncation, anything else zstd refused. */
static int zstd_err(size_t code)
{
	switch (ZSTD_getErrorCode(code)) {
	case ZSTD_error_checksum_wrong:
		return PREC_E_CHECKSUM;
	case ZSTD_error_srcSize_wrong:
		return PREC_E_TRUNCATED;
	case ZSTD_error_memory_allocation:
		return -ENOMEM;
	default:
		return PREC_E_DECOMPRESS;
	}
}

int prec_frame_load(struct prec_frame *f, const void *zbuf, size_t zlen,
		    size_t max_raw)
{
	return prec_frame_load_sized(f, zbuf, zlen, max_raw, UINT64_MAX);
}

int prec_frame_load_sized(struct prec_frame *f, const void *zbuf, size_t zlen,
			  size_t max_raw, uint64_t want)
{
	unsigned long long content;
	size_t csz, got;

	if (!f || (!zbuf && zlen))
		return -EINVAL;
	frame_reset(f);
	f->err = PREC_E_CORRUPT;   /* until the load succeeds */
	if (zlen < 4 || prec_get32(zbuf) != PREC_ZSTD_MAGIC)
		return PREC_E_CORRUPT;
	csz = ZSTD_findFrameCompressedSize(zbuf, zlen);
	if (ZSTD_isError(csz))
		return f->err = zstd_err(csz) == PREC_E_TRUNCATED ? PREC_E_TRUNCATED : PREC_E_CORRUPT;
	if (csz != zlen)
		return f->err = PREC_E_CORRUPT;   /* not exactly one frame */
	content = ZSTD_getFrameContentSize(zbuf, zlen);
	if (content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR)
		return f->err = PREC_E_CORRUPT;
	/* every bound before any byte is decompressed: zstd then refuses to
	 * write more than the content size the header declares */
	if (want != UINT64_MAX && content != want)
		return f->err = PREC_E_CORRUPT;
	if (content > max_raw || content > SIZE_MAX / 2)
		return f->err = PREC_E_TOO_BIG;
	if (content > (unsigned long long)zlen * PREC_MAX_RATIO)
		return f->err = PREC_E_RATIO;
	if (content > f->raw_cap || !f->raw) {
		size_t cap = content ? (size_t)content : 1;
		unsigned char *nb = realloc(f->raw, cap);
		if (!nb)
			return f->err = -ENOMEM;
		f->raw = nb;
		f->raw_cap = cap;
	}
	got = ZSTD_decompressDCtx(f->dctx, f->raw, (size_t)content, zbuf, zlen);
	if (ZSTD_isError(got)) {
		/* a damaged frame leaves the DCtx mid-frame: start it over */
		ZSTD_DCtx_reset(f->dctx, ZSTD_reset_session_only);
		return f->err = zstd_err(got);
	}
	if (got != content)
		return f->err = PREC_E_CORRUPT;
	f->raw_len = got;
	/* Decoded packets take more room than their bytes (a 2-byte empty
	 * Sample becomes a struct of ~100 bytes); bound the arena so hostile
	 * bytes cannot make us allocate without limit. */
	f->arena.limit = 64 * (size_t)content + (1u << 20);
	/* every callchain iid costs a byte or more of the frame */
	f->chains.dense_max = (size_t)content + 1024;
	f->err = 0;
	f->loaded = 1;
	return 0;
}

/* always inlined: it runs several times per packet */
static inline __attribute__((always_inline)) int
get_varint(const unsigned char *p, size_t avail, uint64_t *v, size_t *used)
{
	uint64_t x = 0;

	if (avail && p[0] < 0x80) {
		*v = p[0];   /* packet lengths below 128, dt and keys: one byte */
		*used = 1;
		return 0;
	}
	if (avail >= 2 && p[1] < 0x80) {
		*v = (p[0] & 0x7Fu) | (uint64_t)p[1] << 7;
		*used = 2;
		return 0;
	}

	for (size_t i = 0; i < avail && i < 10; i++) {
		x |= (uint64_t)(p[i] & 0x7F) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = x;
			*used = i + 1;
			return 0;
		}
	}
	return PREC_E_DECODE;
}

/* Skips a Trace field that is not `packet` (a newer writer's addition). */
static int skip_field(struct prec_frame *f)
{
	const unsigned char *p = f->raw + f->pos;
	size_t avail = f->raw_len - f->pos, n, m;
	uint64_t key, v;

	if (get_varint(p, avail, &key, &n) < 0)
		return PREC_E_DECODE;
	switch (key & 7) {
	case 0:
		if (get_varint(p + n, avail - n, &v, &m) < 0)
			return PREC_E_DECODE;
		n += m;
		break;
	case 1:
		n += 8;
		break;
	case 2:
		if (get_varint(p + n, avail - n, &v, &m) < 0 || v > avail - n - m)
			return PREC_E_DECODE;
		n += m + (size_t)v;
		break;
	case 5:
		n += 4;
		break;
	default:
		return PREC_E_DECODE;
	}
	if (n > avail)
		return PREC_E_DECODE;
	f->pos += n;
	return 0;
}

static int apply_interned(struct prec_frame *f, const Perfrec__InternedData *id)
{
	int ret;

	for (size_t i = 0; i < id->n_strings; i++) {
		const Perfrec__InternedString *s = id->strings[i];
		if (!s || !s->str)
			continue;
		ret = table_put(&f->strings, s->iid, s->str, strlen(s->str));
		if (ret < 0)
			return ret;
	}
	/* whole chains first, then node runs in order (SPEC.md 6) */
	for (size_t i = 0; i < id->n_callchains; i++) {
		const Perfrec__Callchain *c = id->callchains[i];
		if (!c)
			continue;
		ret = prec_cctab_add_chain(&f->chains, c->iid, c->ips, c->n_ips);
		if (ret < 0)
			return ret;
	}
	for (size_t i = 0; i < id->n_callchain_nodes; i++) {
		const Perfrec__CallchainNodes *r = id->callchain_nodes[i];
		if (!r)
			continue;
		ret = prec_cctab_add_run(&f->chains, r->iid, r->parent, r->addrs, r->n_addrs);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* A Sample in the callers form gets the iid of its whole callchain, so
 * consumers see plain callchains. Callers that are not defined stay as
 * they are: a reference to an undefined iid reads as unknown. */
static int sample_callers(struct prec_frame *f, Perfrec__Sample *s)
{
	int err = 0;
	uint64_t iid = prec_cctab_leaf(&f->chains, s->callchain, s->ip, s->misc & 7, &err);

	if (err)
		return err;
	if (iid)
		s->callchain = iid;
	s->callchain_callers = 0;
	return 0;
}

static void account(struct prec_frame *f)
{
	if (f->on_end && !f->accounted) {
		f->accounted = 1;
		f->on_end(f->on_end_ctx, f->packets, f->unknown);
	}
}

void prec_frame_set_kinds(struct prec_frame *f, uint64_t mask)
{
	if (f)
		f->kinds = mask;
}

/* Reads only what a filtered reader needs of Packet bytes: dt (field 1)
 * and the oneof field's number. 0 and *dt, *kind filled (kind 0: no oneof
 * field) when the packet is plain - each of dt and the oneof at most once,
 * with their proper wire types, and no other field. Anything else returns
 * -1 and the caller unpacks the packet in full, so how odd bytes decode
 * (repeated fields, unknown fields, wrong wire types) stays protobuf-c's
 * decision, exactly as in the unfiltered pass. */
/* get_varint() restricted to the canonical (shortest) encoding, so what
 * peek_kind() accepts is exactly what protobuf-c reads the same way. */
static inline __attribute__((always_inline)) int
get_cvarint(const unsigned char *p, size_t avail, uint64_t *v, size_t *used)
{
	if (get_varint(p, avail, v, used) < 0)
		return -1;
	if (*used > 1 && (p[*used - 1] == 0 || (*used == 10 && p[9] > 1)))
		return -1;
	return 0;
}

static int peek_kind(const unsigned char *p, size_t len, int64_t *dt, int *kind,
		     const unsigned char **body, size_t *blen)
{
	const unsigned char *end = p + len;
	uint64_t key, v, zz = 0;
	size_t n;
	int have_dt = 0;

	*kind = 0;
	*body = NULL;
	*blen = 0;
	/* the writer's shape first: [0x08 dt] key(one byte) len(one byte)
	 * body, the body running to the end */
	{
		const unsigned char *q = p;
		if (q < end && *q == 0x08 && get_cvarint(q + 1, (size_t)(end - q - 1), &zz, &n) == 0)
			q += 1 + n;
		if (end - q >= 2 && (q[0] & 7) == 2 && q[0] >> 3 >= PERFREC__PACKET__DATA_HEADER &&
		    q[0] < 0x80 && q[1] < 0x80 && (size_t)(end - q) == 2u + q[1]) {
			*kind = q[0] >> 3;
			*body = q + 2;
			*blen = q[1];
			*dt = (int64_t)(zz >> 1) ^ -(int64_t)(zz & 1);
			return 0;
		}
		zz = 0;
	}
	while (p < end) {
		if (get_cvarint(p, (size_t)(end - p), &key, &n) < 0)
			return -1;
		p += n;
		if (key == 0x08 && !have_dt) {
			if (get_cvarint(p, (size_t)(end - p), &zz, &n) < 0)
				return -1;
			p += n;
			have_dt = 1;
		} else if ((key & 7) == 2 && key >> 3 >= PERFREC__PACKET__DATA_HEADER &&
			   key >> 3 <= PERFREC__PACKET__DATA_SWITCH_BATCH && !*kind) {
			if (get_cvarint(p, (size_t)(end - p), &v, &n) < 0 ||
			    v > (uint64_t)(end - p) - n)
				return -1;
			*body = p + n;
			*blen = (size_t)v;
			p += n + (size_t)v;
			*kind = (int)(key >> 3);
		} else {
			return -1;
		}
	}
	*dt = (int64_t)(zz >> 1) ^ -(int64_t)(zz & 1);
	return 0;
}

/* A damaged packet ends the frame: what was returned so far still counts. */
static int frame_fail(struct prec_frame *f, int err)
{
	f->err = err;
	account(f);
	return err;
}

/* The mask bit a packet of this kind is returned under: a SwitchBatch
 * is returned as its rows, context switches. */
static inline uint64_t kind_bit(int kind)
{
	return kind == PERFREC__PACKET__DATA_SWITCH_BATCH ?
	       PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH) : PREC_KIND(kind);
}

/* One packet of the frame read, of this kind (a oneof field number). */
static inline void count_packet(struct prec_frame *f, unsigned kind)
{
	f->packets++;
	f->seen_kinds |= kind < 64 ? PREC_KIND(kind) : PREC_KINDS_ALL;
}

/* A batch read whole: its rows are returned next, one per call. */
static int take_batch(struct prec_frame *f, const Perfrec__SwitchBatch *m, int64_t dt)
{
	int ret;

	if (!m)
		return PREC_E_DECODE;
	ret = prec_swbatch_expand(m, dt, &f->arena, &f->rows, &f->nrows);
	f->row = 0;
	return ret;
}

static void put_packet(struct prec_frame *f, struct prec_packet *p, const Perfrec__Packet *pkt)
{
	p->pkt = pkt;
	p->time = f->time;
	p->stream = f->stream;
	p->frame = f;
	p->frame_offset = f->offset;
}

int prec_frame_next(struct prec_frame *f, struct prec_packet *p)
{
	if (!f || !p)
		return -EINVAL;
	if (f->err)
		return f->err;
	if (!f->loaded)
		return 0;
	while (f->row < f->nrows || f->pos < f->raw_len) {
		if (f->row < f->nrows) {
			const Perfrec__Packet *row = &f->rows[f->row++];
			f->time += (uint64_t)row->dt;
			put_packet(f, p, row);
			return 1;
		}
		const unsigned char *q = f->raw + f->pos;
		size_t avail = f->raw_len - f->pos, n;
		uint64_t len;
		Perfrec__Packet *pkt;

		if (q[0] != 0x0A) {
			int ret = skip_field(f);
			if (ret < 0)
				return frame_fail(f, ret);
			f->unknown++;
			continue;
		}
		if (get_varint(q + 1, avail - 1, &len, &n) < 0 || len > avail - 1 - n)
			return frame_fail(f, PREC_E_DECODE);
		/* A plain packet (the writer's) is read once: peek_kind() finds
		 * its dt and kind, and either skips it or hands its body to the
		 * fast decoder. Anything else goes the long way. */
		const unsigned char *body;
		size_t blen;
		int64_t dt;
		int kind;
		int plain = peek_kind(q + 1 + n, (size_t)len, &dt, &kind, &body, &blen) == 0;
		pkt = NULL;
		if (plain) {
			if (kind == 0 || (kind != PERFREC__PACKET__DATA_INTERNED &&
					  !(f->kinds & kind_bit(kind)))) {
				/* skipped unseen (a packet without kind is only
				 * counted anyway): its time and count remain */
				f->pos += 1 + n + (size_t)len;
				f->time += (uint64_t)dt;
				if (kind == 0)
					f->unknown++;
				else
					count_packet(f, (unsigned)kind);
				continue;
			}
			if (kind == PERFREC__PACKET__DATA_SWITCH_BATCH) {
				/* the writer's columns read by hand; odd bytes
				 * by one protobuf-c unpack a batch */
				int ret = prec_swbatch_decode(body, blen, dt, &f->arena,
							      &f->rows, &f->nrows);
				f->row = 0;
				if (ret > 0)
					ret = take_batch(f, perfrec__switch_batch__unpack(
							 &f->arena.pc, blen, body), dt);
				if (ret < 0)
					return frame_fail(f, ret);
				f->pos += 1 + n + (size_t)len;
				count_packet(f, (unsigned)kind);
				continue;
			}
			if (f->fast)
				pkt = prec_packet_fast_unpack_kind(kind, dt, body, blen, &f->arena);
		} else if (f->fast) {
			pkt = prec_packet_fast_unpack(q + 1 + n, (size_t)len, &f->arena);
		}
		if (!pkt) {
			pkt = (Perfrec__Packet *)protobuf_c_message_unpack(
				&perfrec__packet__descriptor, &f->arena.pc, (size_t)len, q + 1 + n);
			if (pkt && prec_packet_normalize(pkt, &f->arena) < 0)
				pkt = NULL;
		}
		if (!pkt)
			return frame_fail(f, PREC_E_DECODE);
		f->pos += 1 + n + (size_t)len;
		if (pkt->data_case == PERFREC__PACKET__DATA_SWITCH_BATCH) {
			/* odd bytes: the rows carry the batch's time */
			count_packet(f, (unsigned)pkt->data_case);
			if (f->kinds & kind_bit(pkt->data_case)) {
				int ret = take_batch(f, pkt->switch_batch, pkt->dt);
				if (ret < 0)
					return frame_fail(f, ret);
			} else {
				f->time += (uint64_t)pkt->dt;
			}
			continue;
		}
		f->time += (uint64_t)pkt->dt;
		if (pkt->data_case == PERFREC__PACKET__DATA__NOT_SET) {
			f->unknown++;   /* a kind from a newer writer */
			continue;
		}
		if (pkt->data_case == PERFREC__PACKET__DATA_INTERNED && pkt->interned) {
			int ret = apply_interned(f, pkt->interned);
			if (ret < 0)
				return frame_fail(f, ret);
		} else if (pkt->data_case == PERFREC__PACKET__DATA_SAMPLE && pkt->sample &&
			   pkt->sample->callchain_callers) {
			int ret = sample_callers(f, pkt->sample);
			if (ret < 0)
				return frame_fail(f, ret);
		}
		count_packet(f, (unsigned)pkt->data_case);
		if ((unsigned)pkt->data_case >= 64 ||
		    !(f->kinds & PREC_KIND(pkt->data_case)))
			continue;   /* filtered out after a full unpack (odd bytes) */
		put_packet(f, p, pkt);
		return 1;
	}
	account(f);
	return 0;
}

const char *prec_frame_string(const struct prec_frame *f, uint64_t iid)
{
	const struct prec_iid_slot *s = f ? table_get(&f->strings, iid) : NULL;

	return s ? s->p : NULL;
}

const uint64_t *prec_frame_callchain(const struct prec_frame *f, uint64_t iid,
				     size_t *n)
{
	size_t k = 0;
	/* the expansion is made and kept on the first lookup: the frame is
	 * const to its readers, its cache is not */
	const uint64_t *ips = f ? prec_cctab_get((struct prec_cctab *)&f->chains, iid, &k) : NULL;

	if (n)
		*n = k;
	return ips;
}

uint64_t prec_frame_unknown_packets(const struct prec_frame *f)
{
	return f ? f->unknown : 0;
}

uint64_t prec_frame_packets(const struct prec_frame *f)
{
	return f ? f->packets : 0;
}

uint64_t prec_frame_kinds(const struct prec_frame *f)
{
	return f ? f->seen_kinds : 0;
}
