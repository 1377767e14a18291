/*
 * ctlmsg.c - control requests checked, framed and exchanged; see ctlmsg.h.
 */
#include "recorder/daemon/ctlmsg.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "format/base/clock.h"
#include "format/base/msgbuf.h"
#include "recorder/log.h"

/* Nesting is shallow in control.proto; a deeper walk means a bug. */
#define MAX_DEPTH 8

/* true when m (or a message inside it) holds a field this version does
 * not know: *tag is its number (0 is possible: protobuf-c keeps a field
 * numbered 0 as unknown), *in its message. */
static bool unknown_at(const ProtobufCMessage *m, uint32_t *tag, const char **in,
		       int depth)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;

	if (m->n_unknown_fields) {
		*in = d->short_name;
		*tag = m->unknown_fields[0].tag;
		return true;
	}
	if (depth >= MAX_DEPTH)
		return false;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *base = (const char *)m;

		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			uint32_t which;

			memcpy(&which, base + f->quantifier_offset, sizeof(which));
			if (which != f->id)
				continue;
		}
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n;
			ProtobufCMessage **v;

			memcpy(&n, base + f->quantifier_offset, sizeof(n));
			memcpy(&v, base + f->offset, sizeof(v));
			for (size_t k = 0; k < n; k++)
				if (v[k] && unknown_at(v[k], tag, in, depth + 1))
					return true;
		} else {
			ProtobufCMessage *sub;

			memcpy(&sub, base + f->offset, sizeof(sub));
			if (sub && unknown_at(sub, tag, in, depth + 1))
				return true;
		}
	}
	return false;
}

bool rec_ctl_unknown_field(const ProtobufCMessage *m, uint32_t *tag,
			   const char **in_message)
{
	const char *dummy;
	uint32_t t;

	return unknown_at(m, tag ? tag : &t, in_message ? in_message : &dummy, 0);
}

Perfrec__Control__Request *rec_ctl_request_decode(const unsigned char *msg,
						  size_t len, char *why,
						  size_t whylen)
{
	Perfrec__Control__Request *rq;
	const char *in = "";
	uint32_t tag;

	rq = perfrec__control__request__unpack(NULL, len, msg);
	if (!rq) {
		snprintf(why, whylen, "malformed request: %zu bytes that are not a "
			 "control Request message", len);
		return NULL;
	}
	if (rec_ctl_unknown_field(&rq->base, &tag, &in)) {
		snprintf(why, whylen, "unknown field %u in %s: a request of a newer "
			 "client? this daemon speaks control protocol %d", tag, in,
			 REC_CTL_VERSION);
		goto bad;
	}
	if (rq->version != REC_CTL_VERSION) {
		snprintf(why, whylen, "control protocol version %u is not spoken here "
			 "(this daemon speaks %d)", rq->version, REC_CTL_VERSION);
		goto bad;
	}
	if (rq->body_case == PERFREC__CONTROL__REQUEST__BODY__NOT_SET) {
		snprintf(why, whylen, "empty request: no command");
		goto bad;
	}
	return rq;
bad:
	rec_ctl_request_free(rq);
	return NULL;
}

void rec_ctl_request_free(Perfrec__Control__Request *rq)
{
	if (rq)
		perfrec__control__request__free_unpacked(rq, NULL);
}

const char *rec_ctl_request_name(const Perfrec__Control__Request *rq)
{
	switch (rq->body_case) {
	case PERFREC__CONTROL__REQUEST__BODY_START: return "start";
	case PERFREC__CONTROL__REQUEST__BODY_STOP: return "stop";
	case PERFREC__CONTROL__REQUEST__BODY_STATUS: return "status";
	case PERFREC__CONTROL__REQUEST__BODY_LIST: return "list";
	case PERFREC__CONTROL__REQUEST__BODY_ROTATE: return "rotate";
	case PERFREC__CONTROL__REQUEST__BODY_SNAPSHOT: return "snapshot";
	default: return "none";
	}
}

int rec_ctl_pack(const ProtobufCMessage *m, size_t max, unsigned char **out,
		 size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	unsigned char *b;

	if (n > max)
		return -EMSGSIZE;
	b = malloc(n + 4);
	if (!b)
		return -ENOMEM;
	prec_msgbuf_put_len(b, (uint32_t)n);
	protobuf_c_message_pack(m, b + 4);
	*out = b;
	*len = n + 4;
	return 0;
}

int rec_ctl_flush(struct prec_outq *q, int fd)
{
	while (prec_outq_pending(q)) {
		size_t n;
		const void *b = prec_outq_peek(q, &n);
		ssize_t k = send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EAGAIN ? 0 : -errno;
		prec_outq_consume(q, (size_t)k);
	}
	return 0;
}

