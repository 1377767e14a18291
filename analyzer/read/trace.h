/*
 * trace.h - what a whole trace says about itself: pass 1 of every report.
 *
 * Descriptions (FileHeader, EventDesc, GroupDesc, SessionEnd, Notes), task
 * names over time, the symbolizer's inputs, packet counts per kind, losses,
 * time range and damage. Task events may sit in any stream's frames, so
 * everything here is gathered in one full pass before any report
 * aggregates (pass 2).
 *
 * How to use:
 *
 *   struct ana_trace *s;
 *   ret = ana_trace_open(&s, path, &opts);  // opens, indexes, runs pass 1
 *   ... s->frames / s->nframes for pass 2 (ana_frames or ana_merge) ...
 *   ana_trace_comm(s, tid, time);  ana_trace_event_of(s, id);
 *   ana_trace_free(s);
 *
 * Strings returned by the trace (comms, event names) live until
 * ana_trace_free(). Damage found in pass 1 is recorded in s->damage and
 * also reported through opts->on_damage.
 */
#ifndef ANA_TRACE_H
#define ANA_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "format/base/hashmap.h"
#include "analyzer/read/strpool.h"
#include "format/reader.h"
#include "perfrec.pb-c.h"

struct ana_symbols;
struct pass1;

#define ANA_NKINDS 20   /* Packet.data oneof cases 0..19 */
#define ANA_NLOSS 16    /* Loss.Kind values counted (0..15) */

struct ana_trace_opts {
	int jobs;            /* decode threads; <= 1 serial */
	int symbols;         /* feed the symbolizer (report/export need it) */
	/* Skip pass 1: the caller feeds every packet of its own (single)
	 * pass to ana_trace_feed() and calls ana_trace_finish() before
	 * asking for comms or event order. For reports that need names only
	 * at the end (sched, counters, dump, verify). */
	int single_pass;
	const char *symfs;   /* optional --symfs */
	int no_demangle;     /* keep C++/Rust symbol names as recorded */
	int no_cut;          /* keep frame-pointer chains whole (resolve.c) */
	/* Packet kinds pass 1 decodes (PREC_KIND() bits); 0 = all. Other
	 * kinds are skipped without unpacking, and their counts
	 * (kind_count, samples, switches, ...) stay 0: only for reports
	 * that show none of them. */
	uint64_t pass1_kinds;
	/* Kinds left out of pass 1 that the report's own pass reads anyway
	 * (the samples of a report without --time): the first
	 * ana_trace_scan() over all frames that decodes them counts them
	 * as pass 1 would have (kind_count, samples, t_min/t_max, ...), so
	 * the summary is the same and their frames are read once, not
	 * twice. */
	uint64_t deferred_kinds;
	/* Progress of a pass: frames done / total. May be NULL. */
	void (*progress)(void *ctx, const char *what, size_t done, size_t total);
	void *ctx;
	/* Read from memory instead of path (tests, fuzzing): borrowed, must
	 * outlive the trace. path is then only a display name. */
	const void *mem;
	size_t mem_len;
};

struct ana_damage {
	uint64_t offset;
	int err;
};

struct ana_task_comm {     /* one step of a task's name timeline */
	uint32_t tid;
	uint64_t time;
	const char *comm;
};

struct ana_trace {
	const char *path;
	struct prec_reader *reader;
	const struct prec_frame_info *frames;   /* owned by reader */
	size_t nframes;
	struct ana_strpool pool;

	Perfrec__FileHeader *header;     /* owned copies, NULL if absent */
	Perfrec__SessionEnd *end;
	Perfrec__EventDesc **events;     /* sorted by index */
	size_t nevents;
	Perfrec__GroupDesc **groups;     /* sorted by index */
	size_t ngroups;
	struct { int level; const char *text; } *notes;
	size_t nnotes;

	struct prec_hashmap id2event;         /* kernel id -> event position */
	struct ana_task_comm *comms;     /* sorted by (tid, time) */
	size_t ncomms;
	struct prec_hashmap tid2pid;          /* uint32 tid -> uint32 pid */

