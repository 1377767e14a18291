/*
 * test_emit.c - records into packets (recorder/emit.c), written through a
 * real writer into memory and read back with format/reader.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "format/reader.h"
#include "format/sink.h"
#include "format/writer.h"
#include "recorder/encode/emit.h"
#include "recorder/recording/status.h"

#define SID (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

struct rb {
	uint64_t words[256];   /* 8-byte aligned like a ring */
	size_t len;
};

static unsigned char *bytes(struct rb *b)
{
	return (unsigned char *)b->words;
}

static void rb_start(struct rb *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { type, misc, 0 };

	memcpy(bytes(b), &h, sizeof(h));
	b->len = sizeof(h);
}

static void rb_u64(struct rb *b, uint64_t v)
{
	memcpy(bytes(b) + b->len, &v, 8);
	b->len += 8;
}

static void rb_u32x2(struct rb *b, uint32_t x, uint32_t y)
{
	memcpy(bytes(b) + b->len, &x, 4);
	memcpy(bytes(b) + b->len + 4, &y, 4);
	b->len += 8;
}

static void rb_str(struct rb *b, const char *s)
{
	size_t n = strlen(s) + 1, pad = (8 - n % 8) % 8;

	memcpy(bytes(b) + b->len, s, n);
	memset(bytes(b) + b->len + n, 0, pad);
	b->len += n + pad;
}

static void rb_sid(struct rb *b, uint32_t pid, uint32_t tid, uint64_t time,
		   uint32_t cpu)
{
	rb_u32x2(b, pid, tid);
	rb_u64(b, time);
	rb_u32x2(b, cpu, 0);
	rb_u64(b, 100);
}

static const struct perf_event_header *rb_end(struct rb *b)
{
	uint16_t size = (uint16_t)b->len;

	memcpy(bytes(b) + 6, &size, 2);
	return (const struct perf_event_header *)b->words;
}

static struct rec_sample_fmt fmt = {
	SID | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
	PERF_SAMPLE_READ | PERF_SAMPLE_RAW,
	PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
	PERF_FORMAT_TOTAL_TIME_RUNNING,
};

static const struct rec_sample_fmt *lookup(void *arg, uint64_t id)
{
	(void)arg;
	return id == 100 ? &fmt : NULL;
}

/* What the observer (the symbol gatherer's hook) was shown. */
static uint32_t observed[16];
static size_t nobserved;

static void observe(void *ctx, const struct rec_record *r)
{
	(void)ctx;
	if (nobserved < 16)
		observed[nobserved++] = r->type;
}

