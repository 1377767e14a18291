/*
 * test_demangle.c - names as perf shows them (analyzer/symbols/demangle.c,
 * demangle_rust.c, and their use in reports; the idle task as swapper).
 *
 * Oracles: `c++filt -i` (binutils' libiberty, what perf's demangling
 * derives from) for C++, legacy and v0 Rust names, including every Rust
 * symbol of programs compiled here with rustc in both manglings when rustc
 * is installed; rustc-demangle's documented output where libiberty 2.40
 * is known to print differently (consts wider than 64 bits, escaped char
 * consts, legacy escapes of non-ASCII characters). Then the bounds: long and deeply nested names, backrefs that
 * point forward or at themselves, outputs that double per backref level,
 * thousands of mutated names (ASan/UBSan watch). Last, a C++ program with a
 * namespaced template compiled here, sampled in a synthetic trace: report
 * and export show `outer::inner::twice<int>(int)`, --no-demangle the
 * mangled name; a sample of tid 0 is "swapper".
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyzer/symbols/demangle.h"
#include "format/base/elf.h"
#include "format/sink.h"
#include "format/writer.h"
#include "lib/anatest.h"
#include "unit/unwindprog.h"

static const char *dir;

struct dcase {
	const char *mangled, *want;
	int cxxfilt_differs;   /* libiberty prints otherwise (see top) */
};

