/*
 * streamtest.h - helpers for the data-plane tests: a synthetic trace cut
 * into its records (what a recorder streams), wire messages built from
 * them, temporary directories.
 */
#ifndef PERFREC_TEST_STREAMTEST_H
#define PERFREC_TEST_STREAMTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/record.h"
#include "format/sink.h"
#include "format/writer.h"
#include "recorder/net/wire.h"

/* Appends n samples (small frames) to w: many records. */
static inline void st_write_samples(struct prec_writer *w, size_t n, uint64_t t0)
{
	for (size_t i = 0; i < n; i++) {
		Perfrec__Packet p = PERFREC__PACKET__INIT;
		Perfrec__Sample s = PERFREC__SAMPLE__INIT;

		s.ip = 0x400000 + (i * 2654435761u) % 65536;
		s.pid = 10 + (uint32_t)(i % 7);
		s.tid = s.pid;
		s.cpu = (uint32_t)(i % 2);
		s.period = 1;
		p.data_case = PERFREC__PACKET__DATA_SAMPLE;
		p.sample = &s;
		assert_int_equal(prec_writer_append(w, 1 + (uint32_t)(i % 2), &p, t0 + i * 1000), 0);
	}
}

/* A whole small trace in memory: header, frames of about frame_size
 * bytes, index. The caller frees the sink. */
static inline struct prec_sink *st_trace(size_t samples, size_t frame_size)
{
	struct prec_sink *m = prec_sink_mem_new();
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
	struct prec_writer *w;

	o.frame_size = frame_size;
	w = prec_writer_new(m, &o);
	assert_non_null(w);
	st_write_samples(w, samples, 1000000);
	assert_int_equal(prec_writer_close(w), 0);
	prec_writer_free(w);
	return m;
}

/* The offsets of the records of buf: rec[i], rec[i+1] bound record i + 1
 * (seq). Returns the count. */
static inline size_t st_records(const unsigned char *buf, size_t len, size_t *off,
				size_t max)
{
	size_t n = 0, pos = 0;
	struct prec_record r;

	while (pos < len && n + 1 < max && prec_record_scan(buf + pos, len - pos, 0, &r) == 1) {
		off[n++] = pos;
		pos += r.len;
	}
	off[n] = pos;
	return n;
}

/* Appends a framed message to a byte buffer. */
struct st_buf {
	unsigned char *b;
	size_t len, cap;
};

static inline void st_put(struct st_buf *sb, const void *p, size_t n)
{
	if (sb->cap - sb->len < n) {
		sb->cap = (sb->len + n) * 2;
		sb->b = realloc(sb->b, sb->cap);
		assert_non_null(sb->b);
	}
	memcpy(sb->b + sb->len, p, n);
	sb->len += n;
}

static inline void st_put_msg(struct st_buf *sb, const Perfrec__Control__StreamMessage *m)
{
	unsigned char *b;
	size_t n;

	assert_int_equal(rec_wire_pack(m, &b, &n), 0);
	st_put(sb, b, n);
	free(b);
}

/* A hello of the recording named stream_id (its bytes; NULL = not said,
 * as recorders before stream ids). */
static inline void st_put_hello_id(struct st_buf *sb, unsigned version, const char *host,
				   const char *session, const char *token,
				   const char *stream_id)
{
	Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
	Perfrec__Control__Hello h = PERFREC__CONTROL__HELLO__INIT;

	h.version = version;
	h.host = (char *)host;
	h.session_id = (char *)session;
	if (token) {
		h.token.data = (uint8_t *)token;
		h.token.len = strlen(token);
	}
	if (stream_id) {
		h.stream_id.data = (uint8_t *)stream_id;
		h.stream_id.len = strlen(stream_id);
	}
	m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_HELLO;
	m.hello = &h;
	st_put_msg(sb, &m);
}

static inline void st_put_hello(struct st_buf *sb, unsigned version, const char *host,
				const char *session, const char *token)
{
	st_put_hello_id(sb, version, host, session, token, NULL);
}

static inline void st_put_frame(struct st_buf *sb, uint64_t seq, const void *d, size_t n)
{
	unsigned char hdr[REC_WIRE_FRAME_HDR_MAX];
	size_t hl = rec_wire_frame_header(seq, n, hdr);

	st_put(sb, hdr, hl);
	st_put(sb, d, n);
}

static inline char *st_tmpdir(void)
{
	char *d = strdup("/tmp/perfrec-stream-XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

static inline void st_rmdir(char *d)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
	free(d);
}

/* The bytes of path (malloc'd) and its length; NULL when absent. */
static inline unsigned char *st_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc((size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

#endif
