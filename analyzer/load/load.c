/*
 * load.c - see load.h for the order of a load and why it is safe to kill.
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/load/load.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>

#include "analyzer/load/chclient.h"
#include "analyzer/load/chreply.h"
#include "analyzer/load/rowbin.h"
#include "analyzer/load/schema.h"
#include "analyzer/query/query.h"
#include "analyzer/read/dataset.h"
#include "format/base/grow.h"
#include "format/base/hashmap.h"
#include "format/base/opts.h"
#include "format/error.h"

/* Stack ids asked about in one query: 2,000 ids of up to 20 digits keep
 * the statement far below max_query_size (256 KiB by default). */
#define IDS_PER_QUERY 2000
/* How long a delete of a partial file's rows may take to finish. */
#define MUTATION_WAIT_S 120

struct ana_loader {
	struct ana_ch **ch;          /* one per server; ch[0] takes the rows */
	size_t nch;
	char *cluster;
	void (*note)(void *ctx, const char *line);
	void *ctx;
	struct ana_rowbin rows;
	char err[1280];
};

static void set_err(struct ana_loader *ld, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ld->err, sizeof(ld->err), fmt, ap);
	va_end(ap);
}

static void note(struct ana_loader *ld, const char *line)
{
	if (ld->note)
		ld->note(ld->ctx, line);
}

/* A failed ClickHouse call: its own message is the error. */
static int ch_fail(struct ana_loader *ld, struct ana_ch *ch, int ret)
{
	set_err(ld, "%s", ana_ch_errmsg(ch));
	return ret;
}

struct ana_loader *ana_loader_new(const struct ana_load_opts *opts)
{
	struct ana_load_opts o = { .size = sizeof(o) };
	struct ana_loader *ld;
	int err = 0;

	if (prec_opts_copy(&o, sizeof(o), opts) || !o.nurls || !o.urls) {
		errno = EINVAL;
		return NULL;
	}
	if (!(ld = calloc(1, sizeof(*ld))) || !(ld->ch = calloc(o.nurls, sizeof(*ld->ch))))
		goto err_free;
	ld->cluster = prec_opts_strdup(o.cluster ? o.cluster : "perfrec", &err);
	if (err)
		goto err_free;
	for (; ld->nch < o.nurls; ld->nch++)
		if (!(ld->ch[ld->nch] = ana_ch_new(o.urls[ld->nch]))) {
			err = -errno;
			goto err_free;
		}
	ld->note = o.note;
	ld->ctx = o.ctx;
	ana_rowbin_init(&ld->rows);
	return ld;
err_free:
	ana_loader_free(ld);
	errno = err ? -err : ENOMEM;
	return NULL;
}

void ana_loader_free(struct ana_loader *ld)
{
	if (!ld)
		return;
	for (size_t i = 0; ld->ch && i < ld->nch; i++)
		ana_ch_free(ld->ch[i]);
	free(ld->ch);
	free(ld->cluster);
	ana_rowbin_release(&ld->rows);
	free(ld);
}

const char *ana_loader_errmsg(const struct ana_loader *ld)
{
	return ld->err;
}

int ana_loader_prepare(struct ana_loader *ld)
{
	char ddl[2048];
	int ret;

	for (size_t s = 0; s < ld->nch; s++)
		for (int dist = 0; dist < 2; dist++)
			for (size_t i = 0; i < ana_nchtables; i++) {
				ret = ana_chtable_ddl(&ana_chtables[i], dist, ld->cluster, ddl, sizeof(ddl));
				if (ret == -EINVAL) {
					set_err(ld, "cluster name '%s' is not an identifier (letters, "
						"digits, '_'): name a remote_servers entry", ld->cluster);
					return ret;
				}
				if (ret)
					return ret;
				if ((ret = ana_ch_query(ld->ch[s], ddl, NULL, NULL)))
					return ch_fail(ld, ld->ch[s], ret);
			}
	return 0;
}

