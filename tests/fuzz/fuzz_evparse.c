/*
 * fuzz_evparse.c - arbitrary event strings (a command line is untrusted):
 * parsing returns an error or a list, never crashes, and a failed parse
 * leaves the list as it was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/events/evparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_evspecs l = REC_EVSPECS_INIT;
	char *s;

	if (size > 4096)
		return 0;
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (rec_evspecs_parse(&l, "cpu-clock") == 0) {
		size_t n = l.n;

		if (rec_evspecs_parse(&l, s) < 0 && l.n != n)
			abort();
		for (size_t i = 0; i < l.n; i++)
			if (!l.ev[i].name)
				abort();
	}
	rec_evspecs_release(&l);
	free(s);
	return 0;
}
