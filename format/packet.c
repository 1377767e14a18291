/*
 * packet.c - fast encode/decode of the hot packet kinds (see packet.h for
 * why and for the fallback contract).
 *
 * Wire format reminder: a field is varint(number << 3 | wire type) then a
 * varint (type 0) or a varint length and that many bytes (type 2). Keys
 * below are written as that byte (0x22 = field 4, type 2); fields from 16
 * on take two key bytes (0x82 0x01 = field 16, type 2). Packet: 1 dt
 * sint64 (zigzag), 4-11 the fast kinds (4 sample, 5 context_switch, 6 task,
 * 7 mmap, 8 loss, 9 throttle, 10 group, 11 interned); field numbers of
 * each message as in proto/perfrec.proto.
 *
 * protobuf-c conventions the encoders reproduce (proto3): a zero scalar,
 * an empty or NULL string, empty bytes and an empty repeated field are
 * omitted; a non-NULL submessage is written even when empty; fields go in
 * number order; int32 and enum values are sign-extended to 64 bits (a
 * negative one takes 10 bytes); a bool is written as 1. The decoders read
 * uint32/int32/enum varints by their low 32 bits and any non-zero bool
 * varint as 1, as protobuf-c does.
 *
 * InternedData: 1 strings (InternedString: 1 iid, 2 str), 2 callchains
 * (Callchain: 1 iid, 2 ips packed, 3 ips_delta packed sint64), 3
 * callchain_nodes (CallchainNodes: 1 iid, 2 parent, 3 addrs packed). The
 * writer writes callchains as nodes (1.1); decoders turn either form of
 * a Callchain into ips (prec_packet_normalize()) and leave node runs as
 * they are (frame.c's callchain table reads them).
 */
#include <stddef.h>
#include <string.h>

#include "format/varint.h"
#include "format/packet.h"

int prec_packet_fast_ok(void)
{
	return perfrec__packet__descriptor.n_fields == 20 &&
	       perfrec__sample__descriptor.n_fields == 19 &&
	       perfrec__group_read__descriptor.n_fields == 5 &&
	       perfrec__context_switch__descriptor.n_fields == 9 &&
	       perfrec__task_event__descriptor.n_fields == 8 &&
	       perfrec__mmap__descriptor.n_fields == 16 &&
	       perfrec__loss__descriptor.n_fields == 5 &&
	       perfrec__throttle__descriptor.n_fields == 4 &&
	       perfrec__group_snapshot__descriptor.n_fields == 5 &&
	       perfrec__interned_data__descriptor.n_fields == 3 &&
	       perfrec__interned_string__descriptor.n_fields == 2 &&
	       perfrec__callchain__descriptor.n_fields == 3 &&
	       perfrec__callchain_nodes__descriptor.n_fields == 3;
}

/* ---------------------------------------------------------------- encode */

#define vsize prec_varint_size
#define vput prec_varint_put

#define zigzag prec_zigzag

/* a varint field with a one-byte key, omitted when zero (proto3) */
#define VF(v) ((v) ? 1 + vsize(v) : 0)

/* an int32 or enum field: negative values take 10 bytes, sign-extended.
 * Through int32_t: the compiler may give an enum an unsigned type. */
#define SX(v) ((uint64_t)(int64_t)(int32_t)(v))
#define IF(v) ((v) ? 1 + vsize(SX(v)) : 0)
/* a bool field: protobuf-c writes any non-zero value as 1 */
#define BF(v) ((v) ? 2 : 0)

static int packed_ok(size_t n, const uint64_t *v)
{
	return n == 0 || v;
}

/* bytes of the varints of v[0..n) */
static size_t packed_size(size_t n, const uint64_t *v)
{
	size_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += vsize(v[i]);
	return s;
}

/* a packed repeated field with a one-byte key, omitted when empty */
static size_t packed_field_size(size_t n, const uint64_t *v)
{
	size_t b;

	if (!n)
		return 0;
	b = packed_size(n, v);
	return 1 + vsize(b) + b;
}

static int read_fast(const Perfrec__GroupRead *r)
{
	return r->base.n_unknown_fields == 0 && packed_ok(r->n_ids, r->ids) &&
	       packed_ok(r->n_values, r->values) && packed_ok(r->n_lost, r->lost);
}

static size_t read_body_size(const Perfrec__GroupRead *r)
{
	return VF(r->time_enabled) + VF(r->time_running) +
	       packed_field_size(r->n_ids, r->ids) +
	       packed_field_size(r->n_values, r->values) +
	       packed_field_size(r->n_lost, r->lost);
}

static size_t sample_body_size(const Perfrec__Sample *s)
{
	size_t rd = s->read ? read_body_size(s->read) : 0;

	return VF(s->id) + VF(s->cpu) + VF(s->pid) + VF(s->tid) + VF(s->ip) +
	       VF(s->period) + VF(s->callchain) +
	       (s->raw.len ? 1 + vsize(s->raw.len) + s->raw.len : 0) +
	       (s->read ? 1 + vsize(rd) + rd : 0) +
	       VF(s->addr) + VF(s->misc) + VF(s->stream_id) +
	       VF(s->regs_abi) + VF(s->regs_mask) + packed_field_size(s->n_regs, s->regs) +
	       /* fields 16-19: two-byte keys */
	       (s->stack.len ? 2 + vsize(s->stack.len) + s->stack.len : 0) +
	       (s->stack_dyn_size ? 2 + vsize(s->stack_dyn_size) : 0) +
	       (s->callchain_callers ? 3 : 0) +
	       (s->callchain_cut ? 2 + vsize(s->callchain_cut) : 0);
}

/* Fields a Sample has only with --call-graph dwarf (user registers and
 * stack): those make it unbounded in size. */
static int sample_has_user_regs(const Perfrec__Sample *s)
{
	return s->regs_abi || s->regs_mask || s->n_regs || s->stack.len || s->stack_dyn_size;
}

