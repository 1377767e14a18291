/*
 * test_cfi_readelf.c - format/unwind/cfi.c against binutils: for every FDE
 * `readelf --debug-dump=frames-interp` lists, every row it prints (the
 * rules in effect from that location on) must be the row our interpreter
 * computes at that location, cell by cell: the CFA rule (register+offset or
 * expression) and each register column readelf shows (c-N saved at
 * CFA-N, u undefined/unset, s same value, rN in register N, v+N value
 * CFA+N, exp/vexp expressions). The FDE's pc range must match, and a
 * lookup by pc (.eh_frame_hdr binary search, or the index built for
 * .debug_frame) must find that same FDE.
 *
 * Objects: the system's libc.so.6, ld-linux-x86-64.so.2 and libstdc++
 * (when present), and programs compiled here: -O2 -fomit-frame-pointer C,
 * C++ with exceptions (personality and LSDA augmentations), and a -g
 * build without asynchronous unwind tables, whose CFI is in .debug_frame.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/error.h"
#include "format/unwind/cfi.h"
#include "unit/unwindprog.h"

static char dir[256];

/* readelf's x86-64 register names (DWARF numbering); "ra" is the CIE's
 * return-address column. */
static const char *const regnames[17] = {
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip",
};

static int reg_by_name(const char *n, uint64_t ra_col)
{
	if (!strcmp(n, "ra"))
		return (int)ra_col;
	for (int i = 0; i < 17; i++)
		if (!strcmp(n, regnames[i]))
			return i;
	return -1;
}

struct stats {
	unsigned long fdes, rows, cells, skipped_cells, finds, mismatches;
	unsigned long debug_frame_rows;
};

static void mismatch(struct stats *st, const char *file, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (st->mismatches++ < 20)
		print_message("MISMATCH %s: %s\n", file, msg);
}

static void cfa_text(const struct prec_cfi_row *r, char *b, size_t n)
{
	if (r->cfa_kind == PREC_CFI_CFA_EXPR)
		snprintf(b, n, "exp");
	else if (r->cfa_reg < 17)
		snprintf(b, n, "%s%+lld", regnames[r->cfa_reg], (long long)r->cfa_off);
	else
		snprintf(b, n, "r%u%+lld", (unsigned)r->cfa_reg, (long long)r->cfa_off);
}

static void rule_text(const struct prec_cfi_rule *c, char *b, size_t n)
{
	switch (c->kind) {
	case PREC_CFI_RULE_SAME: snprintf(b, n, "%s", c->explicit_ ? "s" : "u"); break;
	case PREC_CFI_RULE_UNDEF: snprintf(b, n, "u"); break;
	case PREC_CFI_RULE_OFFSET: snprintf(b, n, "c%+lld", (long long)c->off); break;
	case PREC_CFI_RULE_VAL_OFFSET: snprintf(b, n, "v%+lld", (long long)c->off); break;
	case PREC_CFI_RULE_REG: snprintf(b, n, "r%u", (unsigned)c->reg); break;
	case PREC_CFI_RULE_EXPR: snprintf(b, n, "exp"); break;
	default: snprintf(b, n, "vexp"); break;
	}
}

/* One readelf row, kept until the next row shows whether another row at
 * the same location replaces it. */
struct pending {
	int have;
	uint64_t loc;
	char cells[64][24];
	int ncells;
};

struct fdectx {
	int valid;              /* our parse of the FDE matched readelf's */
	int section;
	struct prec_cfi_fde fde;
	char cols[64][16];      /* readelf's column names after LOC CFA */
	int ncols;
};

