/*
 * unwindprog.h - programs the unwinding tests compile at test time, and
 * helpers to read an object's unwind sections.
 *
 * nofp.c, built with -O2 -fomit-frame-pointer: main -> level_one ->
 * level_two -> level_three -> qsort (libc) -> compare_cb, and compare_cb
 * snapshots its own user registers (rbx, rbp, rsp, rip, r12-r15, as
 * perf's PERF_SAMPLE_REGS_USER would) and 8 KiB of its stack (less at the
 * end of the stack mapping), then writes them to the file named by
 * argv[1] (read back by unwindprog_snap_read()):
 *
 *   "REGS" u64 mask, u64 values[popcount(mask)] (perf x86 order),
 *   u64 stack_start, u64 stack_len, stack bytes,
 *   then its /proc/self/maps.
 *
 * The snapshot is taken by a small asm stub that reads the registers at
 * the moment of a call into it, so the pc is a return address inside
 * compare_cb and every register is what compare_cb's caller chain holds.
 * The functions are noinline and exported so their names are in .symtab.
 *
 * Header only (static inline functions: a test uses some of them).
 */
#ifndef TESTS_UNWINDPROG_H
#define TESTS_UNWINDPROG_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/base/elf.h"
#include "format/unwind/cfi.h"

static const char unwindprog_nofp_src[] =
	"#include <stdint.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"uint64_t snap_regs[9];\n"
	"/* called from C: saves rbx rbp rsp(at the call) rip(return address)\n"
	" * r12 r13 r14 r15 into snap_regs in perf's mask order:\n"
	" * BX(1) BP(6) SP(7) IP(8) R12..R15(20..23) */\n"
	"void snapshot(void);\n"
	"__asm__(\".text\\n.globl snapshot\\n.type snapshot,@function\\nsnapshot:\\n"
	"  .cfi_startproc\\n"
	"  movq %rbx, snap_regs+0(%rip)\\n"
	"  movq %rbp, snap_regs+8(%rip)\\n"
	"  leaq 8(%rsp), %rax\\n  movq %rax, snap_regs+16(%rip)\\n"
	"  movq (%rsp), %rax\\n  movq %rax, snap_regs+24(%rip)\\n"
	"  movq %r12, snap_regs+32(%rip)\\n  movq %r13, snap_regs+40(%rip)\\n"
	"  movq %r14, snap_regs+48(%rip)\\n  movq %r15, snap_regs+56(%rip)\\n"
	"  ret\\n  .cfi_endproc\\n.size snapshot,.-snapshot\\n\");\n"
	"static const char *out_path;\n"
	"static int snapped;\n"
	"/* Everything at or above the snapshot's sp belongs to compare_cb and\n"
	" * its callers: calls made from compare_cb (this one) live below it,\n"
	" * so the bytes are still those of the moment of the snapshot. The\n"
	" * copy stops at the end of the stack mapping, as the kernel's does. */\n"
	"__attribute__((noinline)) static void dump(void)\n"
	"{\n"
	"  FILE *f = fopen(out_path, \"wb\"), *m = fopen(\"/proc/self/maps\", \"r\");\n"
	"  uint64_t mask = (1ull<<1)|(1ull<<6)|(1ull<<7)|(1ull<<8)|(0xfull<<20);\n"
	"  uint64_t start = snap_regs[2], len = 8192;\n"
	"  char line[512];\n"
	"  if (!f || !m) exit(3);\n"
	"  while (fgets(line, sizeof(line), m)) {\n"
	"    unsigned long lo, hi;\n"
	"    if (sscanf(line, \"%lx-%lx\", &lo, &hi) == 2 && start >= lo && start < hi &&\n"
	"        hi - start < len) len = hi - start;\n"
	"  }\n"
	"  fwrite(\"REGS\", 1, 4, f); fwrite(&mask, 8, 1, f);\n"
	"  fwrite(snap_regs, 8, 8, f); fwrite(&start, 8, 1, f); fwrite(&len, 8, 1, f);\n"
	"  fwrite((const void *)(uintptr_t)start, 1, (size_t)len, f);\n"
	"  rewind(m);\n"
	"  while (fgets(line, sizeof(line), m)) fputs(line, f);\n"
	"  fclose(m);\n"
	"  fclose(f);\n"
	"}\n"
	"__attribute__((noinline, noclone)) int compare_cb(const void *a, const void *b)\n"
	"{\n"
	"  int x = *(const int *)a, y = *(const int *)b;\n"
	"  if (!snapped) {\n"
	"    snapped = 1;\n"
	"    snapshot();\n"
	"    dump();\n"
	"  }\n"
	"  return (x > y) - (x < y);\n"
	"}\n"
	"__attribute__((noinline, noclone)) int level_three(int *v, int n)\n"
	"{ qsort(v, (size_t)n, sizeof(*v), compare_cb); return v[0]; }\n"
	"__attribute__((noinline, noclone)) int level_two(int *v, int n)\n"
	"{ int r = level_three(v, n); __asm__ volatile(\"\" ::: \"memory\"); return r + 1; }\n"
	"__attribute__((noinline, noclone)) int level_one(int *v, int n)\n"
	"{ int r = level_two(v, n); __asm__ volatile(\"\" ::: \"memory\"); return r + 2; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"  int v[64];\n"
	"  if (argc < 2) return 2;\n"
	"  out_path = argv[1];\n"
	"  for (int i = 0; i < 64; i++) v[i] = (i * 7919) % 64;\n"
	"  return level_one(v, 64) == 12345;\n"
	"}\n";

