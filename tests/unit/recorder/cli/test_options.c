/*
 * test_options.c - the command-line layer (recorder/cli/options.c,
 * parse.c): record and stat accept the same forms for the options they
 * share and refuse the same mistakes; values parse one way everywhere;
 * help comes from the same tables as parsing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/cli/cmd.h"
#include "recorder/cli/parse.h"
#include "lib/logcap.h"

#define MAXARGS 16

/* argv = { name, words..., NULL } */
static int make_argv(char **argv, const char *name, const char *const *words)
{
	int n = 0;

	argv[n++] = (char *)name;
	for (; words && *words && n < MAXARGS - 1; words++)
		argv[n++] = (char *)*words;
	argv[n] = NULL;
	return n;
}

static void same_common(const struct rec_cli_common *a, const struct rec_cli_common *b)
{
	assert_int_equal(a->nevents, b->nevents);
	for (size_t i = 0; i < a->nevents; i++)
		assert_string_equal(a->events[i], b->events[i]);
	assert_int_equal(a->ncounters, b->ncounters);
	for (size_t i = 0; i < a->ncounters; i++)
		assert_string_equal(a->counters[i], b->counters[i]);
	assert_int_equal(a->all_cpus, b->all_cpus);
	assert_int_equal(a->have_cpus, b->have_cpus);
	assert_int_equal(a->cpus.n, b->cpus.n);
	for (size_t i = 0; i < a->cpus.n; i++)
		assert_int_equal(a->cpus.cpu[i], b->cpus.cpu[i]);
	assert_int_equal(a->tasks, b->tasks);
	assert_int_equal(a->ids.n, b->ids.n);
	for (size_t i = 0; i < a->ids.n; i++)
		assert_int_equal(a->ids.tid[i], b->ids.tid[i]);
	assert_int_equal(a->have_interval, b->have_interval);
	if (a->have_interval)
		assert_int_equal(a->interval_ns, b->interval_ns);
	assert_int_equal(a->duration_ns, b->duration_ns);
	assert_int_equal(a->target, b->target);
	assert_int_equal(!a->command, !b->command);
	for (size_t i = 0; a->command && a->command[i]; i++)
		assert_string_equal(a->command[i], b->command[i]);
}

/* Both commands parse words; returns both results (0 / < 0). */
static void parse_both(const char *const *words, int *rret, int *sret,
		       struct rec_cli_record_args *ra, struct rec_cli_stat_args *sa)
{
	/* the results point into argv (the command): keep it alive */
	static char *rargv[MAXARGS], *sargv[MAXARGS];
	int argc;

	argc = make_argv(rargv, "record", words);
	*rret = rec_cli_record_parse(argc, rargv, ra);
	argc = make_argv(sargv, "stat", words);
	*sret = rec_cli_stat_parse(argc, sargv, sa);
}

static void test_same_forms(void **state)
{
	static const char *const forms[][8] = {
		{ "-p", "1-3,7" },
		{ "--pid", "12" },
		{ "--pid=12,13" },
		{ "-t", "5" },
		{ "-t5" },
		{ "-C", "0-1" },
		{ "--cpu=0,1" },
		{ "-a" },
		{ "-a", "-I", "100ms" },
		{ "-a", "-I", "250" },
		{ "-a", "-I250" },
		{ "-a", "--interval", "1s" },
		{ "-a", "--interval=2.5s" },
		{ "-a", "-e", "cpu-clock", "-e", "page-faults" },
		{ "-a", "--event=task-clock" },
		{ "-a", "--counters", "{task-clock,page-faults}" },
		{ "-a", "-o", "x.prec" },
		{ "-a", "-d", "2.5" },
		{ "-d", "500ms", "--", "sleep", "1" },
		{ "--", "sleep", "1" },
		{ "-a", "--", "sleep", "1" },
		{ "-C", "1", "sleep", "1" },
	};

	(void)state;
	for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		struct rec_cli_record_args ra;
		struct rec_cli_stat_args sa;
		int rr, sr;

		logcap_clear();
		parse_both(forms[f], &rr, &sr, &ra, &sa);
		if (rr || sr)
			fail_msg("form %zu (%s ...): record %d, stat %d: %s", f, forms[f][0],
				 rr, sr, logcap_all());
		same_common(&ra.c, &sa.c);
		/* -o: stat has no default file, record writes perfrec.prec */
		if (sa.c.output)
			assert_string_equal(ra.c.output, sa.c.output);
		else
			assert_string_equal(ra.c.output, "perfrec.prec");
		rec_cli_common_release(&ra.c);
		rec_cli_common_release(&sa.c);
	}
}

