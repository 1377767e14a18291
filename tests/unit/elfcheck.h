/*
 * elfcheck.h - the checks the ELF reader (format/base/elf.h, run by
 * tests/unit/format/base/test_elf.c) must pass, against oracles that are
 * not our own code.
 *
 * The oracle is binutils: nm gives symbol addresses and sizes, readelf the
 * build-id, addr2line turns the vaddr we compute from a live process's ip +
 * /proc/self/maps back into the function's name. Programs are compiled at
 * test time (setup): non-PIE, PIE (GNU ld), PIE linked by lld (segments
 * with different vaddr - offset), a shared object and its stripped copy
 * (.dynsym only), a binary without build-id; the tests also read truncated
 * and bit-flipped copies and the synthetic images of elfimage.h.
 *
 * How to use: the test file names the reader's functions before including
 * (kept as names, so a second implementation, should one ever be needed,
 * is held to the same checks):
 *
 *   #define ELFCHECK_TAG     "test_elf"            // scratch dir prefix
 *   #define ELFCHECK_ELF     struct prec_elf
 *   #define ELFCHECK_SYM     struct prec_elf_sym
 *   #define ELFCHECK_LOAD    prec_elf_load         // (path, ELF *) -> 0/-errno
 *   #define ELFCHECK_PARSE   prec_elf_parse        // (buf, len, ELF *)
 *   #define ELFCHECK_RELEASE prec_elf_release
 *   #define ELFCHECK_FIND    prec_elf_find         // (ELF *, vaddr) -> SYM *
 *   #define ELFCHECK_VADDR   prec_elf_vaddr        // (ELF *, file off)
 *   #include "unit/elfcheck.h"
 *
 * and runs ELFCHECK_TESTS (plus its own) with setup/teardown as the group
 * fixtures. Header only (static functions) because tests are single files.
 */
#ifndef TESTS_ELFCHECK_H
#define TESTS_ELFCHECK_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "unit/elfimage.h"

#if !defined(ELFCHECK_TAG) || !defined(ELFCHECK_ELF) || \
    !defined(ELFCHECK_SYM) || !defined(ELFCHECK_LOAD) || \
    !defined(ELFCHECK_PARSE) || !defined(ELFCHECK_RELEASE) || \
    !defined(ELFCHECK_FIND) || !defined(ELFCHECK_VADDR)
#error "define the ELFCHECK_* names of the reader before including elfcheck.h"
#endif

static char dir[256];
static int have_lld;

