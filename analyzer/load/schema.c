/*
 * schema.c - see schema.h. The reasons behind each key are docs/fleet.md's
 * ("ClickHouse: the fleet's SQL").
 */
#include "analyzer/load/schema.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* minute as a Date: the partition of a row is its UTC day, so a window of
 * days reads only those days' parts */
#define DAY_OF(col) "toDate(toDateTime(intDiv(" col ", 1000000000)))"

static const struct ana_col stacks_cols[] = {
	{ "stack_id", ANA_COL_I64 }, { "depth", ANA_COL_I64 }, { "sym", ANA_COL_STR },
	{ "dso", ANA_COL_STR }, { "addr", ANA_COL_I64 },
};
static const struct ana_col profile_cols[] = {
	{ "host", ANA_COL_STR }, { "minute", ANA_COL_I64 }, { "comm", ANA_COL_STR },
	{ "pid", ANA_COL_I64 }, { "stack_id", ANA_COL_I64 }, { "samples", ANA_COL_I64 },
	{ "period", ANA_COL_I64 },
};
static const struct ana_col offcpu_cols[] = {
	{ "host", ANA_COL_STR }, { "minute", ANA_COL_I64 }, { "comm", ANA_COL_STR },
	{ "pid", ANA_COL_I64 }, { "tid", ANA_COL_I64 }, { "state", ANA_COL_STR },
	{ "stack_id", ANA_COL_I64 }, { "blocks", ANA_COL_I64 }, { "off_ns", ANA_COL_I64 },
};
static const struct ana_col counters_cols[] = {
	{ "host", ANA_COL_STR }, { "time_ns", ANA_COL_I64 }, { "cpu", ANA_COL_I64 },
	{ "pid", ANA_COL_I64 }, { "event", ANA_COL_STR }, { "group_leader", ANA_COL_STR }, { "value", ANA_COL_I64 }, { "enabled_ns", ANA_COL_I64 },
	{ "running_ns", ANA_COL_I64 }, { "scaled", ANA_COL_F64, 1 },
};
static const struct ana_col tasks_cols[] = {
	{ "host", ANA_COL_STR }, { "pid", ANA_COL_I64 }, { "tid", ANA_COL_I64 },
	{ "comm", ANA_COL_STR }, { "start_ns", ANA_COL_I64, 1 }, { "end_ns", ANA_COL_I64, 1 },
};
static const struct ana_col files_cols[] = {
	{ "host", ANA_COL_STR }, { "session", ANA_COL_STR }, { "path", ANA_COL_STR },
	{ "start_ns", ANA_COL_I64 }, { "end_ns", ANA_COL_I64 }, { "bytes", ANA_COL_I64 },
	{ "samples", ANA_COL_I64 }, { "whole", ANA_COL_I64 },
};

/* offcpu rows summed per minute of their start: what the fleet keeps of
 * off-CPU time (the intervals themselves stay in the files); blocks
 * counts the blocks, of intervals and of the kernel's sums alike */
#define OFFCPU_SUMS \
	"SELECT host, start_ns - start_ns % 60000000000, comm, pid, tid, state, stack_id, " \
	"sum(count), sum(end_ns - start_ns) FROM offcpu GROUP BY 1, 2, 3, 4, 5, 6, 7"