/* One integer from a `SELECT count() ...`-like statement on ch. */
static int ch_int(struct ana_loader *ld, struct ana_ch *ch, const char *sql, int64_t *out)
{
	const char *r;
	size_t n, nv;
	int64_t *v;
	int ret;

	if ((ret = ana_ch_query(ch, sql, &r, &n)))
		return ch_fail(ld, ch, ret);
	if ((ret = ana_chreply_ints(r, n, &v, &nv)) || nv != 1) {
		free(v);
		set_err(ld, "ClickHouse at %s: '%.200s' gave no single integer: '%.200s'",
			ana_ch_name(ch), sql, r);
		return ret == -ENOMEM ? ret : -EIO;
	}
	*out = v[0];
	free(v);
	return 0;
}

static int db_int(struct ana_loader *ld, sqlite3 *db, const char *path, const char *sql,
		  int64_t *out)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		set_err(ld, "%s: %s (is it a database `perfrec-analyze query --db` wrote?)",
			path, sqlite3_errmsg(db));
		return -EINVAL;
	}
	int rc = sqlite3_step(st);
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return 0;
}

/* Appends the current row of st (the table's columns, after file_key when
 * it has one) to the rows buffer. A NULL stores as NULL in a Nullable
 * column (RowBinary: a byte 1, no value; else 0 and the value), as 0 or
 * '' in the others. */
static void encode_row(struct ana_rowbin *b, const struct ana_chtable *t, sqlite3_stmt *st,
		       int64_t key, const char *session)
{
	if (t->per_file)
		ana_rowbin_i64(b, key);
	for (size_t c = 0; c < t->ncols; c++) {
		int i = (int)c;
		if (t->cols[c].nullable) {
			int null = sqlite3_column_type(st, i) == SQLITE_NULL;
			ana_rowbin_u8(b, (uint8_t)null);
			if (null)
				continue;
		}
		if (session && !strcmp(t->cols[c].name, "session")) {
			ana_rowbin_str(b, session, strlen(session));
			continue;
		}
		switch (t->cols[c].type) {
		case ANA_COL_I64:
			ana_rowbin_i64(b, sqlite3_column_int64(st, i));
			break;
		case ANA_COL_F64:
			ana_rowbin_f64(b, sqlite3_column_double(st, i));
			break;
		case ANA_COL_STR: {
			const void *p = sqlite3_column_blob(st, i);
			int n = sqlite3_column_bytes(st, i);
			ana_rowbin_str(b, p, p && n > 0 ? (size_t)n : 0);
			break;
		}
		}
	}
}

/* The file_key of the database: see load.h. Also its first path and the
 * samples its files hold, for the note. */
