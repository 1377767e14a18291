/*
 * archive.c - the collector's session files; see archive.h.
 */
#include "recorder/net/archive_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/error.h"
#include "format/reader.h"
#include "format/record.h"
#include "recorder/log.h"

/* Damage logged per file before the rest is only counted. */
#define LOG_DAMAGE_MAX 8

struct scan_log {
	const char *path;   /* NULL: do not log */
	uint64_t n;
};

static void log_damage(void *ctx, const struct prec_record_damage *d)
{
	struct scan_log *l = ctx;

	if (!l->path || l->n++ >= LOG_DAMAGE_MAX)
		return;
	if (d->known && d->records)
		rec_log(REC_LOG_WARN, "%s: damaged bytes at offset %llu (%llu bytes, %s), "
			"in record(s) already acknowledged: kept as they are; readers "
			"skip the damaged frame", l->path, (unsigned long long)d->offset,
			(unsigned long long)d->len, prec_strerror(d->err));
	else if (d->known)
		rec_log(REC_LOG_WARN, "%s: %llu bytes after the index at offset %llu "
			"(%s): kept as they are; readers ignore them", l->path,
			(unsigned long long)d->len, (unsigned long long)d->offset,
			prec_strerror(d->err));
	else
		rec_log(REC_LOG_WARN, "%s: damaged bytes at offset %llu (%llu bytes, %s) "
			"that cannot be counted as records", l->path,
			(unsigned long long)d->offset, (unsigned long long)d->len,
			prec_strerror(d->err));
}

/* What the records of fd's first size bytes say (format/record.h
 * recovery); damage is logged under path unless it is NULL. */
static int scan_fd(int fd, uint64_t size, const char *path,
		   struct prec_record_recovery *s)
{
	struct scan_log l = { path, 0 };
	const unsigned char *m;

	memset(s, 0, sizeof(*s));
	s->certain = 1;
	if (!size)
		return 0;
	if (size > SIZE_MAX)
		return -EFBIG;
	m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	prec_record_recover(m, (size_t)size, log_damage, &l, s);
	munmap((void *)m, (size_t)size);
	if (l.n > LOG_DAMAGE_MAX)
		rec_log(REC_LOG_WARN, "%s: %llu more damaged stretches (%llu in all)", path,
			(unsigned long long)(l.n - LOG_DAMAGE_MAX), (unsigned long long)l.n);
	return 0;
}

int rec_archive_file_open(const char *dir, const char *host, const char *session,
		     struct rec_archive_file *a)
{
	char hostdir[4096];
	struct prec_record_recovery s;
	struct stat st;
	int ret;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	if (strlen(dir) > sizeof(a->path) - 160) {
		rec_log(REC_LOG_ERROR, "archive directory path too long: %s", dir);
		return -ENAMETOOLONG;
	}
	snprintf(hostdir, sizeof(hostdir), "%.3900s/%.64s", dir, host);
	if (mkdir(hostdir, 0750) < 0 && errno != EEXIST) {
		ret = -errno;
		rec_log(REC_LOG_ERROR, "cannot create %s: %s", hostdir, strerror(-ret));
		return ret;
	}
	snprintf(a->path, sizeof(a->path), "%.3980s/%.64s.prec", hostdir, session);
	a->fd = open(a->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (a->fd < 0) {
		ret = -errno;
		rec_log(REC_LOG_ERROR, "cannot open %s: %s", a->path, strerror(-ret));
		return ret;
	}
	if (flock(a->fd, LOCK_EX | LOCK_NB) < 0) {
		ret = errno == EWOULDBLOCK ? -EBUSY : -errno;
		rec_log(REC_LOG_ERROR, "%s is being written by another collector", a->path);
		goto err;
	}
	if (fstat(a->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		rec_log(REC_LOG_ERROR, "%s is not a regular file", a->path);
		goto err;
	}
	ret = scan_fd(a->fd, (uint64_t)st.st_size, a->path, &s);
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "cannot read %s: %s", a->path, strerror(-ret));
		goto err;
	}
	if (!s.certain) {
		/* resuming would number what comes next wrongly: a record
		 * appended twice or one skipped. Cutting would destroy
		 * acknowledged records. Leave the file as it is. */
		ret = -EUCLEAN;
		rec_log(REC_LOG_ERROR, "cannot resume %s: the damage at offset %llu hides how "
			"many records it holds, so the next one's number is unknown; the file "
			"is left as it is (perfrec-analyze reads it and skips the damage). To "
			"go on, move it aside: an archiver then rebuilds it from what the "
			"stream still holds; a recorder, which freed the records acknowledged "
			"here, needs a new recording (or another --session)", a->path,
			(unsigned long long)s.first_unknown);
		goto err;
	}
	a->damaged = s.damaged;
	if (s.end < (uint64_t)st.st_size) {
		/* a write cut short: part of one record, never acknowledged */
		if (ftruncate(a->fd, (off_t)s.end) < 0) {
			ret = -errno;
			rec_log(REC_LOG_ERROR, "cannot cut the torn tail of %s: %s",
				a->path, strerror(-ret));
			goto err;
		}
		a->cut = (uint64_t)st.st_size - s.end;
		rec_log(REC_LOG_WARN, "%s: cut %llu bytes after its last whole record "
			"(a write interrupted by a crash); the session resumes at record %llu",
			a->path, (unsigned long long)a->cut,
			(unsigned long long)s.records + 1);
	} else if (s.damaged) {
		rec_log(REC_LOG_WARN, "%s: %llu records, %llu damaged stretch(es) kept; the "
			"session resumes at record %llu, after the file's last byte", a->path,
			(unsigned long long)s.records, (unsigned long long)s.damaged,
			(unsigned long long)s.records + 1);
	}
	a->size = s.end;
	a->next_seq = s.records + 1;
	a->synced_seq = s.records;
	a->complete = s.complete;
	return 0;
err:
	close(a->fd);
	a->fd = -1;
	return ret;
}

