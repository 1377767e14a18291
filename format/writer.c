/*
 * writer.c - packets in, independent zstd frames out (see writer.h).
 *
 * Per stream the writer keeps one open frame: a buffer of encoded
 * `Trace.packet` fields (0x0A, varint length, Packet bytes), the frame's
 * time range, its string table and its callchain tree (cctree.h). cut_frame() compresses the buffer
 * into one zstd frame, puts the frame-info skippable frame in front of it
 * and hands both to the sink in ONE write, then remembers the info for the
 * trailing index. The byte layout is format/SPEC.md.
 *
 * Error model: the first sink or compressor failure is stored in w->err and
 * returned by every later call ("sticky"); the bytes already written form
 * a valid file because each frame was written whole, or not at all, or
 * (when the sink itself failed part way) as a torn tail that readers skip.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "format/base/opts.h"
#include "format/varint.h"
#include "format/error.h"
#include "format/info_int.h"
#include "format/cctree.h"
#include "format/index.h"
#include "format/intern.h"
#include "format/layout.h"
#include "format/packet.h"
#include "format/reader.h"
#include "format/swbatch.h"
#include "format/writer.h"

#define MAX_STREAMS (1u << 20)

struct wstream {
	int used;
	unsigned char *buf;          /* encoded packets of the open frame */
	size_t len, cap;
	uint32_t packets;
	uint64_t kinds;              /* PREC_KIND() of the packets in the frame */
	uint64_t t_min, t_max;       /* over packets with time != 0 */
	uint64_t last_time;          /* for dt */
	uint64_t opened_ns;          /* age reference for flush_due; 0 = unknown */
	struct prec_intern strings;
	struct prec_cctree chains;
	struct prec_swbatch *sw;     /* switches not yet written; NULL: none so far */
};

struct prec_writer {
	struct prec_sink *sink;
	struct prec_writer_opts opts;
	ZSTD_CCtx *cctx;
	int err;                     /* sticky */
	int closed;
	uint64_t base;               /* sink->written when the writer started */

	struct wstream **streams;    /* by stream id, lazily allocated */
	size_t nstreams;

	unsigned char *zbuf;         /* info record + compressed frame */
	size_t zcap;

	struct prec_frame_info *idx;
	size_t nidx, idxcap;

	int fast;                    /* prec_packet_fast_ok() */
	/* scratch for InternedData packets */
	struct prec_interned_ref *iref;
	size_t iref_cap;
	struct prec_interned_run *runs;
	size_t runs_cap;
	uint64_t *vals;              /* coded CallchainNodes.addrs of the runs */
	size_t vals_cap;

	struct prec_writer_stats st;
};

static int fail(struct prec_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	return w->err;
}

static int check(const struct prec_writer *w)
{
	if (w->err)
		return w->err;
	if (w->closed)
		return PREC_E_CLOSED;
	return 0;
}

struct prec_writer *prec_writer_new(struct prec_sink *sink,
				    const struct prec_writer_opts *opts)
{
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
	struct prec_writer *w;
	uint8_t hdr[PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE];
	int ret;

	if (!sink) {
		errno = EINVAL;
		return NULL;
	}
	/* opts->sz lets older callers pass a shorter struct */
	if (opts && prec_opts_copy(&o, sizeof(o), opts) < 0) {
		errno = EINVAL;
		return NULL;
	}
	if (o.frame_size == 0)
		o.frame_size = PREC_DEFAULT_FRAME_SIZE;
	if (o.frame_size > PREC_MAX_FRAME_SIZE)
		o.frame_size = PREC_MAX_FRAME_SIZE;
	if (o.switch_rows > PREC_SWBATCH_MAX_ROWS)
		o.switch_rows = PREC_SWBATCH_MAX_ROWS;

	w = calloc(1, sizeof(*w));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	w->sink = sink;
	w->opts = o;
	w->fast = prec_packet_fast_ok();
	w->base = sink->written;
	w->cctx = ZSTD_createCCtx();
	if (!w->cctx) {
		ret = -ENOMEM;
		goto err_free;
	}
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, o.zstd_level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1))) {
		ret = -EINVAL;
		goto err_free;
	}

	prec_put32(hdr, PREC_SKIP_MAGIC_BASE | PREC_KIND_FILE_HEADER);
	prec_put32(hdr + 4, PREC_FILE_HEADER_SIZE);
	memcpy(hdr + 8, PREC_FILE_MAGIC, 8);
	prec_put16(hdr + 16, PREC_VERSION_MAJOR);
	prec_put16(hdr + 18, PREC_VERSION_MINOR);
	prec_put32(hdr + 20, 0);   /* flags */
	prec_put32(hdr + 24, prec_crc32(hdr + 8, PREC_FILE_HEADER_SIZE - 4));
	ret = prec_sink_write(sink, hdr, sizeof(hdr));
	if (ret < 0)
		goto err_free;
	w->st.bytes_written = sizeof(hdr);
	return w;

