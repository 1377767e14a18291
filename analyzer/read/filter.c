/*
 * filter.c - parsing and matching of the common filters.
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/read/filter.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/read/trace.h"

void ana_filter_init(struct ana_filter *f)
{
	memset(f, 0, sizeof(*f));
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void ana_filter_release(struct ana_filter *f)
{
	free(f->cpus);
	free(f->pids);
	free(f->tids);
	free_strs(f->comms, f->ncomms);
	free_strs(f->events, f->nevents);
	memset(f, 0, sizeof(*f));
}

static int parse_u64(const char *s, const char *end, uint64_t *v)
{
	if (s == end)
		return -EINVAL;
	uint64_t r = 0;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (r > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		r = r * 10 + (uint64_t)(*s - '0');
	}
	*v = r;
	return 0;
}

int ana_parse_ranges(const char *arg, struct ana_range **out, size_t *n)
{
	const char *p = arg;
	if (!*p)
		return -EINVAL;
	while (*p) {
		const char *e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		const char *dash = memchr(p, '-', (size_t)(e - p));
		struct ana_range r;
		if (dash) {
			if (parse_u64(p, dash, &r.lo) || parse_u64(dash + 1, e, &r.hi) ||
			    r.hi < r.lo)
				return -EINVAL;
		} else {
			if (parse_u64(p, e, &r.lo))
				return -EINVAL;
			r.hi = r.lo;
		}
		struct ana_range *a = realloc(*out, (*n + 1) * sizeof(*a));
		if (!a)
			return -ENOMEM;
		*out = a;
		a[(*n)++] = r;
		p = *e ? e + 1 : e;
		if (*e && !*p)
			return -EINVAL;   /* trailing comma */
	}
	return 0;
}

static int split_strs(const char *arg, char ***out, size_t *n)
{
	const char *p = arg;
	if (!*p)
		return -EINVAL;
	for (;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (!len)
			return -EINVAL;
		char **a = realloc(*out, (*n + 1) * sizeof(*a));
		if (!a)
			return -ENOMEM;
		*out = a;
		if (!(a[*n] = strndup(p, len)))
			return -ENOMEM;
		(*n)++;
		if (!e)
			return 0;
		p = e + 1;
	}
}

static int parse_time(const char *s, size_t len, double *v, int *abs_, int *open)
{
	char buf[64];
	*open = len == 0;
	*abs_ = 0;
	if (!len)
		return 0;
	if (*s == '@') {
		*abs_ = 1;
		s++;
		len--;
	}
	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end;
	errno = 0;
	double d = strtod(buf, &end);
	if (errno || *end || !isfinite(d) || d < 0 || d > 1e10)
		return -EINVAL;
	*v = d;
	return 0;
}

int ana_filter_parse(struct ana_filter *f, const char *which, const char *arg,
		     char *err, size_t errlen)
{
	int ret = -EINVAL;
	if (!strcmp(which, "cpu"))
		ret = ana_parse_ranges(arg, &f->cpus, &f->ncpus);
	else if (!strcmp(which, "pid"))
		ret = ana_parse_ranges(arg, &f->pids, &f->npids);
	else if (!strcmp(which, "tid"))
		ret = ana_parse_ranges(arg, &f->tids, &f->ntids);
	else if (!strcmp(which, "comm"))
		ret = split_strs(arg, &f->comms, &f->ncomms);
	else if (!strcmp(which, "event"))
		ret = split_strs(arg, &f->events, &f->nevents);
	else if (!strcmp(which, "time")) {
		const char *c = strchr(arg, ',');
		if (c && !strchr(c + 1, ',') &&
		    !parse_time(arg, (size_t)(c - arg), &f->t0, &f->t0_abs, &f->t0_open) &&
		    !parse_time(c + 1, strlen(c + 1), &f->t1, &f->t1_abs, &f->t1_open) &&
		    !(f->t0_open && f->t1_open)) {
			f->has_time = 1;
			ret = 0;
		}
		if (ret) {
			snprintf(err, errlen, "bad --time '%s': expected START,END in "
				 "seconds from the trace start (e.g. 0.5,2), '@' for "
				 "absolute monotonic seconds (e.g. @1234.5,), either "
				 "side may be empty", arg);
			return ret;
		}
	}
	if (ret == -ENOMEM) {
		snprintf(err, errlen, "out of memory");
		return ret;
	}
	if (ret) {
		if (!strcmp(which, "comm") || !strcmp(which, "event"))
			snprintf(err, errlen, "bad --%s '%s': expected a comma-separated "
				 "list of names", which, arg);
		else
			snprintf(err, errlen, "bad --%s '%s': expected numbers and "
				 "ranges like 0,2-3", which, arg);
		return ret;
	}
	f->active = 1;
	return 0;
}

