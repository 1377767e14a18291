/*
 * test_decode.c - perf records into struct rec_record (recorder/decode.c):
 * every combination of the sample_type fields we request (user registers
 * and stack of --call-graph dwarf included), every side-band
 * type, and truncated or lying records that must fail cleanly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/encode/decode.h"

#define SID (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

/* ---- a record builder */

struct rb {
	unsigned char buf[4096];
	size_t len;
};

static void rb_start(struct rb *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { type, misc, 0 };

	memcpy(b->buf, &h, sizeof(h));
	b->len = sizeof(h);
}

static void rb_u64(struct rb *b, uint64_t v)
{
	memcpy(b->buf + b->len, &v, 8);
	b->len += 8;
}

static void rb_u32x2(struct rb *b, uint32_t x, uint32_t y)
{
	memcpy(b->buf + b->len, &x, 4);
	memcpy(b->buf + b->len + 4, &y, 4);
	b->len += 8;
}

static void rb_bytes(struct rb *b, const void *p, size_t n)
{
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

/* A string padded with NULs to a multiple of 8 bytes. */
static void rb_str(struct rb *b, const char *s)
{
	size_t n = strlen(s) + 1, pad = (8 - n % 8) % 8;

	rb_bytes(b, s, n);
	memset(b->buf + b->len, 0, pad);
	b->len += pad;
}

static void rb_sid(struct rb *b, uint32_t pid, uint32_t tid, uint64_t time,
		   uint32_t cpu, uint64_t id)
{
	rb_u32x2(b, pid, tid);
	rb_u64(b, time);
	rb_u32x2(b, cpu, 0);
	rb_u64(b, id);
}

static const void *rb_end(struct rb *b)
{
	uint16_t size = (uint16_t)b->len;

	memcpy(b->buf + 6, &size, 2);
	return b->buf;
}

/* ---- event formats by id */

static struct rec_sample_fmt fmts[4];

static const struct rec_sample_fmt *lookup(void *arg, uint64_t id)
{
	(void)arg;
	return id >= 100 && id < 104 ? &fmts[id - 100] : NULL;
}

static const struct rec_decode_ctx ctx = { SID, lookup, NULL };

/* ---- samples */

static const uint64_t optional_bits[] = {
	PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR,
	PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD,
	PERF_SAMPLE_READ, PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_RAW,
	PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER,
};

/* --call-graph dwarf: BP SP IP, and a 64-byte stack copy of which the
 * kernel filled 40 */
#define REGS_MASK ((1ull << 6) | (1ull << 7) | (1ull << 8))
static const uint64_t uregs[3] = { 0x7ffc0010, 0x7ffc0000, 0x401234 };
#define STACK_SIZE 64
#define STACK_DYN 40
#define NBITS (sizeof(optional_bits) / sizeof(optional_bits[0]))

/* Builds a sample for event 100 + variant with sample_type st and the
 * values below, in the kernel's field order. */
static size_t build_sample(struct rb *b, uint64_t st, uint64_t rf,
			   uint64_t read_nr)
{
	static const uint64_t ips[3] = { 0xffffffffffffff80ull, 0xffffffff81000010ull, 0x401000 };
	static const char raw[13] = "tracepointxx";

	rb_start(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_u64(b, 100);                         /* IDENTIFIER */
	if (st & PERF_SAMPLE_IP)
		rb_u64(b, 0x401234);
	if (st & PERF_SAMPLE_TID)
		rb_u32x2(b, 42, 43);
	if (st & PERF_SAMPLE_TIME)
		rb_u64(b, 123456789);
	if (st & PERF_SAMPLE_ADDR)
		rb_u64(b, 0xdead0000);
	if (st & PERF_SAMPLE_ID)
		rb_u64(b, 100);
	if (st & PERF_SAMPLE_STREAM_ID)
		rb_u64(b, 777);
	if (st & PERF_SAMPLE_CPU)
		rb_u32x2(b, 3, 0);
	if (st & PERF_SAMPLE_PERIOD)
		rb_u64(b, 250000);
	if (st & PERF_SAMPLE_READ) {
		if (rf & PERF_FORMAT_GROUP) {
			rb_u64(b, read_nr);
			rb_u64(b, 1000);   /* enabled */
			rb_u64(b, 900);    /* running */
			for (uint64_t i = 0; i < read_nr; i++) {
				rb_u64(b, 10 + i);     /* value */
				rb_u64(b, 200 + i);    /* id */
			}
		} else {
			rb_u64(b, 55);
			rb_u64(b, 1000);
			rb_u64(b, 900);
			rb_u64(b, 100);
		}
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		rb_u64(b, 3);
		rb_bytes(b, ips, sizeof(ips));
	}
	if (st & PERF_SAMPLE_RAW) {
		/* the kernel pads size + data to 8 bytes and counts the
		 * padding in size */
		uint32_t n = 20;

		rb_bytes(b, &n, 4);
		rb_bytes(b, raw, sizeof(raw));
		while (b->len % 8)
			b->buf[b->len++] = 0;
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		rb_u64(b, 2);   /* PERF_SAMPLE_REGS_ABI_64 */
		rb_bytes(b, uregs, sizeof(uregs));
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		rb_u64(b, STACK_SIZE);
		for (int i = 0; i < STACK_SIZE; i++)
			b->buf[b->len++] = (unsigned char)i;
		rb_u64(b, STACK_DYN);
	}
	rb_end(b);
	return b->len;
}

static void check_sample(const struct rec_record *r, uint64_t st, uint64_t rf,
			 uint64_t read_nr)
{
	assert_int_equal(r->type, PERF_RECORD_SAMPLE);
	assert_int_equal(r->misc, PERF_RECORD_MISC_USER);
	assert_int_equal(r->sid.id, 100);
	assert_int_equal(r->sample.sample_type, st);
	assert_int_equal(r->sample.ip, st & PERF_SAMPLE_IP ? 0x401234 : 0);
	assert_int_equal(r->sid.has_tid, !!(st & PERF_SAMPLE_TID));
	assert_int_equal(r->sid.pid, st & PERF_SAMPLE_TID ? 42 : 0);
	assert_int_equal(r->sid.tid, st & PERF_SAMPLE_TID ? 43 : 0);
	assert_int_equal(r->sid.time, st & PERF_SAMPLE_TIME ? 123456789 : 0);
	assert_int_equal(r->sample.addr, st & PERF_SAMPLE_ADDR ? 0xdead0000 : 0);
	assert_int_equal(r->sid.stream_id, st & PERF_SAMPLE_STREAM_ID ? 777 : 0);
	assert_int_equal(r->sid.cpu, st & PERF_SAMPLE_CPU ? 3 : 0);
	assert_int_equal(r->sample.period, st & PERF_SAMPLE_PERIOD ? 250000 : 0);
	if (st & PERF_SAMPLE_READ) {
		uint64_t v;

		assert_non_null(r->sample.read);
		assert_int_equal(r->sample.read_format, rf);
		if (rf & PERF_FORMAT_GROUP) {
			assert_int_equal(r->sample.read_len, 8 * (3 + 2 * read_nr));
			memcpy(&v, (const char *)r->sample.read + 8 * (3 + 2 * (read_nr - 1)), 8);
			assert_int_equal(v, 10 + read_nr - 1);
		} else {
			assert_int_equal(r->sample.read_len, 32);
			memcpy(&v, r->sample.read, 8);
			assert_int_equal(v, 55);
		}
	} else {
		assert_null(r->sample.read);
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t ip;

		assert_int_equal(r->sample.nr, 3);
		memcpy(&ip, (const char *)r->sample.ips + 16, 8);
		assert_int_equal(ip, 0x401000);
	} else {
		assert_int_equal(r->sample.nr, 0);
	}
	if (st & PERF_SAMPLE_RAW) {
		assert_int_equal(r->sample.raw_size, 20);
		assert_memory_equal(r->sample.raw, "tracepointxx", 13);
	} else {
		assert_null(r->sample.raw);
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		assert_int_equal(r->sample.regs_abi, 2);
		assert_int_equal(r->sample.regs_mask, REGS_MASK);
		assert_int_equal(r->sample.nregs, 3);
		assert_memory_equal(r->sample.regs, uregs, sizeof(uregs));
	} else {
		assert_int_equal(r->sample.nregs, 0);
		assert_null(r->sample.regs);
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		assert_int_equal(r->sample.stack_size, STACK_SIZE);
		assert_int_equal(r->sample.stack_dyn, STACK_DYN);
		assert_int_equal(((const unsigned char *)r->sample.stack)[63], 63);
	} else {
		assert_null(r->sample.stack);
	}
}

static void test_every_sample_type_combination(void **state)
{
	struct rb b;

	(void)state;
	for (uint32_t mask = 0; mask < (1u << NBITS); mask++) {
		uint64_t st = PERF_SAMPLE_IDENTIFIER;

		for (size_t i = 0; i < NBITS; i++)
			if (mask & (1u << i))
				st |= optional_bits[i];
		for (int grp = 0; grp < 2; grp++) {
			uint64_t rf = PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
				      PERF_FORMAT_TOTAL_TIME_RUNNING |
				      (grp ? PERF_FORMAT_GROUP : 0);
			uint64_t nr = grp ? 1 + mask % 5 : 1;
			struct rec_record r;
			size_t len;

			if (grp && !(st & PERF_SAMPLE_READ))
				continue;
			fmts[0].sample_type = st;
			fmts[0].read_format = rf;
			fmts[0].regs_user = REGS_MASK;
			len = build_sample(&b, st, rf, nr);
			assert_int_equal(rec_decode(&ctx, b.buf, len, &r), 1);
			check_sample(&r, st, rf, nr);
			/* the time alone, without a decode, is the same */
			{
				uint64_t t = 0;

				assert_int_equal(rec_decode_time(&ctx, (const void *)b.buf, &t),
						 (st & PERF_SAMPLE_TIME) ? 0 : -ENOENT);
				assert_true(!(st & PERF_SAMPLE_TIME) || t == r.sid.time);
			}

			/* the same record claiming to be 8 bytes shorter is
			 * truncated: an error, never a read past its end */
			if (len > 16) {
				uint16_t shorter = (uint16_t)(len - 8);

				memcpy(b.buf + 6, &shorter, 2);
				assert_int_equal(rec_decode(&ctx, b.buf, len, &r), -EINVAL);
			}
		}
	}
}

static void test_sample_lies(void **state)
{
	struct rb b;
	struct rec_record r;
	uint64_t huge = 1ull << 60;

	(void)state;
	/* callchain nr far beyond the record */
	fmts[1].sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_CALLCHAIN;
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 101);
	rb_u64(&b, huge);
	rb_u64(&b, 1);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -EINVAL);

	/* raw size beyond the record */
	fmts[1].sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_RAW;
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 101);
	rb_u32x2(&b, 4000, 0);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -EINVAL);

	/* group read with an absurd member count */
	fmts[1].sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_READ;
	fmts[1].read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 101);
	rb_u64(&b, huge);
	rb_u64(&b, 1);
	rb_u64(&b, 2);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -EINVAL);

	/* user registers: more than the record holds */
	fmts[1].sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_REGS_USER;
	fmts[1].regs_user = ~0ull;   /* 64 registers */
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 101);
	rb_u64(&b, 2);
	for (int i = 0; i < 63; i++)
		rb_u64(&b, (uint64_t)i);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -EINVAL);
	/* no abi word at all */
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 101);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -EINVAL);
	/* ABI_NONE (a kernel thread): no registers follow */
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 101);
	rb_u64(&b, 0);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), 1);
	assert_int_equal(r.sample.nregs, 0);
	assert_null(r.sample.regs);

	/* user stack: size 0 has no dyn_size; sizes beyond the record, a
	 * missing dyn_size, dyn_size above size */
	fmts[1].sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_STACK_USER;
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 101);
	rb_u64(&b, 0);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), 1);
	assert_null(r.sample.stack);
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 101);
	rb_u64(&b, huge);
	rb_u64(&b, 0);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -EINVAL);
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 101);
	rb_u64(&b, 16);
	rb_u64(&b, 1);
	rb_u64(&b, 2);   /* 16 bytes, then nothing */
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -EINVAL);
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 101);
	rb_u64(&b, 16);
	rb_u64(&b, 1);
	rb_u64(&b, 2);
	rb_u64(&b, 24);  /* dyn_size > size */
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -EINVAL);
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 101);
	rb_u64(&b, 16);
	rb_u64(&b, 1);
	rb_u64(&b, 2);
	rb_u64(&b, 16);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), 1);
	assert_int_equal(r.sample.stack_dyn, 16);

	/* unknown event id */
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 999);
	rb_u64(&b, 1);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -ENOENT);

	/* sample_type bits we never request */
	fmts[2].sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_BRANCH_STACK;
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 102);
	rb_u64(&b, 0);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -EOPNOTSUPP);

	/* no room for the identifier */
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -EINVAL);

	/* header sizes that lie about the buffer */
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 100);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, 8, &r), -EINVAL);
	assert_int_equal(rec_decode(&ctx, b.buf, 4, &r), -EINVAL);
}

