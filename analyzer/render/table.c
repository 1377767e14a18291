/*
 * table.c - document model and the three renderers.
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/render/table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/strescape.h"

struct cell {
	char *s;
	int null;
};

struct col {
	char *name, *header;
	enum ana_col_kind kind;
};

struct ana_table {
	struct ana_doc *doc;
	char *name, *title;
	int kv;
	struct col *cols;
	size_t ncols;
	struct cell *cells;   /* row-major, nrows * ncols */
	size_t ncells, cap;
	size_t nrows;
	char **after;         /* text blocks under rows (text output), or NULL */
	size_t nafter;
};

struct ana_doc {
	struct ana_table **secs;
	size_t nsecs;
	int err;
};

static char *dup_str(struct ana_doc *d, const char *s)
{
	char *r = strdup(s ? s : "");
	if (!r)
		d->err = -ENOMEM;
	return r;
}

struct ana_doc *ana_doc_new(void)
{
	return calloc(1, sizeof(struct ana_doc));
}

static void table_free(struct ana_table *t)
{
	for (size_t i = 0; i < t->ncols; i++) {
		free(t->cols[i].name);
		free(t->cols[i].header);
	}
	free(t->cols);
	for (size_t i = 0; i < t->ncells; i++)
		free(t->cells[i].s);
	free(t->cells);
	for (size_t i = 0; i < t->nafter; i++)
		free(t->after[i]);
	free(t->after);
	free(t->name);
	free(t->title);
	free(t);
}

void ana_doc_free(struct ana_doc *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nsecs; i++)
		table_free(d->secs[i]);
	free(d->secs);
	free(d);
}

/* On allocation failure a detached dummy table is returned so builder
 * calls stay harmless; the document remembers the error. */
static struct ana_table dummy_table;

static struct ana_table *add_section(struct ana_doc *d, const char *name,
				     const char *title, int kv)
{
	struct ana_table *t = calloc(1, sizeof(*t));
	struct ana_table **s = t ? realloc(d->secs, (d->nsecs + 1) * sizeof(*s)) : NULL;
	if (!s) {
		free(t);
		d->err = -ENOMEM;
		memset(&dummy_table, 0, sizeof(dummy_table));
		dummy_table.doc = d;
		return &dummy_table;
	}
	d->secs = s;
	t->doc = d;
	t->name = dup_str(d, name);
	t->title = title ? dup_str(d, title) : NULL;
	t->kv = kv;
	d->secs[d->nsecs++] = t;
	if (kv) {
		ana_table_col(t, "key", "key", ANA_STR);
		ana_table_col(t, "value", "value", ANA_STR);
	}
	return t;
}

struct ana_table *ana_doc_table(struct ana_doc *d, const char *name,
				const char *title)
{
	return add_section(d, name, title, 0);
}

struct ana_table *ana_doc_kv(struct ana_doc *d, const char *name)
{
	return add_section(d, name, NULL, 1);
}

void ana_table_col(struct ana_table *t, const char *name, const char *header,
		   enum ana_col_kind kind)
{
	if (t == &dummy_table)
		return;
	struct col *c = realloc(t->cols, (t->ncols + 1) * sizeof(*c));
	if (!c) {
		t->doc->err = -ENOMEM;
		return;
	}
	t->cols = c;
	c[t->ncols].name = dup_str(t->doc, name);
	c[t->ncols].header = dup_str(t->doc, header);
	c[t->ncols].kind = kind;
	t->ncols++;
}

void ana_table_col_kind(struct ana_table *t, size_t col, enum ana_col_kind kind)
{
	if (t != &dummy_table && col < t->ncols)
		t->cols[col].kind = kind;
}

void ana_table_row(struct ana_table *t)
{
	if (t == &dummy_table || !t->ncols)
		return;
	/* Pad an unfinished previous row so the grid stays rectangular. */
	while (t->ncells < t->nrows * t->ncols)
		ana_cell_null(t, "");
	size_t need = (t->nrows + 1) * t->ncols;
	if (need > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		while (cap < need)
			cap *= 2;
		struct cell *c = realloc(t->cells, cap * sizeof(*c));
		if (!c) {
			t->doc->err = -ENOMEM;
			return;
		}
		t->cells = c;
		t->cap = cap;
	}
	t->nrows++;
}

