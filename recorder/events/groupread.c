/*
 * groupread.c - decode perf read_format buffers; see groupread.h.
 */
#include "recorder/events/groupread.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif

size_t rec_group_read_size(uint64_t rf, uint32_t nr)
{
	size_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	size_t times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		       !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);

	if (rf & PERF_FORMAT_GROUP)
		return 8 * (1 + times + per * (size_t)nr);
	return 8 * (times + per);
}

/* Reads the next u64; buf is only 8-byte aligned by luck, so memcpy. */
static uint64_t take(const unsigned char **p)
{
	uint64_t v;

	memcpy(&v, *p, sizeof(v));
	*p += sizeof(v);
	return v;
}

long rec_group_read_parse(const void *buf, size_t len, uint64_t rf,
			  struct rec_group_read *out)
{
	const unsigned char *p = buf;
	uint64_t nr = 1;
	size_t need;

	memset(out, 0, sizeof(*out));
	out->has_enabled = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED);
	out->has_running = !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	out->has_id = !!(rf & PERF_FORMAT_ID);
	out->has_lost = !!(rf & PERF_FORMAT_LOST);

	if (rf & PERF_FORMAT_GROUP) {
		if (len < 8)
			return -EINVAL;
		nr = take(&p);
		if (nr > REC_GROUP_MAX)
			return -E2BIG;
	}
	need = rec_group_read_size(rf, (uint32_t)nr);
	if (len < need)
		return -EINVAL;
	out->nr = (uint32_t)nr;

	if (rf & PERF_FORMAT_GROUP) {
		if (out->has_enabled)
			out->time_enabled = take(&p);
		if (out->has_running)
			out->time_running = take(&p);
		for (uint32_t i = 0; i < out->nr; i++) {
			out->values[i] = take(&p);
			if (out->has_id)
				out->ids[i] = take(&p);
			if (out->has_lost)
				out->lost[i] = take(&p);
		}
	} else {
		out->values[0] = take(&p);
		if (out->has_enabled)
			out->time_enabled = take(&p);
		if (out->has_running)
			out->time_running = take(&p);
		if (out->has_id)
			out->ids[0] = take(&p);
		if (out->has_lost)
			out->lost[0] = take(&p);
	}
	return (long)need;
}

int rec_group_read_find(const struct rec_group_read *gr, uint64_t id)
{
	for (uint32_t i = 0; i < gr->nr; i++)
		if (gr->has_id && gr->ids[i] == id)
			return (int)i;
	return -1;
}