static const char prog_src[] =
	"#include <stdio.h>\n"
	"#include <string.h>\n"
	"__attribute__((noinline)) int alpha_func(int x)\n"
	"{ volatile int s = 0; for (int i = 0; i < x; i++) s += i * x; return s; }\n"
	"__attribute__((noinline)) int beta_func(int x)\n"
	"{ return alpha_func(x) + 3; }\n"
	"__attribute__((noinline)) static int gamma_local(int x)\n"
	"{ volatile int y = x; return y * 7 + beta_func(x); }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"  char line[512]; FILE *f = fopen(\"/proc/self/maps\", \"r\");\n"
	"  printf(\"ALPHA %lx\\n\", (unsigned long)(void *)&alpha_func);\n"
	"  while (f && fgets(line, sizeof(line), f)) fputs(line, stdout);\n"
	"  (void)argv; return gamma_local(argc) == 12345;\n"
	"}\n";

static const char lib_src[] =
	"__attribute__((noinline)) static int lib_hidden(int x) { return x * 5; }\n"
	"int lib_exported_a(int x) { return lib_hidden(x) + 1; }\n"
	"int lib_exported_b(int x) { return lib_exported_a(x) * 2; }\n";

static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* Runs a shell command and returns its stdout (malloc'd). */
static char *capture(const char *fmt, ...)
{
	char cmd[2048];
	size_t len = 0, cap = 4096;
	char *out = malloc(cap);
	va_list ap;
	FILE *p;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_non_null(out);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(out + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			out = realloc(out, cap);
			assert_non_null(out);
		}
	}
	out[len] = 0;
	pclose(p);
	return out;
}

static void path_of(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

/* nm -S: address and size of a symbol; 0 if absent. */
static int nm_lookup(const char *file, const char *sym, uint64_t *addr,
		     uint64_t *size)
{
	char *out = capture("nm -S --defined-only %s/%s", dir, file);
	char *line = strtok(out, "\n");
	int found = 0;

	while (line) {
		unsigned long long a, s;
		char t, name[256];

		if (sscanf(line, "%llx %llx %c %255s", &a, &s, &t, name) == 4 &&
		    strcmp(name, sym) == 0) {
			*addr = a;
			*size = s;
			found = 1;
			break;
		}
		line = strtok(NULL, "\n");
	}
	free(out);
	return found;
}

static const ELFCHECK_SYM *by_name(const ELFCHECK_ELF *e,
					    const char *name)
{
	for (size_t i = 0; i < e->nsyms; i++)
		if (strcmp(e->syms[i].name, name) == 0)
			return &e->syms[i];
	return NULL;
}

static int setup(void **state)
{
	char src[300], cmd_ok;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/%s.XXXXXX", ELFCHECK_TAG);
	if (!mkdtemp(dir))
		return -1;
	snprintf(src, sizeof(src), "%s/prog.c", dir);
	FILE *f = fopen(src, "w");
	if (!f)
		return -1;
	fputs(prog_src, f);
	fclose(f);
	snprintf(src, sizeof(src), "%s/lib.c", dir);
	f = fopen(src, "w");
	if (!f)
		return -1;
	fputs(lib_src, f);
	fclose(f);
	cmd_ok = sh("cd %s && cc -O1 -g -fno-pie -no-pie prog.c -o nopie && "
		    "cc -O1 -g -fPIE -pie prog.c -o pie && "
		    "cc -O1 -g -fPIE -pie -Wl,--build-id=none prog.c -o nobid && "
		    "cc -O1 -g -shared -fPIC lib.c -o libsym.so && "
		    "strip -o libsym_stripped.so libsym.so", dir) == 0;
	if (!cmd_ok)
		return -1;
	have_lld = sh("cd %s && cc -O1 -g -fPIE -pie -fuse-ld=lld prog.c "
		      "-o pie_lld 2>/dev/null", dir) == 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf %s", dir);
	return 0;
}

/* Every function nm knows of, at nm's address and size. */
static void check_against_nm(const char *file)
{
	static const char *const names[] = { "alpha_func", "beta_func",
					     "gamma_local", "main" };
	ELFCHECK_ELF e;
	char p[512];

	path_of(p, sizeof(p), file);
	assert_int_equal(ELFCHECK_LOAD(p, &e), 0);
	assert_false(e.from_dynsym);
	assert_true(e.nsyms >= 4);
	for (size_t i = 0; i < 4; i++) {
		const ELFCHECK_SYM *s = by_name(&e, names[i]);
		uint64_t a, sz;

		assert_true(nm_lookup(file, names[i], &a, &sz));
		assert_non_null(s);
		assert_int_equal(s->start, a);
		assert_int_equal(s->size, sz);
		/* lookups inside and just past the symbol */
		assert_ptr_equal(ELFCHECK_FIND(&e, a), s);
		assert_ptr_equal(ELFCHECK_FIND(&e, a + sz - 1), s);
		assert_ptr_not_equal(ELFCHECK_FIND(&e, a + sz), s);
	}
	/* sorted, one entry per start */
	for (size_t i = 1; i < e.nsyms; i++)
		assert_true(e.syms[i - 1].start < e.syms[i].start);
	/* _init has no size: it gets its section's end, not the PLT after */
	{
		const ELFCHECK_SYM *s = by_name(&e, "_init");
		char *out = capture("objdump -h %s/%s | awk '$2==\".init\"{print $3}'",
				    dir, file);
		unsigned long long init_size = 0;

		assert_int_equal(sscanf(out, "%llx", &init_size), 1);
		free(out);
		assert_non_null(s);
		assert_int_equal(s->size, init_size);
	}
	ELFCHECK_RELEASE(&e);
}

static void test_nm_nopie(void **state)
{
	(void)state;
	check_against_nm("nopie");
}

static void test_nm_pie(void **state)
{
	(void)state;
	check_against_nm("pie");
	if (have_lld)
		check_against_nm("pie_lld");
}

/* Runs the program, takes alpha_func's runtime address and the mapping
 * holding it from its own /proc/self/maps, and checks the documented math
 * gives nm's address and addr2line's function name. */
static void check_runtime_math(const char *file, int pie)
{
	char p[512], *out, *line, *save = NULL;
	unsigned long ip = 0;
	uint64_t nm_addr, nm_size, vaddr = 0;
	ELFCHECK_ELF e;
	int found = 0;

	path_of(p, sizeof(p), file);
	assert_int_equal(ELFCHECK_LOAD(p, &e), 0);
	assert_int_equal(e.is_dyn, pie);
	out = capture("%s", p);
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long lo, hi, off;
		char perms[8], path[400] = "";

		if (sscanf(line, "ALPHA %lx", &ip) == 1)
			continue;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %399s", &lo, &hi,
			   perms, &off, path) != 5)
			continue;
		if (ip < lo || ip >= hi)
			continue;
		assert_string_equal(path, p);
		vaddr = ELFCHECK_VADDR(&e, ip - lo + off);
		found = 1;
	}
	free(out);
	assert_true(found);
	assert_true(nm_lookup(file, "alpha_func", &nm_addr, &nm_size));
	assert_int_equal(vaddr, nm_addr);
	if (!pie)
		assert_int_equal(vaddr, ip);   /* non-PIE: runtime == link */
	else
		assert_true(vaddr != ip);
	assert_string_equal(ELFCHECK_FIND(&e, vaddr + 1)->name, "alpha_func");
	out = capture("addr2line -f -e %s 0x%llx", p,
		      (unsigned long long)vaddr + 1);
	assert_true(strncmp(out, "alpha_func\n", 11) == 0);
	free(out);
	ELFCHECK_RELEASE(&e);
}

