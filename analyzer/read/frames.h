/*
 * frames.h - decodes a list of frames, in parallel, delivered in order.
 *
 * The analyzer's one way to read frames. jobs - 1 worker threads load,
 * decompress and decode frames ahead of the consumer (at most `lookahead`
 * frames past the oldest one not yet delivered); the consumer receives them
 * strictly in list order, so whatever it computes is identical to the
 * single-threaded path. When the frame it needs next has not been taken by
 * a worker, ana_frames_next() loads it in the caller's thread (jobs <= 1:
 * always), so the consumer never sleeps on work nobody started. Workers
 * that ran a full lookahead ahead sleep until half of it is consumed, and
 * the consumer is woken only for the frame it waits for: a few wake-ups per
 * lookahead, not per frame, which matters for traces of many small frames.
 *
 * How to use:
 *
 *   struct ana_frames_opts o = { .jobs = 4 };
 *   struct ana_frames *af = ana_frames_new(reader, list, n, &o);
 *   struct ana_loaded *lf;
 *   while ((ret = ana_frames_next(af, &lf)) > 0) {
 *       if (lf->err) ... damaged frame (lf->pkts holds what decoded before)
 *       for (i = 0; i < lf->npkts; i++) use lf->pkts[i];
 *       ana_frames_release(af, lf);   // any order, any time before free
 *   }
 *   ana_frames_free(af);
 *
 * Memory is bounded by lookahead + the frames the consumer holds
 * (ana_frames_buffers() <= ana_frames_lookahead() + held).
 * `list` is borrowed and must outlive the object. Damage is NOT counted in
 * the reader: the consumer sees lf->err in order and reports it.
 */
#ifndef ANA_FRAMES_H
#define ANA_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"

struct ana_frames_opts {
	int jobs;           /* worker threads; <= 1 = serial */
	/* Find each frame's runs of packets in time order (lf->runs), for a
	 * consumer that merges them (ana_merge); packets with time 0 that
	 * open a frame then take the time of its first timed packet. */
	int find_runs;
	size_t lookahead;   /* 0 = as many frames as fit 4 MiB of raw bytes
			     * (by the list's average), within
			     * [2 * jobs + 2, 64] */
	/* Packet kinds to decode (PREC_KIND() bits, format/reader.h); the
	 * others are skipped without unpacking. 0 = all. */
	uint64_t kinds;
};

struct ana_loaded {
	const struct prec_frame_info *fi;
	size_t idx;                /* position in the list */
	int err;                   /* 0, or PREC_E_* for a damaged frame */
	struct prec_frame *frame;
	struct prec_packet *pkts;  /* valid until ana_frames_release() */
	size_t npkts, cap;
	/* With find_runs: run k is pkts[runs[k] .. runs[k + 1]), in time
	 * order; runs[nruns] = npkts. */
	size_t *runs;
	size_t nruns, runcap;
	size_t live;               /* the consumer's (ana_merge: runs left) */
	struct ana_loaded *next_free;
	int ready;
};

struct ana_frames;

struct ana_frames *ana_frames_new(struct prec_reader *r,
				  const struct prec_frame_info *list, size_t n,
				  const struct ana_frames_opts *opts);
/* 1 and *out = the next frame in list order; 0 at the end; < 0 (-ENOMEM)
 * on failure. */
int ana_frames_next(struct ana_frames *af, struct ana_loaded **out);
void ana_frames_release(struct ana_frames *af, struct ana_loaded *lf);
void ana_frames_free(struct ana_frames *af);   /* NULL is fine; joins workers */

/* Frame buffers allocated so far: the most frames ever held at once
 * (decoded ahead plus held by the consumer). Tests check it stays small. */
size_t ana_frames_buffers(struct ana_frames *af);

/* The lookahead in use (opts.lookahead or the default). */
size_t ana_frames_lookahead(const struct ana_frames *af);

/* Number of online CPUs (>= 1), for a default --jobs. */
int ana_cpu_count(void);

#endif
