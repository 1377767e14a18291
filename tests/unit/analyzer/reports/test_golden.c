/*
 * test_golden.c - perfrec-analyze output on the golden trace, byte for
 * byte, for every subcommand in text and JSON (and CSV, filters, sorts).
 *
 * The trace is written by tests/lib/tracegen (its timeline is documented
 * there); expected outputs live in tests/golden/<case>.out. To regenerate
 * after an intended change:
 *
 *   PERFREC_GOLDEN_UPDATE=1 ctest -R test_golden     (then review git diff)
 *
 * The analyzer runs in the scratch directory with the relative name
 * "golden.prec", so no path leaks into the expectations.
 *
 * Old files: tests/golden/v1.0/ holds the same two traces as written by
 * the format library of version 1.0 (whole callchains, before callchain
 * trees), tests/golden/v1.1/ as written by 1.1 (a ContextSwitch packet per
 * switch, before switch batches). Every case runs on them too (in the
 * scratch subdirectories v1.0/ and v1.1/) and must give the same output,
 * except for the format version itself.
 */
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
#include "format/layout.h"

static const char *dir;
/* the committed traces of older format versions */
static const char *const olds[] = { "v1.0", "v1.1" };
#define NOLD (sizeof(olds) / sizeof(olds[0]))
static char olddir[NOLD][4096];

struct gcase {
	const char *name;   /* tests/golden/<name>.out */
	const char *args;   /* after the binary */
	int status;         /* expected exit status */
	const char *sub;    /* run in this subdirectory of the scratch dir */
	const char *expect; /* compare with <expect>.out instead of <name>.out */
};

static const struct gcase cases[] = {
	{ "info", "info golden.prec", 0 },
	{ "info_json", "info golden.prec --json", 0 },
	{ "report", "report golden.prec", 0 },
	{ "report_json", "report golden.prec --json", 0 },
	{ "report_csv", "report golden.prec --csv", 0 },
	{ "report_keys", "report golden.prec --sort comm,pid,tid,cpu,event", 0 },
	{ "report_children", "report golden.prec --children --sort comm,sym", 0 },
	{ "report_top", "report golden.prec --sort dso --top 2", 0 },
	{ "report_cpu", "report golden.prec --cpu 1 --sort comm,cpu", 0 },
	{ "report_comm", "report golden.prec --comm pong --sort comm,tid,sym", 0 },
	{ "report_time", "report golden.prec --time 0.030,0.050 --sort comm,tid", 0 },
	{ "report_time_abs", "report golden.prec --time @1.030,@1.050 --sort comm,tid", 0 },
	{ "report_event", "report golden.prec --event page-faults --sort event,sym", 0 },
	{ "counters", "counters golden.prec --interval --ratio task-clock/context-switches", 0 },
	{ "counters_json", "counters golden.prec --json --interval", 0 },
	{ "sched", "sched golden.prec", 0 },
	{ "sched_json", "sched golden.prec --json", 0 },
	{ "sched_hist", "sched golden.prec --hist --sort offcpu", 0 },
	{ "sched_pid", "sched golden.prec --pid 200 --sort comm", 0 },
	{ "sched_cpu", "sched golden.prec --cpu 1", 0 },
	{ "sched_time", "sched golden.prec --time 0.025,0.050 --csv", 0 },
	{ "dump", "dump golden.prec", 0 },
	{ "dump_json", "dump golden.prec --json", 0 },
	{ "dump_cpu", "dump golden.prec --cpu 1 --time 0.040,0.050", 0 },
	{ "verify", "verify golden.prec", 0 },
	{ "verify_json", "verify golden.prec --json", 0 },
	{ "export_folded", "export golden.prec --format folded", 0 },
	{ "export_json", "export golden.prec --format json --report sched", 0 },
	{ "export_csv", "export golden.prec --format csv --report counters --interval", 0 },
	/* record --off-cpu / --filter data (tracegen's offcpu option) */
	{ "info_offcpu", "info offcpu.prec", 0 },
	{ "report_offcpu", "report offcpu.prec --off-cpu --sort comm,tid,sym", 0 },
	{ "report_offcpu_children", "report offcpu.prec --off-cpu --children --sort sym,dso", 0 },
	{ "report_offcpu_cpu", "report offcpu.prec --off-cpu --cpu 1 --sort tid,cpu --json", 0 },
	{ "export_folded_offcpu", "export offcpu.prec --format folded --off-cpu", 0 },
	{ "sched_offcpu", "sched offcpu.prec --sort tid", 0 },
	{ "dump_offcpu", "dump offcpu.prec --time 0.055,0.070", 0 },
	/* the same packets on streams by kind (tracegen's by_kind, as
	 * perfrec writes them): passes that skip frames of kinds they do not
	 * need find what reading everything finds */
	{ "bykind_report", "report golden.prec", 0, "bykind", "report" },
	{ "bykind_report_children", "report golden.prec --children --sort comm,sym", 0, "bykind", "report_children" },
	{ "bykind_report_time", "report golden.prec --time 0.030,0.050 --sort comm,tid", 0, "bykind", "report_time" },
	{ "bykind_report_event", "report golden.prec --event page-faults --sort event,sym", 0, "bykind", "report_event" },
	{ "bykind_sched", "sched golden.prec", 0, "bykind", "sched" },
	{ "bykind_sched_time", "sched golden.prec --time 0.025,0.050 --csv", 0, "bykind", "sched_time" },
	{ "bykind_counters", "counters golden.prec --interval --ratio task-clock/context-switches", 0, "bykind", "counters" },
	{ "bykind_export_folded", "export golden.prec --format folded", 0, "bykind", "export_folded" },
	{ "bykind_export_json", "export golden.prec --format json --report sched", 0, "bykind", "export_json" },
	{ "bykind_report_offcpu", "report offcpu.prec --off-cpu --sort comm,tid,sym", 0, "bykind", "report_offcpu" },
	{ "bykind_sched_offcpu", "sched offcpu.prec --sort tid", 0, "bykind", "sched_offcpu" },
	/* dump names each packet's stream: its own file, the same lines */
	{ "dump_cpu_bykind", "dump golden.prec --cpu 1 --time 0.040,0.050", 0, "bykind" },
	{ "dump_offcpu_bykind", "dump offcpu.prec --time 0.055,0.070", 0, "bykind" },
};

