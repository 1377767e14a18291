/*
 * schema.h - the fleet's tables in ClickHouse: their columns (named and
 * typed as docs/query.md's SQL tables, see docs/fleet.md), where each
 * one's rows come from in a SQLite database of those tables (`query
 * --db`), and the DDL that makes them.
 *
 * Every table is a MergeTree table NAME_local on each shard and a
 * Distributed table NAME over them: queries and inserts use NAME. Per-file
 * tables start with file_key, the loaded file's identity (load.h), and
 * are sharded by host, so one host's rows (and one file's) live on one
 * shard. stacks is shared by all files: a ReplacingMergeTree sharded by
 * stack_id, so a stack loaded from two files is one row once merged (and
 * the loader inserts only the stacks the cluster lacks).
 */
#ifndef ANA_LOAD_SCHEMA_H
#define ANA_LOAD_SCHEMA_H

#include <stddef.h>

enum ana_coltype { ANA_COL_I64, ANA_COL_F64, ANA_COL_STR };

struct ana_col {
	const char *name;
	enum ana_coltype type;
	/* Nullable(T): the SQL tables' NULL (a task's start before the
	 * recording, a counter never scheduled) stays NULL. A column of the
	 * sort key cannot be Nullable in ClickHouse: a NULL there stores as
	 * 0 or ''. */
	int nullable;
};

struct ana_chtable {
	const char *name;
	const char *select;      /* SQLite: the columns (after file_key) in order */
	const char *count;       /* SQLite: how many rows select gives */
	const struct ana_col *cols;
	size_t ncols;
	int per_file;            /* rows keyed by file_key (stacks: shared) */
	const char *engine, *partition, *order, *shard;
};

/* The tables in load order: stacks first, files (the per-file marker) last. */
extern const struct ana_chtable ana_chtables[];
extern const size_t ana_nchtables;

/* The table named name, or NULL. */
const struct ana_chtable *ana_chtable_find(const char *name);

/*
 * The CREATE statements of table t: local (MergeTree, NAME_local) when
 * distributed is 0, else the Distributed table NAME over cluster (a
 * remote_servers entry of the server's config). Both IF NOT EXISTS.
 * Written into buf; 0, or -ENAMETOOLONG when bufsz is too small,
 * -EINVAL when cluster is not a plain identifier.
 */
int ana_chtable_ddl(const struct ana_chtable *t, int distributed, const char *cluster,
		    char *buf, size_t bufsz);

/*
 * The INSERT of table t's rows in RowBinary, its columns named in the
 * order the rows carry them (file_key first when per-file): a table an
 * older loader made without one of them is refused by the server, naming
 * the column, instead of reading the rows' bytes in the wrong places.
 * Written into buf; 0, or -ENAMETOOLONG when bufsz is too small.
 */
int ana_chtable_insert(const struct ana_chtable *t, char *buf, size_t bufsz);

#endif
