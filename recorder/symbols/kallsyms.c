/*
 * kallsyms.c - parser for /proc/kallsyms (see kallsyms.h).
 *
 * One pass over the text, line by line: "ADDR TYPE NAME[\t[MODULE]]".
 * Names and module names are copied into one buffer no larger than the
 * input, so the parse makes three allocations whatever the line count.
 */
#include "recorder/symbols/kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "format/base/hashmap.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

static int cmp_ksym(const void *pa, const void *pb)
{
	const struct rec_ksym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	/* keep file order among aliases: core before modules, then name */
	if (a->module != b->module)
		return a->module < b->module ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* /proc/kallsyms lists symbols by address already (only aliases come in
 * another order), so a check and a sort of the alias runs replace the
 * full sort of ~100k entries in the common case. */
static void sort_syms(struct rec_ksym *s, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (s[i - 1].start > s[i].start ||
		    (s[i - 1].start == s[i].start && s[i - 1].module > s[i].module)) {
			qsort(s, n, sizeof(*s), cmp_ksym);
			return;
		}
	}
	/* insertion sort: runs of equal starts are a few entries long */
	for (size_t i = 1; i < n; i++) {
		struct rec_ksym x = s[i];
		size_t j = i;

		while (j > 0 && cmp_ksym(&s[j - 1], &x) > 0) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = x;
	}
}

/* Module names repeat on thousands of lines, in runs: remember the last. */
static long module_index(struct rec_kallsyms *k, const char *m, size_t n,
			 char **q)
{
	const char **nm;

	for (size_t i = k->nmodules; i-- > 0;) {
		if (strlen(k->modules[i]) == n && memcmp(k->modules[i], m, n) == 0)
			return (long)i;
		if (k->nmodules - i > 8)
			break;   /* runs are contiguous; a miss this deep is new */
	}
	nm = realloc(k->modules, (k->nmodules + 1) * sizeof(*k->modules));
	if (!nm)
		return -ENOMEM;
	k->modules = nm;
	memcpy(*q, m, n);
	(*q)[n] = 0;
	k->modules[k->nmodules] = *q;
	*q += n + 1;
	return (long)k->nmodules++;
}

int rec_kallsyms_parse(const char *text, size_t len, struct rec_kallsyms *out)
{
	size_t lines = 0, cap, any = 0, nonzero = 0;
	const char *p = text, *end = text + len;
	char *q;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	cap = lines + 1;
	out->syms = calloc(cap, sizeof(*out->syms));
	out->names = malloc(len + 1);
	if (!out->syms || !out->names) {
		rec_kallsyms_release(out);
		return -ENOMEM;
	}
	q = out->names;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *l = p, *name, *ne, *mod = NULL, *me = NULL;
		uint64_t addr = 0;
		int digits = 0, v;
		char type;

		if (!eol)
			eol = end;
		p = eol + 1;
		while (l < eol && (v = hexval(*l)) >= 0 && digits < 17) {
			addr = (addr << 4) | (uint64_t)v;
			l++;
			digits++;
		}
		if (!digits || digits > 16 || l + 3 > eol || *l != ' ' ||
		    l[2] != ' ') {
			if (eol > l || digits)
				out->junk++;
			continue;
		}
		type = l[1];
		name = l + 3;
		ne = name;
		while (ne < eol && *ne != '\t' && *ne != ' ')
			ne++;
		if (ne == name) {
			out->junk++;
			continue;
		}
		if (ne < eol) {   /* "\t[module]" */
			const char *b = ne + 1;

			while (b < eol && (*b == ' ' || *b == '\t'))
				b++;
			if (b < eol && *b == '[') {
				const char *c = memchr(b, ']', (size_t)(eol - b));

				if (c && c > b + 1) {
					mod = b + 1;
					me = c;
				}
			}
		}
		any++;
		if (addr)
			nonzero++;
		if (!is_text_type(type) || !addr)
			continue;
		{
			struct rec_ksym *s = &out->syms[out->nsyms];
			size_t n = (size_t)(ne - name);

			if (mod) {
				long mi = module_index(out, mod,
						       (size_t)(me - mod), &q);

				if (mi < 0) {
					rec_kallsyms_release(out);
					return (int)mi;
				}
				s->module = (uint32_t)mi + 1;
			}
			memcpy(q, name, n);
			q[n] = 0;
			s->name = q;
			q += n + 1;
			s->start = addr;
			if (!mod && strcmp(s->name, "_stext") == 0)
				out->text_start = addr;
			out->nsyms++;
		}
	}
	if (any && !nonzero) {
		/* every address was zero: kptr_restrict hides them */
		out->nsyms = 0;
		return REC_KALLSYMS_HIDDEN;
	}
	sort_syms(out->syms, out->nsyms);
	/* size = distance to the next distinct start, aliases share it;
	 * bounded where the next start is another module's (see .h) */
	{
		uint64_t next = 0;
		uint32_t next_mod = 0;
		int have_next = 0;

		for (size_t i = out->nsyms; i-- > 0;) {
			struct rec_ksym *s = &out->syms[i];

			if (i + 1 < out->nsyms && out->syms[i + 1].start != s->start) {
				next = out->syms[i + 1].start;
				next_mod = out->syms[i + 1].module;
				have_next = 1;
			}
			s->size = have_next ? next - s->start : 0;   /* last: unknown */
			if (have_next && next_mod != s->module &&
			    s->size > REC_KALLSYMS_OPEN_MAX)
				s->size = REC_KALLSYMS_OPEN_MAX;
		}
	}
	return 0;
}

