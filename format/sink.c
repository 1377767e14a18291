/*
 * sink.c - the writer's byte destinations: file descriptor, memory, and a
 * tee of two sinks.
 *
 * prec_sink_write() is the only place `written` changes: it advances by n
 * when the sink took all n bytes. A sink that fails part way (a full disk;
 * a memory sink with a limit, which stores what fits) leaves those partial
 * bytes beyond `written`: the stream then ends in a torn frame, which
 * readers report and skip.
 */
#define _POSIX_C_SOURCE 200809L   /* pread, fsync, O_CLOEXEC */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/sink.h"

int prec_sink_write(struct prec_sink *sink, const void *buf, size_t n)
{
	int ret;

	if (!sink || !sink->ops || !sink->ops->write)
		return -EINVAL;
	ret = sink->ops->write(sink, buf, n);
	if (ret == 0)
		sink->written += n;
	return ret;
}

int prec_sink_sync(struct prec_sink *sink)
{
	if (!sink || !sink->ops)
		return -EINVAL;
	return sink->ops->sync ? sink->ops->sync(sink) : 0;
}

void prec_sink_free(struct prec_sink *sink)
{
	if (!sink)
		return;
	if (sink->ops && sink->ops->destroy)
		sink->ops->destroy(sink);
	free(sink);
}

/* ---------------------------------------------------------------- fd */

struct fd_sink {
	int fd;
	int own_fd;
};

static int fd_write(struct prec_sink *sink, const void *buf, size_t n)
{
	struct fd_sink *fs = sink->priv;
	const char *p = buf;

	while (n > 0) {
		ssize_t k = write(fs->fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int fd_sync(struct prec_sink *sink)
{
	struct fd_sink *fs = sink->priv;

	if (fsync(fs->fd) < 0) {
		/* pipes, sockets and character devices cannot be synced */
		if (errno == EINVAL || errno == EROFS || errno == ENOTSUP)
			return 0;
		return -errno;
	}
	return 0;
}

static void fd_destroy(struct prec_sink *sink)
{
	struct fd_sink *fs = sink->priv;

	if (fs && fs->own_fd)
		close(fs->fd);
	free(fs);
}

static const struct prec_sink_ops fd_ops = {
	.write = fd_write, .sync = fd_sync, .destroy = fd_destroy,
};

struct prec_sink *prec_sink_fd_new(int fd, int own_fd)
{
	struct prec_sink *sink;
	struct fd_sink *fs;

	if (fd < 0) {
		errno = EBADF;
		return NULL;
	}
	sink = calloc(1, sizeof(*sink));
	fs = calloc(1, sizeof(*fs));
	if (!sink || !fs) {
		free(sink);
		free(fs);
		errno = ENOMEM;
		return NULL;
	}
	fs->fd = fd;
	fs->own_fd = own_fd;
	sink->ops = &fd_ops;
	sink->priv = fs;
	return sink;
}

/* ---------------------------------------------------------------- memory */

struct mem_sink {
	unsigned char *buf;
	size_t len, cap;
	size_t limit;      /* fail with -ENOSPC beyond this many bytes */
};

static int mem_write(struct prec_sink *sink, const void *buf, size_t n)
{
	struct mem_sink *ms = sink->priv;
	size_t take = n;
	int ret = 0;

	if (ms->len >= ms->limit)
		return -ENOSPC;
	if (take > ms->limit - ms->len) {
		take = ms->limit - ms->len;
		ret = -ENOSPC;
	}
	if (take > ms->cap - ms->len) {
		size_t cap = ms->cap ? ms->cap : 4096;
		while (cap - ms->len < take) {
			if (cap > SIZE_MAX / 2)
				return -ENOMEM;
			cap *= 2;
		}
		unsigned char *nb = realloc(ms->buf, cap);
		if (!nb)
			return -ENOMEM;
		ms->buf = nb;
		ms->cap = cap;
	}
	if (take)
		memcpy(ms->buf + ms->len, buf, take);
	ms->len += take;
	return ret;
}

static void mem_destroy(struct prec_sink *sink)
{
	struct mem_sink *ms = sink->priv;

	if (ms)
		free(ms->buf);
	free(ms);
}

static const struct prec_sink_ops mem_ops = {
	.write = mem_write, .sync = NULL, .destroy = mem_destroy,
};

struct prec_sink *prec_sink_mem_new(void)
{
	struct prec_sink *sink = calloc(1, sizeof(*sink));
	struct mem_sink *ms = calloc(1, sizeof(*ms));

	if (!sink || !ms) {
		free(sink);
		free(ms);
		errno = ENOMEM;
		return NULL;
	}
	ms->limit = SIZE_MAX;
	sink->ops = &mem_ops;
	sink->priv = ms;
	return sink;
}

const void *prec_sink_mem_data(const struct prec_sink *sink, size_t *len)
{
	const struct mem_sink *ms;

	if (!sink || sink->ops != &mem_ops) {
		if (len)
			*len = 0;
		return NULL;
	}
	ms = sink->priv;
	if (len)
		*len = ms->len;
	return ms->buf;
}

int prec_sink_mem_set_limit(struct prec_sink *sink, size_t limit)
{
	if (!sink || sink->ops != &mem_ops)
		return -EINVAL;
	((struct mem_sink *)sink->priv)->limit = limit;
	return 0;
}

/* ---------------------------------------------------------------- tee */

struct tee_sink {
	struct prec_sink *a, *b;
};

static int tee_write(struct prec_sink *sink, const void *buf, size_t n)
{
	struct tee_sink *t = sink->priv;
	int ret = prec_sink_write(t->a, buf, n);

	if (ret == 0)
		ret = prec_sink_write(t->b, buf, n);
	return ret;
}

static int tee_sync(struct prec_sink *sink)
{
	struct tee_sink *t = sink->priv;
	int ra = prec_sink_sync(t->a), rb = prec_sink_sync(t->b);

	return ra ? ra : rb;
}

static void tee_destroy(struct prec_sink *sink)
{
	free(sink->priv);
}

static const struct prec_sink_ops tee_ops = { tee_write, tee_sync, tee_destroy };

struct prec_sink *prec_sink_tee_new(struct prec_sink *a, struct prec_sink *b)
{
	struct prec_sink *sink = calloc(1, sizeof(*sink));
	struct tee_sink *t = calloc(1, sizeof(*t));

	if (!sink || !t) {
		free(sink);
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->a = a;
	t->b = b;
	sink->ops = &tee_ops;
	sink->priv = t;
	return sink;
}
