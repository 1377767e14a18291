/*
 * test_script.c - `perfrec-analyze script` on the golden trace, read the
 * way FlameGraph's stackcollapse-perf.pl reads perf script's output.
 *
 * Each sample must be a header "comm pid/tid [cpu] sec.usec: period
 * event:" (checked strictly here, so a drift in the layout fails), then
 * one "addr sym+0xoff (dso)" line per frame leaf first, then an empty
 * line. Folded as stackcollapse-perf.pl folds (comm, then the frames
 * outermost first; "+0x..." offsets dropped; "[unknown]" named by its
 * object as "[dso]"; the first event seen kept), the samples must give
 * exactly `export --format folded` of the same event (the analyzer's own
 * folded stacks, each offset dropped the same way), and their periods add
 * up to the report's total_period. Filters apply as in report; --json is
 * refused.
 */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/anatest.h"
#include "lib/tracegen.h"

static const char *dir;

static int setup(void **state)
{
	(void)state;
	char path[4200];
	if (!(dir = anatest_tmpdir("script")))
		return -1;
	snprintf(path, sizeof(path), "%s/golden.prec", dir);
	return tracegen_write(path, NULL) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

/* A folded stack and its count. */
struct folded {
	char *stack;
	long count;
};

struct folds {
	struct folded v[256];
	size_t n;
};

static void fold_add(struct folds *f, const char *stack, long count)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].stack, stack)) {
			f->v[i].count += count;
			return;
		}
	assert_true(f->n < 256);
	f->v[f->n].stack = strdup(stack);
	assert_non_null(f->v[f->n].stack);
	f->v[f->n++].count = count;
}

static void folds_free(struct folds *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].stack);
	f->n = 0;
}

/* A function name as stackcollapse-perf.pl keeps it: without a trailing
 * "+0xHEX". */
static void strip_off(char *s)
{
	char *p = strstr(s, "+0x");
	while (p) {
		char *q = p + 3;
		while (*q && strchr("0123456789abcdef", *q))
			q++;
		if (!*q && q > p + 3) {
			*p = '\0';
			return;
		}
		p = strstr(p + 1, "+0x");
	}
}

static char *sub(const char *line, const regmatch_t *m)
{
	char *s = strndup(line + m->rm_so, (size_t)(m->rm_eo - m->rm_so));
	assert_non_null(s);
	return s;
}

/* Folds script output; returns the samples read and their period sum. */
static long fold_script(char *out, struct folds *f, unsigned long long *periods)
{
	regex_t head, frame;
	assert_int_equal(regcomp(&head, "^([^ \t].*[^ ]) +([0-9]+)/([0-9]+) +\\[([0-9]{3,})\\] "
				 "([0-9]+\\.[0-9]{6}): +([0-9]+) ([^ ]+): $", REG_EXTENDED), 0);
	assert_int_equal(regcomp(&frame, "^\t *([0-9a-f]+) (.+) \\((.*)\\)$", REG_EXTENDED), 0);
	char *frames[128];
	int nf = 0, open = 0;
	char comm[256] = "", event[64] = "", first_event[64] = "";
	long samples = 0;
	*periods = 0;
	for (char *save, *line = strtok_r(out, "\n", &save); ; line = strtok_r(NULL, "\n", &save)) {
		/* strtok_r skips empty lines: a sample ends where the next
		 * header starts or the text ends (each must end with an empty
		 * line: checked by the caller) */
		regmatch_t m[8];
		int is_head = line && !regexec(&head, line, 8, m, 0);
		if (open && (!line || is_head)) {
			if (!strcmp(event, first_event)) {
				char stack[4096];
				size_t off = (size_t)snprintf(stack, sizeof(stack), "%s", comm);
				for (int i = nf - 1; i >= 0; i--)
					off += (size_t)snprintf(stack + off, sizeof(stack) - off,
								";%s", frames[i]);
				fold_add(f, stack, 1);
			}
			for (int i = 0; i < nf; i++)
				free(frames[i]);
			nf = 0;
			open = 0;
		}
		if (!line)
			break;
		if (is_head) {
			char *c = sub(line, &m[1]), *e = sub(line, &m[7]), *p = sub(line, &m[6]);
			snprintf(comm, sizeof(comm), "%s", c);
			snprintf(event, sizeof(event), "%s", e);
			if (!first_event[0])
				snprintf(first_event, sizeof(first_event), "%s", e);
			if (!strcmp(event, first_event)) {
				*periods += strtoull(p, NULL, 10);
				samples++;
			}
			free(c);
			free(e);
			free(p);
			open = 1;
			continue;
		}
		if (regexec(&frame, line, 8, m, 0)) {
			fprintf(stderr, "not perf script's layout: '%s'\n", line);
			fail();
		}
		assert_true(open && nf < 128);
		char *fn = sub(line, &m[2]), *mod = sub(line, &m[3]);
		strip_off(fn);
		if (!strcmp(fn, "[unknown]")) {
			const char *b = strrchr(mod, '/');
			char buf[300];
			snprintf(buf, sizeof(buf), "[%s]", b ? b + 1 : mod);
			free(fn);
			fn = strdup(buf);
			assert_non_null(fn);
		}
		free(mod);
		frames[nf++] = fn;
	}
	regfree(&head);
	regfree(&frame);
	return samples;
}

