/*
 * verify.c - frame by frame integrity.
 *
 * Three sources describe each frame and are checked against each other:
 * its frame-info record, its trailing-index entry (when the file has one)
 * and its content. The readers of the other commands trust the index and
 * never read the records it names, so a damaged record is found only
 * here: the file is walked record by record as if it had no index
 * (prec_reader_walk()) and what the walk finds is compared with the index
 * entry by entry. The content is compared with the index (or, without
 * one, with the records) as far as it tells: packet count, time range,
 * packet kinds; sizes are checked by loading the frame.
 *
 * A concatenation of files is checked part by part (SPEC.md section 8):
 * each part by its own index, or walked; every problem is its part's, and
 * the file is whole when every part is.
 */
#include "analyzer/reports/verify.h"
#include "format/base/hashmap.h"

#include <errno.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/read/frames.h"
#include "analyzer/read/trace.h"
#include "format/error.h"

struct problem {
	uint64_t offset;
	char what[256];
};

struct problems {
	struct problem *v;
	size_t n;
};

/* The reader's parts and, per part, what was found. */
struct parts {
	const struct prec_part *v;
	size_t n;
	size_t *bad;        /* damaged frames and regions */
	uint64_t *packets;
};

/* The part holding offset (parts cover the file, in order). */
static size_t part_of(const struct parts *pt, uint64_t off)
{
	size_t lo = 0, hi = pt->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (pt->v[mid].offset <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* A torn tail, of the file or of a part before another. */
static int torn_at(const struct parts *pt, uint64_t off)
{
	for (size_t i = 0; i < pt->n; i++)
		if (pt->v[i].torn && pt->v[i].torn_offset == off)
			return 1;
	return 0;
}

static int add_problem(struct problems *p, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int add_problem(struct problems *p, uint64_t off, const char *fmt, ...)
{
	struct problem *a = realloc(p->v, (p->n + 1) * sizeof(*a));
	va_list ap;

	if (!a)
		return -ENOMEM;
	p->v = a;
	a[p->n].offset = off;
	va_start(ap, fmt);
	vsnprintf(a[p->n].what, sizeof(a[p->n].what), fmt, ap);
	va_end(ap);
	p->n++;
	return 0;
}

static int cmp_problem(const void *a, const void *b)
{
	const struct problem *x = a, *y = b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return strcmp(x->what, y->what);
}

/* A whole frame's content against what its index entry (or, without an
 * index, its frame-info record) says: packets, time range, kinds. The
 * sizes were checked when it loaded. */
static int check_content(const struct ana_loaded *lf, const char *by,
			 struct problems *pr)
{
	const struct prec_frame_info *fi = lf->fi;
	uint64_t tmin = 0, tmax = 0, unknown = prec_frame_unknown_packets(lf->frame);
	int ret = 0;

	if (fi->seq == PREC_SEQ_UNKNOWN)
		return 0;   /* recovered without its record: nothing to compare */
	for (size_t i = 0; i < lf->npkts; i++) {
		uint64_t t = lf->pkts[i].time;
		if (!t)
			continue;
		if (!tmin || t < tmin)
			tmin = t;
		if (t > tmax)
			tmax = t;
	}
	/* packets of kinds this reader does not know count in the record
	 * but are not returned */
	/* as the file holds them: a switch batch is one packet of many rows */
	uint64_t held = prec_frame_packets(lf->frame);
	if (held > fi->packets || fi->packets > held + unknown)
		ret = add_problem(pr, fi->offset, "frame %" PRIu64 ": %s says %" PRIu32
				  " packets, frame holds %" PRIu64, fi->seq, by, fi->packets,
				  held);
	if (ret == 0 && (tmin != fi->t_min || tmax != fi->t_max))
		ret = add_problem(pr, fi->offset, "frame %" PRIu64 ": packet times [%" PRIu64
				  ", %" PRIu64 "], %s says [%" PRIu64 ", %" PRIu64 "]",
				  fi->seq, tmin, tmax, by, fi->t_min, fi->t_max);
	if (ret == 0 && fi->kinds) {
		uint64_t k = prec_frame_kinds(lf->frame);
		/* kinds this reader does not know: only what it saw is checked */
		if ((k & ~fi->kinds) || (!unknown && k != fi->kinds))
			ret = add_problem(pr, fi->offset, "frame %" PRIu64 ": packet kinds %#"
					  PRIx64 ", %s says %#" PRIx64, fi->seq, k, by, fi->kinds);
	}
	return ret;
}

static size_t find_offset(const struct prec_frame_info *v, size_t n, uint64_t off,
			  int data)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t o = data ? v[mid].data_offset : v[mid].offset;
		if (o < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && (data ? v[lo].data_offset : v[lo].offset) == off ? lo : n;
}

/* Appends ", NAME record vs index" to buf when the two differ. */
#define DIFF(name, fmt, a, b) do { \
	if ((a) != (b)) \
		n += snprintf(buf + n, n < sizeof(buf) ? sizeof(buf) - n : 0, \
			      "%s" name " %" fmt " vs %" fmt, n ? ", " : "", (a), (b)); \
} while (0)

/* The trailing indexes against the records they name: walks the file as a
 * reader without index would, then every entry of a part read by its
 * index must match the frame-info record at its offset field for field,
 * and every frame the walk finds in such a part must be in the index.
 * Sets flag[i] for each entry i whose record is damaged or disagrees;
 * counts damage outside the index's frames in its part. */
static int check_index(struct ana_trace *s, const struct prec_frame_info *frames,
		       size_t nframes, struct parts *pt, struct problems *pr,
		       unsigned char *flag)
{
	struct prec_frame_info *wf = NULL;
	struct prec_damage *wd = NULL;
	size_t nw = 0, nwd = 0;
	uint64_t torn;
	int ret = prec_reader_walk(s->reader, &wf, &nw, &wd, &nwd, &torn);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < nframes && ret == 0; i++) {
		const struct prec_frame_info *e = &frames[i];
		if (!pt->v[part_of(pt, e->offset)].index_present)
			continue;
		size_t j = find_offset(wf, nw, e->offset, 0);
		if (j == nw || wf[j].seq == PREC_SEQ_UNKNOWN) {
			int err = PREC_E_CORRUPT;
			for (size_t k = 0; k < nwd; k++)
				if (wd[k].offset == e->offset)
					err = wd[k].err;
			flag[i] = 1;
			ret = add_problem(pr, e->offset, "frame %" PRIu64 " (stream %" PRIu32
					  "): frame-info record damaged (%s); read by its index entry",
					  e->seq, e->stream, prec_strerror(err));
			continue;
		}
		const struct prec_frame_info *w = &wf[j];
		char buf[200];
		size_t n = 0;
		DIFF("data offset", PRIu64, w->data_offset, e->data_offset);
		DIFF("stream", PRIu32, w->stream, e->stream);
		DIFF("packets", PRIu32, w->packets, e->packets);
		DIFF("t_min", PRIu64, w->t_min, e->t_min);
		DIFF("t_max", PRIu64, w->t_max, e->t_max);
		DIFF("compressed size", PRIu32, w->compressed_size, e->compressed_size);
		DIFF("raw size", PRIu32, w->raw_size, e->raw_size);
		DIFF("seq", PRIu64, w->seq, e->seq);
		/* a 1.0 entry or record has no kinds (0): nothing to compare */
		if (w->kinds && e->kinds)
			DIFF("kinds", "#" PRIx64, w->kinds, e->kinds);
		if (n) {
			flag[i] = 1;
			ret = add_problem(pr, e->offset, "frame %" PRIu64 ": frame-info record "
					  "and index disagree: %s", e->seq, buf);
		}
	}
	for (size_t j = 0; j < nw && ret == 0; j++) {
		const struct prec_frame_info *w = &wf[j];
		size_t p = part_of(pt, w->offset);
		if (!pt->v[p].index_present ||
		    find_offset(frames, nframes, w->offset, 0) < nframes)
			continue;
		/* the data frame of a damaged record, reported above */
		if (w->seq == PREC_SEQ_UNKNOWN &&
		    find_offset(frames, nframes, w->offset, 1) < nframes)
			continue;
		pt->bad[p]++;
		if (w->seq == PREC_SEQ_UNKNOWN)
			ret = add_problem(pr, w->offset, "data frame without frame-info record, "
					  "not in the index");
		else
			ret = add_problem(pr, w->offset, "frame %" PRIu64 " (stream %" PRIu32
					  ") is not in the index", w->seq, w->stream);
	}
	for (size_t k = 0; k < nwd && ret == 0; k++) {
		size_t p = part_of(pt, wd[k].offset);
		/* a damaged part header is the reader's damage too (below) */
		if (!pt->v[p].index_present || wd[k].err == PREC_E_HEADER ||
		    find_offset(frames, nframes, wd[k].offset, 0) < nframes)
			continue;   /* a frame's record, reported above */
		pt->bad[p]++;
		ret = add_problem(pr, wd[k].offset, "unreadable bytes the index skips: %s",
				  prec_strerror(wd[k].err));
	}
	if (ret == 0 && torn != UINT64_MAX && pt->v[part_of(pt, torn)].index_present)
		ret = add_problem(pr, torn, "a record runs past the end of the file");
	free(wf);
	free(wd);
	return ret;
}

/* What the reader met at open and while indexing (damaged file headers,
 * skipped byte ranges, torn tails) and each part's missing index. */
static int reader_problems(struct ana_trace *s, struct parts *pt, struct problems *pr)
{
	const struct prec_damage *d = NULL;
	size_t nd = 0;
	int ret = prec_reader_damage(s->reader, &d, &nd);

	for (size_t i = 0; i < nd && ret >= 0; i++) {
		if (d[i].err == PREC_E_TRUNCATED && torn_at(pt, d[i].offset))
			continue;   /* below, with its part */
		if (d[i].err == PREC_E_HEADER) {
			ret = add_problem(pr, d[i].offset, "file header damaged (magic, size, "
					  "version or CRC): the frames after it were read");
			continue;
		}
		ret = add_problem(pr, d[i].offset, "unreadable bytes skipped: %s",
				  prec_strerror(d[i].err));
		pt->bad[part_of(pt, d[i].offset)]++;
	}
	for (size_t i = 0; i < pt->n && ret >= 0; i++) {
		const struct prec_part *p = &pt->v[i];
		if (p->torn && pt->n == 1)
			ret = add_problem(pr, p->torn_offset, "torn tail: the file ends inside "
					  "a frame (recorder killed or disk full); data before "
					  "it is readable");
		else if (p->torn)
			ret = add_problem(pr, p->torn_offset, "torn tail: the part ends inside "
					  "a record (its recorder was killed or the disk full); "
					  "data before it is readable");
		if (ret >= 0 && !p->index_present)
			ret = add_problem(pr, p->offset, "no valid trailing index (rebuilt by "
					  "walking the frames): the recording did not end cleanly");
	}
	return ret;
}

/* One row per part of a concatenation. */
static void parts_table(const struct parts *pt, const struct problems *pr,
			struct ana_doc *doc)
{
	struct ana_table *t = ana_doc_table(doc, "parts", "Parts");
	ana_table_col(t, "part", "Part", ANA_NUM);
	ana_table_col(t, "offset", "Offset", ANA_NUM);
	ana_table_col(t, "bytes", "Bytes", ANA_NUM);
	ana_table_col(t, "frames", "Frames", ANA_NUM);
	ana_table_col(t, "damaged_frames", "Damaged", ANA_NUM);
	ana_table_col(t, "packets", "Packets", ANA_NUM);
	ana_table_col(t, "index", "Index", ANA_STR);
	ana_table_col(t, "torn_tail", "Torn", ANA_STR);
	ana_table_col(t, "status", "Status", ANA_STR);
	for (size_t i = 0; i < pt->n; i++) {
		const struct prec_part *p = &pt->v[i];
		size_t np = 0;
		for (size_t k = 0; k < pr->n; k++)
			np += part_of(pt, pr->v[k].offset) == i;
		ana_table_row(t);
		ana_cell_num(t, "%zu", i + 1);
		ana_cell_num(t, "%" PRIu64, p->offset);
		ana_cell_num(t, "%" PRIu64, p->end - p->offset);
		ana_cell_num(t, "%zu", p->nframes);
		ana_cell_num(t, "%zu", pt->bad[i]);
		ana_cell_num(t, "%" PRIu64, pt->packets[i]);
		ana_cell_str(t, p->index_present ? "present" : "rebuilt");
		ana_cell_str(t, p->torn ? "yes" : "no");
		ana_cell_str(t, np ? (p->torn ? "torn" : "damaged") : "ok");
	}
}

int ana_verify_run(struct ana_trace *s, int jobs, struct ana_doc *doc, int *whole)
{
	struct problems pr = { 0 };
	struct parts pt = { 0 };
	const struct prec_frame_info *frames = NULL;
	size_t nframes = 0, good = 0, bad = 0;
	uint64_t packets = 0;
	int ret, torn = 0, indexed = 1;
	unsigned char *flag = NULL;
	struct ana_frames *af = NULL;

	*whole = 0;
	/* the reader's own lists: the parts index into its frames */
	ret = prec_reader_index(s->reader, &frames, &nframes);
	if (ret >= 0)
		ret = prec_reader_parts(s->reader, &pt.v, &pt.n);
	if (ret < 0)
		return ret;
	/* frames found damaged one way or another (content, record, both) */
	flag = calloc(nframes ? nframes : 1, 1);
	pt.bad = calloc(pt.n, sizeof(*pt.bad));
	pt.packets = calloc(pt.n, sizeof(*pt.packets));
	struct ana_frames_opts fo = { .jobs = jobs };
	if (flag && pt.bad && pt.packets)
		af = ana_frames_new(s->reader, frames, nframes, &fo);
	if (!af) {
		ret = -ENOMEM;
		goto out;
	}
	struct ana_loaded *lf;
	size_t done = 0;
	while ((ret = ana_frames_next(af, &lf)) > 0) {
		const struct prec_frame_info *fi = lf->fi;
		size_t p = part_of(&pt, fi->offset);
		if (lf->err) {
			flag[lf->idx] = 1;
			if (fi->seq == PREC_SEQ_UNKNOWN)
				ret = add_problem(&pr, fi->offset, "recovered frame: %s",
						  prec_strerror(lf->err));
			else
				ret = add_problem(&pr, fi->offset, "frame %" PRIu64 " (stream %"
						  PRIu32 "): %s", fi->seq, fi->stream,
						  prec_strerror(lf->err));
		} else {
			ret = check_content(lf, pt.v[p].index_present ? "index" : "frame info",
					    &pr);
		}
		packets += lf->npkts;
		pt.packets[p] += lf->npkts;
		ana_frames_release(af, lf);
		if (ret < 0)
			break;
		done++;
		if (s->opts.progress)
			s->opts.progress(s->opts.ctx, "verify", done, nframes);
	}
	ana_frames_free(af);
	if (ret < 0)
		goto out;
	for (size_t i = 0; i < pt.n; i++) {
		torn |= pt.v[i].torn;
		indexed &= pt.v[i].index_present;
	}
	if (pt.n > 1 || indexed) {
		ret = check_index(s, frames, nframes, &pt, &pr, flag);
		if (ret < 0)
			goto out;
	}
	for (size_t i = 0; i < nframes; i++)
		if (flag[i])
			pt.bad[part_of(&pt, frames[i].offset)]++;
	ret = reader_problems(s, &pt, &pr);
	if (ret < 0)
		goto out;
	for (size_t i = 0; i < pt.n; i++)
		bad += pt.bad[i];
	for (size_t i = 0; i < nframes; i++)
		good += !flag[i];
	prec_sort(pr.v, pr.n, sizeof(*pr.v), cmp_problem);
	*whole = pr.n == 0;

	struct ana_table *kv = ana_doc_kv(doc, "verify");
	ana_kv_str(kv, "file", s->path);
	if (pt.n > 1)
		ana_kv_num(kv, "parts", "%zu", pt.n);
	ana_kv_num(kv, "frames", "%zu", nframes);
	ana_kv_num(kv, "good_frames", "%zu", good);
	ana_kv_num(kv, "damaged_frames", "%zu", bad);
	ana_kv_num(kv, "packets", "%" PRIu64, packets);
	ana_kv_str(kv, "torn_tail", torn ? "yes" : "no");
	ana_kv_str(kv, "index", indexed ? "present" : "rebuilt");
	ana_kv_str(kv, "status", *whole ? "ok" : "damaged");
	if (pt.n > 1)
		parts_table(&pt, &pr, doc);
	struct ana_table *t = ana_doc_table(doc, "problems", pr.n ? "Problems" : NULL);
	ana_table_col(t, "offset", "Offset", ANA_NUM);
	ana_table_col(t, "problem", "Problem", ANA_STR);
	for (size_t i = 0; i < pr.n; i++) {
		ana_table_row(t);
		ana_cell_num(t, "%" PRIu64, pr.v[i].offset);
		if (pt.n > 1) {
			char what[300];
			snprintf(what, sizeof(what), "part %zu: %s",
				 part_of(&pt, pr.v[i].offset) + 1, pr.v[i].what);
			ana_cell_str(t, what);
		} else {
			ana_cell_str(t, pr.v[i].what);
		}
	}
	ret = 0;
out:
	free(flag);
	free(pt.bad);
	free(pt.packets);
	free(pr.v);
	return ret;
}
