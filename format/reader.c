/*
 * reader.c - .prec files in: file header, index (trailer or rebuilt by
 * walking), frame iteration, damage reporting (see reader.h, SPEC.md).
 *
 * Source. Bytes come from an fd (pread only, so prec_reader_load_frame()
 * is thread-safe) or from a borrowed memory buffer. read_at() is the one
 * accessor and never reads past r->size.
 *
 * Open. read_header() checks the file header; a damaged one is damage at
 * offset 0 when a whole frame follows within the largest header size, and
 * the data then starts at that frame (SPEC.md section 8).
 *
 * Index. ensure_index() runs once: it takes the trailing index if the
 * trailer, sizes and CRC are consistent, else walks the file from the end
 * of the file header (walk_file()). The walk starts a new part at each
 * valid file header it meets where a record starts (a concatenation of
 * files, SPEC.md section 8); then each part whose own trailing index is
 * valid is read by that index (use_part_indexes()). The walk collects good frames, damaged
 * byte ranges and a torn tail; damage is not reported while walking but
 * kept in r->w.dmg, and prec_reader_next_frame() reports each entry when the
 * iteration passes its offset, so on_damage sees everything in file order.
 *
 * Locking: after ensure_index() the index, the source and opts are
 * read-only. Only the stats and the damage callback go through r->lock.
 */
#define _POSIX_C_SOURCE 200809L   /* pread, fsync, O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "format/error.h"
#include "format/frame_int.h"
#include "format/info_int.h"
#include "format/layout.h"
#include "format/reader.h"

/* What indexing finds: frames in file order, damage between them, and
 * where a torn tail starts. */
struct walk {
	struct prec_frame_info *frames;
	size_t nframes, framecap;
	struct prec_damage *dmg;
	size_t ndmg, dmgcap;
	int torn;                    /* the file's torn tail (its last part's) */
	uint64_t torn_offset;
	struct prec_part *parts;     /* one per file header (SPEC.md section 8) */
	size_t nparts, partcap;
};

struct prec_reader {
	int fd;                      /* -1 for memory sources */
	const unsigned char *mem;
	uint64_t size;
	uint64_t data_start;         /* first byte after the file header */
	struct prec_reader_opts opts;

	int indexed;                 /* ensure_index() ran */
	int index_err;
	/* the frames, and the structural damage found at open and while
	 * indexing (the file header's, then the walk's) */
	struct walk w;

	/* sequential iteration */
	size_t next_idx, next_dmg;
	int torn_reported;
	uint64_t report_mark;        /* damage below this offset was reported */
	uint64_t t0, t1;
	int windowed;
	struct prec_frame *cur;
	uint64_t kinds;              /* prec_reader_set_kinds(), for cur */

	pthread_mutex_t lock;
	struct prec_reader_stats st;
};

/* ---------------------------------------------------------------- source */

static int read_at(const struct prec_reader *r, uint64_t off, void *buf, size_t n)
{
	if (off > r->size || n > r->size - off)
		return PREC_E_TRUNCATED;
	if (r->mem) {
		memcpy(buf, r->mem + off, n);
		return 0;
	}
	while (n > 0) {
		ssize_t k = pread(r->fd, buf, n, (off_t)off);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return PREC_E_TRUNCATED;   /* file shrank under us */
		buf = (char *)buf + k;
		off += (uint64_t)k;
		n -= (size_t)k;
	}
	return 0;
}

/* ---------------------------------------------------------------- open */

/* A file-header record at off (SPEC.md section 3): 0 with its payload
 * size and version, or why not (PREC_E_MAGIC, _CORRUPT, _CHECKSUM,
 * _TRUNCATED, _VERSION, or an I/O error). Where the file starts, and in a
 * concatenation where each part starts. */
static int header_at(const struct prec_reader *r, uint64_t off, uint32_t *len,
		     uint32_t *major, uint32_t *minor)
{
	uint8_t h[PREC_SKIP_HDR + PREC_FILE_HEADER_MAX];
	int ret;

	if (r->size - off < PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE)
		return PREC_E_TRUNCATED;
	ret = read_at(r, off, h, PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE);
	if (ret < 0)
		return ret;
	if (prec_get32(h) != (PREC_SKIP_MAGIC_BASE | PREC_KIND_FILE_HEADER) ||
	    memcmp(h + 8, PREC_FILE_MAGIC, 8) != 0)
		return PREC_E_MAGIC;
	*len = prec_get32(h + 4);
	if (*len < PREC_FILE_HEADER_SIZE || *len > PREC_FILE_HEADER_MAX)
		return PREC_E_CORRUPT;
	if (r->size - off < PREC_SKIP_HDR + (uint64_t)*len)
		return PREC_E_TRUNCATED;
	ret = read_at(r, off, h, PREC_SKIP_HDR + *len);
	if (ret < 0)
		return ret;
	/* the major version decides first: a newer layout may move the crc.
	 * A major that only a damaged byte makes newer is told apart by the
	 * crc: it holds when the field reads as this reader's major. */
	*major = prec_get16(h + 16);
	*minor = prec_get16(h + 18);
	if (*major > PREC_VERSION_MAJOR) {
		uint8_t ours[PREC_SKIP_HDR + PREC_FILE_HEADER_MAX];
		memcpy(ours, h, PREC_SKIP_HDR + *len);
		prec_put16(ours + 16, PREC_VERSION_MAJOR);
		if (prec_crc32(ours + 8, *len - 4) != prec_get32(ours + 8 + *len - 4))
			return PREC_E_VERSION;
		return PREC_E_CHECKSUM;
	}
	if (*major < 1)
		return PREC_E_CORRUPT;
	if (prec_crc32(h + 8, *len - 4) != prec_get32(h + 8 + *len - 4))
		return PREC_E_CHECKSUM;
	return 0;
}

/* The file header at offset 0 as written: 0 and r->data_start set, or
 * why not (see header_at()). */
