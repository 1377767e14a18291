/*
 * sfilter.c - the --filter expression parser and compiler; see sfilter.h.
 *
 * Recursive descent straight into postfix: a test emits TEST, `a && b`
 * emits a, b, AND. The program's evaluation stack is one bit per value in
 * a u64, so the compiler tracks the depth a program reaches and refuses
 * one deeper than REC_SF_MAX_INSNS - 1 bits (it would need more steps
 * than that anyway).
 */
#include "recorder/bpf/sfilter.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct parser {
	const char *s;
	size_t pos;
	struct rec_sfilter *f;
	struct rec_sfilter_error *err;
	int depth, max_depth;
	int nest;          /* parentheses and '!' open: bounds the recursion */
};

static int fail(struct parser *p, size_t pos, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct parser *p, size_t pos, size_t len, const char *fmt, ...)
{
	va_list ap;

	p->err->pos = pos;
	p->err->len = len ? len : 1;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void skip_space(struct parser *p)
{
	while (p->s[p->pos] && isspace((unsigned char)p->s[p->pos]))
		p->pos++;
}

static int emit(struct parser *p, int op, int field, int cmp, uint64_t value,
		size_t pos, size_t len)
{
	struct rec_sf_insn *in;

	if (p->f->n >= REC_SF_MAX_INSNS)
		return fail(p, pos, len, "the filter is too long: at most %d tests "
			    "and operators", REC_SF_MAX_INSNS);
	in = &p->f->insn[p->f->n++];
	memset(in, 0, sizeof(*in));
	in->op = (__u8)op;
	in->field = (__u8)field;
	in->cmp = (__u8)cmp;
	in->value = value;
	if (op == REC_SF_TEST) {
		if (++p->depth > p->max_depth)
			p->max_depth = p->depth;
		if (p->depth >= 64)
			return fail(p, pos, len, "the filter nests too deep");
	} else if (op == REC_SF_AND || op == REC_SF_OR) {
		p->depth--;
	}
	return 0;
}

static const struct {
	const char *name;
	int field;
} fields[] = {
	{ "pid", REC_SF_PID }, { "tgid", REC_SF_PID }, { "tid", REC_SF_TID },
	{ "uid", REC_SF_UID }, { "cpu", REC_SF_CPU }, { "cgroup", REC_SF_CGROUP },
	{ "mode", REC_SF_MODE },
};

#define FIELD_LIST "pid, tgid, tid, uid, cpu, cgroup, mode"

/* A number at p->pos: 0 and *v, or -1 (nothing consumed). */
static int number(struct parser *p, uint64_t *v)
{
	const char *start = p->s + p->pos;
	char *end;

	if (!isdigit((unsigned char)*start))
		return -1;
	errno = 0;
	*v = strtoull(start, &end, 0);
	if (errno || end == start)
		return -1;
	p->pos += (size_t)(end - start);
	return 0;
}

/* Where a value ends: space, ')', '&', '|', or the end. */
static size_t word_end(const struct parser *p, size_t from)
{
	size_t e = from;

	while (p->s[e] && !isspace((unsigned char)p->s[e]) && p->s[e] != ')' &&
	       p->s[e] != '&' && p->s[e] != '|')
		e++;
	return e;
}

static int cgroup_value(struct parser *p, int cmp, size_t vpos)
{
	struct rec_sfilter *f = p->f;
	size_t start = p->pos, end;
	char *path = NULL;
	uint64_t id = 0;
	int ret;

	if (f->ncg >= REC_SF_MAX_CGROUPS)
		return fail(p, vpos, 1, "at most %d cgroup tests", REC_SF_MAX_CGROUPS);
	if (p->s[start] == '\'' || p->s[start] == '"') {
		const char *q = strchr(p->s + start + 1, p->s[start]);

		if (!q)
			return fail(p, start, strlen(p->s + start), "unterminated quote");
		end = (size_t)(q - p->s) + 1;
		path = strndup(p->s + start + 1, end - start - 2);
		if (path && path[0] != '/') {
			free(path);
			return fail(p, start, end - start, "a cgroup path starts with '/' "
				    "(below the cgroup v2 mount, e.g. /system.slice/x.service)");
		}
	} else if (p->s[start] == '/') {
		end = word_end(p, start);
		path = strndup(p->s + start, end - start);
	} else if (number(p, &id) == 0) {
		end = p->pos;
		if (word_end(p, end) != end)
			return fail(p, start, word_end(p, start) - start, "a cgroup is a "
				    "path (/system.slice/x.service) or a number (its id)");
	} else {
		end = word_end(p, start);
		return fail(p, start, end - start, "a cgroup is a path "
			    "(/system.slice/x.service) or a number (its id)");
	}
	if (end > start && p->s[start] != '\'' && p->s[start] != '"' && !path && !id)
		return fail(p, start, end - start, "cgroup id 0 does not exist");
	if ((p->s[start] == '/' || p->s[start] == '\'' || p->s[start] == '"') && !path)
		return fail(p, start, end - start, "out of memory");
	p->pos = end;
	f->cg[f->ncg].insn = f->n;
	f->cg[f->ncg].path = path;
	f->cg[f->ncg].pos = start;
	f->cg[f->ncg].len = end - start;
	f->ncg++;
	ret = emit(p, REC_SF_TEST, REC_SF_CGROUP, REC_SF_EQ, id, start, end - start);
	if (!ret && cmp == REC_SF_NE)
		ret = emit(p, REC_SF_NOT, 0, 0, 0, start, end - start);
	return ret;
}

/* pid=1,3-5: one TEST per number, GE+LE+AND per range, ORed together. */
static int list_value(struct parser *p, int field, int cmp)
{
	size_t items = 0;

	for (;;) {
		size_t start = p->pos;
		uint64_t lo, hi;
		int ret;

		if (number(p, &lo) < 0)
			return fail(p, start, word_end(p, start) > start ?
				    word_end(p, start) - start : 1, "expected a number");
		if (p->s[p->pos] == '-' && cmp != REC_SF_LT && cmp != REC_SF_LE &&
		    cmp != REC_SF_GT && cmp != REC_SF_GE) {
			size_t dash = p->pos++;

			if (number(p, &hi) < 0)
				return fail(p, dash + 1, 1, "expected the end of the range");
			if (hi < lo)
				return fail(p, start, p->pos - start, "the range ends "
					    "before it starts");
			ret = emit(p, REC_SF_TEST, field, REC_SF_GE, lo, start, p->pos - start);
			if (!ret)
				ret = emit(p, REC_SF_TEST, field, REC_SF_LE, hi, start,
					   p->pos - start);
			if (!ret)
				ret = emit(p, REC_SF_AND, 0, 0, 0, start, p->pos - start);
		} else {
			int c = cmp == REC_SF_NE ? REC_SF_EQ : cmp;

			ret = emit(p, REC_SF_TEST, field, c, lo, start, p->pos - start);
		}
		if (!ret && items++)
			ret = emit(p, REC_SF_OR, 0, 0, 0, start, p->pos - start);
		if (ret)
			return ret;
		if (p->s[p->pos] != ',')
			break;
		if (cmp != REC_SF_EQ && cmp != REC_SF_NE)
			return fail(p, p->pos, 1, "lists go with = and != only");
		p->pos++;
	}
	if (word_end(p, p->pos) != p->pos)
		return fail(p, p->pos, word_end(p, p->pos) - p->pos, "expected a number, "
			    "a range (a-b) or a list (a,b)");
	if (cmp == REC_SF_NE)
		return emit(p, REC_SF_NOT, 0, 0, 0, p->pos, 1);
	return 0;
}

static int test(struct parser *p)
{
	size_t start = p->pos, end = start;
	int field = 0, cmp;

	while (isalnum((unsigned char)p->s[end]) || p->s[end] == '_')
		end++;
	if (end == start) {
		if (!p->s[start])
			return fail(p, start, 1, "expected a test (FIELD=VALUE) at the end");
		return fail(p, start, word_end(p, start) > start ? word_end(p, start) - start : 1,
			    "expected a test such as pid=123 (fields: " FIELD_LIST ")");
	}
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strlen(fields[i].name) == end - start &&
		    !strncmp(fields[i].name, p->s + start, end - start))
			field = fields[i].field;
	if (!field)
		return fail(p, start, end - start, "unknown field '%.*s' (fields: "
			    FIELD_LIST ")", (int)(end - start > 32 ? 32 : end - start),
			    p->s + start);
	p->pos = end;
	skip_space(p);
	{
		const char *o = p->s + p->pos;
		size_t opos = p->pos;

		if (o[0] == '=' && o[1] == '=') { cmp = REC_SF_EQ; p->pos += 2; }
		else if (o[0] == '=') { cmp = REC_SF_EQ; p->pos += 1; }
		else if (o[0] == '!' && o[1] == '=') { cmp = REC_SF_NE; p->pos += 2; }
		else if (o[0] == '<' && o[1] == '=') { cmp = REC_SF_LE; p->pos += 2; }
		else if (o[0] == '<') { cmp = REC_SF_LT; p->pos += 1; }
		else if (o[0] == '>' && o[1] == '=') { cmp = REC_SF_GE; p->pos += 2; }
		else if (o[0] == '>') { cmp = REC_SF_GT; p->pos += 1; }
		else
			return fail(p, opos, 1, "expected an operator (= != < <= > >=) "
				    "after '%.*s'", (int)(end - start), p->s + start);
		if ((field == REC_SF_CGROUP || field == REC_SF_MODE) &&
		    cmp != REC_SF_EQ && cmp != REC_SF_NE)
			return fail(p, opos, p->pos - opos, "%s compares with = or != only",
				    field == REC_SF_MODE ? "mode" : "cgroup");
	}
	skip_space(p);
	if (field == REC_SF_CGROUP)
		return cgroup_value(p, cmp, p->pos);
	if (field == REC_SF_MODE) {
		size_t vs = p->pos, ve = word_end(p, vs);
		int user;
		int ret;

		if (ve - vs == 4 && !strncmp(p->s + vs, "user", 4))
			user = 1;
		else if (ve - vs == 6 && !strncmp(p->s + vs, "kernel", 6))
			user = 0;
		else
			return fail(p, vs, ve - vs, "mode is user or kernel");
		p->pos = ve;
		ret = emit(p, REC_SF_TEST, REC_SF_MODE, REC_SF_EQ, (uint64_t)user, vs, ve - vs);
		if (!ret && cmp == REC_SF_NE)
			ret = emit(p, REC_SF_NOT, 0, 0, 0, vs, ve - vs);
		return ret;
	}
	return list_value(p, field, cmp);
}

