/*
 * session.c - a named recording with rotating files, streams and a flight
 * recorder; see session.h.
 *
 * One output at a time: `cur` holds its sinks. Rotation opens the next
 * output first (a file that cannot be created leaves the recording
 * running into the old one), then moves the recording over, then releases
 * the old sinks; a finished stream waits for its acknowledgements in a
 * thread of its own so the recording is never held up by the network.
 */
#include "recorder/daemon/session.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/base/clock.h"
#include "format/base/opts.h"
#include "format/sink.h"
#include "perfrec.pb-c.h"
#include "recorder/daemon/manifest.h"
#include "recorder/encode/meta.h"
#include "recorder/log.h"
#include "recorder/net/sendloss.h"

#define DEFAULT_FINISH_MS 10000u
/* Flight sessions write symbols only when an output ends (a snapshot):
 * a periodic table could sit in a frame the buffer drops. */
#define FLIGHT_SYMBOLS_NS (100ull * 365 * 86400 * 1000000000ull)
#define NAME_TRIES 1000

struct output {
	struct prec_sink *file;
	struct prec_sink *flight;
	struct rec_sender *sender;
	struct prec_sink *tee;
	struct prec_sink *sink;          /* what the recording writes into */
	char path[PATH_MAX];             /* the file, or "" */
	char id[128];                    /* the stream's session id, or "" */
	uint64_t start_ns;
};

struct finisher {
	pthread_t th;
	struct rec_sender *sender;
	uint32_t timeout_ms;
	struct finisher *next;
};

struct rec_session {
	struct rec_session_opts o;
	char *name, *stem;
	struct rec_recording_opts ro;
	struct rec_sender_opts so;
	char *to, *host;
	void *token;
	struct rec_recording *r;
	struct output cur;
	uint32_t seq;                    /* outputs and snapshots named so far */
	uint32_t snapshots;
	bool started, stopped;
	char target[256];
	struct finisher *fin;
	struct rec_manifest man;         /* the files it made (and may delete) */
	int mdir;                        /* the manifests' directory, or -1 */
};

/* ---- names */

/* Lists a file just created (fd) as this session's, in memory and in its
 * manifest, before anything is written into it: a crash after this
 * leaves a listed file, never an unlisted one that keep would miss. */
static void track_file(struct rec_session *s, int fd, const char *path)
{
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

/* "STEM.<UTC time>.<NNNN><suffix>" created with O_EXCL (never overwrites,
 * never follows a symlink), the counter bumped past names that exist, and
 * tracked as this session's. fd or -errno (logged). */
static int create_named(struct rec_session *s, const char *suffix, char *path,
			size_t len)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	int fd, e = -EEXIST;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm);
	for (int i = 0; i < NAME_TRIES && e == -EEXIST; i++) {
		if ((size_t)snprintf(path, len, "%s.%s.%04u%s", s->stem, when, ++s->seq,
				     suffix) >= len) {
			rec_log(REC_LOG_ERROR, "output path too long: %s...", s->stem);
			return -ENAMETOOLONG;
		}
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd >= 0) {
			track_file(s, fd, path);
			return fd;
		}
		e = -errno;
	}
	rec_log(REC_LOG_ERROR, "cannot create %s: %s", path, strerror(-e));
	return e;
}

/* The stream id of an output: the file's name without ".prec", or
 * NAME.<time>.<NNNN>. */
static void stream_id(struct rec_session *s, const char *path, char *id, size_t len)
{
	const char *base = strrchr(path, '/');
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	size_t n;

	if (path[0]) {
		base = base ? base + 1 : path;
		n = strlen(base);
		if (n > 5 && !strcmp(base + n - 5, ".prec"))
			n -= 5;
		snprintf(id, len, "%.*s", (int)(n < 64 ? n : 64), base);
		return;
	}
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm);
	snprintf(id, len, "%.40s.%s.%04u", s->name, when, ++s->seq);
}

static bool is_snapshot(const char *path)
{
	size_t n = strlen(path), k = strlen(".snapshot.prec");

	return n > k && !strcmp(path + n - k, ".snapshot.prec");
}

