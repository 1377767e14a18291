/*
 * swbatch.h - context switches as columns: the SwitchBatch packet (format
 * 1.2, SPEC.md section 6, "Switch batches"), internal to format/.
 *
 * A --switch-events trace is mostly context switches, and one
 * ContextSwitch packet each costs ~27 bytes before zstd and a packet
 * decode per switch. A batch holds a run of them as columns: a time delta
 * per row, and (id, cpu, flags) and (pid, tid) pairs as indexes into two
 * small tables of the batch, so a row is ~6 bytes and a reader decodes a
 * whole batch at once.
 *
 * Writer side (writer.c, per stream): prec_swbatch_add() per switch, then
 * prec_swbatch_size() / prec_swbatch_pack() write the Packet bytes and
 * prec_swbatch_clear() starts the next batch. The sizes are kept as rows
 * come in, so _size() is exact at any time without a pass over the rows.
 * The bytes are protobuf's own (fields in number order, packed, empty
 * ones left out): tests/unit/format/test_swbatch.c compares them with
 * protobuf-c's.
 *
 * Reader side (frame.c): prec_swbatch_decode() turns the bytes of a
 * SwitchBatch into ContextSwitch packets, every index and length checked;
 * bytes not in the writer's shape are unpacked by protobuf-c and
 * prec_swbatch_expand() makes the same rows of the message.
 */
#ifndef PREC_SWBATCH_H
#define PREC_SWBATCH_H

#include <stddef.h>
#include <stdint.h>

#include "perfrec.pb-c.h"
#include "format/arena.h"

/* Rows per batch: the writer's default, and the most a reader takes
 * (a batch is decoded whole into ~110 bytes a row). */
#define PREC_SWBATCH_ROWS 4096u
#define PREC_SWBATCH_MAX_ROWS 65536u
/* Shorter runs are written as ContextSwitch packets: a batch of fewer
 * rows decodes slower than its rows as packets (format_bench --mix
 * switch: runs of ~4 switches between samples, 6.7 M packets/s batched
 * against 8.6 M as packets) and saves few bytes after zstd. */
#define PREC_SWBATCH_MIN_ROWS 8u

struct prec_swbatch_key {
	uint64_t id;
	uint32_t cpu, flags;
};

/* One slot of the batch's lookup tables: valid while gen is the batch's. */
struct prec_swbatch_slot {
	uint32_t gen, idx;
};

struct prec_swbatch {
	size_t n, cap;                 /* rows */
	int64_t *dt;
	uint32_t *key, *task, *other;
	int64_t sum;                   /* of dt: the Packet's dt */

	struct prec_swbatch_key *keys;
	size_t nkeys;
	uint32_t *tpid, *ttid;
	size_t ntasks;

	struct prec_swbatch_slot *kslots, *tslots;   /* 2 * cap each */
	size_t nslots;
	uint32_t gen;

	size_t bytes[10];              /* packed bytes of fields 1..9 */
};

/* _init/_release: embedded, no allocation until the first row. rows is
 * the batch's capacity (1..PREC_SWBATCH_MAX_ROWS). */
void prec_swbatch_init(struct prec_swbatch *b, size_t rows);
void prec_swbatch_release(struct prec_swbatch *b);
/* Adds a row dt ns after the previous one (after the time before the
 * batch, for the first). 0, or -ENOMEM. The batch must not be full
 * (b->n < b->cap); the caller writes it out when it is. */
int prec_swbatch_add(struct prec_swbatch *b, const Perfrec__ContextSwitch *cs, int64_t dt);
static inline int prec_swbatch_full(const struct prec_swbatch *b)
{
	return b->n >= b->cap;
}
/* Bytes of the Packet { dt, switch_batch } the rows make (n >= 1). */
size_t prec_swbatch_size(const struct prec_swbatch *b);
/* Writes them to out (prec_swbatch_size() bytes); returns the count. */
size_t prec_swbatch_pack(const struct prec_swbatch *b, uint8_t *out);
void prec_swbatch_clear(struct prec_swbatch *b);
/* Row i (< b->n) as the ContextSwitch it was added as. */
void prec_swbatch_row(const struct prec_swbatch *b, size_t i, Perfrec__ContextSwitch *cs);

/* The rows of a decoded batch as *n ContextSwitch packets in arena memory
 * (each with its own dt, the first from the time before the batch), given
 * the batch's Packet.dt. 0, PREC_E_DECODE when the columns do not make a
 * batch (empty, lengths that differ, an index outside its table, more
 * than PREC_SWBATCH_MAX_ROWS rows, dts whose sum is not dt), -ENOMEM when
 * the arena is exhausted. */
int prec_swbatch_expand(const Perfrec__SwitchBatch *m, int64_t dt, struct prec_arena *a,
			Perfrec__Packet **rows, size_t *n);
/* The same from the bytes of a SwitchBatch message (Packet field 20's
 * body), without protobuf-c: the columns are read in step straight into
 * the rows. The same checks and returns as prec_swbatch_expand(), and 1
 * (nothing decided) when the bytes are not in the writer's shape (a field
 * repeated, unpacked or unknown, a varint longer than its type): the
 * caller then unpacks them with protobuf-c and expands that, so how odd
 * bytes read stays protobuf-c's decision. */
int prec_swbatch_decode(const uint8_t *body, size_t len, int64_t dt, struct prec_arena *a,
			Perfrec__Packet **rows, size_t *n);

#endif
