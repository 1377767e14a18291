/*
 * table.h - report documents rendered as aligned text, JSON or CSV.
 *
 * Every report builds one document of named sections and renders it in
 * the format the user asked for, so --json/--csv/text always carry the same
 * numbers. A section is either a table (named columns, rows of cells) or a
 * list of key/value pairs.
 *
 * How to use:
 *
 *   struct ana_doc *d = ana_doc_new();
 *   struct ana_table *kv = ana_doc_kv(d, "summary");
 *   ana_kv_str(kv, "hostname", host);  ana_kv_num(kv, "samples", "%llu", n);
 *   struct ana_table *t = ana_doc_table(d, "rows", "Samples by comm");
 *   ana_table_col(t, "comm", "Command", ANA_STR);
 *   ana_table_col(t, "samples", "Samples", ANA_NUM);
 *   ana_table_row(t); ana_cell_str(t, "bash"); ana_cell_num(t, "%llu", n);
 *   ana_doc_render(d, stdout, ANA_FMT_TEXT);
 *   ana_doc_free(d);
 *
 * Cells are copied. Errors: ENOMEM is sticky in the document and returned
 * by ana_doc_render(), so builders need not check every call.
 *
 * JSON: one object, one member per section (tables are arrays of row
 * objects keyed by column name, kv sections are objects); numbers are
 * written unquoted, ANA_NULL cells as null. CSV: a header of column names
 * then rows; with several sections each starts with a "# name" line and
 * sections are separated by an empty line. Text and CSV write every string
 * through ana_text_str(): control characters and invalid UTF-8 as \xNN;
 * JSON \u-escapes the controls and writes U+FFFD for a byte that is not
 * UTF-8. HTML: one <table> per section
 * (a kv section as rows of <th>key</th><td>value</td>), every string
 * escaped; a fragment for a page (perfrec-analyze html), not a page.
 */
#ifndef ANA_TABLE_H
#define ANA_TABLE_H

#include <stdarg.h>
#include <stdio.h>

enum ana_fmt { ANA_FMT_TEXT = 0, ANA_FMT_JSON = 1, ANA_FMT_CSV = 2,
	       ANA_FMT_HTML = 3 };
/* ANA_PCT: a number shown with a '%' suffix in text, bare in JSON/CSV.
 * A number cell may start with '+' (a change): JSON writes it without. */
enum ana_col_kind { ANA_STR = 0, ANA_NUM = 1, ANA_PCT = 2 };

struct ana_doc;
struct ana_table;

struct ana_doc *ana_doc_new(void);
void ana_doc_free(struct ana_doc *d);   /* NULL is fine */

/* Sections are rendered in the order they were added. name is the JSON/CSV
 * key; title (may be NULL) is a heading line in text output. */
struct ana_table *ana_doc_table(struct ana_doc *d, const char *name,
				const char *title);
struct ana_table *ana_doc_kv(struct ana_doc *d, const char *name);

void ana_table_col(struct ana_table *t, const char *name, const char *header,
		   enum ana_col_kind kind);
/* Changes column col's kind before rendering: for rows whose types are
 * known only once they are all in (query results). */
void ana_table_col_kind(struct ana_table *t, size_t col, enum ana_col_kind kind);
void ana_table_row(struct ana_table *t);
void ana_cell_str(struct ana_table *t, const char *s);
void ana_cell_num(struct ana_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A missing value: shows `text` in text output, null in JSON, empty in CSV. */
void ana_cell_null(struct ana_table *t, const char *text);

/* Hangs a block of text under the current row, written as it is after
 * the row in text output only (report -g's call trees): the caller
 * escapes what it holds. Takes text (malloc'd; NULL counts as out of
 * memory). */
void ana_table_text_after(struct ana_table *t, char *text);

void ana_kv_str(struct ana_table *t, const char *key, const char *val);
void ana_kv_num(struct ana_table *t, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

size_t ana_table_rows(const struct ana_table *t);

/* 0, or -ENOMEM if any builder call ran out of memory, or -EIO on a
 * write error. */
int ana_doc_render(const struct ana_doc *d, FILE *f, enum ana_fmt fmt);

/* Writes s as a JSON string literal (quotes included). */
void ana_json_str(FILE *f, const char *s);
/* The same, with '<', '>' and '&' written as \u escapes too, so the
 * literal can sit inside an HTML <script> element: no "</script>" or
 * "<!--" can come out of trace bytes. */
void ana_json_str_html(FILE *f, const char *s);
/* Writes s as HTML text or a quoted attribute value: & < > " ' become
 * character references, control characters U+FFFD. */
void ana_html_str(FILE *f, const char *s);
/* Writes s for a terminal: control characters and invalid UTF-8 as \xNN
 * (format/strescape.h), the rest as it is. Text output and CSV write
 * every string so: trace strings are untrusted. */
void ana_text_str(FILE *f, const char *s);
/* Writes s as a CSV field: escaped as ana_text_str() (so a newline in a
 * name is \x0a, never a new record), quoted when needed. */
void ana_csv_str(FILE *f, const char *s);

#endif
