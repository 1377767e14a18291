/*
 * manifest.c - the files a daemon session made; see manifest.h.
 */
#include "recorder/daemon/manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control.pb-c.h"
#include "recorder/daemon/config.h"
#include "recorder/log.h"
#include "recorder/net/wire.h"

void rec_manifest_init(struct rec_manifest *m, const char *name, uint32_t owner_uid)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", name ? name : "");
	m->owner_uid = owner_uid;
}

void rec_manifest_release(struct rec_manifest *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->files[i].path);
		free(m->files[i].stem);
	}
	free(m->files);
	m->files = NULL;
	m->n = m->cap = 0;
}

int rec_manifest_dir_open(const char *dir)
{
	struct stat st;
	int fd, e;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		e = -errno;
		rec_log(REC_LOG_ERROR, "cannot create the state directory %s: %s", dir,
			strerror(-e));
		return e;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		rec_log(REC_LOG_ERROR, "cannot open the state directory %s: %s%s", dir,
			strerror(-e), e == -ELOOP || e == -ENOTDIR ?
			" (it must be a directory, not a symlink: remove it)" : "");
		return e;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		rec_log(REC_LOG_ERROR, "the state directory %s must be owned by uid %u and "
			"writable by it alone (it is uid %u, mode %03o): remove it, the "
			"daemon makes it again", dir, (unsigned)geteuid(), (unsigned)st.st_uid,
			(unsigned)(st.st_mode & 0777));
		close(fd);
		return -EPERM;
	}
	return fd;
}

bool rec_manifest_of_stem(const char *path, const char *stem)
{
	size_t n = strlen(stem);

	return n && !strncmp(path, stem, n) && path[n] == '.' && path[n + 1];
}

static bool path_ok(const char *p)
{
	return p && p[0] == '/' && strlen(p) < PATH_MAX;
}

int rec_manifest_add(struct rec_manifest *m, const char *path, const char *stem,
		     const struct stat *st)
{
	struct rec_manifest_file *f;

	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct rec_manifest_file *nf = realloc(m->files, cap * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		m->files = nf;
		m->cap = cap;
	}
	f = &m->files[m->n];
	f->path = strdup(path);
	f->stem = strdup(stem);
	if (!f->path || !f->stem) {
		free(f->path);
		free(f->stem);
		return -ENOMEM;
	}
	f->dev = (uint64_t)st->st_dev;
	f->ino = (uint64_t)st->st_ino;
	m->n++;
	return 0;
}

void rec_manifest_remove(struct rec_manifest *m, size_t i)
{
	if (i >= m->n)
		return;
	free(m->files[i].path);
	free(m->files[i].stem);
	memmove(&m->files[i], &m->files[i + 1], (m->n - i - 1) * sizeof(*m->files));
	m->n--;
}

bool rec_manifest_live(const struct rec_manifest_file *f)
{
	struct stat st;

	return lstat(f->path, &st) == 0 && S_ISREG(st.st_mode) &&
	       (uint64_t)st.st_dev == f->dev && (uint64_t)st.st_ino == f->ino;
}

int rec_manifest_decode(const void *b, size_t n, struct rec_manifest *m)
{
	Perfrec__Control__SessionManifest *pm;
	int ret = 0;

	memset(m, 0, sizeof(*m));
	if (n > REC_MANIFEST_MAX)
		return -EBADMSG;
	pm = perfrec__control__session_manifest__unpack(NULL, n, b);
	if (!pm)
		return -EBADMSG;
	if (!pm->name || !rec_wire_name_ok(pm->name)) {
		ret = -EBADMSG;
		goto out;
	}
	rec_manifest_init(m, pm->name, pm->owner_uid);
	for (size_t i = 0; i < pm->n_files && !ret; i++) {
		const Perfrec__Control__ManifestFile *f = pm->files[i];
		struct stat st;

		/* a file is named from its stem: anything else is not ours */
		if (!path_ok(f->path) || !path_ok(f->stem) ||
		    !rec_manifest_of_stem(f->path, f->stem)) {
			ret = -EBADMSG;
			break;
		}
		memset(&st, 0, sizeof(st));
		st.st_dev = (dev_t)f->dev;
		st.st_ino = (ino_t)f->ino;
		ret = rec_manifest_add(m, f->path, f->stem, &st);
	}
	if (ret < 0)
		rec_manifest_release(m);
out:
	perfrec__control__session_manifest__free_unpacked(pm, NULL);
	return ret;
}