static int setup(void **state)
{
	(void)state;
	dir = anatest_tmpdir("golden");
	if (!dir)
		return -1;
	char path[4096];
	snprintf(path, sizeof(path), "%s/golden.prec", dir);
	if (tracegen_write(path, NULL))
		return -1;
	struct tracegen_opts o = TRACEGEN_OPTS_INIT;
	o.offcpu = 1;
	snprintf(path, sizeof(path), "%s/offcpu.prec", dir);
	if (tracegen_write(path, &o))
		return -1;
	/* the committed files of older versions, byte for byte */
	char cmd[20000];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/bykind'", dir);
	if (system(cmd))
		return -1;
	for (size_t v = 0; v < NOLD; v++) {
		snprintf(olddir[v], sizeof(olddir[v]), "%s/%s", dir, olds[v]);
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s/tests/golden/%s/golden.prec' "
			 "'%s/tests/golden/%s/offcpu.prec' '%s/'", olddir[v], PERFREC_SOURCE_DIR,
			 olds[v], PERFREC_SOURCE_DIR, olds[v], olddir[v]);
		if (system(cmd))
			return -1;
	}
	/* the same timelines on streams by kind */
	struct tracegen_opts k = TRACEGEN_OPTS_INIT;
	k.by_kind = 1;
	snprintf(path, sizeof(path), "%s/bykind/golden.prec", dir);
	if (tracegen_write(path, &k))
		return -1;
	k.offcpu = 1;
	snprintf(path, sizeof(path), "%s/bykind/offcpu.prec", dir);
	return tracegen_write(path, &k) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* What the format library's encoder decides (compressed and raw sizes,
 * how many InternedData packets it emits) is not the analyzer's output
 * under test and changes with every encoder improvement: in lines naming
 * those, numbers become '#'; dump lines of interned packets are dropped. */
static int has(const char *line, const char *end, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = line; p + kl <= end; p++)
		if (!memcmp(p, key, kl))
			return 1;
	return 0;
}

static void normalize(const char *name, char *buf, size_t *len)
{
	static const char *const keys[] = { "file_size", "bytes_compressed",
		"compression_ratio", "bytes_raw", "\"interned\"", "interned ",
		"packets  ", "\"packets\":" };
	int is_dump = !strncmp(name, "dump", 4);
	char *out = buf, *line = buf, *end = buf + *len;
	while (line < end) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		char *le = nl ? nl + 1 : end;
		if (is_dump && (has(line, le, " interned ") || has(line, le, "\"kind\":\"interned\""))) {
			line = le;
			continue;
		}
		int hit = 0;
		for (size_t k = 0; !is_dump && k < sizeof(keys) / sizeof(keys[0]); k++)
			hit |= has(line, le, keys[k]);
		for (char *p = line; p < le;) {
			if (hit && ((*p >= '0' && *p <= '9') || (*p == '.' && p > line &&
				    p[-1] >= '0' && p[-1] <= '9'))) {
				/* skip the run first: out may point at p */
				while (p < le && ((*p >= '0' && *p <= '9') || *p == '.'))
					p++;
				*out++ = '#';
			} else {
				*out++ = *p++;
			}
		}
		line = le;
	}
	*len = (size_t)(out - buf);
	*out = '\0';
}