static size_t switch_body_size(const Perfrec__ContextSwitch *c)
{
	return VF(c->id) + VF(c->cpu) + VF(c->pid) + VF(c->tid) + BF(c->out) +
	       BF(c->preempt) + BF(c->cpu_wide) + VF(c->other_pid) + VF(c->other_tid);
}

static size_t task_body_size(const Perfrec__TaskEvent *t)
{
	return IF(t->kind) + VF(t->pid) + VF(t->tid) + VF(t->ppid) + VF(t->ptid) +
	       VF(t->comm) + BF(t->exec) + VF(t->cpu);
}

static size_t mmap_body_size(const Perfrec__Mmap *m)
{
	return VF(m->pid) + VF(m->tid) + VF(m->start) + VF(m->len) + VF(m->pgoff) +
	       VF(m->maj) + VF(m->min) + VF(m->ino) + VF(m->ino_generation) +
	       VF(m->prot) + VF(m->flags) + VF(m->filename) +
	       (m->build_id.len ? 1 + vsize(m->build_id.len) + m->build_id.len : 0) +
	       BF(m->synthesized) + VF(m->misc) +
	       (m->cpu ? 2 + vsize(m->cpu) : 0);   /* field 16: two-byte key */
}

/* proto3 strings: protobuf-c omits NULL and "" alike */
static size_t loss_body_size(const Perfrec__Loss *l, size_t rlen)
{
	return IF(l->kind) + VF(l->id) + VF(l->cpu) + VF(l->count) +
	       (rlen ? 1 + vsize(rlen) + rlen : 0);
}

static size_t throttle_body_size(const Perfrec__Throttle *t)
{
	return BF(t->throttled) + VF(t->id) + VF(t->cpu) + VF(t->stream_id);
}

static size_t group_body_size(const Perfrec__GroupSnapshot *g)
{
	size_t rd = g->read ? read_body_size(g->read) : 0;

	return VF(g->group) + IF(g->cpu) + IF(g->pid) +
	       (g->read ? 1 + vsize(rd) + rd : 0) + BF(g->final);
}

/* The submessage of pkt when the fast encoder handles pkt, else NULL:
 * one of the kinds above, no unknown fields anywhere, no NULL array with
 * a count (protobuf-c would crash on those; let it be protobuf-c's call). */
static const ProtobufCMessage *fast_sub(const Perfrec__Packet *pkt)
{
	const ProtobufCMessage *m;

	if (pkt->base.n_unknown_fields)
		return NULL;
	switch (pkt->data_case) {
	case PERFREC__PACKET__DATA_SAMPLE: {
		const Perfrec__Sample *s = pkt->sample;
		if (!s || (s->raw.len && !s->raw.data) || (s->read && !read_fast(s->read)) ||
		    !packed_ok(s->n_regs, s->regs) || (s->stack.len && !s->stack.data))
			return NULL;
		m = &s->base;
		break;
	}
	case PERFREC__PACKET__DATA_CONTEXT_SWITCH:
		m = pkt->context_switch ? &pkt->context_switch->base : NULL;
		break;
	case PERFREC__PACKET__DATA_TASK:
		m = pkt->task ? &pkt->task->base : NULL;
		break;
	case PERFREC__PACKET__DATA_MMAP:
		if (!pkt->mmap || (pkt->mmap->build_id.len && !pkt->mmap->build_id.data))
			return NULL;
		m = &pkt->mmap->base;
		break;
	case PERFREC__PACKET__DATA_LOSS:
		m = pkt->loss ? &pkt->loss->base : NULL;
		break;
	case PERFREC__PACKET__DATA_THROTTLE:
		m = pkt->throttle ? &pkt->throttle->base : NULL;
		break;
	case PERFREC__PACKET__DATA_GROUP:
		if (!pkt->group || (pkt->group->read && !read_fast(pkt->group->read)))
			return NULL;
		m = &pkt->group->base;
		break;
	default:
		return NULL;
	}
	return m && m->n_unknown_fields == 0 ? m : NULL;
}

static size_t body_size(const Perfrec__Packet *pkt)
{
	switch (pkt->data_case) {
	case PERFREC__PACKET__DATA_SAMPLE:
		return sample_body_size(pkt->sample);
	case PERFREC__PACKET__DATA_CONTEXT_SWITCH:
		return switch_body_size(pkt->context_switch);
	case PERFREC__PACKET__DATA_TASK:
		return task_body_size(pkt->task);
	case PERFREC__PACKET__DATA_MMAP:
		return mmap_body_size(pkt->mmap);
	case PERFREC__PACKET__DATA_LOSS:
		return loss_body_size(pkt->loss,
				      pkt->loss->reason ? strlen(pkt->loss->reason) : 0);
	case PERFREC__PACKET__DATA_THROTTLE:
		return throttle_body_size(pkt->throttle);
	case PERFREC__PACKET__DATA_GROUP:
		return group_body_size(pkt->group);
	default:
		return 0;   /* not reached: fast_sub() said no */
	}
}

size_t prec_packet_fast_measure(const Perfrec__Packet *pkt, size_t *body)
{
	if (!fast_sub(pkt))
		return 0;
	*body = body_size(pkt);
	return (pkt->dt ? 1 + vsize(zigzag(pkt->dt)) : 0) + 1 + vsize(*body) + *body;
}

size_t prec_packet_fast_size(const Perfrec__Packet *pkt)
{
	size_t body;

	return prec_packet_fast_measure(pkt, &body);
}

#define PUTV(key, v) do { if (v) { *p++ = (key); p = vput(p, (v)); } } while (0)
#define PUTI(key, v) do { if (v) { *p++ = (key); p = vput(p, SX(v)); } } while (0)
#define PUTB(key, v) do { if (v) { *p++ = (key); *p++ = 1; } } while (0)

