/*
 * fuzz_chreply.c - ClickHouse's HTTP replies as the loader reads them
 * (analyzer/load/chreply.h): a server, a proxy in front of it or a wrong
 * port can answer anything. Never a crash; an error message is always
 * terminated, within its buffer and free of control characters; integer
 * rows parse only when every row is a decimal Int64 and a newline, and
 * printed back they give the input again.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/load/chreply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *body = (const char *)data;
	char msg[64];
	int64_t *v;
	size_t n;
	int code;

	size_t len = ana_chreply_error(body, size, msg, sizeof(msg), &code);
	if (len >= sizeof(msg) || msg[len] != '\0' || strlen(msg) != len)
		abort();
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
			abort();
	if (ana_chreply_ints(body, size, &v, &n) == 0) {
		/* canonical input (no leading zeros, no "-0") prints back as itself */
		char *again = malloc(n * 22 + 1);
		size_t k = 0;
		if (!again)
			abort();
		for (size_t i = 0; i < n; i++)
			k += (size_t)sprintf(again + k, "%" PRId64 "\n", v[i]);
		int canonical = 1;
		for (size_t i = 0; i < size; i++)
			if ((data[i] == '0' && (i == 0 || data[i - 1] == '\n' || data[i - 1] == '-') &&
			     i + 1 < size && data[i + 1] != '\n') ||
			    (data[i] == '-' && i + 1 < size && data[i + 1] == '0'))
				canonical = 0;
		if (canonical && (k != size || memcmp(again, data, size)))
			abort();
		free(again);
		free(v);
	}
	return 0;
}