/* Files of this session beyond the newest `keep` are deleted: only files
 * its manifest lists (this run's and its earlier runs', oldest first: the
 * order they were made in, which names need not follow when a restart
 * within the same second reuses a deleted name's number), of its current
 * stem, and each only while its path still holds the file it made (a
 * name reused for another file, or a symlink put in its place, is not
 * ours). Entries whose file is gone leave the manifest. */
static void apply_keep(struct rec_session *s)
{
	struct rec_manifest_file **v = NULL;
	size_t n = 0, before = s->man.n;
	char **gone = NULL;
	size_t ngone = 0;

	for (size_t i = 0; i < s->man.n;) {
		if (rec_manifest_live(&s->man.files[i]))
			i++;
		else
			rec_manifest_remove(&s->man, i);
	}
	if (s->o.keep && s->stem && s->man.n) {
		v = calloc(s->man.n, sizeof(*v));
		gone = calloc(s->man.n, sizeof(*gone));
	}
	for (size_t i = 0; v && gone && i < s->man.n; i++) {
		struct rec_manifest_file *f = &s->man.files[i];

		if (!strcmp(f->stem, s->stem) && !is_snapshot(f->path))
			v[n++] = f;
	}
	if (n > s->o.keep) {
		for (size_t i = 0; i < n - s->o.keep; i++) {
			if (!strcmp(v[i]->path, s->cur.path))
				continue;
			if (!rec_manifest_live(v[i]))
				continue;   /* replaced since: not ours to delete */
			if (unlink(v[i]->path) < 0 && errno != ENOENT) {
				rec_log(REC_LOG_WARN, "cannot delete %s (keeping %u files): %s",
					v[i]->path, s->o.keep, strerror(errno));
				continue;
			}
			rec_log(REC_LOG_INFO, "deleted %s (keeping the newest %u)", v[i]->path,
				s->o.keep);
			gone[ngone++] = v[i]->path;
		}
	}
	for (size_t g = 0; g < ngone; g++) {
		for (size_t i = 0; i < s->man.n; i++) {
			if (s->man.files[i].path == gone[g]) {
				rec_manifest_remove(&s->man, i);
				break;
			}
		}
	}
	free(v);
	free(gone);
	if (s->mdir >= 0 && s->man.n != before) {
		int ret = rec_manifest_save(s->mdir, &s->man);

		if (ret < 0)
			rec_log(REC_LOG_WARN, "cannot save the manifest of session %s in %s: %s",
				s->name, s->o.manifest_dir, strerror(-ret));
	}
}

/* ---- outputs */

static void output_release(struct output *out)
{
	rec_sender_free(out->sender);
	prec_sink_free(out->tee);
	prec_sink_free(out->file);
	prec_sink_free(out->flight);
	memset(out, 0, sizeof(*out));
}

static int output_open(struct rec_session *s, struct output *out)
{
	int fd, ret;

	memset(out, 0, sizeof(*out));
	out->start_ns = prec_now_ns();
	if (s->o.flight_bytes) {
		out->flight = prec_flight_new(s->o.flight_bytes);
		if (!out->flight)
			return -ENOMEM;
		out->sink = out->flight;
		snprintf(out->path, sizeof(out->path), "flight buffer");
		return 0;
	}
	if (s->stem) {
		fd = create_named(s, ".prec", out->path, sizeof(out->path));
		if (fd < 0)
			return fd;
		out->file = prec_sink_fd_new(fd, 1);
		if (!out->file) {
			close(fd);
			unlink(out->path);
			return -ENOMEM;
		}
		out->sink = out->file;
	}
	if (s->to) {
		stream_id(s, out->path, out->id, sizeof(out->id));
		s->so.session_id = out->id;
		ret = rec_sender_new(&s->so, &out->sender);
		s->so.session_id = NULL;
		if (ret < 0)
			goto err;
		if (out->file) {
			out->tee = prec_sink_tee_new(out->file, rec_sender_sink(out->sender));
			if (!out->tee) {
				ret = -ENOMEM;
				goto err;
			}
			out->sink = out->tee;
		} else {
			out->sink = rec_sender_sink(out->sender);
		}
	}
	return 0;
err:
	if (out->file)
		unlink(out->path);
	output_release(out);
	return ret;
}

