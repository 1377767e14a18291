/*
 * test_archive_loader.c - the archiver's queue of loads
 * (recorder/net/archive_load.c), with a shell script standing in for
 * perfrec-analyze: each file is loaded once with the URLs given, never more
 * loads at once than asked, a failure is logged with its exit status and
 * queued again, stopping waits for running loads (and stops one that
 * outlasts the wait), and the log never shows a URL's password. The
 * load's command line (which every local user reads) never holds the
 * URLs: they come in its environment, or as a file only its owner reads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recorder/net/archive_load.h"
#include "lib/logcap.h"

#define URLS "http://user:secret@127.0.0.1:1/?password=secret,http://127.0.0.1:2"
#define SHOWN "http://127.0.0.1:1/,http://127.0.0.1:2"

struct fixture {
	char dir[64];
	char exe[128];
};

/* The stand-in: logs its command line as /proc shows it to anyone and
 * the URLs of its environment, counts the loads running with it, sleeps
 * when the file's name (its last argument) says slow, exits 7 when it
 * says fail. */
static const char script[] =
	"#!/bin/sh\n"
	"d=$(dirname \"$0\")\n"
	"echo \"$(tr '\\0' ' ' </proc/$$/cmdline)\" >>\"$d/calls\"\n"   /* one write: loads run at once */
	"echo \"${PERFREC_CLICKHOUSE-unset}\" >>\"$d/envs\"\n"
	"for a; do f=$a; done\n"
	"touch \"$d/run/$$\"\n"
	"ls \"$d/run\" | wc -l >>\"$d/conc\"\n"
	"case \"$f\" in *slow*) sleep 0.5;; *stuck*) exec sleep 30;; *) sleep 0.1;; esac\n"
	"rm -f \"$d/run/$$\"\n"
	"case \"$f\" in *fail*) exit 7;; esac\n"
	"exit 0\n";

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char path[160];
	FILE *fp;

	snprintf(f->dir, sizeof(f->dir), "/tmp/prec-archload-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->exe, sizeof(f->exe), "%s/fake-analyze", f->dir);
	fp = fopen(f->exe, "w");
	assert_non_null(fp);
	fputs(script, fp);
	fclose(fp);
	chmod(f->exe, 0755);
	snprintf(path, sizeof(path), "%s/run", f->dir);
	mkdir(path, 0755);
	logcap_install();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static char *slurp(const struct fixture *f, const char *name)
{
	static char buf[8192];
	char path[160];
	FILE *fp;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fp = fopen(path, "r");
	if (fp) {
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
	}
	buf[n] = '\0';
	return buf;
}

static struct rec_archive_loader *loader(const struct fixture *f, int jobs, uint32_t stop_wait)
{
	struct rec_archive_loader_opts o = REC_ARCHIVE_LOADER_OPTS_INIT;
	struct rec_archive_loader *l;

	o.urls = URLS;
	o.analyzer = f->exe;
	o.jobs = jobs;
	o.stop_wait_ms = stop_wait;
	assert_int_equal(rec_archive_loader_new(&o, &l), 0);
	return l;
}

/* Polls until cond(stats) or 20 s. */
static void poll_until(struct rec_archive_loader *l,
		       bool (*cond)(const struct rec_archive_loader_stats *st))
{
	struct rec_archive_loader_stats st;

	for (int i = 0; i < 2000; i++) {
		struct timespec t = { 0, 10 * 1000000L };

		rec_archive_loader_poll(l);
		rec_archive_loader_stats(l, &st);
		if (cond(&st))
			return;
		nanosleep(&t, NULL);
	}
	fail_msg("the loads did not end within 20 s: %s", logcap_all());
}

static bool five_loaded(const struct rec_archive_loader_stats *st)
{
	return st->loaded == 5;
}

static void test_each_file_once_two_at_a_time(void **state)
{
	struct fixture *f = *state;
	struct rec_archive_loader *l = loader(f, 2, 0);
	struct rec_archive_loader_stats st;
	char path[64], line[160];
	const char *calls, *c;
	int max = 0;

	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "/archive/h%d/s.prec", i);
		assert_int_equal(rec_archive_loader_add(l, path), 0);
	}
	poll_until(l, five_loaded);
	rec_archive_loader_stats(l, &st);
	assert_int_equal(st.queued, 5);
	assert_int_equal(st.failed, 0);
	calls = slurp(f, "calls");
	for (int i = 0; i < 5; i++) {
		/* the command line names the file, never the URLs */
		snprintf(line, sizeof(line), "load /archive/h%d/s.prec \n", i);
		c = strstr(calls, line);
		assert_non_null(c);
		assert_null(strstr(c + 1, line));
	}
	assert_null(strstr(calls, "secret"));
	assert_null(strstr(calls, "127.0.0.1"));
	/* the URLs as given, password included, in each load's environment */
	assert_string_equal(slurp(f, "envs"), URLS "\n" URLS "\n" URLS "\n" URLS "\n" URLS "\n");
	for (c = slurp(f, "conc"); *c; c = strchr(c, '\n') + 1)
		max = atoi(c) > max ? atoi(c) : max;
	assert_in_range(max, 1, 2);
	rec_archive_loader_free(l);
	assert_null(strstr(logcap_all(), "secret"));
	assert_null(strstr(logcap_all(), "not loaded"));
}