static const struct dcase cases[] = {
	/* v0: paths, closures, shims, impls, generics */
	{ "_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar", 0 },
	{ "_RNCNvC7mycrate4main0", "mycrate::main::{closure#0}", 0 },
	{ "_RNCNvC7mycrate4mains_0", "mycrate::main::{closure#1}", 0 },
	{ "_RNSNvC7mycrate4main6vtable", "mycrate::main::{shim:vtable#0}", 0 },
	{ "_RNvMC7mycrateNtB2_3Foo3new", "<mycrate::Foo>::new", 0 },
	{ "_RNvXC7mycrateNtB2_3FooNtNtC4core3fmt7Display3fmt",
	  "<mycrate::Foo as core::fmt::Display>::fmt", 0 },
	{ "_RNvYhNtC4core5Clone5clone", "<u8 as core::Clone>::clone", 0 },
	{ "_RINvC7mycrate3fooTlmEReE", "mycrate::foo::<(i32, u32), &str>", 0 },
	/* types: dyn with a binder and an associated type, fn pointers */
	{ "_RINvC1a1fDG_INtC4core2FnTRL0_hEEp6OutputuEL_E",
	  "a::f::<dyn for<'a> core::Fn<(&'a u8,), Output = ()>>", 0 },
	{ "_RINvC1a1fDNtC1a5TraitEL_E", "a::f::<dyn a::Trait>", 0 },
	{ "_RINvC1a1fFUKCjEuE", "a::f::<unsafe extern \"C\" fn(usize)>", 0 },
	{ "_RINvC1a1fFK7stdcallEmE", "a::f::<extern \"stdcall\" fn() -> u32>", 0 },
	{ "_RINvC1a1fFK8C_unwindEuE", "a::f::<extern \"C-unwind\" fn()>", 0 },
	{ "_RINvC1a1fFG0_RL1_hRL0_tEuE", "a::f::<for<'a, 'b> fn(&'a u8, &'b u16)>", 0 },
	{ "_RINvC1a1fAhj4_E", "a::f::<[u8; 4]>", 0 },
	{ "_RINvC1a1fPhOtQhE", "a::f::<*const u8, *mut u16, &mut u8>", 0 },
	{ "_RINvC1a1fThEE", "a::f::<(u8,)>", 0 },
	{ "_RINvC1a1fzuE", "a::f::<!, ()>", 0 },
	{ "_RINvC1a1fRL_hE", "a::f::<&u8>", 0 },
	/* consts */
	{ "_RINvC1a1fKanb_Kb1_Kc41_E", "a::f::<-11, true, 'A'>", 0 },
	{ "_RINvC1a1fKo123456789abcdef0123_E", "a::f::<0x123456789abcdef0123>", 1 },
	{ "_RINvC1a1fKc27_Kc5c_Ka0_E", "a::f::<'\\'', '\\\\', 0>", 1 },
	/* punycode (from rustc: mod ünïcödé { fn fünc }), suffixes */
	{ "_RNvNtCs6GmmlP4bgsG_1ru13ncd_dma1a7bzbu7fnc_hoa",
	  "r::\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9::f\xc3\xbcnc", 0 },
	{ "_RNvC7mycrate3foo.llvm.1234", "mycrate::foo", 0 },
	/* legacy Rust */
	{ "_ZN4core3fmt9Arguments6new_v117h0123456789abcdefE", "core::fmt::Arguments::new_v1", 0 },
	{ "_ZN3foo17h0123456789abcdefE.llvm.AB12", "foo", 0 },
	{ "_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$"
	  "closure$u7d$$u7d$$GT$17h0123456789abcdefE",
	  "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>", 0 },
	{ "_ZN70_$LT$alloc..vec..Vec$LT$T$C$A$GT$$u20$as$u20$core..ops..drop..Drop$GT$4drop"
	  "17h0123456789abcdefE",
	  "<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop", 0 },
	/* C++ */
	{ "_ZN5outer5inner5twiceIiEET_S2_", "int outer::inner::twice<int>(int)", 0 },
	{ "_ZNKSt6vectorIiSaIiEE4sizeEv", "std::vector<int, std::allocator<int> >::size() const", 0 },
	{ "_Z3fooPFviE", "foo(void (*)(int))", 0 },
	/* not demangled: C names, bad manglings */
	{ "main", NULL, 0 },
	{ "_start", NULL, 0 },
	{ "_RINvC1a1fAhKj5_E", NULL, 0 },
	{ "_RNvMs0_C1aNtB4_1S1m", NULL, 0 },
	{ "_ZN3foo17h0123456789abcdefE.cold", NULL, 1 },
	{ "_R", NULL, 0 },
	{ "_RNvC", NULL, 0 },
	{ "_ZN", NULL, 0 },
};

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = ana_demangle(cases[i].mangled);
		if (!ana_demangle_have_cxx() && !strncmp(cases[i].mangled, "_Z", 2) &&
		    (!d || strcmp(d, cases[i].want ? cases[i].want : "")))
			continue;   /* C++ needs the runtime's demangler */
		if (cases[i].want == NULL) {
			if (d && strncmp(cases[i].mangled, "_Z", 2))
				fail_msg("%s: got %s, want none", cases[i].mangled, d);
		} else if (!d || strcmp(d, cases[i].want)) {
			fail_msg("%s: got %s, want %s", cases[i].mangled, d ? d : "(none)",
				 cases[i].want);
		}
		free(d);
	}
	assert_true(ana_demangle_have_cxx());   /* Linux: libstdc++ */
}

/* Our output against `c++filt -i` for every name of a file (one per
 * line). Returns the count compared; mismatches fail. */