int rec_kallsyms_load(const char *path, struct rec_kallsyms *out)
{
	size_t len = 0, cap = 1 << 20;
	char *buf, *nb;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	fd = open(path ? path : "/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		ret = -ENOMEM;
		goto err_close;
	}
	/* procfs files have no size: read until EOF, growing the buffer */
	for (;;) {
		ssize_t n;

		if (len == cap) {
			nb = realloc(buf, cap * 2);
			if (!nb) {
				ret = -ENOMEM;
				goto err_free;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto err_free;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	ret = rec_kallsyms_parse(buf, len, out);
err_free:
	free(buf);
err_close:
	close(fd);
	return ret;
}

void rec_kallsyms_release(struct rec_kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->modules);
	free(k->names);
	memset(k, 0, sizeof(*k));
}

long rec_kallsyms_find(const struct rec_kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	/* aliases share a start: the first of them names the address */
	while (lo > 1 && k->syms[lo - 2].start == k->syms[lo - 1].start)
		lo--;
	if (addr - k->syms[lo - 1].start < k->syms[lo - 1].size)
		return (long)(lo - 1);
	return -1;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return prec_hash_u64(h ^ v) + 0x9e3779b97f4a7c15ull;
}

/* Module names and addresses: "name size refs deps state addr"; the
 * reference counts change all the time without changing kallsyms. */
static int modules_fingerprint(uint64_t *h)
{
	char line[512];
	FILE *f = fopen("/proc/modules", "re");

	if (!f)   /* none: a kernel built without loadable modules */
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		const char *sp = strchr(line, ' '), *last = strrchr(line, ' ');

		if (!sp)
			continue;
		*h = mix(*h, prec_hash_bytes(line, (size_t)(sp - line)));
		if (last && last > sp)
			*h = mix(*h, prec_hash_bytes(last, strlen(last)));
	}
	fclose(f);
	return 0;
}

/* The ids of the loaded BPF programs, in id order (ids are never
 * reused while the kernel runs). Needs CAP_SYS_ADMIN. */
static int bpf_fingerprint(uint64_t *h)
{
	union bpf_attr a;
	uint32_t id = 0;

	for (;;) {
		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (syscall(__NR_bpf, BPF_PROG_GET_NEXT_ID, &a, sizeof(a)) < 0)
			return errno == ENOENT ? 0 : -errno;
		id = a.next_id;
		*h = mix(*h, id);
	}
}

int rec_kallsyms_fingerprint(const char *path, uint64_t *fp)
{
	uint64_t h = 1;
	int ret;

	if (path && strcmp(path, "/proc/kallsyms") != 0) {
		struct stat st;

		if (stat(path, &st) < 0)
			return -errno;
		h = mix(h, (uint64_t)st.st_ino);
		h = mix(h, (uint64_t)st.st_size);
		h = mix(h, (uint64_t)st.st_mtim.tv_sec);
		h = mix(h, (uint64_t)st.st_mtim.tv_nsec);
		*fp = h;
		return 0;
	}
	ret = modules_fingerprint(&h);
	if (!ret)
		ret = bpf_fingerprint(&h);
	if (!ret)
		*fp = h;
	return ret;
}