err_free:
	prec_writer_free(w);
	errno = -ret > 0 && -ret < 4096 ? -ret : EIO;
	return NULL;
}

static struct wstream *get_stream(struct prec_writer *w, uint32_t id)
{
	struct wstream *s;

	if (id >= MAX_STREAMS)
		return NULL;
	if (id >= w->nstreams) {
		size_t n = w->nstreams ? w->nstreams : 8;
		while (n <= id)
			n *= 2;
		struct wstream **ns = realloc(w->streams, n * sizeof(*ns));
		if (!ns)
			return NULL;
		memset(ns + w->nstreams, 0, (n - w->nstreams) * sizeof(*ns));
		w->streams = ns;
		w->nstreams = n;
	}
	s = w->streams[id];
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		prec_intern_init(&s->strings);
		prec_cctree_init(&s->chains);
		s->used = 1;
		w->streams[id] = s;
	}
	return s;
}

/* An intern call cannot return an iid: the writer fails with err (the
 * first error stays), so a 0 iid always comes with prec_writer_error(). */
static uint64_t intern_fail(struct prec_writer *w, int err)
{
	if (!w->closed)
		fail(w, err);
	return 0;
}

uint64_t prec_writer_intern_string(struct prec_writer *w, uint32_t stream,
				   const char *str)
{
	struct wstream *s;
	uint64_t iid;

	if (!w)
		return 0;
	if (check(w))
		return 0;
	if (!str)
		return intern_fail(w, -EINVAL);
	s = get_stream(w, stream);
	if (!s)
		return intern_fail(w, stream >= MAX_STREAMS ? -EINVAL : -ENOMEM);
	iid = prec_intern_get(&s->strings, str, strlen(str));
	if (!iid)
		return intern_fail(w, -ENOMEM);
	return iid;
}

uint64_t prec_writer_intern_callchain(struct prec_writer *w, uint32_t stream,
				      const uint64_t *ips, size_t n)
{
	struct wstream *s;
	uint64_t iid;
	int err = 0;

	if (!w)
		return 0;
	if (check(w))
		return 0;
	if (!ips && n)
		return intern_fail(w, -EINVAL);
	if (n > PREC_MAX_PACKET_SIZE / 16)
		return intern_fail(w, PREC_E_TOO_BIG);
	s = get_stream(w, stream);
	if (!s)
		return intern_fail(w, stream >= MAX_STREAMS ? -EINVAL : -ENOMEM);
	iid = prec_cctree_intern(&s->chains, ips, n, &err);
	if (!iid)
		return intern_fail(w, err);
	return iid;
}

static int reserve(struct wstream *s, size_t more)
{
	if (more <= s->cap - s->len)
		return 0;
	size_t cap = s->cap ? s->cap : 64 * 1024;
	while (cap - s->len < more)
		cap *= 2;
	unsigned char *nb = realloc(s->buf, cap);
	if (!nb)
		return -ENOMEM;
	s->buf = nb;
	s->cap = cap;
	return 0;
}


/* Room for a packet of sz bytes, and its `Trace.packet` key and length
 * written: the caller appends the sz bytes. */
static int begin_packet(struct wstream *s, size_t sz)
{
	int ret;

	if (sz > PREC_MAX_PACKET_SIZE)
		return PREC_E_TOO_BIG;
	ret = reserve(s, 1 + 10 + sz);
	if (ret < 0)
		return ret;
	s->buf[s->len++] = 0x0A;
	s->len = (size_t)(prec_varint_put(s->buf + s->len, sz) - s->buf);
	return 0;
}

/* Appends `Trace.packet` field bytes for pkt to the stream's buffer:
 * the hot kinds through the fast encoder, everything else through
 * protobuf-c (same bytes either way, see packet.h). */
