/*
 * test_resolve.c - analyzer/resolve: callchains to frames.
 *
 * A return address is the instruction after a call. When the call is the
 * last instruction of its function, the return address is the first byte
 * of the next function; resolving it as-is names the wrong caller. The
 * trace here has exactly that layout, in user space and in the kernel, and
 * checks that callers are looked up at ip - 1 while the leaf and the user
 * pc where a task entered the kernel (exact ips) are not, and that frames keep the recorded address and offset.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyzer/symbols/resolve.h"
#include "analyzer/read/trace.h"
#include "format/sink.h"
#include "format/writer.h"

#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)

/* Non-PIE binary at 0x400000: caller [0x401000, 0x401100) ends with a
 * call, so its return address 0x401100 is callee_next's first byte. */
#define A_CALLER 0x401000ull
#define A_NEXT 0x401100ull
#define A_LEAF 0x401200ull
#define K_ENTRY 0xffffffff81000000ull
#define K_NEXT 0xffffffff81000100ull
#define K_LEAF 0xffffffff81000200ull

struct tw {
	struct prec_sink *sink;
	struct prec_writer *w;
};

static void put(struct tw *t, Perfrec__Packet *pkt, uint64_t time)
{
	assert_int_equal(prec_writer_append(t->w, 0, pkt, time), 0);
}

static void symtab(struct tw *t, int kind, const char *path, uint64_t bias,
		   const uint64_t *starts, const char *const *names, size_t n)
{
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__SymbolTable s = PERFREC__SYMBOL_TABLE__INIT;
	uint64_t d[8], sizes[8], iids[8];

	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++) {
		d[i] = i ? starts[i] - starts[i - 1] : starts[0];
		sizes[i] = 0x100;
		iids[i] = prec_writer_intern_string(t->w, 0, names[i]);
	}
	s.kind = kind;
	s.path = (char *)path;
	s.load_bias = bias;
	s.n_starts = s.n_sizes = s.n_names = n;
	s.starts = d;
	s.sizes = sizes;
	s.names = iids;
	pkt.data_case = PERFREC__PACKET__DATA_SYMBOLS;
	pkt.symbols = &s;
	put(t, &pkt, 0);
}

static void sample(struct tw *t, uint64_t time, uint64_t ip, int kernel,
		   const uint64_t *chain, size_t n)
{
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__Sample s = PERFREC__SAMPLE__INIT;

	s.pid = s.tid = 100;
	s.ip = ip;
	s.period = 1;
	s.misc = kernel ? 1 : 2;
	s.callchain = prec_writer_intern_callchain(t->w, 0, chain, n);
	assert_int_not_equal(s.callchain, 0);
	pkt.data_case = PERFREC__PACKET__DATA_SAMPLE;
	pkt.sample = &s;
	put(t, &pkt, time);
}

/* Writes the trace into memory: *buf, *len (malloc'd). */
static void write_trace(void **buf, size_t *len)
{
	struct tw t;
	struct prec_writer_opts o = PREC_WRITER_OPTS_INIT;
	t.sink = prec_sink_mem_new();
	assert_non_null(t.sink);
	t.w = prec_writer_new(t.sink, &o);
	assert_non_null(t.w);

	static const uint64_t us[] = { A_CALLER, A_NEXT, A_LEAF };
	static const char *const un[] = { "caller", "callee_next", "leaf" };
	static const uint64_t ks[] = { K_ENTRY, K_NEXT, K_LEAF };
	static const char *const kn[] = { "k_entry", "k_next", "k_leaf" };
	symtab(&t, PERFREC__SYMBOL_TABLE__KIND__ELF, "/usr/bin/prog", 0x400000, us, un, 3);
	symtab(&t, PERFREC__SYMBOL_TABLE__KIND__KERNEL, "", 0, ks, kn, 3);

	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	Perfrec__Mmap m = PERFREC__MMAP__INIT;
	m.pid = m.tid = 100;
	m.start = 0x400000;
	m.len = 0x10000;
	m.prot = 5;
	m.filename = prec_writer_intern_string(t.w, 0, "/usr/bin/prog");
	m.synthesized = 1;
	pkt.data_case = PERFREC__PACKET__DATA_MMAP;
	pkt.mmap = &m;
	put(&t, &pkt, 1000);

	/* user: leaf at A_NEXT exactly (an exact ip is never adjusted), called
	 * from caller whose call is its last instruction (returns to A_NEXT). */
	uint64_t c1[] = { CTX_USER, A_NEXT, A_NEXT };
	sample(&t, 2000, A_NEXT, 0, c1, 3);
	/* kernel leaf, kernel caller returning to K_NEXT, then user frames. */
	uint64_t c2[] = { CTX_KERNEL, K_LEAF + 4, K_NEXT, CTX_USER, A_LEAF + 8, A_NEXT };
	sample(&t, 3000, K_LEAF + 4, 1, c2, 6);
	/* frame pointers walked through code without them: after leaf's
	 * caller, addresses no mapping holds (then one that is mapped again) */
	uint64_t c3[] = { CTX_USER, A_LEAF + 8, A_NEXT, 0xffffffffull, 0, A_NEXT };
	sample(&t, 4000, A_LEAF + 8, 0, c3, 6);
	/* a walk that loops: one frame repeated to the end of the chain */
	uint64_t c4[] = { CTX_USER, A_LEAF + 8, A_NEXT, A_NEXT, A_NEXT, A_NEXT };
	sample(&t, 5000, A_LEAF + 8, 0, c4, 6);
	/* a fault at callee_next's first instruction: the user part starts
	 * with the interrupted pc itself, then a return address */
	uint64_t c5[] = { CTX_KERNEL, K_LEAF + 4, CTX_USER, A_NEXT, A_CALLER + 0x20 };
	sample(&t, 6000, K_LEAF + 4, 1, c5, 5);

	assert_int_equal(prec_writer_close(t.w), 0);
	const void *b;
	size_t n;
	b = prec_sink_mem_data(t.sink, &n);
	*buf = malloc(n);
	assert_non_null(*buf);
	memcpy(*buf, b, n);
	*len = n;
	prec_writer_free(t.w);
	prec_sink_free(t.sink);
}

