/*
 * layout.h - byte layout of a .prec file (internal to format/).
 *
 * format/SPEC.md is the normative description; this header is its C
 * transcription. Everything is little-endian. Keep the two in step.
 */
#ifndef PREC_LAYOUT_H
#define PREC_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PREC_VERSION_MAJOR 1
#define PREC_VERSION_MINOR 2

/* zstd frame magics. A skippable frame is: u32 magic, u32 size, size bytes.
 * The low nibble of the skippable magic is our record kind. */
#define PREC_ZSTD_MAGIC        0xFD2FB528u
#define PREC_SKIP_MAGIC_MASK   0xFFFFFFF0u
#define PREC_SKIP_MAGIC_BASE   0x184D2A50u
#define PREC_KIND_FILE_HEADER  0x0u
#define PREC_KIND_FRAME_INFO   0x1u
#define PREC_KIND_INDEX        0x2u
#define PREC_SKIP_HDR          8u

/* File header payload: "PERFREC\0", u16 major, u16 minor, u32 flags,
 * u32 crc32 of the preceding bytes of the payload. */
#define PREC_FILE_MAGIC        "PERFREC\0"
#define PREC_FILE_HEADER_SIZE  20u
/* Largest file-header payload a reader accepts (newer minors may grow it). */
#define PREC_FILE_HEADER_MAX   4096u

/* Frame-info payload (minor 0: 44 bytes, minor 1: 52 with the packet
 * kinds; the crc is always the LAST four bytes of the payload, so a newer
 * minor can insert fields before it). */
#define PREC_INFO_STREAM       0
#define PREC_INFO_PACKETS      4
#define PREC_INFO_T_MIN        8
#define PREC_INFO_T_MAX        16
#define PREC_INFO_CSIZE        24
#define PREC_INFO_RSIZE        28
#define PREC_INFO_SEQ          32
#define PREC_INFO_KINDS        40   /* minor 1 */
#define PREC_INFO_SIZE         52u  /* what this writer writes */
#define PREC_INFO_MIN          44u  /* what a reader accepts (minor 0) */
#define PREC_INFO_MAX          1024u

/* Index payload: u32 count, u32 entry_size, count entries, u32 crc32 of
 * everything before it, then the 16-byte trailer (u64 offset of the index
 * skippable frame, "PRECIDX\0"). Entry (minor 0: 56 bytes, minor 1: 64): */
#define PREC_IDX_OFFSET        0
#define PREC_IDX_DATA_OFFSET   8
#define PREC_IDX_STREAM        16
#define PREC_IDX_PACKETS       20
#define PREC_IDX_T_MIN         24
#define PREC_IDX_T_MAX         32
#define PREC_IDX_CSIZE         40
#define PREC_IDX_RSIZE         44
#define PREC_IDX_SEQ           48
#define PREC_IDX_KINDS         56   /* minor 1 */
/* An entry is offset, data_offset, then the frame-info payload's fields
 * at their frame-info offsets (without the crc): */
#define PREC_IDX_INFO          16
_Static_assert(PREC_IDX_STREAM == PREC_IDX_INFO + PREC_INFO_STREAM &&
	       PREC_IDX_SEQ == PREC_IDX_INFO + PREC_INFO_SEQ &&
	       PREC_IDX_KINDS == PREC_IDX_INFO + PREC_INFO_KINDS,
	       "index entries hold the frame-info fields at the same offsets");
#define PREC_IDX_ENTRY_SIZE    64u  /* what this writer writes */
#define PREC_IDX_ENTRY_MIN     56u  /* what a reader accepts (minor 0) */
#define PREC_IDX_HEAD          8u
#define PREC_TRAILER_SIZE      16u
#define PREC_TRAILER_MAGIC     "PRECIDX\0"

/* Writer limits (SPEC.md "limits"): keep every frame well below the
 * reader's default max_frame_raw. */
#define PREC_MAX_FRAME_SIZE    (16u * 1024u * 1024u)
#define PREC_MAX_PACKET_SIZE   (16u * 1024u * 1024u)

static inline uint16_t prec_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t prec_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static inline uint64_t prec_get64(const uint8_t *p)
{
	return (uint64_t)prec_get32(p) | ((uint64_t)prec_get32(p + 4) << 32);
}

static inline void prec_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void prec_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void prec_put64(uint8_t *p, uint64_t v)
{
	prec_put32(p, (uint32_t)v);
	prec_put32(p + 4, (uint32_t)(v >> 32));
}

static inline int prec_is_skippable(uint32_t magic)
{
	return (magic & PREC_SKIP_MAGIC_MASK) == PREC_SKIP_MAGIC_BASE;
}

/* CRC-32 (IEEE 802.3, reflected poly 0xEDB88320, init and final xor
 * 0xFFFFFFFF), the same value zlib's crc32() gives. */
uint32_t prec_crc32(const void *buf, size_t n);

#endif
