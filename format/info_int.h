/*
 * info_int.h - the frame-info record's payload (SPEC.md), read by the
 * reader and the record scanner, written by the writer and the index
 * (internal to format/).
 */
#ifndef PREC_INFO_INT_H
#define PREC_INFO_INT_H

#include <stddef.h>
#include <stdint.h>

struct prec_frame_info;   /* reader.h */

/* reader.c: the fields of a frame-info payload of len bytes (len >=
 * PREC_INFO_MIN, crc checked by the caller); offset/data_offset are the
 * caller's. */
void prec_info_decode(const uint8_t *p, size_t len, struct prec_frame_info *fi);
/* index.c: writes fi's frame-info fields at p (PREC_INFO_SIZE - 4 bytes,
 * the crc is the caller's): a frame-info payload, or an index entry's
 * from PREC_IDX_INFO on. */
void prec_info_encode(uint8_t *p, const struct prec_frame_info *fi);

#endif
