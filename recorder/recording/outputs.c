/*
 * outputs.c - where a recording goes, one output at a time; see outputs.h.
 */
#include "recorder/recording/outputs.h"

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

#include "perfrec.pb-c.h"
#include "format/base/clock.h"
#include "recorder/log.h"
#include "format/base/opts.h"

#define DEFAULT_FINISH_MS 10000u
#define NAME_TRIES 1000

struct output {
	struct prec_sink *file;
	struct prec_sink *flight;
	void *stream;                    /* o->o.to's */
	struct prec_sink *tee;
	struct prec_sink *sink;          /* what the recording writes into */
	char path[PATH_MAX];             /* the file, or "" */
	char id[128];                    /* the stream's session id, or "" */
	uint64_t start_ns;
};

struct finisher {
	pthread_t th;
	const struct rec_outputs_stream *to;
	void *stream;
	uint32_t timeout_ms;
	struct finisher *next;
};

struct made {                         /* a named output file, for keep */
	char *path;
	uint64_t dev, ino;
};

struct rec_outputs {
	struct rec_outputs_opts o;
	char *name, *path, *stem;
	struct output cur;
	uint32_t seq;                    /* outputs and snapshots named so far */
	uint32_t snapshots;
	bool warned;
	bool stream_ended;               /* refused for good: no more streams */
	struct finisher *fin;
	struct made *made;               /* oldest first */
	size_t nmade;
};

/* ---- a single file, held in memory until the recording started */

/*
 * The output file is touched only once the recording has started: until
 * then its bytes (header, event descriptions, the tasks from /proc) are
 * held in memory, so a start that fails (no such process, events refused,
 * a command that cannot run) leaves an existing FILE as it was and makes
 * no FILE.old, as perf does. At the commit the previous FILE is kept as
 * FILE.old and the held bytes are written; later writes go straight to
 * the file. "-" is standard output: a .prec is a sequence of frames, so
 * the trace can go down a pipe (perfrec-analyze reads what the pipe wrote
 * to a file).
 */
struct held_output {
	const char *path;            /* NULL: standard output (fd) */
	int fd;                      /* standard output's dup; -1 for a file */
	struct prec_sink *mem;       /* until the commit */
	struct prec_sink *file;      /* after it */
};

static int held_write(struct prec_sink *sink, const void *buf, size_t n)
{
	struct held_output *h = sink->priv;

	return prec_sink_write(h->file ? h->file : h->mem, buf, n);
}

static int held_sync(struct prec_sink *sink)
{
	struct held_output *h = sink->priv;

	return h->file ? prec_sink_sync(h->file) : 0;
}

static void held_destroy(struct prec_sink *sink)
{
	struct held_output *h = sink->priv;

	prec_sink_free(h->mem);
	prec_sink_free(h->file);
	if (!h->file && h->fd >= 0)
		close(h->fd);
	free(h);
}

static const struct prec_sink_ops held_ops = {
	.write = held_write, .sync = held_sync, .destroy = held_destroy,
};

/* Checks now what the commit will need, so a recording does not start
 * (nor a command run) only to find it cannot write: standard output not
 * a terminal, or FILE writable (opened without truncating) or creatable
 * in its directory. 0 or -errno (logged). */
static int check_output(const char *path)
{
	char dir[4096];
	const char *slash;
	int fd;

	if (!path) {
		if (isatty(STDOUT_FILENO)) {
			rec_log(REC_LOG_ERROR, "-o -: standard output is a terminal; the "
				"trace is binary: redirect it (-o - > FILE, or a pipe) or "
				"give -o FILE");
			return -EINVAL;
		}
		return 0;
	}
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno != ENOENT) {
		int e = -errno;

		rec_log(REC_LOG_ERROR, "cannot write %s: %s", path, strerror(-e));
		return e;
	}
	slash = strrchr(path, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1,
		 slash ? path : ".");
	if (access(dir, W_OK | X_OK) < 0) {
		int e = -errno;

		rec_log(REC_LOG_ERROR, "cannot create %s: %s (directory %s)", path,
			strerror(-e), dir);
		return e;
	}
	return 0;
}

