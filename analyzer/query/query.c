/*
 * query.c - the query's SQLite database: set up read-only, statements
 * run into table documents, and the tables written into a SQLite file.
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/query/query_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/read/dataset.h"
#include "analyzer/read/trace.h"
#include "analyzer/render/table.h"

/* Pragmas that only read: the ones that describe tables and the build. */
static const char *const read_pragmas[] = {
	"table_info", "table_xinfo", "table_list", "function_list", "module_list",
	"pragma_list", "collation_list", "compile_options",
};

/* Reading statements only: SELECT (with CTEs, functions, views) and
 * pragmas that describe. No ATTACH, no writes, no schema changes, no
 * transactions (nothing to commit). */
static int deny(void *ctx)
{
	((struct ana_query *)ctx)->denied = 1;
	return SQLITE_DENY;
}

static int authorize(void *ctx, int action, const char *a1, const char *a2,
		     const char *db, const char *trigger)
{
	(void)a2;
	(void)db;
	(void)trigger;
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_FUNCTION:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_PRAGMA:
		for (size_t i = 0; i < sizeof(read_pragmas) / sizeof(read_pragmas[0]); i++)
			if (a1 && !sqlite3_stricmp(a1, read_pragmas[i]))
				return SQLITE_OK;
		return deny(ctx);
	default:
		return deny(ctx);
	}
}

