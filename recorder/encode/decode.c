/*
 * decode.c - perf records into struct rec_record; see decode.h.
 *
 * Layouts follow linux/perf_event.h ("enum perf_event_type"). A cursor
 * (struct cur) walks the record; every take_*() checks the bytes are there
 * and latches a failure, so one check at the end catches truncation.
 */
#include "recorder/encode/decode.h"

#include <errno.h>
#include <string.h>

#include "recorder/events/groupread.h"

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

/* The sample_type bits this decoder understands, in record order. */
#define SUPPORTED_SAMPLE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | \
	PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | \
	PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
	PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | \
	PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

#ifndef PERF_SAMPLE_REGS_ABI_NONE
#define PERF_SAMPLE_REGS_ABI_NONE 0
#endif

struct cur {
	const unsigned char *p, *end;
	int bad;
};

static size_t left(const struct cur *c)
{
	return (size_t)(c->end - c->p);
}

static uint64_t take64(struct cur *c)
{
	uint64_t v = 0;

	if (left(c) < 8) {
		c->bad = 1;
		c->p = c->end;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static void take32x2(struct cur *c, uint32_t *a, uint32_t *b)
{
	uint32_t v[2] = { 0, 0 };

	if (left(c) < 8) {
		c->bad = 1;
		c->p = c->end;
	} else {
		memcpy(v, c->p, 8);
		c->p += 8;
	}
	*a = v[0];
	*b = v[1];
}

#define SID_BITS (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
	PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

size_t rec_sample_id_size(uint64_t st)
{
	/* each sample_id field is one u64 */
	return 8 * (size_t)__builtin_popcountll(st & SID_BITS);
}

/* The sample_id every recording uses (events/evlist.h REC_SID_TYPE):
 * TID, TIME, CPU, IDENTIFIER - 32 bytes. */
#define SID_COMMON (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | \
	PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

/* Context switches are most records of a --switch-events trace: decoded
 * straight from their fixed layout when sample_id is the common one. It
 * sets the same fields as the general path (tests/unit/recorder/
 * test_decode.c checks both) but clears only sid and sw, not the whole
 * union: a 176-byte memset (rep stos) was half of the decode time.
 * 1, or 0 when the record is not such a one. */
static int decode_switch_fast(const struct rec_decode_ctx *ctx,
			      const struct perf_event_header *h,
			      const unsigned char *p, struct rec_record *out)
{
	size_t body = h->type == PERF_RECORD_SWITCH_CPU_WIDE ? 8 : 0;
	uint32_t v[2];

	if ((ctx->sid_type & SID_BITS) != SID_COMMON ||
	    (size_t)h->size != sizeof(*h) + body + 32)
		return 0;
	struct rec_sample_id sid = { 0 };

	out->type = h->type;
	out->misc = h->misc;
	out->size = h->size;
	out->payload = p;
	out->payload_len = body + 32;
	out->sw.next_prev_pid = out->sw.next_prev_tid = 0;
	if (body) {
		memcpy(v, p, 8);
		out->sw.next_prev_pid = v[0];
		out->sw.next_prev_tid = v[1];
	}
	p += body;
	memcpy(v, p, 8);                  /* TID */
	sid.pid = v[0];
	sid.tid = v[1];
	memcpy(&sid.time, p + 8, 8);      /* TIME */
	memcpy(v, p + 16, 8);             /* CPU, res */
	sid.cpu = v[0];
	memcpy(&sid.id, p + 24, 8);       /* IDENTIFIER */
	sid.has_tid = sid.has_time = true;
	sid.has_cpu = sid.has_id = true;
	out->sid = sid;
	return 1;
}

static void parse_sid(struct cur *c, uint64_t st, struct rec_sample_id *s)
{
	uint32_t res;

	if (st & PERF_SAMPLE_TID) {
		take32x2(c, &s->pid, &s->tid);
		s->has_tid = true;
	}
	if (st & PERF_SAMPLE_TIME) {
		s->time = take64(c);
		s->has_time = true;
	}
	if (st & PERF_SAMPLE_ID) {
		s->id = take64(c);
		s->has_id = true;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		s->stream_id = take64(c);
		s->has_stream_id = true;
	}
	if (st & PERF_SAMPLE_CPU) {
		take32x2(c, &s->cpu, &res);
		s->has_cpu = true;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		s->id = take64(c);
		s->has_id = true;
	}
}

static int decode_sample(const struct rec_decode_ctx *ctx, struct cur *c,
			 struct rec_record *out)
{
	const struct rec_sample_fmt *fmt;
	struct rec_sample_id *s = &out->sid;
	uint64_t st, id = ~0ull;
	uint32_t res;

	if (ctx->sid_type & PERF_SAMPLE_IDENTIFIER) {
		id = take64(c);
		if (c->bad)
			return -EINVAL;
	}
	fmt = ctx->lookup ? ctx->lookup(ctx->arg, id) : NULL;
	if (!fmt)
		return -ENOENT;
	st = fmt->sample_type;
	if (st & ~(uint64_t)SUPPORTED_SAMPLE)
		return -EOPNOTSUPP;
	if (!!(st & PERF_SAMPLE_IDENTIFIER) != !!(ctx->sid_type & PERF_SAMPLE_IDENTIFIER))
		return -EINVAL;
	out->sample.sample_type = st;
	out->sample.read_format = fmt->read_format;
	out->sample.bpf_output = fmt->bpf_output;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		s->id = id;
		s->has_id = true;
	}
	if (st & PERF_SAMPLE_IP)
		out->sample.ip = take64(c);
	if (st & PERF_SAMPLE_TID) {
		take32x2(c, &s->pid, &s->tid);
		s->has_tid = true;
	}
	if (st & PERF_SAMPLE_TIME) {
		s->time = take64(c);
		s->has_time = true;
	}
	if (st & PERF_SAMPLE_ADDR)
		out->sample.addr = take64(c);
	if (st & PERF_SAMPLE_ID) {
		s->id = take64(c);
		s->has_id = true;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		s->stream_id = take64(c);
		s->has_stream_id = true;
	}
	if (st & PERF_SAMPLE_CPU) {
		take32x2(c, &s->cpu, &res);
		s->has_cpu = true;
	}
	if (st & PERF_SAMPLE_PERIOD)
		out->sample.period = take64(c);
	if (c->bad)
		return -EINVAL;
	if (st & PERF_SAMPLE_READ) {
		uint64_t rf = fmt->read_format, nr = 1;
		size_t need;

		if (rf & PERF_FORMAT_GROUP) {
			if (left(c) < 8)
				return -EINVAL;
			memcpy(&nr, c->p, 8);
			/* bound nr by the bytes present before sizing */
			if (nr > left(c) / 8)
				return -EINVAL;
		}
		need = rec_group_read_size(rf, (uint32_t)nr);
		if (need > left(c))
			return -EINVAL;
		out->sample.read = c->p;
		out->sample.read_len = need;
		c->p += need;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = take64(c);

		if (c->bad || nr > left(c) / 8)
			return -EINVAL;
		out->sample.nr = nr;
		out->sample.ips = c->p;
		c->p += nr * 8;
	}
	if (st & PERF_SAMPLE_RAW) {
		uint32_t size;

		if (left(c) < 4)
			return -EINVAL;
		memcpy(&size, c->p, 4);
		c->p += 4;
		if (size > left(c))
			return -EINVAL;
		out->sample.raw = c->p;
		out->sample.raw_size = size;
		c->p += size;
	}
	/* (PERF_SAMPLE_BRANCH_STACK would come here: not requested, refused
	 * above) */
	if (st & PERF_SAMPLE_REGS_USER) {
		uint64_t abi = take64(c), n;

		if (c->bad)
			return -EINVAL;
		out->sample.regs_abi = abi;
		out->sample.regs_mask = fmt->regs_user;
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			n = (uint64_t)__builtin_popcountll(fmt->regs_user);
			if (n > left(c) / 8)
				return -EINVAL;
			out->sample.regs = c->p;
			out->sample.nregs = (uint32_t)n;
			c->p += n * 8;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		uint64_t size = take64(c), dyn;

		/* size bytes, then dyn_size when size != 0 */
		if (c->bad || size > left(c) || (size && left(c) - size < 8))
			return -EINVAL;
		if (size) {
			memcpy(&dyn, c->p + size, 8);
			if (dyn > size)
				return -EINVAL;
			out->sample.stack = c->p;
			out->sample.stack_size = size;
			out->sample.stack_dyn = dyn;
			c->p += size + 8;
		}
	}
	return c->bad ? -EINVAL : 1;
}

/* A NUL-terminated string starting at c->p, before the sample_id. */
static const char *take_string(struct cur *c)
{
	const unsigned char *nul = memchr(c->p, '\0', left(c));
	const char *s = (const char *)c->p;

	if (!nul) {
		c->bad = 1;
		return NULL;
	}
	/* strings are padded to 8 bytes; the padding is ours to skip */
	c->p = c->end;
	return s;
}

int rec_decode(const struct rec_decode_ctx *ctx, const void *rec, size_t len,
	       struct rec_record *out)
{
	struct perf_event_header h;
	struct cur c;
	size_t sid_size;
	int ret = 1;

	if (len < sizeof(h)) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	memcpy(&h, rec, sizeof(h));
	if ((h.type == PERF_RECORD_SWITCH_CPU_WIDE || h.type == PERF_RECORD_SWITCH) &&
	    h.size <= len &&
	    decode_switch_fast(ctx, &h, (const unsigned char *)rec + sizeof(h), out))
		return 1;
	memset(out, 0, sizeof(*out));
	if (h.size < sizeof(h) || h.size > len)
		return -EINVAL;
	out->type = h.type;
	out->misc = h.misc;
	out->size = h.size;
	out->payload = (const unsigned char *)rec + sizeof(h);
	out->payload_len = h.size - sizeof(h);
	c.p = out->payload;
	c.end = c.p + out->payload_len;
	c.bad = 0;

	if (h.type == PERF_RECORD_SAMPLE)
		return decode_sample(ctx, &c, out);
	sid_size = rec_sample_id_size(ctx->sid_type);

	/* Every other record ends with sample_id (sample_id_all). Types we do
	 * not decode were also produced by our events, so the tail is theirs
	 * too; user-space-synthesized types (>= PERF_RECORD_USER_TYPE_START)
	 * never appear in a kernel ring. */
	if (out->payload_len < sid_size)
		return -EINVAL;
	{
		struct cur s = { c.end - sid_size, c.end, 0 };

		parse_sid(&s, ctx->sid_type, &out->sid);
		c.end -= sid_size;
	}

	switch (h.type) {
	case PERF_RECORD_MMAP2:
		take32x2(&c, &out->mmap2.pid, &out->mmap2.tid);
		out->mmap2.addr = take64(&c);
		out->mmap2.len = take64(&c);
		out->mmap2.pgoff = take64(&c);
		if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			if (left(&c) < 24) {
				c.bad = 1;
				break;
			}
			out->mmap2.build_id_size = c.p[0] > 20 ? 20 : c.p[0];
			memcpy(out->mmap2.build_id, c.p + 4, 20);
			c.p += 24;
		} else {
			take32x2(&c, &out->mmap2.maj, &out->mmap2.min);
			out->mmap2.ino = take64(&c);
			out->mmap2.ino_generation = take64(&c);
		}
		take32x2(&c, &out->mmap2.prot, &out->mmap2.flags);
		if (!c.bad)
			out->mmap2.filename = take_string(&c);
		break;
	case PERF_RECORD_COMM:
		take32x2(&c, &out->comm.pid, &out->comm.tid);
		if (!c.bad)
			out->comm.comm = take_string(&c);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		take32x2(&c, &out->task.pid, &out->task.ppid);
		take32x2(&c, &out->task.tid, &out->task.ptid);
		out->task.time = take64(&c);
		break;
	case PERF_RECORD_SWITCH:
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		take32x2(&c, &out->sw.next_prev_pid, &out->sw.next_prev_tid);
		break;
	case PERF_RECORD_LOST:
		out->lost.id = take64(&c);
		out->lost.lost = take64(&c);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		out->lost_samples.lost = take64(&c);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		out->throttle.time = take64(&c);
		out->throttle.id = take64(&c);
		out->throttle.stream_id = take64(&c);
		break;
	default:
		ret = 0;
		break;
	}
	return c.bad ? -EINVAL : ret;
}

