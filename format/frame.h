/*
 * frame.h - one decoded data frame and the packets it holds; independent
 * of every other frame. The reader (reader.h, which includes this header)
 * finds frames in a file and loads them; a frame knows nothing of files
 * or readers, so this header is also all a caller holding the bytes of a
 * zstd data frame needs.
 */
#ifndef PREC_FRAME_H
#define PREC_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "perfrec.pb-c.h"
#include "format/error.h"   /* PREC_MAX_RATIO */

struct prec_frame;

/* One decoded packet. pkt and the strings it points to live until the next
 * prec_frame_load/prec_frame_free of its frame. */
struct prec_packet {
	const Perfrec__Packet *pkt;
	uint64_t time;          /* absolute monotonic ns, dt resolved */
	uint32_t stream;
	struct prec_frame *frame;   /* for iid lookups */
	uint64_t frame_offset;
};

struct prec_frame *prec_frame_new(void);
void prec_frame_free(struct prec_frame *f);   /* NULL is fine */

/* Decompress and index one zstd data frame held in memory (zbuf is not
 * kept). The content size its header declares must be at most max_raw and
 * PREC_MAX_RATIO times zlen (PREC_E_TOO_BIG, PREC_E_RATIO: nothing is
 * decompressed then). 0 or PREC_E_*. */
int prec_frame_load(struct prec_frame *f, const void *zbuf, size_t zlen,
		    size_t max_raw);
/* Next packet of the loaded frame: 1, 0 at its end, < 0 if the packet is
 * damaged (the rest of the frame is then unusable). Interned tables are
 * applied as they are met; InternedData packets are returned too (unless
 * filtered out by prec_frame_set_kinds()). */
int prec_frame_next(struct prec_frame *f, struct prec_packet *p);

/*
 * Packet-kind filter. Bit k of mask stands for the packet kind whose
 * Perfrec__Packet__DataCase value is k (PERFREC__PACKET__DATA_SAMPLE = 4,
 * ...); PREC_KIND(c) makes the bit. prec_frame_next() then returns only
 * packets whose kind has its bit set; the others are skipped WITHOUT being
 * unpacked: only Packet.dt (field 1) and the oneof field number are read,
 * so skipping costs a few bytes of scanning, whatever the packet's size.
 *
 *   prec_frame_set_kinds(f, PREC_KIND(PERFREC__PACKET__DATA_SAMPLE));
 *   prec_reader_load_frame(r, fi, f);        // (order does not matter)
 *   while (prec_frame_next(f, &p) > 0) ...   // samples only
 *
 * A SwitchBatch packet (1.2) is returned as its rows: one ContextSwitch
 * packet each, in order, each with its own time, under the bit of
 * PERFREC__PACKET__DATA_CONTEXT_SWITCH; the batch itself never is.
 *
 * Guarantees:
 *  - time: the dt of every skipped packet is still added, so p.time of a
 *    returned packet is identical to the unfiltered pass;
 *  - interning: InternedData packets are ALWAYS decoded and applied to the
 *    frame's tables (iids resolve exactly as unfiltered); they are returned
 *    only when PREC_KIND(PERFREC__PACKET__DATA_INTERNED) is in the mask;
 *  - counting: skipped packets count in stats.packets as if returned, and
 *    packets of unknown kind are counted in unknown_packets either way;
 *  - damage: the bytes of a skipped packet are checked only as far as
 *    framing goes (lengths, dt, its oneof key). A skipped packet whose
 *    body would not parse does not end the frame, where the unfiltered
 *    pass would report PREC_E_DECODE there.
 * The mask belongs to the frame object: it survives prec_frame_load() /
 * prec_reader_load_frame() and stays until set again. New frames start
 * with PREC_KINDS_ALL. Bit 0 (DATA__NOT_SET) has no effect.
 */
#define PREC_KIND(c) (1ull << (unsigned)(c))
#define PREC_KINDS_ALL UINT64_MAX
void prec_frame_set_kinds(struct prec_frame *f, uint64_t mask);
/* The kinds a file's frames list (frame-info `kinds`) for the packets a
 * mask of prec_frame_set_kinds() returns: context switches are stored as
 * ContextSwitch packets or in SwitchBatch packets (1.2), and a batch is
 * returned only as its rows, so its bit goes with the context-switch
 * bit. For choosing frames by their kinds; the frame object maps batches
 * itself. */
static inline uint64_t prec_kinds_stored(uint64_t mask)
{
	uint64_t cs = PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH);
	uint64_t sb = PREC_KIND(PERFREC__PACKET__DATA_SWITCH_BATCH);

	return (mask & ~sb) | (mask & cs ? sb : 0);
}
/* Interned values defined so far in this frame; NULL if iid unknown.
 * A callchain (n ips in *n, leaf first, as the kernel gave them) is built
 * from its nodes on the first lookup and kept: the array lives as long as
 * the frame's packets (next load or free), a second lookup of the iid
 * returns it again. Not thread-safe on one frame (nor is the rest). */
const char *prec_frame_string(const struct prec_frame *f, uint64_t iid);
const uint64_t *prec_frame_callchain(const struct prec_frame *f, uint64_t iid,
				     size_t *n);
uint64_t prec_frame_unknown_packets(const struct prec_frame *f);
/* The packets read so far as the file holds them (`Trace.packet` fields
 * of known kinds, InternedData and filtered ones included, a SwitchBatch
 * once however many rows it returns), and the PREC_KIND() bits of their
 * kinds: what a frame's info record counts, for checking it. */
uint64_t prec_frame_packets(const struct prec_frame *f);
uint64_t prec_frame_kinds(const struct prec_frame *f);

#endif