/* ---- side-band records */

static void test_switch_records(void **state)
{
	struct rb b;
	struct rec_record r;

	(void)state;
	/* PERF_RECORD_SWITCH: header + sample_id only */
	rb_start(&b, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT);
	rb_sid(&b, 10, 11, 5000, 1, 100);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), 1);
	assert_int_equal(r.type, PERF_RECORD_SWITCH);
	assert_int_equal(r.sid.pid, 10);
	assert_int_equal(r.sid.tid, 11);
	assert_int_equal(r.sid.time, 5000);
	assert_int_equal(r.sid.cpu, 1);
	assert_int_equal(r.sid.id, 100);
	assert_true(r.misc & PERF_RECORD_MISC_SWITCH_OUT);

	rb_start(&b, PERF_RECORD_SWITCH_CPU_WIDE, 0);
	rb_u32x2(&b, 20, 21);
	rb_sid(&b, 10, 11, 6000, 0, 100);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), 1);
	assert_int_equal(r.sw.next_prev_pid, 20);
	assert_int_equal(r.sw.next_prev_tid, 21);
	assert_int_equal(r.sid.time, 6000);

	/* shorter than its sample_id */
	rb_start(&b, PERF_RECORD_SWITCH, 0);
	rb_u64(&b, 1);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -EINVAL);
}

