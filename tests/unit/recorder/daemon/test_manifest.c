/*
 * test_manifest.c - the daemon's record of a session's files
 * (recorder/daemon/manifest.c): saved and loaded again whole; garbage, a
 * manifest of another name, a relative path or a path not named from its
 * stem, a symlink in the manifest's place are each refused (-EBADMSG);
 * a file counts as the session's only while its path holds the same
 * regular file (not a symlink, not another inode); the state directory must be the daemon's alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control.pb-c.h"
#include "recorder/daemon/manifest.h"
#include "lib/logcap.h"

struct fx {
	char dir[64], mdir[96];
	int dfd;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/perfrec-manifest-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->mdir, sizeof(f->mdir), "%s/.manifests", f->dir);
	logcap_install();
	f->dfd = rec_manifest_dir_open(f->mdir);
	assert_true(f->dfd >= 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[160];

	close(f->dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* A file in f->dir, made now; its stat in *st. */
static void make_file(struct fx *f, const char *base, char *path, struct stat *st)
{
	int fd;

	snprintf(path, PATH_MAX, "%s/%s", f->dir, base);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, st), 0);
	close(fd);
}

static void write_raw(struct fx *f, const char *name, const void *b, size_t n)
{
	int fd = openat(f->dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, n), (ssize_t)n);
	close(fd);
}

static void test_roundtrip(void **state)
{
	struct fx *f = *state;
	struct rec_manifest m, l;
	char stem[PATH_MAX], p1[PATH_MAX], p2[PATH_MAX];
	struct stat st1, st2;

	snprintf(stem, sizeof(stem), "%s/web", f->dir);
	make_file(f, "web.20250101-000000.0001.prec", p1, &st1);
	make_file(f, "web.20250101-000000.0002.prec", p2, &st2);
	rec_manifest_init(&m, "web", 1000);
	assert_int_equal(rec_manifest_add(&m, p1, stem, &st1), 0);
	assert_int_equal(rec_manifest_add(&m, p2, stem, &st2), 0);
	assert_int_equal(rec_manifest_save(f->dfd, &m), 0);
	assert_int_equal(rec_manifest_load(f->dfd, "web", &l), 0);
	assert_int_equal(l.owner_uid, 1000);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.files[0].path, p1);
	assert_string_equal(l.files[1].stem, stem);
	assert_true(rec_manifest_live(&l.files[0]));
	/* the path no longer holds the file made: a symlink, another inode */
	unlink(p1);
	assert_int_equal(symlink(p2, p1), 0);
	assert_false(rec_manifest_live(&l.files[0]));
	l.files[1].ino++;   /* as if another file took the name */
	assert_false(rec_manifest_live(&l.files[1]));
	rec_manifest_remove(&l, 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.files[0].path, p2);
	rec_manifest_release(&l);
	rec_manifest_release(&m);
	/* none yet */
	assert_int_equal(rec_manifest_load(f->dfd, "other", &l), -ENOENT);
	assert_int_equal(l.n, 0);
	rec_manifest_release(&l);
}

/* Packs one manifest of name with one file (path, stem). */
static size_t pack_one(const char *name, const char *path, const char *stem,
		       unsigned char *b)
{
	Perfrec__Control__SessionManifest pm = PERFREC__CONTROL__SESSION_MANIFEST__INIT;
	Perfrec__Control__ManifestFile mf = PERFREC__CONTROL__MANIFEST_FILE__INIT, *fp = &mf;

	pm.name = (char *)name;
	mf.path = (char *)path;
	mf.stem = (char *)stem;
	pm.files = &fp;
	pm.n_files = 1;
	return perfrec__control__session_manifest__pack(&pm, b);
}

static void test_refused(void **state)
{
	struct fx *f = *state;
	struct rec_manifest m;
	unsigned char b[4096];
	char target[PATH_MAX];
	size_t n;

	write_raw(f, "web.manifest", "\xff\xff\xff garbage", 12);
	assert_int_equal(rec_manifest_load(f->dfd, "web", &m), -EBADMSG);
	assert_int_equal(m.n, 0);
	rec_manifest_release(&m);
	/* valid bytes, but another session's */
	n = pack_one("root", "/var/lib/perfrec/x.1.prec", "/var/lib/perfrec/x", b);
	write_raw(f, "web.manifest", b, n);
	assert_int_equal(rec_manifest_load(f->dfd, "web", &m), -EBADMSG);
	rec_manifest_release(&m);
	/* a path not named from its stem, a relative one, a bad name */
	n = pack_one("web", "/etc/shadow", "/var/lib/perfrec/web", b);
	assert_int_equal(rec_manifest_decode(b, n, &m), -EBADMSG);
	n = pack_one("web", "web.1.prec", "web", b);
	assert_int_equal(rec_manifest_decode(b, n, &m), -EBADMSG);
	n = pack_one("../x", "/a/web.1.prec", "/a/web", b);
	assert_int_equal(rec_manifest_decode(b, n, &m), -EBADMSG);
	n = pack_one("web", "/a/web.", "/a/web", b);
	assert_int_equal(rec_manifest_decode(b, n, &m), -EBADMSG);
	n = pack_one("web", "/a/web.1.prec", "/a/web", b);
	assert_int_equal(rec_manifest_decode(b, n, &m), 0);
	rec_manifest_release(&m);
	/* a symlink in the manifest's place is not followed */
	unlinkat(f->dfd, "web.manifest", 0);
	snprintf(target, sizeof(target), "%s/real", f->dir);
	write_raw(f, "../real", b, n);
	assert_int_equal(symlinkat(target, f->dfd, "web.manifest"), 0);
	assert_int_equal(rec_manifest_load(f->dfd, "web", &m), -EBADMSG);
	rec_manifest_release(&m);
}

static void test_dir(void **state)
{
	struct fx *f = *state;
	char p[PATH_MAX];
	int fd;

	/* group-writable: refused, with the fix */
	snprintf(p, sizeof(p), "%s/open", f->dir);
	assert_int_equal(mkdir(p, 0770), 0);
	assert_int_equal(chmod(p, 0770), 0);
	assert_int_equal(rec_manifest_dir_open(p), -EPERM);
	assert_non_null(strstr(logcap_all(), "remove it"));
	/* a symlink to a directory: refused */
	snprintf(p, sizeof(p), "%s/link", f->dir);
	assert_int_equal(symlink(f->mdir, p), 0);
	assert_true(rec_manifest_dir_open(p) < 0);
	/* made 0700 when missing */
	snprintf(p, sizeof(p), "%s/new", f->dir);
	fd = rec_manifest_dir_open(p);
	assert_true(fd >= 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
