/*
 * test_query.c - perfrec-analyze query over tracegen's traces: the
 * tables say what the reports say, a window reads only its frames, and a
 * query only reads.
 *
 * The traces (tests/lib/tracegen.h): the golden timeline, repeated for
 * the window test, with off-CPU data, with CPU0's counter reads before
 * CPU1's, with hostile names, and a dataset of two hosts whose first host
 * is two rotated files.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "analyzer/query/query.h"
#include "analyzer/read/dataset.h"
#include "analyzer/render/table.h"
#include "lib/anatest.h"
#include "lib/tracegen.h"

static const char *dir;

static int setup(void **state)
{
	(void)state;
	dir = anatest_tmpdir("query");
	if (!dir)
		return -1;
	char p[4096];
	struct tracegen_opts o = TRACEGEN_OPTS_INIT;
	o.by_kind = 1;
	snprintf(p, sizeof(p), "%s/golden.prec", dir);
	if (tracegen_write(p, &o))
		return -1;
	/* 1 s of timeline in frames of at most 2 KiB: many frames */
	o.repeat = 10;
	o.frame_size = 2048;
	snprintf(p, sizeof(p), "%s/long.prec", dir);
	if (tracegen_write(p, &o))
		return -1;
	o = (struct tracegen_opts)TRACEGEN_OPTS_INIT;
	o.offcpu = 1;
	snprintf(p, sizeof(p), "%s/offcpu.prec", dir);
	if (tracegen_write(p, &o))
		return -1;
	o = (struct tracegen_opts)TRACEGEN_OPTS_INIT;
	o.skew_reads = 1;
	snprintf(p, sizeof(p), "%s/skew.prec", dir);
	if (tracegen_write(p, &o))
		return -1;
	o = (struct tracegen_opts)TRACEGEN_OPTS_INIT;
	o.hostile = 1;
	snprintf(p, sizeof(p), "%s/hostile.prec", dir);
	if (tracegen_write(p, &o))
		return -1;
	/* ds/a: host a as two rotated files, ds/b: host b, later */
	o = (struct tracegen_opts)TRACEGEN_OPTS_INIT;
	snprintf(p, sizeof(p), "mkdir -p %s/ds/a %s/ds/b", dir, dir);
	if (system(p))
		return -1;
	o.host = "a";
	o.rotated = 1;
	snprintf(p, sizeof(p), "%s/ds/a/s.1.prec", dir);
	if (tracegen_write(p, &o))
		return -1;
	o.rotated = 0;
	o.offset_ns = 100000000ull;
	snprintf(p, sizeof(p), "%s/ds/a/s.2.prec", dir);
	if (tracegen_write(p, &o))
		return -1;
	o.host = "b";
	o.offset_ns = 5000000000ull;
	o.repeat = 2;
	snprintf(p, sizeof(p), "%s/ds/b/s.prec", dir);
	return tracegen_write(p, &o) ? -1 : 0;
}

/* Runs perfrec-analyze with args in the scratch dir: its stdout
 * (malloc'd), its exit status in *status, its stderr in *err (may be
 * NULL). */
static char *run(const char *args, int *status, char **err)
{
	char *out = NULL, *e = NULL;
	size_t len;
	*status = anatest_run(dir, args, &out, &len, &e);
	assert_non_null(out);
	if (err)
		*err = e;
	else
		free(e);
	return out;
}