/* path NULL: standard output, whose fd is kept here and replaced by
 * standard error, so a command recorded with -o - writes its own output
 * there and not into the trace (perf does the same). */
static int open_held(const char *path, struct prec_sink **sink)
{
	struct held_output *h;
	int ret = check_output(path);

	if (ret < 0)
		return ret;
	h = calloc(1, sizeof(*h));
	*sink = calloc(1, sizeof(**sink));
	if (h)
		h->mem = prec_sink_mem_new();
	if (!h || !*sink || !h->mem) {
		if (h)
			prec_sink_free(h->mem);
		free(h);
		free(*sink);
		*sink = NULL;
		rec_log(REC_LOG_ERROR, "out of memory");
		return -ENOMEM;
	}
	h->path = path;
	h->fd = -1;
	if (!path) {
		h->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		if (h->fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			ret = -errno;
			rec_log(REC_LOG_ERROR, "-o -: cannot take standard output: %s",
				strerror(-ret));
			prec_sink_free(h->mem);
			if (h->fd >= 0)
				close(h->fd);
			free(h);
			free(*sink);
			*sink = NULL;
			return ret;
		}
	}
	(*sink)->ops = &held_ops;
	(*sink)->priv = h;
	return 0;
}

/* The recording has started: the file now, the previous one kept as
 * FILE.old, and the bytes held so far into it. 0 or -errno (logged). */
static int commit_held(struct prec_sink *sink)
{
	struct held_output *h = sink->priv;
	const void *held;
	size_t n;
	int fd, ret;

	if (h->file)
		return 0;
	if (h->path) {
		struct stat st;
		char old[4096];

		if (stat(h->path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
		    (size_t)snprintf(old, sizeof(old), "%s.old", h->path) < sizeof(old))
			rename(h->path, old);
		fd = open(h->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			ret = -errno;
			rec_log(REC_LOG_ERROR, "cannot create %s: %s", h->path, strerror(-ret));
			return ret;
		}
	} else {
		fd = h->fd;
	}
	h->file = prec_sink_fd_new(fd, 1);
	if (!h->file) {
		close(fd);
		h->fd = -1;
		rec_log(REC_LOG_ERROR, "out of memory");
		return -ENOMEM;
	}
	held = prec_sink_mem_data(h->mem, &n);
	ret = prec_sink_write(h->file, held, n);
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "cannot write %s: %s", h->path ? h->path :
			"standard output", strerror(-ret));
		return ret;
	}
	prec_sink_free(h->mem);
	h->mem = NULL;
	return 0;
}

/* ---- named files */

/* "STEM.<UTC time>.<NNNN><suffix>" created with O_EXCL (never overwrites,
 * never follows a symlink), the counter bumped past names that exist,
 * and reported to hooks.created before anything is written into it. fd
 * or -errno (logged). */
static int create_named(struct rec_outputs *o, const char *suffix, char *path,
			size_t len)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	int fd, e = -EEXIST;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm);
	for (int i = 0; i < NAME_TRIES && e == -EEXIST; i++) {
		if ((size_t)snprintf(path, len, "%s.%s.%04u%s", o->stem, when, ++o->seq,
				     suffix) >= len) {
			rec_log(REC_LOG_ERROR, "output path too long: %s...", o->stem);
			return -ENAMETOOLONG;
		}
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd >= 0) {
			if (o->o.hooks.created)
				o->o.hooks.created(o->o.hooks.ctx, fd, path);
			return fd;
		}
		e = -errno;
	}
	rec_log(REC_LOG_ERROR, "cannot create %s: %s", path, strerror(-e));
	return e;
}

