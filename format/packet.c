/*
 * packet.c - fast encode/decode of Sample and InternedData packets (see
 * packet.h for why and for the fallback contract).
 *
 * Wire format reminder: a field is varint(number << 3 | wire type) then a
 * varint (type 0) or a varint length and that many bytes (type 2). Packet:
 * 1 dt sint64 (zigzag), 4 sample, 11 interned. Sample: 1 id, 2 cpu, 3 pid,
 * 4 tid, 5 ip, 6 period, 7 callchain, 8 raw (bytes), 9 read (message,
 * not handled), 10 addr, 11 misc, 12 stream_id. InternedData: 1 strings
 * (InternedString: 1 iid, 2 str), 2 callchains (Callchain: 1 iid,
 * 2 ips packed, 3 ips_delta packed sint64). The writer always uses
 * ips_delta; decoders turn either form into ips (prec_packet_normalize()).
 */
#include <string.h>

#include "format/packet.h"

int prec_packet_fast_ok(void)
{
	return perfrec__packet__descriptor.n_fields == 16 &&
	       perfrec__sample__descriptor.n_fields == 12 &&
	       perfrec__interned_data__descriptor.n_fields == 2 &&
	       perfrec__interned_string__descriptor.n_fields == 2 &&
	       perfrec__callchain__descriptor.n_fields == 3;
}

/* ---------------------------------------------------------------- encode */

static inline size_t vsize(uint64_t v)
{
	/* bits needed / 7, rounded up; v | 1 keeps clz defined for 0 */
	return (size_t)(((64 - __builtin_clzll(v | 1)) * 9 + 64) / 64);
}

static inline uint8_t *vput(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* a varint field with a one-byte key, omitted when zero (proto3) */
#define VF(v) ((v) ? 1 + vsize(v) : 0)

static size_t sample_body_size(const Perfrec__Sample *s)
{
	return VF(s->id) + VF(s->cpu) + VF(s->pid) + VF(s->tid) + VF(s->ip) +
	       VF(s->period) + VF(s->callchain) +
	       (s->raw.len ? 1 + vsize(s->raw.len) + s->raw.len : 0) +
	       VF(s->addr) + VF(s->misc) + VF(s->stream_id);
}

static int sample_fast(const Perfrec__Packet *pkt)
{
	const Perfrec__Sample *s = pkt->sample;

	return pkt->data_case == PERFREC__PACKET__DATA_SAMPLE && s &&
	       pkt->base.n_unknown_fields == 0 && s->base.n_unknown_fields == 0 &&
	       !s->read && (s->raw.len == 0 || s->raw.data);
}

size_t prec_packet_fast_size(const Perfrec__Packet *pkt)
{
	size_t body;

	if (!sample_fast(pkt))
		return 0;
	body = sample_body_size(pkt->sample);
	return (pkt->dt ? 1 + vsize(zigzag(pkt->dt)) : 0) + 1 + vsize(body) + body;
}

#define PUTV(key, v) do { if (v) { *p++ = (key); p = vput(p, (v)); } } while (0)

size_t prec_packet_fast_pack(const Perfrec__Packet *pkt, uint8_t *out)
{
	const Perfrec__Sample *s = pkt->sample;
	uint8_t *p = out;

	if (pkt->dt) {
		*p++ = 0x08;
		p = vput(p, zigzag(pkt->dt));
	}
	*p++ = 0x22;   /* field 4, length-delimited */
	p = vput(p, sample_body_size(s));
	PUTV(0x08, s->id);
	PUTV(0x10, s->cpu);
	PUTV(0x18, s->pid);
	PUTV(0x20, s->tid);
	PUTV(0x28, s->ip);
	PUTV(0x30, s->period);
	PUTV(0x38, s->callchain);
	if (s->raw.len) {
		*p++ = 0x42;
		p = vput(p, s->raw.len);
		memcpy(p, s->raw.data, s->raw.len);
		p += s->raw.len;
	}
	PUTV(0x50, s->addr);
	PUTV(0x58, s->misc);
	PUTV(0x60, s->stream_id);
	return (size_t)(p - out);
}

static size_t istr_size(const struct prec_interned_ref *r)
{
	return VF(r->iid) + (r->n ? 1 + vsize(r->n) + r->n : 0);
}

/* bytes of the packed zigzag deltas of the ips */
static size_t ips_size(const struct prec_interned_ref *r)
{
	const uint64_t *ips = r->data;
	uint64_t prev = 0;
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++) {
		n += vsize(zigzag((int64_t)(ips[i] - prev)));
		prev = ips[i];
	}
	return n;
}

