/*
 * strescape.c - control characters and invalid UTF-8 as \xNN; see
 * strescape.h.
 */
#include "format/strescape.h"

size_t prec_utf8_char(const char *s, size_t n, uint32_t *cp)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t c, min;
	size_t len;

	if (!n)
		return 0;
	c = p[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		c &= 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		c &= 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0;   /* a continuation byte, 0xc0/0xc1 (overlong), 0xf5.. */
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

size_t prec_strescape(char *dst, size_t len, const char *src, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t need = 0, o = 0, i = 0;
	int full = len == 0;   /* stop copying once a piece does not fit */

	while (i < n) {
		uint32_t cp;
		size_t k = prec_utf8_char(src + i, n - i, &cp);
		size_t w = k && !prec_is_control(cp) ? k : 4 * (k ? k : 1);

		if (!full && o + w < len) {
			if (w == k) {
				for (size_t j = 0; j < k; j++)
					dst[o + j] = src[i + j];
			} else {
				for (size_t j = 0; j < (k ? k : 1); j++) {
					unsigned char b = (unsigned char)src[i + j];

					dst[o + 4 * j] = '\\';
					dst[o + 4 * j + 1] = 'x';
					dst[o + 4 * j + 2] = hex[b >> 4];
					dst[o + 4 * j + 3] = hex[b & 15];
				}
			}
			o += w;
		} else {
			full = 1;
		}
		need += w;
		i += k ? k : 1;
	}
	if (len)
		dst[o] = '\0';
	return need;
}
