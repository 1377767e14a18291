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
#include <time.h>

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
	free_strs(f->hosts, f->nhosts);
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
	else if (!strcmp(which, "host"))
		ret = split_strs(arg, &f->hosts, &f->nhosts);
	else if (!strcmp(which, "since") || !strcmp(which, "until")) {
		int since = which[0] == 's';
		uint64_t ns;
		ret = ana_parse_wall(arg, ana_wall_now(), &ns);
		if (ret) {
			snprintf(err, errlen, "bad --%s '%s': expected a wall-clock time "
				 "such as '2026-11-26 03:00', '2026-11-26T03:00:00+01:00' "
				 "(UTC unless a zone is given) or a time before now such as "
				 "-2h, -30m, -90s, -1d", which, arg);
			return ret;
		}
		f->has_wall = 1;
		if (since)
			f->since = ns;
		else
			f->until = ns;
		f->has_since |= since;
		f->has_until |= !since;
		if (f->has_since && f->has_until && f->until < f->since) {
			snprintf(err, errlen, "bad --until '%s': before --since", arg);
			return -EINVAL;
		}
	}
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
		if (!strcmp(which, "comm") || !strcmp(which, "event") ||
		    !strcmp(which, "host"))
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

int ana_filter_resolve_clock(struct ana_filter *f, uint64_t start, uint64_t realtime_ns,
			     uint64_t monotonic_ns, char *err, size_t errlen)
{
	f->tmin = 0;
	f->tmax = UINT64_MAX;
	if (f->has_wall) {
		/* wall = realtime_ns + (t - monotonic_ns), solved for t */
		if (!realtime_ns) {   /* no clock reference: nothing is inside */
			f->tmin = UINT64_MAX;
			f->tmax = 0;
			return 0;
		}
		if (f->has_since)
			f->tmin = f->since >= realtime_ns ?
				  monotonic_ns + (f->since - realtime_ns) :
				  (realtime_ns - f->since > monotonic_ns ? 0 :
				   monotonic_ns - (realtime_ns - f->since));
		if (f->has_until) {
			if (f->until < realtime_ns)
				f->tmax = realtime_ns - f->until > monotonic_ns ? 0 :
					  monotonic_ns - (realtime_ns - f->until);
			else
				f->tmax = f->until - realtime_ns > UINT64_MAX - monotonic_ns ?
					  UINT64_MAX : monotonic_ns + (f->until - realtime_ns);
		}
	}
	if (f->has_time) {
		uint64_t lo = 0, hi = UINT64_MAX;
		if (!f->t0_open)
			lo = f->t0_abs ? secs_to_ns(f->t0) : start + secs_to_ns(f->t0);
		if (!f->t1_open) {
			uint64_t d = secs_to_ns(f->t1);
			hi = f->t1_abs ? d : (UINT64_MAX - start < d ? UINT64_MAX : start + d);
		}
		if (hi < lo) {
			snprintf(err, errlen, "bad --time: END is before START");
			return -EINVAL;
		}
		/* with --since/--until too: the times inside both */
		if (lo > f->tmin)
			f->tmin = lo;
		if (hi < f->tmax)
			f->tmax = hi;
	}
	return 0;
}

int ana_filter_resolve(struct ana_filter *f, const struct ana_trace *s,
		       char *err, size_t errlen)
{
	int ret = ana_filter_resolve_clock(f, s->start, s->header ? s->header->realtime_ns : 0,
					   s->header ? s->header->monotonic_ns : 0, err, errlen);
	if (ret)
		return ret;
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

int ana_filter_host(const struct ana_filter *f, const char *host)
{
	if (!f->nhosts)
		return 1;
	for (size_t i = 0; i < f->nhosts; i++)
		if (host && !strcmp(host, f->hosts[i]))
			return 1;
	return 0;
}

uint64_t ana_wall_now(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_REALTIME, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil): timegm() is not in C11 or POSIX. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static int digits(const char **p, int n, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return -EINVAL;
		*v = *v * 10 + (unsigned)(**p - '0');
	}
	return 0;
}

