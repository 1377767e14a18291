/*
 * meta.c - FileHeader, Note and SessionEnd packets; see meta.h.
 */
#include "recorder/encode/meta.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "recorder/encode/hostinfo.h"

#ifndef PERFREC_VERSION
#define PERFREC_VERSION "0"
#endif

const char *rec_meta_target_string(enum rec_target t, const int *ids,
				   size_t n, char *buf, size_t len)
{
	const char *word = "command";
	size_t k;

	switch (t) {
	case REC_TARGET_SYSTEM:
		snprintf(buf, len, "system-wide");
		return buf;
	case REC_TARGET_COMMAND:
		snprintf(buf, len, "command");
		return buf;
	case REC_TARGET_CPUS:
		word = "cpus";
		break;
	case REC_TARGET_PIDS:
		word = "pid";
		break;
	case REC_TARGET_TIDS:
		word = "tid";
		break;
	}
	k = (size_t)snprintf(buf, len, "%s", word);
	for (size_t i = 0; i < n && k + 12 < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%d", i ? "," : " ", ids[i]);
	return buf;
}

int rec_meta_write_header(struct prec_writer *w, const struct rec_meta_header *h)
{
	struct rec_hostinfo hi;
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	int ret;

	ret = rec_hostinfo_init(&hi, PERFREC_VERSION);
	if (ret < 0)
		return ret;
	hi.hdr.n_cmdline = h->argc > 0 ? (size_t)h->argc : 0;
	hi.hdr.cmdline = h->argv;
	hi.hdr.start_time = h->start_ns;
	hi.hdr.target = (char *)h->target;
	if (h->workload) {
		size_t n = 0;

		while (h->workload[n])
			n++;
		hi.hdr.n_workload = n;
		hi.hdr.workload = (char **)h->workload;
		hi.hdr.workload_pid = h->workload_pid;
	}
	p.data_case = PERFREC__PACKET__DATA_HEADER;
	p.header = &hi.hdr;
	ret = prec_writer_append(w, 0, &p, h->start_ns);
	rec_hostinfo_release(&hi);
	return ret;
}

int rec_meta_write_note(struct prec_writer *w, int level, const char *text)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__Note n = PERFREC__NOTE__INIT;

	n.level = (Perfrec__Note__Level)level;
	n.text = (char *)text;
	p.data_case = PERFREC__PACKET__DATA_NOTE;
	p.note = &n;
	return prec_writer_append(w, 0, &p, 0);
}

int rec_meta_write_end(struct prec_writer *w, const struct rec_meta_end *e)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__SessionEnd se = PERFREC__SESSION_END__INIT;
	struct prec_writer_stats ws;
	Perfrec__CpuStats *cs = calloc(e->ncpus + 1, sizeof(*cs));
	Perfrec__CpuStats **csp = calloc(e->ncpus + 1, sizeof(*csp));
	int ret;

	if (!cs || !csp) {
		free(cs);
		free(csp);
		return -ENOMEM;
	}
	prec_writer_stats(w, &ws);
	se.end_time = e->end_ns;
	if (e->st) {
		se.samples = e->st->samples;
		se.switches = e->st->switches;
		se.records = e->st->records;
		se.lost = e->st->lost;
		se.throttles = e->st->throttles;
	}
	se.dropped = 0;
	se.bytes_raw = ws.bytes_raw;
	se.bytes_written = ws.bytes_written;
	se.symbol_bytes = e->symbol_bytes;
	se.symbol_time_ns = e->symbol_time_ns;
	for (size_t i = 0; e->cpu && i < e->ncpus; i++) {
		const struct rec_emit_cpu *c = &e->cpu[i];

		perfrec__cpu_stats__init(&cs[i]);
		cs[i].cpu = (uint32_t)e->cpus[i];
		cs[i].records = c->records;
		cs[i].samples = c->samples;
		cs[i].lost = c->lost;
		cs[i].bytes = c->bytes;
		cs[i].switches = c->switches;
		csp[i] = &cs[i];
	}
	se.n_cpus = e->cpu ? e->ncpus : 0;
	se.cpus = csp;
	if (e->exit_status >= 0)
		se.exit_status = e->exit_status;
	se.stop_reason = (char *)e->reason;
	p.data_case = PERFREC__PACKET__DATA_SESSION_END;
	p.session_end = &se;
	ret = prec_writer_append(w, 0, &p, e->end_ns);
	free(cs);
	free(csp);
	return ret;
}
