/*
 * timed.c - the table of exports that keep time (see timed.h).
 *
 * Each export is an object (new, add per trace, finish, free), behind
 * void pointers here.
 */
#include "analyzer/render/timed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/read/trace.h"
#include "analyzer/render/otlp.h"
#include "analyzer/render/perfetto.h"
#include "analyzer/render/speedscope.h"

struct ops {
	const char *name;
	int binary;
	int (*new)(void **x, const struct ana_filter *f, struct ana_strpool *pool, FILE *out);
	int (*add)(void *x, struct ana_trace *s, const char *host);
	int (*finish)(void *x);
	void (*free)(void *x);
};

struct ana_timed {
	const struct ops *ops;
	void *x;
};

/* Adapters from an export's own object type to the table's void *. */
#define OBJECT_OPS(T, prefix)                                                       \
	static int prefix##_vnew(void **x, const struct ana_filter *f,              \
				 struct ana_strpool *pool, FILE *out)               \
	{                                                                           \
		struct T *o;                                                        \
		int ret = prefix##_new(&o, f, pool, out);                           \
		*x = o;                                                             \
		return ret;                                                         \
	}                                                                           \
	static int prefix##_vadd(void *x, struct ana_trace *s, const char *host)    \
	{                                                                           \
		return prefix##_add(x, s, host);                                    \
	}                                                                           \
	static int prefix##_vfinish(void *x)                                        \
	{                                                                           \
		return prefix##_finish(x);                                          \
	}                                                                           \
	static void prefix##_vfree(void *x)                                         \
	{                                                                           \
		prefix##_free(x);                                                   \
	}
#define OBJECT(prefix) prefix##_vnew, prefix##_vadd, prefix##_vfinish, prefix##_vfree

OBJECT_OPS(ana_perfetto, ana_perfetto)
OBJECT_OPS(ana_speedscope, ana_speedscope)
OBJECT_OPS(ana_otlp, ana_otlp)

static const struct ops timed[] = {
	{ "perfetto", 1, OBJECT(ana_perfetto) },
	{ "speedscope", 0, OBJECT(ana_speedscope) },
	{ "otlp", 1, OBJECT(ana_otlp) },
};

static const struct ops *find(const char *fmt)
{
	for (size_t i = 0; fmt && i < sizeof(timed) / sizeof(timed[0]); i++)
		if (!strcmp(timed[i].name, fmt))
			return &timed[i];
	return NULL;
}

int ana_export_timed_known(const char *fmt)
{
	return find(fmt) != NULL;
}

int ana_export_timed_binary(const char *fmt)
{
	const struct ops *o = find(fmt);
	return o && o->binary;
}

int ana_timed_new(struct ana_timed **out, const char *fmt, const struct ana_filter *f,
		  struct ana_strpool *pool, FILE *fout)
{
	const struct ops *o = find(fmt);
	*out = NULL;
	if (!o)
		return -EINVAL;
	struct ana_timed *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->ops = o;
	int ret = o->new(&t->x, f, pool, fout);
	if (ret < 0) {
		free(t);
		return ret;
	}
	*out = t;
	return 0;
}

int ana_timed_add(struct ana_timed *t, struct ana_trace *s, const char *host)
{
	return t->ops->add(t->x, s, host);
}

int ana_timed_finish(struct ana_timed *t)
{
	return t->ops->finish(t->x);
}

void ana_timed_free(struct ana_timed *t)
{
	if (!t)
		return;
	t->ops->free(t->x);
	free(t);
}

int ana_export_timed(struct ana_trace *s, const struct ana_filter *f, const char *fmt,
		     FILE *out)
{
	struct ana_timed *t;
	int ret = ana_timed_new(&t, fmt, f, &s->pool, out);
	if (ret < 0)
		return ret;
	ret = ana_timed_add(t, s, NULL);
	if (ret >= 0)
		ret = ana_timed_finish(t);
	ana_timed_free(t);
	return ret;
}