static void add_cell(struct ana_table *t, char *s, int null)
{
	if (t == &dummy_table || !s || t->ncells >= t->nrows * t->ncols) {
		if (!s && t != &dummy_table)
			t->doc->err = -ENOMEM;
		free(s);
		return;
	}
	t->cells[t->ncells].s = s;
	t->cells[t->ncells].null = null;
	t->ncells++;
}

void ana_cell_str(struct ana_table *t, const char *s)
{
	add_cell(t, strdup(s ? s : ""), 0);
}

static char *vfmt(const char *fmt, va_list ap)
{
	char *s = NULL;
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return NULL;
	s = malloc((size_t)n + 1);
	if (s)
		vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

void ana_cell_num(struct ana_table *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_cell(t, vfmt(fmt, ap), 0);
	va_end(ap);
}

void ana_cell_null(struct ana_table *t, const char *text)
{
	add_cell(t, strdup(text ? text : ""), 1);
}

void ana_table_text_after(struct ana_table *t, char *text)
{
	if (t == &dummy_table || !t->nrows || !text) {
		if (!text && t != &dummy_table)
			t->doc->err = -ENOMEM;
		free(text);
		return;
	}
	if (t->nafter < t->nrows) {
		char **a = realloc(t->after, t->nrows * sizeof(*a));
		if (!a) {
			t->doc->err = -ENOMEM;
			free(text);
			return;
		}
		memset(a + t->nafter, 0, (t->nrows - t->nafter) * sizeof(*a));
		t->after = a;
		t->nafter = t->nrows;
	}
	free(t->after[t->nrows - 1]);
	t->after[t->nrows - 1] = text;
}

void ana_kv_str(struct ana_table *t, const char *key, const char *val)
{
	ana_table_row(t);
	ana_cell_str(t, key);
	ana_cell_str(t, val);
}

void ana_kv_num(struct ana_table *t, const char *key, const char *fmt, ...)
{
	ana_table_row(t);
	ana_cell_str(t, key);
	va_list ap;
	va_start(ap, fmt);
	char *s = vfmt(fmt, ap);
	va_end(ap);
	/* Remember it is a number so JSON leaves it unquoted. */
	add_cell(t, s, 2);
}

size_t ana_table_rows(const struct ana_table *t)
{
	return t->nrows;
}

static void json_str(FILE *f, const char *s, int html)
{
	size_t n = strlen(s);

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char ch = (unsigned char)s[i];
		uint32_t cp;
		size_t k;

		switch (ch) {
		case '"': fputs("\\\"", f); i++; continue;
		case '\\': fputs("\\\\", f); i++; continue;
		case '\n': fputs("\\n", f); i++; continue;
		case '\r': fputs("\\r", f); i++; continue;
		case '\t': fputs("\\t", f); i++; continue;
		}
		k = prec_utf8_char(s + i, n - i, &cp);
		if (!k) {
			/* not UTF-8: JSON text must be, so the replacement
			 * character stands for the byte */
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		if (prec_is_control(cp) ||
		    (html && (ch == '<' || ch == '>' || ch == '&')))
			fprintf(f, "\\u%04x", (unsigned)cp);
		else
			fwrite(s + i, 1, k, f);
		i += k;
	}
	fputc('"', f);
}

void ana_json_str(FILE *f, const char *s)
{
	json_str(f, s, 0);
}

void ana_json_str_html(FILE *f, const char *s)
{
	json_str(f, s, 1);
}

void ana_html_str(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		case '\t': case '\n': fputc(*p, f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fputs("&#xfffd;", f);
			else
				fputc(*p, f);
		}
	}
}

/* s escaped by prec_strescape(): into buf when it fits, else into *heap
 * (the caller frees it). Out of memory: the part that fit in buf, still
 * escaped. */