static int or_expr(struct parser *p);

static int unary(struct parser *p)
{
	int ret;

	skip_space(p);
	if (p->nest > 32)
		return fail(p, p->pos, 1, "the filter nests too deep");
	if (p->s[p->pos] == '!' && p->s[p->pos + 1] != '=') {
		size_t at = p->pos++;

		p->nest++;
		ret = unary(p);
		p->nest--;
		return ret ? ret : emit(p, REC_SF_NOT, 0, 0, 0, at, 1);
	}
	if (p->s[p->pos] == '(') {
		size_t open = p->pos++;

		p->nest++;
		ret = or_expr(p);
		p->nest--;
		if (ret)
			return ret;
		skip_space(p);
		if (p->s[p->pos] != ')')
			return fail(p, open, 1, "this '(' is not closed");
		p->pos++;
		return 0;
	}
	return test(p);
}

static int and_expr(struct parser *p)
{
	int ret = unary(p);

	while (!ret) {
		size_t at;

		skip_space(p);
		if (p->s[p->pos] != '&' || p->s[p->pos + 1] != '&')
			break;
		at = p->pos;
		p->pos += 2;
		ret = unary(p);
		if (!ret)
			ret = emit(p, REC_SF_AND, 0, 0, 0, at, 2);
	}
	return ret;
}