static int encode(struct prec_writer *w, struct wstream *s, const Perfrec__Packet *pkt)
{
	size_t body = 0, fast, sz;
	int ret;

	if (w->fast) {
		/* the common small kinds in one pass */
		ret = reserve(s, PREC_FAST_SMALL_MAX);
		if (ret < 0)
			return ret;
		sz = prec_packet_fast_pack_small(pkt, s->buf + s->len);
		if (sz) {
			s->len += sz;
			s->packets++;
			return 0;
		}
	}
	fast = w->fast ? prec_packet_fast_measure(pkt, &body) : 0;
	sz = fast ? fast : protobuf_c_message_get_packed_size(&pkt->base);

	ret = begin_packet(s, sz);
	if (ret < 0)
		return ret;
	if (fast)
		s->len += prec_packet_fast_pack_body(pkt, body, s->buf + s->len);
	else
		s->len += protobuf_c_message_pack(&pkt->base, s->buf + s->len);
	s->packets++;
	return 0;
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < n)
		c *= 2;
	void *np = realloc(*p, c * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = c;
	return 0;
}

/* The pending callchain nodes as runs (and the empty chain, when pending,
 * as a Callchain without ips in *empty). A run goes on while each node's
 * parent is the node before it. Runs are numbered implicitly: the writer
 * makes nodes in iid order and writes them in that order, so each run
 * starts one past the largest iid a reader has seen, except after the
 * empty chain's Callchain, which a reader defines before the runs of the
 * same packet: a run below it carries its iid. */
static int chain_runs(struct prec_writer *w, struct wstream *s, size_t *nruns,
		      struct prec_interned_ref *empty, size_t *nempty)
{
	const struct prec_cctree *t = &s->chains;
	size_t first = t->emitted, nv = 0, nr = 0;
	uint64_t seen;   /* largest callchain iid a reader has met */

	*nempty = 0;
	if (grow((void **)&w->vals, &w->vals_cap, 2 * (t->n - first), sizeof(*w->vals)) < 0 ||
	    grow((void **)&w->runs, &w->runs_cap, t->n - first, sizeof(*w->runs)) < 0)
		return -ENOMEM;
	seen = first;
	if (t->empty > first) {
		*empty = (struct prec_interned_ref){ t->empty, NULL, 0, 0 };
		*nempty = 1;
		seen = t->empty;
	}
	for (size_t i = first; i < t->n; i++) {
		const struct prec_cctree_node *nd = &t->nodes[i];
		struct prec_interned_run *r;
		if (nd->parent == PREC_CC_EMPTY)
			continue;
		if (!nr || nd->parent != i || t->nodes[i - 1].parent == PREC_CC_EMPTY) {
			r = &w->runs[nr++];
			r->iid = i + 1 == seen + 1 ? 0 : i + 1;
			r->parent = nd->parent;
			r->vals = w->vals + nv;
			r->n = 0;
		} else {
			r = &w->runs[nr - 1];
		}
		size_t k = prec_cctree_code(t, i, w->vals + nv);
		nv += k;
		r->n += k;
		if (i + 1 > seen)
			seen = i + 1;
	}
	*nruns = nr;
	return 0;
}

/* Encodes one InternedData packet with every pending entry of the stream
 * (dt = 0: it inherits the time of the packet before it). */
static int emit_interned(struct prec_writer *w, struct wstream *s)
{
	size_t ns = prec_intern_pending(&s->strings);
	struct prec_interned_ref *sr, empty;
	size_t sz, nr = 0, ne = 0;
	int ret;

	if (grow((void **)&w->iref, &w->iref_cap, ns, sizeof(*w->iref)) < 0)
		return -ENOMEM;
	sr = w->iref;
	for (size_t i = 0; i < ns; i++) {
		size_t e = s->strings.emitted + i;
		sr[i].iid = s->strings.ents[e].iid;
		sr[i].data = prec_intern_key(&s->strings, e);
		sr[i].n = s->strings.ents[e].len;
	}
	if (prec_cctree_pending(&s->chains) && chain_runs(w, s, &nr, &empty, &ne) < 0)
		return -ENOMEM;
	sz = prec_interned_size(sr, ns, &empty, ne, w->runs, nr);
	ret = begin_packet(s, sz);
	if (ret < 0)
		return ret;
	s->len += prec_interned_pack(sr, ns, &empty, ne, w->runs, nr, s->buf + s->len);
	s->packets++;
	s->kinds |= PREC_KIND(PERFREC__PACKET__DATA_INTERNED);
	w->st.packets++;
	prec_intern_emitted(&s->strings);
	prec_cctree_emitted(&s->chains);
	return 0;
}