static size_t against_cxxfilt(const char *names_path)
{
	char cmd[700], *ref, *names, *save1 = NULL, *save2 = NULL, *a, *b;
	size_t n = 0;

	snprintf(cmd, sizeof(cmd), "c++filt -i < '%s' > '%s.ref'", names_path, names_path);
	assert_int_equal(unwindprog_sh("%s", cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s.ref", names_path);
	ref = anatest_read(cmd, NULL);
	names = anatest_read(names_path, NULL);
	assert_non_null(ref);
	assert_non_null(names);
	for (a = strtok_r(names, "\n", &save1), b = strtok_r(ref, "\n", &save2); a && b;
	     a = strtok_r(NULL, "\n", &save1), b = strtok_r(NULL, "\n", &save2)) {
		char *d = ana_demangle(a);
		/* libiberty leaves legacy escapes of non-ASCII characters
		 * ("$ufc$") as they are; rustc-demangle (and we) decode them */
		if (strstr(b, "$u") && d && !strchr(d, '$')) {
			free(d);
			continue;
		}
		if (strcmp(d ? d : a, b))
			fail_msg("%s: ours %s, c++filt %s", a, d ? d : a, b);
		free(d);
		n++;
	}
	free(ref);
	free(names);
	return n;
}

static const char rust_src[] =
	"use std::collections::HashMap;\n"
	"use std::fmt::Debug;\n"
	"trait Shape { fn area(&self) -> f64; }\n"
	"struct Sq<T>(T);\n"
	"impl<T: Into<f64> + Copy> Shape for Sq<T> { fn area(&self) -> f64 { let v: f64 = self.0.into(); v * v } }\n"
	"fn apply<F: Fn(i32) -> i32>(f: F, x: i32) -> i32 { f(x) }\n"
	"fn dynsum(v: &[Box<dyn Shape + Send>]) -> f64 { v.iter().map(|s| s.area()).sum() }\n"
	"fn arr<const N: usize>(a: [u8; N]) -> usize { a.len() + N }\n"
	"fn fptr(f: for<'a> fn(&'a str) -> &'a str, s: &str) -> usize { f(s).len() }\n"
	"fn id(s: &str) -> &str { s }\n"
	"fn dbg<T: Debug>(t: &T) -> String { format!(\"{:?}\", t) }\n"
	"mod \xc3\xbcn\xc3\xaf { pub fn f\xc3\xbcnc(x: u32) -> u32 { x.wrapping_mul(3) } }\n"
	"fn main() {\n"
	"  let mut m: HashMap<String, Vec<(u8, char)>> = HashMap::new();\n"
	"  m.insert(\"a\".into(), vec![(1, 'x')]);\n"
	"  let v: Vec<Box<dyn Shape + Send>> = vec![Box::new(Sq(2u8)), Box::new(Sq(3.0f32))];\n"
	"  let c = 5;\n"
	"  println!(\"{} {} {} {} {} {}\", apply(|x| x + c, 3), dynsum(&v), arr([1u8; 4]),\n"
	"           fptr(id, \"hey\"), dbg(&m), \xc3\xbcn\xc3\xaf::f\xc3\xbcnc(4));\n"
	"}\n";

static void test_vs_cxxfilt(void **state)
{
	char p[600];
	FILE *f;
	size_t n = 0;

	(void)state;
	if (unwindprog_sh("command -v c++filt >/dev/null 2>&1"))
		skip();
	snprintf(p, sizeof(p), "%s/cases.txt", dir);
	f = fopen(p, "w");
	assert_non_null(f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!cases[i].cxxfilt_differs)
			fprintf(f, "%s\n", cases[i].mangled);
	fclose(f);
	n = against_cxxfilt(p);
	print_message("hand-written names: %zu agree with c++filt -i\n", n);
	/* every Rust symbol of a real program, both manglings */
	if (unwindprog_sh("command -v rustc >/dev/null 2>&1")) {
		print_message("no rustc: Rust binaries not compared\n");
		return;
	}
	snprintf(p, sizeof(p), "%s/r.rs", dir);
	assert_int_equal(unwindprog_write(p, rust_src), 0);
	for (int v0 = 0; v0 < 2; v0++) {
		if (unwindprog_sh("cd %s && rustc -C opt-level=0 %s r.rs -o r%d 2>/dev/null && "
				  "nm r%d | awk '{print $NF}' | grep -E '^_R|^_ZN' | sort -u > r%d.txt",
				  dir, v0 ? "-C symbol-mangling-version=v0" : "", v0, v0, v0))
			fail_msg("rustc could not build the test program");
		snprintf(p, sizeof(p), "%s/r%d.txt", dir, v0);
		n = against_cxxfilt(p);
		print_message("rustc (%s mangling): %zu symbols agree with c++filt -i\n",
			      v0 ? "v0" : "default", n);
		assert_true(n > 100);
	}
}

static void test_bounds(void **state)
{
	char *big = malloc(ANA_DEMANGLE_RUST_MAX + 64), *d;
	size_t n;

	(void)state;
	assert_non_null(big);
	/* deep nesting: N...N 200 levels */
	strcpy(big, "_R");
	n = 2;
	for (int i = 0; i < 200; i++)
		big[n++] = 'N', big[n++] = 'v';
	strcpy(big + n, "C1a");
	n += 3;
	for (int i = 0; i < 200; i++)
		big[n++] = '1', big[n++] = 'b';
	big[n] = 0;
	assert_null(ana_demangle(big));
	/* the same 100 deep reads */
	strcpy(big, "_R");
	n = 2;
	for (int i = 0; i < 60; i++)
		big[n++] = 'N', big[n++] = 'v';
	strcpy(big + n, "C1a");
	n += 3;
	for (int i = 0; i < 60; i++)
		big[n++] = '1', big[n++] = 'b';
	big[n] = 0;
	d = ana_demangle(big);
	assert_non_null(d);
	free(d);
	/* backrefs: to itself, forward, and doubling the output per level
	 * (a tuple of the previous type twice): stops at the output bound */
	assert_null(ana_demangle("_RINvC1a1fB7_E"));
	assert_null(ana_demangle("_RINvC1a1fB9_E"));
	/* args of a generic: "ThhE" at position 8 (after "_R"), then each
	 * next one "T B<previous> B<previous> E": the printed size doubles
	 * per level; once in print, once hidden inside an impl path (M) */
	for (int hidden = 0; hidden < 2; hidden++) {
		static const char b62[] = "0123456789abcdefghijklmnopqrstuvwxyz"
					  "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
		size_t prev = 8;
		strcpy(big, hidden ? "_RNvMINvC1a1fThhE" : "_RINvC1a1fThhE");
		if (hidden)
			prev = 9;
		n = strlen(big);
		for (int k = 1; k < 60; k++) {
			char ref[16], tmp[16];
			size_t x = prev - 1, r = 0;
			size_t here = n - 2;
			do {
				tmp[r++] = b62[x % 62];
				x /= 62;
			} while (x);
			for (size_t q = 0; q < r; q++)
				ref[q] = tmp[r - 1 - q];
			ref[r] = 0;
			n += (size_t)sprintf(big + n, "TB%s_B%s_E", ref, ref);
			prev = here;
		}
		strcpy(big + n, hidden ? "EhC1a1g" : "E");
		assert_null(ana_demangle(big));   /* 2^59 leaves: refused, and fast */
	}
	/* longer than the bounds */
	memset(big, 'a', ANA_DEMANGLE_RUST_MAX + 10);
	memcpy(big, "_RNvC", 5);
	big[ANA_DEMANGLE_RUST_MAX + 10] = 0;
	assert_null(ana_demangle(big));
	memcpy(big, "_ZN3foo", 7);
	assert_null(ana_demangle(big));
	free(big);
	/* mutations of every valid case: anything but a crash */
	srand(3);
	for (int it = 0; it < 30000; it++) {
		const char *m = cases[(size_t)rand() % (sizeof(cases) / sizeof(cases[0]))].mangled;
		char buf[512];
		size_t len = strlen(m);
		memcpy(buf, m, len + 1);
		for (int k = 0; k < 1 + rand() % 3; k++) {
			size_t at = (size_t)rand() % (len ? len : 1);
			buf[at] = (char)(rand() % 3 ? "0123456789_ABEGIKLNRSTBCXYMpuvhjs"[rand() % 33] :
					 (char)(1 + rand() % 255));
		}
		if (rand() % 4 == 0)
			buf[(size_t)rand() % (len + 1)] = 0;
		d = ana_demangle(buf);
		if (d)
			assert_true(strlen(d) < ANA_DEMANGLE_RUST_OUT_MAX || buf[1] == 'Z');
		free(d);
	}
}

/* ---- in reports */

#define PID 777

static void put(struct prec_writer *w, Perfrec__Packet *pkt, uint64_t t)
{
	assert_int_equal(prec_writer_append(w, 0, pkt, t), 0);
}

static void write_cxx_trace(const char *bin, const char *out, uint64_t *a_int,
			    uint64_t *a_dbl)
{
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	Perfrec__Packet pkt = PERFREC__PACKET__INIT;
	size_t len = 0;
	uint8_t *buf = unwindprog_slurp(bin, &len);
	struct prec_elf e;
	uint64_t t = 1000000000ull, *st, *sz, *nm, lo[8], lv[8], ls[8], prev = 0;

	assert_non_null(w);
	assert_non_null(buf);
	assert_int_equal(prec_elf_parse(buf, len, &e), 0);
	st = calloc(e.nsyms + 1, 8);
	sz = calloc(e.nsyms + 1, 8);
	nm = calloc(e.nsyms + 1, 8);
	*a_int = *a_dbl = 0;
	for (size_t i = 0; i < e.nsyms; i++) {
		st[i] = e.syms[i].start - prev;
		prev = e.syms[i].start;
		sz[i] = e.syms[i].size;
		nm[i] = prec_writer_intern_string(w, 0, e.syms[i].name);
		if (!strcmp(e.syms[i].name, "_ZN5outer5inner5twiceIiEET_S2_"))
			*a_int = e.syms[i].start;
		if (!strcmp(e.syms[i].name, "_ZN5outer5inner5twiceIdEET_S2_"))
			*a_dbl = e.syms[i].start;
	}
	assert_true(*a_int && *a_dbl);
	assert_true(e.nsegs <= 8);
	for (size_t i = 0; i < e.nsegs; i++) {
		lo[i] = e.segs[i].offset;
		lv[i] = e.segs[i].vaddr;
		ls[i] = e.segs[i].filesz;
	}
	{
		Perfrec__EventDesc ev = PERFREC__EVENT_DESC__INIT;
		uint64_t ids[1] = { 1 };
		ev.name = "cpu-clock";
		ev.sampling = 1;
		ev.n_ids = 1;
		ev.ids = ids;
		pkt.data_case = PERFREC__PACKET__DATA_EVENT;
		pkt.event = &ev;
		put(w, &pkt, 0);
	}
	{
		Perfrec__SymbolTable s = PERFREC__SYMBOL_TABLE__INIT;
		s.kind = PERFREC__SYMBOL_TABLE__KIND__ELF;
		s.path = "/opt/app/cxx";
		s.n_starts = s.n_sizes = s.n_names = e.nsyms;
		s.starts = st;
		s.sizes = sz;
		s.names = nm;
		s.load_bias = e.load_bias;
		s.n_load_offsets = s.n_load_vaddrs = s.n_load_sizes = e.nsegs;
		s.load_offsets = lo;
		s.load_vaddrs = lv;
		s.load_sizes = ls;
		pkt.data_case = PERFREC__PACKET__DATA_SYMBOLS;
		pkt.symbols = &s;
		put(w, &pkt, 0);
	}
	{
		static const uint64_t ks[1] = { 0xffffffff81000000ull }, kz[1] = { 0x100 };
		uint64_t kn[1] = { prec_writer_intern_string(w, 0, "default_idle") };
		Perfrec__SymbolTable s = PERFREC__SYMBOL_TABLE__INIT;
		s.kind = PERFREC__SYMBOL_TABLE__KIND__KERNEL;
		s.n_starts = s.n_sizes = s.n_names = 1;
		s.starts = (uint64_t *)ks;
		s.sizes = (uint64_t *)kz;
		s.names = kn;
		pkt.data_case = PERFREC__PACKET__DATA_SYMBOLS;
		pkt.symbols = &s;
		put(w, &pkt, 0);
	}
	{
		/* the PIE mapped at 0x555555554000, from file offset 0 */
		Perfrec__Mmap m = PERFREC__MMAP__INIT;
		Perfrec__TaskEvent te = PERFREC__TASK_EVENT__INIT;
		m.pid = m.tid = PID;
		m.start = 0x555555554000ull;
		m.len = 0x10000;
		m.prot = 5;
		m.filename = prec_writer_intern_string(w, 0, "/opt/app/cxx");
		pkt.data_case = PERFREC__PACKET__DATA_MMAP;
		pkt.mmap = &m;
		put(w, &pkt, t);
		te.kind = PERFREC__TASK_EVENT__KIND__EXISTING;
		te.pid = te.tid = PID;
		te.comm = prec_writer_intern_string(w, 0, "cxx");
		pkt.data_case = PERFREC__PACKET__DATA_TASK;
		pkt.task = &te;
		put(w, &pkt, t);
	}
	/* 3 samples in twice<int>, 1 in twice<double>, 2 in the idle task */
	for (int i = 0; i < 6; i++) {
		Perfrec__Sample s = PERFREC__SAMPLE__INIT;
		s.id = 1;
		s.period = 1;
		if (i < 4) {
			s.pid = s.tid = PID;
			s.misc = 2;
			s.ip = 0x555555554000ull + (i < 3 ? *a_int : *a_dbl) - e.load_bias + 2;
		} else {
			s.misc = 1;
			s.ip = 0xffffffff81000010ull;
		}
		pkt.data_case = PERFREC__PACKET__DATA_SAMPLE;
		pkt.sample = &s;
		t += 1000000;
		put(w, &pkt, t);
	}
	assert_int_equal(prec_writer_close(w), 0);
	{
		size_t n;
		const void *d = prec_sink_mem_data(sink, &n);
		assert_int_equal(anatest_write(out, d, n), 0);
	}
	prec_writer_free(w);
	prec_sink_free(sink);
	free(st);
	free(sz);
	free(nm);
	prec_elf_release(&e);
	free(buf);
}

static void test_report_names(void **state)
{
	char bin[600], trace[600], *out = NULL;
	uint64_t a_int, a_dbl;

	(void)state;
	snprintf(bin, sizeof(bin), "%s/cxx", dir);
	snprintf(trace, sizeof(trace), "%s/cxx.prec", dir);
	write_cxx_trace(bin, trace, &a_int, &a_dbl);

	assert_int_equal(anatest_run(dir, "report cxx.prec --no-progress", &out, NULL, NULL), 0);
	print_message("%s", out);
	assert_non_null(strstr(out, "int outer::inner::twice<int>(int)"));
	assert_non_null(strstr(out, "double outer::inner::twice<double>(double)"));
	assert_null(strstr(out, "_ZN5outer"));
	/* the idle task, as perf names it */
	assert_non_null(strstr(out, "swapper"));
	assert_non_null(strstr(out, "default_idle"));
	free(out);

	assert_int_equal(anatest_run(dir, "report cxx.prec --no-demangle --no-progress", &out,
				     NULL, NULL), 0);
	assert_non_null(strstr(out, "_ZN5outer5inner5twiceIiEET_S2_"));
	assert_null(strstr(out, "outer::inner"));
	free(out);

	assert_int_equal(anatest_run(dir, "export cxx.prec -f folded --no-progress", &out, NULL,
				     NULL), 0);
	print_message("%s", out);
	assert_non_null(strstr(out, "cxx;int outer::inner::twice<int>(int) 3\n"));
	assert_non_null(strstr(out, "swapper;default_idle 2\n"));
	free(out);
	assert_int_equal(anatest_run(dir, "report cxx.prec --comm swapper --no-progress", &out,
				     NULL, NULL), 0);
	assert_non_null(strstr(out, "default_idle"));
	assert_null(strstr(out, "twice"));
	free(out);
}

static int setup(void **state)
{
	(void)state;
	dir = anatest_tmpdir("test_demangle");
	if (!dir)
		return -1;
	return unwindprog_build(dir, "prog.cc", unwindprog_cxx_src, "c++ -O2 prog.cc -o cxx");
}

static int teardown(void **state)
{
	(void)state;
	unwindprog_sh("rm -rf %s", dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_vs_cxxfilt),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_report_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
