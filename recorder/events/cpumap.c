/*
 * cpumap.c - CPU lists; see cpumap.h.
 */
#include "recorder/events/cpumap.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CPU 65535
/* Entries one list may expand to ("0-4000000" is refused, not allocated). */
#define MAX_ENTRIES (1 << 20)

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int read_num(const char **p, long max, long *out)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*out = strtol(*p, &end, 10);
	if (errno || *out > max)
		return -EINVAL;
	*p = end;
	return 0;
}

int rec_idlist_parse(const char *s, long max, int **out, size_t *count)
{
	size_t cap = 0, n = 0;
	int *v = NULL;
	const char *p = s;

	*out = NULL;
	*count = 0;
	while (*p) {
		long lo, hi;

		if (read_num(&p, max, &lo) < 0)
			goto bad;
		hi = lo;
		if (*p == '-') {
			p++;
			if (read_num(&p, max, &hi) < 0 || hi < lo)
				goto bad;
		}
		if ((size_t)(hi - lo) >= MAX_ENTRIES - n) {
			free(v);
			return -E2BIG;
		}
		for (long c = lo; c <= hi; c++) {
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 16;
				int *nv = realloc(v, nc * sizeof(*nv));

				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
				cap = nc;
			}
			v[n++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p == '\n' && !p[1])
			p++;
		else if (*p)
			goto bad;
	}
	if (!n)
		goto bad;
	qsort(v, n, sizeof(*v), cmp_int);
	{
		size_t u = 0;

		for (size_t i = 0; i < n; i++)
			if (!u || v[u - 1] != v[i])
				v[u++] = v[i];
		n = u;
	}
	*out = v;
	*count = n;
	return 0;
bad:
	free(v);
	return -EINVAL;
}

int rec_cpumap_parse(struct rec_cpumap *m, const char *s)
{
	return rec_idlist_parse(s, MAX_CPU, &m->cpu, &m->n);
}

int rec_cpumap_online(struct rec_cpumap *m)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");

	if (f) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);

		fclose(f);
		buf[n] = '\0';
		if (rec_cpumap_parse(m, buf) == 0)
			return 0;
	}
	{
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		if (ncpu <= 0)
			return -ENOENT;
		snprintf(buf, sizeof(buf), "0-%ld", ncpu - 1);
	}
	return rec_cpumap_parse(m, buf);
}

int rec_cpumap_index(const struct rec_cpumap *m, int cpu)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->cpu[i] == cpu)
			return (int)i;
	return -1;
}

int rec_cpumap_max(const struct rec_cpumap *m)
{
	return m->n ? m->cpu[m->n - 1] + 1 : 0;
}

void rec_cpumap_release(struct rec_cpumap *m)
{
	if (!m)
		return;
	free(m->cpu);
	m->cpu = NULL;
	m->n = 0;
}
