/*
 * record.c - record boundaries of a .prec byte stream (see record.h).
 */
#include <stdbool.h>
#include <string.h>

#include <zstd.h>

#include "format/error.h"
#include "format/layout.h"
#include "format/record.h"
#include "format/info_int.h"

/* The frame-info payload of `size` bytes after the skippable header at b
 * (present, whatever the magic and size fields say): 1 and *fi (offsets
 * relative to b) when its CRC holds, else 0. */
static int info_ok(const uint8_t *b, uint32_t size, struct prec_frame_info *fi)
{
	const uint8_t *p = b + PREC_SKIP_HDR;

	if (prec_crc32(p, size - 4) != prec_get32(p + size - 4))
		return 0;
	memset(fi, 0, sizeof(*fi));
	fi->data_offset = PREC_SKIP_HDR + size;
	prec_info_decode(p, size, fi);
	return 1;
}

int prec_record_scan(const void *buf, size_t len, size_t max_len,
		     struct prec_record *rec)
{
	const uint8_t *b = buf;
	uint32_t magic, size;
	uint64_t total;

	if (!rec || (!buf && len))
		return PREC_E_CORRUPT;
	if (!max_len)
		max_len = PREC_DEFAULT_MAX_FRAME_RAW + 64 * 1024;
	memset(rec, 0, sizeof(*rec));
	if (len < PREC_SKIP_HDR) {
		/* a prefix of a skippable magic may still become a record */
		static const uint8_t skip[3] = { 0x2A, 0x4D, 0x18 };
		if (len >= 1 && (b[0] & 0xF0) != 0x50)
			return PREC_E_MAGIC;
		if (len >= 2 && memcmp(b + 1, skip, len - 1 < 3 ? len - 1 : 3) != 0)
			return PREC_E_MAGIC;
		return 0;
	}
	magic = prec_get32(b);
	size = prec_get32(b + 4);
	if (!prec_is_skippable(magic))
		return PREC_E_MAGIC;
	total = PREC_SKIP_HDR + (uint64_t)size;
	switch (magic & 0xF) {
	case PREC_KIND_FILE_HEADER:
		if (size < PREC_FILE_HEADER_SIZE || size > PREC_FILE_HEADER_MAX)
			return PREC_E_CORRUPT;
		if (len < total)
			return 0;
		if (memcmp(b + 8, PREC_FILE_MAGIC, 8) != 0)
			return PREC_E_MAGIC;
		rec->major = prec_get16(b + 16);
		rec->minor = prec_get16(b + 18);
		if (rec->major > PREC_VERSION_MAJOR)
			return PREC_E_VERSION;
		if (prec_crc32(b + 8, size - 4) != prec_get32(b + 8 + size - 4))
			return PREC_E_CHECKSUM;
		rec->kind = PREC_RECORD_HEADER;
		break;
	case PREC_KIND_FRAME_INFO: {
		if (size < PREC_INFO_MIN || size > PREC_INFO_MAX)
			return PREC_E_CORRUPT;
		if (len < total)
			return 0;
		if (!info_ok(b, size, &rec->info))
			return PREC_E_CHECKSUM;
		if (rec->info.compressed_size < 4)
			return PREC_E_CORRUPT;
		total += rec->info.compressed_size;
		if (total > max_len)
			return PREC_E_TOO_BIG;
		if (len < rec->info.data_offset + 4)
			return 0;
		if (prec_get32(b + rec->info.data_offset) != PREC_ZSTD_MAGIC)
			return PREC_E_CORRUPT;
		if (len < total)
			return 0;
		rec->kind = PREC_RECORD_FRAME;
		break;
	}
	case PREC_KIND_INDEX:
		rec->kind = PREC_RECORD_INDEX;
		break;
	default:
		rec->kind = PREC_RECORD_OTHER;
		break;
	}
	if (total > max_len)
		return PREC_E_TOO_BIG;
	if (len < total)
		return 0;
	rec->len = (size_t)total;
	return 1;
}

/* ---------------------------------------------------------------- recovery
 *
 * prec_record_recover() (see record.h for what it decides and why). The
 * walk keeps the frame numbers it has seen so that a damaged stretch it
 * cannot measure can still be counted: frame-info seq grows by one per
 * frame the writer wrote, and a stream holds a subsequence of them (a
 * sender drops frames, never reorders), so between a frame numbered k and
 * one numbered S lie at most S - k - 1 records.
 */

