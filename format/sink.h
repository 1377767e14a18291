/*
 * sink.h - where a writer's bytes go.
 *
 * A sink is a table of functions plus its state, so the writer can target a
 * file descriptor, memory (tests), two sinks at once (tee) or a network
 * stream to a collector (the recorder's sender brings its own ops), and
 * produce the same bytes in each case ("file = stream").
 *
 * Ownership: the sink is owned by whoever created it; prec_writer borrows it
 * and never frees it. Call prec_sink_free() after prec_writer_free().
 */
#ifndef PREC_SINK_H
#define PREC_SINK_H

#include <stddef.h>
#include <stdint.h>

struct prec_sink;

struct prec_sink_ops {
	/* Write all n bytes or fail: return 0 or a negative errno (-ENOSPC ...). */
	int (*write)(struct prec_sink *sink, const void *buf, size_t n);
	/* Make written bytes durable (fsync for files). May be NULL. */
	int (*sync)(struct prec_sink *sink);
	/* Release the sink's own resources. May be NULL. */
	void (*destroy)(struct prec_sink *sink);
};

struct prec_sink {
	const struct prec_sink_ops *ops;
	void *priv;
	uint64_t written;   /* bytes accepted so far, maintained by prec_sink_write() */
};

int prec_sink_write(struct prec_sink *sink, const void *buf, size_t n);
int prec_sink_sync(struct prec_sink *sink);
void prec_sink_free(struct prec_sink *sink);   /* NULL is fine */

/* A sink writing to fd (file, pipe or socket: partial writes and EINTR are
 * retried; sync is fsync, a no-op success where fsync does not apply).
 * With own_fd the fd is closed by prec_sink_free(). A socket writer should
 * ignore SIGPIPE so a dropped peer is -EPIPE, not a signal. */
struct prec_sink *prec_sink_fd_new(int fd, int own_fd);

/* A growing memory buffer. The buffer stays owned by the sink; it is valid
 * until the next write or prec_sink_free(). */
struct prec_sink *prec_sink_mem_new(void);
const void *prec_sink_mem_data(const struct prec_sink *sink, size_t *len);
/* Make a memory sink behave like a full disk after `limit` bytes: a write
 * that crosses the limit stores the bytes that fit and returns -ENOSPC;
 * later writes return -ENOSPC. For tests of the writer's error path. */
int prec_sink_mem_set_limit(struct prec_sink *sink, size_t limit);

/* The same bytes to a, then b (e.g. a local file and a collector): a
 * write fails when either does (a first). Borrows both; freeing the tee
 * frees neither. */
struct prec_sink *prec_sink_tee_new(struct prec_sink *a, struct prec_sink *b);

/* Custom sinks: allocate struct prec_sink with malloc/calloc, set ops and
 * priv; prec_sink_free() calls ops->destroy (which frees priv) and then
 * frees the struct. prec_sink_write() adds n to `written` when ops->write
 * succeeds (ops->write must not touch it); after a failed write the stream
 * may hold part of those bytes beyond `written`. */

#endif
