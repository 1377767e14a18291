/*
 * index.c - encodes the trailing index record; see index.h and SPEC.md
 * section 7.
 */
#include "format/index.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/error.h"
#include "format/info_int.h"
#include "format/layout.h"

void prec_info_encode(uint8_t *p, const struct prec_frame_info *fi)
{
	prec_put32(p + PREC_INFO_STREAM, fi->stream);
	prec_put32(p + PREC_INFO_PACKETS, fi->packets);
	prec_put64(p + PREC_INFO_T_MIN, fi->t_min);
	prec_put64(p + PREC_INFO_T_MAX, fi->t_max);
	prec_put32(p + PREC_INFO_CSIZE, fi->compressed_size);
	prec_put32(p + PREC_INFO_RSIZE, fi->raw_size);
	prec_put64(p + PREC_INFO_SEQ, fi->seq);
	prec_put64(p + PREC_INFO_KINDS, fi->kinds);
}

int prec_index_encode(const struct prec_frame_info *fi, size_t n,
		      uint64_t index_offset, uint8_t **out, size_t *len)
{
	size_t body, payload, total;
	uint8_t *buf, *p;

	*out = NULL;
	*len = 0;
	if (n > (UINT32_MAX - PREC_IDX_HEAD - 4 - PREC_TRAILER_SIZE) / PREC_IDX_ENTRY_SIZE)
		return PREC_E_TOO_BIG;
	body = PREC_IDX_HEAD + n * PREC_IDX_ENTRY_SIZE;
	payload = body + 4 + PREC_TRAILER_SIZE;
	total = PREC_SKIP_HDR + payload;
	buf = malloc(total);
	if (!buf)
		return -ENOMEM;
	prec_put32(buf, PREC_SKIP_MAGIC_BASE | PREC_KIND_INDEX);
	prec_put32(buf + 4, (uint32_t)payload);
	p = buf + PREC_SKIP_HDR;
	prec_put32(p, (uint32_t)n);
	prec_put32(p + 4, PREC_IDX_ENTRY_SIZE);
	for (size_t i = 0; i < n; i++) {
		const struct prec_frame_info *e = &fi[i];
		uint8_t *q = p + PREC_IDX_HEAD + i * PREC_IDX_ENTRY_SIZE;

		prec_put64(q + PREC_IDX_OFFSET, e->offset);
		prec_put64(q + PREC_IDX_DATA_OFFSET, e->data_offset);
		prec_info_encode(q + PREC_IDX_INFO, e);
	}
	prec_put32(p + body, prec_crc32(p, body));
	prec_put64(p + body + 4, index_offset);
	memcpy(p + body + 12, PREC_TRAILER_MAGIC, 8);
	*out = buf;
	*len = total;
	return 0;
}