static uint8_t *put_bytes(uint8_t *p, uint8_t key, const void *d, size_t n)
{
	if (n) {
		*p++ = key;
		p = vput(p, n);
		memcpy(p, d, n);
		p += n;
	}
	return p;
}

static uint8_t *put_packed(uint8_t *p, uint8_t key, size_t n, const uint64_t *v)
{
	if (n) {
		*p++ = key;
		p = vput(p, packed_size(n, v));
		for (size_t i = 0; i < n; i++)
			p = vput(p, v[i]);
	}
	return p;
}

static uint8_t *put_read(uint8_t *p, uint8_t key, const Perfrec__GroupRead *r)
{
	if (!r)
		return p;
	*p++ = key;
	p = vput(p, read_body_size(r));
	PUTV(0x08, r->time_enabled);
	PUTV(0x10, r->time_running);
	p = put_packed(p, 0x1A, r->n_ids, r->ids);
	p = put_packed(p, 0x22, r->n_values, r->values);
	return put_packed(p, 0x2A, r->n_lost, r->lost);
}

static uint8_t *pack_body(const Perfrec__Packet *pkt, uint8_t *p)
{
	switch (pkt->data_case) {
	case PERFREC__PACKET__DATA_SAMPLE: {
		const Perfrec__Sample *s = pkt->sample;
		PUTV(0x08, s->id);
		PUTV(0x10, s->cpu);
		PUTV(0x18, s->pid);
		PUTV(0x20, s->tid);
		PUTV(0x28, s->ip);
		PUTV(0x30, s->period);
		PUTV(0x38, s->callchain);
		p = put_bytes(p, 0x42, s->raw.data, s->raw.len);
		p = put_read(p, 0x4A, s->read);
		PUTV(0x50, s->addr);
		PUTV(0x58, s->misc);
		PUTV(0x60, s->stream_id);
		PUTV(0x68, s->regs_abi);
		PUTV(0x70, s->regs_mask);
		p = put_packed(p, 0x7A, s->n_regs, s->regs);
		if (s->stack.len) {
			*p++ = 0x82;   /* field 16, length-delimited */
			*p++ = 0x01;
			p = vput(p, s->stack.len);
			memcpy(p, s->stack.data, s->stack.len);
			p += s->stack.len;
		}
		if (s->stack_dyn_size) {
			*p++ = 0x88;   /* field 17, varint */
			*p++ = 0x01;
			p = vput(p, s->stack_dyn_size);
		}
		if (s->callchain_callers) {
			*p++ = 0x90;   /* field 18, varint */
			*p++ = 0x01;
			*p++ = 1;
		}
		if (s->callchain_cut) {
			*p++ = 0x98;   /* field 19, varint */
			*p++ = 0x01;
			p = vput(p, s->callchain_cut);
		}
		break;
	}
	case PERFREC__PACKET__DATA_CONTEXT_SWITCH: {
		const Perfrec__ContextSwitch *c = pkt->context_switch;
		PUTV(0x08, c->id);
		PUTV(0x10, c->cpu);
		PUTV(0x18, c->pid);
		PUTV(0x20, c->tid);
		PUTB(0x28, c->out);
		PUTB(0x30, c->preempt);
		PUTB(0x38, c->cpu_wide);
		PUTV(0x40, c->other_pid);
		PUTV(0x48, c->other_tid);
		break;
	}
	case PERFREC__PACKET__DATA_TASK: {
		const Perfrec__TaskEvent *t = pkt->task;
		PUTI(0x08, t->kind);
		PUTV(0x10, t->pid);
		PUTV(0x18, t->tid);
		PUTV(0x20, t->ppid);
		PUTV(0x28, t->ptid);
		PUTV(0x30, t->comm);
		PUTB(0x38, t->exec);
		PUTV(0x40, t->cpu);
		break;
	}
	case PERFREC__PACKET__DATA_MMAP: {
		const Perfrec__Mmap *m = pkt->mmap;
		PUTV(0x08, m->pid);
		PUTV(0x10, m->tid);
		PUTV(0x18, m->start);
		PUTV(0x20, m->len);
		PUTV(0x28, m->pgoff);
		PUTV(0x30, m->maj);
		PUTV(0x38, m->min);
		PUTV(0x40, m->ino);
		PUTV(0x48, m->ino_generation);
		PUTV(0x50, m->prot);
		PUTV(0x58, m->flags);
		PUTV(0x60, m->filename);
		p = put_bytes(p, 0x6A, m->build_id.data, m->build_id.len);
		PUTB(0x70, m->synthesized);
		PUTV(0x78, m->misc);
		if (m->cpu) {
			*p++ = 0x80;
			*p++ = 0x01;
			p = vput(p, m->cpu);
		}
		break;
	}
	case PERFREC__PACKET__DATA_LOSS: {
		const Perfrec__Loss *l = pkt->loss;
		PUTI(0x08, l->kind);
		PUTV(0x10, l->id);
		PUTV(0x18, l->cpu);
		PUTV(0x20, l->count);
		if (l->reason)
			p = put_bytes(p, 0x2A, l->reason, strlen(l->reason));
		break;
	}
	case PERFREC__PACKET__DATA_THROTTLE: {
		const Perfrec__Throttle *t = pkt->throttle;
		PUTB(0x08, t->throttled);
		PUTV(0x10, t->id);
		PUTV(0x18, t->cpu);
		PUTV(0x20, t->stream_id);
		break;
	}
	case PERFREC__PACKET__DATA_GROUP: {
		const Perfrec__GroupSnapshot *g = pkt->group;
		PUTV(0x08, g->group);
		PUTI(0x10, g->cpu);
		PUTI(0x18, g->pid);
		p = put_read(p, 0x22, g->read);
		PUTB(0x28, g->final);
		break;
	}
	default:
		break;
	}
	return p;
}