static void fold_export(char *out, struct folds *f)
{
	for (char *save, *line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		assert_non_null(sp);
		*sp = '\0';
		/* each frame's offset dropped, as stackcollapse-perf.pl does */
		char stack[4096] = "";
		size_t off = 0;
		for (char *s2, *fr = strtok_r(line, ";", &s2); fr; fr = strtok_r(NULL, ";", &s2)) {
			strip_off(fr);
			off += (size_t)snprintf(stack + off, sizeof(stack) - off, "%s%s",
						off ? ";" : "", fr);
		}
		fold_add(f, stack, atol(sp + 1));
	}
}

static long count_of(const struct folds *f, const char *stack)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].stack, stack))
			return f->v[i].count;
	return -1;
}

static void test_folds_as_export(void **state)
{
	(void)state;
	char *out, *xout, *rout;
	size_t len;
	assert_int_equal(anatest_run(dir, "script golden.prec", &out, &len, NULL), 0);
	/* every sample ends with an empty line */
	assert_true(len >= 2 && !strcmp(out + len - 2, "\n\n"));
	struct folds a = { .n = 0 }, b = { .n = 0 };
	unsigned long long periods;
	long n = fold_script(out, &a, &periods);
	assert_true(n > 0);
	/* the golden trace's first sample is a cpu-clock one */
	assert_int_equal(anatest_run(dir, "export golden.prec --format folded --event cpu-clock",
				     &xout, &len, NULL), 0);
	fold_export(xout, &b);
	assert_int_equal(a.n, b.n);
	long total = 0;
	for (size_t i = 0; i < b.n; i++) {
		assert_int_equal(count_of(&a, b.v[i].stack), b.v[i].count);
		total += b.v[i].count;
	}
	assert_int_equal(total, n);
	assert_int_equal(anatest_run(dir, "report golden.prec --event cpu-clock", &rout, &len,
				     NULL), 0);
	const char *tp = strstr(rout, "\ntotal_period");
	assert_non_null(tp);
	assert_int_equal(strtoull(tp + 14, NULL, 10), periods);
	folds_free(&a);
	folds_free(&b);
	free(out);
	free(xout);
	free(rout);
}

static void test_filters_and_formats(void **state)
{
	(void)state;
	char *out, *err;
	size_t len;
	assert_int_equal(anatest_run(dir, "script golden.prec --comm pong", &out, &len, NULL), 0);
	int lines = 0;
	for (char *save, *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (l[0] != '\t') {
			assert_true(!strncmp(l, "pong ", 5));
			lines++;
		}
	assert_true(lines > 0);
	free(out);
	assert_int_equal(anatest_run(dir, "script golden.prec --json", &out, &len, &err), 2);
	assert_non_null(strstr(err, "--json"));
	free(out);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folds_as_export),
		cmocka_unit_test(test_filters_and_formats),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