/* A short run of switches as ContextSwitch packets: alone, each decodes
 * faster than a batch of a few rows (a batch is one protobuf-c unpack,
 * then its rows), and takes about as many bytes once compressed. */
static int write_rows(struct prec_writer *w, struct wstream *s)
{
	struct prec_swbatch *b = s->sw;
	int ret;

	for (size_t i = 0; i < b->n; i++) {
		Perfrec__Packet p = PERFREC__PACKET__INIT;
		Perfrec__ContextSwitch cs = PERFREC__CONTEXT_SWITCH__INIT;
		prec_swbatch_row(b, i, &cs);
		p.dt = b->dt[i];
		p.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
		p.context_switch = &cs;
		ret = encode(w, s, &p);
		if (ret < 0)
			return ret;
		w->st.packets++;
	}
	s->kinds |= PREC_KIND(PERFREC__PACKET__DATA_CONTEXT_SWITCH);
	prec_swbatch_clear(b);
	return 0;
}

/* Writes the stream's pending switches as one SwitchBatch packet, or a
 * short run of them (not a full batch) as ContextSwitch packets. */
static int write_batch(struct prec_writer *w, struct wstream *s)
{
	int ret;

	if (!s->sw || !s->sw->n)
		return 0;
	if (s->sw->n < PREC_SWBATCH_MIN_ROWS && !prec_swbatch_full(s->sw))
		return write_rows(w, s);
	ret = begin_packet(s, prec_swbatch_size(s->sw));
	if (ret < 0)
		return ret;
	s->len += prec_swbatch_pack(s->sw, s->buf + s->len);
	s->packets++;
	s->kinds |= PREC_KIND(PERFREC__PACKET__DATA_SWITCH_BATCH);
	w->st.packets++;
	prec_swbatch_clear(s->sw);
	return 0;
}

/* Packets of the open frame, written or pending in a batch. */
static int has_packets(const struct wstream *s)
{
	return s->packets || (s->sw && s->sw->n);
}

/* Compresses the stream's open frame and writes info + data in one write. */
static int cut_frame(struct prec_writer *w, uint32_t id, struct wstream *s)
{
	size_t bound, csize, total;
	uint8_t *info;
	struct prec_frame_info *e;
	int ret;

	ret = write_batch(w, s);
	if (ret < 0)
		return fail(w, ret);
	if (s->packets == 0)
		return 0;
	bound = ZSTD_compressBound(s->len);
	total = PREC_SKIP_HDR + PREC_INFO_SIZE + bound;
	if (total > w->zcap) {
		unsigned char *nb = realloc(w->zbuf, total);
		if (!nb)
			return fail(w, -ENOMEM);
		w->zbuf = nb;
		w->zcap = total;
	}
	csize = ZSTD_compress2(w->cctx, w->zbuf + PREC_SKIP_HDR + PREC_INFO_SIZE,
			       bound, s->buf, s->len);
	if (ZSTD_isError(csize))
		return fail(w, PREC_E_COMPRESS);
	if (w->nidx == w->idxcap) {
		size_t cap = w->idxcap ? w->idxcap * 2 : 256;
		struct prec_frame_info *ni = realloc(w->idx, cap * sizeof(*ni));
		if (!ni)
			return fail(w, -ENOMEM);
		w->idx = ni;
		w->idxcap = cap;
	}

	e = &w->idx[w->nidx];
	e->offset = w->sink->written - w->base;
	e->data_offset = e->offset + PREC_SKIP_HDR + PREC_INFO_SIZE;
	e->stream = id;
	e->packets = s->packets;
	e->t_min = s->t_min;
	e->t_max = s->t_max;
	e->compressed_size = (uint32_t)csize;
	e->raw_size = (uint32_t)s->len;
	e->seq = w->nidx;
	e->kinds = s->kinds;

	info = w->zbuf;
	prec_put32(info, PREC_SKIP_MAGIC_BASE | PREC_KIND_FRAME_INFO);
	prec_put32(info + 4, PREC_INFO_SIZE);
	info += PREC_SKIP_HDR;
	prec_info_encode(info, e);
	prec_put32(info + PREC_INFO_SIZE - 4, prec_crc32(info, PREC_INFO_SIZE - 4));

	total = PREC_SKIP_HDR + PREC_INFO_SIZE + csize;
	ret = prec_sink_write(w->sink, w->zbuf, total);
	if (ret < 0)
		return fail(w, ret);
	w->nidx++;
	w->st.frames++;
	w->st.bytes_raw += s->len;
	w->st.bytes_written += total;

	s->len = 0;
	s->packets = 0;
	s->kinds = 0;
	s->t_min = s->t_max = 0;
	s->last_time = 0;
	s->opened_ns = 0;
	/* keeps entries interned but not yet used (see intern.h, cctree.h) */
	if (prec_intern_reset(&s->strings) < 0)
		return fail(w, -ENOMEM);
	prec_cctree_reset(&s->chains);
	return 0;
}

