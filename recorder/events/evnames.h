/*
 * evnames.h - the events known by name: hardware and software events
 * (with perf's aliases) and hw-cache events (cache-op-result), for the
 * parser (evparse.h) and for `perfrec list`.
 */
#ifndef REC_EVNAMES_H
#define REC_EVNAMES_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The type and config of a named or hw-cache event; false if unknown. */
bool rec_evnames_lookup(const char *name, uint32_t *type, uint64_t *config);

/* The i-th named hardware/software event: its name, type and config, or
 * NULL past the end. Aliases (e.g. "cycles") are listed after their main
 * name with *alias_of set to it (else NULL). */
const char *rec_evnames_named(size_t i, uint32_t *type, uint64_t *config,
			      const char **alias_of);
/* The i-th hw-cache event name written into buf (e.g.
 * "L1-dcache-load-misses") with its config; returns buf, or NULL past the
 * end. */
const char *rec_evnames_hwcache(size_t i, char *buf, size_t len,
				uint64_t *config);

#endif