static size_t chain_size(const struct prec_interned_ref *r, size_t ipsz)
{
	return VF(r->iid) + (r->n ? 1 + vsize(ipsz) + ipsz : 0);
}

/* Sizes every entry once (cached in ->enc: the entry's message bytes for
 * strings, the packed ips bytes for callchains) and returns the body. */
static size_t interned_body_size(struct prec_interned_ref *s, size_t ns,
				 struct prec_interned_ref *c, size_t nc)
{
	size_t n = 0;

	for (size_t i = 0; i < ns; i++) {
		size_t b = istr_size(&s[i]);
		s[i].enc = b;
		n += 1 + vsize(b) + b;
	}
	for (size_t i = 0; i < nc; i++) {
		c[i].enc = ips_size(&c[i]);
		size_t b = chain_size(&c[i], c[i].enc);
		n += 1 + vsize(b) + b;
	}
	return n;
}

static size_t cached_body_size(const struct prec_interned_ref *s, size_t ns,
			       const struct prec_interned_ref *c, size_t nc)
{
	size_t n = 0;

	for (size_t i = 0; i < ns; i++)
		n += 1 + vsize(s[i].enc) + s[i].enc;
	for (size_t i = 0; i < nc; i++) {
		size_t b = chain_size(&c[i], c[i].enc);
		n += 1 + vsize(b) + b;
	}
	return n;
}

size_t prec_interned_size(struct prec_interned_ref *s, size_t ns,
			  struct prec_interned_ref *c, size_t nc)
{
	size_t body = interned_body_size(s, ns, c, nc);

	return 1 + vsize(body) + body;
}

size_t prec_interned_pack(const struct prec_interned_ref *s, size_t ns,
			  const struct prec_interned_ref *c, size_t nc, uint8_t *out)
{
	uint8_t *p = out;

	*p++ = 0x5A;   /* field 11, length-delimited */
	p = vput(p, cached_body_size(s, ns, c, nc));
	for (size_t i = 0; i < ns; i++) {
		*p++ = 0x0A;
		p = vput(p, s[i].enc);
		PUTV(0x08, s[i].iid);
		if (s[i].n) {
			*p++ = 0x12;
			p = vput(p, s[i].n);
			memcpy(p, s[i].data, s[i].n);
			p += s[i].n;
		}
	}
	for (size_t i = 0; i < nc; i++) {
		const uint64_t *ips = c[i].data;
		*p++ = 0x12;
		p = vput(p, chain_size(&c[i], c[i].enc));
		PUTV(0x08, c[i].iid);
		if (c[i].n) {
			uint64_t prev = 0;
			*p++ = 0x1A;   /* field 3, ips_delta */
			p = vput(p, c[i].enc);
			for (size_t k = 0; k < c[i].n; k++) {
				p = vput(p, zigzag((int64_t)(ips[k] - prev)));
				prev = ips[k];
			}
		}
	}
	return (size_t)(p - out);
}

/* ---------------------------------------------------------------- decode */

/* Canonical varints only (at most 10 bytes, the 10th at most 1): anything
 * else is left to protobuf-c. Returns bytes used, 0 = give up. */
static inline size_t vget(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (end - p >= 10) {
		/* no bounds check per byte when a longest varint fits */
		for (i = 0; i < 10; i++) {
			uint8_t b = p[i];
			x |= (uint64_t)(b & 0x7F) << (7 * i);
			if (!(b & 0x80)) {
				if (i == 9 && b > 1)
					return 0;
				*v = x;
				return i + 1;
			}
		}
		return 0;
	}

	for (i = 0; i < 10 && p + i < end; i++) {
		uint8_t b = p[i];
		x |= (uint64_t)(b & 0x7F) << (7 * i);
		if (!(b & 0x80)) {
			if (i == 9 && b > 1)
				return 0;
			*v = x;
			return i + 1;
		}
	}
	return 0;
}