const struct ana_chtable ana_chtables[] = {
	{ "stacks", "SELECT stack_id, depth, sym, dso, addr FROM stacks ORDER BY stack_id, depth",
	  "SELECT count(*) FROM stacks", stacks_cols, N(stacks_cols), 0,
	  "ReplacingMergeTree()", NULL, "stack_id, depth", "intHash64(stack_id)" },
	{ "profile", "SELECT host, minute, comm, pid, stack_id, samples, period FROM profile",
	  "SELECT count(*) FROM profile", profile_cols, N(profile_cols), 1,
	  "MergeTree()", DAY_OF("minute"), "host, minute, comm, stack_id", "cityHash64(host)" },
	{ "offcpu_profile", OFFCPU_SUMS, "SELECT count(*) FROM (" OFFCPU_SUMS ")",
	  offcpu_cols, N(offcpu_cols), 1,
	  "MergeTree()", DAY_OF("minute"), "host, minute, comm, stack_id", "cityHash64(host)" },
	{ "counters", "SELECT host, time_ns, cpu, pid, event, group_leader, value, enabled_ns, "
	  "running_ns, scaled FROM counters", "SELECT count(*) FROM counters", counters_cols, N(counters_cols), 1,
	  "MergeTree()", DAY_OF("time_ns"), "host, event, time_ns", "cityHash64(host)" },
	{ "tasks", "SELECT host, pid, tid, comm, start_ns, end_ns FROM tasks",
	  "SELECT count(*) FROM tasks", tasks_cols, N(tasks_cols), 1,
	  "MergeTree()", NULL, "host, pid, tid", "cityHash64(host)" },
	{ "files", "SELECT host, session, path, start_ns, end_ns, bytes, samples, whole FROM files",
	  "SELECT count(*) FROM files", files_cols, N(files_cols), 1,
	  "MergeTree()", NULL, "host, start_ns, file_key", "cityHash64(host)" },
};
const size_t ana_nchtables = N(ana_chtables);

const struct ana_chtable *ana_chtable_find(const char *name)
{
	for (size_t i = 0; i < ana_nchtables; i++)
		if (!strcmp(ana_chtables[i].name, name))
			return &ana_chtables[i];
	return NULL;
}

static int ident_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/* Appends to buf at *n; -ENAMETOOLONG when it does not fit. */
static int add(char *buf, size_t bufsz, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int add(char *buf, size_t bufsz, size_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(buf + *n, bufsz - *n, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= bufsz - *n)
		return -ENAMETOOLONG;
	*n += (size_t)w;
	return 0;
}

int ana_chtable_insert(const struct ana_chtable *t, char *buf, size_t bufsz)
{
	size_t n = 0;
	int ret = add(buf, bufsz, &n, "INSERT INTO %s (%s", t->name, t->per_file ? "file_key" : "");
	for (size_t i = 0; i < t->ncols && !ret; i++)
		ret = add(buf, bufsz, &n, "%s%s", i || t->per_file ? ", " : "", t->cols[i].name);
	return ret ? ret : add(buf, bufsz, &n, ") FORMAT RowBinary");
}

int ana_chtable_ddl(const struct ana_chtable *t, int distributed, const char *cluster,
		    char *buf, size_t bufsz)
{
	static const char *const types[] = { "Int64", "Float64", "String" };
	size_t n = 0;
	int ret;

#define ADD(...)                                                          \
	do {                                                              \
		if ((ret = add(buf, bufsz, &n, __VA_ARGS__)))             \
			return ret;                                       \
	} while (0)

	if (distributed) {
		if (!ident_ok(cluster))
			return -EINVAL;
		ADD("CREATE TABLE IF NOT EXISTS %s AS %s_local ENGINE = Distributed(%s, "
		    "currentDatabase(), %s_local, %s)", t->name, t->name, cluster, t->name, t->shard);
		return 0;
	}
	ADD("CREATE TABLE IF NOT EXISTS %s_local (", t->name);
	if (t->per_file)
		ADD("file_key Int64, ");
	for (size_t i = 0; i < t->ncols; i++)
		ADD("%s %s%s%s%s", t->cols[i].name, t->cols[i].nullable ? "Nullable(" : "",
		    types[t->cols[i].type], t->cols[i].nullable ? ")" : "", i + 1 < t->ncols ? ", " : "");
	ADD(") ENGINE = %s", t->engine);
	if (t->partition)
		ADD(" PARTITION BY %s", t->partition);
	ADD(" ORDER BY (%s)", t->order);
#undef ADD
	return 0;
}
