/*
 * fuzz_collector.c - network bytes are untrusted: whatever a peer sends
 * (rec_collector_feed: the collector's own input path, hello, frames,
 * finish, refusals, archive appends) is refused or archived, never
 * crashes, never leaks, never writes outside the archive directory.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/log.h"
#include "recorder/net/collector.h"

static struct rec_collector *c;
static char dir[] = "/tmp/perfrec-fuzz-collector-XXXXXX";
static unsigned runs;

static void quiet(enum rec_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!c) {
		struct rec_collector_opts o = REC_COLLECTOR_OPTS_INIT;

		rec_log_set_print(quiet, NULL, NULL);
		if (!mkdtemp(dir))
			abort();
		o.dir = dir;
		o.listen = "127.0.0.1:0";
		if (rec_collector_new(&o, &c) < 0)
			abort();
	}
	rec_collector_feed(c, data, size);
	if (++runs % 2000 == 0) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s/*", dir);
		if (system(cmd) != 0)
			abort();
	}
	return 0;
}