static int check_header(struct prec_reader *r)
{
	uint32_t len = 0;
	int ret;

	if (r->size < PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE) {
		/* a proper prefix of a header is a file torn right at its start */
		static const uint8_t want[] = { 0x50, 0x2A, 0x4D, 0x18 };
		uint8_t h[4];
		size_t n = r->size < 4 ? (size_t)r->size : 4;
		ret = read_at(r, 0, h, n);
		if (ret < 0)
			return ret;
		return memcmp(h, want, n) == 0 ? PREC_E_TRUNCATED : PREC_E_MAGIC;
	}
	ret = header_at(r, 0, &len, &r->st.version_major, &r->st.version_minor);
	if (ret == 0)
		r->data_start = PREC_SKIP_HDR + len;
	return ret;
}

static int read_info(const struct prec_reader *r, uint64_t off,
		     struct prec_frame_info *fi);
static int add_damage(struct walk *w, uint64_t offset, int err);

/* A damaged header (one flipped bit used to make a whole file unreadable)
 * is redundant: the first packets describe the recording again. The data
 * then starts at the first whole frame-info record (crc checked, followed
 * by a zstd frame) within the largest header a reader accepts: 0 and
 * *first, or 1 when there is none there (not a .prec file, or nothing
 * readable after the header). */
static int find_first_frame(struct prec_reader *r, uint64_t *first,
			    struct prec_frame_info *fi)
{
	uint8_t b[PREC_SKIP_HDR + PREC_FILE_HEADER_MAX + 4];
	size_t n = r->size < sizeof(b) ? (size_t)r->size : sizeof(b);
	int ret = read_at(r, 0, b, n);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i + 4 <= n; i++) {
		uint8_t m[4];
		if (prec_get32(b + i) != (PREC_SKIP_MAGIC_BASE | PREC_KIND_FRAME_INFO))
			continue;
		ret = read_info(r, i, fi);
		if (ret < 0 && ret != PREC_E_CHECKSUM && ret != PREC_E_CORRUPT)
			return ret;
		if (ret != 1 || fi->compressed_size < 4)
			continue;
		ret = read_at(r, fi->data_offset, m, 4);
		if (ret < 0)
			return ret;
		if (prec_get32(m) == PREC_ZSTD_MAGIC) {
			*first = i;
			return 0;
		}
	}
	return 1;
}

static int read_header(struct prec_reader *r)
{
	struct prec_frame_info fi;
	uint64_t first;
	int ret = check_header(r), found;

	/* a newer layout, or a file that ends inside its header, is not damage */
	if (ret == 0 || ret == PREC_E_VERSION || (ret < 0 && ret > -4096) ||
	    r->size < PREC_SKIP_HDR + PREC_FILE_HEADER_SIZE)
		return ret;
	found = find_first_frame(r, &first, &fi);
	if (found < 0)
		return found;
	if (found == 1)
		return ret;
	/* the version the frame-info records imply: kinds came with 1.1 */
	r->st.version_major = PREC_VERSION_MAJOR;
	r->st.version_minor = fi.data_offset - fi.offset - PREC_SKIP_HDR > PREC_INFO_MIN ?
			      PREC_VERSION_MINOR : 0;
	r->st.header_damaged = 1;
	r->data_start = first;
	return add_damage(&r->w, 0, PREC_E_HEADER);
}

static struct prec_reader *reader_alloc(const struct prec_reader_opts *opts)
{
	struct prec_reader_opts o = PREC_READER_OPTS_INIT;
	struct prec_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	if (opts) {
		size_t n = opts->sz && opts->sz < sizeof(o) ? opts->sz : sizeof(o);
		memcpy(&o, opts, n);
		o.sz = sizeof(o);
	}
	if (!o.max_frame_raw)
		o.max_frame_raw = PREC_DEFAULT_MAX_FRAME_RAW;
	r->opts = o;
	r->fd = -1;
	r->kinds = PREC_KINDS_ALL;
	if (pthread_mutex_init(&r->lock, NULL) != 0) {
		free(r);
		return NULL;
	}
	return r;
}

static int errno_of(int err)
{
	return err < 0 && err > -4096 ? -err : EINVAL;
}

struct prec_reader *prec_reader_open_err(const char *path,
					 const struct prec_reader_opts *opts,
					 int *err)
{
	struct prec_reader *r;
	struct stat sb;
	int ret;

	if (!path) {
		ret = -EINVAL;
		goto err_out;
	}
	r = reader_alloc(opts);
	if (!r) {
		ret = -ENOMEM;
		goto err_out;
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		ret = -errno;
		goto err_free;
	}
	if (fstat(r->fd, &sb) < 0) {
		ret = -errno;
		goto err_free;
	}
	if (!S_ISREG(sb.st_mode)) {
		ret = S_ISDIR(sb.st_mode) ? -EISDIR : -EINVAL;
		goto err_free;
	}
	r->size = (uint64_t)sb.st_size;
	r->st.file_size = r->size;
	ret = read_header(r);
	if (ret < 0)
		goto err_free;
	if (err)
		*err = 0;
	return r;

err_free:
	prec_reader_free(r);
err_out:
	if (err)
		*err = ret;
	errno = errno_of(ret);
	return NULL;
}

struct prec_reader *prec_reader_open(const char *path,
				     const struct prec_reader_opts *opts)
{
	return prec_reader_open_err(path, opts, NULL);
}

struct prec_reader *prec_reader_open_mem_err(const void *buf, size_t len,
					     const struct prec_reader_opts *opts,
					     int *err)
{
	struct prec_reader *r;
	int ret;

	if (!buf && len) {
		ret = -EINVAL;
		goto err_out;
	}
	r = reader_alloc(opts);
	if (!r) {
		ret = -ENOMEM;
		goto err_out;
	}
	r->mem = buf ? buf : (const unsigned char *)"";
	r->size = len;
	r->st.file_size = len;
	ret = read_header(r);
	if (ret < 0) {
		prec_reader_free(r);
		goto err_out;
	}
	if (err)
		*err = 0;
	return r;

err_out:
	if (err)
		*err = ret;
	errno = errno_of(ret);
	return NULL;
}

struct prec_reader *prec_reader_open_mem(const void *buf, size_t len,
					 const struct prec_reader_opts *opts)
{
	return prec_reader_open_mem_err(buf, len, opts, NULL);
}