static int manifest_name(const char *name, const char *suffix, char *buf, size_t len)
{
	if (!rec_wire_name_ok(name))
		return -EINVAL;
	snprintf(buf, len, "%s" REC_MANIFEST_SUFFIX "%s", name, suffix);
	return 0;
}

int rec_manifest_load(int dirfd, const char *name, struct rec_manifest *m)
{
	char file[128];
	char *b;
	size_t got = 0;
	int fd, ret;

	rec_manifest_init(m, name, 0);
	ret = manifest_name(name, "", file, sizeof(file));
	if (ret < 0)
		return ret;
	fd = openat(dirfd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -EBADMSG : -errno;
	ret = rec_file_read_fd(fd, REC_MANIFEST_MAX, &b, &got);
	close(fd);
	if (ret == -EINVAL || ret == -EFBIG)
		return -EBADMSG;
	if (ret < 0)
		return ret;
	ret = rec_manifest_decode((const unsigned char *)b, got, m);
	free(b);
	if (!ret && strcmp(m->name, name))
		ret = -EBADMSG;   /* a manifest copied under another name */
	if (ret < 0) {
		rec_manifest_release(m);
		rec_manifest_init(m, name, 0);
	}
	return ret;
}

int rec_manifest_save(int dirfd, const struct rec_manifest *m)
{
	Perfrec__Control__SessionManifest pm = PERFREC__CONTROL__SESSION_MANIFEST__INIT;
	Perfrec__Control__ManifestFile *fs = NULL, **fp = NULL;
	char file[128], tmp[140];
	unsigned char *b = NULL;
	size_t len, off = 0;
	int fd = -1, ret;

	ret = manifest_name(m->name, "", file, sizeof(file));
	if (!ret)
		ret = manifest_name(m->name, ".tmp", tmp, sizeof(tmp));
	if (ret < 0)
		return ret;
	if (m->n) {
		fs = calloc(m->n, sizeof(*fs));
		fp = calloc(m->n, sizeof(*fp));
		if (!fs || !fp) {
			ret = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < m->n; i++) {
		perfrec__control__manifest_file__init(&fs[i]);
		fs[i].path = m->files[i].path;
		fs[i].stem = m->files[i].stem;
		fs[i].dev = m->files[i].dev;
		fs[i].ino = m->files[i].ino;
		fp[i] = &fs[i];
	}
	pm.name = (char *)m->name;
	pm.owner_uid = m->owner_uid;
	pm.files = fp;
	pm.n_files = m->n;
	len = perfrec__control__session_manifest__get_packed_size(&pm);
	b = malloc(len ? len : 1);
	if (!b) {
		ret = -ENOMEM;
		goto out;
	}
	perfrec__control__session_manifest__pack(&pm, b);
	/* a tmp left by a crash is ours to replace */
	if (unlinkat(dirfd, tmp, 0) < 0 && errno != ENOENT) {
		ret = -errno;
		goto out;
	}
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	while (off < len) {
		ssize_t k = write(fd, b + off, len - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			ret = -errno;
			goto out;
		}
		off += (size_t)k;
	}
	if (fsync(fd) < 0 || renameat(dirfd, tmp, dirfd, file) < 0) {
		ret = -errno;
		goto out;
	}
	fsync(dirfd);   /* the rename itself: best effort */
out:
	if (fd >= 0) {
		close(fd);
		if (ret < 0)
			unlinkat(dirfd, tmp, 0);
	}
	free(b);
	free(fs);
	free(fp);
	return ret;
}