static int file_key(struct ana_loader *ld, sqlite3 *db, const char *path, int64_t *key,
		    char *first, size_t firstsz, int64_t *samples)
{
	static const char sql[] = "SELECT host, start_ns, end_ns, bytes, samples, path "
				  "FROM files ORDER BY host, start_ns, end_ns, bytes, samples";
	static const struct ana_col id_cols[] = {
		{ "host", ANA_COL_STR }, { "start_ns", ANA_COL_I64 }, { "end_ns", ANA_COL_I64 },
		{ "bytes", ANA_COL_I64 }, { "samples", ANA_COL_I64 },
	};
	const struct ana_chtable id = { .name = "files", .cols = id_cols,
					.ncols = sizeof(id_cols) / sizeof(id_cols[0]) };
	struct ana_rowbin b;
	sqlite3_stmt *st;
	size_t nrows = 0;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		set_err(ld, "%s: %s (is it a database `perfrec-analyze query --db` wrote?)",
			path, sqlite3_errmsg(db));
		return -EINVAL;
	}
	ana_rowbin_init(&b);
	*samples = 0;
	first[0] = '\0';
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		encode_row(&b, &id, st, 0, NULL);
		*samples += sqlite3_column_int64(st, 4);
		if (!nrows++)
			snprintf(first, firstsz, "%s", sqlite3_column_text(st, 5) ? (const char *)sqlite3_column_text(st, 5) : "");
	}
	sqlite3_finalize(st);
	int ret = ana_rowbin_error(&b);
	if (!ret && rc != SQLITE_DONE) {
		set_err(ld, "%s: reading files: %s", path, sqlite3_errmsg(db));
		ret = -EINVAL;
	} else if (!ret && !nrows) {
		set_err(ld, "%s: no files rows: nothing says which recording the rows are of "
			"(write it with `perfrec-analyze query --db` from .prec files)", path);
		ret = -EINVAL;
	}
	if (!ret)
		*key = (int64_t)prec_hash_bytes(b.buf, b.len);
	ana_rowbin_release(&b);
	return ret;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The ids of ids[0..n) that the cluster's stacks table holds, sorted,
 * into *have (malloc'd, NULL when n is 0) and *nhave. The server answers
 * each batch with at most the ids it was asked about: more is a bad reply. */
static int stacks_held(struct ana_loader *ld, const int64_t *ids, size_t n, int64_t **have,
		       size_t *nhave)
{
	size_t cnt = 0;
	int64_t *all;
	char *sql;
	int ret = 0;

	*have = NULL;
	*nhave = 0;
	if (!n)
		return 0;
	if (!(all = calloc(n, sizeof(*all))) || !(sql = malloc(128 + IDS_PER_QUERY * 22))) {
		free(all);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && !ret; i += IDS_PER_QUERY) {
		size_t m = n - i < IDS_PER_QUERY ? n - i : IDS_PER_QUERY, len;
		len = (size_t)sprintf(sql, "SELECT DISTINCT stack_id FROM stacks WHERE stack_id IN (");
		for (size_t k = 0; k < m; k++)
			len += (size_t)sprintf(sql + len, "%s%" PRId64, k ? "," : "", ids[i + k]);
		strcpy(sql + len, ") FORMAT TabSeparated");
		const char *r;
		size_t rn, nv;
		int64_t *v;
		if ((ret = ana_ch_query(ld->ch[0], sql, &r, &rn))) {
			ret = ch_fail(ld, ld->ch[0], ret);
			break;
		}
		if ((ret = ana_chreply_ints(r, rn, &v, &nv)) || nv > m) {
			free(v);
			set_err(ld, "ClickHouse at %s: at most %zu stack ids expected, got '%.200s'",
				ana_ch_name(ld->ch[0]), m, r);
			ret = ret == -ENOMEM ? ret : -EIO;
			break;
		}
		for (size_t k = 0; k < nv; k++)
			all[cnt++] = v[k];
		free(v);
	}
	free(sql);
	if (ret) {
		free(all);
		return ret;
	}
	qsort(all, cnt, sizeof(*all), cmp_i64);
	*have = all;
	*nhave = cnt;
	return 0;
}

/* The query_id of table t's insert for file key (see load.h). */
static void insert_id(char *id, size_t idsz, const struct ana_chtable *t, int64_t key)
{
	snprintf(id, idsz, "perfrec-load-%016" PRIx64 "-%s", (uint64_t)key, t->name);
}

/* Waits until no insert of table t's rows of file key runs on the server
 * the inserts go to: a killed loader's insert may still be running there,
 * and counting the rows before it ends would insert them a second time
 * once it has. */
static int wait_insert_gone(struct ana_loader *ld, const struct ana_chtable *t, int64_t key)
{
	char sql[320], id[160];
	int64_t running = 1;
	int ret;

	insert_id(id, sizeof(id), t, key);
	snprintf(sql, sizeof(sql), "SELECT count() FROM system.processes WHERE query_id = '%s' "
		 "FORMAT TabSeparated", id);
	for (int tries = 0; tries < MUTATION_WAIT_S * 10; tries++) {
		if ((ret = ch_int(ld, ld->ch[0], sql, &running)))
			return ret;
		if (!running)
			return 0;
		nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
	}
	set_err(ld, "ClickHouse at %s: an earlier insert of %s's rows (query_id %s) still runs "
		"after %d s: see system.processes there, and load again once it ended",
		ana_ch_name(ld->ch[0]), t->name, id, MUTATION_WAIT_S);
	return -ETIMEDOUT;
}

static int insert(struct ana_loader *ld, const struct ana_chtable *t, int64_t key,
		  struct ana_load_stats *st)
{
	char sql[1024], id[160];
	int ret;

	if (ana_rowbin_error(&ld->rows))
		return ana_rowbin_error(&ld->rows);
	if (!ld->rows.len)
		return 0;
	if ((ret = ana_chtable_insert(t, sql, sizeof(sql))))
		return ret;
	/* the query_id (see load.h): a second insert of the same rows while
	 * the first still runs is refused by the server */
	insert_id(id, sizeof(id), t, key);
	if ((ret = ana_ch_insert(ld->ch[0], sql, t->per_file ? id : NULL, ld->rows.buf,
				 ld->rows.len)))
		return ch_fail(ld, ld->ch[0], ret);
	if (st)
		st->bytes += ld->rows.len;
	return 0;
}

/* Stacks of the database the cluster lacks (2. in load.h). */
static int load_stacks(struct ana_loader *ld, sqlite3 *db, const char *path,
		       const struct ana_chtable *t, struct ana_load_stats *st)
{
	sqlite3_stmt *q;
	int64_t *ids = NULL, *have = NULL;
	size_t nids = 0, cap = 0, nhave = 0;
	int ret = 0, rc;

	if (sqlite3_prepare_v2(db, "SELECT DISTINCT stack_id FROM stacks", -1, &q, NULL) != SQLITE_OK)
		goto err_db;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW && !ret)
		if (!(ret = prec_grow(&ids, &cap, nids + 1, sizeof(*ids))))
			ids[nids++] = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	if (!ret && rc != SQLITE_DONE)
		goto err_db;
	if (ret || (ret = stacks_held(ld, ids, nids, &have, &nhave)))
		goto out;
	if (sqlite3_prepare_v2(db, t->select, -1, &q, NULL) != SQLITE_OK)
		goto err_db;
	ana_rowbin_reset(&ld->rows);
	uint64_t n = 0;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(q, 0);
		if (nhave && bsearch(&id, have, nhave, sizeof(*have), cmp_i64))
			continue;
		encode_row(&ld->rows, t, q, 0, NULL);
		n++;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE)
		goto err_db;
	if (!(ret = insert(ld, t, 0, st)) && st)
		st->rows += n;
	goto out;