static uint64_t secs_to_ns(double s)
{
	double ns = s * 1e9;
	return ns >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(ns);
}

int ana_filter_resolve(struct ana_filter *f, const struct ana_trace *s,
		       char *err, size_t errlen)
{
	f->tmin = 0;
	f->tmax = UINT64_MAX;
	if (f->has_time) {
		if (!f->t0_open)
			f->tmin = f->t0_abs ? secs_to_ns(f->t0) : s->start + secs_to_ns(f->t0);
		if (!f->t1_open) {
			uint64_t d = secs_to_ns(f->t1);
			f->tmax = f->t1_abs ? d : (UINT64_MAX - s->start < d ? UINT64_MAX
							   : s->start + d);
		}
		if (f->tmax < f->tmin) {
			snprintf(err, errlen, "bad --time: END is before START");
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < f->nevents; i++) {
		int found = 0;
		for (size_t j = 0; j < s->nevents; j++)
			if (!strcmp(f->events[i], ana_trace_event_name(s, (int)j)))
				found = 1;
		if (!found) {
			size_t o = (size_t)snprintf(err, errlen, "no event '%s' in this "
						    "trace; events:", f->events[i]);
			for (size_t j = 0; j < s->nevents && o < errlen; j++)
				o += (size_t)snprintf(err + o, errlen - o, "%s %s",
						      j ? "," : "",
						      ana_trace_event_name(s, (int)j));
			if (!s->nevents && o < errlen)
				snprintf(err + o, errlen - o, " (none described)");
			return -EINVAL;
		}
	}
	return 0;
}

static int in_ranges(const struct ana_range *r, size_t n, uint64_t v)
{
	if (!n)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (v >= r[i].lo && v <= r[i].hi)
			return 1;
	return 0;
}

int ana_filter_cpu(const struct ana_filter *f, uint32_t cpu)
{
	return in_ranges(f->cpus, f->ncpus, cpu);
}

int ana_filter_pid(const struct ana_filter *f, uint32_t pid)
{
	return in_ranges(f->pids, f->npids, pid);
}

int ana_filter_tid(const struct ana_filter *f, uint32_t tid)
{
	return in_ranges(f->tids, f->ntids, tid);
}

int ana_filter_comm(const struct ana_filter *f, const char *comm)
{
	if (!f->ncomms)
		return 1;
	for (size_t i = 0; i < f->ncomms; i++)
		if (comm && !strcmp(comm, f->comms[i]))
			return 1;
	return 0;
}

int ana_filter_event(const struct ana_filter *f, const char *name)
{
	if (!f->nevents)
		return 1;
	for (size_t i = 0; i < f->nevents; i++)
		if (name && !strcmp(name, f->events[i]))
			return 1;
	return 0;
}

int ana_filter_time(const struct ana_filter *f, uint64_t t)
{
	return !f->has_time || (t >= f->tmin && t <= f->tmax);
}

int ana_filter_offcpu(const struct ana_filter *f, uint64_t count, uint32_t cpu,
		      uint32_t pid, uint32_t tid, uint64_t t)
{
	if (count ? f->ncpus != 0 : !ana_filter_cpu(f, cpu))
		return 0;
	return ana_filter_pid(f, pid) && ana_filter_tid(f, tid) && ana_filter_time(f, t);
}
