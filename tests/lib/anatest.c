/*
 * anatest.c - process and file helpers for the analyzer tests.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lib/anatest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char *anatest_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		cap *= 2;
		char *nb = realloc(buf, cap + 1);
		if (!nb) {
			free(buf);
			buf = NULL;
		}
		buf = nb;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = n;
	}
	return buf;
}

int anatest_write(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -errno;
	size_t w = fwrite(buf, 1, len, f);
	int ret = fclose(f);
	return w == len && !ret ? 0 : -EIO;
}

int anatest_run(const char *dir, const char *args, char **out, size_t *len, char **err)
{
	const char *bin = getenv("PERFREC_ANALYZE_BIN");
	if (!bin)
		bin = PERFREC_ANALYZE_BIN;
	char outp[4096], errp[4096], *cmd = NULL;
	snprintf(outp, sizeof(outp), "%s/.stdout", dir);
	snprintf(errp, sizeof(errp), "%s/.stderr", dir);
	if (asprintf(&cmd, "cd '%s' && '%s' %s >'%s' 2>'%s'", dir, bin, args, outp, errp) < 0)
		return -1;
	int st = system(cmd);
	free(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	if (out)
		*out = anatest_read(outp, len);
	if (err)
		*err = anatest_read(errp, NULL);
	return WEXITSTATUS(st);
}

const char *anatest_tmpdir(const char *tag)
{
	static char buf[4096];
	const char *t = getenv("TMPDIR");
	snprintf(buf, sizeof(buf), "%s/perfrec-%s-XXXXXX", t ? t : "/tmp", tag);
	return mkdtemp(buf);
}
