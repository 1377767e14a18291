/*
 * manifest.h - the files a daemon session made, kept by the daemon so that
 * `--keep N` deletes only those, and so that two sessions never share an
 * output stem (a group member's session must never delete or take over
 * the files of root's).
 *
 * One manifest per session name, DIR/NAME.manifest (proto/control.proto
 * SessionManifest), in the daemon's state directory: OUTPUT_DIR/.manifests,
 * 0700, owned by the daemon's user; clients cannot name it (their -o is a
 * plain name not starting with '.'). Every file a session creates is
 * added (path, the stem it was named from, its device and inode) before
 * anything is written into it; a file is deleted only when its path still
 * holds that same regular file (lstat: no symlink, no other inode put in
 * its place), and leaves the list when it is gone.
 *
 * Saving writes NAME.manifest.tmp (O_EXCL|O_NOFOLLOW), fsyncs it and
 * renames it over the old one: a crash leaves the old list or the new,
 * never a mix. Loading reads at most REC_MANIFEST_MAX bytes of a regular
 * file (O_NOFOLLOW) and checks every field (name, absolute paths, stems
 * that name their files): a manifest that fails is -EBADMSG, and callers
 * treat it as empty (files it may have listed are never deleted; safe).
 *
 * How to use:
 *
 *   struct rec_manifest m;
 *   int dfd = rec_manifest_dir_open(dir);        // the state directory
 *   rec_manifest_load(dfd, "web", &m);           // -ENOENT: m is empty
 *   rec_manifest_add(&m, path, stem, &st);       // a file created
 *   rec_manifest_save(dfd, &m);
 *   ... rec_manifest_live(&m.files[i]) ... rec_manifest_remove(&m, i) ...
 *   rec_manifest_release(&m);
 *
 * Errors: negative errno (logged by the callers that know the context,
 * except where said). Ownership: a manifest owns its strings.
 */
#ifndef REC_MANIFEST_H
#define REC_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define REC_MANIFEST_DIR ".manifests"
#define REC_MANIFEST_SUFFIX ".manifest"
/* 16 MiB: ~100,000 files of 150-byte paths, far beyond any --keep */
#define REC_MANIFEST_MAX (16u << 20)

struct rec_manifest_file {
	char *path;                      /* absolute */
	char *stem;                      /* absolute: path is STEM.<...> */
	uint64_t dev, ino;
};

struct rec_manifest {
	char name[65];
	uint32_t owner_uid;
	struct rec_manifest_file *files; /* oldest first */
	size_t n, cap;
};

/* An empty manifest of name. */
void rec_manifest_init(struct rec_manifest *m, const char *name, uint32_t owner_uid);
void rec_manifest_release(struct rec_manifest *m);

/* Creates dir (0700) when missing and opens it: it must be a directory
 * (not a symlink) owned by the caller's effective uid that neither group
 * nor others may write. fd (O_DIRECTORY, close-on-exec) or -errno, logged
 * with the fix. */
int rec_manifest_dir_open(const char *dir);

/* Decodes and checks the bytes of a manifest into *m (released first by
 * the caller; on error *m is empty). 0, -EBADMSG (not a valid manifest),
 * -ENOMEM. Untrusted bytes: every field is checked. */
int rec_manifest_decode(const void *b, size_t n, struct rec_manifest *m);
/* DIR/NAME.manifest into *m (initialised here). 0; -ENOENT (none: *m is
 * an empty manifest of name); -EBADMSG (not a manifest, or of another
 * name: *m empty); other -errno (*m empty). Logs nothing. */
int rec_manifest_load(int dirfd, const char *name, struct rec_manifest *m);
/* Atomically replaces DIR/NAME.manifest with *m. 0 or -errno. */
int rec_manifest_save(int dirfd, const struct rec_manifest *m);

/* Adds a file just created (st: its fstat). 0 or -ENOMEM. */
int rec_manifest_add(struct rec_manifest *m, const char *path, const char *stem,
		     const struct stat *st);
void rec_manifest_remove(struct rec_manifest *m, size_t i);
/* Does f's path still hold the file it made (a regular file, same device
 * and inode, not a symlink)? */
bool rec_manifest_live(const struct rec_manifest_file *f);

/* Is path a file name of stem: STEM.<anything>? (both absolute) */
bool rec_manifest_of_stem(const char *path, const char *stem);

#endif
