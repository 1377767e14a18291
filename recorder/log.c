/*
 * log.c - the library's print function; see log.h.
 */
#include "recorder/log.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "format/strescape.h"

/* Set once by the program before it starts threads; read with atomic
 * loads so a late change is at worst seen a call late. */
static rec_print_fn print_fn;
static void *print_ctx;

rec_print_fn rec_log_set_print(rec_print_fn fn, void *ctx, void **old_ctx)
{
	rec_print_fn old = __atomic_load_n(&print_fn, __ATOMIC_ACQUIRE);

	if (old_ctx)
		*old_ctx = __atomic_load_n(&print_ctx, __ATOMIC_ACQUIRE);
	__atomic_store_n(&print_ctx, ctx, __ATOMIC_RELEASE);
	__atomic_store_n(&print_fn, fn, __ATOMIC_RELEASE);
	return old;
}

/* Escapes raw[0..n) into out (NUL-ended, within len) line by line: a
 * message may span lines (an expression with a caret under the bad
 * part), but every line after the first starts indented, so no text in
 * a message -- a peer's string included -- can pass for a log line of its
 * own; every other control byte is escaped. */
static void escape_lines(char *out, size_t len, const char *raw, size_t n)
{
	size_t used = 0;

	out[0] = '\0';
	for (;;) {
		const char *eol = memchr(raw, '\n', n);
		size_t seg = eol ? (size_t)(eol - raw) : n;

		prec_strescape(out + used, len - used, raw, seg);
		used += strlen(out + used);
		if (!eol || used + 4 >= len)
			return;
		raw += seg + 1;
		n -= seg + 1;
		out[used++] = '\n';
		if (n == 0 || (raw[0] != ' ' && raw[0] != '\t')) {
			out[used++] = ' ';
			out[used++] = ' ';
		}
		out[used] = '\0';
	}
}

void rec_vlog(enum rec_log_level level, const char *fmt, va_list ap)
{
	rec_print_fn fn = __atomic_load_n(&print_fn, __ATOMIC_ACQUIRE);
	char raw[REC_LOG_MAX], msg[REC_LOG_MAX];
	size_t n;
	bool nl;
	int len;

	if (!fn)
		return;
	len = vsnprintf(raw, sizeof(raw), fmt, ap);
	if (len < 0)
		return;
	/* vsnprintf's length, not strlen: a %c may have put a NUL inside,
	 * and it is escaped like any other control byte. */
	n = (size_t)len < sizeof(raw) ? (size_t)len : sizeof(raw) - 1;
	/* a trailing newline is the end of the message, not a control */
	nl = n && raw[n - 1] == '\n';
	escape_lines(msg, sizeof(msg) - nl, raw, n - nl);
	if (nl)
		strcat(msg, "\n");
	fn(level, msg, __atomic_load_n(&print_ctx, __ATOMIC_ACQUIRE));
}

void rec_log(enum rec_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rec_vlog(level, fmt, ap);
	va_end(ap);
}

const char *rec_log_escape(char *buf, size_t len, const char *s)
{
	if (len)
		prec_strescape(buf, len, s ? s : "", s ? strlen(s) : 0);
	return buf;
}

int rec_log_fail(int ret, const char *msg)
{
	if (ret < 0 && msg && msg[0])
		rec_log(REC_LOG_ERROR, "%s", msg);
	return ret;
}

const char *rec_log_level_name(enum rec_log_level level)
{
	switch (level) {
	case REC_LOG_ERROR:
		return "error";
	case REC_LOG_WARN:
		return "warning";
	case REC_LOG_INFO:
		return "info";
	case REC_LOG_DEBUG:
	default:
		return "debug";
	}
}