size_t prec_packet_fast_pack_body(const Perfrec__Packet *pkt, size_t body,
				  uint8_t *out)
{
	uint8_t *p = out;

	if (pkt->dt) {
		*p++ = 0x08;
		p = vput(p, zigzag(pkt->dt));
	}
	/* every fast kind's field number is < 16: a one-byte key, type 2 */
	*p++ = (uint8_t)(pkt->data_case << 3 | 2);
	p = vput(p, body);
	p = pack_body(pkt, p);
	return (size_t)(p - out);
}

size_t prec_packet_fast_pack_small(const Perfrec__Packet *pkt, uint8_t *out)
{
	uint8_t *p = out + 2, *blen;

	switch (pkt->data_case) {
	case PERFREC__PACKET__DATA_SAMPLE:
		/* bounded only without raw bytes, read values, user regs
		 * and stack */
		if (!pkt->sample || pkt->sample->raw.len || pkt->sample->read ||
		    sample_has_user_regs(pkt->sample))
			return 0;
		break;
	case PERFREC__PACKET__DATA_CONTEXT_SWITCH:
	case PERFREC__PACKET__DATA_TASK:
	case PERFREC__PACKET__DATA_THROTTLE:
		break;
	default:
		return 0;
	}
	if (!fast_sub(pkt))
		return 0;
	/* Worst cases: a Sample body of 94 bytes (5 uint64 and 3 more of 11,
	 * 4 uint32 of 6, a bool of 3), dt 11, key and length 2: at most 107
	 * bytes, so both lengths are one-byte varints and can be filled in
	 * afterwards. */
	if (pkt->dt) {
		*p++ = 0x08;
		p = vput(p, zigzag(pkt->dt));
	}
	*p++ = (uint8_t)(pkt->data_case << 3 | 2);
	blen = p++;
	p = pack_body(pkt, p);
	*blen = (uint8_t)(p - blen - 1);
	out[0] = 0x0A;
	out[1] = (uint8_t)(p - out - 2);
	return (size_t)(p - out);
}

size_t prec_packet_fast_pack(const Perfrec__Packet *pkt, uint8_t *out)
{
	return prec_packet_fast_pack_body(pkt, body_size(pkt), out);
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

/* CallchainNodes bytes, given the packed addrs bytes */
static size_t run_size(const struct prec_interned_run *r, size_t vsz)
{
	return VF(r->iid) + VF(r->parent) + (r->n ? 1 + vsize(vsz) + vsz : 0);
}

/* Sizes every entry once (cached in ->enc: the entry's message bytes for
 * strings, the packed ips or addrs bytes for callchains and runs) and
 * returns the body. */
static size_t interned_body_size(struct prec_interned_ref *s, size_t ns,
				 struct prec_interned_ref *c, size_t nc,
				 struct prec_interned_run *r, size_t nr)
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
	for (size_t i = 0; i < nr; i++) {
		r[i].enc = packed_size(r[i].n, r[i].vals);
		size_t b = run_size(&r[i], r[i].enc);
		n += 1 + vsize(b) + b;
	}
	return n;
}

static size_t cached_body_size(const struct prec_interned_ref *s, size_t ns,
			       const struct prec_interned_ref *c, size_t nc,
			       const struct prec_interned_run *r, size_t nr)
{
	size_t n = 0;

	for (size_t i = 0; i < ns; i++)
		n += 1 + vsize(s[i].enc) + s[i].enc;
	for (size_t i = 0; i < nc; i++) {
		size_t b = chain_size(&c[i], c[i].enc);
		n += 1 + vsize(b) + b;
	}
	for (size_t i = 0; i < nr; i++) {
		size_t b = run_size(&r[i], r[i].enc);
		n += 1 + vsize(b) + b;
	}
	return n;
}

size_t prec_interned_size(struct prec_interned_ref *s, size_t ns,
			  struct prec_interned_ref *c, size_t nc,
			  struct prec_interned_run *r, size_t nr)
{
	size_t body = interned_body_size(s, ns, c, nc, r, nr);

	return 1 + vsize(body) + body;
}

size_t prec_interned_pack(const struct prec_interned_ref *s, size_t ns,
			  const struct prec_interned_ref *c, size_t nc,
			  const struct prec_interned_run *r, size_t nr, uint8_t *out)
{
	uint8_t *p = out;

	*p++ = 0x5A;   /* field 11, length-delimited */
	p = vput(p, cached_body_size(s, ns, c, nc, r, nr));
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
	for (size_t i = 0; i < nr; i++) {
		*p++ = 0x1A;   /* field 3, callchain_nodes */
		p = vput(p, run_size(&r[i], r[i].enc));
		PUTV(0x08, r[i].iid);
		PUTV(0x10, r[i].parent);
		if (r[i].n) {
			*p++ = 0x1A;   /* field 3, addrs */
			p = vput(p, r[i].enc);
			for (size_t k = 0; k < r[i].n; k++)
				p = vput(p, r[i].vals[k]);
		}
	}
	return (size_t)(p - out);
}

/* ---------------------------------------------------------------- decode */

/* Canonical varints only (at most 10 bytes, the 10th at most 1): anything
 * else is left to protobuf-c. Returns bytes used, 0 = give up. */