err_db:
	set_err(ld, "%s: reading %s: %s", path, t->name, sqlite3_errmsg(db));
	ret = -EINVAL;
out:
	free(ids);
	free(have);
	return ret;
}

/* Deletes table t's rows of file key on every server and waits until the
 * deletes are done: what an interrupted load left of the file (3. in load.h). */
static int delete_partial(struct ana_loader *ld, const struct ana_chtable *t, int64_t key)
{
	char sql[256];
	int ret;

	for (size_t s = 0; s < ld->nch; s++) {
		snprintf(sql, sizeof(sql), "ALTER TABLE %s_local DELETE WHERE file_key = %" PRId64,
			 t->name, key);
		if ((ret = ana_ch_query(ld->ch[s], sql, NULL, NULL)))
			return ch_fail(ld, ld->ch[s], ret);
	}
	snprintf(sql, sizeof(sql), "SELECT count() FROM system.mutations WHERE database = "
		 "currentDatabase() AND table = '%s_local' AND is_done = 0 FORMAT TabSeparated",
		 t->name);
	for (size_t s = 0; s < ld->nch; s++) {
		int64_t pending = 1;
		for (int tries = 0; tries < MUTATION_WAIT_S * 10; tries++) {
			if ((ret = ch_int(ld, ld->ch[s], sql, &pending)))
				return ret;
			if (!pending)
				break;
			nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
		}
		if (pending) {
			set_err(ld, "ClickHouse at %s: the delete of %s's partial rows (file_key %"
				PRId64 ") did not finish in %d s: see system.mutations there",
				ana_ch_name(ld->ch[s]), t->name, key, MUTATION_WAIT_S);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

/* One per-file table (3. and 4. in load.h). *stored: the rows it holds now. */
static int load_table(struct ana_loader *ld, sqlite3 *db, const char *path,
		      const struct ana_chtable *t, int64_t key, const char *session,
		      struct ana_load_stats *st)
{
	char sql[256];
	int64_t want, have;
	sqlite3_stmt *q;
	int ret, rc;

	if ((ret = db_int(ld, db, path, t->count, &want)))
		return ret;
	if ((ret = wait_insert_gone(ld, t, key)))
		return ret;
	snprintf(sql, sizeof(sql), "SELECT count() FROM %s WHERE file_key = %" PRId64
		 " FORMAT TabSeparated", t->name, key);
	if ((ret = ch_int(ld, ld->ch[0], sql, &have)))
		return ret;
	if (have == want)
		return 0;   /* all of them: an interrupted load stored the table whole */
	if (have && (ret = delete_partial(ld, t, key)))
		return ret;
	if (sqlite3_prepare_v2(db, t->select, -1, &q, NULL) != SQLITE_OK) {
		set_err(ld, "%s: reading %s: %s", path, t->name, sqlite3_errmsg(db));
		return -EINVAL;
	}
	ana_rowbin_reset(&ld->rows);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		encode_row(&ld->rows, t, q, key, session);
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE) {
		set_err(ld, "%s: reading %s: %s", path, t->name, sqlite3_errmsg(db));
		return -EINVAL;
	}
	if (!(ret = insert(ld, t, key, st)) && st)
		st->rows += (uint64_t)want;
	return ret;
}

/* The other loads of the recording of the current files row of q (host,
 * start_ns: one recording's files share neither with another's) than
 * key: *whole counts those of whole files, and the loads of files that
 * were not whole (an earlier, shorter copy) are deleted (5. in load.h). */
static int other_loads(struct ana_loader *ld, const char *name, sqlite3_stmt *q, int64_t key,
		       int64_t *whole)
{
	const unsigned char *host = sqlite3_column_blob(q, 0);
	size_t n = host ? (size_t)sqlite3_column_bytes(q, 0) : 0, len = 2 * n + 256;
	char *cond = malloc(len), *sql = malloc(len + 128), *w;
	int64_t *old = NULL;
	size_t nold = 0, rn;
	const char *r;
	int ret = -ENOMEM;

	if (!cond || !sql)
		goto out;
	/* the host as hex: a name is data, never SQL */
	w = cond + sprintf(cond, "hex(host) = '");
	for (size_t i = 0; i < n; i++)
		w += sprintf(w, "%02X", host[i]);
	sprintf(w, "' AND start_ns = %" PRId64, (int64_t)sqlite3_column_int64(q, 1));
	sprintf(sql, "SELECT count() FROM files WHERE whole = 1 AND %s FORMAT TabSeparated", cond);
	if ((ret = ch_int(ld, ld->ch[0], sql, whole)))
		goto out;
	sprintf(sql, "SELECT DISTINCT file_key FROM files WHERE whole = 0 AND file_key != %" PRId64
		" AND %s FORMAT TabSeparated", key, cond);
	if ((ret = ana_ch_query(ld->ch[0], sql, &r, &rn))) {
		ret = ch_fail(ld, ld->ch[0], ret);
		goto out;
	}
	if ((ret = ana_chreply_ints(r, rn, &old, &nold))) {
		set_err(ld, "ClickHouse at %s: file keys expected, got '%.200s'",
			ana_ch_name(ld->ch[0]), r);
		ret = ret == -ENOMEM ? ret : -EIO;
		goto out;
	}
	/* the files row (the marker) last, as a load writes it */
	for (size_t k = 0; k < nold && !ret; k++)
		for (size_t i = 0; i < ana_nchtables && !ret; i++)
			if (ana_chtables[i].per_file)
				ret = delete_partial(ld, &ana_chtables[i], old[k]);
	if (!ret && nold) {
		char line[PATH_MAX + 128];

		snprintf(line, sizeof(line), "%s: replaces %zu earlier load%s of a shorter copy "
			 "of its recording", name, nold, nold > 1 ? "s" : "");
		note(ld, line);
	}
out:
	free(old);
	free(sql);
	free(cond);
	return ret;
}

/* 5. in load.h: a file that is not whole (no SessionEnd, a torn tail) is
 * not loaded where its recording is loaded whole (*covered), and the
 * loads of shorter copies of its recording are replaced by this one. */
static int supersede(struct ana_loader *ld, sqlite3 *db, const char *path, const char *name,
		     int64_t key, int *covered)
{
	sqlite3_stmt *q;
	int ret = 0, rc = SQLITE_DONE, nrows = 0, ncovered = 0;

	if (sqlite3_prepare_v2(db, "SELECT host, start_ns, whole FROM files", -1, &q, NULL) !=
	    SQLITE_OK) {
		set_err(ld, "%s: reading files: %s", path, sqlite3_errmsg(db));
		return -EINVAL;
	}
	while (!ret && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t whole = 0;
		int partial = !sqlite3_column_int64(q, 2);

		nrows++;
		if (!(ret = other_loads(ld, name, q, key, &whole)) && partial && whole)
			ncovered++;
	}
	if (!ret && rc != SQLITE_DONE) {
		set_err(ld, "%s: reading files: %s", path, sqlite3_errmsg(db));
		ret = -EINVAL;
	}
	sqlite3_finalize(q);
	*covered = nrows && ncovered == nrows;
	return ret;
}

/* ana_loader_load_db; session, when not NULL, is the files rows' session
 * (the name the whole dataset gives the file's session, where its own
 * database, made of the file alone, names it after the file). */
static int load_db(struct ana_loader *ld, const char *path, const char *session,
		   struct ana_load_stats *st)
{
	char first[512], sql[256], line[1024];
	int64_t key, have, samples;
	sqlite3 *db = NULL;
	int ret;

	ld->err[0] = '\0';
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		set_err(ld, "%s: cannot open as SQLite: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return db ? -EINVAL : -ENOMEM;
	}
	if ((ret = file_key(ld, db, path, &key, first, sizeof(first), &samples)))
		goto out;
	snprintf(sql, sizeof(sql), "SELECT count() FROM files WHERE file_key = %" PRId64
		 " FORMAT TabSeparated", key);
	if ((ret = ch_int(ld, ld->ch[0], sql, &have)))
		goto out;
	int covered = 0;
	if (!have && (ret = supersede(ld, db, path, first[0] ? first : path, key, &covered)))
		goto out;
	if (have || covered) {
		if (st)
			st->skipped++;
		snprintf(line, sizeof(line), "%s: already loaded%s (%s, file_key %" PRId64 ")",
			 path, covered ? " whole, from a complete copy" : "", first, key);
		note(ld, line);
		goto out;
	}
	struct ana_load_stats mine = { 0 };
	for (size_t i = 0; i < ana_nchtables && !ret; i++) {
		const struct ana_chtable *t = &ana_chtables[i];
		ret = t->per_file ? load_table(ld, db, path, t, key, session, &mine)
				  : load_stacks(ld, db, path, t, &mine);
	}
	if (ret)
		goto out;
	if (st) {
		st->loaded++;
		st->rows += mine.rows;
		st->bytes += mine.bytes;
		st->samples += (uint64_t)samples;
	}
	snprintf(line, sizeof(line), "%s: loaded %" PRIu64 " rows, %" PRIu64 " bytes (%s, file_key %"
		 PRId64 ")", path, mine.rows, mine.bytes, first, key);
	note(ld, line);
out:
	if (ret == -ENOMEM && !ld->err[0])
		set_err(ld, "%s: out of memory", path);
	sqlite3_close(db);
	return ret;
}

int ana_loader_load_db(struct ana_loader *ld, const char *path, struct ana_load_stats *st)
{
	return load_db(ld, path, NULL, st);
}

int ana_load_is_db(const char *path)
{
	static const char magic[16] = "SQLite format 3";   /* and its NUL */
	char head[16];
	FILE *f = fopen(path, "rb");
	int is = f && fread(head, 1, sizeof(head), f) == sizeof(head) &&
		 !memcmp(head, magic, sizeof(head));

	if (f)
		fclose(f);
	return is;
}

/* Whether a writer holds path locked: the collector and the archiver lock
 * a file (flock) for as long as they write it. */
static int held_by_writer(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), held;

	if (fd < 0)
		return 0;
	held = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);
	return held;
}