void prec_reader_free(struct prec_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	prec_frame_free(r->cur);
	free(r->w.frames);
	free(r->w.dmg);
	free(r->w.parts);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* ---------------------------------------------------------------- index */

static int add_frame(struct walk *w, const struct prec_frame_info *fi)
{
	if (w->nframes == w->framecap) {
		size_t cap = w->framecap ? w->framecap * 2 : 64;
		struct prec_frame_info *nf = realloc(w->frames, cap * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		w->frames = nf;
		w->framecap = cap;
	}
	w->frames[w->nframes++] = *fi;
	return 0;
}

static int add_damage(struct walk *w, uint64_t offset, int err)
{
	if (w->ndmg == w->dmgcap) {
		size_t cap = w->dmgcap ? w->dmgcap * 2 : 16;
		struct prec_damage *nd = realloc(w->dmg, cap * sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		w->dmg = nd;
		w->dmgcap = cap;
	}
	w->dmg[w->ndmg].offset = offset;
	w->dmg[w->ndmg].err = err;
	w->ndmg++;
	return 0;
}

/* The frame-info fields at p; kinds only when the record has them. */
static void decode_fields(const uint8_t *p, int has_kinds, struct prec_frame_info *fi)
{
	fi->stream = prec_get32(p + PREC_INFO_STREAM);
	fi->packets = prec_get32(p + PREC_INFO_PACKETS);
	fi->t_min = prec_get64(p + PREC_INFO_T_MIN);
	fi->t_max = prec_get64(p + PREC_INFO_T_MAX);
	fi->compressed_size = prec_get32(p + PREC_INFO_CSIZE);
	fi->raw_size = prec_get32(p + PREC_INFO_RSIZE);
	fi->seq = prec_get64(p + PREC_INFO_SEQ);
	fi->kinds = has_kinds ? prec_get64(p + PREC_INFO_KINDS) : 0;
}

void prec_info_decode(const uint8_t *p, size_t len, struct prec_frame_info *fi)
{
	/* the crc is the last 4 bytes: kinds exist when there is room before */
	decode_fields(p, len >= PREC_INFO_KINDS + 8 + 4, fi);
}

static void parse_entry(const uint8_t *q, uint32_t esize, struct prec_frame_info *fi)
{
	fi->offset = prec_get64(q + PREC_IDX_OFFSET);
	fi->data_offset = prec_get64(q + PREC_IDX_DATA_OFFSET);
	decode_fields(q + PREC_IDX_INFO, esize >= PREC_IDX_KINDS + 8, fi);
}

/* The trailing index of the file (or part of a concatenation) whose
 * header is at `start`, whose data begins at data_start and whose last
 * byte is end - 1; its offsets are the part's own, from its header on,
 * and go into `out` as file offsets. 1 taken, 0 absent or inconsistent
 * (walk instead), < 0 on I/O or allocation failure. */
static int load_index(const struct prec_reader *r, uint64_t start, uint64_t end,
		      uint64_t data_start, struct walk *out)
{
	uint8_t tr[PREC_TRAILER_SIZE], h[PREC_SKIP_HDR];
	uint64_t ioff, len, count, esize, body, prev_end;
	uint8_t *buf = NULL;
	size_t first = out->nframes;
	int ret;

	if (end < data_start + PREC_SKIP_HDR + PREC_IDX_HEAD + 4 + PREC_TRAILER_SIZE)
		return 0;
	ret = read_at(r, end - PREC_TRAILER_SIZE, tr, sizeof(tr));
	if (ret < 0)
		return ret;
	if (memcmp(tr + 8, PREC_TRAILER_MAGIC, 8) != 0)
		return 0;
	ioff = prec_get64(tr);
	if (ioff > end - start)
		return 0;
	ioff += start;
	if (ioff < data_start ||
	    ioff > end - (PREC_SKIP_HDR + PREC_IDX_HEAD + 4 + PREC_TRAILER_SIZE))
		return 0;
	ret = read_at(r, ioff, h, sizeof(h));
	if (ret < 0)
		return ret;
	len = prec_get32(h + 4);
	if (prec_get32(h) != (PREC_SKIP_MAGIC_BASE | PREC_KIND_INDEX) ||
	    ioff + PREC_SKIP_HDR + len != end)
		return 0;
	/* check the counts before allocating: every frame takes at least an
	 * info record and a minimal zstd frame, so count is bounded by the
	 * bytes before the index */
	ret = read_at(r, ioff + PREC_SKIP_HDR, tr, PREC_IDX_HEAD);
	if (ret < 0)
		return ret;
	count = prec_get32(tr);
	esize = prec_get32(tr + 4);
	if (esize < PREC_IDX_ENTRY_MIN || esize > 4096)
		return 0;
	body = PREC_IDX_HEAD + count * esize;   /* count, esize < 2^32: no overflow */
	if (body + 4 + PREC_TRAILER_SIZE != len ||
	    count * (PREC_SKIP_HDR + PREC_INFO_MIN + 9) > ioff - data_start)
		return 0;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	ret = read_at(r, ioff + PREC_SKIP_HDR, buf, len);
	if (ret < 0)
		goto out;
	ret = 0;
	if (prec_crc32(buf, body) != prec_get32(buf + body))
		goto out;
	prev_end = data_start;
	for (uint64_t i = 0; i < count; i++) {
		struct prec_frame_info fi;
		parse_entry(buf + PREC_IDX_HEAD + i * esize, esize, &fi);
		/* part-relative offsets; an offset past the part cannot be
		 * shifted without overflow and is inconsistent anyway */
		if (fi.offset > end - start || fi.data_offset > end - start)
			goto inconsistent;
		fi.offset += start;
		fi.data_offset += start;
		if (fi.offset < prev_end ||
		    fi.data_offset < fi.offset + PREC_SKIP_HDR + PREC_INFO_MIN ||
		    fi.data_offset > ioff || fi.compressed_size > ioff - fi.data_offset)
			goto inconsistent;
		prev_end = fi.data_offset + fi.compressed_size;
		ret = add_frame(out, &fi);
		if (ret < 0)
			goto out;
	}
	ret = 1;
	goto out;

inconsistent:
	out->nframes = first;
	ret = 0;
out:
	free(buf);
	return ret;
}

/* Sizes of a zstd frame at off by walking its block headers: 1 and *fsize
 * when complete, 0 when the file ends inside it (torn), PREC_E_CORRUPT when
 * the header or a block header is invalid, or another error. */
static int walk_zstd_frame(const struct prec_reader *r, uint64_t off,
			   uint64_t *fsize, uint64_t *content)
{
	static const uint8_t dict_sz[4] = { 0, 1, 2, 4 };
	uint8_t fh[14];
	uint64_t pos;
	int ret, fcs_flag, single, checksum;
	size_t hsize, fcs_size;

	if (r->size - off < 5)
		return 0;
	ret = read_at(r, off, fh, 5);
	if (ret < 0)
		return ret;
	if (prec_get32(fh) != PREC_ZSTD_MAGIC)
		return PREC_E_CORRUPT;
	fcs_flag = fh[4] >> 6;
	single = (fh[4] >> 5) & 1;
	checksum = (fh[4] >> 2) & 1;
	if (fh[4] & 0x08)
		return PREC_E_CORRUPT;   /* reserved bit */
	fcs_size = fcs_flag == 0 ? (size_t)single : (size_t)1 << fcs_flag;
	hsize = 5 + (single ? 0 : 1) + dict_sz[fh[4] & 3] + fcs_size;
	if (r->size - off < hsize)
		return 0;
	*content = 0;
	if (fcs_size) {
		uint8_t c[8] = { 0 };
		ret = read_at(r, off + hsize - fcs_size, c, fcs_size);
		if (ret < 0)
			return ret;
		*content = prec_get64(c);
		if (fcs_size == 2)
			*content += 256;
	}
	pos = off + hsize;
	for (;;) {
		uint8_t b[3];
		uint32_t bh, bsize;
		if (r->size - pos < 3)
			return 0;
		ret = read_at(r, pos, b, 3);
		if (ret < 0)
			return ret;
		bh = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16);
		bsize = bh >> 3;
		switch ((bh >> 1) & 3) {
		case 1:   /* RLE: one byte repeated bsize times */
			bsize = 1;
			break;
		case 3:
			return PREC_E_CORRUPT;
		default:
			if (bsize > 128 * 1024)
				return PREC_E_CORRUPT;
			break;
		}
		pos += 3;
		if (r->size - pos < bsize)
			return 0;
		pos += bsize;
		if (bh & 1)
			break;
	}
	if (checksum) {
		if (r->size - pos < 4)
			return 0;
		pos += 4;
	}
	*fsize = pos - off;
	return 1;
}

/* A frame-info record at off: 1 valid (fi filled), 0 torn (the record or
 * its data frame runs past the end), PREC_E_CHECKSUM / PREC_E_CORRUPT. */
static int read_info(const struct prec_reader *r, uint64_t off,
		     struct prec_frame_info *fi)
{
	uint8_t b[PREC_SKIP_HDR + PREC_INFO_MAX];
	uint32_t len;
	int ret;

	if (r->size - off < PREC_SKIP_HDR)
		return 0;
	ret = read_at(r, off, b, PREC_SKIP_HDR);
	if (ret < 0)
		return ret;
	if (prec_get32(b) != (PREC_SKIP_MAGIC_BASE | PREC_KIND_FRAME_INFO))
		return PREC_E_CORRUPT;
	len = prec_get32(b + 4);
	if (len < PREC_INFO_MIN || len > PREC_INFO_MAX)
		return PREC_E_CORRUPT;
	if (r->size - off - PREC_SKIP_HDR < len)
		return 0;
	ret = read_at(r, off + PREC_SKIP_HDR, b + PREC_SKIP_HDR, len);
	if (ret < 0)
		return ret;
	if (prec_crc32(b + PREC_SKIP_HDR, len - 4) != prec_get32(b + PREC_SKIP_HDR + len - 4))
		return PREC_E_CHECKSUM;
	const uint8_t *p = b + PREC_SKIP_HDR;
	fi->offset = off;
	fi->data_offset = off + PREC_SKIP_HDR + len;
	prec_info_decode(p, len, fi);
	if (r->size - fi->data_offset < fi->compressed_size)
		return 0;
	return 1;
}

/* The first offset in [from, to) where a valid frame-info record or zstd
 * frame starts (or one that is torn by the end of the file), or a valid
 * file header (*header set); with headers_only, a valid file header only.
 * *next = to when there is none. */
static int scan(const struct prec_reader *r, uint64_t from, uint64_t to,
		int headers_only, uint64_t *next, int *header)
{
	uint8_t buf[64 * 1024 + 3];
	uint64_t pos = from;
	int ret;

	*header = 0;
	while (pos < to && r->size - pos >= 4) {
		/* a magic starting before `to` may end after it */
		uint64_t want = to - pos + 3 < r->size - pos ? to - pos + 3 : r->size - pos;
		size_t n = want < sizeof(buf) ? (size_t)want : sizeof(buf);
		ret = read_at(r, pos, buf, n);
		if (ret < 0)
			return ret;
		for (size_t i = 0; i + 4 <= n && pos + i < to; i++) {
			uint32_t m = prec_get32(buf + i), len, major, minor;
			struct prec_frame_info fi;
			uint64_t fs, cs;
			if (m == (PREC_SKIP_MAGIC_BASE | PREC_KIND_FILE_HEADER)) {
				ret = header_at(r, pos + i, &len, &major, &minor);
				if (ret == 0) {
					*header = 1;
					ret = 1;
				} else if (ret < -4096) {
					continue;   /* not a whole header */
				}
			} else if (headers_only) {
				continue;
			} else if (m == (PREC_SKIP_MAGIC_BASE | PREC_KIND_FRAME_INFO)) {
				ret = read_info(r, pos + i, &fi);
			} else if (m == PREC_ZSTD_MAGIC) {
				ret = walk_zstd_frame(r, pos + i, &fs, &cs);
			} else {
				continue;
			}
			if (ret == 0 || ret == 1) {
				*next = pos + i;
				return 0;
			}
			if (ret != PREC_E_CHECKSUM && ret != PREC_E_CORRUPT)
				return ret;
		}
		if (n < sizeof(buf))
			break;
		pos += n - 3;   /* a magic may straddle the chunk boundary */
	}
	*next = to;
	return 0;
}

/* After damage at `from`: where reading resumes (scan()), or r->size. */
static int resync(const struct prec_reader *r, uint64_t from, uint64_t *next,
		  int *header)
{
	return scan(r, from, r->size, 0, next, header);
}

/* The first valid file header starting in [from, to): 1 and *at, 0 none,
 * or < 0. */
static int find_header(const struct prec_reader *r, uint64_t from, uint64_t to,
		       uint64_t *at)
{
	int header, ret = scan(r, from, to < r->size ? to : r->size, 1, at, &header);

	return ret < 0 ? ret : header;
}

static void set_torn(struct walk *w, uint64_t off)
{
	w->torn = 1;
	w->torn_offset = off;
}

/* Starts a part at `offset` (its file header); the previous part ends
 * there. Its frames are those added from now on. */
static int begin_part(struct walk *w, uint64_t offset, uint64_t data_start,
		      uint32_t major, uint32_t minor, int header_damaged)
{
	struct prec_part *p;

	if (w->nparts == w->partcap) {
		size_t cap = w->partcap ? w->partcap * 2 : 4;
		struct prec_part *np = realloc(w->parts, cap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		w->parts = np;
		w->partcap = cap;
	}
	if (w->nparts)
		w->parts[w->nparts - 1].end = offset;
	p = &w->parts[w->nparts++];
	memset(p, 0, sizeof(*p));
	p->offset = offset;
	p->end = UINT64_MAX;
	p->data_start = data_start;
	p->version_major = major;
	p->version_minor = minor;
	p->header_damaged = header_damaged;
	p->first_frame = w->nframes;
	return 0;
}

/* The last part ends at `size`: frame counts, time ranges and the torn
 * tail of the file. */
static void finish_parts(struct walk *w, uint64_t size)
{
	for (size_t i = 0; i < w->nparts; i++) {
		struct prec_part *p = &w->parts[i];
		size_t to = i + 1 < w->nparts ? w->parts[i + 1].first_frame : w->nframes;
		if (i + 1 == w->nparts) {
			p->end = size;
			p->torn = w->torn;
			p->torn_offset = w->torn_offset;
		}
		p->nframes = to - p->first_frame;
		p->t_min = p->t_max = 0;
		for (size_t j = p->first_frame; j < to; j++) {
			const struct prec_frame_info *f = &w->frames[j];
			if (f->t_min == 0 && f->t_max == 0)
				continue;
			if (!p->t_min || f->t_min < p->t_min)
				p->t_min = f->t_min;
			if (f->t_max > p->t_max)
				p->t_max = f->t_max;
		}
	}
}

/* The part being walked is torn at `torn` (the next part's header
 * follows): damage PREC_E_TRUNCATED, so that iteration reports it in
 * file order. */
static int torn_part(struct walk *w, uint64_t torn)
{
	struct prec_part *p = &w->parts[w->nparts - 1];

	p->torn = 1;
	p->torn_offset = torn;
	return add_damage(w, torn, PREC_E_TRUNCATED);
}

/* The record at pos is not whole: err is PREC_E_TRUNCATED when it runs
 * past the end of the file, else what is wrong with it. In a single file
 * that is the torn tail, or damage to skip (resync). In a concatenation
 * it is also where a torn part ends when a file header follows: then
 * reading goes on at *next, that header. 1 go on at *next, 0 the file
 * ends torn at pos, < 0 an error. */
static int not_whole(const struct prec_reader *r, struct walk *w, uint64_t pos,
		     int err, uint64_t *next)
{
	uint64_t h;
	int ret, header;

	if (err == PREC_E_TRUNCATED) {
		ret = find_header(r, pos + 1, r->size, &h);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			set_torn(w, pos);
			return 0;
		}
		*next = h;
		ret = torn_part(w, pos);
		return ret < 0 ? ret : 1;
	}
	ret = add_damage(w, pos, err);
	if (ret < 0)
		return ret;
	ret = resync(r, pos + 1, next, &header);
	if (ret < 0)
		return ret;
	if (header) {
		/* nothing whole between here and the next part: torn */
		w->ndmg--;
		ret = torn_part(w, pos);
		if (ret < 0)
			return ret;
	}
	return 1;
}

/* The same for an index record (size len at pos): a torn one, followed
 * by the next part, does not end with the trailer's magic. */
static int torn_index(const struct prec_reader *r, uint64_t pos, uint32_t len,
		      uint64_t *next)
{
	uint64_t end = pos + PREC_SKIP_HDR + len;
	uint8_t m[8];
	int ret;

	if (len >= PREC_TRAILER_SIZE) {
		ret = read_at(r, end - 8, m, 8);
		if (ret < 0)
			return ret;
		if (memcmp(m, PREC_TRAILER_MAGIC, 8) == 0)
			return 0;
	}
	return find_header(r, pos + PREC_SKIP_HDR, end, next);
}

/* A frame is taken by the size its info record gives. So is a torn last
 * frame of a part when the next part's bytes make up the rest, and the
 * walk would go on inside the next part, its header unseen. A whole frame
 * is followed by the next frame's info record (seq + 1), a file header,
 * an index or the end of the file; when anything else follows, the
 * frame's bytes are searched for the next part's file header. So a
 * header's bytes inside a data frame that is followed as it should be
 * are no part boundary. 1 and *next, that header: the frame is torn;
 * 0 take it; < 0 an error. */
static int torn_frame(const struct prec_reader *r, const struct prec_frame_info *fi,
		      uint64_t *next)
{
	uint64_t end = fi->data_offset + fi->compressed_size;
	uint8_t h[PREC_SKIP_HDR];
	int ret;

	if (end == r->size)
		return 0;
	if (r->size - end >= PREC_SKIP_HDR) {
		uint32_t magic, len, major, minor;
		ret = read_at(r, end, h, sizeof(h));
		if (ret < 0)
			return ret;
		magic = prec_get32(h);
		len = prec_get32(h + 4);
		if (magic == (PREC_SKIP_MAGIC_BASE | PREC_KIND_FRAME_INFO)) {
			struct prec_frame_info n;
			ret = read_info(r, end, &n);
			if (ret == 1 && n.seq == fi->seq + 1)
				return 0;
		} else if (magic == (PREC_SKIP_MAGIC_BASE | PREC_KIND_FILE_HEADER)) {
			ret = header_at(r, end, &len, &major, &minor);
			if (ret == 0)
				return 0;
		} else if (magic == (PREC_SKIP_MAGIC_BASE | PREC_KIND_INDEX)) {
			ret = torn_index(r, end, len, next);
			if (ret == 0)
				return 0;
		} else {
			ret = 0;
		}
		if (ret < 0 && ret > -4096)
			return ret;
	}
	return find_header(r, fi->data_offset + 1, end, next);
}

/* A file-header record at pos, inside the file: the start of the next
 * part of a concatenation, or a damaged one (PREC_E_HEADER at pos; its
 * frames are read from the next record that checks). 1 go on at *next,
 * 0 not a header (*next untouched), < 0 an error. */
static int walk_header(const struct prec_reader *r, struct walk *w, uint64_t pos,
		       uint64_t *next)
{
	uint32_t len = 0, major = 0, minor = 0;
	int ret = header_at(r, pos, &len, &major, &minor), header;

	if (ret == 0) {
		*next = pos + PREC_SKIP_HDR + len;
		ret = begin_part(w, pos, *next, major, minor, 0);
		return ret < 0 ? ret : 1;
	}
	if (ret > -4096 || ret == PREC_E_MAGIC || ret == PREC_E_TRUNCATED)
		return ret < 0 && ret > -4096 ? ret : 0;
	ret = add_damage(w, pos, PREC_E_HEADER);
	if (ret < 0)
		return ret;
	ret = resync(r, pos + 1, next, &header);
	if (ret < 0)
		return ret;
	ret = begin_part(w, pos, *next, PREC_VERSION_MAJOR, PREC_VERSION_MINOR, 1);
	return ret < 0 ? ret : 1;
}

/* Rebuilds the frame list by walking the file (SPEC.md "recovery"),
 * part by part in a concatenation. */
static int walk_file(const struct prec_reader *r, struct walk *w)
{
	uint64_t pos = r->data_start;
	int ret = begin_part(w, 0, r->data_start, r->st.version_major,
			     r->st.version_minor, r->st.header_damaged);

	if (ret < 0)
		return ret;
	while (pos < r->size) {
		uint8_t h[PREC_SKIP_HDR];
		struct prec_frame_info fi;
		uint64_t fsize, content;
		uint32_t magic, len;

		if (r->size - pos < PREC_SKIP_HDR) {
			ret = not_whole(r, w, pos, PREC_E_TRUNCATED, &pos);
			if (ret <= 0)
				break;
			continue;
		}
		ret = read_at(r, pos, h, sizeof(h));
		if (ret < 0)
			return ret;
		magic = prec_get32(h);
		len = prec_get32(h + 4);
		if (magic == (PREC_SKIP_MAGIC_BASE | PREC_KIND_FRAME_INFO)) {
			ret = read_info(r, pos, &fi);
			if (ret == 1) {
				uint8_t m[4];
				ret = fi.compressed_size >= 4 ? read_at(r, fi.data_offset, m, 4) : PREC_E_CORRUPT;
				if (ret == 0 && prec_get32(m) == PREC_ZSTD_MAGIC) {
					uint64_t next;
					ret = torn_frame(r, &fi, &next);
					if (ret == 1) {
						ret = torn_part(w, fi.offset);
						if (ret < 0)
							return ret;
						pos = next;
						continue;
					}
					if (ret < 0)
						return ret;
					ret = add_frame(w, &fi);
					if (ret < 0)
						return ret;
					pos = fi.data_offset + fi.compressed_size;
					continue;
				}
				if (ret < 0 && ret != PREC_E_CORRUPT)
					return ret;
				ret = PREC_E_CORRUPT;   /* info names no zstd frame */
			}
			if (ret == 0)
				ret = PREC_E_TRUNCATED;
			else if (ret != PREC_E_CHECKSUM && ret != PREC_E_CORRUPT)
				return ret;
			/* after a damaged record, its zstd frame is still found
			 * (and recovered) by resync */
			ret = not_whole(r, w, pos, ret, &pos);
			if (ret <= 0)
				break;
			continue;
		}
		if (magic == (PREC_SKIP_MAGIC_BASE | PREC_KIND_FILE_HEADER)) {
			ret = walk_header(r, w, pos, &pos);
			if (ret < 0)
				return ret;
			if (ret == 1)
				continue;
		}
		if (prec_is_skippable(magic)) {
			/* index, or a kind from a newer minor */
			uint64_t next;
			if (r->size - pos - PREC_SKIP_HDR < len) {
				ret = not_whole(r, w, pos, PREC_E_TRUNCATED, &pos);
				if (ret <= 0)
					break;
				continue;
			}
			ret = magic == (PREC_SKIP_MAGIC_BASE | PREC_KIND_INDEX) ?
			      torn_index(r, pos, len, &next) : 0;
			if (ret < 0)
				return ret;
			if (ret == 1) {
				ret = torn_part(w, pos);
				if (ret < 0)
					return ret;
				pos = next;
				continue;
			}
			pos += PREC_SKIP_HDR + (uint64_t)len;
			continue;
		}
		if (magic == PREC_ZSTD_MAGIC) {
			/* a data frame whose info record is lost */
			ret = walk_zstd_frame(r, pos, &fsize, &content);
			if (ret == 0) {
				ret = not_whole(r, w, pos, PREC_E_TRUNCATED, &pos);
				if (ret <= 0)
					break;
				continue;
			}
			if (ret == 1 && fsize <= UINT32_MAX) {
				memset(&fi, 0, sizeof(fi));
				fi.offset = pos;
				fi.data_offset = pos;
				fi.compressed_size = (uint32_t)fsize;
				fi.raw_size = content <= UINT32_MAX ? (uint32_t)content : UINT32_MAX;
				fi.stream = PREC_STREAM_UNKNOWN;
				fi.seq = PREC_SEQ_UNKNOWN;
				ret = add_frame(w, &fi);
				if (ret < 0)
					return ret;
				pos += fsize;
				continue;
			}
			if (ret < 0 && ret != PREC_E_CORRUPT)
				return ret;
		}
		ret = not_whole(r, w, pos, PREC_E_CORRUPT, &pos);
		if (ret <= 0)
			break;
	}
	if (ret < 0)
		return ret;
	finish_parts(w, r->size);
	return 0;
}

/* After a walk of a concatenation: each part whose own trailing index is
 * valid is read by it, as a single file would be (its frames from the
 * index, the walk's damage in it dropped but a damaged header's); the
 * others keep what the walk found. */
static int use_part_indexes(struct prec_reader *r)
{
	struct walk *w = &r->w;
	struct walk out = { 0 };
	size_t keep = 0, d = 0;
	int all = 1, ret = 0;

	for (size_t i = 0; i < w->nparts && ret >= 0; i++) {
		struct prec_part *p = &w->parts[i];
		size_t first = out.nframes;
		ret = w->nparts > 1 ? load_index(r, p->offset, p->end, p->data_start, &out) : 0;
		if (ret < 0)
			break;
		p->index_present = ret == 1;
		if (ret == 0) {
			all = 0;
			for (size_t j = p->first_frame; j < p->first_frame + p->nframes && ret >= 0; j++)
				ret = add_frame(&out, &w->frames[j]);
		} else {
			p->torn = 0;
		}
		p->first_frame = first;
		/* damage in file order: the part's entries are next */
		for (; d < w->ndmg && w->dmg[d].offset < p->end; d++)
			if (!p->index_present || w->dmg[d].err == PREC_E_HEADER)
				w->dmg[keep++] = w->dmg[d];
	}
	if (ret < 0) {
		free(out.frames);
		return ret;
	}
	w->ndmg = keep;
	free(w->frames);
	w->frames = out.frames;
	w->nframes = out.nframes;
	w->framecap = out.framecap;
	w->torn = w->parts[w->nparts - 1].torn;
	finish_parts(w, r->size);
	r->st.index_present = all;
	r->st.index_rebuilt = !all;
	return 0;
}

static int ensure_index(struct prec_reader *r)
{
	int ret;

	if (r->indexed)
		return r->index_err;
	r->indexed = 1;
	ret = load_index(r, 0, r->size, r->data_start, &r->w);
	if (ret == 1) {
		/* one file, read by its index as it always was */
		size_t n = r->w.nframes;
		r->w.nframes = 0;
		ret = begin_part(&r->w, 0, r->data_start, r->st.version_major,
				 r->st.version_minor, r->st.header_damaged);
		r->w.nframes = n;
		if (ret < 0)
			return r->index_err = ret;
		r->w.parts[0].index_present = 1;
		finish_parts(&r->w, r->size);
		r->st.index_present = 1;
		return r->index_err = 0;
	}
	if (ret == 0) {
		ret = walk_file(r, &r->w);
		if (ret == 0)
			ret = use_part_indexes(r);
		r->st.torn = r->w.torn;
		r->st.torn_offset = r->w.torn_offset;
	}
	return r->index_err = ret < 0 ? ret : 0;
}

int prec_reader_index(struct prec_reader *r,
		      const struct prec_frame_info **frames, size_t *n)
{
	int ret;

	if (!r)
		return -EINVAL;
	ret = ensure_index(r);
	if (frames)
		*frames = r->w.frames;
	if (n)
		*n = r->w.nframes;
	return ret;
}

int prec_reader_damage(struct prec_reader *r, const struct prec_damage **d,
		       size_t *n)
{
	int ret;

	if (!r)
		return -EINVAL;
	ret = ensure_index(r);
	if (d)
		*d = r->w.dmg;
	if (n)
		*n = r->w.ndmg;
	return ret;
}

int prec_reader_parts(struct prec_reader *r, const struct prec_part **parts,
		      size_t *n)
{
	int ret;

	if (!r)
		return -EINVAL;
	ret = ensure_index(r);
	if (parts)
		*parts = r->w.parts;
	if (n)
		*n = r->w.nparts;
	return ret;
}

int prec_reader_walk(struct prec_reader *r, struct prec_frame_info **frames,
		     size_t *nframes, struct prec_damage **damage, size_t *ndamage,
		     uint64_t *torn_offset)
{
	struct walk w = { 0 };
	int ret;

	if (!r || !frames || !nframes || !damage || !ndamage || !torn_offset)
		return -EINVAL;
	ret = walk_file(r, &w);
	free(w.parts);
	if (ret < 0) {
		free(w.frames);
		free(w.dmg);
		return ret;
	}
	*frames = w.frames;
	*nframes = w.nframes;
	*damage = w.dmg;
	*ndamage = w.ndmg;
	*torn_offset = w.torn ? w.torn_offset : UINT64_MAX;
	return 0;
}

/* ---------------------------------------------------------------- iteration */

void prec_reader_set_window(struct prec_reader *r, uint64_t t0, uint64_t t1)
{
	if (!r)
		return;
	r->t0 = t0;
	r->t1 = t1;
	r->windowed = 1;
}

void prec_reader_rewind(struct prec_reader *r)
{
	if (!r)
		return;
	r->next_idx = 0;
	r->next_dmg = 0;
	if (r->cur)
		r->cur->loaded = 0;
}

/* Damage found by the sequential walk: reported once per reader, even
 * across rewinds. */
static void report_seq(struct prec_reader *r, uint64_t offset, int err)
{
	if (offset < r->report_mark)
		return;
	r->report_mark = offset + 1;
	prec_reader_note_damage(r, offset, err);
}

/* A torn tail (of the file, or of a part before another) is a state,
 * not a damaged frame. The parts are read-only once indexed. */
static int is_torn_tail(const struct prec_reader *r, uint64_t offset, int err)
{
	if (err != PREC_E_TRUNCATED)
		return 0;
	if (r->st.torn && offset == r->st.torn_offset)
		return 1;
	for (size_t i = 0; r->indexed && i < r->w.nparts; i++)
		if (r->w.parts[i].torn && r->w.parts[i].torn_offset == offset)
			return 1;
	return 0;
}

void prec_reader_note_damage(struct prec_reader *r, uint64_t offset, int err)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	if (!is_torn_tail(r, offset, err))
		r->st.damaged_frames++;
	pthread_mutex_unlock(&r->lock);
	/* outside the lock: the callback may call prec_reader_stats() */
	if (r->opts.on_damage)
		r->opts.on_damage(r->opts.ctx, offset, err);
}

static int in_window(const struct prec_reader *r, const struct prec_frame_info *fi)
{
	if (!r->windowed || (fi->t_min == 0 && fi->t_max == 0))
		return 1;
	return fi->t_max >= r->t0 && fi->t_min <= r->t1;
}

int prec_reader_next_frame(struct prec_reader *r, struct prec_frame_info *fi)
{
	int ret;

	if (!r || !fi)
		return -EINVAL;
	ret = ensure_index(r);
	if (ret < 0)
		return ret;
	while (r->next_idx < r->w.nframes) {
		const struct prec_frame_info *e = &r->w.frames[r->next_idx];
		while (r->next_dmg < r->w.ndmg && r->w.dmg[r->next_dmg].offset < e->offset) {
			report_seq(r, r->w.dmg[r->next_dmg].offset, r->w.dmg[r->next_dmg].err);
			r->next_dmg++;
		}
		r->next_idx++;
		if (!in_window(r, e))
			continue;
		*fi = *e;
		return 1;
	}
	while (r->next_dmg < r->w.ndmg) {
		report_seq(r, r->w.dmg[r->next_dmg].offset, r->w.dmg[r->next_dmg].err);
		r->next_dmg++;
	}
	if (r->st.torn && !r->torn_reported) {
		r->torn_reported = 1;
		prec_reader_note_damage(r, r->st.torn_offset, PREC_E_TRUNCATED);
	}
	return 0;
}

/* A loaded frame's on_end: its packet counts, once it is read to its end
 * or to a damaged packet (any thread). */
static void account_frame(void *ctx, uint64_t packets, uint64_t unknown)
{
	struct prec_reader *r = ctx;

	pthread_mutex_lock(&r->lock);
	r->st.packets += packets;
	r->st.unknown_packets += unknown;
	pthread_mutex_unlock(&r->lock);
}

int prec_reader_load_frame(struct prec_reader *r,
			   const struct prec_frame_info *fi,
			   struct prec_frame *f)
{
	const void *z;
	int ret;

	if (!r || !fi || !f)
		return -EINVAL;
	if (fi->data_offset > r->size || fi->compressed_size > r->size - fi->data_offset)
		return PREC_E_TRUNCATED;
	/* bounds of the frame info, before reading or decompressing anything;
	 * prec_frame_load() checks the zstd header's content size again */
	if (fi->raw_size > r->opts.max_frame_raw)
		return PREC_E_TOO_BIG;
	if (fi->raw_size > (uint64_t)fi->compressed_size * PREC_MAX_RATIO)
		return PREC_E_RATIO;
	if (r->mem) {
		z = r->mem + fi->data_offset;
	} else {
		if (fi->compressed_size > f->zcap) {
			unsigned char *nb = realloc(f->zbuf, fi->compressed_size);
			if (!nb)
				return -ENOMEM;
			f->zbuf = nb;
			f->zcap = fi->compressed_size;
		}
		ret = read_at(r, fi->data_offset, f->zbuf, fi->compressed_size);
		if (ret < 0)
			return ret;
		z = f->zbuf;
	}
	/* the info record's sizes must agree with the frame it describes
	 * (a recovered frame's raw_size is the zstd header's own) */
	ret = prec_frame_load_sized(f, z, fi->compressed_size, r->opts.max_frame_raw,
				    fi->stream != PREC_STREAM_UNKNOWN ? fi->raw_size : UINT64_MAX);
	if (ret < 0)
		return ret;
	f->stream = fi->stream;
	f->offset = fi->offset;
	f->on_end = account_frame;
	f->on_end_ctx = r;
	pthread_mutex_lock(&r->lock);
	r->st.frames++;
	r->st.bytes_compressed += fi->compressed_size;
	r->st.bytes_raw += f->raw_len;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

int prec_reader_next_packet(struct prec_reader *r, struct prec_packet *p)
{
	struct prec_frame_info fi;
	int ret;

	if (!r || !p)
		return -EINVAL;
	if (!r->cur) {
		r->cur = prec_frame_new();
		if (!r->cur)
			return -ENOMEM;
		prec_frame_set_kinds(r->cur, r->kinds);
	}
	for (;;) {
		if (r->cur->loaded) {
			ret = prec_frame_next(r->cur, p);
			if (ret > 0)
				return 1;
			r->cur->loaded = 0;
			if (ret < 0)
				report_seq(r, r->cur->offset, ret);
		}
		ret = prec_reader_next_frame(r, &fi);
		if (ret <= 0)
			return ret;
		ret = prec_reader_load_frame(r, &fi, r->cur);
		if (ret == -ENOMEM)
			return ret;
		if (ret < 0)
			report_seq(r, fi.offset, ret);
	}
}

void prec_reader_set_kinds(struct prec_reader *r, uint64_t mask)
{
	if (!r)
		return;
	r->kinds = mask;
	prec_frame_set_kinds(r->cur, mask);
}

void prec_reader_stats(const struct prec_reader *r, struct prec_reader_stats *st)
{
	if (!st)
		return;
	if (!r) {
		memset(st, 0, sizeof(*st));
		return;
	}
	pthread_mutex_lock((pthread_mutex_t *)&r->lock);
	*st = r->st;
	pthread_mutex_unlock((pthread_mutex_t *)&r->lock);
}
