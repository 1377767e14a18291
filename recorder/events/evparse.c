/*
 * evparse.c - event strings to perf_event_attr; see evparse.h.
 *
 * Grammar (informal):
 *   list   := item (',' item)*
 *   item   := '{' event (',' event)* '}' [':' mods] | event
 *   event  := 'mem:' ADDR ['/' LEN] [':' ACCESS] [':' mods]
 *           | PMU '/' terms '/' [':' mods]
 *           | SYS ':' NAME [':' mods]           (tracepoint)
 *           | NAME [':' mods]                   (named, hw-cache, rNNN)
 * Commas inside '{}' and inside a PMU's '/.../' do not split items.
 *
 * Every error message quotes the part of the string where parsing failed,
 * so the user sees what to fix.
 */
#include "recorder/events/evparse.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/events/evnames.h"
#include "recorder/events/tracefs.h"
#include "recorder/log.h"

#define PMU_DIR "/sys/bus/event_source/devices"

/* ---- error reporting */

/* Writes "<message> (at '<str from pos, cut at 40 chars>')" into err. */
static int fail(char *err, size_t errlen, const char *at, int ret,
		const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!err || !errlen)
		return ret;
	if (at && *at) {
		size_t n = strlen(at);
		snprintf(err, errlen, "%s (at '%.40s%s')", msg, at,
			 n > 40 ? "..." : "");
	} else {
		snprintf(err, errlen, "%s", msg);
	}
	return ret;
}

/* ---- small helpers */

static int read_small_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return (int)n;
}

/* Whole file into a malloc'd string (tracepoint formats are a few KiB). */
static char *read_whole_file(const char *path)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *nb;

			if (cap > (1u << 20))
				break;
			nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

static bool valid_ident(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' &&
		    s[i] != '.')
			return false;
	return true;
}

/* ---- modifiers */

static int apply_mods(struct rec_event *ev, const char *mods, const char *at,
		      char *err, size_t errlen)
{
	bool u = false, k = false, h = false;

	for (const char *p = mods; *p; p++) {
		switch (*p) {
		case 'u': u = true; break;
		case 'k': k = true; break;
		case 'h': h = true; break;
		case 'p':
			if (ev->attr.precise_ip < 3)
				ev->attr.precise_ip++;
			break;
		case 'P': ev->attr.precise_ip = 3; break;
		case 'S': ev->leader_sample = true; break;
		case 'D': ev->attr.pinned = 1; break;
		case 'I': ev->attr.exclude_idle = 1; break;
		case 'G': ev->attr.exclude_host = 1; break;
		case 'H': ev->attr.exclude_guest = 1; break;
		default:
			return fail(err, errlen, at + (p - mods), -EINVAL,
				    "unknown modifier '%c' in ':%s' (known: u k h p P S D I G H)",
				    *p, mods);
		}
	}
	if (u || k || h) {
		ev->attr.exclude_user = !u;
		ev->attr.exclude_kernel = !k;
		ev->attr.exclude_hv = !h;
	}
	/* A tracepoint fires in the kernel: excluding kernel samples would
	 * record nothing at all, silently. */
	if (ev->tracepoint)
		ev->attr.exclude_kernel = 0;
	return 0;
}

/* ---- event kinds */

static bool lookup_plain(const char *name, struct perf_event_attr *attr)
{
	uint32_t type;
	uint64_t config;

	if (rec_evnames_lookup(name, &type, &config)) {
		attr->type = type;
		attr->config = config;
		return true;
	}
	/* raw: r followed by 1..16 hex digits */
	if (name[0] == 'r' && name[1]) {
		size_t n = strlen(name + 1);
		bool hex = n <= 16;

		for (size_t i = 1; name[i] && hex; i++)
			hex = isxdigit((unsigned char)name[i]);
		if (hex) {
			attr->type = PERF_TYPE_RAW;
			attr->config = strtoull(name + 1, NULL, 16);
			return true;
		}
	}
	return false;
}