static void test_round_trip(void **state)
{
	struct rec_decode_ctx ctx = { SID, lookup, NULL };
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	struct rec_emit e;
	struct rb b;
	const void *data;
	size_t len;
	struct prec_reader *r;
	struct prec_packet p;
	int seen_sample = 0, seen_comm = 0, seen_switch = 0, seen_loss = 0,
	    seen_raw = 0, seen_ring_err = 0, seen_mmap = 0, seen_throttle = 0;

	(void)state;
	assert_non_null(w);
	assert_int_equal(rec_emit_init(&e, w, &ctx, 4), 0);
	e.observe = observe;
	nobserved = 0;

	/* a sample with callchain, group read (2 members) and raw payload */
	rb_start(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	rb_u64(&b, 100);
	rb_u64(&b, 0xffffffff81001234ull);      /* ip */
	rb_u32x2(&b, 50, 51);
	rb_u64(&b, 1000000);                     /* time */
	rb_u32x2(&b, 2, 0);
	rb_u64(&b, 250000);                      /* period */
	rb_u64(&b, 2);                           /* read: nr */
	rb_u64(&b, 5000);
	rb_u64(&b, 4000);
	rb_u64(&b, 11);
	rb_u64(&b, 100);
	rb_u64(&b, 22);
	rb_u64(&b, 101);
	rb_u64(&b, 2);                           /* callchain */
	rb_u64(&b, 0xffffffff81001234ull);
	rb_u64(&b, 0x401000);
	rb_u32x2(&b, 4, 0xabcdef01);             /* raw: 4 bytes + pad */
	assert_int_equal(rec_emit_record(&e, 3, 2, rb_end(&b)), 0);

	rb_start(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	rb_u32x2(&b, 50, 51);
	rb_str(&b, "pingpong");
	rb_sid(&b, 50, 51, 1000100, 2);
	assert_int_equal(rec_emit_record(&e, 3, 2, rb_end(&b)), 0);

	rb_start(&b, PERF_RECORD_SWITCH_CPU_WIDE,
		 PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	rb_u32x2(&b, 60, 61);
	rb_sid(&b, 50, 51, 1000200, 2);
	assert_int_equal(rec_emit_record(&e, 3, 2, rb_end(&b)), 0);

	rb_start(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	rb_u32x2(&b, 50, 50);
	rb_u64(&b, 0x400000);
	rb_u64(&b, 0x1000);
	rb_u64(&b, 0);
	rb_u32x2(&b, 8, 1);
	rb_u64(&b, 99);
	rb_u64(&b, 0);
	rb_u32x2(&b, 5, 2);
	rb_str(&b, "/bin/pingpong");
	rb_sid(&b, 50, 50, 1000250, 2);
	assert_int_equal(rec_emit_record(&e, 3, 2, rb_end(&b)), 0);

	rb_start(&b, PERF_RECORD_LOST, 0);
	rb_u64(&b, 100);
	rb_u64(&b, 77);
	rb_sid(&b, 0, 0, 1000300, 2);
	assert_int_equal(rec_emit_record(&e, 3, 2, rb_end(&b)), 0);

	rb_start(&b, PERF_RECORD_THROTTLE, 0);
	rb_u64(&b, 1000350);
	rb_u64(&b, 100);
	rb_u64(&b, 100);
	rb_sid(&b, 0, 0, 1000350, 2);
	assert_int_equal(rec_emit_record(&e, 3, 2, rb_end(&b)), 0);

	/* a type we do not decode, and a sample of an unknown event */
	rb_start(&b, 17, 0);
	rb_u64(&b, 1);
	rb_sid(&b, 0, 0, 1000400, 2);
	assert_int_equal(rec_emit_record(&e, 3, 2, rb_end(&b)), 0);
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 999);
	assert_int_equal(rec_emit_record(&e, 3, 2, rb_end(&b)), 0);

	assert_int_equal(rec_emit_ring_error(&e, 3, 2, 1000500, "corrupt"), 0);

	assert_int_equal(e.st.records, 8);
	/* every decoded record but the switch (no addresses in it); records
	 * kept raw are not decoded */
	assert_int_equal(nobserved, 5);
	assert_int_equal(observed[0], PERF_RECORD_SAMPLE);
	assert_int_equal(observed[1], PERF_RECORD_COMM);
	assert_int_equal(observed[2], PERF_RECORD_MMAP2);
	assert_int_equal(observed[3], PERF_RECORD_LOST);
	assert_int_equal(observed[4], PERF_RECORD_THROTTLE);
	assert_int_equal(e.st.samples, 1);
	assert_int_equal(e.st.switches, 1);
	assert_int_equal(e.st.tasks, 1);
	assert_int_equal(e.st.mmaps, 1);
	assert_int_equal(e.st.lost, 77);
	assert_int_equal(e.st.throttles, 1);
	assert_int_equal(e.st.raw, 1);
	assert_int_equal(e.st.bad, 1);
	assert_int_equal(e.st.ring_errors, 1);
	assert_int_equal(e.cpu[2].records, 8);
	assert_int_equal(e.cpu[2].lost, 77);
	assert_int_equal(e.cpu[2].switches, 1);
	assert_int_equal(prec_writer_close(w), 0);

	data = prec_sink_mem_data(sink, &len);
	r = prec_reader_open_mem(data, len, NULL);
	assert_non_null(r);
	while (prec_reader_next_packet(r, &p) > 0) {
		const Perfrec__Packet *k = p.pkt;

		assert_int_equal(p.stream, 3);
		switch (k->data_case) {
		case PERFREC__PACKET__DATA_SAMPLE: {
			size_t n;
			const uint64_t *ips = prec_frame_callchain(p.frame, k->sample->callchain, &n);

			seen_sample++;
			assert_int_equal(p.time, 1000000);
			assert_int_equal(k->sample->id, 100);
			assert_int_equal(k->sample->pid, 50);
			assert_int_equal(k->sample->tid, 51);
			assert_int_equal(k->sample->cpu, 2);
			assert_int_equal(k->sample->period, 250000);
			assert_int_equal(k->sample->misc, PERF_RECORD_MISC_KERNEL);
			assert_non_null(ips);
			assert_int_equal(n, 2);
			assert_int_equal(ips[1], 0x401000);
			assert_int_equal(k->sample->raw.len, 4);
			assert_non_null(k->sample->read);
			assert_int_equal(k->sample->read->time_enabled, 5000);
			assert_int_equal(k->sample->read->time_running, 4000);
			assert_int_equal(k->sample->read->n_ids, 2);
			assert_int_equal(k->sample->read->ids[1], 101);
			assert_int_equal(k->sample->read->values[1], 22);
			break;
		}
		case PERFREC__PACKET__DATA_TASK:
			seen_comm++;
			assert_int_equal(k->task->kind, PERFREC__TASK_EVENT__KIND__COMM);
			assert_true(k->task->exec);
			assert_string_equal(prec_frame_string(p.frame, k->task->comm), "pingpong");
			assert_int_equal(p.time, 1000100);
			break;
		case PERFREC__PACKET__DATA_CONTEXT_SWITCH:
			seen_switch++;
			assert_true(k->context_switch->out);
			assert_true(k->context_switch->preempt);
			assert_true(k->context_switch->cpu_wide);
			assert_int_equal(k->context_switch->pid, 50);
			assert_int_equal(k->context_switch->tid, 51);
			assert_int_equal(k->context_switch->other_pid, 60);
			assert_int_equal(k->context_switch->other_tid, 61);
			assert_int_equal(p.time, 1000200);
			break;
		case PERFREC__PACKET__DATA_MMAP:
			seen_mmap++;
			assert_string_equal(prec_frame_string(p.frame, k->mmap->filename), "/bin/pingpong");
			assert_int_equal(k->mmap->start, 0x400000);
			assert_int_equal(k->mmap->ino, 99);
			assert_false(k->mmap->synthesized);
			break;
		case PERFREC__PACKET__DATA_LOSS:
			if (k->loss->kind == PERFREC__LOSS__KIND__RING_ERROR) {
				seen_ring_err++;
				assert_string_equal(k->loss->reason, "corrupt");
			} else {
				seen_loss++;
				assert_int_equal(k->loss->kind, PERFREC__LOSS__KIND__KERNEL_LOST);
				assert_int_equal(k->loss->count, 77);
				assert_int_equal(k->loss->cpu, 2);
			}
			break;
		case PERFREC__PACKET__DATA_THROTTLE:
			seen_throttle++;
			assert_true(k->throttle->throttled);
			break;
		case PERFREC__PACKET__DATA_RAW:
			seen_raw++;
			assert_int_equal(k->raw->cpu, 2);
			break;
		default:
			break;
		}
	}
	assert_int_equal(seen_sample, 1);
	assert_int_equal(seen_comm, 1);
	assert_int_equal(seen_switch, 1);
	assert_int_equal(seen_mmap, 1);
	assert_int_equal(seen_loss, 1);
	assert_int_equal(seen_throttle, 1);
	assert_int_equal(seen_raw, 2);
	assert_int_equal(seen_ring_err, 1);
	prec_reader_free(r);
	rec_emit_release(&e);
	prec_writer_free(w);
	prec_sink_free(sink);
}

/* ---- --call-graph dwarf: user registers and stacks */

#define UREGS ((1ull << 6) | (1ull << 7) | (1ull << 8))   /* BP SP IP */
#define UPC 0x401234ull
#define KIP 0xffffffff81001234ull
#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)

static struct rec_sample_fmt ufmt = {
	.sample_type = SID | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
		       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
	.regs_user = UREGS,
};

static const struct rec_sample_fmt *ulookup(void *arg, uint64_t id)
{
	(void)arg;
	return id == 100 ? &ufmt : NULL;
}

/* A stand-in unwinder: three user frames, reads 24 bytes. */
static int unwinds, unwind_fail;

static int fake_unwind(void *ctx, const struct rec_record *r, int raw, uint64_t *ips,
		       size_t max, size_t *keep, int *stop)
{
	uint64_t v;

	(void)ctx;
	(void)raw;
	unwinds++;
	assert_true(max >= 3);
	assert_int_equal(r->sample.nregs, 3);
	memcpy(&v, (const char *)r->sample.regs + 16, 8);
	assert_int_equal(v, UPC);
	if (unwind_fail) {
		*stop = 6;   /* PREC_UNWIND_STOP_NO_REGS: *keep untouched */
		return 0;
	}
	*keep = 24;
	*stop = 1;   /* PREC_UNWIND_STOP_OUTERMOST */
	ips[0] = UPC;
	ips[1] = 0x401100;
	ips[2] = 0x401200;
	return 3;
}

/* kernel: taken in the kernel (kernel callchain), else in user mode
 * (empty kernel callchain: exclude_callchain_user); kthread: no user
 * registers, no stack. */
static const struct perf_event_header *usample(struct rb *b, int kernel, int kthread)
{
	rb_start(b, PERF_RECORD_SAMPLE, kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
	rb_u64(b, 100);
	rb_u64(b, kernel ? KIP : UPC);
	rb_u32x2(b, 50, 51);
	rb_u64(b, 1000000);
	rb_u32x2(b, 1, 0);
	rb_u64(b, 250000);
	if (kernel) {
		rb_u64(b, 3);
		rb_u64(b, CTX_KERNEL);
		rb_u64(b, KIP);
		rb_u64(b, KIP + 0x40);
	} else {
		rb_u64(b, 0);
	}
	if (kthread) {
		rb_u64(b, 0);   /* ABI_NONE */
		rb_u64(b, 0);   /* no stack */
		return rb_end(b);
	}
	rb_u64(b, 2);       /* ABI_64 */
	rb_u64(b, 0x7ffc0040);
	rb_u64(b, 0x7ffc0000);
	rb_u64(b, UPC);
	rb_u64(b, 64);      /* stack: 64 bytes, 40 copied */
	for (int i = 0; i < 8; i++)
		rb_u64(b, 0x1111111111111111ull * (uint64_t)(i + 1));
	rb_u64(b, 40);
	return rb_end(b);
}

struct got {
	uint64_t chain[3][16];
	size_t nchain[3];
	size_t nregs[3], stack[3], dyn[3];
	int n;
};

/* Emits a kernel-mode, a user-mode and a kernel-thread sample and reads
 * back what went out. */
static void emit_usamples(struct rec_emit *e, struct prec_sink *sink,
			  struct prec_writer *w, struct got *g)
{
	struct prec_reader *r;
	struct prec_packet p;
	const void *data;
	size_t len;
	struct rb b;

	assert_int_equal(rec_emit_record(e, 1, 1, usample(&b, 1, 0)), 0);
	assert_int_equal(rec_emit_record(e, 1, 1, usample(&b, 0, 0)), 0);
	assert_int_equal(rec_emit_record(e, 1, 1, usample(&b, 1, 1)), 0);
	assert_int_equal(prec_writer_close(w), 0);
	data = prec_sink_mem_data(sink, &len);
	r = prec_reader_open_mem(data, len, NULL);
	assert_non_null(r);
	memset(g, 0, sizeof(*g));
	while (prec_reader_next_packet(r, &p) > 0) {
		const Perfrec__Sample *smp;
		const uint64_t *ips;
		size_t n = 0;

		if (p.pkt->data_case != PERFREC__PACKET__DATA_SAMPLE)
			continue;
		assert_true(g->n < 3);
		smp = p.pkt->sample;
		ips = smp->callchain ? prec_frame_callchain(p.frame, smp->callchain, &n) : NULL;
		assert_true(n <= 16);
		if (n)
			memcpy(g->chain[g->n], ips, n * 8);
		g->nchain[g->n] = n;
		g->nregs[g->n] = smp->n_regs;
		g->stack[g->n] = smp->stack.len;
		g->dyn[g->n] = smp->stack_dyn_size;
		if (smp->n_regs) {
			assert_int_equal(smp->regs_abi, 2);
			assert_int_equal(smp->regs_mask, UREGS);
			assert_int_equal(smp->regs[2], UPC);
			assert_int_equal(smp->stack.data[0], 0x11);
		}
		g->n++;
	}
	prec_reader_free(r);
}

static void test_user_stacks(void **state)
{
	struct rec_decode_ctx ctx = { SID, ulookup, NULL };
	static const uint64_t kpart[3] = { CTX_KERNEL, KIP, KIP + 0x40 };
	static const uint64_t upart[4] = { CTX_USER, UPC, 0x401100, 0x401200 };

	(void)state;
	/* 0: unwound here; 1: raw (unwound for the tables, kept); 2: no
	 * unwinder (kept whole); 3: the unwind found nothing (kept whole) */
	for (int mode = 0; mode < 4; mode++) {
		struct prec_sink *sink = prec_sink_mem_new();
		struct prec_writer *w = prec_writer_new(sink, NULL);
		struct rec_emit e;
		struct got g;

		assert_int_equal(rec_emit_init(&e, w, &ctx, 4), 0);
		if (mode != 2) {
			e.unwind = fake_unwind;
		}
		e.raw_stacks = mode == 1;
		unwind_fail = mode == 3;
		unwinds = 0;
		emit_usamples(&e, sink, w, &g);
		assert_int_equal(g.n, 3);
		assert_int_equal(unwinds, mode == 2 ? 0 : 2);   /* not the kernel thread */
		/* the kernel thread: its kernel chain, nothing else */
		assert_int_equal(g.nchain[2], 3);
		assert_int_equal(g.nregs[2], 0);
		assert_int_equal(g.stack[2], 0);
		assert_int_equal(e.st.ustacks, 2);
		if (mode == 0) {
			/* [kernel part, USER, user part], no bytes */
			assert_int_equal(g.nchain[0], 7);
			assert_memory_equal(g.chain[0], kpart, sizeof(kpart));
			assert_memory_equal(g.chain[0] + 3, upart, sizeof(upart));
			assert_int_equal(g.nchain[1], 4);
			assert_memory_equal(g.chain[1], upart, sizeof(upart));
			for (int i = 0; i < 2; i++) {
				assert_int_equal(g.nregs[i], 0);
				assert_int_equal(g.stack[i], 0);
			}
			assert_int_equal(e.st.ustack_unwound, 2);
			assert_int_equal(e.st.ustack_frames, 6);
			assert_int_equal(e.st.ustack_raw, 0);
			assert_int_equal(e.st.ustack_stops[1], 2);
		} else {
			/* the kernel part alone; registers and the stack
			 * prefix the unwind read (mode 1) or all the kernel
			 * copied */
			size_t keep = mode == 1 ? 24 : 40;

			assert_int_equal(g.nchain[0], 3);
			assert_memory_equal(g.chain[0], kpart, sizeof(kpart));
			assert_int_equal(g.nchain[1], 0);
			for (int i = 0; i < 2; i++) {
				assert_int_equal(g.nregs[i], 3);
				assert_int_equal(g.stack[i], keep);
				assert_int_equal(g.dyn[i], 40);
			}
			assert_int_equal(e.st.ustack_raw, 2);
			assert_int_equal(e.st.ustack_raw_bytes, 2 * keep);
			assert_int_equal(e.st.ustack_unwound, mode == 1 ? 2 : 0);
		}
		rec_emit_release(&e);
		prec_writer_free(w);
		prec_sink_free(sink);
	}
}

static void test_status_line(void **state)
{
	struct rec_status_in in = { 3000000000ull, 15000, 5000, 1000000000ull, 7,
				    2 * 1024 * 1024, 10 * 1024 * 1024 };
	char buf[256];

	(void)state;
	assert_string_equal(rec_status_format(&in, buf, sizeof(buf)),
			    "[perfrec] 3.0s  10.0k rec/s  lost 7  2.0 MiB written  ratio 5.0x");
	assert_string_equal(rec_status_bytes(1536, buf, sizeof(buf)), "1.5 KiB");
	assert_string_equal(rec_status_bytes(100, buf, sizeof(buf)), "100 B");
}

/* ---- the junk end of frame-pointer chains */

/* pid 50 maps [0x400000, 0x500000); pid 77 is still being mapped. */
static int fake_mapped(void *ctx, uint32_t pid, uint64_t addr, uint64_t time)
{
	(void)ctx;
	(void)time;
	if (pid == 77)
		return -EAGAIN;
	return addr >= 0x400000 && addr < 0x500000;
}

static uint64_t observed_nr[8];

static void observe_nr(void *ctx, const struct rec_record *r)
{
	(void)ctx;
	if (r->type == PERF_RECORD_SAMPLE && nobserved < 8)
		observed_nr[nobserved++] = r->sample.nr;
}

static void emit_chain(struct rec_emit *e, uint16_t misc, uint32_t pid,
		       uint64_t time, uint64_t ip, const uint64_t *ips, size_t n)
{
	struct rb b;

	rb_start(&b, PERF_RECORD_SAMPLE, misc);
	rb_u64(&b, 100);
	rb_u64(&b, ip);
	rb_u32x2(&b, pid, pid);
	rb_u64(&b, time);
	rb_u32x2(&b, 0, 0);
	rb_u64(&b, 1000);                        /* period */
	rb_u64(&b, 0);                           /* read: no members */
	rb_u64(&b, 0);
	rb_u64(&b, 0);
	rb_u64(&b, n);
	for (size_t i = 0; i < n; i++)
		rb_u64(&b, ips[i]);
	rb_u32x2(&b, 4, 0);                      /* raw */
	assert_int_equal(rec_emit_record(e, 0, 0, rb_end(&b)), 0);
}

#define U PERF_CONTEXT_USER
#define K PERF_CONTEXT_KERNEL

static void test_chain_cut(void **state)
{
	struct rec_decode_ctx ctx = { SID, lookup, NULL };
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	struct rec_emit e;
	/* a walk that leaves the mappings after one known frame: cut at
	 * the first unmapped entry, all to the end */
	static const uint64_t c0[] = { U, 0x401000, 0x402000, 0x5, 0x402100, 0x7f0000001000 };
	/* a walk looping on one address: the first of the run stays */
	static const uint64_t c1[] = { U, 0x401000, 0x403000, 0x403000, 0x403000 };
	/* a kernel sample: unmapped user entries before the first known one
	 * stay (a process whose maps the recorder lacks keeps its chain) */
	static const uint64_t c2[] = { K, 0xffffffff81000000, U, 0x7000, 0x401000, 0x9 };
	/* mappings still arriving: kept whole */
	static const uint64_t c3[] = { U, 0x401000, 0x402000, 0x5, 0x6 };
	/* nothing known: kept whole */
	static const uint64_t c4[] = { U, 0x801000, 0x5, 0x6 };
	/* a return address at a mapping's end is looked up at ip - 1 */
	static const uint64_t c5[] = { U, 0x401000, 0x500000, 0x6 };
	static const struct { const uint64_t *ips; size_t n, keep; } want[] = {
		{ c0, 6, 3 }, { c1, 5, 3 }, { c2, 6, 5 }, { c3, 5, 5 }, { c4, 4, 4 },
		{ c5, 4, 3 },
	};
	size_t nsamples = 0;
	struct prec_reader *r;
	struct prec_packet p;
	const void *data;
	size_t len;

	(void)state;
	assert_int_equal(rec_emit_init(&e, w, &ctx, 1), 0);
	e.mapped = fake_mapped;
	e.observe = observe_nr;
	nobserved = 0;
	emit_chain(&e, PERF_RECORD_MISC_USER, 50, 1000, 0x401000, c0, 6);
	emit_chain(&e, PERF_RECORD_MISC_USER, 50, 1001, 0x401000, c1, 5);
	emit_chain(&e, PERF_RECORD_MISC_KERNEL, 50, 1002, 0xffffffff81000000, c2, 6);
	emit_chain(&e, PERF_RECORD_MISC_USER, 77, 1003, 0x401000, c3, 5);
	emit_chain(&e, PERF_RECORD_MISC_USER, 50, 1004, 0x801000, c4, 4);
	emit_chain(&e, PERF_RECORD_MISC_USER, 50, 1005, 0x401000, c5, 4);
	assert_int_equal(e.st.cut_chains, 4);
	assert_int_equal(e.st.cut_frames, 3 + 2 + 1 + 1);
	/* the symbol gatherer is shown only what the trace keeps */
	assert_int_equal(nobserved, 6);
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(observed_nr[i], want[i].keep);
	assert_int_equal(prec_writer_close(w), 0);

	data = prec_sink_mem_data(sink, &len);
	r = prec_reader_open_mem(data, len, NULL);
	assert_non_null(r);
	while (prec_reader_next_packet(r, &p) > 0) {
		const Perfrec__Sample *smp = p.pkt->sample;
		const uint64_t *ips;
		size_t n, i = nsamples;

		if (p.pkt->data_case != PERFREC__PACKET__DATA_SAMPLE)
			continue;
		assert_true(i < 6);
		nsamples++;
		ips = prec_frame_callchain(p.frame, smp->callchain, &n);
		assert_non_null(ips);
		assert_int_equal(n, want[i].keep);
		assert_memory_equal(ips, want[i].ips, n * sizeof(*ips));
		assert_int_equal(smp->callchain_cut, want[i].n - want[i].keep);
	}
	assert_int_equal(nsamples, 6);
	prec_reader_free(r);
	rec_emit_release(&e);
	prec_writer_free(w);
	prec_sink_free(sink);
}

/* Without a mapping oracle (no symbol gatherer) chains stay whole. */
static void test_chain_uncut(void **state)
{
	struct rec_decode_ctx ctx = { SID, lookup, NULL };
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	struct rec_emit e;
	static const uint64_t c0[] = { U, 0x401000, 0x402000, 0x5, 0x402100 };

	(void)state;
	assert_int_equal(rec_emit_init(&e, w, &ctx, 1), 0);
	e.observe = observe_nr;
	nobserved = 0;
	emit_chain(&e, PERF_RECORD_MISC_USER, 50, 1000, 0x401000, c0, 5);
	assert_int_equal(e.st.cut_chains, 0);
	assert_int_equal(observed_nr[0], 5);
	rec_emit_release(&e);
	prec_writer_free(w);
	prec_sink_free(sink);
}

#undef U
#undef K

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_user_stacks),
		cmocka_unit_test(test_status_line),
		cmocka_unit_test(test_chain_cut),
		cmocka_unit_test(test_chain_uncut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