int ana_query_new(struct ana_query **out, struct ana_dataset *ds,
		  const struct ana_query_opts *opts)
{
	*out = NULL;
	struct ana_query *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->ds = ds;
	if (opts)
		q->o = *opts;
	ana_strpool_init(&q->pool);
	prec_hashmap_init(&q->stacks, sizeof(int64_t), sizeof(struct ana_qstack));
	int ret = -ENOMEM;
	if (sqlite3_open_v2(":memory:", &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			    NULL) != SQLITE_OK)
		goto err;
	/* no extensions, no attached files, nothing a schema could smuggle */
	sqlite3_db_config(q->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
	sqlite3_db_config(q->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(q->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_limit(q->db, SQLITE_LIMIT_ATTACHED, 0);
	if ((ret = ana_qtables_register(q)) < 0)
		goto err;
	ret = -EINVAL;
	char *sql = sqlite3_mprintf("CREATE VIEW profile AS %s", ana_qprofile_select);
	if (!sql)
		goto err;
	int rc = sqlite3_exec(q->db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		goto err;
	/* Connect every table now (its schema is declared on first use):
	 * the authorizer below would refuse the declarations later. */
	for (size_t t = 0; t < ana_nqtables; t++) {
		char *s = sqlite3_mprintf("SELECT * FROM \"%w\" LIMIT 0", ana_qtables[t].name);
		sqlite3_stmt *st = NULL;
		rc = s ? sqlite3_prepare_v2(q->db, s, -1, &st, NULL) : SQLITE_NOMEM;
		sqlite3_finalize(st);
		sqlite3_free(s);
		if (rc != SQLITE_OK)
			goto err;
	}
	sqlite3_set_authorizer(q->db, authorize, q);
	*out = q;
	return 0;
err:
	ana_query_free(q);
	return ret;
}

void ana_query_free(struct ana_query *q)
{
	if (!q)
		return;
	sqlite3_close(q->db);
	ana_qtables_drop_kept(q);
	prec_hashmap_release(&q->stacks);
	free(q->locs);
	ana_strpool_release(&q->pool);
	free(q);
}

void ana_query_stats(const struct ana_query *q, struct ana_query_stats *st)
{
	*st = q->stats;
	if (q->kept)   /* counted when it is freed */
		st->damaged += q->kept->ndamage;
	st->skip_cause = q->stats.files_skipped ? q->skip_msg : NULL;
}

/* The error of a failed statement: the scan's own (a file that could
 * not be read) or SQLite's message. */
static int sql_error(struct ana_query *q, char *err, size_t errlen)
{
	if (q->fail) {
		snprintf(err, errlen, "%s", q->msg);
		return q->fail;
	}
	snprintf(err, errlen, "%s%s", sqlite3_errmsg(q->db),
		 q->denied ? " (a query only reads: SELECT, and PRAGMA table_info and "
		 "its kin; --db writes a file of the tables)" : "");
	return ANA_QUERY_E_SQL;
}

static void cell(struct ana_table *t, sqlite3_stmt *st, int i, int *text)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		ana_cell_num(t, "%lld", (long long)sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT: {
		double d = sqlite3_column_double(st, i);
		if (isfinite(d))
			ana_cell_num(t, "%.15g", d);
		else
			ana_cell_null(t, d > 0 ? "inf" : d < 0 ? "-inf" : "nan");
		break;
	}
	case SQLITE_NULL:
		ana_cell_null(t, "NULL");
		break;
	case SQLITE_BLOB: {
		/* as SQLite writes a blob literal: X'...' */
		int n = sqlite3_column_bytes(st, i);
		const unsigned char *b = sqlite3_column_blob(st, i);
		char *s = malloc((size_t)n * 2 + 4);
		if (!s) {
			ana_cell_str(t, NULL);
			break;
		}
		size_t o = 0;
		s[o++] = 'X';
		s[o++] = '\'';
		for (int k = 0; k < n; k++)
			o += (size_t)snprintf(s + o, 3, "%02x", b[k]);
		s[o++] = '\'';
		s[o] = '\0';
		ana_cell_str(t, s);
		free(s);
		*text = 1;
		break;
	}
	default:
		ana_cell_str(t, (const char *)sqlite3_column_text(st, i));
		*text = 1;
		break;
	}
}

/* One statement's rows into a table section named name. */
static int run_stmt(struct ana_query *q, sqlite3_stmt *st, struct ana_doc *doc,
		    const char *name, char *err, size_t errlen)
{
	int ncols = sqlite3_column_count(st);
	struct ana_table *t = NULL;
	int *text = ncols ? calloc((size_t)ncols, sizeof(*text)) : NULL;
	if (ncols && !text)
		return -ENOMEM;
	if (ncols) {
		t = ana_doc_table(doc, name, NULL);
		for (int i = 0; i < ncols; i++) {
			const char *cn = sqlite3_column_name(st, i);
			ana_table_col(t, cn ? cn : "", cn ? cn : "", ANA_NUM);
		}
	}
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ana_table_row(t);
		for (int i = 0; i < ncols; i++)
			cell(t, st, i, &text[i]);
	}
	/* A column that held text is a string column (its numbers are then
	 * quoted in JSON); the others stay numbers. */
	for (int i = 0; i < ncols; i++) {
		const char *decl = sqlite3_column_decltype(st, i);
		if (text[i] || (decl && !sqlite3_stricmp(decl, "TEXT")))
			ana_table_col_kind(t, (size_t)i, ANA_STR);
	}
	free(text);
	return rc == SQLITE_DONE ? 0 : sql_error(q, err, errlen);
}

int ana_query_run(struct ana_query *q, const char *sql, struct ana_doc *doc,
		  char *err, size_t errlen)
{
	const char *tail = sql;
	int nsec = 0, ret = 0;
	q->fail = 0;
	q->denied = 0;
	while (tail && *tail && ret >= 0) {
		sqlite3_stmt *st = NULL;
		const char *next = NULL;
		if (sqlite3_prepare_v2(q->db, tail, -1, &st, &next) != SQLITE_OK)
			return sql_error(q, err, errlen);
		tail = next;
		if (!st)
			continue;   /* white space or a comment */
		if (!sqlite3_stmt_readonly(st)) {
			sqlite3_finalize(st);
			snprintf(err, errlen, "a query only reads: this statement writes");
			return ANA_QUERY_E_SQL;
		}
		char name[32];
		if (sqlite3_column_count(st) && nsec++)
			snprintf(name, sizeof(name), "rows%d", nsec);
		else
			snprintf(name, sizeof(name), "rows");
		ret = run_stmt(q, st, doc, name, err, errlen);
		sqlite3_finalize(st);
	}
	return ret;
}

/* ---- --db */

static int exec_out(sqlite3 *out, const char *sql, char *err, size_t errlen)
{
	if (sqlite3_exec(out, sql, NULL, NULL, NULL) == SQLITE_OK)
		return 0;
	snprintf(err, errlen, "%s", sqlite3_errmsg(out));
	return -EIO;
}

/* Copies the rows of `select` (over the query's tables) into the table
 * name(columns) of out, through bound parameters. */
static int copy_table(struct ana_query *q, sqlite3 *out, const char *name,
		      const char *columns, const char *select, char *err, size_t errlen)
{
	char *sql = sqlite3_mprintf("CREATE TABLE \"%w\"(%s)", name, columns);
	if (!sql)
		return -ENOMEM;
	int ret = exec_out(out, sql, err, errlen);
	sqlite3_free(sql);
	if (ret < 0)
		return ret;
	sqlite3_stmt *sel = NULL, *ins = NULL;
	if (sqlite3_prepare_v2(q->db, select, -1, &sel, NULL) != SQLITE_OK)
		return sql_error(q, err, errlen);
	int n = sqlite3_column_count(sel);
	char *marks = sqlite3_mprintf("?");
	for (int i = 1; i < n && marks; i++) {
		char *m = sqlite3_mprintf("%s,?", marks);
		sqlite3_free(marks);
		marks = m;
	}
	sql = marks ? sqlite3_mprintf("INSERT INTO \"%w\" VALUES(%s)", name, marks) : NULL;
	sqlite3_free(marks);
	if (!sql) {
		sqlite3_finalize(sel);
		return -ENOMEM;
	}
	if (sqlite3_prepare_v2(out, sql, -1, &ins, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(out));
		ret = -EIO;
	}
	sqlite3_free(sql);
	int rc = SQLITE_DONE;
	while (ret >= 0 && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
		for (int i = 0; i < n; i++)
			sqlite3_bind_value(ins, i + 1, sqlite3_column_value(sel, i));
		if (sqlite3_step(ins) != SQLITE_DONE) {
			snprintf(err, errlen, "%s", sqlite3_errmsg(out));
			ret = -EIO;
		}
		sqlite3_reset(ins);
	}
	if (ret >= 0 && rc != SQLITE_DONE)
		ret = sql_error(q, err, errlen);
	sqlite3_finalize(ins);
	sqlite3_finalize(sel);
	return ret;
}

int ana_query_write_db(struct ana_query *q, const char *path, char *err, size_t errlen)
{
	char *tmp = sqlite3_mprintf("%s.tmp%ld", path, (long)getpid());
	if (!tmp)
		return -ENOMEM;
	unlink(tmp);
	sqlite3 *out = NULL;
	int ret = 0;
	q->fail = 0;
	if (sqlite3_open_v2(tmp, &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "cannot create %s: %s", tmp,
			 out ? sqlite3_errmsg(out) : "out of memory");
		ret = -EIO;
		goto out;
	}
	ret = exec_out(out, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN", err,
		       errlen);
	for (size_t t = 0; t < ana_nqtables && ret >= 0; t++) {
		char *sel = sqlite3_mprintf("SELECT * FROM \"%w\"", ana_qtables[t].name);
		ret = sel ? copy_table(q, out, ana_qtables[t].name, ana_qtables[t].columns, sel,
				       err, errlen) : -ENOMEM;
		sqlite3_free(sel);
	}
	if (ret >= 0)
		ret = copy_table(q, out, "profile", ana_qprofile_columns, ana_qprofile_select,
				 err, errlen);
	if (ret >= 0)
		ret = exec_out(out, "COMMIT", err, errlen);
out:
	if (out && sqlite3_close(out) != SQLITE_OK && ret >= 0) {
		snprintf(err, errlen, "cannot write %s", tmp);
		ret = -EIO;
	}
	if (ret >= 0 && rename(tmp, path)) {
		ret = -errno;
		snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
	}
	if (ret < 0)
		unlink(tmp);
	sqlite3_free(tmp);
	return ret;
}