int rec_archive_file_append(struct rec_archive_file *a, const void *buf, size_t len)
{
	struct prec_record rec;
	size_t done = 0;

	if (a->complete)
		return -EBADMSG;
	if (prec_record_scan(buf, len, 0, &rec) != 1 || rec.len != len)
		return -EBADMSG;
	if ((a->next_seq == 1) != (rec.kind == PREC_RECORD_HEADER))
		return -EBADMSG;   /* the header first, and only there */
	while (done < len) {
		ssize_t n = pwrite(a->fd, (const char *)buf + done, len - done,
				   (off_t)(a->size + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? -errno : -EIO;

			/* keep the file whole records: readers and a resume
			 * must not meet half of this one */
			if (ftruncate(a->fd, (off_t)a->size) < 0) {
				/* the resume cuts it instead */
			}
			return e;
		}
		done += (size_t)n;
	}
	a->size += len;
	a->next_seq++;
	if (rec.kind == PREC_RECORD_INDEX)
		a->complete = true;
	return 0;
}

int rec_archive_file_sync(struct rec_archive_file *a)
{
	if (a->synced_seq + 1 == a->next_seq)
		return 0;
	if (fdatasync(a->fd) < 0)
		return -errno;
	a->synced_seq = a->next_seq - 1;
	return 0;
}

void rec_archive_file_close(struct rec_archive_file *a)
{
	if (a->fd >= 0)
		close(a->fd);   /* releases the lock */
	a->fd = -1;
}

const char *rec_archive_status_name(enum rec_archive_status s)
{
	switch (s) {
	case REC_ARCHIVE_COMPLETE:
		return "complete";
	case REC_ARCHIVE_OPEN:
		return "open";
	case REC_ARCHIVE_DAMAGED:
		return "damaged";
	case REC_ARCHIVE_TORN:
	default:
		return "torn";
	}
}

/* The wall-clock start from the FileHeader (first packet). */
static uint64_t wall_start(const char *path)
{
	struct prec_reader *r = prec_reader_open(path, NULL);
	struct prec_packet p;
	uint64_t t = 0;

	if (!r)
		return 0;
	if (prec_reader_next_packet(r, &p) > 0 &&
	    p.pkt->data_case == PERFREC__PACKET__DATA_HEADER) {
		const Perfrec__FileHeader *h = p.pkt->header;

		if (h->start_time >= h->monotonic_ns)
			t = h->realtime_ns + (h->start_time - h->monotonic_ns);
		else
			t = h->realtime_ns - (h->monotonic_ns - h->start_time);
	}
	prec_reader_free(r);
	return t;
}

static int list_file(const char *path, const char *host, const char *name,
		     int (*cb)(const struct rec_archive_entry *, void *), void *ctx)
{
	struct rec_archive_entry e;
	struct prec_record_recovery s;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), ret;

	if (fd < 0)
		return 0;   /* vanished, or not ours to read */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	memset(&e, 0, sizeof(e));
	snprintf(e.host, sizeof(e.host), "%.64s", host);
	snprintf(e.id, sizeof(e.id), "%.*s",
		 (int)(strlen(name) - 5 < 64 ? strlen(name) - 5 : 64), name);
	e.path = path;
	e.bytes = (uint64_t)st.st_size;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0) {
		e.status = REC_ARCHIVE_OPEN;
	} else {
		flock(fd, LOCK_UN);
		e.status = REC_ARCHIVE_TORN;
	}
	if (scan_fd(fd, e.bytes, NULL, &s) == 0) {
		e.records = s.records;
		e.torn_bytes = e.bytes - s.end;
		e.damaged = s.damaged;
		e.damage_offset = s.first_damage;
		e.resumable = s.certain;
		e.complete = s.complete;
		if (s.complete)
			e.status = REC_ARCHIVE_COMPLETE;
		if (s.damaged && e.status != REC_ARCHIVE_OPEN)
			e.status = REC_ARCHIVE_DAMAGED;
		if (s.t_max > s.t_min)
			e.duration_ns = s.t_max - s.t_min;
	}
	close(fd);
	if (e.records)
		e.start_realtime_ns = wall_start(path);
	ret = cb(&e, ctx);
	return ret;
}

static int cmp_names(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int not_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

int rec_archive_list(const char *dir,
		     int (*cb)(const struct rec_archive_entry *e, void *ctx),
		     void *ctx)
{
	struct dirent **hosts;
	int nh = scandir(dir, &hosts, not_dot, cmp_names), ret = 0;

	if (nh < 0) {
		ret = -errno;
		rec_log(REC_LOG_ERROR, "cannot read %s: %s", dir, strerror(-ret));
		return ret;
	}
	for (int h = 0; h < nh; h++) {
		char hostdir[4096];
		struct dirent **files;
		int nf;

		snprintf(hostdir, sizeof(hostdir), "%s/%s", dir, hosts[h]->d_name);
		nf = ret ? -1 : scandir(hostdir, &files, not_dot, cmp_names);
		for (int f = 0; f < nf; f++) {
			const char *n = files[f]->d_name;
			size_t len = strlen(n);
			char path[8192];

			if (!ret && len > 5 && !strcmp(n + len - 5, ".prec")) {
				snprintf(path, sizeof(path), "%s/%s", hostdir, n);
				ret = list_file(path, hosts[h]->d_name, n, cb, ctx);
			}
			free(files[f]);
		}
		if (nf >= 0)
			free(files);
		free(hosts[h]);
	}
	free(hosts);
	return ret;
}
