/*
 * sfilter.h - the sample filter language of `perfrec record --filter`:
 * an expression over the sampled task and context, compiled into the
 * postfix instructions sfilter.bpf.c runs in the kernel for every sample.
 *
 *   expr  := and ('||' and)*
 *   and   := unary ('&&' unary)*
 *   unary := '!' unary | '(' expr ')' | test
 *   test  := FIELD OP VALUE
 *   FIELD := pid (= tgid: the process) | tgid | tid | uid | cpu
 *            | cgroup | mode
 *   OP    := = (or ==) | != | < | <= | > | >=
 *   VALUE := a number (decimal or 0x hex); with = and != also a list of
 *            numbers and ranges (pid=12,40-43);
 *            cgroup: a path below the cgroup v2 mount (/system.slice/x.service,
 *            quoted if it has spaces) or an id; true for that cgroup and
 *            every cgroup below it; only = and !=;
 *            mode: user or kernel; only = and !=.
 *
 * Pure parsing (no kernel, no libbpf): parse() checks the syntax and
 * builds the instructions; resolve() turns cgroup paths (and ids) into the
 * id and depth the program compares, from the cgroup v2 hierarchy.
 *
 * How to use:
 *
 *   struct rec_sfilter f;
 *   struct rec_sfilter_error err;
 *   if (rec_sfilter_parse(expr, &f, &err) < 0 ||
 *       rec_sfilter_resolve(&f, expr, NULL, &err) < 0) {
 *       char msg[512];
 *       rec_sfilter_describe_error(expr, &err, msg, sizeof(msg));  // caret line
 *       ...
 *   }
 *   ... f.insn[0..f.n) into the program ...
 *   rec_sfilter_release(&f);
 *
 * Ownership: f owns its cgroup paths; expr is only read.
 */
#ifndef REC_SFILTER_H
#define REC_SFILTER_H

#include <linux/types.h>
#include <stddef.h>

#include "recorder/bpf/bpf_abi.h"

/* Most cgroup tests in one expression. */
#define REC_SF_MAX_CGROUPS 16

struct rec_sfilter {
	struct rec_sf_insn insn[REC_SF_MAX_INSNS];
	size_t n;
	struct {
		size_t insn;       /* the REC_SF_TEST that compares it */
		char *path;        /* as written, or NULL for an id */
		size_t pos, len;   /* where in the expression */
	} cg[REC_SF_MAX_CGROUPS];
	size_t ncg;
};

/* Where parse() or resolve() stopped: the offending bytes and why. */
struct rec_sfilter_error {
	size_t pos, len;
	char msg[192];
};

/* 0, or -EINVAL with err set (-ENOMEM: out of memory, err set too). f is
 * initialized either way; release it. */
int rec_sfilter_parse(const char *expr, struct rec_sfilter *f,
		      struct rec_sfilter_error *err);

/* Cgroup tests: paths are looked up below cgroot (NULL: the cgroup v2
 * mount from /proc/self/mountinfo), ids are searched for in it. 0 or a
 * negative errno with err set. */
int rec_sfilter_resolve(struct rec_sfilter *f, const char *expr,
			const char *cgroot, struct rec_sfilter_error *err);

/* "msg\n  EXPR\n  ^^^" into buf (the expression and a caret line under the
 * offending part). Returns buf. */
const char *rec_sfilter_describe_error(const char *expr,
				       const struct rec_sfilter_error *err,
				       char *buf, size_t len);

/* The cgroup v2 mount point into buf: 0, or -ENOENT when none is
 * mounted. */
int rec_sfilter_cgroup_root(char *buf, size_t len);

void rec_sfilter_release(struct rec_sfilter *f);

#endif
