/*
 * test_pbjson.c - cli/pbjson.c: a daemon's or collector's strings are
 * untrusted; in `--json` output their control characters (C0, DEL, C1)
 * are \u escapes and bytes that are not UTF-8 U+FFFD, so neither the
 * terminal nor a JSON reader sees them raw.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "control.pb-c.h"
#include "recorder/cli/pbjson.h"

static void test_strings_escaped(void **state)
{
	(void)state;
	Perfrec__Control__Refusal r = PERFREC__CONTROL__REFUSAL__INIT;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	r.reason = "no\x1b[2J\x7f\x9b\xc2\x9b\xe2\x82\xac\"\n";
	rec_cli_pb_json(f, &r.base, 0);
	fclose(f);
	assert_non_null(strstr(out, "\"no\\u001b[2J\\u007f\\ufffd\\u009b\xe2\x82\xac\\\"\\n\""));
	for (size_t i = 0; i < len; i++)
		assert_true((unsigned char)out[i] >= 0x20 || out[i] == '\n');
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings_escaped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