int ana_parse_wall(const char *arg, uint64_t now, uint64_t *out)
{
	const char *p = arg;
	if (*p == '-') {   /* -2h: before now */
		char *end;
		errno = 0;
		double v = strtod(p + 1, &end);
		double unit = !strcmp(end, "s") ? 1 : !strcmp(end, "m") ? 60 :
			      !strcmp(end, "h") ? 3600 : !strcmp(end, "d") ? 86400 : 0;
		if (errno || end == p + 1 || !unit || !isfinite(v) || v < 0 || v * unit > 3.2e9)
			return -EINVAL;
		uint64_t d = secs_to_ns(v * unit);
		*out = d > now ? 0 : now - d;
		return 0;
	}
	if (!strcmp(p, "now")) {
		*out = now;
		return 0;
	}
	unsigned y, mo, d, h = 0, mi = 0, s = 0;
	if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
	    digits(&p, 2, &d) || mo < 1 || mo > 12 || d < 1 || d > 31 || y < 1970)
		return -EINVAL;
	uint64_t frac = 0;
	if (*p == ' ' || *p == 'T') {
		p++;
		if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || h > 23 || mi > 59)
			return -EINVAL;
		if (*p == ':') {
			p++;
			if (digits(&p, 2, &s) || s > 60)
				return -EINVAL;
			if (*p == '.') {
				uint64_t scale = 100000000;
				p++;
				if (*p < '0' || *p > '9')
					return -EINVAL;
				for (; *p >= '0' && *p <= '9'; p++, scale /= 10)
					frac += scale * (uint64_t)(*p - '0');
			}
		}
	}
	int64_t off = 0;   /* seconds east of UTC */
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1;
		unsigned zh, zm = 0;
		if (digits(&p, 2, &zh) || zh > 23)
			return -EINVAL;
		if (*p == ':')
			p++;
		if (*p && (digits(&p, 2, &zm) || zm > 59))
			return -EINVAL;
		off = sign * (int64_t)(zh * 3600 + zm * 60);
	} else if (*p == ' ' && !strcmp(p + 1, "UTC")) {
		p += 4;
	}
	if (*p)
		return -EINVAL;
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - off;
	if (secs < 0)
		return -EINVAL;
	*out = (uint64_t)secs * 1000000000ull + frac;
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

int ana_filter_sample(const struct ana_filter *f, struct ana_trace *s,
		      const struct prec_packet *p, const char **comm)
{
	const Perfrec__Sample *smp = p->pkt->sample;
	if (comm)
		*comm = NULL;
	if (!f)
		return 1;
	if (!ana_filter_cpu(f, smp->cpu) || !ana_filter_pid(f, smp->pid) ||
	    !ana_filter_tid(f, smp->tid) || !ana_filter_time(f, p->time) ||
	    !ana_filter_event(f, ana_trace_event_name(s, ana_trace_event_of(s, smp->id))))
		return 0;
	if (!f->ncomms)
		return 1;
	const char *c = ana_trace_comm_name(s, smp->tid, p->time);
	if (!c)
		return -ENOMEM;
	if (comm)
		*comm = c;
	return ana_filter_comm(f, c);
}

int ana_filter_time(const struct ana_filter *f, uint64_t t)
{
	return !ana_filter_windowed(f) || (t >= f->tmin && t <= f->tmax);
}

int ana_filter_offcpu(const struct ana_filter *f, uint64_t count, uint32_t cpu,
		      uint32_t pid, uint32_t tid, uint64_t t)
{
	if (count ? f->ncpus != 0 : !ana_filter_cpu(f, cpu))
		return 0;
	return ana_filter_pid(f, pid) && ana_filter_tid(f, tid) && ana_filter_time(f, t);
}
