/*
 * test_config.c - the daemon's configuration directory
 * (recorder/daemon/config.c): words of session files (quotes, escapes,
 * comments, lines), daemon.conf (the group; a mistyped key is an error
 * naming its line), session file names.
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

#include "recorder/daemon/config.h"
#include "lib/logcap.h"

static void words(const char *text, int want, const char *const *expect)
{
	char **v;
	int n;

	assert_int_equal(rec_words_split(text, "t", &v, &n), 0);
	assert_int_equal(n, want);
	for (int i = 0; i < n; i++)
		assert_string_equal(v[i], expect[i]);
	assert_null(v[n]);
	rec_words_free(v);
}

static void test_words(void **state)
{
	(void)state;
	logcap_install();
	words("", 0, NULL);
	words("  # only a comment\n\n", 0, NULL);
	{
		static const char *const e[] = { "-a", "-e", "cpu-clock", "--switch-events" };

		words("-a -e cpu-clock   # sample\n\t--switch-events\n", 4, e);
	}
	{
		static const char *const e[] = { "{a,b}", "two words", "say \"hi\"", "a b",
						  "x#y", "" };

		words("'{a,b}' \"two words\" \"say \\\"hi\\\"\" a\\ b x#y ''", 6, e);
	}
	{
		static const char *const e[] = { "ab" };

		words("'a'\"b\"", 1, e);
	}
}

static void test_words_bad(void **state)
{
	char **v = NULL;
	int n;

	(void)state;
	logcap_install();
	assert_int_equal(rec_words_split("-e x\n-o 'open", "web.session", &v, &n), -EINVAL);
	assert_null(v);
	assert_string_equal(logcap_err(), "web.session:2: unterminated quote");
}

static void test_daemon_conf(void **state)
{
	char dir[] = "/tmp/perfrec-conf-XXXXXX", path[64];
	struct rec_daemon_conf c;
	FILE *f;

	(void)state;
	logcap_install();
	assert_non_null(mkdtemp(dir));
	assert_int_equal(rec_daemon_conf_read(dir, &c), 0);   /* no file: defaults */
	assert_string_equal(c.group, "");
	snprintf(path, sizeof(path), "%s/daemon.conf", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "# who may use ctl\n\ngroup perfrec   # the socket's group\n");
	fclose(f);
	assert_int_equal(rec_daemon_conf_read(dir, &c), 0);
	assert_string_equal(c.group, "perfrec");
	f = fopen(path, "w");
	fprintf(f, "group perfrec\n\ngrop wheel\n");
	fclose(f);
	assert_int_equal(rec_daemon_conf_read(dir, &c), -EINVAL);
	assert_non_null(strstr(logcap_err(), "line 3"));
	unlink(path);
	rmdir(dir);
}

static void test_file_names(void **state)
{
	char name[65];

	(void)state;
	assert_true(rec_session_file_name("web.session", name));
	assert_string_equal(name, "web");
	assert_true(rec_session_file_name("db-1.prod.session", name));
	assert_string_equal(name, "db-1.prod");
	assert_false(rec_session_file_name(".session", name));
	assert_false(rec_session_file_name(".hidden.session", name));
	assert_false(rec_session_file_name("web.session~", name));
	assert_false(rec_session_file_name("daemon.conf", name));
	assert_false(rec_session_file_name("a b.session", name));
}

static void test_session_file(void **state)
{
	char path[] = "/tmp/perfrec-sess-XXXXXX";
	char **v;
	int fd, n;

	(void)state;
	logcap_install();
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "-a\n-e 'sched:sched_switch'\n", 27), 27);
	close(fd);
	assert_int_equal(rec_session_file_read(path, &v, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[2], "sched:sched_switch");
	rec_words_free(v);
	unlink(path);
	assert_int_equal(rec_session_file_read(path, &v, &n), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_words_bad),
		cmocka_unit_test(test_daemon_conf),
		cmocka_unit_test(test_file_names),
		cmocka_unit_test(test_session_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
