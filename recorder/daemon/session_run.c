/*
 * session_run.c - one run of a session: a named recording with rotating
 * files, streams and a flight recorder; see session_run.h.
 *
 * The outputs are recording/outputs.h's; the session adds its name, its
 * state, and the manifest: every file the outputs create is listed there,
 * and its earlier runs' files of the same stem are what the outputs' keep
 * counts before this run's (oldest first: the order they were made in,
 * which names need not follow when a restart within the same second
 * reuses a deleted name's number).
 */
#include "recorder/daemon/session_run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/daemon/manifest.h"
#include "recorder/encode/meta.h"
#include "recorder/log.h"
#include "recorder/net/sendout.h"
#include "recorder/recording/outputs.h"
#include "format/base/opts.h"

/* Flight sessions write symbols only when an output ends (a snapshot):
 * a periodic table could sit in a frame the buffer drops. */
#define FLIGHT_SYMBOLS_NS (100ull * 365 * 86400 * 1000000000ull)

struct rec_session_run {
	struct rec_session_run_opts o;
	char *name, *stem;
	struct rec_recording_opts ro;
	char *to;
	struct rec_recording *r;
	struct rec_outputs *out;
	struct rec_sendout *send;        /* the outputs' stream, or NULL */
	bool started, stopped;
	char target[256];
	struct rec_manifest man;         /* the files it made (and may delete) */
	int mdir;                        /* the manifests' directory, or -1 */
};

/* ---- names */

/* Lists a file just created (fd) as this session's, in memory and in its
 * manifest, before anything is written into it: a crash after this
 * leaves a listed file, never an unlisted one that keep would miss. */
static void track_file(void *ctx, int fd, const char *path)
{
	struct rec_session_run *s = ctx;
	struct stat st;
	int ret;

	if (fstat(fd, &st) < 0 || rec_manifest_add(&s->man, path, s->stem, &st) < 0) {
		rec_log(REC_LOG_WARN, "cannot list %s as session %s's file (--keep will "
			"not delete it): %s", path, s->name, strerror(errno));
		return;
	}
	if (s->mdir >= 0 && (ret = rec_manifest_save(s->mdir, &s->man)) < 0)
		rec_log(REC_LOG_WARN, "cannot save the manifest of session %s in %s: %s "
			"(a later run will not delete %s)", s->name, s->o.manifest_dir,
			strerror(-ret), path);
}

static bool is_snapshot(const char *path)
{
	size_t n = strlen(path), k = strlen(".snapshot.prec");

	return n > k && !strcmp(path + n - k, ".snapshot.prec");
}

/* keep (recording/outputs.h) dropped a file from its list: deleted, or
 * its path holds another file now. It leaves the manifest too. */
static void forget_file(void *ctx, const char *path)
{
	struct rec_session_run *s = ctx;
	int ret;

	for (size_t i = 0; i < s->man.n; i++) {
		if (strcmp(s->man.files[i].path, path))
			continue;
		rec_manifest_remove(&s->man, i);
		if (s->mdir >= 0 && (ret = rec_manifest_save(s->mdir, &s->man)) < 0)
			rec_log(REC_LOG_WARN, "cannot save the manifest of session %s in %s: %s",
				s->name, s->o.manifest_dir, strerror(-ret));
		return;
	}
}

/* ---- life cycle */

/* The stem as an absolute path: manifests list absolute paths, and a
 * session's files must not change with its working directory. */
static char *absolute_stem(const char *stem, int *err)
{
	char cwd[PATH_MAX], *abs;

	if (!stem || stem[0] == '/')
		return prec_opts_strdup(stem, err);
	if (!getcwd(cwd, sizeof(cwd)) || asprintf(&abs, "%s/%s", cwd, stem) < 0) {
		*err = -errno ? -errno : -ENOMEM;
		rec_log(REC_LOG_ERROR, "cannot make the output stem %s absolute: %s", stem,
			strerror(-*err));
		return NULL;
	}
	return abs;
}

/* The manifest of earlier runs (a garbled one counts as none: the files
 * it may list are left alone). */