/* An old file names its own format version: that line is the current
 * version's in the expectations. */
static void old_version(char *buf, size_t *len, const char *old)
{
	char from[2][64], cur[64];
	const char *ver = old + 1;   /* "v1.0" -> "1.0" */
	snprintf(from[0], sizeof(from[0]), "format_version       %s", ver);
	snprintf(from[1], sizeof(from[1]), "\"format_version\": \"%s\"", ver);
	for (size_t k = 0; k < 2; k++) {
		char *p = strstr(buf, from[k]);
		if (!p)
			continue;
		/* "1.0" -> "M.m" of this build */
		snprintf(cur, sizeof(cur), "%u.%u", PREC_VERSION_MAJOR, PREC_VERSION_MINOR);
		size_t cl = strlen(cur), vl = strlen(ver);
		char *v = strstr(p, ver);
		memmove(v + cl, v + vl, *len - (size_t)(v + vl - buf) + 1);
		memcpy(v, cur, cl);
		*len = *len - vl + cl;
	}
}

/* old: NULL, or the older version's directory name (olds[]) */
static void run_case(const struct gcase *c, const char *where, const char *old)
{
	char *out = NULL, *err = NULL;
	size_t len = 0;
	int st = anatest_run(where, c->args, &out, &len, &err);
	assert_non_null(out);
	if (st != c->status)
		fprintf(stderr, "%s: stderr: %s\n", c->name, err ? err : "");
	assert_int_equal(st, c->status);
	if (old)
		old_version(out, &len, old);
	normalize(c->expect ? c->expect : c->name, out, &len);
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/golden/%s.out", PERFREC_SOURCE_DIR,
		 c->expect ? c->expect : c->name);
	if (getenv("PERFREC_GOLDEN_UPDATE") && !old && !c->expect) {
		assert_int_equal(anatest_write(path, out, len), 0);
	} else {
		size_t elen = 0;
		char *exp = anatest_read(path, &elen);
		if (!exp)
			fail_msg("missing %s (PERFREC_GOLDEN_UPDATE=1 writes it)", path);
		if (elen != len || memcmp(exp, out, len)) {
			char got[4096];
			snprintf(got, sizeof(got), "%s/%s.got", dir, c->name);
			anatest_write(got, out, len);
			char cmd[9000];
			snprintf(cmd, sizeof(cmd), "diff -u '%s' '%s' | head -40 >&2", path, got);
			if (system(cmd)) { /* diff exits 1 on differences */ }
			fail_msg("%s%s%s: output differs from %s", old ? old : "",
				 old ? " file, " : "", c->name, path);
		}
		free(exp);
	}
	free(out);
	free(err);
}

static void test_case(void **state)
{
	const struct gcase *c = *state;
	char cwd[4200];
	snprintf(cwd, sizeof(cwd), "%s%s%s", dir, c->sub ? "/" : "", c->sub ? c->sub : "");
	run_case(c, cwd, NULL);
}

/* A case of one older version: the state is its position in olds[] and
 * in cases[], packed. */
struct oldcase {
	const struct gcase *c;
	size_t v;
};

static void test_case_old(void **state)
{
	const struct oldcase *o = *state;
	run_case(o->c, olddir[o->v], olds[o->v]);
}

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);
	struct CMUnitTest *t = calloc((1 + NOLD) * n, sizeof(*t));
	char (*names)[80] = calloc(NOLD * n, sizeof(*names));
	struct oldcase *oc = calloc(NOLD * n, sizeof(*oc));
	if (!t || !names || !oc)
		return 1;
	size_t nt = n, no = 0;
	for (size_t i = 0; i < n; i++) {
		t[i].name = cases[i].name;
		t[i].test_func = test_case;
		t[i].initial_state = (void *)&cases[i];
	}
	for (size_t v = 0; v < NOLD; v++)
		for (size_t i = 0; i < n; i++) {
			if (cases[i].sub)   /* another layout of the same timeline */
				continue;
			oc[no] = (struct oldcase){ &cases[i], v };
			snprintf(names[no], sizeof(names[no]), "%s/%s", olds[v], cases[i].name);
			t[nt].name = names[no];
			t[nt].test_func = test_case_old;
			t[nt].initial_state = &oc[no];
			nt++;
			no++;
		}
	int ret = _cmocka_run_group_tests("golden", t, nt, setup, teardown);
	free(oc);
	free(names);
	free(t);
	return ret;
}