struct walk {
	const uint8_t *b;
	uint64_t n;
	void (*cb)(void *ctx, const struct prec_record_damage *d);
	void *ctx;
	struct prec_record_recovery *out;
	uint64_t base;     /* seq of the next frame when none is missing */
	uint64_t since;    /* frames counted since base was set, seq unknown */
	bool base_known;   /* base and since hold (reset by every frame read) */
	bool others;       /* a record of a reserved kind was seen */
};

static void damage(struct walk *w, uint64_t off, uint64_t len, uint64_t records,
		   bool known, int err)
{
	struct prec_record_damage d = { off, len, records, known, err };

	if (!w->out->damaged++)
		w->out->first_damage = off;
	if (!known && w->out->certain) {
		w->out->certain = 0;
		w->out->first_unknown = off;
	}
	if (w->cb)
		w->cb(w->ctx, &d);
}

static void saw_frame(struct walk *w, const struct prec_frame_info *fi)
{
	struct prec_record_recovery *o = w->out;

	w->base = fi->seq + 1;
	w->since = 0;
	w->base_known = true;
	if (fi->t_min || fi->t_max) {
		if (!o->t_min || fi->t_min < o->t_min)
			o->t_min = fi->t_min;
		if (fi->t_max > o->t_max)
			o->t_max = fi->t_max;
	}
}

static bool zero_from(const struct walk *w, uint64_t pos)
{
	for (; pos < w->n; pos++)
		if (w->b[pos])
			return false;
	return true;
}

/* The index record [pos, pos + len): bit 0 its sizes and CRC hold (as
 * SPEC.md section 7 asks of readers), bit 1 its trailer points at pos. */
static int index_marks(const struct walk *w, uint64_t pos, uint64_t len)
{
	const uint8_t *p, *t;
	uint64_t size, body;
	uint32_t esize;
	int marks = 0;

	if (len < PREC_SKIP_HDR + PREC_IDX_HEAD + 4 + PREC_TRAILER_SIZE)
		return 0;
	p = w->b + pos + PREC_SKIP_HDR;
	t = w->b + pos + len - PREC_TRAILER_SIZE;
	size = len - PREC_SKIP_HDR;
	esize = prec_get32(p + 4);
	body = PREC_IDX_HEAD + (uint64_t)prec_get32(p) * esize;
	if (esize >= PREC_IDX_ENTRY_MIN && esize <= 4096 &&
	    body + 4 + PREC_TRAILER_SIZE == size && prec_crc32(p, body) == prec_get32(p + body))
		marks |= 1;
	if (prec_get64(t) == pos && memcmp(t + 8, PREC_TRAILER_MAGIC, 8) == 0)
		marks |= 2;
	return marks;
}

/* A place a record may start: the end, a record prec_record_scan() takes
 * (the index only as the last), or a proper prefix of one (a torn tail). */
static bool sync_at(const struct walk *w, uint64_t q)
{
	struct prec_record rec;
	int r;

	if (q == w->n)
		return true;
	r = prec_record_scan(w->b + q, w->n - q, 0, &rec);
	if (r == 0)
		return true;
	return r == 1 && (rec.kind == PREC_RECORD_FRAME ||
			  (rec.kind == PREC_RECORD_INDEX && q + rec.len == w->n));
}

/* A frame record at pos whose magic or size field may be damaged, by the
 * CRC of its info payload at every size a reader accepts (the stated one
 * first): its length and *fi, or 0. A size other than the stated one is
 * taken only when a record (or the end) follows; the stated one also
 * when its zstd data frame starts where it says. */
static uint64_t frame_by_crc(const struct walk *w, uint64_t pos, struct prec_frame_info *fi)
{
	const uint8_t *b = w->b + pos;
	uint64_t left = w->n - pos;
	uint32_t stated;

	if (left < PREC_SKIP_HDR + PREC_INFO_MIN)
		return 0;
	stated = prec_get32(b + 4);
	for (uint32_t i = PREC_INFO_MIN - 1; i <= PREC_INFO_MAX; i++) {
		uint32_t size = i < PREC_INFO_MIN ? stated : i;
		uint64_t ext;

		if (size < PREC_INFO_MIN || size > PREC_INFO_MAX ||
		    (i >= PREC_INFO_MIN && size == stated) || PREC_SKIP_HDR + size > left)
			continue;
		if (!info_ok(b, size, fi) || fi->compressed_size < 4)
			continue;
		ext = fi->data_offset + fi->compressed_size;
		if (ext > left)
			continue;
		if (sync_at(w, pos + ext) ||
		    (size == stated && prec_get32(b + fi->data_offset) == PREC_ZSTD_MAGIC))
			return ext;
	}
	return 0;
}