static int or_expr(struct parser *p)
{
	int ret = and_expr(p);

	while (!ret) {
		size_t at;

		skip_space(p);
		if (p->s[p->pos] != '|' || p->s[p->pos + 1] != '|')
			break;
		at = p->pos;
		p->pos += 2;
		ret = and_expr(p);
		if (!ret)
			ret = emit(p, REC_SF_OR, 0, 0, 0, at, 2);
	}
	return ret;
}

int rec_sfilter_parse(const char *expr, struct rec_sfilter *f,
		      struct rec_sfilter_error *err)
{
	struct parser p = { expr ? expr : "", 0, f, err, 0, 0, 0 };
	int ret;

	memset(f, 0, sizeof(*f));
	memset(err, 0, sizeof(*err));
	skip_space(&p);
	if (!p.s[p.pos])
		return fail(&p, 0, 1, "the filter is empty (e.g. --filter 'pid=123')");
	ret = or_expr(&p);
	if (ret)
		return ret;
	skip_space(&p);
	if (p.s[p.pos]) {
		size_t e = word_end(&p, p.pos);

		if (p.s[p.pos] == ')')
			return fail(&p, p.pos, 1, "this ')' has no '('");
		return fail(&p, p.pos, e > p.pos ? e - p.pos : 1,
			    "expected '&&', '||' or the end");
	}
	return 0;
}

void rec_sfilter_release(struct rec_sfilter *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->ncg; i++)
		free(f->cg[i].path);
	f->ncg = 0;
}