static const char *text_of(const char *s, char *buf, size_t len, char **heap)
{
	size_t n = strlen(s), need = prec_strescape(buf, len, s, n);

	*heap = NULL;
	if (need == n)
		return s;
	if (need < len)
		return buf;
	*heap = malloc(need + 1);
	if (!*heap)
		return buf;
	prec_strescape(*heap, need + 1, s, n);
	return *heap;
}

static size_t text_len(const char *s)
{
	return prec_strescape(NULL, 0, s, strlen(s));
}

void ana_text_str(FILE *f, const char *s)
{
	char buf[512], *heap;

	fputs(text_of(s, buf, sizeof(buf), &heap), f);
	free(heap);
}

void ana_csv_str(FILE *f, const char *s)
{
	char buf[512], *heap;

	s = text_of(s, buf, sizeof(buf), &heap);
	if (!strpbrk(s, ",\"")) {
		fputs(s, f);
	} else {
		fputc('"', f);
		for (const char *p = s; *p; p++) {
			if (*p == '"')
				fputc('"', f);
			fputc(*p, f);
		}
		fputc('"', f);
	}
	free(heap);
}

/* s escaped (ana_text_str) in a field of width w (escaped length). */
static void text_field(FILE *f, const char *s, size_t w, int right)
{
	size_t l = text_len(s);

	for (; right && l < w; l++)
		fputc(' ', f);
	ana_text_str(f, s);
	for (; l < w; l++)
		fputc(' ', f);
}

static const struct cell *cell_at(const struct ana_table *t, size_t r, size_t c)
{
	static const struct cell empty = { "", 1 };
	size_t i = r * t->ncols + c;
	return i < t->ncells ? &t->cells[i] : &empty;
}

/* Every string is escaped (ana_text_str) and widths are of what is
 * written, so a trace's control characters neither reach the terminal nor
 * break the columns. */
static void render_text(const struct ana_table *t, FILE *f)
{
	if (t->kv) {
		size_t w = 0;
		for (size_t r = 0; r < t->nrows; r++) {
			size_t l = text_len(cell_at(t, r, 0)->s);
			if (l > w)
				w = l;
		}
		for (size_t r = 0; r < t->nrows; r++) {
			text_field(f, cell_at(t, r, 0)->s, w, 0);
			fputs("  ", f);
			ana_text_str(f, cell_at(t, r, 1)->s);
			fputc('\n', f);
		}
		return;
	}
	if (t->title) {
		ana_text_str(f, t->title);
		fputc('\n', f);
	}
	size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof(*w));
	if (!w)
		return;
	for (size_t c = 0; c < t->ncols; c++) {
		w[c] = text_len(t->cols[c].header);
		for (size_t r = 0; r < t->nrows; r++) {
			const struct cell *v = cell_at(t, r, c);
			size_t l = text_len(v->s) + (t->cols[c].kind == ANA_PCT && !v->null);
			if (l > w[c])
				w[c] = l;
		}
	}
	for (size_t r = 0; r <= t->nrows; r++) {
		/* Row 0 is the header line. Trailing spaces are trimmed by
		 * writing the last column without padding when left-aligned. */
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = r ? cell_at(t, r - 1, c)->s : t->cols[c].header;
			int last = c + 1 == t->ncols;
			if (c)
				fputs("  ", f);
			if (t->cols[c].kind == ANA_PCT && r && !cell_at(t, r - 1, c)->null) {
				text_field(f, s, w[c] - 1, 1);
				fputc('%', f);
			} else if (t->cols[c].kind != ANA_STR) {
				text_field(f, s, w[c], 1);
			} else {
				text_field(f, s, last ? 0 : w[c], 0);
			}
		}
		fputc('\n', f);
		if (r && r - 1 < t->nafter && t->after[r - 1])
			fputs(t->after[r - 1], f);
	}
	free(w);
}

