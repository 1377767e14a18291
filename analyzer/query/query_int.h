/*
 * query_int.h - what query.c (the database, the authorizer, output) and
 * tables.c (the virtual tables) share. Internal to analyzer/query/.
 */
#ifndef ANA_QUERY_INT_H
#define ANA_QUERY_INT_H

#include <sqlite3.h>

#include "analyzer/query/query.h"
#include "analyzer/read/strpool.h"
#include "format/base/hashmap.h"

/* One location of a stack kept for the stacks table: names interned in
 * the query's pool, so they outlive the trace they came from. */
struct ana_qloc {
	const char *sym, *dso;
	uint64_t addr;
};

struct ana_qstack {
	size_t first, n;        /* locs[first .. first + n) */
};

struct ana_query {
	sqlite3 *db;
	struct ana_dataset *ds;
	struct ana_query_opts o;
	struct ana_query_stats stats;
	struct ana_strpool pool;
	/* stacks: every stack of the dataset, built by the first scan of
	 * the stacks table (samples and off-CPU records of every file) */
	struct prec_hashmap stacks;   /* int64 stack_id -> struct ana_qstack */
	struct ana_qloc *locs;
	size_t nlocs, cap_locs;
	int stacks_built;
	/* the first failure of a scan (a negative code) and its message,
	 * set by tables.c and reported by ana_query_run() */
	int fail;
	char msg[512];
	char skip_msg[512];     /* the last file skipped and why */
	int denied;             /* the authorizer refused something */
	/* The trace the last scan closed, kept for the next scan of the
	 * same file (another statement, a subquery run again): pass 1 is
	 * not run twice. Damage is counted when it is freed. */
	struct ana_trace *kept;
	size_t kept_file;
	int kept_symbols;
};

/* The tables: name and column declarations, in the order
 * ana_qtables_register() creates them. */
struct ana_qtable_decl {
	const char *name;
	const char *columns;    /* "host TEXT, session TEXT, ..." */
};
extern const struct ana_qtable_decl ana_qtables[];
extern const size_t ana_nqtables;
/* The profile view's query and its columns (--db writes it as a table). */
extern const char ana_qprofile_select[];
extern const char ana_qprofile_columns[];

/* Registers every table as an eponymous virtual table of q->db. */
int ana_qtables_register(struct ana_query *q);
/* Frees the kept trace (counting its damage). */
void ana_qtables_drop_kept(struct ana_query *q);

#endif