static int open_manifest(struct rec_session_run *s, const char *dir)
{
	int ret;

	rec_manifest_init(&s->man, s->name, s->o.owner_uid);
	if (!dir)
		return 0;
	s->mdir = rec_manifest_dir_open(dir);
	if (s->mdir < 0)
		return s->mdir;
	ret = rec_manifest_load(s->mdir, s->name, &s->man);
	if (ret == -EBADMSG)
		rec_log(REC_LOG_WARN, "%s/%s" REC_MANIFEST_SUFFIX " is not a manifest of "
			"session %s: starting a new one (the files it listed are left alone)",
			dir, s->name, s->name);
	else if (ret < 0 && ret != -ENOENT)
		rec_log(REC_LOG_WARN, "cannot read %s/%s" REC_MANIFEST_SUFFIX ": %s (the "
			"files of earlier runs are left alone)", dir, s->name, strerror(-ret));
	s->man.owner_uid = s->o.owner_uid;
	/* files gone since (or replaced: not ours) leave it */
	for (size_t i = 0; i < s->man.n;) {
		if (rec_manifest_live(&s->man.files[i]))
			i++;
		else
			rec_manifest_remove(&s->man, i);
	}
	return 0;
}

/* The session's outputs: its files (listed in its manifest, keep counting
 * its earlier runs' outputs of this stem first), stream, or flight
 * buffer. */
static int open_outputs(struct rec_session_run *s, const struct rec_sender_opts *to)
{
	struct rec_outputs_opts oo = REC_OUTPUTS_OPTS_INIT;
	struct rec_outputs_file *earlier = NULL;
	int ret;

	if (to) {
		ret = rec_sendout_new(to, &s->send);
		if (ret < 0)
			return ret;
		oo.to = rec_sendout_stream(s->send);
	}
	oo.name = s->name;
	oo.stem = s->stem;
	oo.rotate_bytes = s->o.rotate_bytes;
	oo.rotate_ns = s->o.rotate_ns;
	oo.keep = s->o.keep;
	oo.flight_bytes = s->o.flight_bytes;
	oo.finish_timeout_ms = s->o.finish_timeout_ms;
	oo.hooks.ctx = s;
	oo.hooks.created = track_file;
	oo.hooks.forgotten = forget_file;
	if (s->o.keep && s->stem && s->man.n) {
		earlier = calloc(s->man.n, sizeof(*earlier));
		if (!earlier)
			return -ENOMEM;
		for (size_t i = 0; i < s->man.n; i++) {
			const struct rec_manifest_file *f = &s->man.files[i];

			if (!strcmp(f->stem, s->stem) && !is_snapshot(f->path))
				earlier[oo.nearlier++] = (struct rec_outputs_file){
					f->path, f->dev, f->ino };
		}
		oo.earlier = earlier;
	}
	ret = rec_outputs_new(&oo, &s->out);
	free(earlier);
	return ret;
}

int rec_session_run_new(const struct rec_session_run_opts *opts, struct rec_session_run **out)
{
	struct rec_session_run *s = calloc(1, sizeof(*s));
	const struct rec_sender_opts *to;
	int ret = 0;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->mdir = -1;
	if (prec_opts_copy(&s->o, sizeof(s->o), opts) < 0 || !s->o.name || !s->o.rec) {
		rec_log(REC_LOG_ERROR, "session options: name and recording options "
			"are needed (and no unknown fields)");
		ret = -EINVAL;
		goto err;
	}
	s->name = prec_opts_strdup(s->o.name, &ret);
	s->stem = absolute_stem(s->o.stem, &ret);
	s->o.manifest_dir = NULL;   /* not kept: the fd is */
	if (ret < 0)
		goto err;
	ret = open_manifest(s, opts->manifest_dir);
	if (ret < 0)
		goto err;
	if (!s->o.flight_bytes && !s->stem && !s->o.to) {
		rec_log(REC_LOG_ERROR, "session %s has no output: a file, a collector "
			"(--to) or a flight recorder (--flight)", s->name);
		ret = -EINVAL;
		goto err;
	}
	to = s->o.to;
	if (to) {
		s->to = prec_opts_strdup(to->to, &ret);
		if (ret < 0)
			goto err;
	}
	s->ro = *s->o.rec;
	if (s->o.flight_bytes)
		s->ro.symbols_interval_ns = FLIGHT_SYMBOLS_NS;
	s->o.rec = NULL;
	s->o.to = NULL;
	s->o.name = s->name;
	s->o.stem = s->stem;
	rec_meta_target_string(s->ro.target,
			       s->ro.target == REC_TARGET_CPUS ? s->ro.cpus : s->ro.pids,
			       s->ro.target == REC_TARGET_CPUS ? s->ro.ncpus : s->ro.npids,
			       s->target, sizeof(s->target));
	ret = open_outputs(s, to);
	if (ret < 0)
		goto err;
	s->ro.frame_size = rec_outputs_frame_size(s->out, s->ro.frame_size);
	ret = rec_recording_new(&s->ro, rec_outputs_sink(s->out), rec_outputs_name(s->out),
				&s->r);
	if (ret < 0) {
		struct rec_outputs_status os;

		rec_outputs_status(s->out, &os);
		if (os.have_file)
			unlink(os.current_file);   /* nothing was recorded */
		goto err;
	}
	/* the recording copied what it keeps: nothing below points into
	 * the caller's option storage but evspecs and source */
	s->ro.cpus = NULL;
	s->ro.pids = NULL;
	s->ro.counters = NULL;
	s->ro.argv = NULL;
	s->ro.argv_self = NULL;
	*out = s;
	return 0;
err:
	rec_session_run_free(s);
	return ret;
}