	uint64_t kind_count[ANA_NKINDS];
	uint64_t unknown_packets;
	uint64_t loss_count[ANA_NLOSS];  /* by Loss.Kind: summed counts */
	uint64_t loss_records[ANA_NLOSS];
	uint64_t samples, switches, throttles;
	/* BPF: off-CPU packets (intervals, sums and their time) and the
	 * in-kernel filter's counts per event position */
	uint64_t offcpu_intervals, offcpu_sums, offcpu_ns;
	struct prec_hashmap filtered;         /* uint32 event index -> ana_filtered */
	uint64_t t_min, t_max;           /* timed packets (time != 0) */
	uint64_t start;                  /* header start_time, else t_min */
	uint64_t good_frames;
	uint64_t bytes_compressed, bytes_raw;

	struct ana_damage *damage;
	size_t ndamage;
	int torn;
	uint64_t torn_offset;
	int index_present, index_rebuilt;

	struct ana_symbols *syms;        /* NULL unless opts.symbols */
	struct pass1 *p1;                /* pass-1 state until finish */
	int windowed;
	uint64_t win_lo, win_hi;
	/* resolve.c caches: symbolizer strings -> interned names, and names
	 * of unresolved frames */
	struct prec_hashmap name_cache, unknown_cache;
	/* user stacks unwound (ustack.c), for the reports' summaries */
	struct {
		uint64_t samples;      /* samples that carried a user stack */
		uint64_t frames;       /* user frames found */
		uint64_t fp_frames;    /* of them through frame pointers */
		uint64_t no_arch;      /* stacks of an architecture without a table */
		uint64_t stops[8];     /* by enum prec_unwind_stop */
	} ustack;
	/* user chains cut at junk frames (resolve.c): chains, entries */
	struct { uint64_t chains, frames; } cut;
	struct ana_trace_opts opts;
	uint64_t scan_kinds;             /* see ana_trace_set_kinds() */
	uint64_t deferred;               /* opts.deferred_kinds not yet counted */
};

struct ana_filtered {
	uint64_t dropped, kept;
};

/* Kinds the trace itself learns from (descriptions, names, losses, the
 * end): a single-pass report decodes these plus its own. */
#define ANA_KINDS_TRACE (PREC_KIND(PERFREC__PACKET__DATA_HEADER) | \
	PREC_KIND(PERFREC__PACKET__DATA_EVENT) | \
	PREC_KIND(PERFREC__PACKET__DATA_GROUP_DESC) | \
	PREC_KIND(PERFREC__PACKET__DATA_NOTE) | \
	PREC_KIND(PERFREC__PACKET__DATA_SESSION_END) | \
	PREC_KIND(PERFREC__PACKET__DATA_LOSS) | \
	PREC_KIND(PERFREC__PACKET__DATA_THROTTLE) | \
	PREC_KIND(PERFREC__PACKET__DATA_FILTERED) | \
	PREC_KIND(PERFREC__PACKET__DATA_TASK))
/* What the symbolizer reads. */
#define ANA_KINDS_SYMBOLS (PREC_KIND(PERFREC__PACKET__DATA_MMAP) | \
	PREC_KIND(PERFREC__PACKET__DATA_TASK) | \
	PREC_KIND(PERFREC__PACKET__DATA_SYMBOLS) | \
	PREC_KIND(PERFREC__PACKET__DATA_UNWIND))

/* Opens path and runs pass 1. Returns 0 or a negative code (errno or
 * PREC_E_*) with *out NULL; the reader's refusal reason is kept. */
int ana_trace_open(struct ana_trace **out, const char *path,
		     const struct ana_trace_opts *opts);
void ana_trace_free(struct ana_trace *s);   /* NULL is fine */

/* Single-pass mode (see opts.single_pass): feed every packet, in any
 * order, then finish once. Finish is also what ana_trace_open() runs
 * after its own pass 1. Event positions handed out before finish refer
 * to arrival order; after finish to index order. */