/* One file of a dataset: its tables into dir/file.sqlite (query.h), then
 * loaded, then the database removed. */
static int load_one(struct ana_loader *ld, const struct ana_dataset_file *f, const char *dir,
		    const struct ana_query_opts *qo, struct ana_load_stats *st)
{
	char db[PATH_MAX], err[512];
	struct ana_dataset *one = NULL;
	struct ana_query *q = NULL;
	char *path = (char *)f->path;
	int ret;

	if (snprintf(db, sizeof(db), "%s/file.sqlite", dir) >= (int)sizeof(db)) {
		set_err(ld, "%s/file.sqlite: path too long (TMPDIR)", dir);
		return -ENAMETOOLONG;
	}
	if ((ret = ana_dataset_open(&one, &path, 1, NULL))) {
		set_err(ld, "%s: out of memory", f->path);
		return ret;
	}
	if (one->nfiles != 1) {
		set_err(ld, "%s: %s", f->path, one->nskipped ? prec_strerror(one->skipped[0].err)
							     : "no longer readable");
		ret = -EINVAL;
		goto out;
	}
	err[0] = '\0';
	if ((ret = ana_query_new(&q, one, qo)) ||
	    (ret = ana_query_write_db(q, db, err, sizeof(err)))) {
		set_err(ld, "%s: %s", f->path, err[0] ? err : prec_strerror(ret));
		goto out;
	}
	ret = load_db(ld, db, f->session, st);
out:
	unlink(db);   /* also what a failed write left */
	ana_query_free(q);
	ana_dataset_free(one);
	return ret;
}