/* The stream's clock and time range take a packet (or row) at time_ns. */
static void take_time(struct wstream *s, uint64_t time_ns)
{
	if (!time_ns)
		return;
	s->last_time = time_ns;
	if (!s->t_min || time_ns < s->t_min)
		s->t_min = time_ns;
	if (time_ns > s->t_max)
		s->t_max = time_ns;
	if (!s->opened_ns)
		s->opened_ns = time_ns;
}

/* A switch becomes a row of the stream's batch, timed like a packet of
 * its own: its dt is from the stream's previous packet or row. The batch
 * is written when full, or when it would take the frame past its size
 * (then the frame is cut), so frames keep their size. */
static int append_switch(struct prec_writer *w, uint32_t id, struct wstream *s,
			 const Perfrec__ContextSwitch *cs, uint64_t time_ns)
{
	int ret;

	if (!s->sw) {
		s->sw = malloc(sizeof(*s->sw));
		if (!s->sw)
			return fail(w, -ENOMEM);
		prec_swbatch_init(s->sw, w->opts.switch_rows);
	}
	ret = prec_swbatch_add(s->sw, cs, time_ns ? (int64_t)(time_ns - s->last_time) : 0);
	if (ret < 0)
		return fail(w, ret);
	take_time(s, time_ns);
	if (s->len + prec_swbatch_size(s->sw) + 16 >= w->opts.frame_size)
		return cut_frame(w, id, s);
	if (prec_swbatch_full(s->sw)) {
		ret = write_batch(w, s);
		if (ret < 0)
			return fail(w, ret);
	}
	return 0;
}

int prec_writer_append(struct prec_writer *w, uint32_t stream,
		       Perfrec__Packet *pkt, uint64_t time_ns)
{
	struct wstream *s;
	int ret;

	if (!w || !pkt)
		return -EINVAL;
	ret = check(w);
	if (ret)
		return ret;
	s = get_stream(w, stream);
	if (!s)
		return stream >= MAX_STREAMS ? -EINVAL : fail(w, -ENOMEM);
	if (pkt->data_case == PERFREC__PACKET__DATA_CONTEXT_SWITCH && pkt->context_switch &&
	    w->opts.switch_rows)
		return append_switch(w, stream, s, pkt->context_switch, time_ns);
	/* the batch holds the switches before this packet */
	ret = write_batch(w, s);
	if (ret < 0)
		return fail(w, ret);

	/* callchain ids: leaf handles become what the file holds (the
	 * caller's packet gets its own values back after encoding) */
	Perfrec__Sample *smp = NULL;
	Perfrec__OffCpu *oc = NULL;
	uint64_t cc_saved = 0;
	protobuf_c_boolean callers_saved = 0;
	if (pkt->data_case == PERFREC__PACKET__DATA_SAMPLE && pkt->sample &&
	    pkt->sample->callchain) {
		uint64_t cc;
		int callers;
		smp = pkt->sample;
		ret = prec_cctree_sample(&s->chains, smp->callchain, smp->ip, smp->misc,
					 &cc, &callers);
		if (ret < 0)
			return ret == -EINVAL ? ret : fail(w, ret);
		cc_saved = smp->callchain;
		callers_saved = smp->callchain_callers;
		smp->callchain = cc;
		smp->callchain_callers = callers;
	} else if (pkt->data_case == PERFREC__PACKET__DATA_OFF_CPU && pkt->off_cpu &&
		   pkt->off_cpu->callchain) {
		int err = 0;
		uint64_t cc = prec_cctree_resolve(&s->chains, pkt->off_cpu->callchain, &err);
		if (!cc)
			return err == -EINVAL ? err : fail(w, err);
		oc = pkt->off_cpu;
		cc_saved = oc->callchain;
		oc->callchain = cc;
	}
	if (prec_intern_pending(&s->strings) || prec_cctree_pending(&s->chains)) {
		ret = emit_interned(w, s);
		if (ret < 0) {
			ret = fail(w, ret);
			goto restore;
		}
	}
	/* the stream's clock moves only once the packet is stored: a refused
	 * packet must not shift the dt of the next one */
	pkt->dt = time_ns ? (int64_t)(time_ns - s->last_time) : 0;
	ret = encode(w, s, pkt);
restore:
	if (smp) {
		smp->callchain = cc_saved;
		smp->callchain_callers = callers_saved;
	} else if (oc) {
		oc->callchain = cc_saved;
	}
	if (ret == PREC_E_TOO_BIG)
		return ret;   /* this packet is refused; the writer goes on */
	if (ret < 0)
		return fail(w, ret);
	s->kinds |= (unsigned)pkt->data_case < 64 ? PREC_KIND(pkt->data_case) : PREC_KINDS_ALL;
	prec_cctree_appended(&s->chains);
	take_time(s, time_ns);
	w->st.packets++;
	if (s->len >= w->opts.frame_size)
		return cut_frame(w, stream, s);
	return 0;
}