int rec_ctl_queue(struct prec_outq *q, int fd, const ProtobufCMessage *m, size_t max)
{
	unsigned char *b;
	size_t n;
	int ret = rec_ctl_pack(m, max, &b, &n);

	if (ret < 0)
		return ret;
	ret = prec_outq_add(q, b, n);
	free(b);
	return ret < 0 ? ret : rec_ctl_flush(q, fd);
}

static int write_all(int fd, const unsigned char *b, size_t n)
{
	while (n) {
		ssize_t k = send(fd, b, n, MSG_NOSIGNAL);

		if (k < 0 && errno == ENOTSOCK)
			k = write(fd, b, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

int rec_ctl_send(int fd, const ProtobufCMessage *m, size_t max)
{
	unsigned char *b;
	size_t n;
	int ret = rec_ctl_pack(m, max, &b, &n);

	if (ret < 0)
		return ret;
	ret = write_all(fd, b, n);
	free(b);
	return ret;
}


int rec_ctl_recv(int fd, size_t max, int timeout_ms, unsigned char **msg,
		 size_t *len)
{
	struct prec_msgbuf in;
	int64_t deadline = prec_now_ms() + timeout_ms;
	const unsigned char *m;
	size_t n, room;
	int ret;

	*msg = NULL;
	*len = 0;
	prec_msgbuf_init(&in, max);
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int64_t left = deadline - prec_now_ms();
		void *p;
		ssize_t k;

		ret = prec_msgbuf_next(&in, &m, &n);
		if (ret != 0)
			break;
		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		ret = poll(&pfd, 1, (int)left);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0) {
			ret = -errno;
			break;
		}
		if (ret == 0)
			continue;
		p = prec_msgbuf_space(&in, &room);
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		k = read(fd, p, room);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			ret = -errno;
			break;
		}
		if (k == 0) {
			ret = -ECONNRESET;
			break;
		}
		prec_msgbuf_commit(&in, (size_t)k);
	}
	if (ret == 1) {
		*msg = malloc(n ? n : 1);
		if (*msg) {
			memcpy(*msg, m, n);
			*len = n;
			ret = 0;
		} else {
			ret = -ENOMEM;
		}
	}
	prec_msgbuf_release(&in);
	return ret;
}

int rec_ctl_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd, e;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		rec_log(REC_LOG_ERROR, "socket path too long (at most %zu bytes): %s",
			sizeof(sa.sun_path) - 1, path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = -errno;
		rec_log(REC_LOG_ERROR, "cannot create a socket: %s", strerror(-e));
		return e;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		e = -errno;
		close(fd);
		if (e == -ENOENT || e == -ECONNREFUSED)
			rec_log(REC_LOG_ERROR, "no perfrec daemon at %s (%s): start it "
				"(systemctl start perfrec, or perfrec daemon --socket %s)",
				path, strerror(-e), path);
		else if (e == -EACCES || e == -EPERM)
			rec_log(REC_LOG_ERROR, "cannot connect to %s: %s: the daemon "
				"answers root and the group named in its daemon.conf",
				path, strerror(-e));
		else
			rec_log(REC_LOG_ERROR, "cannot connect to %s: %s", path,
				strerror(-e));
		return e;
	}
	return fd;
}

int rec_ctl_call(const char *path, const Perfrec__Control__Request *rq,
		 int timeout_ms, Perfrec__Control__Reply **out)
{
	unsigned char *msg = NULL;
	size_t len;
	int fd, ret;

	*out = NULL;
	fd = rec_ctl_connect(path);
	if (fd < 0)
		return fd;
	ret = rec_ctl_send(fd, &rq->base, REC_CTL_MAX_MSG);
	if (ret == -EMSGSIZE) {
		rec_log(REC_LOG_ERROR, "request too large (at most %u bytes)",
			REC_CTL_MAX_MSG);
		goto out;
	}
	/* a refusal may arrive before (or instead of) reading our request */
	if (ret < 0 && ret != -EPIPE && ret != -ECONNRESET) {
		rec_log(REC_LOG_ERROR, "cannot send to %s: %s", path, strerror(-ret));
		goto out;
	}
	ret = rec_ctl_recv(fd, REC_CTL_MAX_EVENT, timeout_ms, &msg, &len);
	if (ret == -ETIMEDOUT) {
		rec_log(REC_LOG_ERROR, "no reply from the daemon at %s within %d ms",
			path, timeout_ms);
		goto out;
	}
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "no reply from the daemon at %s: %s", path,
			ret == -ECONNRESET ? "it closed the connection" : strerror(-ret));
		goto out;
	}
	*out = perfrec__control__reply__unpack(NULL, len, msg);
	if (!*out) {
		rec_log(REC_LOG_ERROR, "the daemon's reply does not decode (%zu bytes)", len);
		ret = -EBADMSG;
	}
out:
	free(msg);
	close(fd);
	return ret;
}