/* C++ with exceptions (CIEs with "zPLR": personality and LSDA), a
 * namespaced template. */
static const char unwindprog_cxx_src[] =
	"#include <stdexcept>\n"
	"#include <vector>\n"
	"#include <cstdio>\n"
	"namespace outer { namespace inner {\n"
	"template <typename T> __attribute__((noinline)) T twice(T x)\n"
	"{ if (x == 42) throw std::runtime_error(\"x\"); return x + x; }\n"
	"} }\n"
	"int main(int argc, char **)\n"
	"{\n"
	"  std::vector<double> v(16, argc);\n"
	"  int s = 0;\n"
	"  try { s = outer::inner::twice<int>(argc) + (int)outer::inner::twice<double>(v[3]); }\n"
	"  catch (const std::exception &) { s = -1; }\n"
	"  std::printf(\"%d\\n\", s);\n"
	"  return 0;\n"
	"}\n";

static inline int unwindprog_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static inline int unwindprog_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* Writes src to dir/file and runs `cd dir && cmd`: 0 when both worked
 * (the tests' setup). */
static inline int unwindprog_build(const char *dir, const char *file, const char *src,
				   const char *cmd)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	if (unwindprog_write(p, src))
		return -1;
	return unwindprog_sh("cd %s && %s", dir, cmd) ? -1 : 0;
}

/* The whole file (malloc'd), NULL on error. */
static inline uint8_t *unwindprog_slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *b;
	FILE *f;

	if (stat(path, &st) || st.st_size <= 0)
		return NULL;
	b = malloc((size_t)st.st_size);
	f = fopen(path, "rb");
	if (!b || !f || fread(b, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		free(b);
		if (f)
			fclose(f);
		return NULL;
	}
	fclose(f);
	*len = (size_t)st.st_size;
	return b;
}

/* What the nofp program wrote: registers in perf's order (BX BP SP IP
 * R12-R15), the stack copy and its /proc/self/maps text. */
struct unwindprog_snap {
	uint64_t mask, regs[8], start, len;
	uint8_t *stack;
	char *maps;
};

static inline int unwindprog_snap_read(const char *path, struct unwindprog_snap *sn)
{
	size_t len = 0, at = 92;
	uint8_t *b = unwindprog_slurp(path, &len);

	memset(sn, 0, sizeof(*sn));
	if (!b || len < at || memcmp(b, "REGS", 4)) {
		free(b);
		return -1;
	}
	memcpy(&sn->mask, b + 4, 8);
	memcpy(sn->regs, b + 12, 64);
	memcpy(&sn->start, b + 76, 8);
	memcpy(&sn->len, b + 84, 8);
	if (sn->len > len - at) {
		free(b);
		return -1;
	}
	sn->stack = malloc(sn->len ? sn->len : 1);
	sn->maps = calloc(1, len - at - sn->len + 1);
	if (sn->stack && sn->len)
		memcpy(sn->stack, b + at, sn->len);
	if (sn->maps)
		memcpy(sn->maps, b + at + sn->len, len - at - sn->len);
	free(b);
	return sn->stack && sn->maps ? 0 : -1;
}

static inline void unwindprog_snap_free(struct unwindprog_snap *sn)
{
	free(sn->stack);
	free(sn->maps);
}

/* Fills s from the ELF image buf (borrowed by s). 0 when at least one
 * unwind section is there. */
static inline int unwindprog_sections(const uint8_t *buf, size_t len, struct prec_cfi_sections *s)
{
	struct prec_elf_section eh, hdr, dbg;

	memset(s, 0, sizeof(*s));
	s->sz = sizeof(*s);
	if (prec_elf_find_section(buf, len, ".eh_frame", &eh) == 0 && !eh.nobits) {
		s->eh_frame = eh.data;
		s->eh_frame_len = (size_t)eh.size;
		s->eh_frame_addr = eh.addr;
	}
	if (prec_elf_find_section(buf, len, ".eh_frame_hdr", &hdr) == 0 && !hdr.nobits) {
		s->eh_frame_hdr = hdr.data;
		s->eh_frame_hdr_len = (size_t)hdr.size;
		s->eh_frame_hdr_addr = hdr.addr;
	}
	if (prec_elf_find_section(buf, len, ".debug_frame", &dbg) == 0 && !dbg.nobits) {
		s->debug_frame = dbg.data;
		s->debug_frame_len = (size_t)dbg.size;
	}
	return s->eh_frame || s->debug_frame ? 0 : -ENOENT;
}

#endif