static void compare_row(const struct prec_cfi_table *t, const struct fdectx *fc,
			const struct pending *pr, struct stats *st, const char *file)
{
	struct prec_cfi_row row;
	char b[64];
	int ret;

	if (pr->loc >= fc->fde.pc_end)
		return;   /* readelf prints a row after the last advance */
	ret = prec_cfi_row_at(&fc->fde, pr->loc, &row);
	if (ret) {
		mismatch(st, file, "fde %llx loc %llx: row_at %s", (unsigned long long)fc->fde.offset,
			 (unsigned long long)pr->loc, prec_strerror(ret));
		return;
	}
	st->rows++;
	if (fc->section == PREC_CFI_DEBUG_FRAME)
		st->debug_frame_rows++;
	cfa_text(&row, b, sizeof(b));
	if (strcmp(b, pr->cells[0]))
		mismatch(st, file, "fde %llx loc %llx: CFA readelf %s ours %s",
			 (unsigned long long)fc->fde.offset, (unsigned long long)pr->loc,
			 pr->cells[0], b);
	st->cells++;
	for (int i = 0; i < fc->ncols && i + 1 < pr->ncells; i++) {
		int reg = reg_by_name(fc->cols[i], row.ra_col);
		if (reg < 0 || reg >= PREC_CFI_MAX_COLS) {
			st->skipped_cells++;
			continue;
		}
		rule_text(&row.cols[reg], b, sizeof(b));
		st->cells++;
		if (strcmp(b, pr->cells[i + 1]))
			mismatch(st, file, "fde %llx loc %llx col %s: readelf %s ours %s",
				 (unsigned long long)fc->fde.offset, (unsigned long long)pr->loc,
				 fc->cols[i], pr->cells[i + 1], b);
	}
	/* the lookup by pc lands on this FDE (eh_frame: the hdr table;
	 * debug_frame: the index), unless .eh_frame covers the pc too */
	{
		struct prec_cfi_fde f;
		ret = prec_cfi_table_find(t, pr->loc, &f);
		if (ret == 0 && f.section != fc->section && fc->section == PREC_CFI_DEBUG_FRAME)
			return;
		st->finds++;
		if (ret || f.offset != fc->fde.offset || f.section != fc->section)
			mismatch(st, file, "find %llx: %s, offset %llx want %llx",
				 (unsigned long long)pr->loc, prec_strerror(ret),
				 (unsigned long long)f.offset, (unsigned long long)fc->fde.offset);
	}
}

static void flush(const struct prec_cfi_table *t, struct fdectx *fc, struct pending *pr,
		  struct stats *st, const char *file)
{
	if (pr->have && fc->valid)
		compare_row(t, fc, pr, st, file);
	pr->have = 0;
}

/* "r9 (r9)" -> "r9": readelf writes a register rule with its name */
static void squeeze_reg_names(char *s)
{
	char *o = s;

	for (char *p = s; *p;) {
		if (p[0] == ' ' && p[1] == '(') {
			char *close = strchr(p, ')');
			if (close) {
				p = close + 1;
				continue;
			}
		}
		*o++ = *p++;
	}
	*o = 0;
}

static void check_file(const char *path, struct stats *st)
{
	size_t len = 0;
	uint8_t *buf = unwindprog_slurp(path, &len);
	struct prec_cfi_sections s;
	struct prec_cfi_table *t;
	struct fdectx fc;
	struct pending pr;
	char cmd[600], line[4096];
	FILE *p;
	int section = -1;

	assert_non_null(buf);
	assert_int_equal(unwindprog_sections(buf, len, &s), 0);
	t = prec_cfi_table_new(&s);
	assert_non_null(t);
	memset(&fc, 0, sizeof(fc));
	memset(&pr, 0, sizeof(pr));
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long off, a, b;
		char kind[8];

		line[strcspn(line, "\n")] = 0;
		if (strstr(line, "Contents of the .eh_frame section")) {
			flush(t, &fc, &pr, st, path);
			fc.valid = 0;
			section = PREC_CFI_EH_FRAME;
			continue;
		}
		if (strstr(line, "Contents of the .debug_frame section")) {
			flush(t, &fc, &pr, st, path);
			fc.valid = 0;
			section = PREC_CFI_DEBUG_FRAME;
			continue;
		}
		if (section < 0)
			continue;
		if (sscanf(line, "%llx %*x %*x %7s", &off, kind) == 2 &&
		    (!strcmp(kind, "FDE") || !strcmp(kind, "CIE")) && strlen(line) > 20 &&
		    line[8] == ' ') {
			flush(t, &fc, &pr, st, path);
			fc.valid = 0;
			fc.ncols = 0;
			if (strcmp(kind, "FDE"))
				continue;
			const char *pc = strstr(line, "pc=");
			if (!pc || sscanf(pc, "pc=%llx..%llx", &a, &b) != 2)
				continue;
			int ret = prec_cfi_entry_at(t, section, off, &fc.fde, NULL);
			if (ret) {
				mismatch(st, path, "entry %llx: %s", off, prec_strerror(ret));
				continue;
			}
			if (fc.fde.pc_begin != a || fc.fde.pc_end != b) {
				mismatch(st, path, "fde %llx: pc %llx..%llx, ours %llx..%llx", off, a, b,
					 (unsigned long long)fc.fde.pc_begin,
					 (unsigned long long)fc.fde.pc_end);
				continue;
			}
			fc.valid = 1;
			fc.section = section;
			st->fdes++;
			continue;
		}
		if (strncmp(line, "   LOC", 6) == 0) {
			char *tok, *save = NULL;
			int k = 0;
			fc.ncols = 0;
			for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save), k++)
				if (k >= 2 && fc.ncols < 64)
					snprintf(fc.cols[fc.ncols++], sizeof(fc.cols[0]), "%s", tok);
			continue;
		}
		if (strlen(line) > 17 && line[16] == ' ' && strspn(line, "0123456789abcdef") == 16) {
			unsigned long long loc = strtoull(line, NULL, 16);
			char *tok, *save = NULL;
			if (pr.have && pr.loc != loc)
				flush(t, &fc, &pr, st, path);
			pr.have = 1;
			pr.loc = loc;
			pr.ncells = 0;
			squeeze_reg_names(line + 17);
			for (tok = strtok_r(line + 17, " ", &save); tok && pr.ncells < 64;
			     tok = strtok_r(NULL, " ", &save))
				snprintf(pr.cells[pr.ncells++], sizeof(pr.cells[0]), "%s", tok);
			continue;
		}
	}
	flush(t, &fc, &pr, st, path);
	pclose(p);
	prec_cfi_table_free(t);
	free(buf);
}