static int sample_unpack(const uint8_t *p, const uint8_t *end, Perfrec__Sample *s)
{
	while (p < end) {
		uint64_t key, v;
		size_t n = vget(p, end, &key);
		if (!n)
			return -1;
		p += n;
		if ((key & 7) == 2 && key >> 3 == 8) {
			n = vget(p, end, &v);
			if (!n || v > (uint64_t)(end - p - (ptrdiff_t)n))
				return -1;
			s->raw.len = (size_t)v;
			s->raw.data = (uint8_t *)(uintptr_t)(p + n);
			p += n + v;
			continue;
		}
		if ((key & 7) != 0)
			return -1;
		n = vget(p, end, &v);
		if (!n)
			return -1;
		p += n;
		switch (key >> 3) {
		case 1: s->id = v; break;
		case 2: s->cpu = (uint32_t)v; break;
		case 3: s->pid = (uint32_t)v; break;
		case 4: s->tid = (uint32_t)v; break;
		case 5: s->ip = v; break;
		case 6: s->period = v; break;
		case 7: s->callchain = v; break;
		case 10: s->addr = v; break;
		case 11: s->misc = (uint32_t)v; break;
		case 12: s->stream_id = v; break;
		default: return -1;
		}
	}
	return 0;
}

/* Counts the entries of InternedData bytes (outer level only). */
static int interned_count(const uint8_t *p, const uint8_t *end, size_t *ns, size_t *nc)
{
	*ns = *nc = 0;
	while (p < end) {
		uint64_t key, len;
		size_t n = vget(p, end, &key);
		if (!n || (key != 0x0A && key != 0x12))
			return -1;
		p += n;
		n = vget(p, end, &len);
		if (!n || len > (uint64_t)(end - p - (ptrdiff_t)n))
			return -1;
		p += n + len;
		if (key == 0x0A)
			(*ns)++;
		else
			(*nc)++;
	}
	return 0;
}

/* Packed varints (plain ips, or zigzag deltas when `delta`) into an array
 * allocated at its upper bound (one ip per byte) and shrunk to the real
 * count. */
static int unpack_ips(const uint8_t *q, size_t dlen, int delta,
		      struct prec_arena *a, Perfrec__Callchain *c)
{
	const uint8_t *qe;
	uint64_t *ips;
	size_t cnt = 0;

	if (!dlen)
		return 0;   /* q may be NULL: no ips field at all */
	qe = q + dlen;
	ips = prec_arena_alloc(a, dlen * sizeof(*ips));
	if (!ips)
		return -1;
	while (q < qe) {
		/* one-byte varints are common enough for a short cut */
		if (!(q[0] & 0x80)) {
			ips[cnt++] = q[0];
			q++;
			continue;
		}
		size_t n = vget(q, qe, &ips[cnt]);
		if (!n)
			return -1;
		cnt++;
		q += n;
	}
	prec_arena_shrink_last(a, ips, cnt * sizeof(*ips));
	if (delta) {
		uint64_t prev = 0;
		for (size_t i = 0; i < cnt; i++) {
			uint64_t z = ips[i];
			prev += (uint64_t)((int64_t)(z >> 1) ^ -(int64_t)(z & 1));
			ips[i] = prev;
		}
	}
	c->n_ips = cnt;
	c->ips = ips;
	return 0;
}

/* Fills id (arrays sized by interned_count()) from InternedData bytes. */
static int interned_unpack(const uint8_t *p, const uint8_t *end,
			   Perfrec__InternedData *id, struct prec_arena *a)
{
	while (p < end) {
		uint64_t key, len;
		size_t n = vget(p, end, &key);
		if (!n)
			return -1;
		p += n;
		n = vget(p, end, &len);
		if (!n)
			return -1;
		p += n;
		const uint8_t *q = p, *qe = p + len;
		p = qe;
		uint64_t iid = 0;
		const uint8_t *data = NULL;
		size_t dlen = 0;
		int have_data = 0, delta = 0;
		while (q < qe) {
			uint64_t k2, v;
			n = vget(q, qe, &k2);
			if (!n)
				return -1;
			q += n;
			n = vget(q, qe, &v);
			if (!n)
				return -1;
			q += n;
			if (k2 == 0x08) {
				iid = v;
			} else if ((k2 == 0x12 || (k2 == 0x1A && key == 0x12)) &&
				   !have_data && v <= (uint64_t)(qe - q)) {
				data = q;
				dlen = (size_t)v;
				have_data = 1;
				delta = k2 == 0x1A;
				q += v;
			} else {
				return -1;   /* unknown, unpacked or repeated: protobuf-c */
			}
		}
		if (key == 0x0A) {
			Perfrec__InternedString *s;
			char *str;
			if (dlen && memchr(data, 0, dlen))
				return -1;   /* embedded NUL: protobuf-c's call */
			s = prec_arena_alloc(a, sizeof(*s));
			str = prec_arena_alloc(a, dlen + 1);
			if (!s || !str)
				return -1;
			perfrec__interned_string__init(s);
			s->iid = iid;
			if (dlen)
				memcpy(str, data, dlen);
			str[dlen] = '\0';
			s->str = str;
			id->strings[id->n_strings++] = s;
		} else {
			Perfrec__Callchain *c = prec_arena_alloc(a, sizeof(*c));
			if (!c)
				return -1;
			perfrec__callchain__init(c);
			c->iid = iid;
			if (unpack_ips(data, dlen, delta, a, c) < 0)
				return -1;
			id->callchains[id->n_callchains++] = c;
		}
	}
	return 0;
}

