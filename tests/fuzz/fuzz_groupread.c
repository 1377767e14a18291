/*
 * fuzz_groupread.c - rec_group_read_parse on arbitrary bytes (a sample's
 * PERF_SAMPLE_READ part is kernel bytes copied out of a ring, and a trace
 * replayed from a damaged file may hand anything here), then id lookups
 * and scaling of whatever it decoded.
 *
 * Input: 8 bytes of read_format, the rest the read buffer. Seeds
 * (tests/fuzz/corpus/fuzz_groupread/): the reads perfrec asks for (a group
 * with times and ids, with lost counts), a single counter, the largest
 * group and one over it, a short buffer, an empty group.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format/scale.h"
#include "recorder/events/groupread.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_group_read gr;
	uint64_t rf;
	long used;

	if (size < 8)
		return 0;
	memcpy(&rf, data, 8);
	rf &= 0x1f;   /* the read_format bits that exist */
	used = rec_group_read_parse(data + 8, size - 8, rf, &gr);
	if (used < 0)
		return 0;
	if ((size_t)used > size - 8 || gr.nr > REC_GROUP_MAX)
		__builtin_trap();
	for (uint32_t i = 0; i < gr.nr; i++) {
		struct prec_scaled s;
		int k = rec_group_read_find(&gr, gr.ids[i]);

		if (gr.has_id && (k < 0 || gr.ids[k] != gr.ids[i]))
			__builtin_trap();
		prec_scale(gr.values[i], gr.time_enabled, gr.time_running, &s);
	}
	return 0;
}