/* A file at the end of keep's list. 0 or -ENOMEM. */
static int list_file(struct rec_outputs *o, const char *path, uint64_t dev,
		     uint64_t ino)
{
	struct made *v = realloc(o->made, (o->nmade + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	o->made = v;
	v[o->nmade].path = strdup(path);
	v[o->nmade].dev = dev;
	v[o->nmade].ino = ino;
	if (!v[o->nmade].path)
		return -ENOMEM;
	o->nmade++;
	return 0;
}

/* An output file made, listed for keep. */
static void list_made(struct rec_outputs *o, int fd, const char *path)
{
	struct stat st;

	if (o->o.keep && fstat(fd, &st) == 0 &&
	    list_file(o, path, (uint64_t)st.st_dev, (uint64_t)st.st_ino) < 0)
		rec_log(REC_LOG_WARN, "out of memory: --keep will not delete %s", path);
}

/* Does m's path still hold the file made (a regular file, the same
 * device and inode, not a symlink)? */
static bool made_live(const struct made *m)
{
	struct stat st;

	return lstat(m->path, &st) == 0 && S_ISREG(st.st_mode) &&
	       (uint64_t)st.st_dev == m->dev && (uint64_t)st.st_ino == m->ino;
}

static void forget_made(struct rec_outputs *o, size_t i)
{
	struct made *m = &o->made[i];

	if (o->o.hooks.forgotten)
		o->o.hooks.forgotten(o->o.hooks.ctx, m->path);
	free(m->path);
	memmove(m, m + 1, (o->nmade - i - 1) * sizeof(*m));
	o->nmade--;
}

/* Files whose path no longer holds them leave the list (a name reused
 * for another file, or a symlink put in its place, is not ours); of the
 * rest the newest `keep` stay and older ones are deleted; the current
 * one never. */
static void apply_keep(struct rec_outputs *o)
{
	size_t i = 0, drop;

	if (!o->o.keep)
		return;
	while (i < o->nmade) {
		if (made_live(&o->made[i]))
			i++;
		else
			forget_made(o, i);
	}
	drop = o->nmade > o->o.keep ? o->nmade - o->o.keep : 0;
	i = 0;
	for (size_t k = 0; k < drop; k++) {
		struct made *m = &o->made[i];

		if (!strcmp(m->path, o->cur.path)) {
			i++;
			continue;
		}
		if (unlink(m->path) < 0 && errno != ENOENT) {
			rec_log(REC_LOG_WARN, "cannot delete %s (keeping %u files): %s",
				m->path, o->o.keep, strerror(errno));
			i++;
			continue;
		}
		rec_log(REC_LOG_INFO, "deleted %s (keeping the newest %u)", m->path,
			o->o.keep);
		forget_made(o, i);
	}
}

/* The stream id of an output: the file's name without ".prec", or
 * NAME.<time>.<NNNN>. */
static void stream_id(struct rec_outputs *o, const char *path, char *id, size_t len)
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
	snprintf(id, len, "%.40s.%s.%04u", o->name, when, ++o->seq);
}

/* ---- one output */

static void output_release(const struct rec_outputs *o, struct output *out)
{
	if (out->stream)
		o->o.to->free(out->stream);
	prec_sink_free(out->tee);
	prec_sink_free(out->file);
	prec_sink_free(out->flight);
	memset(out, 0, sizeof(*out));
}

static int output_open(struct rec_outputs *o, struct output *out)
{
	int fd, ret;

	memset(out, 0, sizeof(*out));
	out->start_ns = prec_now_ns();
	if (o->o.flight_bytes) {
		out->flight = prec_flight_new(o->o.flight_bytes);
		if (!out->flight)
			return -ENOMEM;
		out->sink = out->flight;
		snprintf(out->path, sizeof(out->path), "flight buffer");
		return 0;
	}
	if (o->path) {
		bool std_out = !strcmp(o->path, "-");

		ret = open_held(std_out ? NULL : o->path, &out->file);
		if (ret < 0)
			return ret;
		snprintf(out->path, sizeof(out->path), "%s",
			 std_out ? "standard output" : o->path);
		out->sink = out->file;
	} else if (o->stem) {
		fd = create_named(o, ".prec", out->path, sizeof(out->path));
		if (fd < 0)
			return fd;
		list_made(o, fd, out->path);
		out->file = prec_sink_fd_new(fd, 1);
		if (!out->file) {
			close(fd);
			unlink(out->path);
			return -ENOMEM;
		}
		out->sink = out->file;
	}
	if (o->o.to && !o->stream_ended) {
		const struct rec_outputs_stream *to = o->o.to;

		if (o->stem || o->name)
			stream_id(o, o->stem ? out->path : "", out->id, sizeof(out->id));
		ret = to->open(to->ctx, out->id[0] ? out->id : NULL, &out->stream);
		if (ret < 0)
			goto err;
		snprintf(out->id, sizeof(out->id), "%s", to->id(out->stream));
		if (out->file) {
			out->tee = prec_sink_tee_new(out->file, to->sink(out->stream));
			if (!out->tee) {
				ret = -ENOMEM;
				goto err;
			}
			out->sink = out->tee;
		} else {
			out->sink = to->sink(out->stream);
		}
	}
	return 0;
err:
	if (out->file && o->stem)
		unlink(out->path);
	output_release(o, out);
	return ret;
}

static void *finish_thread(void *arg)
{
	struct finisher *f = arg;

	f->to->finish(f->stream, f->timeout_ms);
	return NULL;
}

/* A finished output's stream waits for its acks without holding the
 * recording up. */
static void finish_stream_later(struct rec_outputs *o, void *stream)
{
	struct finisher *f = calloc(1, sizeof(*f));

	if (f) {
		f->to = o->o.to;
		f->stream = stream;
		f->timeout_ms = o->o.finish_timeout_ms;
		if (pthread_create(&f->th, NULL, finish_thread, f) == 0) {
			f->next = o->fin;
			o->fin = f;
			return;
		}
		free(f);
	}
	o->o.to->finish(stream, o->o.finish_timeout_ms);
	o->o.to->free(stream);
}

static void join_finishers(struct rec_outputs *o)
{
	while (o->fin) {
		struct finisher *f = o->fin;

		o->fin = f->next;
		pthread_join(f->th, NULL);
		f->to->free(f->stream);
		free(f);
	}
}

/* ---- life cycle */

int rec_outputs_new(const struct rec_outputs_opts *opts, struct rec_outputs **out)
{
	struct rec_outputs *o = calloc(1, sizeof(*o));
	int ret = 0;

	*out = NULL;
	if (!o)
		return -ENOMEM;
	if (prec_opts_copy(&o->o, sizeof(o->o), opts) < 0) {
		rec_log(REC_LOG_ERROR, "outputs options: unknown fields");
		free(o);
		return -EINVAL;
	}
	if (!o->o.finish_timeout_ms)
		o->o.finish_timeout_ms = DEFAULT_FINISH_MS;
	o->name = prec_opts_strdup(o->o.name, &ret);
	o->path = prec_opts_strdup(o->o.path, &ret);
	o->stem = prec_opts_strdup(o->o.stem, &ret);
	for (size_t i = 0; !ret && o->o.keep && i < o->o.nearlier; i++) {
		const struct rec_outputs_file *f = &o->o.earlier[i];

		ret = list_file(o, f->path, f->dev, f->ino);
	}
	if (ret < 0)
		goto err;
	if (o->o.flight_bytes && (o->o.to || o->o.rotate_bytes || o->o.rotate_ns)) {
		rec_log(REC_LOG_ERROR, "a flight recorder keeps its frames in memory: "
			"no --to, no rotation");
		ret = -EINVAL;
		goto err;
	}
	o->o.name = o->name;
	o->o.path = o->path;
	o->o.stem = o->stem;
	o->o.earlier = NULL;
	o->o.nearlier = 0;
	ret = output_open(o, &o->cur);
	if (ret < 0)
		goto err;
	*out = o;
	return 0;
err:
	rec_outputs_free(o);
	return ret;
}

struct prec_sink *rec_outputs_sink(const struct rec_outputs *o)
{
	return o->cur.sink;
}

size_t rec_outputs_frame_size(struct rec_outputs *o, size_t want)
{
	size_t fs;

	if (!o->cur.stream || !o->o.to->frame_size)
		return want;
	fs = o->o.to->frame_size(o->o.to->ctx, o->cur.stream);
	return fs && (!want || fs < want) ? fs : want;
}

const char *rec_outputs_name(const struct rec_outputs *o)
{
	if (o->cur.path[0])
		return o->cur.path;
	/* a stream alone: its id when each output has one of its own, else
	 * where it goes */
	if ((o->stem || o->name) && o->cur.id[0])
		return o->cur.id;
	return o->o.to ? o->o.to->where : "";
}

int rec_outputs_started(struct rec_outputs *o)
{
	int ret;

	if (o->path && o->cur.file) {
		ret = commit_held(o->cur.file);
		if (ret < 0)
			return ret;
	}
	/* the first packets are out (start flushed them): the preamble */
	if (o->cur.flight)
		prec_flight_arm(o->cur.flight);
	apply_keep(o);
	return 0;
}

/* Moves the recording into next (opened) and releases the old output. */
static int switch_output(struct rec_outputs *o, struct rec_recording *r,
			 struct output *next)
{
	struct output old = o->cur;
	int ret;

	ret = rec_recording_rotate(r, next->sink, next->path[0] ? next->path : next->id);
	if (ret < 0) {
		/* the recording failed: it holds nothing of either now */
		output_release(o, next);
		return ret;
	}
	o->cur = *next;
	if (old.stream) {
		void *stream = old.stream;

		old.stream = NULL;
		prec_sink_free(old.tee);
		old.tee = NULL;
		finish_stream_later(o, stream);
	}
	output_release(o, &old);
	return 0;
}

int rec_outputs_rotate(struct rec_outputs *o, struct rec_recording *r,
		       char *done, size_t len)
{
	struct output next;
	char finished[PATH_MAX];
	int ret;

	if (o->o.flight_bytes || o->path) {
		rec_log(REC_LOG_ERROR, "%s: nothing to rotate to (%s)", rec_outputs_name(o),
			o->path ? "one file: rotation writes named files, --rotate-size, "
			"--rotate-time or --keep" : "a flight recorder takes snapshots");
		return -EINVAL;
	}
	snprintf(finished, sizeof(finished), "%s", o->cur.path[0] ? o->cur.path : o->cur.id);
	ret = output_open(o, &next);
	if (ret < 0)
		return ret;   /* the recording goes on into the current output */
	ret = switch_output(o, r, &next);
	if (ret < 0)
		return ret;
	snprintf(done, len, "%s", finished);
	rec_log(REC_LOG_INFO, "%s finished, recording into %s", finished,
		rec_outputs_name(o));
	apply_keep(o);
	return 0;
}

/* The current stream ended for good: said once; -ECONNREFUSED when it was
 * the only output (nothing records any more). */
static int note_ended(struct rec_outputs *o)
{
	char why[512];

	if (o->stream_ended || !o->cur.stream || !o->o.to->ended ||
	    !o->o.to->ended(o->cur.stream, why, sizeof(why)))
		return o->stream_ended && !o->cur.file ? -ECONNREFUSED : 0;
	o->stream_ended = true;
	if (!o->cur.file) {
		rec_log(REC_LOG_ERROR, "streaming to %s ended: %s", o->o.to->where, why);
		return -ECONNREFUSED;
	}
	rec_log(REC_LOG_ERROR, "streaming to %s ended: %s; the recording goes on "
		"into %s only", o->o.to->where, why, o->cur.path[0] ? o->cur.path :
		"the local file");
	return 0;
}

int rec_outputs_note_drops(struct rec_outputs *o, struct rec_recording *r)
{
	char why[256];
	int ret;

	if (!o->cur.stream)
		return 0;
	ret = note_ended(o);
	if (ret < 0)
		return ret;
	ret = o->o.to->record_drops(o->cur.stream, r, why, sizeof(why));
	if (ret > 0 && !(o->o.warn_drops_once && o->warned)) {
		rec_log(REC_LOG_WARN, "%s%s", why, o->o.warn_drops_once && o->cur.file ?
			"; the local copy (-o) keeps them" : "");
		o->warned = true;
	}
	return ret < 0 ? ret : 0;
}

int rec_outputs_step(struct rec_outputs *o, struct rec_recording *r)
{
	struct rec_recording_stats st;
	char done[PATH_MAX];
	int ret;

	ret = rec_outputs_note_drops(o, r);
	if (ret < 0)
		return ret;
	if (!o->o.rotate_bytes && !o->o.rotate_ns)
		return 0;
	rec_recording_stats(r, &st);
	if ((o->o.rotate_bytes && st.output_bytes >= o->o.rotate_bytes) ||
	    (o->o.rotate_ns && prec_now_ns() - o->cur.start_ns >= o->o.rotate_ns)) {
		ret = rec_outputs_rotate(o, r, done, sizeof(done));
		if (ret < 0) {
			rec_recording_stats(r, &st);
			if (st.state == REC_RECORDING_FAILED)
				return ret;
			/* the next file could not be created: go on, try
			 * again after the same size or age */
			o->cur.start_ns = prec_now_ns();
		}
	}
	return 0;
}

/* The window says what it misses before the buffer is sealed. */
static int note_flight_drops(struct rec_outputs *o, struct rec_recording *r,
			     struct prec_flight_stats *fl)
{
	char why[320];

	prec_flight_stats(o->cur.flight, fl);
	if (!fl->dropped_frames)
		return 0;
	snprintf(why, sizeof(why), "flight recorder: the %llu oldest frames "
		 "(%llu bytes, packets from %.3f to %.3f s) were dropped to stay "
		 "within %llu bytes; this trace holds the recording's first "
		 "packets and its newest frames, from %.3f s",
		 (unsigned long long)fl->dropped_frames,
		 (unsigned long long)fl->dropped_bytes, (double)fl->dropped_t_min / 1e9,
		 (double)fl->dropped_t_max / 1e9, (unsigned long long)fl->max_bytes,
		 (double)fl->window_t_min / 1e9);
	return rec_recording_write_loss(r, PERFREC__LOSS__KIND__FLIGHT_DROPPED,
					fl->dropped_packets, why);
}

/* A snapshot's file: path, or a named one. fd or -errno (logged). */
static int create_snapshot(struct rec_outputs *o, const char *path, char *name,
			   size_t len)
{
	int fd, ret;

	if (!path)
		return create_named(o, ".snapshot.prec", name, len);
	snprintf(name, len, "%s", path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0) {
		ret = -errno;
		rec_log(REC_LOG_ERROR, "cannot create %s: %s%s", path, strerror(-ret),
			ret == -EEXIST ? " (a snapshot never overwrites a file)" : "");
		return ret;
	}
	return fd;
}

/* The snapshot file, made before anything changes: a snapshot that
 * cannot be written leaves the recording as it was. */
static int open_snapshot(struct rec_outputs *o, const char *path, char *name,
			 size_t len, struct prec_sink **file)
{
	int fd = create_snapshot(o, path, name, len);

	if (fd < 0)
		return fd;
	*file = prec_sink_fd_new(fd, 1);
	if (!*file) {
		close(fd);
		unlink(name);
		return -ENOMEM;
	}
	return 0;
}

/* A sealed flight buffer into the snapshot file (freed here). */
static int save_flight(struct rec_outputs *o, struct prec_sink *flight,
		       struct prec_sink *file, const char *name, char *written,
		       size_t len, const struct prec_flight_stats *fl)
{
	int ret = prec_flight_save(flight, file);

	prec_sink_free(file);
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "writing the snapshot %s failed: %s", name,
			strerror(-ret));
		unlink(name);
		return ret;
	}
	o->snapshots++;
	snprintf(written, len, "%s", name);
	rec_log(REC_LOG_INFO, "snapshot %s written (%llu older frames were dropped)",
		name, (unsigned long long)fl->dropped_frames);
	return 0;
}

