/*
 * fuzz_dataset.c - libFuzzer target for what a dataset takes from each
 * file (analyzer/read/dataset.c): any bytes probed as one file of a
 * dataset (header host and clock reference, the index's time ranges, the
 * SessionEnd frame, state), twice under two names so the second probe
 * meets the first one's interned names, and its wall-clock conversion.
 * Seeds: tests/fuzz/corpus/fuzz_dataset/ (whole, rotated and torn files
 * of tracegen's timeline).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "analyzer/read/dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ana_dataset *ds;
	if (ana_dataset_open(&ds, NULL, 0, NULL))
		return 0;
	struct ana_dataset_file f, g;
	if (ana_dataset_probe_mem(ds, data, size, "a.prec", &f) == 0) {
		if (!f.host || !f.session || !f.path || f.state > ANA_FILE_TORN)
			abort();
		(void)ana_dataset_wall(&f, f.end);
		if (ana_dataset_probe_mem(ds, data, size, "dir/b.prec", &g) == 0 &&
		    (g.host != f.host || g.start != f.start || g.end != f.end))
			abort();   /* the same bytes probe the same */
	}
	ana_dataset_free(ds);
	return 0;
}