/* Switch records under the common sample_id take decode.c's fixed-layout
 * path; with STREAM_ID added they take the general one. Both must give
 * the same record (stream id and payload aside), field by field. */
static void test_switch_fast_path_matches_general(void **state)
{
	static const struct rec_decode_ctx ctx_gen = {
		SID | PERF_SAMPLE_STREAM_ID, lookup, NULL };
	static const uint16_t miscs[] = { 0, PERF_RECORD_MISC_SWITCH_OUT,
		PERF_RECORD_MISC_SWITCH_OUT | (1 << 14) /* preempt */ };

	(void)state;
	for (int cw = 0; cw < 2; cw++) {
		for (size_t m = 0; m < sizeof(miscs) / sizeof(miscs[0]); m++) {
			uint32_t type = cw ? PERF_RECORD_SWITCH_CPU_WIDE : PERF_RECORD_SWITCH;
			struct rb a, g;
			struct rec_record ra, rg;

			rb_start(&a, type, miscs[m]);
			rb_start(&g, type, miscs[m]);
			if (cw) {
				rb_u32x2(&a, 0x80000001u, 77);
				rb_u32x2(&g, 0x80000001u, 77);
			}
			rb_sid(&a, 0xfffffffeu, 12, 0x123456789abcull, 3, 101);
			rb_u32x2(&g, 0xfffffffeu, 12);
			rb_u64(&g, 0x123456789abcull);
			rb_u64(&g, 555);                 /* stream id */
			rb_u32x2(&g, 3, 0);
			rb_u64(&g, 101);
			rb_end(&a);
			rb_end(&g);
			memset(&ra, 0xaa, sizeof(ra));   /* the decoder clears it */
			memset(&rg, 0x55, sizeof(rg));
			assert_int_equal(rec_decode(&ctx, a.buf, a.len, &ra), 1);
			assert_int_equal(rec_decode(&ctx_gen, g.buf, g.len, &rg), 1);
			assert_int_equal(rg.sid.stream_id, 555);
			assert_true(rg.sid.has_stream_id);
			assert_int_equal(ra.sid.pid, 0xfffffffeu);
			assert_int_equal(ra.sid.tid, 12);
			assert_int_equal(ra.sid.cpu, 3);
			assert_int_equal(ra.sid.id, 101);
			assert_int_equal(ra.sid.time, 0x123456789abcull);
			assert_int_equal(ra.misc, miscs[m]);
			assert_int_equal(ra.sw.next_prev_pid, cw ? 0x80000001u : 0);
			assert_int_equal(ra.sw.next_prev_tid, cw ? 77 : 0);
			assert_ptr_equal(ra.payload, a.buf + 8);
			assert_int_equal(ra.payload_len, a.len - 8);
			rg.sid.stream_id = 0;
			rg.sid.has_stream_id = false;
			assert_int_equal(ra.type, rg.type);
			assert_int_equal(ra.misc, rg.misc);
			assert_int_equal(ra.size + 8, rg.size);
			assert_int_equal(ra.payload_len + 8, rg.payload_len);
			assert_int_equal(ra.sid.pid, rg.sid.pid);
			assert_int_equal(ra.sid.tid, rg.sid.tid);
			assert_int_equal(ra.sid.time, rg.sid.time);
			assert_int_equal(ra.sid.id, rg.sid.id);
			assert_int_equal(ra.sid.stream_id, 0);
			assert_int_equal(ra.sid.cpu, rg.sid.cpu);
			assert_true(ra.sid.has_tid && ra.sid.has_time && ra.sid.has_id &&
				    ra.sid.has_cpu && !ra.sid.has_stream_id);
			assert_int_equal(ra.sw.next_prev_pid, rg.sw.next_prev_pid);
			assert_int_equal(ra.sw.next_prev_tid, rg.sw.next_prev_tid);
			/* a u64 short of the layout: not this path,
			 * and the general path still judges it */
			a.buf[6] = (uint8_t)(a.len - 8);
			assert_int_equal(rec_decode(&ctx, a.buf, a.len, &ra), -EINVAL);
		}
	}
}