Perfrec__Packet *prec_packet_fast_unpack(const uint8_t *buf, size_t len,
					 struct prec_arena *arena)
{
	const uint8_t *p = buf, *end = buf + len;
	const uint8_t *body = NULL;
	size_t blen = 0;
	uint64_t dt = 0, key, v;
	int kind = 0;

	while (p < end) {
		size_t n = vget(p, end, &key);
		if (!n)
			return NULL;
		p += n;
		if (key == 0x08) {
			n = vget(p, end, &v);
			if (!n)
				return NULL;
			dt = v;
			p += n;
		} else if ((key == 0x22 || key == 0x5A) && !kind) {
			n = vget(p, end, &v);
			if (!n || v > (uint64_t)(end - p - (ptrdiff_t)n))
				return NULL;
			kind = (int)(key >> 3);
			body = p + n;
			blen = (size_t)v;
			p += n + v;
		} else {
			return NULL;
		}
	}
	if (!kind)
		return NULL;

	Perfrec__Packet *pkt = prec_arena_alloc(arena, sizeof(*pkt));
	if (!pkt)
		return NULL;
	perfrec__packet__init(pkt);
	pkt->dt = (int64_t)(dt >> 1) ^ -(int64_t)(dt & 1);
	if (kind == 4) {
		Perfrec__Sample *s = prec_arena_alloc(arena, sizeof(*s));
		if (!s)
			return NULL;
		perfrec__sample__init(s);
		if (sample_unpack(body, body + blen, s) < 0)
			return NULL;
		pkt->data_case = PERFREC__PACKET__DATA_SAMPLE;
		pkt->sample = s;
		return pkt;
	}
	size_t ns, nc;
	Perfrec__InternedData *id = prec_arena_alloc(arena, sizeof(*id));
	if (!id || interned_count(body, body + blen, &ns, &nc) < 0)
		return NULL;
	perfrec__interned_data__init(id);
	id->strings = ns ? prec_arena_alloc(arena, ns * sizeof(*id->strings)) : NULL;
	id->callchains = nc ? prec_arena_alloc(arena, nc * sizeof(*id->callchains)) : NULL;
	if ((ns && !id->strings) || (nc && !id->callchains))
		return NULL;
	if (interned_unpack(body, body + blen, id, arena) < 0)
		return NULL;
	pkt->data_case = PERFREC__PACKET__DATA_INTERNED;
	pkt->interned = id;
	return pkt;
}

int prec_packet_normalize(Perfrec__Packet *pkt, struct prec_arena *a)
{
	Perfrec__InternedData *id;

	if (pkt->data_case != PERFREC__PACKET__DATA_INTERNED || !pkt->interned)
		return 0;
	id = pkt->interned;
	for (size_t i = 0; i < id->n_callchains; i++) {
		Perfrec__Callchain *c = id->callchains[i];
		uint64_t *ips, prev = 0;
		if (!c || c->n_ips_delta == 0)
			continue;
		if (c->n_ips_delta > SIZE_MAX / sizeof(*ips))
			return -1;
		ips = prec_arena_alloc(a, c->n_ips_delta * sizeof(*ips));
		if (!ips)
			return -1;
		for (size_t k = 0; k < c->n_ips_delta; k++) {
			prev += (uint64_t)c->ips_delta[k];
			ips[k] = prev;
		}
		c->ips = ips;
		c->n_ips = c->n_ips_delta;
		c->ips_delta = NULL;
		c->n_ips_delta = 0;
	}
	return 0;
}