int rec_sfilter_cgroup_root(char *buf, size_t len)
{
	FILE *m = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int ret = -ENOENT;

	if (!m)
		return -errno;
	/* "id parent maj:min root mountpoint opts [optional...] - fstype ..." */
	while (fgets(line, sizeof(line), m)) {
		char *dash = strstr(line, " - "), mnt[PATH_MAX];

		if (!dash || strncmp(dash + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 &&
		    (size_t)snprintf(buf, len, "%s", mnt) < len) {
			ret = 0;
			break;
		}
	}
	fclose(m);
	return ret;
}

/* Depth of dir below the root: the number of path components. */
static uint32_t level_of(const char *path)
{
	uint32_t n = 0;

	for (const char *s = path; *s; s++)
		if (*s != '/' && (s == path || s[-1] == '/'))
			n++;
	return n;
}

/* Finds the directory whose inode is id below dir (depth <= 16): 0 and its
 * level, or -ENOENT. */
static int find_id(const char *dir, uint64_t id, uint32_t level, int budget,
		   uint32_t *out)
{
	DIR *d;
	struct dirent *e;
	int ret = -ENOENT;

	if (budget <= 0)
		return -ENOENT;
	d = opendir(dir);
	if (!d)
		return -ENOENT;
	while (ret && (e = readdir(d))) {
		char sub[PATH_MAX];
		struct stat st;

		if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >= sizeof(sub) ||
		    stat(sub, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (st.st_ino == id) {
			*out = level + 1;
			ret = 0;
		} else {
			ret = find_id(sub, id, level + 1, budget - 1, out);
		}
	}
	closedir(d);
	return ret;
}

int rec_sfilter_resolve(struct rec_sfilter *f, const char *expr,
			const char *cgroot, struct rec_sfilter_error *err)
{
	char root[PATH_MAX];
	struct parser p = { expr ? expr : "", 0, f, err, 0, 0, 0 };

	(void)p;
	memset(err, 0, sizeof(*err));
	if (!f->ncg)
		return 0;
	if (!cgroot) {
		if (rec_sfilter_cgroup_root(root, sizeof(root)) < 0)
			return fail(&p, f->cg[0].pos, f->cg[0].len, "no cgroup v2 hierarchy "
				    "is mounted (the kernel's cgroup ids are v2's): mount one "
				    "(mount -t cgroup2 none /sys/fs/cgroup)");
		cgroot = root;
	}
	for (size_t i = 0; i < f->ncg; i++) {
		struct rec_sf_insn *in = &f->insn[f->cg[i].insn];
		struct stat st;

		if (f->cg[i].path) {
			char full[PATH_MAX];
			uint32_t level = level_of(f->cg[i].path);

			if ((size_t)snprintf(full, sizeof(full), "%s%s", cgroot,
					     f->cg[i].path) >= sizeof(full) ||
			    stat(full, &st) < 0 || !S_ISDIR(st.st_mode))
				return fail(&p, f->cg[i].pos, f->cg[i].len, "no cgroup %s "
					    "(looked for %s)", f->cg[i].path, full);
			in->value = st.st_ino;
			in->level = level;
		} else {
			uint32_t level = 0;

			if (stat(cgroot, &st) == 0 && st.st_ino == in->value)
				level = 0;
			else if (find_id(cgroot, in->value, 0, 16, &level) < 0)
				return fail(&p, f->cg[i].pos, f->cg[i].len, "no cgroup with id "
					    "%" PRIu64 " below %s", (uint64_t)in->value, cgroot);
			in->level = level;
		}
	}
	return 0;
}

const char *rec_sfilter_describe_error(const char *expr,
				       const struct rec_sfilter_error *err,
				       char *buf, size_t len)
{
	size_t n = expr ? strlen(expr) : 0, pos = err->pos, mark = err->len;
	size_t o;
	int k;

	if (pos > n)
		pos = n;
	if (!mark)
		mark = 1;
	k = snprintf(buf, len, "%s\n  %s\n  ", err->msg, expr ? expr : "");
	o = k < 0 ? 0 : (size_t)k;
	for (size_t i = 0; i < pos && o + 1 < len; i++)
		buf[o++] = expr[i] == '\t' ? '\t' : ' ';
	for (size_t i = 0; i < mark && o + 1 < len; i++)
		buf[o++] = '^';
	if (o < len)
		buf[o] = '\0';
	else if (len)
		buf[len - 1] = '\0';
	return buf;
}