int rec_outputs_snapshot(struct rec_outputs *o, struct rec_recording *r,
			 const char *path, char *written, size_t len)
{
	struct prec_flight_stats fl;
	struct prec_sink *old, *file;
	struct output next;
	char name[PATH_MAX];
	int ret;

	if (!o->o.flight_bytes) {
		rec_log(REC_LOG_ERROR, "not a flight recorder (--flight SIZE): the data "
			"is in its files already");
		return -EINVAL;
	}
	ret = open_snapshot(o, path, name, sizeof(name), &file);
	if (ret < 0)
		return ret;
	ret = output_open(o, &next);
	if (ret < 0)
		goto err;
	ret = note_flight_drops(o, r, &fl);
	if (ret < 0) {
		output_release(o, &next);
		goto err;
	}
	prec_flight_seal(o->cur.flight);
	old = o->cur.flight;
	o->cur.flight = NULL;   /* kept for saving below */
	ret = rec_recording_rotate(r, next.sink, "flight buffer");
	if (ret < 0) {
		output_release(o, &next);
		prec_sink_free(old);
		goto err;
	}
	output_release(o, &o->cur);
	o->cur = next;
	prec_flight_arm(o->cur.flight);
	ret = save_flight(o, old, file, name, written, len, &fl);
	prec_sink_free(old);
	return ret;
err:
	prec_sink_free(file);
	unlink(name);
	return ret;
}

