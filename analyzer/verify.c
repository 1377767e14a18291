/*
 * verify.c - frame by frame integrity.
 */
#include "analyzer/verify.h"
#include "analyzer/map.h"

#include <errno.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/frames.h"
#include "analyzer/session.h"
#include "format/error.h"

struct problem {
	uint64_t offset;
	char what[160];
};

static int add_problem(struct problem **p, size_t *n, uint64_t off, const char *what)
{
	struct problem *a = realloc(*p, (*n + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	*p = a;
	a[*n].offset = off;
	snprintf(a[*n].what, sizeof(a[*n].what), "%s", what);
	(*n)++;
	return 0;
}

static int cmp_problem(const void *a, const void *b)
{
	const struct problem *x = a, *y = b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return strcmp(x->what, y->what);
}

int ana_verify_run(struct ana_session *s, int jobs, struct ana_doc *doc, int *whole)
{
	struct problem *pr = NULL;
	size_t npr = 0, good = 0, bad = 0;
	uint64_t packets = 0;
	char msg[160];
	int ret = 0;
	*whole = 0;
	struct ana_frames_opts fo = { .jobs = jobs };
	struct ana_frames *af = ana_frames_new(s->reader, s->frames, s->nframes, &fo);
	if (!af)
		return -ENOMEM;
	struct ana_loaded *lf;
	size_t done = 0;
	while ((ret = ana_frames_next(af, &lf)) > 0) {
		const struct prec_frame_info *fi = lf->fi;
		if (lf->err) {
			bad++;
			if (fi->seq == PREC_SEQ_UNKNOWN)
				snprintf(msg, sizeof(msg), "recovered frame: %s",
					 prec_strerror(lf->err));
			else
				snprintf(msg, sizeof(msg), "frame %" PRIu64 " (stream %" PRIu32
					 "): %s", fi->seq, fi->stream, prec_strerror(lf->err));
			ret = add_problem(&pr, &npr, fi->offset, msg);
		} else {
			good++;
			uint64_t tmin = 0, tmax = 0;
			for (size_t i = 0; i < lf->npkts; i++) {
				uint64_t t = lf->pkts[i].time;
				if (!t)
					continue;
				if (!tmin || t < tmin)
					tmin = t;
				if (t > tmax)
					tmax = t;
			}
			if (fi->seq == PREC_SEQ_UNKNOWN) {
				/* Recovered without its info record (that damage is
				 * listed from the walk): nothing to compare. */
			} else if (lf->npkts != fi->packets) {
				snprintf(msg, sizeof(msg), "frame %" PRIu64 ": index says %" PRIu32
					 " packets, frame holds %zu", fi->seq, fi->packets, lf->npkts);
				ret = add_problem(&pr, &npr, fi->offset, msg);
			} else if (tmin && (tmin < fi->t_min || tmax > fi->t_max)) {
				snprintf(msg, sizeof(msg), "frame %" PRIu64 ": packet times [%" PRIu64
					 ", %" PRIu64 "] outside the indexed range [%" PRIu64 ", %"
					 PRIu64 "]", fi->seq, tmin, tmax, fi->t_min, fi->t_max);
				ret = add_problem(&pr, &npr, fi->offset, msg);
			}
		}
		packets += lf->npkts;
		ana_frames_release(af, lf);
		if (ret < 0)
			break;
		done++;
		if (s->opts.progress)
			s->opts.progress(s->opts.ctx, "verify", done, s->nframes);
	}
	ana_frames_free(af);
	if (ret < 0)
		goto out;
	/* Damage met while indexing (skipped byte ranges, torn tail). */
	const struct prec_damage *d = NULL;
	size_t nd = 0;
	prec_reader_damage(s->reader, &d, &nd);
	for (size_t i = 0; i < nd && ret >= 0; i++) {
		if (s->torn && d[i].err == PREC_E_TRUNCATED && d[i].offset == s->torn_offset)
			continue;
		snprintf(msg, sizeof(msg), "unreadable bytes skipped: %s", prec_strerror(d[i].err));
		ret = add_problem(&pr, &npr, d[i].offset, msg);
		bad++;
	}
	if (ret >= 0 && s->torn) {
		snprintf(msg, sizeof(msg), "torn tail: the file ends inside a frame "
			 "(recorder killed or disk full); data before it is readable");
		ret = add_problem(&pr, &npr, s->torn_offset, msg);
	}
	if (ret >= 0 && !s->index_present) {
		snprintf(msg, sizeof(msg), "no valid trailing index (rebuilt by walking "
			 "the frames): the recording did not end cleanly");
		ret = add_problem(&pr, &npr, 0, msg);
	}
	if (ret < 0)
		goto out;
	ana_sort(pr, npr, sizeof(*pr), cmp_problem);
	*whole = npr == 0;

	struct ana_table *kv = ana_doc_kv(doc, "verify");
	ana_kv_str(kv, "file", s->path);
	ana_kv_num(kv, "frames", "%zu", s->nframes);
	ana_kv_num(kv, "good_frames", "%zu", good);
	ana_kv_num(kv, "damaged_frames", "%zu", bad);
	ana_kv_num(kv, "packets", "%" PRIu64, packets);
	ana_kv_str(kv, "torn_tail", s->torn ? "yes" : "no");
	ana_kv_str(kv, "index", s->index_present ? "present" : "rebuilt");
	ana_kv_str(kv, "status", *whole ? "ok" : "damaged");
	struct ana_table *t = ana_doc_table(doc, "problems", npr ? "Problems" : NULL);
	ana_table_col(t, "offset", "Offset", ANA_NUM);
	ana_table_col(t, "problem", "Problem", ANA_STR);
	for (size_t i = 0; i < npr; i++) {
		ana_table_row(t);
		ana_cell_num(t, "%" PRIu64, pr[i].offset);
		ana_cell_str(t, pr[i].what);
	}
	ret = 0;
out:
	free(pr);
	return ret;
}