static uint64_t resync(const struct walk *w, uint64_t pos, uint64_t limit,
		       uint64_t *seq, bool *frame);

/* A frame record at pos whose info payload is damaged, by the structure
 * of its zstd data frame (right after the info's stated size, or the
 * first one that walks within the largest info, with no sure record start
 * before it: the frame of a later record is not this one's): its length
 * when a record (or the end) follows, or 0. */
static uint64_t frame_by_zstd(const struct walk *w, uint64_t pos)
{
	uint64_t left = w->n - pos, seq;
	uint32_t stated = left >= PREC_SKIP_HDR ? prec_get32(w->b + pos + 4) : 0;
	bool frame;

	for (uint64_t i = PREC_INFO_MIN - 1; i <= PREC_INFO_MAX; i++) {
		uint64_t d = PREC_SKIP_HDR + (i < PREC_INFO_MIN ? stated : i);
		size_t fs;

		if ((i < PREC_INFO_MIN && (stated < PREC_INFO_MIN || stated > PREC_INFO_MAX)) ||
		    (i >= PREC_INFO_MIN && i == stated) || d + 4 > left ||
		    prec_get32(w->b + pos + d) != PREC_ZSTD_MAGIC)
			continue;
		if (resync(w, pos, pos + d, &seq, &frame) < pos + d)
			return 0;
		fs = ZSTD_findFrameCompressedSize(w->b + pos + d, (size_t)(left - d));
		if (!ZSTD_isError(fs) && sync_at(w, pos + d + fs))
			return d + fs;
	}
	return 0;
}

/* The length of the damaged record at pos when it can be measured (see
 * record.h), or 0; *fi is set (and *has_fi) when its frame info is read. */
static uint64_t measure(struct walk *w, uint64_t pos, struct prec_frame_info *fi,
			bool *has_fi, bool *is_index)
{
	uint64_t ext;

	*has_fi = *is_index = false;
	if (pos == 0) {
		/* the file header: its stated size, or the one this version writes */
		uint32_t stated = w->n >= PREC_SKIP_HDR ? prec_get32(w->b + 4) : 0;

		if (stated >= PREC_FILE_HEADER_SIZE && stated <= PREC_FILE_HEADER_MAX &&
		    PREC_SKIP_HDR + stated <= w->n && sync_at(w, PREC_SKIP_HDR + stated))
			return PREC_SKIP_HDR + stated;
		if (PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE <= w->n &&
		    sync_at(w, PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE))
			return PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE;
		return 0;
	}
	ext = frame_by_crc(w, pos, fi);
	if (ext) {
		*has_fi = true;
		return ext;
	}
	ext = frame_by_zstd(w, pos);
	if (ext)
		return ext;
	if (w->n - pos >= PREC_SKIP_HDR + PREC_IDX_HEAD + 4 + PREC_TRAILER_SIZE &&
	    (index_marks(w, pos, w->n - pos) & 2)) {
		*is_index = true;
		return w->n - pos;
	}
	return 0;
}

/* The first place in (pos, limit) where a record surely starts: a
 * frame-info record whose CRC holds (*seq its number) or the index at the
 * end; limit when there is none. */
static uint64_t resync(const struct walk *w, uint64_t pos, uint64_t limit,
		       uint64_t *seq, bool *frame)
{
	*frame = false;
	for (uint64_t q = pos + 1; q < limit && q + PREC_SKIP_HDR <= w->n; q++) {
		uint32_t magic = prec_get32(w->b + q), size;
		struct prec_frame_info fi;

		if (magic != (PREC_SKIP_MAGIC_BASE | PREC_KIND_FRAME_INFO) &&
		    magic != (PREC_SKIP_MAGIC_BASE | PREC_KIND_INDEX))
			continue;
		size = prec_get32(w->b + q + 4);
		if (magic == (PREC_SKIP_MAGIC_BASE | PREC_KIND_INDEX)) {
			/* by its CRC or its trailer: its size field may be hit */
			if (index_marks(w, q, w->n - q))
				return q;
			continue;
		}
		if (size >= PREC_INFO_MIN && size <= PREC_INFO_MAX &&
		    q + PREC_SKIP_HDR + size <= w->n && info_ok(w->b + q, size, &fi)) {
			*seq = fi.seq;
			*frame = true;
			return q;
		}
	}
	return limit;
}

/* The index at pos (len bytes, to the end): frames it lists, when it can
 * be trusted (its CRC holds), else UINT64_MAX. */
static uint64_t index_frames(const struct walk *w, uint64_t pos, uint64_t len)
{
	if (!(index_marks(w, pos, len) & 1))
		return UINT64_MAX;
	return prec_get32(w->b + pos + PREC_SKIP_HDR);
}