static void run_one(const char *path, unsigned long min_rows, int want_debug_frame)
{
	struct stats st;

	memset(&st, 0, sizeof(st));
	check_file(path, &st);
	print_message("%s: %lu FDEs, %lu rows (%lu from .debug_frame), %lu cells "
		      "(%lu skipped), %lu lookups, %lu mismatches\n", path, st.fdes, st.rows,
		      st.debug_frame_rows, st.cells, st.skipped_cells, st.finds, st.mismatches);
	assert_int_equal(st.mismatches, 0);
	assert_true(st.rows >= min_rows);
	if (want_debug_frame)
		assert_true(st.debug_frame_rows > 0);
}

static int setup(void **state)
{
	char p[400];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_cfi_readelf.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(p, sizeof(p), "%s/nofp.c", dir);
	if (unwindprog_write(p, unwindprog_nofp_src))
		return -1;
	snprintf(p, sizeof(p), "%s/prog.cc", dir);
	if (unwindprog_write(p, unwindprog_cxx_src))
		return -1;
	if (unwindprog_sh("cd %s && cc -O2 -fomit-frame-pointer nofp.c -o nofp && "
			  "cc -O2 -g -fno-asynchronous-unwind-tables nofp.c -o nofp_dbg && "
			  "c++ -O2 prog.cc -o cxx", dir))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unwindprog_sh("rm -rf %s", dir);
	return 0;
}

static void test_libc(void **state)
{
	(void)state;
	run_one("/lib/x86_64-linux-gnu/libc.so.6", 10000, 0);
}

static void test_ld_so(void **state)
{
	(void)state;
	run_one("/lib64/ld-linux-x86-64.so.2", 500, 0);
}

static void test_libstdcxx(void **state)
{
	(void)state;
	if (access("/lib/x86_64-linux-gnu/libstdc++.so.6", R_OK))
		skip();
	run_one("/lib/x86_64-linux-gnu/libstdc++.so.6", 5000, 0);
}

static void test_programs(void **state)
{
	char p[400];

	(void)state;
	snprintf(p, sizeof(p), "%s/nofp", dir);
	run_one(p, 10, 0);
	snprintf(p, sizeof(p), "%s/cxx", dir);
	run_one(p, 10, 0);
	snprintf(p, sizeof(p), "%s/nofp_dbg", dir);
	run_one(p, 5, 1);
}

/* PERFREC_CFI_EXTRA=file:file:...: more objects, for sweeps by hand
 * (e.g. every library of a system) */
static void test_extra(void **state)
{
	const char *env = getenv("PERFREC_CFI_EXTRA");
	char *list, *f, *save = NULL;

	(void)state;
	if (!env || !*env)
		skip();
	list = strdup(env);
	assert_non_null(list);
	for (f = strtok_r(list, ":", &save); f; f = strtok_r(NULL, ":", &save))
		run_one(f, 0, 0);
	free(list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_extra),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_ld_so),
		cmocka_unit_test(test_libstdcxx),
		cmocka_unit_test(test_programs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
