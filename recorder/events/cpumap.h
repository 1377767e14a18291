/*
 * cpumap.h - CPU lists ("0-3,6") and the online CPUs.
 *
 * Ownership: rec_cpumap owns its array; rec_cpumap_release() frees it.
 */
#ifndef REC_CPUMAP_H
#define REC_CPUMAP_H

#include <stddef.h>

struct rec_cpumap {
	int *cpu;     /* sorted, unique */
	size_t n;
};

#define REC_CPUMAP_INIT { NULL, 0 }

/* The list grammar CPU, pid and tid lists share: "0-3,6,8-9" (also the
 * format of /sys/devices/system/cpu/online, a final newline allowed).
 * Ids are 0..max; the result is sorted and unique, in a new array.
 * Returns 0, -EINVAL (bad syntax, descending range, id > max, empty),
 * -E2BIG (more than 2^20 ids) or -ENOMEM. */
int rec_idlist_parse(const char *s, long max, int **out, size_t *n);

/* A CPU list (ids up to 65535). Returns as rec_idlist_parse(). */
int rec_cpumap_parse(struct rec_cpumap *m, const char *s);
/* The online CPUs (sysfs, else sysconf). 0 or -errno. */
int rec_cpumap_online(struct rec_cpumap *m);
/* Index of cpu in m, or -1. */
int rec_cpumap_index(const struct rec_cpumap *m, int cpu);
/* Largest cpu + 1 (0 for an empty map). */
int rec_cpumap_max(const struct rec_cpumap *m);
void rec_cpumap_release(struct rec_cpumap *m);

#endif