static int parse_tracepoint(struct rec_event *ev, const char *sys,
			    const char *name, const char *at, char *err,
			    size_t errlen)
{
	char tfs[256], path[768], buf[64], terr[512];
	uint64_t id;
	int ret;

	if (!valid_ident(sys, strlen(sys)) || !valid_ident(name, strlen(name)))
		return fail(err, errlen, at, -EINVAL,
			    "bad tracepoint name '%s:%s'", sys, name);
	ret = rec_tracefs_path(tfs, sizeof(tfs), terr, sizeof(terr));
	if (ret < 0)
		return fail(err, errlen, at, ret,
			    "tracepoint '%s:%s' needs tracefs: %s", sys, name, terr);
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", tfs, sys, name);
	ret = read_small_file(path, buf, sizeof(buf));
	if (ret == -ENOENT)
		return fail(err, errlen, at, -ENOENT,
			    "unknown tracepoint '%s:%s' (no %s): see 'perfrec list'",
			    sys, name, path);
	if (ret == -EACCES) {
		rec_tracefs_denied(tfs, terr, sizeof(terr));
		return fail(err, errlen, at, ret, "tracepoint '%s:%s': %s", sys, name, terr);
	}
	if (ret < 0)
		return fail(err, errlen, at, ret, "cannot read %s: %s", path,
			    strerror(-ret));
	if (parse_u64(buf, &id) < 0)
		return fail(err, errlen, at, -EINVAL, "bad tracepoint id '%s' in %s",
			    buf, path);
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", tfs, sys, name);
	ev->tp_format = read_whole_file(path);
	ev->tracepoint = true;
	ev->tp_id = id;
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = id;
	return 0;
}

static int parse_breakpoint(struct rec_event *ev, char *spec, const char *at,
			    char **mods, char *err, size_t errlen)
{
	/* spec: ADDR[/LEN][:ACCESS][:MODS], after "mem:" */
	char *access = strchr(spec, ':'), *slash;
	uint64_t addr, len = 0;
	unsigned type = 0;

	*mods = NULL;
	if (access) {
		*access++ = '\0';
		char *m = strchr(access, ':');
		if (m) {
			*m++ = '\0';
			*mods = m;
		}
	}
	slash = strchr(spec, '/');
	if (slash) {
		*slash++ = '\0';
		if (parse_u64(slash, &len) < 0 ||
		    (len != 1 && len != 2 && len != 4 && len != 8))
			return fail(err, errlen, at, -EINVAL,
				    "bad breakpoint length '%s' (1, 2, 4 or 8)", slash);
	}
	if (parse_u64(spec, &addr) < 0)
		return fail(err, errlen, at, -EINVAL,
			    "bad breakpoint address '%s' (e.g. mem:0x1000)", spec);
	if (access && *access) {
		for (char *p = access; *p; p++) {
			if (*p == 'r')
				type |= HW_BREAKPOINT_R;
			else if (*p == 'w')
				type |= HW_BREAKPOINT_W;
			else if (*p == 'x')
				type |= HW_BREAKPOINT_X;
			else if (!*mods) {
				/* "mem:ADDR:u": the part is modifiers */
				*mods = access;
				type = 0;
				break;
			} else {
				return fail(err, errlen, at, -EINVAL,
					    "bad breakpoint access '%s' (r, w, x)", access);
			}
		}
	}
	if (!type)
		type = HW_BREAKPOINT_R | HW_BREAKPOINT_W;
	if ((type & HW_BREAKPOINT_X) && type != HW_BREAKPOINT_X)
		return fail(err, errlen, at, -EINVAL,
			    "breakpoint access 'x' cannot be combined with r/w");
	if (!len)
		len = type == HW_BREAKPOINT_X ? sizeof(long) : HW_BREAKPOINT_LEN_4;
	ev->attr.type = PERF_TYPE_BREAKPOINT;
	ev->attr.config = 0;
	ev->attr.bp_type = type;
	ev->attr.bp_addr = addr;
	ev->attr.bp_len = len;
	return 0;
}

/* Puts value into the attr field bits that a PMU format file describes,
 * e.g. "config:0-7" or "config1:0-15,32-35". */