int rec_session_run_start(struct rec_session_run *s)
{
	int ret = rec_recording_start(s->r);

	if (ret < 0)
		return ret;
	s->started = true;
	return rec_outputs_started(s->out);
}

int rec_session_run_pollfd(const struct rec_session_run *s)
{
	return rec_recording_pollfd(s->r);
}

int rec_session_run_rotate(struct rec_session_run *s, char *done, size_t len)
{
	if (s->o.flight_bytes) {
		rec_log(REC_LOG_ERROR, "session %s is a flight recorder: take a "
			"snapshot instead of rotating", s->name);
		return -EINVAL;
	}
	if (!s->started || s->stopped) {
		rec_log(REC_LOG_ERROR, "session %s is not recording", s->name);
		return -EINVAL;
	}
	return rec_outputs_rotate(s->out, s->r, done, len);
}

int rec_session_run_snapshot(struct rec_session_run *s, const char *path,
			     char *written, size_t len)
{
	if (!s->o.flight_bytes) {
		rec_log(REC_LOG_ERROR, "session %s is not a flight recorder (--flight "
			"SIZE): its data is in its files already", s->name);
		return -EINVAL;
	}
	if (!s->started || s->stopped) {
		rec_log(REC_LOG_ERROR, "session %s is not recording", s->name);
		return -EINVAL;
	}
	return rec_outputs_snapshot(s->out, s->r, path, written, len);
}

int rec_session_run_step(struct rec_session_run *s, int timeout_ms)
{
	int ret = rec_recording_step(s->r, timeout_ms);

	if (ret <= 0)
		return ret;
	ret = rec_outputs_step(s->out, s->r);
	return ret < 0 ? ret : 1;
}

int rec_session_run_stop(struct rec_session_run *s, const char *reason)
{
	int ret, fret;

	if (s->stopped)
		return 0;
	s->stopped = true;
	ret = rec_recording_stop(s->r, reason);
	fret = rec_outputs_finish(s->out);
	return ret ? ret : fret;
}

void rec_session_run_status(const struct rec_session_run *s, struct rec_session_run_status *st)
{
	struct rec_outputs_status os;

	memset(st, 0, sizeof(*st));
	rec_recording_stats(s->r, &st->rs);
	rec_outputs_status(s->out, &os);
	st->target = s->target;
	st->current_file = os.current_file;
	st->to = s->to ? s->to : "";
	st->flight = os.flight;
	st->fl = os.fl;
	st->snapshots = os.snapshots;
}

const char *rec_session_run_output_name(const struct rec_session_run *s)
{
	if (s->o.flight_bytes)
		return "";
	return rec_outputs_name(s->out);
}

void rec_session_run_free(struct rec_session_run *s)
{
	if (!s)
		return;
	rec_recording_free(s->r);
	rec_outputs_free(s->out);
	rec_sendout_free(s->send);
	rec_manifest_release(&s->man);
	if (s->mdir >= 0)
		close(s->mdir);
	free(s->name);
	free(s->stem);
	free(s->to);
	free(s);
}
