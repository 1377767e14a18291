/*
 * fuzz_symcache.c - recorder/symbols/symcache.c's entry parser on
 * arbitrary bytes (an entry of the on-disk symbol cache, which root reads:
 * see symcache.h). Seeds: tests/fuzz/corpus/fuzz_symcache/, entries of
 * small programs' tables.
 *
 * The input is parsed with any build-id, then with the build-id and file
 * key it claims. What parses must hold the invariants the gatherer relies on
 * (symbols by strictly increasing start, names inside the table, ranges
 * sorted and non-empty), must read back the same once encoded again,
 * and its ranges must answer lookups inside themselves. Nothing may crash,
 * hang, leak or trip a sanitizer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/symbols/symcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_symcache_table t, u;
	const char *why;
	uint8_t *buf;
	size_t len;

	if (rec_symcache_parse(data, size, NULL, 0, 0, &t, &why) != 0)
		return 0;
	for (size_t i = 0; i < t.e.nsyms; i++) {
		if (i && t.e.syms[i].start <= t.e.syms[i - 1].start)
			abort();
		(void)strlen(t.e.syms[i].name);   /* inside the names */
	}
	for (size_t i = 0; i < t.n_eh + t.n_dbg; i++) {
		struct rec_fnrange r;

		if (t.ranges[i].end <= t.ranges[i].begin)
			abort();
		if (rec_symcache_range_find(&t, t.ranges[i].begin, &r) != 0 ||
		    t.ranges[i].begin < r.begin || t.ranges[i].begin >= r.end)
			abort();
	}
	/* encoded again (names packed anew) it reads back the same */
	if (rec_symcache_encode(&t, &buf, &len) == 0) {
		if (rec_symcache_parse(buf, len, NULL, 0, 0, &u, &why) != 0 ||
		    u.e.nsyms != t.e.nsyms || u.n_eh != t.n_eh ||
		    u.n_dbg != t.n_dbg || u.e.nsegs != t.e.nsegs)
			abort();
		for (size_t i = 0; i < t.e.nsyms; i++)
			if (u.e.syms[i].start != t.e.syms[i].start ||
			    u.e.syms[i].size != t.e.syms[i].size ||
			    strcmp(u.e.syms[i].name, t.e.syms[i].name) != 0)
				abort();
		if (t.n_eh + t.n_dbg &&
		    memcmp(u.ranges, t.ranges, (t.n_eh + t.n_dbg) * sizeof(*t.ranges)))
			abort();
		rec_symcache_table_release(&u);
		free(buf);
	}
	if (rec_symcache_parse(data, size, t.e.build_id, t.e.build_id_len,
			       t.file_key, &u, &why) != 0)
		abort();
	rec_symcache_table_release(&u);
	rec_symcache_table_release(&t);
	return 0;
}