static void test_runtime_math_nopie(void **state)
{
	ELFCHECK_ELF e;
	char p[512];

	(void)state;
	check_runtime_math("nopie", 0);
	path_of(p, sizeof(p), "nopie");
	assert_int_equal(ELFCHECK_LOAD(p, &e), 0);
	assert_int_equal(e.load_bias, 0x400000);
	ELFCHECK_RELEASE(&e);
}

static void test_runtime_math_pie(void **state)
{
	(void)state;
	check_runtime_math("pie", 1);
}

/* lld places segments with different vaddr - offset: only the
 * per-segment rule gets the right address for code. */
static void test_runtime_math_lld(void **state)
{
	ELFCHECK_ELF e;
	char p[512];
	int differs = 0;

	(void)state;
	if (!have_lld)
		skip();
	check_runtime_math("pie_lld", 1);
	path_of(p, sizeof(p), "pie_lld");
	assert_int_equal(ELFCHECK_LOAD(p, &e), 0);
	for (size_t i = 0; i < e.nsegs; i++)
		differs |= e.segs[i].vaddr - e.segs[i].offset != e.load_bias;
	assert_true(differs);
	ELFCHECK_RELEASE(&e);
}

static void test_stripped_dynsym(void **state)
{
	ELFCHECK_ELF full, str;
	char p[512];

	(void)state;
	path_of(p, sizeof(p), "libsym.so");
	assert_int_equal(ELFCHECK_LOAD(p, &full), 0);
	path_of(p, sizeof(p), "libsym_stripped.so");
	assert_int_equal(ELFCHECK_LOAD(p, &str), 0);
	assert_false(full.from_dynsym);
	assert_true(str.from_dynsym);
	assert_non_null(by_name(&full, "lib_hidden"));
	assert_null(by_name(&str, "lib_hidden"));   /* local: gone */
	for (int i = 0; i < 2; i++) {
		const char *n = i ? "lib_exported_b" : "lib_exported_a";
		const ELFCHECK_SYM *a = by_name(&full, n);
		const ELFCHECK_SYM *b = by_name(&str, n);

		assert_non_null(a);
		assert_non_null(b);
		assert_int_equal(a->start, b->start);
		assert_int_equal(a->size, b->size);
	}
	/* strip keeps the build-id note */
	assert_int_equal(full.build_id_len, 20);
	assert_memory_equal(full.build_id, str.build_id, 20);
	ELFCHECK_RELEASE(&full);
	ELFCHECK_RELEASE(&str);
}

static void test_build_id(void **state)
{
	char p[512], *out, *at, hex[130] = "";
	ELFCHECK_ELF e;

	(void)state;
	path_of(p, sizeof(p), "pie");
	out = capture("readelf -n %s", p);
	at = strstr(out, "Build ID: ");
	assert_non_null(at);
	sscanf(at + 10, "%128s", hex);
	free(out);
	assert_int_equal(ELFCHECK_LOAD(p, &e), 0);
	assert_int_equal(e.build_id_len * 2, strlen(hex));
	for (size_t i = 0; i < e.build_id_len; i++) {
		char b[3];

		snprintf(b, sizeof(b), "%02x", e.build_id[i]);
		assert_memory_equal(b, hex + 2 * i, 2);
	}
	ELFCHECK_RELEASE(&e);

	path_of(p, sizeof(p), "nobid");
	assert_int_equal(ELFCHECK_LOAD(p, &e), 0);
	assert_int_equal(e.build_id_len, 0);
	assert_non_null(by_name(&e, "alpha_func"));
	ELFCHECK_RELEASE(&e);
}

