/*
 * dump.h - every packet, one line each, in global time order.
 *
 * Text: "SECONDS.NANOS stream=S kind field=value ..."; JSON: one object
 * per line (JSON Lines) with "time" (ns), "stream", "kind" and the packet's
 * fields. Interned ids are resolved (comm, filename, callchain ips).
 * Packets with no time of their own carry their frame's previous time, as
 * the format defines. Filters (--cpu/--pid/--tid/--time) drop packets that
 * carry that field and do not match; packets without it pass.
 */
#ifndef ANA_DUMP_H
#define ANA_DUMP_H

#include <stdio.h>

#include "analyzer/read/filter.h"
#include "analyzer/render/table.h"

struct ana_trace;

struct ana_dump_opts {
	enum ana_fmt fmt;   /* TEXT or JSON (CSV is refused by the caller) */
	int jobs;
	int file_order;     /* --raw-order: file order, no merge */
	const struct ana_filter *filter;
};

/* Writes to out; 0 or a negative errno (-EIO on write failure). */
int ana_dump_run(struct ana_trace *s, const struct ana_dump_opts *o, FILE *out);

#endif