int rec_decode_time(const struct rec_decode_ctx *ctx,
		    const struct perf_event_header *h, uint64_t *t)
{
	const unsigned char *p = (const unsigned char *)h;
	struct perf_event_header hh;
	size_t off = sizeof(hh);

	/* records of a fuzzed ring may sit at any byte: copy, never cast */
	memcpy(&hh, p, sizeof(hh));
	h = &hh;
	if (h->type == PERF_RECORD_SAMPLE) {
		const struct rec_sample_fmt *fmt = NULL;
		uint64_t id;

		/* IDENTIFIER, IP, TID come before TIME in a sample */
		if ((ctx->sid_type & PERF_SAMPLE_IDENTIFIER) && h->size >= off + 8) {
			memcpy(&id, p + off, 8);
			fmt = ctx->lookup ? ctx->lookup(ctx->arg, id) : NULL;
		}
		if (!fmt || !(fmt->sample_type & PERF_SAMPLE_TIME))
			return -ENOENT;
		off += 8 * (size_t)__builtin_popcountll(fmt->sample_type &
			(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID));
	} else {
		/* sample_id ends the record: TID, then TIME */
		size_t sid = rec_sample_id_size(ctx->sid_type);

		if (!(ctx->sid_type & PERF_SAMPLE_TIME) || h->size < off + sid)
			return -ENOENT;
		off = h->size - sid + ((ctx->sid_type & PERF_SAMPLE_TID) ? 8 : 0);
	}
	if (h->size < off + 8)
		return -EINVAL;
	memcpy(t, p + off, 8);
	return 0;
}