static uint8_t *slurp(const char *name, size_t *len)
{
	char p[512];
	struct stat st;
	uint8_t *b;
	FILE *f;

	path_of(p, sizeof(p), name);
	assert_int_equal(stat(p, &st), 0);
	b = malloc((size_t)st.st_size);
	assert_non_null(b);
	f = fopen(p, "rb");
	assert_non_null(f);
	assert_int_equal(fread(b, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	*len = (size_t)st.st_size;
	return b;
}

static void test_corrupt(void **state)
{
	size_t len = 0, cuts[8];
	uint8_t *b = slurp("pie", &len), *c;
	ELFCHECK_ELF e;

	(void)state;
	/* the whole file reads */
	assert_int_equal(ELFCHECK_PARSE(b, len, &e), 0);
	assert_non_null(by_name(&e, "alpha_func"));
	ELFCHECK_RELEASE(&e);
	/* truncated anywhere: an error (section headers sit at the end) */
	cuts[0] = 4; cuts[1] = 16; cuts[2] = 63; cuts[3] = 64;
	cuts[4] = 1000; cuts[5] = len / 2; cuts[6] = len - 64; cuts[7] = len - 1;
	for (int i = 0; i < 8; i++) {
		int r = ELFCHECK_PARSE(b, cuts[i], &e);

		if (r >= 0)
			print_error("cut at %zu of %zu read\n", cuts[i], len);
		assert_true(r < 0);
		assert_null(e.syms);
	}
	/* not ELF */
	assert_int_equal(ELFCHECK_PARSE("hello world, not an elf", 23, &e),
			 -EINVAL);
	assert_true(ELFCHECK_LOAD("/nonexistent/file", &e) == -ENOENT);
	{
		/* a FIFO where a binary was: refused at once, never a hang */
		char fifo[300];

		path_of(fifo, sizeof(fifo), "fifo");
		assert_int_equal(mkfifo(fifo, 0600), 0);
		assert_int_equal(ELFCHECK_LOAD(fifo, &e), -EINVAL);
		unlink(fifo);
	}
	/* random byte flips: anything but a crash (ASan/UBSan watch) */
	c = malloc(len);
	assert_non_null(c);
	srand(1234);
	for (int it = 0; it < 300; it++) {
		memcpy(c, b, len);
		for (int k = 0; k < 8; k++) {
			/* headers, tables and the end of the file are where
			 * the structure lives */
			size_t at = (it & 1) ? (size_t)rand() % 128 :
				    len - 1 - (size_t)rand() % (len < 4096 ? len : 4096);

			c[at] = (uint8_t)rand();
		}
		if (ELFCHECK_PARSE(c, len, &e) == 0)
			ELFCHECK_RELEASE(&e);
	}
	free(c);
	free(b);
}

static void test_synthetic_images(void **state)
{
	(void)state;
	for (int v = 0; v < 4; v++) {
		size_t len = 0;
		uint8_t *b = elfimg_build(v < 2, v & 1, &len);
		ELFCHECK_ELF e;

		assert_non_null(b);
		assert_int_equal(ELFCHECK_PARSE(b, len, &e), 0);
		/* alpha (alias __alpha collapsed), beta, gamma_if */
		assert_int_equal(e.nsyms, 3);
		assert_string_equal(e.syms[0].name, "alpha");
		assert_int_equal(e.syms[0].start, ELFIMG_VADDR + 0x100);
		assert_int_equal(e.syms[0].size, 0x20);
		assert_string_equal(e.syms[1].name, "beta");
		assert_int_equal(e.syms[1].size, 0x10);
		assert_string_equal(e.syms[2].name, "gamma_if");
		assert_int_equal(e.syms[2].size, 0);   /* last: stays 0 */
		assert_int_equal(e.nsegs, 1);
		assert_int_equal(e.segs[0].offset, ELFIMG_LOAD_OFF);
		assert_int_equal(e.segs[0].vaddr, ELFIMG_VADDR);
		assert_int_equal(e.load_bias, ELFIMG_VADDR - ELFIMG_LOAD_OFF);
		assert_int_equal(e.build_id_len, 20);
		assert_int_equal(e.build_id[0], 0x11);
		assert_int_equal(e.build_id[19], (uint8_t)(0x11 * 20));
		assert_int_equal(ELFCHECK_VADDR(&e, ELFIMG_LOAD_OFF + 0x150),
				 ELFIMG_VADDR + 0x150);
		ELFCHECK_RELEASE(&e);
		free(b);
	}
}

#define ELFCHECK_TESTS                                  \
	cmocka_unit_test(test_nm_nopie),                \
	cmocka_unit_test(test_nm_pie),                  \
	cmocka_unit_test(test_runtime_math_nopie),      \
	cmocka_unit_test(test_runtime_math_pie),        \
	cmocka_unit_test(test_runtime_math_lld),        \
	cmocka_unit_test(test_stripped_dynsym),         \
	cmocka_unit_test(test_build_id),                \
	cmocka_unit_test(test_corrupt),                 \
	cmocka_unit_test(test_synthetic_images)

#endif