static void render_json(const struct ana_table *t, FILE *f)
{
	ana_json_str(f, t->name);
	if (t->kv) {
		fputs(": {", f);
		for (size_t r = 0; r < t->nrows; r++) {
			const struct cell *v = cell_at(t, r, 1);
			fputs(r ? ",\n    " : "\n    ", f);
			ana_json_str(f, cell_at(t, r, 0)->s);
			fputs(": ", f);
			if (v->null == 2)
				fputs(v->s, f);
			else
				ana_json_str(f, v->s);
		}
		fputs(t->nrows ? "\n  }" : "}", f);
		return;
	}
	fputs(": [", f);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs(r ? ",\n    {" : "\n    {", f);
		for (size_t c = 0; c < t->ncols; c++) {
			const struct cell *v = cell_at(t, r, c);
			if (c)
				fputs(", ", f);
			ana_json_str(f, t->cols[c].name);
			fputs(": ", f);
			if (v->null == 1)
				fputs("null", f);
			else if (t->cols[c].kind != ANA_STR)   /* JSON has no "+1" */
				fputs(v->s + (v->s[0] == '+'), f);
			else
				ana_json_str(f, v->s);
		}
		fputc('}', f);
	}
	fputs(t->nrows ? "\n  ]" : "]", f);
}

static void render_csv(const struct ana_table *t, FILE *f)
{
	for (size_t c = 0; c < t->ncols; c++) {
		if (c)
			fputc(',', f);
		ana_csv_str(f, t->cols[c].name);
	}
	fputc('\n', f);
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const struct cell *v = cell_at(t, r, c);
			if (c)
				fputc(',', f);
			if (v->null != 1)
				ana_csv_str(f, v->s);
		}
		fputc('\n', f);
	}
}

static void render_html(const struct ana_table *t, FILE *f)
{
	fputs(t->kv ? "<table class=\"kv\" data-section=\"" : "<table class=\"t\" data-section=\"", f);
	ana_html_str(f, t->name);
	fputs("\">\n", f);
	if (t->title) {
		fputs("<caption>", f);
		ana_html_str(f, t->title);
		fputs("</caption>\n", f);
	}
	if (t->kv) {
		for (size_t r = 0; r < t->nrows; r++) {
			fputs("<tr><th>", f);
			ana_html_str(f, cell_at(t, r, 0)->s);
			fputs("</th><td>", f);
			ana_html_str(f, cell_at(t, r, 1)->s);
			fputs("</td></tr>\n", f);
		}
		fputs("</table>\n", f);
		return;
	}
	fputs("<thead><tr>", f);
	for (size_t c = 0; c < t->ncols; c++) {
		fputs(t->cols[c].kind == ANA_STR ? "<th data-col=\"" : "<th class=\"n\" data-col=\"", f);
		ana_html_str(f, t->cols[c].name);
		fputs("\">", f);
		ana_html_str(f, t->cols[c].header);
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs("<tr>", f);
		for (size_t c = 0; c < t->ncols; c++) {
			const struct cell *v = cell_at(t, r, c);
			fputs(t->cols[c].kind == ANA_STR ? "<td>" : "<td class=\"n\">", f);
			ana_html_str(f, v->s);
			if (t->cols[c].kind == ANA_PCT && !v->null)
				fputc('%', f);
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

int ana_doc_render(const struct ana_doc *d, FILE *f, enum ana_fmt fmt)
{
	if (d->err)
		return d->err;
	if (fmt == ANA_FMT_JSON)
		fputs("{", f);
	for (size_t i = 0; i < d->nsecs; i++) {
		const struct ana_table *t = d->secs[i];
		switch (fmt) {
		case ANA_FMT_TEXT:
			if (i)
				fputc('\n', f);
			render_text(t, f);
			break;
		case ANA_FMT_JSON:
			fputs(i ? ",\n  " : "\n  ", f);
			render_json(t, f);
			break;
		case ANA_FMT_CSV:
			if (d->nsecs > 1)
				fprintf(f, "%s# %s\n", i ? "\n" : "", t->name);
			render_csv(t, f);
			break;
		case ANA_FMT_HTML:
			render_html(t, f);
			break;
		}
	}
	if (fmt == ANA_FMT_JSON)
		fputs(d->nsecs ? "\n}\n" : "}\n", f);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
