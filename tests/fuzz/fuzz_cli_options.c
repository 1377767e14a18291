/*
 * fuzz_cli_options.c - command lines are untrusted input (and the
 * daemon will take record options from clients): the option layer of
 * `perfrec record` and `perfrec stat` (recorder/cli/options.c, parse.c)
 * parses any words into a result or an error, never crashes, and leaks
 * nothing. Input: words separated by NUL bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/cli/cmd.h"
#include "recorder/log.h"

#define MAXWORDS 24

static void quiet(enum rec_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[MAXWORDS + 2];
	int argc = 1;
	struct rec_cli_record_args ra;
	struct rec_cli_stat_args sa;

	if (!buf)
		return 0;
	rec_log_set_print(quiet, NULL, NULL);
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = (char *)"record";
	for (size_t i = 0; i < size && argc <= MAXWORDS; ) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;
	rec_cli_record_parse(argc, argv, &ra);
	rec_cli_common_release(&ra.c);
	argv[0] = (char *)"stat";
	rec_cli_stat_parse(argc, argv, &sa);
	rec_cli_common_release(&sa.c);
	free(buf);
	return 0;
}
