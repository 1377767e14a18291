/*
 * merge.h - every packet of a file in global time order.
 *
 * Frames of different streams (CPUs) overlap in time. The merger sorts the
 * frame list by (t_min, seq) from the index, loads frames in that order
 * (decoded in parallel by ana_frames, which finds each frame's runs of
 * packets in time order: a stream's frame interleaves its CPUs' batches)
 * and pops packets from a heap of cursors, one per run, so no frame is
 * sorted or copied. A packet at time t
 * is only returned once every frame with t_min <= t is loaded, so the order
 * is global; memory holds only the frames whose time ranges overlap the
 * current time (plus the decode lookahead), not the file.
 *
 * Order of equal times: (time, stream, frame seq, position in frame), so
 * the output is the same for any --jobs.
 *
 * How to use:
 *
 *   struct ana_merge *m = ana_merge_new(reader, list, n, &frames_opts);
 *   const struct prec_packet *p;
 *   while ((ret = ana_merge_next(m, &p)) > 0) ...   // p valid until next call
 *   ana_merge_free(m);
 *
 * Damaged frames are skipped after the packets that decoded; each is
 * reported once through the ana_merge_on_damage() callback, in the order
 * the merge loads them.
 */
#ifndef ANA_MERGE_H
#define ANA_MERGE_H

#include "analyzer/read/frames.h"

struct ana_merge;
struct ana_trace;

/* list is copied. Returns NULL and sets errno. */
struct ana_merge *ana_merge_new(struct prec_reader *r,
				const struct prec_frame_info *list, size_t n,
				const struct ana_frames_opts *opts);
/* 1 and *p, 0 at the end, < 0 on failure (-ENOMEM). */
int ana_merge_next(struct ana_merge *m, const struct prec_packet **p);
/* Called for each damaged frame as the merger meets it (may be NULL). */
void ana_merge_on_damage(struct ana_merge *m,
			 void (*cb)(void *ctx, const struct prec_frame_info *fi, int err),
			 void *ctx);
/* ana_merge_new() over frames of s (list as ana_trace_select() gives
 * it) that notes each damaged frame in s (ana_trace_note_damage()), as
 * every pass over a trace does. */
struct ana_merge *ana_merge_trace(struct ana_trace *s, const struct prec_frame_info *list,
				  size_t n, const struct ana_frames_opts *opts);
/* Frames delivered so far / in total (for progress). */
void ana_merge_progress(const struct ana_merge *m, size_t *done, size_t *total);
/* Most frames held at once so far (see ana_frames_buffers()). */
size_t ana_merge_buffers(struct ana_merge *m);
void ana_merge_free(struct ana_merge *m);

#endif