int ana_loader_load_prec(struct ana_loader *ld, char *const *inputs, size_t n,
			 const struct ana_query_opts *qo, struct ana_load_stats *st)
{
	struct ana_dataset *ds = NULL;
	char dir[PATH_MAX], line[1024];
	const char *tmp = getenv("TMPDIR");
	int ret;

	ld->err[0] = '\0';
	if ((ret = ana_dataset_open(&ds, inputs, n, NULL))) {
		set_err(ld, "out of memory listing the inputs");
		return ret;
	}
	for (size_t i = 0; i < ds->nskipped; i++) {
		snprintf(line, sizeof(line), "%s: skipped: %s", ds->skipped[i].path,
			 prec_strerror(ds->skipped[i].err));
		note(ld, line);
	}
	if (st)
		st->unreadable += ds->nskipped;
	snprintf(dir, sizeof(dir), "%s/perfrec-load-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		ret = -errno;
		set_err(ld, "cannot make a temporary directory %s: %s", dir, strerror(-ret));
		goto out;
	}
	for (size_t i = 0; i < ds->nfiles && !ret; i++) {
		const struct ana_dataset_file *f = &ds->files[i];
		if (f->state != ANA_FILE_WHOLE && held_by_writer(f->path)) {
			/* its content would change under its key: loaded when complete */
			snprintf(line, sizeof(line), "%s: not loaded: still being written (no "
				 "SessionEnd, and its writer holds it locked); load it once its "
				 "recording ended", f->path);
			note(ld, line);
			if (st)
				st->open++;
			continue;
		}
		if (f->state != ANA_FILE_WHOLE) {
			/* a recorder that crashed, a host that lost power, a torn
			 * copy: what it holds is data, read as every command reads it */
			snprintf(line, sizeof(line), "warning: %s: %s: its %zu whole frames are "
				 "loaded, as a file with whole = 0", f->path,
				 f->state == ANA_FILE_TORN ? "torn tail (cut short inside a frame)"
							   : "no SessionEnd (its recorder "
							     "stopped without ending it)", f->nframes);
			note(ld, line);
			if (st)
				st->partial++;
		}
		ret = load_one(ld, f, dir, qo, st);
	}
	rmdir(dir);
out:
	ana_dataset_free(ds);
	return ret;
}
