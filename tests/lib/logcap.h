/*
 * logcap.h - tests read what libprec_recorder logs (recorder/log.h).
 *
 * logcap_install() routes the library's messages here; logcap_err() is
 * the last REC_LOG_ERROR message (what an error buffer held before the
 * library had one message channel), logcap_all() every message since
 * logcap_clear(). Header-only: recorder tests include it, the laptop build
 * never sees it.
 */
#ifndef PERFREC_TEST_LOGCAP_H
#define PERFREC_TEST_LOGCAP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/log.h"

static char logcap_last_err[REC_LOG_MAX];
static char logcap_buf[16384];

static void logcap_print(enum rec_log_level level, const char *msg, void *ctx)
{
	size_t n = strlen(logcap_buf);

	(void)ctx;
	if (level == REC_LOG_ERROR)
		snprintf(logcap_last_err, sizeof(logcap_last_err), "%s", msg);
	snprintf(logcap_buf + n, sizeof(logcap_buf) - n, "%s: %s\n",
		 rec_log_level_name(level), msg);
	if (getenv("LOGCAP_ECHO"))
		fprintf(stderr, "[log] %s: %s\n", rec_log_level_name(level), msg);
}

static inline void logcap_clear(void)
{
	logcap_last_err[0] = '\0';
	logcap_buf[0] = '\0';
}

static inline void logcap_install(void)
{
	logcap_clear();
	rec_log_set_print(logcap_print, NULL, NULL);
}

static inline const char *logcap_err(void)
{
	return logcap_last_err;
}

static inline const char *logcap_all(void)
{
	return logcap_buf;
}

#endif
