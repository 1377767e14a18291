/*
 * log.h - the one channel by which libprec_recorder says anything.
 *
 * The library never prints (as libbpf: libbpf_set_print). Every message -
 * an error's cause and fix, a warning, a remark - goes to the print
 * function the program installed, with a level; functions still return a
 * negative errno (or a format code) so callers can act on the failure
 * without parsing text. A function that fails logs its message at
 * REC_LOG_ERROR exactly once, at the level that knows the cause, and its
 * callers pass the errno up without logging again.
 *
 * How to use:
 *
 *   static void print(enum rec_log_level lvl, const char *msg, void *ctx)
 *   { fprintf(stderr, "perfrec: %s\n", msg); }
 *   rec_log_set_print(print, NULL);      // once, before any other call
 *
 * Messages have no trailing newline and are at most REC_LOG_MAX - 1 bytes
 * (longer ones are cut). Every message is escaped before the print
 * function sees it (format/strescape.h): control characters (a newline
 * inside, ESC, C1) and invalid UTF-8 arrive as \xNN, so a host name, a
 * comm or a peer's text in a message can neither forge a log line nor
 * drive the terminal. A print function may therefore write msg as it is. The print function may be called from any thread
 * of the library (today only the thread that called into it) and must not
 * call back into the library. The default prints nothing.
 */
#ifndef REC_LOG_H
#define REC_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum rec_log_level {
	REC_LOG_ERROR,   /* the call failed: cause and fix */
	REC_LOG_WARN,    /* something the user should know; work goes on */
	REC_LOG_INFO,    /* progress a user may want to see */
	REC_LOG_DEBUG,
};

#define REC_LOG_MAX 1024

typedef void (*rec_print_fn)(enum rec_log_level level, const char *msg,
			     void *ctx);

/* Installs fn (NULL = discard everything) with its ctx; returns the
 * previous function (its ctx into *old_ctx when old_ctx is not NULL). */
rec_print_fn rec_log_set_print(rec_print_fn fn, void *ctx, void **old_ctx);

/* printf-style message at level. */
void rec_log(enum rec_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rec_vlog(enum rec_log_level level, const char *fmt, va_list ap);

/* For functions built on a message buffer: when ret < 0 and msg is not
 * empty, logs msg at REC_LOG_ERROR. An empty msg means the failing callee
 * logged already. Returns ret. */
int rec_log_fail(int ret, const char *msg);

/* s escaped as every message is (above), into buf (len bytes, NUL-ended,
 * cut before a whole escape); returns buf. For cli/ code that prints a
 * string from the network or a trace itself instead of through rec_log. */
const char *rec_log_escape(char *buf, size_t len, const char *s);

/* "error", "warning", "info", "debug" */
const char *rec_log_level_name(enum rec_log_level level);

#endif