static int apply_format(struct perf_event_attr *attr, const char *fmt,
			uint64_t value, const char *term, const char *at,
			char *err, size_t errlen)
{
	char field[16];
	const char *p = strchr(fmt, ':');
	uint64_t *dst;
	unsigned shift = 0;

	if (!p || (size_t)(p - fmt) >= sizeof(field))
		return fail(err, errlen, at, -EINVAL, "bad PMU format '%s' for '%s'",
			    fmt, term);
	memcpy(field, fmt, (size_t)(p - fmt));
	field[p - fmt] = '\0';
	if (!strcmp(field, "config"))
		dst = (uint64_t *)&attr->config;
	else if (!strcmp(field, "config1"))
		dst = (uint64_t *)&attr->config1;
	else if (!strcmp(field, "config2"))
		dst = (uint64_t *)&attr->config2;
	else
		return fail(err, errlen, at, -EINVAL,
			    "PMU term '%s' uses field '%s', which perfrec does not know",
			    term, field);
	p++;
	while (*p) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p)
			return fail(err, errlen, at, -EINVAL,
				    "bad PMU format '%s' for '%s'", fmt, term);
		if (*end == '-') {
			p = end + 1;
			hi = strtoul(p, &end, 10);
		}
		if (hi < lo || hi > 63)
			return fail(err, errlen, at, -EINVAL,
				    "bad PMU format '%s' for '%s'", fmt, term);
		for (unsigned long b = lo; b <= hi; b++, shift++) {
			if (shift < 64 && (value >> shift) & 1)
				*dst |= 1ull << b;
			else if (shift < 64)
				*dst &= ~(1ull << b);
		}
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return fail(err, errlen, at, -EINVAL,
				    "bad PMU format '%s' for '%s'", fmt, term);
	}
	if (shift < 64 && (value >> shift))
		return fail(err, errlen, at, -ERANGE,
			    "value 0x%llx of '%s' does not fit in %u bits",
			    (unsigned long long)value, term, shift);
	return 0;
}

static int parse_pmu_terms(struct rec_event *ev, const char *pmu, char *terms,
			   const char *at, int depth, char *err, size_t errlen)
{
	char *save = NULL;

	for (char *t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '='), path[512], fmt[256];
		uint64_t value = 1;
		int ret;

		if (eq) {
			*eq++ = '\0';
			if (parse_u64(eq, &value) < 0)
				return fail(err, errlen, at, -EINVAL,
					    "bad value '%s' for PMU term '%s'", eq, t);
		}
		if (!valid_ident(t, strlen(t)))
			return fail(err, errlen, at, -EINVAL, "bad PMU term '%s'", t);
		if (!strcmp(t, "config")) {
			ev->attr.config = value;
			continue;
		}
		if (!strcmp(t, "config1")) {
			ev->attr.config1 = value;
			continue;
		}
		if (!strcmp(t, "config2")) {
			ev->attr.config2 = value;
			continue;
		}
		if (!strcmp(t, "period")) {
			ev->attr.sample_period = value;
			continue;
		}
		snprintf(path, sizeof(path), PMU_DIR "/%s/format/%s", pmu, t);
		ret = read_small_file(path, fmt, sizeof(fmt));
		if (ret >= 0) {
			ret = apply_format(&ev->attr, fmt, value, t, at, err, errlen);
			if (ret < 0)
				return ret;
			continue;
		}
		/* an event alias: events/<name> holds terms like "event=0x3c" */
		snprintf(path, sizeof(path), PMU_DIR "/%s/events/%s", pmu, t);
		ret = read_small_file(path, fmt, sizeof(fmt));
		if (ret >= 0 && !eq && depth == 0) {
			ret = parse_pmu_terms(ev, pmu, fmt, at, depth + 1, err, errlen);
			if (ret < 0)
				return ret;
			continue;
		}
		return fail(err, errlen, at, -EINVAL,
			    "unknown term '%s' for PMU '%s' (see %s/%s/format and events)",
			    t, pmu, PMU_DIR, pmu);
	}
	return 0;
}

static int parse_pmu(struct rec_event *ev, char *s, char **mods,
		     const char *at, char *err, size_t errlen)
{
	/* s: PMU/terms/[:mods] */
	char *slash = strchr(s, '/'), *close, path[512], buf[64];
	uint64_t type;
	int ret;

	*slash = '\0';
	close = strrchr(slash + 1, '/');
	if (!close)
		return fail(err, errlen, at, -EINVAL,
			    "PMU event '%s/...' is missing its closing '/'", s);
	*close = '\0';
	*mods = NULL;
	if (close[1] == ':')
		*mods = close + 2;
	else if (close[1])
		return fail(err, errlen, at, -EINVAL,
			    "unexpected '%s' after PMU event", close + 1);
	if (!valid_ident(s, strlen(s)) || strchr(s, '.'))
		return fail(err, errlen, at, -EINVAL, "bad PMU name '%s'", s);
	snprintf(path, sizeof(path), PMU_DIR "/%s/type", s);
	ret = read_small_file(path, buf, sizeof(buf));
	if (ret < 0)
		return fail(err, errlen, at, -ENOENT,
			    "unknown PMU '%s' (not in " PMU_DIR "): see 'perfrec list'", s);
	if (parse_u64(buf, &type) < 0 || type > UINT32_MAX)
		return fail(err, errlen, at, -EINVAL, "bad PMU type in %s", path);
	ev->attr.type = (uint32_t)type;
	ev->pmu = strdup(s);
	if (!ev->pmu)
		return -ENOMEM;
	return parse_pmu_terms(ev, s, slash + 1, at, 0, err, errlen);
}