static inline __attribute__((always_inline)) size_t
vget(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (p < end && p[0] < 0x80) {
		*v = p[0];   /* most keys and values: one byte */
		return 1;
	}
	if (end - p >= 2 && p[1] < 0x80) {
		*v = (p[0] & 0x7Fu) | (uint64_t)p[1] << 7;   /* pids, tids */
		return 2;
	}
	if (end - p >= 10) {
		/* no bounds check per byte when a longest varint fits, and
		 * unrolled: p[0] and p[1] have their continuation bits */
		uint64_t b;
		x = (p[0] & 0x7Fu) | (uint64_t)(p[1] & 0x7F) << 7;
#define VSTEP(k) \
		b = p[k]; \
		x |= (b & 0x7F) << (7 * k); \
		if (b < 0x80) { \
			*v = x; \
			return k + 1; \
		}
		VSTEP(2) VSTEP(3) VSTEP(4) VSTEP(5) VSTEP(6) VSTEP(7) VSTEP(8)
#undef VSTEP
		b = p[9];
		if (b > 1)
			return 0;   /* continues, or more than 64 bits */
		*v = x | b << 63;
		return 10;
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

/* Reads one field at *pp: its key and, for wire type 0, the value in *v;
 * for wire type 2 the length in *v and the bytes at *d. 0 = give up
 * (another wire type, a bad varint, a length past end). */
static inline __attribute__((always_inline)) int
next_field(const uint8_t **pp, const uint8_t *end, uint64_t *key, uint64_t *v,
	   const uint8_t **d)
{
	const uint8_t *p = *pp;
	size_t n;

	if (end - p >= 2 && !((p[0] | p[1]) & 0x80)) {
		/* one-byte key and one-byte value (or length): the common case */
		*key = p[0];
		*v = p[1];
		p += 2;
		if ((*key & 7) == 0) {
			*pp = p;
			return 1;
		}
		goto tail;
	}
	n = vget(p, end, key);
	if (!n)
		return 0;
	p += n;
	n = vget(p, end, v);
	if (!n)
		return 0;
	p += n;
tail:
	if ((*key & 7) == 2) {
		if (*v > (uint64_t)(end - p))
			return 0;
		*d = p;
		p += *v;
	} else if ((*key & 7) != 0) {
		return 0;
	}
	*pp = p;
	return 1;
}

/* Reads the varint field `key` at *pp when it is there (one-byte key):
 * 1 and *v set, 0 when another field comes next, -1 on a bad varint. For
 * the decoders' first pass over fields in the writer's order, which is
 * all of them in practice: straight-line tests instead of a loop around
 * a jump table. Whatever does not come in that order is then left to the
 * general loop, from where the first pass stopped (equivalent: every
 * field it took would have been taken the same way). */
static inline __attribute__((always_inline)) int
take(const uint8_t **pp, const uint8_t *end, uint8_t key, uint64_t *v)
{
	const uint8_t *p = *pp;
	size_t n;

	if (p >= end || *p != key)
		return 0;
	n = vget(p + 1, end, v);
	if (!n)
		return -1;
	*pp = p + 1 + n;
	return 1;
}

#define TAKE(key, stmt) do { \
		int t_ = take(&p, end, (key), &v); \
		if (t_ < 0) \
			return -1; \
		if (t_) \
			stmt; \
	} while (0)

/* TAKE for fields whose values are nearly always one or two varint bytes
 * (a ContextSwitch's cpu, pids and bools): those are read in place, with
 * one bounds test; anything longer, shorter or absent goes through take(),
 * so the result is the same. */
#define TAKE_SMALL(key, stmt) do { \
		if (end - p >= 3 && p[0] == (key) && !((p[1] & p[2]) & 0x80)) { \
			if (p[1] < 0x80) { \
				v = p[1]; \
				p += 2; \
			} else { \
				v = (p[1] & 0x7Fu) | (uint64_t)p[2] << 7; \
				p += 3; \
			} \
			stmt; \
		} else { \
			TAKE(key, stmt); \
		} \
	} while (0)

/* protobuf-c reads int32 and enum varints by their low 32 bits */
#define I32(v) ((int32_t)(uint32_t)(v))

/* Packed varints into an array allocated at its upper bound (one value
 * per byte) and shrunk to the real count. dlen = 0: no values. */
static int unpack_varints(const uint8_t *q, size_t dlen, struct prec_arena *a,
			  uint64_t **out, size_t *cnt)
{
	const uint8_t *qe;
	uint64_t *vals;
	size_t k = 0;

	*out = NULL;
	*cnt = 0;
	if (!dlen)
		return 0;   /* q may be NULL */
	qe = q + dlen;
	vals = prec_arena_alloc(a, dlen * sizeof(*vals));
	if (!vals)
		return -1;
	while (q < qe) {
		/* one-byte varints are common enough for a short cut */
		if (!(q[0] & 0x80)) {
			vals[k++] = q[0];
			q++;
			continue;
		}
		size_t n = vget(q, qe, &vals[k]);
		if (!n)
			return -1;
		k++;
		q += n;
	}
	prec_arena_shrink_last(a, vals, k * sizeof(*vals));
	*out = vals;
	*cnt = k;
	return 0;
}

/* A string field into arena memory, NUL-terminated. Embedded NULs are
 * protobuf-c's call (its strings stop there). */
static char *unpack_string(const uint8_t *d, size_t n, struct prec_arena *a)
{
	char *s;

	if (n && memchr(d, 0, n))
		return NULL;
	s = prec_arena_alloc(a, n + 1);
	if (!s)
		return NULL;
	if (n)
		memcpy(s, d, n);
	s[n] = '\0';
	return s;
}

/* GroupRead. A repeated packed field given twice (protobuf-c appends) or
 * in unpacked form gives up. */
static Perfrec__GroupRead *read_unpack(const uint8_t *p, size_t len, struct prec_arena *a)
{
	const uint8_t *end = p + len, *d = NULL;
	Perfrec__GroupRead *r = prec_arena_alloc(a, sizeof(*r));
	uint64_t key, v;
	int seen = 0;

	if (!r)
		return NULL;
	perfrec__group_read__init(r);
	while (p < end) {
		if (!next_field(&p, end, &key, &v, &d))
			return NULL;
		switch (key) {
		case 0x08: r->time_enabled = v; break;
		case 0x10: r->time_running = v; break;
		case 0x1A:
			if ((seen & 1) || unpack_varints(d, (size_t)v, a, &r->ids, &r->n_ids) < 0)
				return NULL;
			seen |= 1;
			break;
		case 0x22:
			if ((seen & 2) || unpack_varints(d, (size_t)v, a, &r->values, &r->n_values) < 0)
				return NULL;
			seen |= 2;
			break;
		case 0x2A:
			if ((seen & 4) || unpack_varints(d, (size_t)v, a, &r->lost, &r->n_lost) < 0)
				return NULL;
			seen |= 4;
			break;
		default:
			return NULL;
		}
	}
	return r;
}

