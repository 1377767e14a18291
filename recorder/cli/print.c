/*
 * print.c - messages and the status line on stderr; see print.h.
 */
#include "recorder/cli/print.h"

#include <stdio.h>

#include "recorder/log.h"

static bool status_shown;
static bool quiet;

static void print(enum rec_log_level level, const char *msg, void *ctx)
{
	bool verbose = ctx != NULL;

	if ((level == REC_LOG_DEBUG && !verbose) || (level >= REC_LOG_INFO && quiet))
		return;
	rec_cli_status_end();
	if (level == REC_LOG_ERROR || level == REC_LOG_WARN)
		fprintf(stderr, "perfrec: %s: %s\n", rec_log_level_name(level), msg);
	else
		fprintf(stderr, "perfrec: %s\n", msg);
}

void rec_cli_print_install(bool verbose)
{
	static int yes;

	rec_log_set_print(print, verbose ? &yes : NULL, NULL);
}

void rec_cli_status(const char *line)
{
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
	status_shown = true;
}

void rec_cli_status_end(void)
{
	if (status_shown) {
		fputc('\n', stderr);
		status_shown = false;
	}
}

void rec_cli_print_quiet(void)
{
	quiet = true;
}
