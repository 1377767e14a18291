/*
 * tracefs.h - where tracefs is (tracepoint ids and formats live there).
 */
#ifndef REC_TRACEFS_H
#define REC_TRACEFS_H

#include <stddef.h>

/* Finds tracefs (/sys/kernel/tracing, /sys/kernel/debug/tracing), mounting
 * it when absent. Returns 0 and the path in buf, or -errno and the reason
 * (cause and fix) in why, for the caller to put into its own message. */
int rec_tracefs_path(char *buf, size_t len, char *why, size_t whylen);

/* tracefs is mounted on dir but this user may not read it there: the
 * cause and the fix (remount with mode=755, or the privilege) into why.
 * Returns -EACCES. */
int rec_tracefs_denied(const char *dir, char *why, size_t whylen);

#endif