int prec_writer_flush_due(struct prec_writer *w, uint64_t now_ns)
{
	uint64_t age = w ? (uint64_t)w->opts.flush_ms * 1000000u : 0;
	int ret;

	if (!w)
		return -EINVAL;
	ret = check(w);
	if (ret)
		return ret;
	if (!w->opts.flush_ms)
		return 0;
	for (size_t i = 0; i < w->nstreams; i++) {
		struct wstream *s = w->streams[i];
		if (!s || !has_packets(s))
			continue;
		/* a frame of untimed packets starts ageing at the first check */
		if (!s->opened_ns) {
			s->opened_ns = now_ns;
			continue;
		}
		if (now_ns >= s->opened_ns && now_ns - s->opened_ns >= age) {
			ret = cut_frame(w, (uint32_t)i, s);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

int prec_writer_flush(struct prec_writer *w)
{
	int ret;

	if (!w)
		return -EINVAL;
	ret = check(w);
	if (ret)
		return ret;
	for (size_t i = 0; i < w->nstreams; i++) {
		struct wstream *s = w->streams[i];
		if (s && has_packets(s)) {
			ret = cut_frame(w, (uint32_t)i, s);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

static int write_index(struct prec_writer *w)
{
	uint8_t *buf;
	size_t total;
	int ret;

	ret = prec_index_encode(w->idx, w->nidx, w->sink->written - w->base, &buf,
				&total);
	if (ret < 0)
		return fail(w, ret);
	ret = prec_sink_write(w->sink, buf, total);
	free(buf);
	if (ret < 0)
		return fail(w, ret);
	w->st.bytes_written += total;
	return 0;
}

int prec_writer_close(struct prec_writer *w)
{
	int ret;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (w->closed)
		return 0;
	ret = prec_writer_flush(w);
	if (ret < 0)
		return ret;
	if (w->opts.write_index) {
		ret = write_index(w);
		if (ret < 0)
			return ret;
	}
	ret = prec_sink_sync(w->sink);
	if (ret < 0)
		return fail(w, ret);
	w->closed = 1;
	return 0;
}

void prec_writer_free(struct prec_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nstreams; i++) {
		struct wstream *s = w->streams[i];
		if (!s)
			continue;
		free(s->buf);
		prec_intern_release(&s->strings);
		prec_cctree_release(&s->chains);
		prec_swbatch_release(s->sw);
		free(s->sw);
		free(s);
	}
	free(w->streams);
	ZSTD_freeCCtx(w->cctx);
	free(w->zbuf);
	free(w->idx);
	free(w->iref);
	free(w->runs);
	free(w->vals);
	free(w);
}

void prec_writer_stats(const struct prec_writer *w, struct prec_writer_stats *st)
{
	if (!st)
		return;
	if (!w) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = w->st;
}

int prec_writer_error(const struct prec_writer *w)
{
	if (!w)
		return -EINVAL;
	return w->err ? w->err : w->closed ? PREC_E_CLOSED : 0;
}