static void test_comm_fork_exit(void **state)
{
	struct rb b;
	struct rec_record r;

	(void)state;
	rb_start(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	rb_u32x2(&b, 7, 8);
	rb_str(&b, "pingpong");
	rb_sid(&b, 7, 8, 100, 0, 100);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), 1);
	assert_int_equal(r.comm.pid, 7);
	assert_int_equal(r.comm.tid, 8);
	assert_string_equal(r.comm.comm, "pingpong");
	assert_int_equal(r.sid.time, 100);
	{
		uint64_t t = 0;

		assert_int_equal(rec_decode_time(&ctx, (const void *)b.buf, &t), 0);
		assert_int_equal(t, 100);
	}

	/* a comm without its NUL inside the record */
	rb_start(&b, PERF_RECORD_COMM, 0);
	rb_u32x2(&b, 7, 8);
	rb_bytes(&b, "abcdefgh", 8);
	rb_sid(&b, 7, 8, 100, 0, 100);
	rb_end(&b);
	memset(b.buf + 16, 'x', 8);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -EINVAL);

	rb_start(&b, PERF_RECORD_FORK, 0);
	rb_u32x2(&b, 30, 1);
	rb_u32x2(&b, 31, 1);
	rb_u64(&b, 999);
	rb_sid(&b, 30, 31, 999, 1, 100);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), 1);
	assert_int_equal(r.task.pid, 30);
	assert_int_equal(r.task.ppid, 1);
	assert_int_equal(r.task.tid, 31);
	assert_int_equal(r.task.ptid, 1);
	assert_int_equal(r.task.time, 999);

	rb_start(&b, PERF_RECORD_EXIT, 0);
	rb_u32x2(&b, 30, 1);
	rb_u32x2(&b, 31, 1);
	rb_sid(&b, 30, 31, 999, 1, 100);   /* the time field is missing */
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -EINVAL);
}