static void *finish_thread(void *arg)
{
	struct finisher *f = arg;

	rec_sender_finish(f->sender, f->timeout_ms);
	return NULL;
}

/* A finished output's stream waits for its acks without holding the
 * recording up. */
static void finish_stream_later(struct rec_session *s, struct rec_sender *sender)
{
	struct finisher *f = calloc(1, sizeof(*f));

	if (f) {
		f->sender = sender;
		f->timeout_ms = s->o.finish_timeout_ms;
		if (pthread_create(&f->th, NULL, finish_thread, f) == 0) {
			f->next = s->fin;
			s->fin = f;
			return;
		}
		free(f);
	}
	rec_sender_finish(sender, s->o.finish_timeout_ms);
	rec_sender_free(sender);
}

static void join_finishers(struct rec_session *s)
{
	while (s->fin) {
		struct finisher *f = s->fin;

		s->fin = f->next;
		pthread_join(f->th, NULL);
		rec_sender_free(f->sender);
		free(f);
	}
}

/* ---- life cycle */

static char *dup_or_null(const char *s, int *err)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*err = -ENOMEM;
	return d;
}

/* The stem as an absolute path: manifests list absolute paths, and a
 * session's files must not change with its working directory. */
static char *absolute_stem(const char *stem, int *err)
{
	char cwd[PATH_MAX], *abs;

	if (!stem || stem[0] == '/')
		return dup_or_null(stem, err);
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
static int open_manifest(struct rec_session *s, const char *dir)
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
	return 0;
}