/* Byte fields (Sample.raw, Sample.stack, Mmap.build_id) point into the
 * packet bytes. A scalar given twice: the last wins, as in protobuf-c. A
 * submessage or packed field given twice (protobuf-c merges or appends
 * them) gives up, and so does an unpacked repeated field. */
static int sample_unpack(const uint8_t *p, const uint8_t *end, Perfrec__Sample *s,
			 struct prec_arena *a)
{
	const uint8_t *d = NULL;
	uint64_t key, v;

	TAKE(0x08, s->id = v);
	TAKE(0x10, s->cpu = (uint32_t)v);
	TAKE(0x18, s->pid = (uint32_t)v);
	TAKE(0x20, s->tid = (uint32_t)v);
	TAKE(0x28, s->ip = v);
	TAKE(0x30, s->period = v);
	TAKE(0x38, s->callchain = v);
	while (p < end) {
		if (!next_field(&p, end, &key, &v, &d))
			return -1;
		switch (key) {
		case 0x08: s->id = v; break;
		case 0x10: s->cpu = (uint32_t)v; break;
		case 0x18: s->pid = (uint32_t)v; break;
		case 0x20: s->tid = (uint32_t)v; break;
		case 0x28: s->ip = v; break;
		case 0x30: s->period = v; break;
		case 0x38: s->callchain = v; break;
		case 0x42:
			s->raw.len = (size_t)v;
			s->raw.data = (uint8_t *)(uintptr_t)d;
			break;
		case 0x4A:
			if (s->read || !(s->read = read_unpack(d, (size_t)v, a)))
				return -1;
			break;
		case 0x50: s->addr = v; break;
		case 0x58: s->misc = (uint32_t)v; break;
		case 0x60: s->stream_id = v; break;
		case 0x68: s->regs_abi = (uint32_t)v; break;
		case 0x70: s->regs_mask = v; break;
		case 0x7A:
			if (s->regs || unpack_varints(d, (size_t)v, a, &s->regs, &s->n_regs) < 0)
				return -1;
			if (!s->regs) {
				/* an empty packed field: protobuf-c gives no array
				 * either; a second one must still give up */
				s->regs = (uint64_t *)(uintptr_t)d;
			}
			break;
		case 0x82:   /* field 16 */
			s->stack.len = (size_t)v;
			s->stack.data = (uint8_t *)(uintptr_t)d;
			break;
		case 0x88: s->stack_dyn_size = v; break;   /* field 17 */
		case 0x90: s->callchain_callers = v != 0; break;   /* field 18 */
		case 0x98: s->callchain_cut = (uint32_t)v; break;   /* field 19 */
		default: return -1;
		}
	}
	if (s->regs && !s->n_regs)
		s->regs = NULL;
	return 0;
}

static int switch_unpack(const uint8_t *p, const uint8_t *end, Perfrec__ContextSwitch *c)
{
	const uint8_t *d = NULL;
	uint64_t key, v;

	TAKE_SMALL(0x08, c->id = v);
	TAKE_SMALL(0x10, c->cpu = (uint32_t)v);
	TAKE_SMALL(0x18, c->pid = (uint32_t)v);
	TAKE_SMALL(0x20, c->tid = (uint32_t)v);
	TAKE_SMALL(0x28, c->out = v != 0);
	TAKE_SMALL(0x30, c->preempt = v != 0);
	TAKE_SMALL(0x38, c->cpu_wide = v != 0);
	TAKE_SMALL(0x40, c->other_pid = (uint32_t)v);
	TAKE_SMALL(0x48, c->other_tid = (uint32_t)v);
	while (p < end) {
		if (!next_field(&p, end, &key, &v, &d))
			return -1;
		switch (key) {
		case 0x08: c->id = v; break;
		case 0x10: c->cpu = (uint32_t)v; break;
		case 0x18: c->pid = (uint32_t)v; break;
		case 0x20: c->tid = (uint32_t)v; break;
		case 0x28: c->out = v != 0; break;
		case 0x30: c->preempt = v != 0; break;
		case 0x38: c->cpu_wide = v != 0; break;
		case 0x40: c->other_pid = (uint32_t)v; break;
		case 0x48: c->other_tid = (uint32_t)v; break;
		default: return -1;
		}
	}
	return 0;
}

static int task_unpack(const uint8_t *p, const uint8_t *end, Perfrec__TaskEvent *t)
{
	const uint8_t *d = NULL;
	uint64_t key, v;

	TAKE(0x08, t->kind = (Perfrec__TaskEvent__Kind)I32(v));
	TAKE(0x10, t->pid = (uint32_t)v);
	TAKE(0x18, t->tid = (uint32_t)v);
	TAKE(0x20, t->ppid = (uint32_t)v);
	TAKE(0x28, t->ptid = (uint32_t)v);
	TAKE(0x30, t->comm = v);
	TAKE(0x38, t->exec = v != 0);
	TAKE(0x40, t->cpu = (uint32_t)v);

	while (p < end) {
		if (!next_field(&p, end, &key, &v, &d))
			return -1;
		switch (key) {
		case 0x08: t->kind = (Perfrec__TaskEvent__Kind)I32(v); break;
		case 0x10: t->pid = (uint32_t)v; break;
		case 0x18: t->tid = (uint32_t)v; break;
		case 0x20: t->ppid = (uint32_t)v; break;
		case 0x28: t->ptid = (uint32_t)v; break;
		case 0x30: t->comm = v; break;
		case 0x38: t->exec = v != 0; break;
		case 0x40: t->cpu = (uint32_t)v; break;
		default: return -1;
		}
	}
	return 0;
}