static char *run_ok(const char *args)
{
	int status;
	char *err;
	char *out = run(args, &status, &err);
	if (status != 0)
		fprintf(stderr, "`%s` exited %d: %s\n", args, status, err);
	assert_int_equal(status, 0);
	free(err);
	return out;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rows of a CSV section (after its header line, to the next empty
 * line), each cut to the fields listed in `fields` (0-based, e.g. "1,3"),
 * sorted, joined by newlines (malloc'd). section NULL: the first
 * section, no "# name". */
static char *csv_rows(const char *csv, const char *section, const char *fields)
{
	int want[16], nwant = 0;
	for (const char *f = fields; *f && nwant < 16; f += strcspn(f, ",") + (f[strcspn(f, ",")] != 0))
		want[nwant++] = atoi(f);
	const char *p = csv;
	if (section) {
		char head[128];
		snprintf(head, sizeof(head), "# %s\n", section);
		p = strstr(csv, head);
		assert_non_null(p);
		p += strlen(head);
	}
	p = strchr(p, '\n');   /* the column names */
	assert_non_null(p);
	p++;
	char **rows = NULL;
	size_t nrows = 0;
	while (*p && *p != '\n') {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		/* fields by commas outside quotes */
		size_t start[64], stop[64];
		int nf = 0, q = 0;
		start[0] = 0;
		for (size_t i = 0; i <= len && nf < 63; i++) {
			if (i < len && p[i] == '"')
				q = !q;
			if (i == len || (p[i] == ',' && !q)) {
				stop[nf++] = i;
				start[nf] = i + 1;
			}
		}
		char *row = calloc(1, len + 2);
		assert_non_null(row);
		for (int k = 0; k < nwant; k++) {
			assert_true(want[k] < nf);
			if (k)
				strcat(row, ",");
			strncat(row, p + start[want[k]], stop[want[k]] - start[want[k]]);
		}
		rows = realloc(rows, (nrows + 1) * sizeof(*rows));
		assert_non_null(rows);
		rows[nrows++] = row;
		p += len + (e != NULL);
	}
	qsort(rows, nrows, sizeof(*rows), cmp_str);
	size_t total = 1;
	for (size_t i = 0; i < nrows; i++)
		total += strlen(rows[i]) + 1;
	char *s = calloc(1, total);
	assert_non_null(s);
	for (size_t i = 0; i < nrows; i++) {
		strcat(s, rows[i]);
		strcat(s, "\n");
		free(rows[i]);
	}
	free(rows);
	return s;
}

/* The fields of report_args's rows section equal the rows of query_args
 * (all its columns, in order), as sets. */
static void assert_same_rows(const char *report_args, const char *section, const char *fields,
			     const char *query_args, const char *qfields)
{
	char *r = run_ok(report_args);
	char *q = run_ok(query_args);
	char *a = csv_rows(r, section, fields), *b = csv_rows(q, NULL, qfields);
	assert_true(strlen(a) > 0);
	if (strcmp(a, b))
		fprintf(stderr, "report:\n%s\nquery:\n%s\n", a, b);
	assert_string_equal(a, b);
	free(a);
	free(b);
	free(r);
	free(q);
}

/* sum(period) by sym, by (comm, dso, sym), and over a dataset of two
 * hosts (one of them rotated) by (host, sym): as report counts them. */
static void test_samples_equal_report(void **state)
{
	(void)state;
	assert_same_rows("report golden.prec -s sym --csv", "rows", "1,2,3",
			 "query 'SELECT count(*), sum(period), sym FROM samples GROUP BY sym' "
			 "golden.prec --csv", "0,1,2");
	assert_same_rows("report golden.prec -s comm,dso,sym --csv", "rows", "1,2,3,4,5",
			 "query 'SELECT count(*), sum(period), comm, dso, sym FROM samples "
			 "GROUP BY comm, dso, sym' golden.prec --csv", "0,1,2,3,4");
	assert_same_rows("report ds -s host,sym --csv", "rows", "1,2,3,4",
			 "query 'SELECT count(*), sum(period), host, sym FROM samples "
			 "GROUP BY host, sym' ds --csv", "0,1,2,3");
	assert_same_rows("report ds -s host,comm,pid --csv", "rows", "1,2,3,4,5",
			 "query 'SELECT count(*), sum(period), host, comm, pid FROM samples "
			 "GROUP BY host, comm, pid' ds --csv", "0,1,2,3,4");
	/* off-CPU time by tid as report --off-cpu (ms, 3 decimals) */
	assert_same_rows("report offcpu.prec --off-cpu -s tid --csv", "rows", "1,3",
			 "query 'SELECT printf(\"%.3f\", sum(end_ns - start_ns) / 1e6), tid "
			 "FROM offcpu GROUP BY tid' offcpu.prec --csv", "0,1");
}

/* Every sample's stack is in stacks, its leaf (depth 0) named as the
 * sample's sym and dso; files lists the dataset's files. */
static void test_stacks_and_files(void **state)
{
	(void)state;
	char *out = run_ok("query 'SELECT count(*) FROM samples s WHERE NOT EXISTS "
			   "(SELECT 1 FROM stacks k WHERE k.stack_id = s.stack_id AND "
			   "k.depth = 0 AND k.sym = s.sym AND k.dso = s.dso); "
			   "SELECT count(*) > 0, count(DISTINCT stack_id) = count(*) FROM stacks "
			   "WHERE depth = 0; SELECT count(*) FROM samples WHERE stack_id = 0' "
			   "golden.prec --csv");
	assert_string_equal(out, "# rows\ncount(*)\n0\n\n# rows2\n"
			    "count(*) > 0,count(DISTINCT stack_id) = count(*)\n1,1\n\n"
			    "# rows3\ncount(*)\n0\n");
	free(out);
	/* ids are content hashes: the same in another dataset holding the file */
	char *a = run_ok("query 'SELECT DISTINCT stack_id FROM samples ORDER BY 1' golden.prec --csv");
	char *b = run_ok("query 'SELECT DISTINCT stack_id FROM samples WHERE host = \"golden-host\" "
			 "ORDER BY 1' golden.prec offcpu.prec --csv");
	assert_string_equal(a, b);
	free(a);
	free(b);
	out = run_ok("query 'SELECT host, count(*), sum(whole), sum(samples) FROM files "
		     "GROUP BY host ORDER BY host' ds --csv");
	char *info = run_ok("query 'SELECT host, count(*) FROM samples GROUP BY host "
			    "ORDER BY host' ds --csv");
	/* files.samples is what each file's end says: 80 per timeline */
	assert_string_equal(out, "host,count(*),sum(whole),sum(samples)\n"
			    "a,2,2,160\nb,1,1,160\n");
	assert_string_equal(info, "host,count(*)\na,160\nb,160\n");
	free(out);
	free(info);
}

/* Per-thread on-CPU time from switches, as sched counts it: each
 * switch's next task runs until the CPU's next switch (or the end of the
 * host's last file), and the task a CPU's first switch takes off it ran
 * since the file started. tracegen writes a switch's out and in records at one instant,
 * so the times are equal to the ns. */
#define ONCPU_SQL \
	"WITH w AS (SELECT *, lead(time_ns) OVER (PARTITION BY host, cpu ORDER BY time_ns) " \
	"AS nxt, row_number() OVER (PARTITION BY host, cpu ORDER BY time_ns) AS rn, " \
	"(SELECT max(end_ns) FROM files f WHERE f.host = switches.host) AS last FROM switches), " \
	"iv AS (SELECT host, next_tid AS tid, coalesce(nxt, last) - time_ns AS d FROM w " \
	"UNION ALL SELECT host, prev_tid, time_ns - (SELECT min(start_ns) FROM files f " \
	"WHERE f.host = w.host) FROM w WHERE rn = 1) " \
	"SELECT tid, printf(\"%.3f\", sum(d) / 1e6) FROM iv WHERE tid != 0 GROUP BY host, tid"

/* Counters' final values as `counters` gives them: each instance's (cpu,
 * pid) last read, summed over the instances. */
#define LAST_CTE \
	"WITH last AS MATERIALIZED (SELECT host, event, cpu, pid, max(time_ns) AS t " \
	"FROM counters GROUP BY host, event, cpu, pid) "
#define LAST_JOIN \
	"FROM counters c JOIN last l ON c.host = l.host AND c.event = l.event AND " \
	"c.cpu = l.cpu AND c.pid = l.pid AND c.time_ns = l.t "
#define FINAL_SQL LAST_CTE "SELECT c.event, sum(c.value), sum(c.scaled) " LAST_JOIN \
	"GROUP BY c.event"

/* The golden timeline's switches, counters, losses and tasks, as sched,
 * counters and info count them. */
static void test_other_tables(void **state)
{
	(void)state;
	assert_same_rows("sched golden.prec --csv", "tasks", "2,3",
			 "query '" ONCPU_SQL "' golden.prec --csv", "0,1");
	/* final values: each instance's last read, summed (counters) */
	assert_same_rows("counters golden.prec --csv", "counters", "1,2,3",
			 "query '" FINAL_SQL "' golden.prec --csv", "0,1,2");
	char *q = run_ok("query 'SELECT kind, sum(count) FROM losses GROUP BY kind' "
			 "golden.prec --csv");
	assert_string_equal(q, "kind,sum(count)\nkernel_lost,5\n");
	free(q);
	/* tasks: pid 100's thread 101 forked during the trace, the others
	 * existed before it; none exited */
	q = run_ok("query 'SELECT pid, tid, comm, start_ns IS NOT NULL, end_ns IS NOT NULL "
		   "FROM tasks ORDER BY tid' golden.prec --csv");
	assert_string_equal(q, "pid,tid,comm,start_ns IS NOT NULL,end_ns IS NOT NULL\n"
			    "100,100,pingpong,0,0\n100,101,pong,1,0\n200,200,bash,0,0\n");
	free(q);
}

/* Reads of one group on two CPUs at different times (CPU0 1 ms before
 * CPU1): each instance is a row of its own, and the final values per
 * instance, and summed, are what counters reads; an event's last read
 * alone would miss CPU0's. */
static void test_counters_per_cpu(void **state)
{
	(void)state;
	assert_same_rows("counters skew.prec --csv", "counters", "1,2,3",
			 "query '" FINAL_SQL "' skew.prec --csv", "0,1,2");
	/* tracegen.c's final reads: task-clock 48 and 30 ms, 8 and 5
	 * context switches, cycles never ran (scaled NULL) */
	char *q = run_ok("query '" LAST_CTE "SELECT c.event, c.cpu, c.pid, c.value, c.scaled "
			 LAST_JOIN "ORDER BY c.event, c.cpu' skew.prec --csv");
	assert_string_equal(q, "event,cpu,pid,value,scaled\n"
			    "context-switches,0,-1,8,8\ncontext-switches,1,-1,5,10\n"
			    "cycles,0,-1,0,\ncycles,1,-1,0,\n"
			    "task-clock,0,-1,48000000,48000000\n"
			    "task-clock,1,-1,30000000,60000000\n");
	free(q);
	/* CPU0's reads are 1 ms before CPU1's: 8 read times, not golden's 4 */
	q = run_ok("query 'SELECT cpu, count(*), count(DISTINCT time_ns) FROM counters "
		   "WHERE event = \"task-clock\" GROUP BY cpu; SELECT count(DISTINCT time_ns) "
		   "FROM counters' skew.prec --csv");
	assert_string_equal(q, "# rows\ncpu,count(*),count(DISTINCT time_ns)\n0,4,4\n1,4,4\n\n"
			    "# rows2\ncount(DISTINCT time_ns)\n8\n");
	free(q);
	/* an event's last read alone finds only CPU1's instance */
	q = run_ok("query 'WITH last AS MATERIALIZED (SELECT event, max(time_ns) AS t "
		   "FROM counters GROUP BY event) SELECT sum(c.value) FROM counters c JOIN last l "
		   "ON c.event = l.event AND c.time_ns = l.t WHERE c.event = \"task-clock\"' "
		   "skew.prec --csv");
	assert_string_equal(q, "sum(c.value)\n30000000\n");
	free(q);
	/* cpu = reaches the scan */
	q = run_ok("query 'SELECT count(*), min(cpu), max(cpu) FROM counters WHERE cpu = 1' "
		   "skew.prec --csv");
	assert_string_equal(q, "count(*),min(cpu),max(cpu)\n12,1,1\n");
	free(q);
}

/* offcpu.count: an interval is one block, a kernel sum its blocks
 * (tracegen.c: tid 101's sum of 50, tid 200's of 10). */
static void test_offcpu_count(void **state)
{
	(void)state;
	char *q = run_ok("query 'SELECT tid, count(*), sum(count) FROM offcpu GROUP BY tid "
			 "ORDER BY tid' offcpu.prec --csv");
	assert_string_equal(q, "tid,count(*),sum(count)\n100,2,2\n101,2,51\n200,1,10\n");
	free(q);
}

static uint64_t stat_frames(const char *err)
{
	unsigned long long n = 0;
	const char *p = strstr(err, "frames_read=");
	if (!p || sscanf(p, "frames_read=%llu", &n) != 1)
		fail_msg("no stats line in: %s", err);
	return n;
}

/* A window on time_ns reads only its frames, and finds what a full scan
 * with the same condition (hidden from the reader) finds. */
static void test_window(void **state)
{
	(void)state;
	int status;
	char *err;
	char *range = run_ok("query 'SELECT min(time_ns), max(time_ns) FROM samples' long.prec --csv");
	long long lo, hi;
	assert_int_equal(sscanf(strchr(range, '\n') + 1, "%lld,%lld", &lo, &hi), 2);
	free(range);
	long long a = lo + (hi - lo) * 4 / 10, b = lo + (hi - lo) * 5 / 10;
	char args[512];
	snprintf(args, sizeof(args), "query 'SELECT count(*), sum(period) FROM samples' "
		 "long.prec --csv --stats");
	char *full = run(args, &status, &err);
	assert_int_equal(status, 0);
	uint64_t nfull = stat_frames(err);
	free(err);
	free(full);
	snprintf(args, sizeof(args), "query 'SELECT count(*), sum(period) FROM samples "
		 "WHERE time_ns BETWEEN %lld AND %lld' long.prec --csv --stats", a, b);
	char *win = run(args, &status, &err);
	assert_int_equal(status, 0);
	uint64_t nwin = stat_frames(err);
	free(err);
	snprintf(args, sizeof(args), "query 'SELECT count(*), sum(period) FROM samples "
		 "WHERE time_ns + 0 BETWEEN %lld AND %lld' long.prec --csv --stats", a, b);
	char *scan = run(args, &status, &err);
	assert_int_equal(status, 0);
	assert_int_equal(stat_frames(err), nfull);
	free(err);
	assert_string_equal(win, scan);
	assert_true(strcmp(win, "count(*),sum(period)\n0,\n"));
	/* a tenth of the time in at most ~1.5 tenths of the frames (frames
	 * straddle the window's edges) */
	assert_true(nfull >= 20);
	assert_true(nwin * 10 <= nfull * 15 / 10 + 20);
	free(win);
	free(scan);
	/* statements after the first reuse the file's trace: pass 1 once */
	char *two = run("query 'SELECT count(*) FROM samples; SELECT count(*) FROM switches; "
			"SELECT count(*) FROM stacks' long.prec --stats", &status, &err);
	assert_int_equal(status, 0);
	assert_non_null(strstr(err, "files_opened=1 "));
	free(two);
	free(err);
	/* host and cpu reach the reader too; results as without */
	char *h = run_ok("query 'SELECT count(*) FROM samples WHERE host = \"b\" AND cpu = 1' ds --csv");
	char *h2 = run_ok("query 'SELECT count(*) FROM samples WHERE host || \"\" = \"b\" AND "
			  "cpu + 0 = 1' ds --csv");
	assert_string_equal(h, h2);
	free(h);
	free(h2);
}

/* A query only reads; SQL errors are SQLite's, exit 2. */
static void test_read_only(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"ATTACH \"x.db\" AS x", "DELETE FROM samples", "CREATE TABLE t(a)",
		"PRAGMA journal_mode=WAL", "SELECT load_extension(\"x\")", "SELEC 1",
		"SELECT nosuch FROM samples", "INSERT INTO samples(host) VALUES(1)",
		"CREATE TEMP VIEW v AS SELECT 1", "DROP VIEW profile",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char args[256];
		int status;
		char *err;
		snprintf(args, sizeof(args), "query '%s' golden.prec", bad[i]);
		char *out = run(args, &status, &err);
		assert_int_equal(status, 2);
		assert_non_null(strstr(err, "SQL error: "));
		free(out);
		free(err);
	}
	char p[4096];
	snprintf(p, sizeof(p), "%s/x.db", dir);
	assert_null(fopen(p, "r"));
	char *out = run_ok("query 'PRAGMA table_info(samples)' golden.prec --csv");
	assert_non_null(strstr(out, "stack_id,INTEGER"));
	free(out);
}

/* Trace strings are escaped as every output escapes them. */
static void test_hostile(void **state)
{
	(void)state;
	char *out = run_ok("query 'SELECT DISTINCT comm, sym FROM samples' hostile.prec --csv");
	assert_null(strchr(out, '\x1b'));
	assert_null(strchr(out, '\r'));
	free(out);
	out = run_ok("query 'SELECT DISTINCT comm, sym FROM samples' hostile.prec");
	assert_null(strchr(out, '\x1b'));
	free(out);
	out = run_ok("query 'SELECT DISTINCT comm, host FROM samples' hostile.prec --json");
	assert_null(strchr(out, '\x1b'));
	assert_non_null(strstr(out, "\\u001b"));
	free(out);
}

static int64_t count_rows(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	int64_t n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* --db: the same tables, rows and types in a file SQLite opens. */
static void test_db(void **state)
{
	(void)state;
	char *out = run_ok("query --db out.sqlite ds");
	free(out);
	char p[4096];
	snprintf(p, sizeof(p), "%s/out.sqlite", dir);
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	static const char *const tables[] = { "samples", "stacks", "switches", "offcpu",
					      "counters", "tasks", "losses", "files", "profile" };
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		char sql[256], args[512];
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", tables[i]);
		snprintf(args, sizeof(args), "query '%s' ds --csv", sql);
		char *q = run_ok(args);
		long long n = atoll(strchr(q, '\n') + 1);
		assert_int_equal(count_rows(db, sql), n);
		free(q);
	}
	assert_int_equal(count_rows(db, "SELECT sum(samples) FROM profile"),
			 count_rows(db, "SELECT count(*) FROM samples"));
	assert_int_equal(count_rows(db, "SELECT count(*) FROM pragma_table_info('samples') "
				    "WHERE name = 'time_ns' AND type = 'INTEGER'"), 1);
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_equal_report),
		cmocka_unit_test(test_stacks_and_files),
		cmocka_unit_test(test_other_tables),
		cmocka_unit_test(test_counters_per_cpu),
		cmocka_unit_test(test_offcpu_count),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_read_only),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_db),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