int rec_outputs_stop_snapshot(struct rec_outputs *o, struct rec_recording *r,
			      const char *reason, char *written, size_t len)
{
	struct prec_flight_stats fl;
	struct prec_sink *file;
	char name[PATH_MAX];
	int ret;

	if (!o->cur.flight)
		return rec_recording_stop(r, reason);
	ret = open_snapshot(o, NULL, name, sizeof(name), &file);
	if (ret < 0) {
		rec_recording_stop(r, reason);
		return ret;
	}
	ret = note_flight_drops(o, r, &fl);
	if (!ret)
		ret = rec_recording_stop(r, reason);
	if (ret < 0) {
		prec_sink_free(file);
		unlink(name);
		return ret;
	}
	prec_flight_seal(o->cur.flight);
	return save_flight(o, o->cur.flight, file, name, written, len, &fl);
}

int rec_outputs_finish(struct rec_outputs *o)
{
	int ret = 0;

	if (o->cur.stream)
		ret = o->o.to->finish(o->cur.stream, o->o.finish_timeout_ms);
	join_finishers(o);
	note_ended(o);
	/* a stream that ended for good fails the run, whatever the file kept */
	if (ret >= 0 && o->stream_ended)
		ret = -ECONNREFUSED;
	return ret;
}

void rec_outputs_status(const struct rec_outputs *o, struct rec_outputs_status *st)
{
	memset(st, 0, sizeof(*st));
	st->have_file = o->cur.file != NULL;
	st->current_file = o->cur.file ? o->cur.path : "";
	st->flight = o->o.flight_bytes > 0;
	if (o->cur.flight)
		prec_flight_stats(o->cur.flight, &st->fl);
	st->snapshots = o->snapshots;
	st->stream = o->cur.stream;
}

void rec_outputs_sync(struct rec_outputs *o)
{
	if (o->cur.file)
		prec_sink_sync(o->cur.file);
}

void rec_outputs_free(struct rec_outputs *o)
{
	if (!o)
		return;
	join_finishers(o);
	output_release(o, &o->cur);
	for (size_t i = 0; i < o->nmade; i++)
		free(o->made[i].path);
	free(o->made);
	free(o->name);
	free(o->path);
	free(o->stem);
	free(o);
}
