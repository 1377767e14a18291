/*
 * status.h - the live status line of `perfrec record`.
 *
 * Pure formatting (no I/O), so it is unit-testable; the caller decides
 * where it goes (stderr on a tty) and how often (once a second).
 */
#ifndef REC_STATUS_H
#define REC_STATUS_H

#include <stddef.h>
#include <stdint.h>

struct rec_status_in {
	uint64_t elapsed_ns;
	uint64_t records;        /* records seen in total */
	uint64_t records_prev;   /* at the previous line */
	uint64_t dt_ns;          /* time since the previous line */
	uint64_t lost;
	uint64_t bytes_written;  /* file bytes */
	uint64_t bytes_raw;      /* packet bytes before compression */
};

/* e.g. "[perfrec] 12.0s  48.2k rec/s  lost 0  3.1 MiB written  ratio 5.2x" */
const char *rec_status_format(const struct rec_status_in *in, char *buf,
			      size_t len);
/* 1536 -> "1.5 KiB" */
const char *rec_status_bytes(uint64_t b, char *buf, size_t len);

#endif