static void test_values(void **state)
{
	static const char *const a[] = { "-p", "1-3,7", "-I", "250", NULL };
	static const char *const b[] = { "-a", "--interval=2.5s", "--duration", "3", NULL };
	struct rec_cli_record_args ra;
	struct rec_cli_stat_args sa;
	int rr, sr;

	(void)state;
	parse_both(a, &rr, &sr, &ra, &sa);
	assert_int_equal(rr, 0);
	assert_int_equal(sa.c.target, REC_TARGET_PIDS);
	assert_int_equal(sa.c.ids.n, 4);
	assert_int_equal(sa.c.ids.tid[2], 3);
	assert_int_equal(sa.c.ids.tid[3], 7);
	assert_int_equal(sa.c.interval_ns, 250000000ull);
	rec_cli_common_release(&ra.c);
	rec_cli_common_release(&sa.c);
	parse_both(b, &rr, &sr, &ra, &sa);
	assert_int_equal(ra.c.interval_ns, 2500000000ull);
	assert_int_equal(sa.c.duration_ns, 3000000000ull);
	assert_int_equal(ra.c.target, REC_TARGET_SYSTEM);
	rec_cli_common_release(&ra.c);
	rec_cli_common_release(&sa.c);
}

static void test_same_refusals(void **state)
{
	static const struct {
		const char *words[6];
		const char *why;
	} bad[] = {
		{ { "-p", "x" }, "bad -p 'x': not a pid list" },
		{ { "-p", "0" }, "bad -p '0'" },
		{ { "-t", "1-" }, "bad -t '1-'" },
		{ { "-C", "3-1" }, "bad -C '3-1': not a cpu list" },
		{ { "--cpu=a" }, "bad --cpu 'a'" },
		{ { "-a", "-I", "abc" }, "bad -I 'abc'" },
		{ { "-a", "--interval", "0" }, "bad --interval '0'" },
		{ { "-a", "-I", "1x" }, "bad -I '1x'" },
		{ { "-a", "-d", "0" }, "bad -d '0'" },
		{ { "-a", "--duration", "soon" }, "bad --duration 'soon'" },
		{ { "-p", "1", "-a" }, "choose one target" },
		{ { "-p", "1", "-t", "2" }, "-p (processes) or -t" },
		{ { "-p", "1", "--", "true" }, "cannot be combined" },
		{ { "-a", "--bogus" }, "unknown option '--bogus'" },
		{ { "-a", "-Z" }, "unknown option '-Z'" },
		{ { "-a", "-I" }, "option '-I' needs a value" },
		{ { "-a", "--interval" }, "option '--interval' needs a value" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rec_cli_record_args ra;
		struct rec_cli_stat_args sa;
		char rmsg[REC_LOG_MAX];
		int rr, sr;
		char *argv[MAXARGS];
		int argc;

		logcap_clear();
		argc = make_argv(argv, "record", bad[i].words);
		rr = rec_cli_record_parse(argc, argv, &ra);
		snprintf(rmsg, sizeof(rmsg), "%s", logcap_err());
		logcap_clear();
		argc = make_argv(argv, "stat", bad[i].words);
		sr = rec_cli_stat_parse(argc, argv, &sa);
		if (rr != -EINVAL || sr != -EINVAL || !strstr(rmsg, bad[i].why) ||
		    strcmp(rmsg, logcap_err()))
			fail_msg("%s: record %d '%s', stat %d '%s', wanted '%s'",
				 bad[i].words[0], rr, rmsg, sr, logcap_err(), bad[i].why);
		rec_cli_common_release(&ra.c);
		rec_cli_common_release(&sa.c);
	}
}

static void test_record_only(void **state)
{
	static const char *const a[] = { "-d", "2.5", "-F", "10k", "-m", "64",
					 "--spool", "64m", "-g", NULL };
	static const char *const b[] = { "-d", "500ms", "-c", "1000", NULL };
	static const char *const c[] = { "-F", "99", "-c", "1000", NULL };
	struct rec_cli_record_args ra;
	char *argv[MAXARGS];
	int argc;

	(void)state;
	argc = make_argv(argv, "record", a);
	assert_int_equal(rec_cli_record_parse(argc, argv, &ra), 0);
	assert_int_equal(ra.c.duration_ns, 2500000000ull);
	assert_int_equal(ra.ro.events.freq, 10000);
	assert_int_equal(ra.ro.events.mmap_pages, 64);
	assert_int_equal(ra.ro.spool_bytes, 64ull << 20);
	assert_true(ra.ro.events.callchain);
	assert_int_equal(ra.c.target, REC_TARGET_SYSTEM);
	assert_string_equal(ra.c.output, "perfrec.prec");
	rec_cli_common_release(&ra.c);
	argc = make_argv(argv, "record", b);
	assert_int_equal(rec_cli_record_parse(argc, argv, &ra), 0);
	assert_int_equal(ra.c.duration_ns, 500000000ull);
	assert_int_equal(ra.ro.events.period, 1000);
	assert_int_equal(ra.ro.events.freq, 0);
	rec_cli_common_release(&ra.c);
	argc = make_argv(argv, "record", c);
	assert_int_equal(rec_cli_record_parse(argc, argv, &ra), -EINVAL);
	assert_non_null(strstr(logcap_err(), "exclude each other"));
	rec_cli_common_release(&ra.c);
}

/* -g and --call-graph MODE: the last one given wins. */
static void test_call_graph(void **state)
{
	static const char *const a[] = { "--call-graph", "dwarf", NULL };
	static const char *const b[] = { "--call-graph=dwarf,16k,raw", NULL };
	static const char *const c[] = { "--call-graph", "dwarf", "-g", NULL };
	static const char *const d[] = { "-g", "--call-graph", "fp", NULL };
	static const char *const e[] = { "--call-graph", "lbr", NULL };
	static const char *const f[] = { "--call-graph", NULL };
	struct rec_cli_record_args ra;
	struct rec_call_graph cg;
	char *argv[MAXARGS];
	int argc;

	(void)state;
	argc = make_argv(argv, "record", a);
	assert_int_equal(rec_cli_record_parse(argc, argv, &ra), 0);
	assert_true(ra.ro.dwarf);
	assert_false(ra.ro.events.callchain);
	assert_false(ra.ro.raw_stacks);
	assert_int_equal(ra.ro.events.stack_user, 0);
	rec_cli_common_release(&ra.c);
	argc = make_argv(argv, "record", b);
	assert_int_equal(rec_cli_record_parse(argc, argv, &ra), 0);
	assert_true(ra.ro.dwarf && ra.ro.raw_stacks);
	assert_int_equal(ra.ro.events.stack_user, 16384);
	rec_cli_common_release(&ra.c);
	argc = make_argv(argv, "record", c);
	assert_int_equal(rec_cli_record_parse(argc, argv, &ra), 0);
	assert_true(ra.ro.events.callchain);
	assert_false(ra.ro.dwarf);
	rec_cli_common_release(&ra.c);
	argc = make_argv(argv, "record", d);
	assert_int_equal(rec_cli_record_parse(argc, argv, &ra), 0);
	assert_true(ra.ro.events.callchain);
	assert_false(ra.ro.dwarf);
	rec_cli_common_release(&ra.c);
	argc = make_argv(argv, "record", e);
	assert_int_equal(rec_cli_record_parse(argc, argv, &ra), -EINVAL);
	assert_non_null(strstr(logcap_err(), "--call-graph 'lbr'"));
	rec_cli_common_release(&ra.c);
	argc = make_argv(argv, "record", f);
	assert_int_equal(rec_cli_record_parse(argc, argv, &ra), -EINVAL);
	rec_cli_common_release(&ra.c);

	assert_int_equal(rec_parse_call_graph("fp", &cg), 0);
	assert_false(cg.dwarf);
	assert_int_equal(rec_parse_call_graph("dwarf", &cg), 0);
	assert_true(cg.dwarf && !cg.raw && !cg.stack_user);
	assert_int_equal(rec_parse_call_graph("dwarf,raw", &cg), 0);
	assert_true(cg.dwarf && cg.raw && !cg.stack_user);
	assert_int_equal(rec_parse_call_graph("dwarf,4093", &cg), 0);
	assert_int_equal(cg.stack_user, 4096);   /* rounded up to 8 */
	assert_int_equal(rec_parse_call_graph("dwarf,65528", &cg), 0);
	assert_int_equal(rec_parse_call_graph("dwarf,65529", &cg), -ERANGE);
	assert_int_equal(rec_parse_call_graph("dwarf,0", &cg), -ERANGE);
	assert_int_equal(rec_parse_call_graph("dwarf,raw,8k", &cg), -EINVAL);
	assert_int_equal(rec_parse_call_graph("dwarf,raw,raw", &cg), -EINVAL);
	assert_int_equal(rec_parse_call_graph("dwarf,", &cg), -EINVAL);
	assert_int_equal(rec_parse_call_graph("dwarf,,raw", &cg), -EINVAL);
	assert_int_equal(rec_parse_call_graph(",dwarf", &cg), -EINVAL);
	assert_int_equal(rec_parse_call_graph("fp,8k", &cg), -EINVAL);
	assert_int_equal(rec_parse_call_graph("", &cg), -EINVAL);
	assert_int_equal(rec_parse_call_graph("raw", &cg), -EINVAL);
}

static void test_parsers(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(rec_parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(rec_parse_size("64k", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(rec_parse_size("32MiB", &v), 0);
	assert_int_equal(v, 32u << 20);
	assert_int_equal(rec_parse_size("1g", &v), 0);
	assert_int_equal(v, 1u << 30);
	assert_int_equal(rec_parse_size("1.5k", &v), 0);
	assert_int_equal(v, 1536);
	assert_int_equal(rec_parse_size("0.3", &v), -EINVAL);
	assert_int_equal(rec_parse_size("2t", &v), -EINVAL);
	assert_int_equal(rec_parse_size("2048g", &v), -ERANGE);
	assert_int_equal(rec_parse_size("-1", &v), -EINVAL);
	assert_int_equal(rec_parse_size("0x10", &v), -EINVAL);
	assert_int_equal(rec_parse_size("", &v), -EINVAL);

	assert_int_equal(rec_parse_duration("100ms", 1, &v), 0);
	assert_int_equal(v, 100000000ull);
	assert_int_equal(rec_parse_duration("2.5", 1000000000ull, &v), 0);
	assert_int_equal(v, 2500000000ull);
	assert_int_equal(rec_parse_duration("250", 1000000, &v), 0);
	assert_int_equal(v, 250000000ull);
	assert_int_equal(rec_parse_duration("1m", 1, &v), 0);
	assert_int_equal(v, 60000000000ull);
	assert_int_equal(rec_parse_duration("1h", 1, &v), 0);
	assert_int_equal(v, 3600000000000ull);
	assert_int_equal(rec_parse_duration("7us", 1, &v), 0);
	assert_int_equal(v, 7000);
	assert_int_equal(rec_parse_duration("1e3", 1, &v), -EINVAL);
	assert_int_equal(rec_parse_duration("inf", 1, &v), -EINVAL);
	assert_int_equal(rec_parse_duration("5 s", 1, &v), -EINVAL);
	assert_int_equal(rec_parse_duration("99999999999h", 1, &v), -ERANGE);

	assert_int_equal(rec_parse_freq("4000", &v), 0);
	assert_int_equal(v, 4000);
	assert_int_equal(rec_parse_freq("10k", &v), 0);
	assert_int_equal(v, 10000);
	assert_int_equal(rec_parse_freq("99Hz", &v), 0);
	assert_int_equal(v, 99);
	assert_int_equal(rec_parse_freq("0", &v), -EINVAL);
	assert_int_equal(rec_parse_freq("0.5", &v), -EINVAL);
	assert_int_equal(rec_parse_freq("20000k", &v), -ERANGE);

	assert_int_equal(rec_parse_uint("19", 19, &v), 0);
	assert_int_equal(rec_parse_uint("20", 19, &v), -ERANGE);
	assert_int_equal(rec_parse_uint("1x", 19, &v), -EINVAL);
	assert_int_equal(rec_parse_uint("+1", 19, &v), -EINVAL);
}

/* Help is made from the tables: every option the parser takes is shown. */
static void test_help_lists_options(void **state)
{
	int saved;

	(void)state;
	fflush(stdout);
	saved = dup(1);
	/* rec_cli_record() prints help to stdout: capture it */
	{
		char path[] = "/tmp/perfrec-help-XXXXXX";
		int tmp = mkstemp(path);
		char *argv[] = { (char *)"record", (char *)"--help", NULL };
		char text[16384];
		ssize_t n;

		assert_true(tmp >= 0);
		dup2(tmp, 1);
		assert_int_equal(rec_cli_record(2, argv), 0);
		fflush(stdout);
		dup2(saved, 1);
		n = pread(tmp, text, sizeof(text) - 1, 0);
		assert_true(n > 0);
		text[n] = '\0';
		close(tmp);
		unlink(path);
		for (const char *o = "-e, --event EVENTS\0-F, --freq HZ\0--switch-events\0"
		     "-p, --pid PIDS\0-t, --tid TIDS\0-I, --interval TIME\0--spool SIZE\0"
		     "--symbols-interval TIME\0-q, --quiet\0  -g  \0--call-graph MODE\0";
		     *o; o += strlen(o) + 1)
			if (!strstr(text, o))
				fail_msg("record --help lacks '%s'", o);
	}
	close(saved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_forms),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_same_refusals),
		cmocka_unit_test(test_record_only),
		cmocka_unit_test(test_call_graph),
		cmocka_unit_test(test_parsers),
		cmocka_unit_test(test_help_lists_options),
	};

	logcap_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