int rec_session_new(const struct rec_session_opts *opts, struct rec_session **out)
{
	struct rec_session *s = calloc(1, sizeof(*s));
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
	if (!s->o.finish_timeout_ms)
		s->o.finish_timeout_ms = DEFAULT_FINISH_MS;
	s->name = dup_or_null(s->o.name, &ret);
	s->stem = absolute_stem(s->o.stem, &ret);
	s->o.manifest_dir = NULL;   /* not kept: the fd is */
	if (ret < 0)
		goto err;
	ret = open_manifest(s, opts->manifest_dir);
	if (ret < 0)
		goto err;
	if (s->o.flight_bytes && (s->o.to || s->o.rotate_bytes || s->o.rotate_ns)) {
		rec_log(REC_LOG_ERROR, "a flight recorder keeps its frames in memory: "
			"no --to, no rotation");
		ret = -EINVAL;
		goto err;
	}
	if (!s->o.flight_bytes && !s->stem && !s->o.to) {
		rec_log(REC_LOG_ERROR, "session %s has no output: a file, a collector "
			"(--to) or a flight recorder (--flight)", s->name);
		ret = -EINVAL;
		goto err;
	}
	if (s->o.to) {
		s->so = *s->o.to;
		s->so.sz = sizeof(s->so);
		s->to = dup_or_null(s->o.to->to, &ret);
		s->host = dup_or_null(s->o.to->host, &ret);
		if (s->o.to->token_len) {
			s->token = malloc(s->o.to->token_len);
			if (!s->token)
				ret = -ENOMEM;
			else
				memcpy(s->token, s->o.to->token, s->o.to->token_len);
		}
		if (ret < 0)
			goto err;
		s->so.to = s->to;
		s->so.host = s->host;
		s->so.token = s->token;
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
	ret = output_open(s, &s->cur);
	if (ret < 0)
		goto err;
	ret = rec_recording_new(&s->ro, s->cur.sink, s->cur.path, &s->r);
	if (ret < 0) {
		if (s->cur.file)
			unlink(s->cur.path);   /* nothing was recorded */
		goto err;
	}
	/* the recording copied what it keeps: nothing below points into
	 * the caller's option storage but evlist and source */
	s->ro.cpus = NULL;
	s->ro.pids = NULL;
	s->ro.counters = NULL;
	s->ro.argv = NULL;
	s->ro.argv_self = NULL;
	*out = s;
	return 0;
err:
	rec_session_free(s);
	return ret;
}

int rec_session_start(struct rec_session *s)
{
	int ret = rec_recording_start(s->r);

	if (ret < 0)
		return ret;
	/* the first packets are out (start flushed them): the preamble */
	if (s->cur.flight)
		prec_flight_arm(s->cur.flight);
	s->started = true;
	apply_keep(s);
	return 0;
}

int rec_session_pollfd(const struct rec_session *s)
{
	return rec_recording_pollfd(s->r);
}

/* Moves the recording into next (opened) and releases the old output. */
static int switch_output(struct rec_session *s, struct output *next)
{
	struct output old = s->cur;
	int ret;

	ret = rec_recording_rotate(s->r, next->sink, next->path[0] ? next->path : next->id);
	if (ret < 0) {
		/* the recording failed: it holds nothing of either now */
		output_release(next);
		return ret;
	}
	s->cur = *next;
	if (old.sender) {
		struct rec_sender *sender = old.sender;

		old.sender = NULL;
		prec_sink_free(old.tee);
		old.tee = NULL;
		finish_stream_later(s, sender);
	}
	output_release(&old);
	return 0;
}

int rec_session_rotate(struct rec_session *s, char *done, size_t len)
{
	struct output next;
	char finished[PATH_MAX];
	int ret;

	if (s->o.flight_bytes) {
		rec_log(REC_LOG_ERROR, "session %s is a flight recorder: take a "
			"snapshot instead of rotating", s->name);
		return -EINVAL;
	}
	if (!s->started || s->stopped) {
		rec_log(REC_LOG_ERROR, "session %s is not recording", s->name);
		return -EINVAL;
	}
	snprintf(finished, sizeof(finished), "%s", s->cur.path[0] ? s->cur.path : s->cur.id);
	ret = output_open(s, &next);
	if (ret < 0)
		return ret;   /* the recording goes on into the current output */
	ret = switch_output(s, &next);
	if (ret < 0)
		return ret;
	snprintf(done, len, "%s", finished);
	rec_log(REC_LOG_INFO, "%s finished, recording into %s", finished,
		s->cur.path[0] ? s->cur.path : s->cur.id);
	apply_keep(s);
	return 0;
}

int rec_session_snapshot(struct rec_session *s, const char *path,
			 char *written, size_t len)
{
	struct prec_flight_stats fl;
	struct prec_sink *old, *file;
	struct output next;
	char name[PATH_MAX];
	int fd, ret;

	if (!s->o.flight_bytes) {
		rec_log(REC_LOG_ERROR, "session %s is not a flight recorder (--flight "
			"SIZE): its data is in its files already", s->name);
		return -EINVAL;
	}
	if (!s->started || s->stopped) {
		rec_log(REC_LOG_ERROR, "session %s is not recording", s->name);
		return -EINVAL;
	}
	if (path) {
		snprintf(name, sizeof(name), "%s", path);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd < 0) {
			ret = -errno;
			rec_log(REC_LOG_ERROR, "cannot create %s: %s%s", path, strerror(-ret),
				ret == -EEXIST ? " (a snapshot never overwrites a file)" : "");
			return ret;
		}
	} else {
		fd = create_named(s, ".snapshot.prec", name, sizeof(name));
		if (fd < 0)
			return fd;
	}
	file = prec_sink_fd_new(fd, 1);
	if (!file) {
		close(fd);
		unlink(name);
		return -ENOMEM;
	}
	ret = output_open(s, &next);
	if (ret < 0)
		goto err;
	/* the window says what it misses, then nothing more is dropped */
	prec_flight_stats(s->cur.flight, &fl);
	if (fl.dropped_frames) {
		char why[320];

		snprintf(why, sizeof(why), "flight recorder: the %llu oldest frames "
			 "(%llu bytes, packets from %.3f to %.3f s) were dropped to stay "
			 "within %llu bytes; this trace holds the recording's first "
			 "packets and its newest frames, from %.3f s",
			 (unsigned long long)fl.dropped_frames,
			 (unsigned long long)fl.dropped_bytes, (double)fl.dropped_t_min / 1e9,
			 (double)fl.dropped_t_max / 1e9, (unsigned long long)fl.max_bytes,
			 (double)fl.window_t_min / 1e9);
		ret = rec_recording_write_loss(s->r, PERFREC__LOSS__KIND__FLIGHT_DROPPED,
					       fl.dropped_packets, why);
		if (ret < 0) {
			output_release(&next);
			goto err;
		}
	}
	prec_flight_seal(s->cur.flight);
	old = s->cur.flight;
	s->cur.flight = NULL;   /* kept for saving below */
	ret = rec_recording_rotate(s->r, next.sink, "flight buffer");
	if (ret < 0) {
		output_release(&next);
		prec_sink_free(old);
		goto err;
	}
	output_release(&s->cur);
	s->cur = next;
	prec_flight_arm(s->cur.flight);
	ret = prec_flight_save(old, file);
	prec_sink_free(old);
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "writing the snapshot %s failed: %s", name,
			strerror(-ret));
		goto err;
	}
	prec_sink_free(file);
	s->snapshots++;
	snprintf(written, len, "%s", name);
	rec_log(REC_LOG_INFO, "snapshot %s written (%llu older frames were dropped)",
		name, (unsigned long long)fl.dropped_frames);
	return 0;
