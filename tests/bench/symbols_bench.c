/*
 * symbols_bench.c - what embedding symbols costs a system-wide recording.
 *
 * Every process in /proc is fed to the symbol gatherer the way
 * `perfrec record -a` feeds it (the gatherer reads each pid's maps on
 * first sight), with N addresses hit in every executable mapping (spread
 * over the mapping) plus N kernel addresses, then the tables are written
 * into an in-memory trace. Printed per mode (only hit symbols, the
 * default; full tables): gatherer time, SymbolTable bytes before
 * compression, compressed trace bytes, objects, symbols.
 *
 *   symbols_bench [HITS_PER_MAPPING]     (default 16; run as root)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/sink.h"
#include "format/writer.h"
#include "recorder/symbols/kallsyms.h"
#include "recorder/symbols/symgather.h"

static int run(int full, int hits)
{
	struct rec_symgather_opts o = REC_SYMGATHER_OPTS_INIT;
	struct prec_writer_opts wo = PREC_WRITER_OPTS_INIT;
	struct rec_symgather_stats st;
	struct prec_writer_stats ws;
	struct rec_symgather *sc;
	struct rec_kallsyms k;
	struct prec_sink *sink;
	struct prec_writer *w;
	struct dirent *de;
	unsigned procs = 0;
	DIR *d;

	o.full_tables = full;
	sc = rec_symgather_new(&o);
	sink = prec_sink_mem_new();
	w = sink ? prec_writer_new(sink, &wo) : NULL;
	if (!sc || !w)
		return 1;
	d = opendir("/proc");
	while (d && (de = readdir(d)) != NULL) {
		unsigned pid = (unsigned)strtoul(de->d_name, NULL, 10);
		char path[64], line[4352];
		FILE *f;

		if (!pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/maps", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		procs++;
		while (fgets(line, sizeof(line), f)) {
			unsigned long long lo, hi;
			char perms[8];

			if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) != 3 ||
			    !strchr(perms, 'x'))
				continue;
			for (int i = 0; i < hits; i++)
				rec_symgather_hit(sc, pid, lo + (hi - lo) / (unsigned)hits * (unsigned)i, 0);
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	if (rec_kallsyms_load(NULL, &k) == 0)
		for (int i = 0; i < hits * 64 && k.nsyms; i++)
			rec_symgather_hit(sc, 0, k.syms[(size_t)i * 7919 % k.nsyms].start, 1);
	rec_kallsyms_release(&k);
	if (rec_symgather_write(sc, w, 0, 1) < 0 || prec_writer_close(w) < 0)
		return 1;
	rec_symgather_stats(sc, &st);
	prec_writer_stats(w, &ws);
	printf("%-10s %5u processes  %8.1f ms  %10llu B symbols raw  %10llu B file  "
	       "%5llu objects  %4llu unavailable  %8llu symbols  %llu /proc reads\n",
	       full ? "full" : "hit-only", procs, st.time_ns / 1e6,
	       (unsigned long long)st.bytes, (unsigned long long)ws.bytes_written,
	       (unsigned long long)st.objects, (unsigned long long)st.unavailable,
	       (unsigned long long)st.symbols, (unsigned long long)st.procs_scanned);
	prec_writer_free(w);
	prec_sink_free(sink);
	rec_symgather_free(sc);
	return 0;
}

int main(int argc, char **argv)
{
	int hits = argc > 1 ? atoi(argv[1]) : 16;

	if (hits < 1)
		hits = 1;
	printf("symbols_bench: %d hits per executable mapping, %d kernel hits\n",
	       hits, hits * 64);
	return run(0, hits) || run(1, hits);
}
