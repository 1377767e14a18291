/*
 * timed.c - the table of exports that keep time (see timed.h).
 */
#include "analyzer/render/timed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/read/trace.h"
#include "analyzer/render/otlp.h"
#include "analyzer/render/perfetto.h"
#include "analyzer/render/speedscope.h"

static const struct {
	const char *name;
	int binary;
	int (*run)(struct ana_trace *s, const struct ana_filter *f, FILE *out);
} timed[] = {
	{ "perfetto", 1, ana_export_perfetto },
	{ "speedscope", 0, ana_export_speedscope },
	{ "otlp", 1, ana_export_otlp },
};

static int find(const char *fmt)
{
	for (size_t i = 0; fmt && i < sizeof(timed) / sizeof(timed[0]); i++)
		if (!strcmp(timed[i].name, fmt))
			return (int)i;
	return -1;
}

int ana_export_timed_known(const char *fmt)
{
	return find(fmt) >= 0;
}

int ana_export_timed_binary(const char *fmt)
{
	int i = find(fmt);
	return i >= 0 && timed[i].binary;
}

int ana_export_timed(struct ana_trace *s, const struct ana_filter *f, const char *fmt,
		     FILE *out)
{
	int i = find(fmt);
	return i < 0 ? -EINVAL : timed[i].run(s, f, out);
}