/* Parses one event (no braces) of n bytes at s into ev. `at` is where it
 * begins in the user's string (for messages). */
static int parse_one(struct rec_event *ev, const char *s, size_t n,
		     char *err, size_t errlen)
{
	char *buf = strndup(s, n), *mods = NULL;
	int ret = 0;

	memset(ev, 0, sizeof(*ev));
	ev->group = -1;
	if (!buf)
		return -ENOMEM;
	ev->name = strndup(s, n);
	if (!ev->name) {
		ret = -ENOMEM;
		goto out;
	}
	ev->attr.size = sizeof(ev->attr);
	if (!n) {
		ret = fail(err, errlen, s, -EINVAL, "empty event name");
		goto out;
	}
	if (!strncmp(buf, "mem:", 4)) {
		ret = parse_breakpoint(ev, buf + 4, s, &mods, err, errlen);
	} else if (strchr(buf, '/')) {
		ret = parse_pmu(ev, buf, &mods, s, err, errlen);
	} else {
		char *c1 = strchr(buf, ':'), *c2 = NULL;

		if (c1) {
			*c1++ = '\0';
			c2 = strchr(c1, ':');
			if (c2)
				*c2++ = '\0';
		}
		if (c1 && !c2 && lookup_plain(buf, &ev->attr)) {
			mods = c1;
		} else if (c1) {
			ret = parse_tracepoint(ev, buf, c1, s, err, errlen);
			mods = c2;
		} else if (!lookup_plain(buf, &ev->attr)) {
			ret = fail(err, errlen, s, -ENOENT,
				   "unknown event '%s': see 'perfrec list'", buf);
		}
	}
	if (!ret && mods) {
		if (!*mods)
			ret = fail(err, errlen, s, -EINVAL, "empty modifier after ':'");
		else
			ret = apply_mods(ev, mods, s + (mods - buf), err, errlen);
	}
out:
	free(buf);
	return ret;
}

static void event_release(struct rec_event *ev)
{
	free(ev->name);
	free(ev->pmu);
	free(ev->tp_format);
	memset(ev, 0, sizeof(*ev));
}

void rec_evspecs_release(struct rec_evspecs *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		event_release(&l->ev[i]);
	for (size_t i = 0; i < l->ngroups; i++)
		free(l->groups[i].name);
	free(l->ev);
	free(l->groups);
	l->ev = NULL;
	l->groups = NULL;
	l->n = l->ngroups = 0;
}

