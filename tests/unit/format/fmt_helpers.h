/*
 * fmt_helpers.h - shared helpers of the format/ unit tests (header-only so
 * each test binary stays one .c file).
 */
#ifndef FMT_HELPERS_H
#define FMT_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <unistd.h>
#include <cmocka.h>

#include "format/error.h"
#include "format/reader.h"
#include "format/sink.h"
#include "format/writer.h"

/* A sample packet with callchain cc (0 = none). */
static inline void fmt_sample(Perfrec__Packet *pkt, Perfrec__Sample *s,
			      uint32_t cpu, uint32_t pid, uint64_t ip, uint64_t cc)
{
	perfrec__packet__init(pkt);
	perfrec__sample__init(s);
	s->cpu = cpu;
	s->pid = pid;
	s->tid = pid + 1;
	s->ip = ip;
	s->period = 1000;
	s->callchain = cc;
	pkt->data_case = PERFREC__PACKET__DATA_SAMPLE;
	pkt->sample = s;
}

/* Damage log filled by on_damage. */
struct fmt_damage_log {
	size_t n;
	uint64_t off[64];
	int err[64];
};

static inline void fmt_on_damage(void *ctx, uint64_t offset, int err)
{
	struct fmt_damage_log *d = ctx;

	if (d->n < 64) {
		d->off[d->n] = offset;
		d->err[d->n] = err;
	}
	d->n++;
}

/* Copies the bytes of a memory sink into a malloc'd buffer. */
static inline unsigned char *fmt_copy_sink(struct prec_sink *sink, size_t *len)
{
	const void *p = prec_sink_mem_data(sink, len);
	unsigned char *b = malloc(*len ? *len : 1);

	assert_non_null(b);
	if (*len)
		memcpy(b, p, *len);
	return b;
}

/* Reads every packet of buf: returns the count of non-interned packets,
 * fills *st. */
static inline uint64_t fmt_count(const void *buf, size_t len,
				 struct fmt_damage_log *log,
				 struct prec_reader_stats *st)
{
	struct prec_reader_opts o = PREC_READER_OPTS_INIT;
	struct prec_reader *r;
	struct prec_packet p;
	uint64_t n = 0;
	int ret;

	o.on_damage = fmt_on_damage;
	o.ctx = log;
	r = prec_reader_open_mem(buf, len, &o);
	assert_non_null(r);
	while ((ret = prec_reader_next_packet(r, &p)) > 0) {
		if (p.pkt->data_case != PERFREC__PACKET__DATA_INTERNED)
			n++;
	}
	assert_int_equal(ret, 0);
	prec_reader_stats(r, st);
	prec_reader_free(r);
	return n;
}

#endif
