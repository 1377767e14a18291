/*
 * tracegen_cli.c - writes the tests/lib/tracegen trace to a file, for
 * shell tests (pprof/folded checks) and analyzer benchmarks.
 *
 *   tracegen_cli [--hostile] [--offcpu] [--by-kind] [--host NAME]
 *                [--offset-ms MS] [--rotated] OUT.prec [REPEAT [FRAME_SIZE]]
 *
 * REPEAT copies of the 70 ms golden timeline (106 records each);
 * --hostile names symbols, a comm, the host, an event and an object path
 * with markup (TRACEGEN_HOSTILE_*), for escaping tests; --offcpu adds the
 * record --off-cpu / --filter data (tracegen.c lists them); --by-kind
 * writes the CPUs' packets on streams by kind, as perfrec does; --host,
 * --offset-ms and --rotated make the files of a dataset (tracegen.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/error.h"
#include "lib/tracegen.h"

int main(int argc, char **argv)
{
	struct tracegen_opts o = TRACEGEN_OPTS_INIT;
	while (argc > 1 && (!strcmp(argv[1], "--hostile") || !strcmp(argv[1], "--offcpu") ||
			    !strcmp(argv[1], "--by-kind") || !strcmp(argv[1], "--host") ||
			    !strcmp(argv[1], "--offset-ms") || !strcmp(argv[1], "--rotated"))) {
		if ((!strcmp(argv[1], "--host") || !strcmp(argv[1], "--offset-ms")) && argc < 3) {
			fprintf(stderr, "tracegen_cli: %s needs a value\n", argv[1]);
			return 2;
		}
		if (!strcmp(argv[1], "--host")) {
			o.host = argv[2];
			argc--;
			argv++;
		} else if (!strcmp(argv[1], "--offset-ms")) {
			o.offset_ns = strtoull(argv[2], NULL, 10) * 1000000ull;
			argc--;
			argv++;
		} else if (!strcmp(argv[1], "--rotated"))
			o.rotated = 1;
		else if (!strcmp(argv[1], "--hostile"))
			o.hostile = 1;
		else if (!strcmp(argv[1], "--offcpu"))
			o.offcpu = 1;
		else
			o.by_kind = 1;
		argc--;
		argv++;
	}
	if (argc < 2 || argc > 4 || argv[1][0] == '-') {
		fprintf(stderr, "usage: tracegen_cli [--hostile] [--offcpu] [--by-kind] [--host NAME] "
			"[--offset-ms MS] [--rotated] OUT.prec [REPEAT [FRAME_SIZE]]\n");
		return 2;
	}
	if (argc > 2 && (o.repeat = atoi(argv[2])) < 1) {
		fprintf(stderr, "tracegen_cli: REPEAT must be a positive number\n");
		return 2;
	}
	if (argc > 3 && (long)(o.frame_size = (size_t)atol(argv[3])) < 64) {
		fprintf(stderr, "tracegen_cli: FRAME_SIZE must be at least 64\n");
		return 2;
	}
	int ret = tracegen_write(argv[1], &o);
	if (ret) {
		fprintf(stderr, "tracegen_cli: cannot write %s: %s\n", argv[1], prec_strerror(ret));
		return 1;
	}
	return 0;
}