static bool one_failed(const struct rec_archive_loader_stats *st)
{
	return st->failed == 1;
}

static void test_failure_logged_and_queued_again(void **state)
{
	struct fixture *f = *state;
	struct rec_archive_loader *l = loader(f, 1, 0);
	struct rec_archive_loader_stats st;

	assert_int_equal(rec_archive_loader_add(l, "/archive/h/fail.prec"), 0);
	poll_until(l, one_failed);
	rec_archive_loader_stats(l, &st);
	assert_int_equal(st.retried, 1);
	assert_int_equal(st.loaded, 0);
	assert_non_null(strstr(logcap_all(), "loading /archive/h/fail.prec: the load exited "
				"with status 7; trying again in 10 s"));
	/* waiting for its retry when the archiver stops: named for a manual load */
	rec_archive_loader_free(l);
	assert_non_null(strstr(logcap_all(), "/archive/h/fail.prec not loaded (the archiver "
				"stopped first); load it with perfrec-analyze load --clickhouse "
				SHOWN " /archive/h/fail.prec"));
	assert_null(strstr(logcap_all(), "secret"));
	assert_int_equal(strlen(slurp(f, "calls")) > 0, 1);
}

static void test_stop_waits_then_stops(void **state)
{
	struct fixture *f = *state;
	struct rec_archive_loader *l = loader(f, 2, 3000);

	assert_int_equal(rec_archive_loader_add(l, "/archive/h/slow.prec"), 0);
	assert_int_equal(rec_archive_loader_add(l, "/archive/h/stuck.prec"), 0);
	rec_archive_loader_poll(l);   /* both start */
	rec_archive_loader_free(l);
	/* the slow one ended on its own within the wait, the stuck one was stopped */
	assert_non_null(strstr(logcap_all(), "/archive/h/slow.prec loaded"));
	assert_non_null(strstr(logcap_all(), "stopping the load of /archive/h/stuck.prec"));
	assert_non_null(strstr(logcap_all(), "loading /archive/h/stuck.prec: the load was "
				"killed by signal 15 (try 1 of 4); left for a manual"));
}

/* --clickhouse-file: the load reads the file (its name, not the URLs, on
 * the command line; an inherited PERFREC_CLICKHOUSE is not passed on), and
 * a file others may read is refused before any load. */
static void test_urls_file(void **state)
{
	struct fixture *f = *state;
	struct rec_archive_loader_opts o = REC_ARCHIVE_LOADER_OPTS_INIT;
	struct rec_archive_loader *l;
	char file[160], line[512];
	FILE *fp;

	snprintf(file, sizeof(file), "%s/urls", f->dir);
	fp = fopen(file, "w");
	assert_non_null(fp);
	fputs(URLS "\n", fp);
	fclose(fp);
	chmod(file, 0640);
	o.urls_file = file;
	o.analyzer = f->exe;
	assert_int_equal(rec_archive_loader_new(&o, &l), -EINVAL);
	snprintf(line, sizeof(line), "--clickhouse-file %s is open to others than its owner "
		 "(mode 640) and may hold passwords: chmod 600 %s", file, file);
	assert_non_null(strstr(logcap_err(), line));
	o.urls = URLS;   /* both: refused */
	chmod(file, 0600);
	assert_int_equal(rec_archive_loader_new(&o, &l), -EINVAL);
	o.urls = NULL;
	assert_int_equal(rec_archive_loader_new(&o, &l), 0);
	setenv("PERFREC_CLICKHOUSE", "http://inherited:1", 1);
	assert_int_equal(rec_archive_loader_add(l, "/archive/h/s.prec"), 0);
	assert_int_equal(rec_archive_loader_add(l, "/archive/h/fail.prec"), 0);
	poll_until(l, one_failed);
	unsetenv("PERFREC_CLICKHOUSE");
	snprintf(line, sizeof(line), "load --clickhouse-file %s /archive/h/s.prec \n", file);
	assert_non_null(strstr(slurp(f, "calls"), line));
	assert_string_equal(slurp(f, "envs"), "unset\nunset\n");
	rec_archive_loader_free(l);
	snprintf(line, sizeof(line), "load it with perfrec-analyze load --clickhouse-file %s "
		 "/archive/h/fail.prec", file);
	assert_non_null(strstr(logcap_all(), line));
}

static void test_missing_analyzer_refused(void **state)
{
	struct fixture *f = *state;
	struct rec_archive_loader_opts o = REC_ARCHIVE_LOADER_OPTS_INIT;
	struct rec_archive_loader *l;
	char exe[160];

	snprintf(exe, sizeof(exe), "%s/no-such-analyze", f->dir);
	o.urls = URLS;
	o.analyzer = exe;
	assert_int_equal(rec_archive_loader_new(&o, &l), -EINVAL);
	assert_null(l);
	assert_non_null(strstr(logcap_err(), "give --analyzer the path of perfrec-analyze"));
	o.analyzer = NULL;
	o.urls = "";
	assert_int_equal(rec_archive_loader_new(&o, &l), -EINVAL);
	rec_archive_loader_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_each_file_once_two_at_a_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_logged_and_queued_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_waits_then_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_urls_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_analyzer_refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
