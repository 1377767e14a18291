/*
 * index.h - the trailing index record of a .prec file (SPEC.md section 7),
 * encoded in one place for the writer (at close) and for files assembled
 * from records of another stream (format/flight.h snapshots), whose frames
 * sit at other offsets than where they were first written.
 */
#ifndef PREC_INDEX_H
#define PREC_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"

/* The index record (skippable kind 2) with its trailer for the n frames
 * fi[] (file offsets, in file order), to be placed at file offset
 * index_offset. *out is malloc'ed (caller frees), *len its size.
 * 0, -ENOMEM or PREC_E_TOO_BIG (more entries than a record holds). */
int prec_index_encode(const struct prec_frame_info *fi, size_t n,
		      uint64_t index_offset, uint8_t **out, size_t *len);

#endif