int prec_record_recover(const void *buf, size_t len,
			void (*on_damage)(void *ctx, const struct prec_record_damage *d),
			void *ctx, struct prec_record_recovery *out)
{
	struct walk w = { buf, len, on_damage, ctx, out, 0, 0, true, false };
	uint64_t pos = 0, index_at = UINT64_MAX;

	if (!out || (!buf && len))
		return PREC_E_CORRUPT;
	memset(out, 0, sizeof(*out));
	out->certain = 1;
	while (pos < w.n) {
		struct prec_record rec;
		struct prec_frame_info fi;
		uint64_t ext, next, seq = 0;
		bool has_fi, is_index, frame;
		int r = prec_record_scan(w.b + pos, w.n - pos, 0, &rec);
		int err = r < 0 ? r : PREC_E_CORRUPT;

		if (r == 1 && rec.kind == PREC_RECORD_FRAME) {
			size_t fs = ZSTD_findFrameCompressedSize(w.b + pos + rec.info.data_offset,
								 rec.info.compressed_size);

			if (ZSTD_isError(fs) || fs != rec.info.compressed_size)
				damage(&w, pos + rec.info.data_offset, rec.info.compressed_size,
				       1, true, PREC_E_CORRUPT);
			saw_frame(&w, &rec.info);
			out->records++;
			pos += rec.len;
			continue;
		}
		if (r == 1 && rec.kind == PREC_RECORD_HEADER && pos == 0) {
			out->records++;
			pos += rec.len;
			continue;
		}
		if (r == 1 && rec.kind == PREC_RECORD_INDEX) {
			/* the last record; a valid one followed by bytes is still
			 * the index (nothing is ever appended after it) */
			int marks = index_marks(&w, pos, rec.len);

			if (pos + rec.len == w.n || marks == 3) {
				if (marks != 3)
					damage(&w, pos, rec.len, 1, true,
					       marks & 1 ? PREC_E_CORRUPT : PREC_E_CHECKSUM);
				out->records++;
				out->complete = 1;
				index_at = pos;
				if (pos + rec.len < w.n)
					damage(&w, pos + rec.len, w.n - pos - rec.len, 0, true,
					       PREC_E_CORRUPT);
				pos = w.n;
				continue;
			}
		}
		/* a frame info, the index or the header whose magic now names a
		 * reserved kind is damage; a reserved kind that is none of them
		 * is a record */
		if (r == 1 && rec.kind == PREC_RECORD_OTHER && pos > 0 && !frame_by_crc(&w, pos, &fi) &&
		    !(pos + rec.len == w.n && (index_marks(&w, pos, rec.len) & 2))) {
			w.base_known = false;
			w.others = true;
			out->records++;
			pos += rec.len;
			continue;
		}
		ext = measure(&w, pos, &fi, &has_fi, &is_index);
		if (!ext && (r == 0 || zero_from(&w, pos)) &&
		    (zero_from(&w, pos) || resync(&w, pos, w.n, &seq, &frame) == w.n)) {
			/* torn: a proper prefix of a record (or zeros) that no
			 * reading makes whole, with no record after it */
			out->end = pos;
			return 0;
		}
		if (ext) {
			damage(&w, pos, ext, 1, true, err);
			if (has_fi)
				saw_frame(&w, &fi);
			else if (pos && !is_index)
				w.since++;
			if (is_index) {
				out->complete = 1;
				index_at = pos;
			}
			out->records++;
			pos += ext;
			continue;
		}
		/* lost: the stretch up to the next sure record start */
		next = resync(&w, pos, w.n, &seq, &frame);
		if (frame && w.base_known && seq >= w.base + w.since &&
		    seq - w.base - w.since == 1) {
			/* room for exactly one frame between its neighbours */
			damage(&w, pos, next - pos, 1, true, err);
			w.since++;
			out->records++;
		} else {
			damage(&w, pos, next - pos, next < w.n ? 1 : 0, false, err);
			out->records += next < w.n;
			w.base_known = false;
		}
		pos = next;
	}
	out->end = w.n;
	if (!out->certain && index_at != UINT64_MAX && !w.others) {
		/* a stream that ends with its index lost no frame on the way
		 * (a sender that drops one leaves the index out): the index
		 * lists every frame record; the header and itself are the
		 * other two */
		uint64_t frames = index_frames(&w, index_at, w.n - index_at);

		if (frames != UINT64_MAX && frames + 2 >= out->records) {
			out->records = frames + 2;
			out->certain = 1;
		}
	}
	return 0;
}
