/*
 * test_sfilter.c - recorder/bpf/sfilter.c: the --filter language compiles
 * into the postfix the BPF program runs (checked by evaluating it here as
 * the program does), bad expressions point at the offending bytes, and
 * cgroup paths and ids resolve against a directory tree the test makes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "recorder/bpf/sfilter.h"

/* What the sample's context holds, as the program reads it. */
struct ctx {
	uint64_t pid, tid, uid, cpu, mode;
	uint64_t cgroup[4];   /* ancestor ids by level */
};

/* sfilter.bpf.c's loop, in C */
static int eval(const struct rec_sfilter *f, const struct ctx *c)
{
	uint64_t stack = 0;

	for (size_t i = 0; i < f->n; i++) {
		const struct rec_sf_insn *in = &f->insn[i];
		uint64_t v = 0;
		int r = 0;

		switch (in->op) {
		case REC_SF_TEST:
			switch (in->field) {
			case REC_SF_PID: v = c->pid; break;
			case REC_SF_TID: v = c->tid; break;
			case REC_SF_UID: v = c->uid; break;
			case REC_SF_CPU: v = c->cpu; break;
			case REC_SF_MODE: v = c->mode; break;
			case REC_SF_CGROUP: v = in->level < 4 ? c->cgroup[in->level] : 0; break;
			}
			switch (in->cmp) {
			case REC_SF_EQ: r = v == in->value; break;
			case REC_SF_NE: r = v != in->value; break;
			case REC_SF_LT: r = v < in->value; break;
			case REC_SF_LE: r = v <= in->value; break;
			case REC_SF_GT: r = v > in->value; break;
			case REC_SF_GE: r = v >= in->value; break;
			}
			stack = stack << 1 | (uint64_t)r;
			break;
		case REC_SF_AND:
			stack = (stack >> 2) << 1 | ((stack & (stack >> 1)) & 1);
			break;
		case REC_SF_OR:
			stack = (stack >> 2) << 1 | ((stack | (stack >> 1)) & 1);
			break;
		case REC_SF_NOT:
			stack ^= 1;
			break;
		}
	}
	return (int)(stack & 1);
}

static int keeps(const char *expr, const struct ctx *c)
{
	struct rec_sfilter f;
	struct rec_sfilter_error err;
	int ret = rec_sfilter_parse(expr, &f, &err);

	if (ret) {
		fprintf(stderr, "%s: %s\n", expr, err.msg);
		fail();
	}
	ret = eval(&f, c);
	rec_sfilter_release(&f);
	return ret;
}

static void semantics(void **state)
{
	struct ctx c = { .pid = 100, .tid = 101, .uid = 1000, .cpu = 3, .mode = 1 };

	(void)state;
	assert_true(keeps("pid=100", &c));
	assert_true(keeps("tgid == 100", &c));
	assert_false(keeps("pid!=100", &c));
	assert_true(keeps("tid=101 && cpu=3", &c));
	assert_false(keeps("tid=101 && cpu=2", &c));
	assert_true(keeps("tid=1 || cpu=3", &c));
	assert_true(keeps("!(pid=5)", &c));
	assert_false(keeps("!pid=100", &c));
	assert_true(keeps("pid=5,40-200", &c));
	assert_false(keeps("pid=5,40-99", &c));
	assert_true(keeps("pid!=5,6", &c));
	assert_false(keeps("pid!=90-110", &c));
	assert_true(keeps("uid>=1000 && uid<1001 && cpu>2 && cpu<=3", &c));
	assert_true(keeps("mode=user", &c));
	assert_false(keeps("mode=kernel", &c));
	assert_true(keeps("mode!=kernel", &c));
	/* && binds tighter than || */
	assert_true(keeps("pid=1 && cpu=9 || tid=101", &c));
	assert_false(keeps("pid=1 && (cpu=9 || tid=101)", &c));
	assert_true(keeps("  ( ( pid = 0x64 ) )  ", &c));
}

/* The error names the problem and its place. */
static void refused(const char *expr, size_t pos, size_t len, const char *what)
{
	struct rec_sfilter f;
	struct rec_sfilter_error err;
	char msg[512];

	assert_int_equal(rec_sfilter_parse(expr, &f, &err), -EINVAL);
	rec_sfilter_release(&f);
	if (err.pos != pos || err.len != len || !strstr(err.msg, what)) {
		fprintf(stderr, "'%s': pos %zu len %zu '%s'\n", expr, err.pos, err.len, err.msg);
		fail();
	}
	rec_sfilter_describe_error(expr, &err, msg, sizeof(msg));
	assert_non_null(strstr(msg, expr));
}

