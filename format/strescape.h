/*
 * strescape.h - strings from a trace or the network, made safe to print.
 *
 * A host name, comm, symbol or refusal text is untrusted bytes. Printed
 * as-is it can move a terminal's cursor, recolour it, retitle the window
 * (ESC and C1 sequences) or forge a whole log line (a newline). Everything
 * the recorder logs and the analyzer prints as text or CSV goes through
 * prec_strescape(); JSON writers keep their own \u escapes but read the
 * bytes with prec_utf8_char() so they agree with it on what a character is.
 *
 * What is escaped, as \xNN (two lowercase hex digits) per byte:
 *   - C0 controls 0x00..0x1f (NUL, tab, newline, ESC ...) and DEL 0x7f;
 *   - C1 controls U+0080..U+009F, written in UTF-8 (0xc2 0x80..0x9f) and
 *     as lone bytes 0x80..0x9f (an 8-bit terminal's CSI is 0x9b);
 *   - every byte that does not start a valid UTF-8 sequence (overlong
 *     forms, surrogates, code points above U+10FFFF, a sequence cut short).
 * Valid UTF-8 text is copied as it is, backslashes included: the result is
 * for people to read, not a reversible encoding.
 *
 * Portable C11, no allocation: the recorder and the analyzer both use it.
 */
#ifndef PREC_STRESCAPE_H
#define PREC_STRESCAPE_H

#include <stddef.h>
#include <stdint.h>

/* Writes src[0..n) escaped into dst: at most len - 1 bytes and a NUL when
 * len > 0 (dst may be NULL when len is 0). The output is cut before a
 * whole character or escape, never inside one. n counts bytes, so NULs
 * inside src are escaped too. Returns the length the whole escaped string
 * needs (without the NUL), as snprintf: the result == n exactly when
 * nothing needed escaping. */
size_t prec_strescape(char *dst, size_t len, const char *src, size_t n);

/* The valid UTF-8 character at s[0..n): its length (1..4) with its code
 * point in *cp, or 0 when s[0] does not start one (n == 0 too). ASCII is
 * length 1. Control characters are valid characters here; see
 * prec_is_control(). */
size_t prec_utf8_char(const char *s, size_t n, uint32_t *cp);

/* Non-zero for the code points prec_strescape() escapes: C0, DEL, C1. */
static inline int prec_is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

#endif