int ana_trace_feed(struct ana_trace *s, const struct prec_packet *p);
int ana_trace_finish(struct ana_trace *s);

/* Packets lost with damaged frame number i of s->damage, as the index
 * counted them when it was written; -1 when unknown (no index entry). */
int64_t ana_trace_damage_packets(const struct ana_trace *s, size_t i);
/* Sum over all damage with a known count. */
uint64_t ana_trace_lost_packets(const struct ana_trace *s);

/* Records a damaged frame found in pass 2 (deduplicated by offset). */
void ana_trace_note_damage(struct ana_trace *s, uint64_t offset, int err);

/* The comm of tid at time: the last COMM/EXISTING/inherited name at or
 * before time, else the first one known, else "swapper" for tid 0 (the
 * idle task, named as perf names it), else NULL. */
const char *ana_trace_comm(const struct ana_trace *s, uint32_t tid,
			     uint64_t time);
/* The same, never NULL: ":<tid>" (interned in the trace's pool) when
 * no name is known; NULL only on ENOMEM. */
const char *ana_trace_comm_name(struct ana_trace *s, uint32_t tid,
				  uint64_t time);
/* The event position (index into s->events) for a kernel id, or -1. With
 * a single sampling event, id 0 / unknown ids map to it. */
int ana_trace_event_of(const struct ana_trace *s, uint64_t id);
const char *ana_trace_event_name(const struct ana_trace *s, int ev);
/* pid of tid from task events, or tid itself when unknown. */
uint32_t ana_trace_pid_of(const struct ana_trace *s, uint32_t tid);

/* The event position of the off-CPU data (EventDesc.bpf_output), or -1. */
int ana_trace_offcpu_event(const struct ana_trace *s);

/* "runnable", "sleeping", "disk", ... (OffCpu.State in lower case). */
const char *ana_offcpu_state_name(int state);

/* Name of a Packet oneof case ("sample", "context_switch", ...). */
const char *ana_kind_name(int kind);
const char *ana_loss_kind_name(int kind);

/* Restricts later ana_trace_scan() passes to frames whose indexed time
 * range meets [lo, hi] (frames without timed packets always pass). Pass 1
 * always reads every frame of its kinds: names and maps from before the
 * window count. */
void ana_trace_set_window(struct ana_trace *s, uint64_t lo, uint64_t hi);

/* Packet kinds (PREC_KIND() bits) later ana_trace_scan() passes decode:
 * frames that hold none of them are not read at all (format 1.1), other
 * kinds in the frames read are skipped without unpacking; 0 (the
 * default) = all. A single-pass report includes ANA_KINDS_TRACE. */
void ana_trace_set_kinds(struct ana_trace *s, uint64_t kinds);

/* The frames a pass over `kinds` (PREC_KIND() bits, 0 = all) reads, in
 * file order: those whose frame info lists one of `kinds` (InternedData
 * alone does not count) or lists none (a format 1.0 file: any kind).
 * When `windowed`, of those only the frames whose time range meets the
 * window set by ana_trace_set_window(), that hold no timed packet, or
 * that list one of `whole_kinds` (kinds a pass needs from the whole trace
 * whatever the window: descriptions, tasks) or none. *out is s->frames
 * itself when every frame is needed, else a new array the caller frees
 * (free() only when *out != s->frames). Returns 0 or -ENOMEM. */
int ana_trace_select(const struct ana_trace *s, uint64_t kinds, uint64_t whole_kinds,
		       int windowed, const struct prec_frame_info **out, size_t *n);

/* Runs one frame pass in file order: cb for every packet of every good
 * frame (damaged frames are noted in s->damage and skipped after their
 * decodable packets). Returns 0, the first negative cb return, or
 * -ENOMEM. */
int ana_trace_scan(struct ana_trace *s, const char *what,
		     int (*cb)(void *ctx, const struct prec_packet *p), void *ctx);

#endif