err:
	prec_sink_free(file);
	unlink(name);
	return ret;
}

int rec_session_step(struct rec_session *s, int timeout_ms)
{
	struct rec_recording_stats st;
	char why[256], done[PATH_MAX];
	int ret;

	ret = rec_recording_step(s->r, timeout_ms);
	if (ret <= 0)
		return ret;
	ret = rec_sender_record_drops(s->cur.sender, s->r, why, sizeof(why));
	if (ret < 0)
		return ret;
	if (ret > 0)
		rec_log(REC_LOG_WARN, "%s", why);
	if (!s->o.rotate_bytes && !s->o.rotate_ns)
		return 1;
	rec_recording_stats(s->r, &st);
	if ((s->o.rotate_bytes && st.output_bytes >= s->o.rotate_bytes) ||
	    (s->o.rotate_ns && prec_now_ns() - s->cur.start_ns >= s->o.rotate_ns)) {
		ret = rec_session_rotate(s, done, sizeof(done));
		if (ret < 0) {
			rec_recording_stats(s->r, &st);
			if (st.state == REC_RECORDING_FAILED)
				return ret;
			/* the next file could not be created: go on, try
			 * again after the same size or age */
			s->cur.start_ns = prec_now_ns();
		}
	}
	return 1;
}

int rec_session_stop(struct rec_session *s, const char *reason)
{
	int ret, fret;

	if (s->stopped)
		return 0;
	s->stopped = true;
	ret = rec_recording_stop(s->r, reason);
	if (s->cur.sender) {
		fret = rec_sender_finish(s->cur.sender, s->o.finish_timeout_ms);
		if (!ret)
			ret = fret;
	}
	join_finishers(s);
	return ret;
}

void rec_session_status(const struct rec_session *s, struct rec_session_status *st)
{
	memset(st, 0, sizeof(*st));
	rec_recording_stats(s->r, &st->rs);
	st->target = s->target;
	st->current_file = s->cur.file ? s->cur.path : "";
	st->to = s->to ? s->to : "";
	st->flight = s->o.flight_bytes > 0;
	if (s->cur.flight)
		prec_flight_stats(s->cur.flight, &st->fl);
	st->snapshots = s->snapshots;
}

const char *rec_session_output_name(const struct rec_session *s)
{
	if (s->o.flight_bytes)
		return "";
	return s->cur.path[0] ? s->cur.path : s->cur.id;
}

void rec_session_free(struct rec_session *s)
{
	if (!s)
		return;
	rec_recording_free(s->r);
	join_finishers(s);
	output_release(&s->cur);
	rec_manifest_release(&s->man);
	if (s->mdir >= 0)
		close(s->mdir);
	free(s->name);
	free(s->stem);
	free(s->to);
	free(s->host);
	free(s->token);
	free(s);
}