struct collect {
	struct ana_trace *s;
	struct ana_loc fr[5][8];
	int n[5], cut[5];
	int nsamples;
};

static int on_packet(void *ctx, const struct prec_packet *p)
{
	struct collect *c = ctx;
	if (p->pkt->data_case != PERFREC__PACKET__DATA_SAMPLE)
		return 0;
	assert_true(c->nsamples < 5);
	c->cut[c->nsamples] = ana_resolve_cut(c->s, p);
	int n = ana_resolve_sample(c->s, p, c->fr[c->nsamples], 8);
	assert_true(n > 0);
	c->n[c->nsamples++] = n;
	return 0;
}

static void test_return_addresses(void **state)
{
	(void)state;
	void *buf;
	size_t len;
	write_trace(&buf, &len);
	struct ana_trace_opts so = { .jobs = 1, .symbols = 1, .mem = buf, .mem_len = len };
	struct collect c;
	memset(&c, 0, sizeof(c));
	assert_int_equal(ana_trace_open(&c.s, "mem", &so), 0);
	assert_int_equal(ana_trace_scan(c.s, "test", on_packet, &c), 0);
	assert_int_equal(c.nsamples, 5);

	/* sample 1: leaf callee_next (exact ip), caller from A_NEXT - 1 */
	assert_int_equal(c.n[0], 2);
	assert_string_equal(c.fr[0][0].sym, "callee_next");
	assert_string_equal(c.fr[0][1].sym, "caller");
	assert_true(c.fr[0][1].ip == A_NEXT);   /* the recorded address */
	assert_string_equal(c.fr[0][1].dso, "prog");
	assert_true(c.fr[0][1].dso_off == A_NEXT);   /* non-PIE: file vaddr */

	/* sample 2: k_leaf, k_entry (returns to K_NEXT), leaf, caller */
	assert_int_equal(c.n[1], 4);
	assert_string_equal(c.fr[1][0].sym, "k_leaf");
	assert_string_equal(c.fr[1][1].sym, "k_entry");
	assert_true(c.fr[1][1].ip == K_NEXT);
	assert_true(c.fr[1][1].kernel);
	assert_string_equal(c.fr[1][2].sym, "leaf");
	assert_false(c.fr[1][2].kernel);
	assert_string_equal(c.fr[1][3].sym, "caller");
	assert_true(c.fr[1][3].ip == A_NEXT);
	assert_int_equal(c.cut[0] + c.cut[1], 0);

	/* sample 3: leaf, caller, then one [truncated] for the 3 entries
	 * from the first unmapped one on */
	assert_int_equal(c.n[2], 3);
	assert_string_equal(c.fr[2][1].sym, "caller");
	assert_string_equal(c.fr[2][2].sym, "[truncated]");
	assert_null(c.fr[2][2].dso);
	assert_int_equal(c.cut[2], 3);
	/* sample 4: the repeated frame once, the 3 repeats cut */
	assert_int_equal(c.n[3], 3);
	assert_string_equal(c.fr[3][1].sym, "caller");
	assert_string_equal(c.fr[3][2].sym, "[truncated]");
	assert_int_equal(c.cut[3], 3);
	assert_true(c.s->cut.chains == 2 && c.s->cut.frames == 6);
	/* sample 5: k_leaf, then callee_next (the faulting pc, not looked
	 * up at pc - 1, which is caller's last byte), then caller */
	assert_int_equal(c.n[4], 3);
	assert_string_equal(c.fr[4][0].sym, "k_leaf");
	assert_string_equal(c.fr[4][1].sym, "callee_next");
	assert_true(c.fr[4][1].sym_off == 0);
	assert_string_equal(c.fr[4][2].sym, "caller");

	ana_trace_free(c.s);
	free(buf);
}

/* --no-cut: the chains as recorded, nothing counted */
static void test_no_cut(void **state)
{
	(void)state;
	void *buf;
	size_t len;
	write_trace(&buf, &len);
	struct ana_trace_opts so = { .jobs = 1, .symbols = 1, .mem = buf, .mem_len = len,
				     .no_cut = 1 };
	struct collect c;
	memset(&c, 0, sizeof(c));
	assert_int_equal(ana_trace_open(&c.s, "mem", &so), 0);
	assert_int_equal(ana_trace_scan(c.s, "test", on_packet, &c), 0);
	assert_int_equal(c.nsamples, 5);
	assert_int_equal(c.n[2], 5);   /* leaf + 4 callers */
	assert_null(c.fr[2][2].sym);
	assert_true(c.fr[2][2].ip == 0xffffffffull);
	assert_string_equal(c.fr[2][4].sym, "caller");
	assert_int_equal(c.n[3], 5);
	assert_string_equal(c.fr[3][4].sym, "caller");
	assert_int_equal(c.cut[2] + c.cut[3], 0);
	assert_true(c.s->cut.chains == 0 && c.s->cut.frames == 0);
	ana_trace_free(c.s);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_return_addresses),
		cmocka_unit_test(test_no_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
