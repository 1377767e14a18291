/*
 * test_chclient.c - the HTTP client (analyzer/load/chclient.h) without a
 * server: an unreachable server is an error naming its URL without the
 * URL's user, password and parameters (a password is never printed); a URL that is
 * not http(s) is refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyzer/load/chclient.h"

static void test_unreachable(void **state)
{
	(void)state;
	/* a port nothing listens on: bound, then closed */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	close(fd);
	char url[128], name[64];
	snprintf(name, sizeof(name), "http://127.0.0.1:%u", ntohs(a.sin_port));
	snprintf(url, sizeof(url), "%s/?user=u&password=secret", name);
	struct ana_ch *ch = ana_ch_new(url);
	assert_non_null(ch);
	assert_string_equal(ana_ch_name(ch), name);
	assert_int_equal(ana_ch_query(ch, "SELECT 1", NULL, NULL), -ECONNREFUSED);
	assert_non_null(strstr(ana_ch_errmsg(ch), name));
	assert_null(strstr(ana_ch_errmsg(ch), "secret"));
	ana_ch_free(ch);
	/* user:password@ before the host: not named either */
	snprintf(url, sizeof(url), "http://u:secret@%s/?database=x", name + 7);
	ch = ana_ch_new(url);
	assert_non_null(ch);
	assert_string_equal(ana_ch_name(ch), name);
	assert_int_equal(ana_ch_query(ch, "SELECT 1", NULL, NULL), -ECONNREFUSED);
	assert_null(strstr(ana_ch_errmsg(ch), "secret"));
	ana_ch_free(ch);
	assert_null(ana_ch_new("127.0.0.1:8123"));
	assert_int_equal(errno, EINVAL);
	ana_ch_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unreachable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
