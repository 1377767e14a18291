/*
 * perfmap.c - parser for /tmp/perf-PID.map (see perfmap.h).
 */
#include "recorder/symbols/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_MAX (256u << 20)

/* Parses one hex number at *p (optional 0x), up to 16 digits. */
static int parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	int digits = 0;

	*v = 0;
	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	while (s < end) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (++digits > 16)
			return -1;
		*v = (*v << 4) | (uint64_t)d;
		s++;
	}
	if (!digits)
		return -1;
	*p = s;
	return 0;
}

static int cmp_sym(const void *pa, const void *pb)
{
	const struct rec_perfmap_sym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return 0;
}

int rec_perfmap_parse(const char *text, size_t len, struct rec_perfmap *out)
{
	const char *p = text, *end = text + len;
	size_t lines = 1;
	char *q;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	out->syms = calloc(lines, sizeof(*out->syms));
	out->names = malloc(len + 1);
	if (!out->syms || !out->names) {
		rec_perfmap_release(out);
		return -ENOMEM;
	}
	q = out->names;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *l = p, *ne;
		uint64_t start, size;
		size_t n;

		if (!eol)
			eol = end;
		p = eol + 1;
		ne = eol;
		if (ne > l && ne[-1] == '\r')
			ne--;
		if (ne == l)
			continue;   /* empty line */
		if (parse_hex(&l, ne, &start) || l >= ne || *l != ' ')
			goto junk;
		while (l < ne && *l == ' ')
			l++;
		if (parse_hex(&l, ne, &size) || l >= ne || *l != ' ')
			goto junk;
		while (l < ne && *l == ' ')
			l++;
		if (l >= ne || memchr(l, 0, (size_t)(ne - l)) ||
		    start + size < start)
			goto junk;
		n = (size_t)(ne - l);
		memcpy(q, l, n);
		q[n] = 0;
		out->syms[out->nsyms].start = start;
		out->syms[out->nsyms].size = size;
		out->syms[out->nsyms].name = q;
		out->nsyms++;
		q += n + 1;
		continue;
junk:
		out->junk++;
	}
	/* stable enough: equal starts keep no particular order; a JIT that
	 * reuses an address writes the newer entry later, and the analyzer
	 * takes any symbol containing the address */
	qsort(out->syms, out->nsyms, sizeof(*out->syms), cmp_sym);
	return 0;
}

int rec_perfmap_load_pid(pid_t pid, const char *dir, size_t max_bytes,
			 struct rec_perfmap *out)
{
	char path[4096];
	struct stat st;
	size_t len = 0;
	char *buf;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	if (!max_bytes)
		max_bytes = DEFAULT_MAX;
	if (snprintf(path, sizeof(path), "%s/perf-%d.map", dir ? dir : "/tmp",
		     (int)pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	/* /tmp is everyone's: no symlinks (perf-1.map -> /etc/shadow would
	 * put that file in the trace), no FIFOs, and the file must belong
	 * to root or to the process's owner */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto err_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto err_close;
	}
	if (st.st_uid != 0 && !dir) {
		struct stat pst;
		char ppath[64];

		snprintf(ppath, sizeof(ppath), "/proc/%d", (int)pid);
		if (stat(ppath, &pst) == 0 && pst.st_uid != st.st_uid) {
			ret = -EPERM;
			goto err_close;
		}
	}
	if ((uint64_t)st.st_size > max_bytes) {
		ret = -EFBIG;
		goto err_close;
	}
	/* The JIT may still be appending: read what is there now. */
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto err_close;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			free(buf);
			goto err_close;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	ret = rec_perfmap_parse(buf, len, out);
	free(buf);
err_close:
	close(fd);
	return ret;
}

void rec_perfmap_release(struct rec_perfmap *m)
{
	if (!m)
		return;
	free(m->syms);
	free(m->names);
	memset(m, 0, sizeof(*m));
}
