/*
 * dataset.h - many trace files read as one: one timeline per host.
 *
 * The inputs are files and directories (searched for *.prec recursively,
 * so the collector's DIR/<host>/<session>.prec and a daemon's rotated
 * outputs read alike). Each file is probed cheaply -- its header, the
 * index's time ranges and the frame that holds its SessionEnd, never its
 * samples -- and the files are then:
 *
 *   grouped by host (FileHeader.hostname) and ordered by start time;
 *   joined into sessions by format/SPEC.md section 13: a file whose
 *     SessionEnd says "rotated" at T is followed by the file of the same
 *     host whose FileHeader.start_time is T (the same instant, no gap, no
 *     overlap), so the session's files add up to the recording;
 *   read once when the same data is there twice: two files of one host
 *     whose headers name the same recording start (start_time and clock
 *     reference equal to the nanosecond: the same file archived twice, a
 *     `-o` copy beside its collector copy) are one file; the most complete
 *     copy is kept (whole over open over torn, then the larger) and the
 *     other is listed in `dups`, never counted;
 *   skipped, with the cause, when they cannot be read at all (missing,
 *     unreadable, not a .prec file, empty, a directory loop).
 *
 * Reports then open the kept files one at a time (ana_trace_open on
 * files[i].path), so memory stays flat in the number of files; what they
 * keep across files is interned in `pool` (equal names from two files are
 * equal pointers).
 *
 * How to use:
 *
 *   struct ana_dataset *ds;
 *   ret = ana_dataset_open(&ds, inputs, n, &opts);  // lists and probes
 *   for (i = 0; i < ds->nfiles; i++) ... ds->files[i] ...
 *   for (i = 0; i < ds->nskipped; i++) ... report ds->skipped[i] ...
 *   ana_dataset_free(ds);
 *
 * Everything the dataset holds (paths, names) lives until
 * ana_dataset_free(). A probe opens one file at a time and closes it:
 * directories are listed, then closed, before their entries are visited,
 * so the descriptors held stay bounded whatever the tree's size.
 */
#ifndef ANA_DATASET_H
#define ANA_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "analyzer/read/strpool.h"

enum ana_file_state {
	ANA_FILE_WHOLE,     /* SessionEnd and a trailing index */
	ANA_FILE_OPEN,      /* no SessionEnd, ends on a whole record: still
			     * being written (or its writer was killed
			     * between two frames) */
	ANA_FILE_TORN,      /* ends inside a record: cut short */
};

struct ana_dataset_file {
	const char *path;
	const char *host;        /* FileHeader.hostname, "unknown" when absent */
	const char *session;     /* name of the session (stem of its first file) */
	size_t session_no;       /* sessions numbered in dataset order */
	uint64_t start, end;     /* CLOCK_MONOTONIC ns of the host */
	uint64_t wall_start;     /* realtime ns of start, 0 when unknown */
	uint64_t realtime_ns, monotonic_ns;   /* header clock reference */
	uint64_t bytes;
	uint64_t samples;        /* SessionEnd.samples, else sampled frames' packets */
	uint64_t lost;           /* SessionEnd.lost + dropped */
	int state;               /* enum ana_file_state */
	int damaged;             /* damage between frames found by the index walk */
	int rotated;             /* SessionEnd.stop_reason "rotated" */
	int has_end;
	size_t nframes;
};

struct ana_dataset_skip {
	const char *path;
	int err;                 /* negative errno or PREC_E_*; -ELOOP for a
				  * directory already visited */
};

struct ana_dataset_dup {
	const char *path;        /* not read */
	const char *kept;        /* the copy read instead */
};

struct ana_dataset_opts {
	/* Keep only files whose [start, end] meets [lo, hi] (monotonic ns of
	 * their host) when windowed; the others are neither opened by the
	 * reports nor listed. */
	int windowed;
	uint64_t lo, hi;
	/* Wall-clock window instead (realtime ns, each file converted
	 * through its own header's clock reference). */
	int wall;
	/* Hosts to keep (NULL = all). */
	char **hosts;
	size_t nhosts;
};

struct ana_dataset {
	struct ana_dataset_file *files;  /* kept: by host, session, start */
	size_t nfiles;
	struct ana_dataset_skip *skipped;
	size_t nskipped;
	struct ana_dataset_dup *dups;
	size_t ndups;
	size_t nhosts, nsessions;
	size_t outside;                  /* files left out by the window / hosts */
	uint64_t start;                  /* earliest start of a kept file */
	/* Event names of the files probed, each once (EventDesc.name, in
	 * the order first met): a session's files describe the same events */
	const char **events;
	size_t nevents;
	struct ana_strpool pool;
};

/* Lists and probes inputs (files or directories; n = 0 makes an empty
 * dataset, for ana_dataset_probe_mem()). Returns 0, or
 * -ENOMEM with *out NULL; unreadable inputs are skipped, not errors. */
int ana_dataset_open(struct ana_dataset **out, char *const *inputs, size_t n,
		     const struct ana_dataset_opts *opts);
void ana_dataset_free(struct ana_dataset *ds);   /* NULL is fine */

/* Probes one file already in memory (for tests and fuzzing): fills *f
 * (names interned in ds->pool) or returns the cause. */
int ana_dataset_probe_mem(struct ana_dataset *ds, const void *buf, size_t len,
			  const char *name, struct ana_dataset_file *f);

/* A file's monotonic time t as wall-clock realtime ns. */
uint64_t ana_dataset_wall(const struct ana_dataset_file *f, uint64_t t);

#endif
