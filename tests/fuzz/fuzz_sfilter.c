/*
 * fuzz_sfilter.c - arbitrary --filter expressions (a command line is
 * untrusted): parsing returns an error that points inside the expression,
 * or instructions the BPF program can run (at most REC_SF_MAX_INSNS, an
 * evaluation stack that never underflows and ends one deep), never
 * crashes; describing the error and resolving cgroups against a missing
 * tree are safe too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/bpf/sfilter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_sfilter f;
	struct rec_sfilter_error err;
	char msg[512], *s;
	size_t len;

	if (size > 4096)
		return 0;
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	len = strlen(s);
	if (rec_sfilter_parse(s, &f, &err) < 0) {
		if (err.pos > len || !err.len || !err.msg[0])
			abort();
		rec_sfilter_describe_error(s, &err, msg, sizeof(msg));
	} else {
		int depth = 0;

		if (!f.n || f.n > REC_SF_MAX_INSNS)
			abort();
		for (size_t i = 0; i < f.n; i++) {
			switch (f.insn[i].op) {
			case REC_SF_TEST: depth++; break;
			case REC_SF_AND: case REC_SF_OR: depth--; break;
			case REC_SF_NOT: break;
			default: abort();
			}
			if (depth < 1 || depth > 63)
				abort();
		}
		if (depth != 1)
			abort();
		if (rec_sfilter_resolve(&f, s, "/nonexistent-cgroup-root", &err) < 0 &&
		    err.pos > len)
			abort();
	}
	rec_sfilter_release(&f);
	free(s);
	return 0;
}
