/*
 * print.h - where the perfrec command prints: the library's messages
 * (recorder/log.h) and the live status line, both on stderr.
 *
 * A message that arrives while the status line is shown starts on a line
 * of its own, so the two never garble each other.
 */
#ifndef REC_CLI_PRINT_H
#define REC_CLI_PRINT_H

#include <stdbool.h>

/* Installs the print function: "perfrec: error: ...", "perfrec: warning:
 * ...", "perfrec: ..." on stderr; debug messages only with verbose. */
void rec_cli_print_install(bool verbose);
/* -q: from now on errors and warnings only. */
void rec_cli_print_quiet(void);

/* Replaces the status line (carriage return, no newline). */
void rec_cli_status(const char *line);
/* Ends the status line with a newline if one is shown. */
void rec_cli_status_end(void);

#endif
