/*
 * packet.h - hand-written encode/decode of the hot packet kinds (internal
 * to format/).
 *
 * Samples, context switches, task and mmap events and InternedData make up
 * nearly every packet of a trace (a --switch-events recording is 70-95%
 * ContextSwitch), and protobuf-c's generic, descriptor-driven pack/unpack
 * cost several times the work of a direct encoding. Fast kinds: Sample
 * (with GroupRead), ContextSwitch, TaskEvent, Mmap, Loss, Throttle,
 * GroupSnapshot, InternedData. These fast paths produce and accept the
 * exact protobuf wire format (fields in number order, proto3 zero fields
 * omitted), and give up - returning "not handled" - on anything they do
 * not know (other fields, unknown or repeated submessages, non-canonical
 * varints), so the caller falls back to protobuf-c and behaviour never
 * differs, only speed. tests/unit/format/test_packet.c and the fuzz target
 * compare both paths byte for byte.
 *
 * The fast paths are only used while the generated descriptors have the
 * field counts this file was written for (prec_packet_fast_ok()): a field
 * added to perfrec.proto silently routes everything to protobuf-c until
 * this file learns it.
 */
#ifndef PREC_PACKET_H
#define PREC_PACKET_H

#include <stddef.h>
#include <stdint.h>

#include "perfrec.pb-c.h"
#include "format/arena.h"

int prec_packet_fast_ok(void);

/* Encoded size of pkt when the fast encoder handles it, else 0. */
size_t prec_packet_fast_size(const Perfrec__Packet *pkt);
/* Writes the bytes measured by prec_packet_fast_size(); returns the count. */
size_t prec_packet_fast_pack(const Perfrec__Packet *pkt, uint8_t *out);
/* The same pair without measuring the body twice: _measure() returns what
 * prec_packet_fast_size() does and the submessage's size in *body (set
 * only when handled); _pack_body() takes that *body back. */
size_t prec_packet_fast_measure(const Perfrec__Packet *pkt, size_t *body);
size_t prec_packet_fast_pack_body(const Perfrec__Packet *pkt, size_t body,
				  uint8_t *out);

/* Packets of a few kinds have a small bounded size (ContextSwitch,
 * TaskEvent, Throttle, Sample without raw/read/user regs/stack: < 128 bytes, so every
 * length is a one-byte varint). For those this writes the whole
 * `Trace.packet` field (0x0A, length, Packet bytes) in one pass without
 * measuring first; out must have PREC_FAST_SMALL_MAX bytes. Returns the
 * bytes written, 0 for any other packet (use _measure/_pack_body). */
#define PREC_FAST_SMALL_MAX 128
size_t prec_packet_fast_pack_small(const Perfrec__Packet *pkt, uint8_t *out);

/* One string or callchain entry of an InternedData packet to encode. */
struct prec_interned_ref {
	uint64_t iid;
	const void *data;   /* chars of the string, or the ips */
	size_t n;           /* string length, or number of ips */
	size_t enc;         /* set by prec_interned_size(): payload bytes */
};

/* One CallchainNodes run to encode: its addrs values already coded. */
struct prec_interned_run {
	uint64_t iid;           /* 0 = numbered implicitly */
	uint64_t parent;
	const uint64_t *vals;   /* CallchainNodes.addrs */
	size_t n;
	size_t enc;             /* set by prec_interned_size(): packed bytes */
};

/* Size and bytes of Packet { interned: InternedData { strings, callchains,
 * callchain_nodes } } with dt = 0. Call order: prec_interned_size() (which
 * caches per-entry sizes in the refs), then prec_interned_pack() on the
 * same refs. */
size_t prec_interned_size(struct prec_interned_ref *s, size_t ns,
			  struct prec_interned_ref *c, size_t nc,
			  struct prec_interned_run *r, size_t nr);
size_t prec_interned_pack(const struct prec_interned_ref *s, size_t ns,
			  const struct prec_interned_ref *c, size_t nc,
			  const struct prec_interned_run *r, size_t nr, uint8_t *out);

/* Callchains in delta form (ips_delta) become plain ips, in arena memory;
 * ips_delta is cleared. Applied to every packet protobuf-c decodes (the
 * fast decoder does it on the fly), so consumers only ever see ips.
 * 0, or -1 when the arena is exhausted. */
int prec_packet_normalize(Perfrec__Packet *pkt, struct prec_arena *a);

/* Decodes Packet bytes of a fast kind into arena memory. NULL when the
 * bytes are outside the fast path (use protobuf-c). Byte fields
 * (Sample.raw and .stack, Mmap.build_id) point into buf, which must outlive the
 * packet. */
Perfrec__Packet *prec_packet_fast_unpack(const uint8_t *buf, size_t len,
					 struct prec_arena *arena);
/* The same from a packet already split into its dt (decoded), its kind
 * (the oneof field number) and that field's bytes, for a caller that has
 * read the packet's outer fields itself (frame.c). NULL: not handled. */
Perfrec__Packet *prec_packet_fast_unpack_kind(int kind, int64_t dt, const uint8_t *body,
					      size_t blen, struct prec_arena *arena);

#endif