static int mmap_unpack(const uint8_t *p, const uint8_t *end, Perfrec__Mmap *m)
{
	const uint8_t *d = NULL;
	uint64_t key, v;

	while (p < end) {
		if (!next_field(&p, end, &key, &v, &d))
			return -1;
		switch (key) {
		case 0x08: m->pid = (uint32_t)v; break;
		case 0x10: m->tid = (uint32_t)v; break;
		case 0x18: m->start = v; break;
		case 0x20: m->len = v; break;
		case 0x28: m->pgoff = v; break;
		case 0x30: m->maj = (uint32_t)v; break;
		case 0x38: m->min = (uint32_t)v; break;
		case 0x40: m->ino = v; break;
		case 0x48: m->ino_generation = v; break;
		case 0x50: m->prot = (uint32_t)v; break;
		case 0x58: m->flags = (uint32_t)v; break;
		case 0x60: m->filename = v; break;
		case 0x6A:
			m->build_id.len = (size_t)v;
			m->build_id.data = (uint8_t *)(uintptr_t)d;
			break;
		case 0x70: m->synthesized = v != 0; break;
		case 0x78: m->misc = (uint32_t)v; break;
		case 0x80: m->cpu = (uint32_t)v; break;   /* field 16 */
		default: return -1;
		}
	}
	return 0;
}

static int loss_unpack(const uint8_t *p, const uint8_t *end, Perfrec__Loss *l,
		       struct prec_arena *a)
{
	const uint8_t *d = NULL;
	uint64_t key, v;

	while (p < end) {
		if (!next_field(&p, end, &key, &v, &d))
			return -1;
		switch (key) {
		case 0x08: l->kind = (Perfrec__Loss__Kind)I32(v); break;
		case 0x10: l->id = v; break;
		case 0x18: l->cpu = (uint32_t)v; break;
		case 0x20: l->count = v; break;
		case 0x2A:
			if (!(l->reason = unpack_string(d, (size_t)v, a)))
				return -1;
			break;
		default: return -1;
		}
	}
	return 0;
}

static int throttle_unpack(const uint8_t *p, const uint8_t *end, Perfrec__Throttle *t)
{
	const uint8_t *d = NULL;
	uint64_t key, v;

	while (p < end) {
		if (!next_field(&p, end, &key, &v, &d))
			return -1;
		switch (key) {
		case 0x08: t->throttled = v != 0; break;
		case 0x10: t->id = v; break;
		case 0x18: t->cpu = (uint32_t)v; break;
		case 0x20: t->stream_id = v; break;
		default: return -1;
		}
	}
	return 0;
}

static int group_unpack(const uint8_t *p, const uint8_t *end, Perfrec__GroupSnapshot *g,
			struct prec_arena *a)
{
	const uint8_t *d = NULL;
	uint64_t key, v;

	while (p < end) {
		if (!next_field(&p, end, &key, &v, &d))
			return -1;
		switch (key) {
		case 0x08: g->group = (uint32_t)v; break;
		case 0x10: g->cpu = I32(v); break;
		case 0x18: g->pid = I32(v); break;
		case 0x22:
			if (g->read || !(g->read = read_unpack(d, (size_t)v, a)))
				return -1;
			break;
		case 0x28: g->final = v != 0; break;
		default: return -1;
		}
	}
	return 0;
}

/* Counts the entries of InternedData bytes (outer level only): strings,
 * callchains, callchain_nodes into n[0..3). */
static int interned_count(const uint8_t *p, const uint8_t *end, size_t n3[3])
{
	n3[0] = n3[1] = n3[2] = 0;
	while (p < end) {
		uint64_t key, len;
		size_t n = vget(p, end, &key);
		if (!n || (key != 0x0A && key != 0x12 && key != 0x1A))
			return -1;
		p += n;
		n = vget(p, end, &len);
		if (!n || len > (uint64_t)(end - p - (ptrdiff_t)n))
			return -1;
		p += n + len;
		n3[(key >> 3) - 1]++;
	}
	return 0;
}

/* One CallchainNodes message. Fields in any order, scalars given twice:
 * the last wins; addrs given twice or unpacked: protobuf-c's call. */
static Perfrec__CallchainNodes *run_unpack(const uint8_t *p, const uint8_t *end,
					   struct prec_arena *a)
{
	Perfrec__CallchainNodes *r = prec_arena_alloc(a, sizeof(*r));
	const uint8_t *d = NULL;
	uint64_t key, v;
	int seen = 0;

	if (!r)
		return NULL;
	perfrec__callchain_nodes__init(r);
	while (p < end) {
		if (!next_field(&p, end, &key, &v, &d))
			return NULL;
		switch (key) {
		case 0x08: r->iid = v; break;
		case 0x10: r->parent = v; break;
		case 0x1A:
			if (seen || unpack_varints(d, (size_t)v, a, &r->addrs, &r->n_addrs) < 0)
				return NULL;
			seen = 1;
			break;
		default:
			return NULL;
		}
	}
	return r;
}

