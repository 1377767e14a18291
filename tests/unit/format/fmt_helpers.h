/*
 * fmt_helpers.h - shared helpers of the format/ unit tests (header-only so
 * each test binary stays one .c file).
 */
#ifndef FMT_HELPERS_H
#define FMT_HELPERS_H

#include <errno.h>
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

#ifndef FMT_NO_BUILDER
/* Callchain `c` has depth 3 + c % 5 and ips c * 1000 + j: the reader can
 * check any resolved chain. */
static inline size_t fmt_chain(uint32_t c, uint64_t *ips)
{
	size_t d = 3 + c % 5;

	for (size_t j = 0; j < d; j++)
		ips[j] = (uint64_t)c * 1000 + j;
	return d;
}

/* Writes npackets samples round-robin over nstreams (streams 1..n), with
 * times 1000 + 10 * i, callchain i % 17 and comm "task-<pid % 5>" in the
 * sample's raw field... returns the bytes (malloc'd) and closes the writer
 * only when `close` is set (else flushes: a killed writer's file). */
static inline unsigned char *fmt_build(size_t frame_size, unsigned nstreams,
				       unsigned npackets, int close,
				       size_t *len)
{
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w;
	unsigned char *buf;

	o.frame_size = frame_size;
	w = prec_writer_new(sink, &o);
	assert_non_null(w);
	for (unsigned i = 0; i < npackets; i++) {
		Perfrec__Packet pkt;
		Perfrec__Sample s;
		uint64_t ips[8];
		uint32_t st = 1 + i % nstreams;
		uint32_t c = i % 17;
		size_t d = fmt_chain(c, ips);
		uint64_t cc = prec_writer_intern_callchain(w, st, ips, d);
		char comm[32];
		assert_true(cc >= 1);
		snprintf(comm, sizeof(comm), "task-%u", i % 5);
		fmt_sample(&pkt, &s, st - 1, 100 + i % 5, c, cc);
		s.id = prec_writer_intern_string(w, st, comm);   /* an iid to check */
		s.period = i;                                      /* packet number */
		assert_int_equal(prec_writer_append(w, st, &pkt, 1000 + 10 * (uint64_t)i), 0);
	}
	if (close)
		assert_int_equal(prec_writer_close(w), 0);
	else
		assert_int_equal(prec_writer_flush(w), 0);
	prec_writer_free(w);
	buf = fmt_copy_sink(sink, len);
	prec_sink_free(sink);
	return buf;
}

/* Checks one decoded sample written by fmt_build(). */
static inline void fmt_check_sample(const struct prec_packet *p)
{
	const Perfrec__Sample *s = p->pkt->sample;
	uint64_t want[8];
	size_t n, d = fmt_chain((uint32_t)s->ip, want);
	const uint64_t *ips = prec_frame_callchain(p->frame, s->callchain, &n);
	char comm[32];

	assert_int_equal(p->time, 1000 + 10 * s->period);
	assert_non_null(ips);
	assert_int_equal(n, d);
	assert_memory_equal(ips, want, d * sizeof(uint64_t));
	snprintf(comm, sizeof(comm), "task-%u", (unsigned)(s->period % 5));
	assert_non_null(prec_frame_string(p->frame, s->id));
	assert_string_equal(prec_frame_string(p->frame, s->id), comm);
}
#endif
