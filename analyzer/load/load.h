/*
 * load.h - perfrec's aggregated tables into a ClickHouse cluster
 * (`perfrec-analyze load --clickhouse URL`), idempotent and resumable.
 *
 *   struct ana_load_opts o = { .size = sizeof(o), .urls = urls, .nurls = n };
 *   struct ana_loader *ld = ana_loader_new(&o);       // NULL: errno
 *   ana_loader_prepare(ld);                            // tables on every server
 *   ana_loader_load_prec(ld, inputs, n, &qo, &st);     // .prec files, directories
 *   ana_loader_load_db(ld, "t.sqlite", &st);           // or a database
 *   on a negative return: ana_loader_errmsg(ld)
 *   ana_loader_free(ld);
 *
 * The unit of a load is a SQLite database of the SQL tables (docs/query.md)
 * of one .prec file: ana_loader_load_prec writes one per file of the
 * dataset through query.h (a temporary file, removed once loaded), and
 * ana_loader_load_db takes one `query --db` wrote. It is identified by
 * the file_key: a hash of its files rows' host, start_ns, end_ns, bytes
 * and samples (the file's content, not its path or the session name a
 * dataset gave it: a file moved, copied or read in another dataset is the
 * same file; a file that grew is another).
 *
 * A load runs in this order, so that killing it anywhere and running it
 * again stores every row once:
 *   1. a files row with this file_key in the cluster: already loaded, done;
 *   2. stacks the cluster does not hold yet (stacks are shared by files;
 *      ReplacingMergeTree folds a stack two loaders raced to insert);
 *   3. each per-file table: as many rows with this file_key as the
 *      database holds -> already stored by an interrupted load, skipped;
 *      none -> inserted as one block (one INSERT, one part per day, all
 *      on the host's shard: stored whole or not at all); some -> deleted
 *      on every server (ALTER ... DELETE, waited for), then inserted;
 *   4. the files rows last: the marker that says the file is complete.
 * Before 2., the loads of the same recording (a files row of the same
 * host and start_ns, another file_key) are looked up: where one is of a
 * whole file and this file is not (a copy cut short), this one is
 * skipped; loads of files that were not whole (a crashed recorder's file,
 * loaded again once an archiver finished it, or a longer copy) are
 * deleted as 3. deletes, their files rows last, so a recording is stored
 * once, from its most complete file, and a load killed in between leaves
 * the marker that makes the next one delete the rest.
 * Each INSERT carries a query_id made of the file_key and the table, so an
 * insert still running on the server for a killed loader refuses the
 * next one's instead of racing it; and 3. counts a table's rows only once
 * no insert of that id runs (system.processes), so an insert that ends
 * between the count and the next insert is never stored twice.
 */
#ifndef ANA_LOAD_LOAD_H
#define ANA_LOAD_LOAD_H

#include <stddef.h>
#include <stdint.h>

/* The environment variable `load` takes the URLs from when no option
 * names them: /proc/PID/environ is readable by the process's owner only,
 * while every local user reads its command line. perfrec archive hands
 * the URLs to its loads in it (recorder/net/archive_load.c names it too:
 * the recorder links no analyzer code). */
#define ANA_LOAD_URLS_ENV "PERFREC_CLICKHOUSE"

struct ana_load_opts {
	size_t size;                 /* sizeof(struct ana_load_opts) */
	/* Every server of the cluster (HTTP URLs, see chclient.h): the tables
	 * are created on each (there is no ZooKeeper for ON CLUSTER) and a
	 * partial file's rows deleted on each; rows go through urls[0]. */
	const char *const *urls;
	size_t nurls;
	const char *cluster;         /* remote_servers entry; NULL: "perfrec" */
	/* One line per loaded or skipped database (may be NULL). */
	void (*note)(void *ctx, const char *line);
	void *ctx;
};

struct ana_load_stats {
	size_t loaded, skipped;      /* databases stored now / already stored */
	size_t open;                 /* files still being written, not loaded */
	size_t partial;              /* loaded without their end (whole = 0) */
	size_t unreadable;           /* inputs the dataset could not read */
	uint64_t rows;               /* rows inserted */
	uint64_t bytes;              /* RowBinary bytes sent */
	uint64_t samples;            /* the samples the loaded files hold */
};

struct ana_loader;

struct ana_loader *ana_loader_new(const struct ana_load_opts *o);
void ana_loader_free(struct ana_loader *ld);

/* Creates the tables (IF NOT EXISTS) on every server. 0 or negative errno. */
int ana_loader_prepare(struct ana_loader *ld);

/* Loads the database at path; adds to *st (may be NULL). 0 or negative errno:
 * -ECONNREFUSED/-EIO (ClickHouse, chclient.h), -EINVAL (path is not a
 * database of the SQL tables), -ENOMEM. */
int ana_loader_load_db(struct ana_loader *ld, const char *path, struct ana_load_stats *st);

/*
 * Loads every file of the dataset of inputs (files and directories, as
 * every command reads them: copies of one file read once): each through
 * its own database, qo as `query` takes them (may be NULL). A file still
 * being written (not whole, and locked by its writer: the collector's and
 * the archiver's files) is not loaded: its key would change as it grows,
 * so it is named in a note and counted in st->open; load it when its
 * recording has ended. A file without SessionEnd or with a torn tail that
 * nothing writes (its recorder crashed, its copy was cut) is data: its
 * whole frames are loaded, as every command reads them, with whole = 0
 * in its files row, named in a warning note and counted in st->partial;
 * a longer copy loaded later replaces it (above). Inputs that cannot be read are notes too
 * (st->unreadable). The files rows carry the session name the dataset
 * gives (a rotated session's: its first file's), as `query` over the
 * dataset shows it. 0 or negative errno, as ana_loader_load_db.
 */
struct ana_query_opts;
int ana_loader_load_prec(struct ana_loader *ld, char *const *inputs, size_t n,
			 const struct ana_query_opts *qo, struct ana_load_stats *st);

/* Whether path is a SQLite database (its 16-byte header). */
int ana_load_is_db(const char *path);

/* The last error's message, naming the database or URL and the cause. */
const char *ana_loader_errmsg(const struct ana_loader *ld);

#endif