static void errors(void **state)
{
	(void)state;
	refused("", 0, 1, "empty");
	refused("pdi=1", 0, 3, "unknown field 'pdi'");
	refused("pid=1 && mdoe=user", 9, 4, "unknown field 'mdoe'");
	refused("pid 1", 4, 1, "expected an operator");
	refused("pid=x", 4, 1, "expected a number");
	refused("pid=1 &&", 8, 1, "expected a test");
	refused("pid=1 & tid=2", 6, 1, "expected '&&'");
	refused("(pid=1", 0, 1, "not closed");
	refused("pid=1)", 5, 1, "has no '('");
	refused("mode=usr", 5, 3, "user or kernel");
	refused("mode<1", 4, 1, "= or !=");
	refused("cgroup>1", 6, 1, "= or !=");
	refused("cgroup=system.slice", 7, 12, "path");
	refused("pid=5-2", 4, 3, "ends before");
	refused("pid<1,2", 5, 1, "lists");
	refused("cgroup='/x", 7, 3, "unterminated");
}

static void limits(void **state)
{
	char expr[2048];
	size_t o = 0;
	struct rec_sfilter f;
	struct rec_sfilter_error err;

	(void)state;
	/* 32 tests and 31 ORs fit in 64 steps; one more does not */
	for (int i = 0; i < 32; i++)
		o += (size_t)snprintf(expr + o, sizeof(expr) - o, "%spid=%d", i ? "||" : "", i);
	assert_int_equal(rec_sfilter_parse(expr, &f, &err), 0);
	assert_int_equal(f.n, 63);
	rec_sfilter_release(&f);
	snprintf(expr + o, sizeof(expr) - o, "||pid=99");
	assert_int_equal(rec_sfilter_parse(expr, &f, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "too long"));
	rec_sfilter_release(&f);
	/* deep nesting is refused, not a stack overflow */
	memset(expr, '(', 1000);
	strcpy(expr + 1000, "pid=1");
	assert_int_equal(rec_sfilter_parse(expr, &f, &err), -EINVAL);
	rec_sfilter_release(&f);
	memset(expr, '!', 1000);
	strcpy(expr + 1000, "pid=1");
	assert_int_equal(rec_sfilter_parse(expr, &f, &err), -EINVAL);
	rec_sfilter_release(&f);
}

static void cgroups(void **state)
{
	char root[] = "/tmp/sfilter-XXXXXX", dir[256], expr[128];
	struct rec_sfilter f;
	struct rec_sfilter_error err;
	struct stat st;
	struct ctx c = { 0 };

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/system.slice", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/system.slice/nginx.service", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(stat(dir, &st), 0);

	/* by path: its id at its depth (2) */
	assert_int_equal(rec_sfilter_parse("cgroup=/system.slice/nginx.service && mode=user",
					   &f, &err), 0);
	assert_int_equal(rec_sfilter_resolve(&f, "", root, &err), 0);
	assert_int_equal(f.insn[0].level, 2);
	assert_true(f.insn[0].value == st.st_ino);
	c.cgroup[2] = st.st_ino;
	c.mode = 1;
	assert_true(eval(&f, &c));
	c.cgroup[2] = st.st_ino + 1;
	assert_false(eval(&f, &c));
	rec_sfilter_release(&f);

	/* by id: found in the tree */
	snprintf(expr, sizeof(expr), "cgroup=%llu", (unsigned long long)st.st_ino);
	assert_int_equal(rec_sfilter_parse(expr, &f, &err), 0);
	assert_int_equal(rec_sfilter_resolve(&f, expr, root, &err), 0);
	assert_int_equal(f.insn[0].level, 2);
	rec_sfilter_release(&f);

	/* unknown ones point at themselves */
	assert_int_equal(rec_sfilter_parse("pid=1 || cgroup=/nope", &f, &err), 0);
	assert_int_equal(rec_sfilter_resolve(&f, "pid=1 || cgroup=/nope", root, &err), -EINVAL);
	assert_int_equal(err.pos, 16);
	assert_int_equal(err.len, 5);
	rec_sfilter_release(&f);
	assert_int_equal(rec_sfilter_parse("cgroup=424242424242", &f, &err), 0);
	assert_int_equal(rec_sfilter_resolve(&f, "cgroup=424242424242", root, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "no cgroup with id"));
	rec_sfilter_release(&f);

	rmdir(dir);
	snprintf(dir, sizeof(dir), "%s/system.slice", root);
	rmdir(dir);
	rmdir(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(semantics),
		cmocka_unit_test(errors),
		cmocka_unit_test(limits),
		cmocka_unit_test(cgroups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