/* Callchain ips: plain, or zigzag deltas when `delta` (rebuilt here). */
static int unpack_ips(const uint8_t *q, size_t dlen, int delta,
		      struct prec_arena *a, Perfrec__Callchain *c)
{
	if (unpack_varints(q, dlen, a, &c->ips, &c->n_ips) < 0)
		return -1;
	if (delta) {
		uint64_t prev = 0;
		for (size_t i = 0; i < c->n_ips; i++) {
			uint64_t z = c->ips[i];
			prev += (uint64_t)((int64_t)(z >> 1) ^ -(int64_t)(z & 1));
			c->ips[i] = prev;
		}
	}
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
		if (key == 0x1A) {
			Perfrec__CallchainNodes *r = run_unpack(q, qe, a);
			if (!r)
				return -1;
			id->callchain_nodes[id->n_callchain_nodes++] = r;
			continue;
		}
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

/* A decoded packet and its submessage in one arena allocation. */
struct fast_packet {
	Perfrec__Packet pkt;
	union {
		Perfrec__Sample sample;
		Perfrec__ContextSwitch cs;
		Perfrec__TaskEvent task;
		Perfrec__Mmap mmap;
		Perfrec__Loss loss;
		Perfrec__Throttle throttle;
		Perfrec__GroupSnapshot group;
		Perfrec__InternedData interned;
	} u;
};

static int interned_body_unpack(const uint8_t *body, size_t blen,
				Perfrec__InternedData *id, struct prec_arena *arena)
{
	size_t n3[3], ns, nc, nr;

	if (interned_count(body, body + blen, n3) < 0)
		return -1;
	ns = n3[0];
	nc = n3[1];
	nr = n3[2];
	perfrec__interned_data__init(id);
	id->strings = ns ? prec_arena_alloc(arena, ns * sizeof(*id->strings)) : NULL;
	id->callchains = nc ? prec_arena_alloc(arena, nc * sizeof(*id->callchains)) : NULL;
	id->callchain_nodes = nr ? prec_arena_alloc(arena, nr * sizeof(*id->callchain_nodes)) : NULL;
	if ((ns && !id->strings) || (nc && !id->callchains) || (nr && !id->callchain_nodes))
		return -1;
	return interned_unpack(body, body + blen, id, arena);
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
			dt = v;   /* given twice: the last wins, as in protobuf-c */
			p += n;
		} else if ((key & 7) == 2 && key >> 3 >= PERFREC__PACKET__DATA_SAMPLE &&
			   key >> 3 <= PERFREC__PACKET__DATA_INTERNED && !kind) {
			/* fields 4-11: every fast kind, and only those */
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
	return prec_packet_fast_unpack_kind(kind, (int64_t)(dt >> 1) ^ -(int64_t)(dt & 1),
					    body, blen, arena);
}

/* Initial values, copied inline (the generated _init() functions are calls
 * into another unit, once per packet). */
static const Perfrec__Packet packet_init = PERFREC__PACKET__INIT;
static const Perfrec__ContextSwitch switch_init = PERFREC__CONTEXT_SWITCH__INIT;
static const Perfrec__Sample sample_init = PERFREC__SAMPLE__INIT;

Perfrec__Packet *prec_packet_fast_unpack_kind(int kind, int64_t dt, const uint8_t *body,
					      size_t blen, struct prec_arena *arena)
{
	const uint8_t *bend = body + blen;
	int ret;

	if (kind < PERFREC__PACKET__DATA_SAMPLE || kind > PERFREC__PACKET__DATA_INTERNED ||
	    (blen && !body))
		return NULL;
	/* Only as much of the union as the kind uses: a ContextSwitch takes
	 * a third of the bytes of the largest member (Mmap), and the arena
	 * is walked once per frame. */
	static const size_t used[] = {
		[PERFREC__PACKET__DATA_SAMPLE] = sizeof(Perfrec__Sample),
		[PERFREC__PACKET__DATA_CONTEXT_SWITCH] = sizeof(Perfrec__ContextSwitch),
		[PERFREC__PACKET__DATA_TASK] = sizeof(Perfrec__TaskEvent),
		[PERFREC__PACKET__DATA_MMAP] = sizeof(Perfrec__Mmap),
		[PERFREC__PACKET__DATA_LOSS] = sizeof(Perfrec__Loss),
		[PERFREC__PACKET__DATA_THROTTLE] = sizeof(Perfrec__Throttle),
		[PERFREC__PACKET__DATA_GROUP] = sizeof(Perfrec__GroupSnapshot),
		[PERFREC__PACKET__DATA_INTERNED] = sizeof(Perfrec__InternedData),
	};
	struct fast_packet *fp = prec_arena_alloc(arena, offsetof(struct fast_packet, u) +
						  used[kind]);
	if (!fp)
		return NULL;
	Perfrec__Packet *pkt = &fp->pkt;
	*pkt = packet_init;
	pkt->dt = dt;
	pkt->data_case = (Perfrec__Packet__DataCase)kind;
	switch (kind) {
	case PERFREC__PACKET__DATA_SAMPLE:
		fp->u.sample = sample_init;
		pkt->sample = &fp->u.sample;
		ret = sample_unpack(body, bend, pkt->sample, arena);
		break;
	case PERFREC__PACKET__DATA_CONTEXT_SWITCH:
		fp->u.cs = switch_init;
		pkt->context_switch = &fp->u.cs;
		ret = switch_unpack(body, bend, pkt->context_switch);
		break;
	case PERFREC__PACKET__DATA_TASK:
		perfrec__task_event__init(&fp->u.task);
		pkt->task = &fp->u.task;
		ret = task_unpack(body, bend, pkt->task);
		break;
	case PERFREC__PACKET__DATA_MMAP:
		perfrec__mmap__init(&fp->u.mmap);
		pkt->mmap = &fp->u.mmap;
		ret = mmap_unpack(body, bend, pkt->mmap);
		break;
	case PERFREC__PACKET__DATA_LOSS:
		perfrec__loss__init(&fp->u.loss);
		pkt->loss = &fp->u.loss;
		ret = loss_unpack(body, bend, pkt->loss, arena);
		break;
	case PERFREC__PACKET__DATA_THROTTLE:
		perfrec__throttle__init(&fp->u.throttle);
		pkt->throttle = &fp->u.throttle;
		ret = throttle_unpack(body, bend, pkt->throttle);
		break;
	case PERFREC__PACKET__DATA_GROUP:
		perfrec__group_snapshot__init(&fp->u.group);
		pkt->group = &fp->u.group;
		ret = group_unpack(body, bend, pkt->group, arena);
		break;
	default:   /* PERFREC__PACKET__DATA_INTERNED */
		pkt->interned = &fp->u.interned;
		ret = interned_body_unpack(body, blen, pkt->interned, arena);
		break;
	}
	return ret < 0 ? NULL : pkt;
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
