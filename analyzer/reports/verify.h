/*
 * verify.h - integrity check (`perfrec-analyze verify`).
 *
 * Loads and decodes every frame (sizes, checksums, packet decoding),
 * compares each frame with its index entry (packet count, time range,
 * packet kinds), walks the file to hold every frame-info record against
 * its index entry, and adds the damage the reader met (a damaged file
 * header, a torn tail, byte ranges it had to skip, a missing or rebuilt
 * index). The file is whole only when every frame and record is good,
 * the index was present and agrees with both, and nothing is torn.
 * A concatenation of files is checked part by part (section "parts",
 * and each problem names its part); it is whole when every part is.
 */
#ifndef ANA_VERIFY_H
#define ANA_VERIFY_H

#include "analyzer/render/table.h"

struct ana_trace;

/* Sections "verify", "parts" (concatenations only) and "problems".
 * *whole is set to 1 or 0. */
int ana_verify_run(struct ana_trace *s, int jobs, struct ana_doc *doc, int *whole);

#endif