static void test_mmap2(void **state)
{
	struct rb b;
	struct rec_record r;
	unsigned char bid[24] = { 20, 0, 0, 0 };

	(void)state;
	rb_start(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	rb_u32x2(&b, 5, 5);
	rb_u64(&b, 0x400000);
	rb_u64(&b, 0x2000);
	rb_u64(&b, 0x1000);
	rb_u32x2(&b, 8, 1);
	rb_u64(&b, 123456);
	rb_u64(&b, 2);
	rb_u32x2(&b, 5, 2);
	rb_str(&b, "/usr/bin/pingpong");
	rb_sid(&b, 5, 5, 77, 0, 100);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), 1);
	assert_int_equal(r.mmap2.pid, 5);
	assert_int_equal(r.mmap2.addr, 0x400000);
	assert_int_equal(r.mmap2.len, 0x2000);
	assert_int_equal(r.mmap2.pgoff, 0x1000);
	assert_int_equal(r.mmap2.maj, 8);
	assert_int_equal(r.mmap2.min, 1);
	assert_int_equal(r.mmap2.ino, 123456);
	assert_int_equal(r.mmap2.ino_generation, 2);
	assert_int_equal(r.mmap2.prot, 5);
	assert_int_equal(r.mmap2.flags, 2);
	assert_int_equal(r.mmap2.build_id_size, 0);
	assert_string_equal(r.mmap2.filename, "/usr/bin/pingpong");
	assert_int_equal(r.sid.time, 77);

	/* the build-id variant */
	for (int i = 0; i < 20; i++)
		bid[4 + i] = (unsigned char)(0xa0 + i);
	rb_start(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | (1 << 14));
	rb_u32x2(&b, 5, 5);
	rb_u64(&b, 0x400000);
	rb_u64(&b, 0x2000);
	rb_u64(&b, 0);
	rb_bytes(&b, bid, sizeof(bid));
	rb_u32x2(&b, 5, 2);
	rb_str(&b, "/lib/libc.so.6");
	rb_sid(&b, 5, 5, 78, 0, 100);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), 1);
	assert_int_equal(r.mmap2.build_id_size, 20);
	assert_int_equal(r.mmap2.build_id[0], 0xa0);
	assert_int_equal(r.mmap2.build_id[19], 0xa0 + 19);
	assert_string_equal(r.mmap2.filename, "/lib/libc.so.6");
}

