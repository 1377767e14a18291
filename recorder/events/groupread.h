/*
 * groupread.h - decode the bytes of a perf counter read.
 *
 * The same layout comes back from read(2) on a counter fd and inside a
 * sample with PERF_SAMPLE_READ. With PERF_FORMAT_GROUP the kernel returns
 * the leader first whichever member's fd was read: callers map values to
 * members by the ids (PERF_FORMAT_ID), never by position.
 *
 * Layout (linux/perf_event.h, "read_format"):
 *   GROUP:    nr, [enabled], [running], { value, [id], [lost] } x nr
 *   no GROUP: value, [enabled], [running], [id], [lost]
 */
#ifndef REC_GROUPREAD_H
#define REC_GROUPREAD_H

#include <stddef.h>
#include <stdint.h>

#define REC_GROUP_MAX 64   /* members we accept in one read */

struct rec_group_read {
	uint64_t time_enabled;
	uint64_t time_running;
	uint32_t nr;
	uint64_t values[REC_GROUP_MAX];
	uint64_t ids[REC_GROUP_MAX];
	uint64_t lost[REC_GROUP_MAX];
	int has_enabled, has_running, has_id, has_lost;
};

/* Bytes a read of nr members with read_format takes (nr ignored without
 * PERF_FORMAT_GROUP). */
size_t rec_group_read_size(uint64_t read_format, uint32_t nr);

/* Decodes buf[0..len) into out. Returns the bytes consumed, or -EINVAL
 * when len is too short for what read_format and nr announce, -E2BIG when
 * nr exceeds REC_GROUP_MAX. */
long rec_group_read_parse(const void *buf, size_t len, uint64_t read_format,
			  struct rec_group_read *out);

/* Index of the member with kernel id `id`, or -1. */
int rec_group_read_find(const struct rec_group_read *gr, uint64_t id);

#endif