static int push_event(struct rec_evspecs *l, struct rec_event *ev)
{
	struct rec_event *nv = realloc(l->ev, (l->n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	l->ev = nv;
	l->ev[l->n++] = *ev;
	return 0;
}

/* Length of the item starting at s: up to the next top-level ',' (outside
 * braces and PMU slashes) or the end. Sets *bad to the offending position
 * on unbalanced braces. */
static size_t item_len(const char *s, bool in_group, const char **bad,
		       const char **why)
{
	int depth = 0;
	bool in_pmu = false, mem = !strncmp(s, "mem:", 4);
	size_t i;

	*bad = NULL;
	for (i = 0; s[i]; i++) {
		char c = s[i];

		if (c == '/' && !mem) {
			in_pmu = !in_pmu;
		} else if (in_pmu) {
			continue;
		} else if (c == '{') {
			if (in_group || depth) {
				*bad = s + i;
				*why = "groups cannot be nested";
				return i;
			}
			depth++;
		} else if (c == '}') {
			if (!depth) {
				if (!in_group) {
					*bad = s + i;
					*why = "unexpected '}'";
				}
				return i;
			}
			depth--;
		} else if (c == ',' && !depth) {
			return i;
		}
	}
	if (depth) {
		*bad = s;
		*why = "group is missing its closing '}'";
	}
	return i;
}

static int parse_group(struct rec_evspecs *l, const char *s, size_t n,
		       char *err, size_t errlen)
{
	/* s = "{a,b,...}[:mods]" */
	const char *close = memchr(s, '}', n), *p = s + 1;
	struct rec_group g = { 0 };
	char *mods = NULL;
	int ret = 0;

	if (!close)
		return fail(err, errlen, s, -EINVAL, "group is missing its '}'");
	if (close + 1 < s + n) {
		if (close[1] != ':' || close + 2 >= s + n)
			return fail(err, errlen, close + 1, -EINVAL,
				    "expected ':modifiers' after '}'");
		mods = strndup(close + 2, (size_t)(s + n - close - 2));
		if (!mods)
			return -ENOMEM;
	}
	g.name = strndup(s, n);
	if (!g.name) {
		free(mods);
		return -ENOMEM;
	}
	g.first = l->n;
	while (p < close) {
		const char *bad, *why = NULL;
		size_t len = item_len(p, true, &bad, &why);
		struct rec_event ev;

		if (bad) {
			ret = fail(err, errlen, bad, -EINVAL, "%s", why);
			goto out;
		}
		if (p + len > close)
			len = (size_t)(close - p);
		ret = parse_one(&ev, p, len, err, errlen);
		if (!ret && mods)
			ret = apply_mods(&ev, mods, close + 2, err, errlen);
		if (!ret && ev.leader_sample && !mods)
			ret = fail(err, errlen, p, -EINVAL,
				   "':S' belongs after the group: {a,b}:S");
		if (ret) {
			event_release(&ev);
			goto out;
		}
		ev.group = (int)l->ngroups;
		ev.member = (int)(l->n - g.first);
		ret = push_event(l, &ev);
		if (ret) {
			event_release(&ev);
			goto out;
		}
		g.n++;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!g.n) {
		ret = fail(err, errlen, s, -EINVAL, "empty group");
		goto out;
	}
	g.leader_sample = l->ev[g.first].leader_sample;
	if (g.leader_sample && g.n < 2) {
		ret = fail(err, errlen, s, -EINVAL,
			   "':S' needs a group of at least two events");
		goto out;
	}
	{
		struct rec_group *ng = realloc(l->groups,
					       (l->ngroups + 1) * sizeof(*ng));
		if (!ng) {
			ret = -ENOMEM;
			goto out;
		}
		l->groups = ng;
		l->groups[l->ngroups++] = g;
		g.name = NULL;
	}
out:
	free(mods);
	free(g.name);
	return ret;
}

static int evspecs_parse(struct rec_evspecs *l, const char *str, char *err,
			 size_t errlen)
{
	size_t n0 = l->n, g0 = l->ngroups;
	const char *p = str;
	int ret = 0;

	if (err && errlen)
		err[0] = '\0';
	if (!str || !*str)
		return fail(err, errlen, NULL, -EINVAL, "empty event list");
	while (*p) {
		const char *bad, *why = NULL;
		size_t len = item_len(p, false, &bad, &why);

		if (bad) {
			ret = fail(err, errlen, bad, -EINVAL, "%s", why);
			break;
		}
		if (!len) {
			ret = fail(err, errlen, p, -EINVAL, "empty event name");
			break;
		}
		if (*p == '{') {
			ret = parse_group(l, p, len, err, errlen);
		} else {
			struct rec_event ev;

			ret = parse_one(&ev, p, len, err, errlen);
			if (!ret && ev.leader_sample)
				ret = fail(err, errlen, p, -EINVAL,
					   "':S' applies to groups: write {%s,...}:S",
					   ev.name);
			if (!ret)
				ret = push_event(l, &ev);
			if (ret)
				event_release(&ev);
		}
		if (ret)
			break;
		p += len;
		if (*p == ',') {
			p++;
			if (!*p) {
				ret = fail(err, errlen, p - 1, -EINVAL,
					   "trailing ',' in event list");
				break;
			}
		}
	}
	if (ret) {
		/* leave l as it was before this call */
		while (l->n > n0)
			event_release(&l->ev[--l->n]);
		while (l->ngroups > g0)
			free(l->groups[--l->ngroups].name);
	}
	return ret;
}

int rec_evspecs_parse(struct rec_evspecs *l, const char *str)
{
	char err[REC_LOG_MAX] = "";
	int ret = evspecs_parse(l, str, err, sizeof(err));

	if (ret < 0 && !err[0])
		snprintf(err, sizeof(err), "events '%s': %s", str ? str : "",
			 strerror(-ret));
	return rec_log_fail(ret, err);
}