static void test_loss_and_throttle(void **state)
{
	struct rb b;
	struct rec_record r;

	(void)state;
	rb_start(&b, PERF_RECORD_LOST, 0);
	rb_u64(&b, 100);
	rb_u64(&b, 4242);
	rb_sid(&b, 0, 0, 10, 1, 100);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), 1);
	assert_int_equal(r.lost.id, 100);
	assert_int_equal(r.lost.lost, 4242);

	rb_start(&b, PERF_RECORD_LOST_SAMPLES, 0);
	rb_u64(&b, 17);
	rb_sid(&b, 0, 0, 10, 1, 100);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), 1);
	assert_int_equal(r.lost_samples.lost, 17);

	rb_start(&b, PERF_RECORD_THROTTLE, 0);
	rb_u64(&b, 55);
	rb_u64(&b, 100);
	rb_u64(&b, 101);
	rb_sid(&b, 0, 0, 55, 1, 100);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), 1);
	assert_int_equal(r.throttle.time, 55);
	assert_int_equal(r.throttle.id, 100);
	assert_int_equal(r.throttle.stream_id, 101);

	rb_start(&b, PERF_RECORD_UNTHROTTLE, 0);
	rb_u64(&b, 56);
	rb_sid(&b, 0, 0, 56, 1, 100);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), -EINVAL);
}

static void test_unknown_type_kept_raw(void **state)
{
	struct rb b;
	struct rec_record r;

	(void)state;
	/* PERF_RECORD_KSYMBOL (17): not decoded, but its sample_id is */
	rb_start(&b, 17, 0);
	rb_u64(&b, 0xffffffffa0000000ull);
	rb_u64(&b, 0x100);
	rb_sid(&b, 0, 0, 31337, 1, 100);
	rb_end(&b);
	assert_int_equal(rec_decode(&ctx, b.buf, b.len, &r), 0);
	assert_int_equal(r.type, 17);
	assert_int_equal(r.payload_len, b.len - 8);
	assert_ptr_equal(r.payload, b.buf + 8);
	assert_int_equal(r.sid.time, 31337);
	assert_int_equal(r.sid.cpu, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_sample_type_combination),
		cmocka_unit_test(test_sample_lies),
		cmocka_unit_test(test_switch_records),
		cmocka_unit_test(test_switch_fast_path_matches_general),
		cmocka_unit_test(test_comm_fork_exit),
		cmocka_unit_test(test_mmap2),
		cmocka_unit_test(test_loss_and_throttle),
		cmocka_unit_test(test_unknown_type_kept_raw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
