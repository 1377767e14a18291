/*
 * ctlmsg.h - the control protocol of `perfrec daemon` (proto/control.proto,
 * "the control plane"): requests checked before anyone acts on them, and
 * the blocking calls a client (`perfrec ctl`) and a session process make.
 *
 * Messages are length-prefixed as the data plane's (format/base/msgbuf.h):
 * a u32 big-endian length, then one protobuf message. Requests come from
 * local users who may hold only group rights, so they are untrusted
 * bytes: rec_ctl_request_decode()
 * accepts a request only when protobuf-c decodes it, it has no field this
 * version does not know (at any depth: a newer client's request is refused
 * by name, not half understood), its version is ours and its body is set.
 *
 * How a client calls:
 *
 *   Perfrec__Control__Request rq = PERFREC__CONTROL__REQUEST__INIT;
 *   rq.version = REC_CTL_VERSION; rq.body_case = ...; rq.status = &st;
 *   Perfrec__Control__Reply *rp;
 *   ret = rec_ctl_call("/run/perfrec/ctl.sock", &rq, 30000, &rp);
 *   // ret < 0: no reply (logged: cannot connect, timed out, bad reply)
 *   ... rp->ok, rp->error, rp->sessions ...
 *   perfrec__control__reply__free_unpacked(rp, NULL);
 */
#ifndef REC_CTLMSG_H
#define REC_CTLMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "control.pb-c.h"
#include "format/base/outq.h"

#define REC_CTL_VERSION 1
/* Requests and replies are small: a start request's arguments, a status of
 * every session with per-CPU counts. */
#define REC_CTL_MAX_MSG (64u << 10)
/* What a session process sends the daemon (a status with many CPUs). */
#define REC_CTL_MAX_EVENT (1u << 20)

/* Decodes one request (msg without its length prefix). NULL when it is
 * not acceptable, with the reason in why ("unknown field 9 in
 * StartRequest ..."). Free with rec_ctl_request_free(). */
Perfrec__Control__Request *rec_ctl_request_decode(const unsigned char *msg,
						  size_t len, char *why,
						  size_t whylen);
void rec_ctl_request_free(Perfrec__Control__Request *rq);   /* NULL is fine */

/* The request's kind, for messages: "start", "stop", ... "none". */
const char *rec_ctl_request_name(const Perfrec__Control__Request *rq);

/* true when m holds, at any depth, a field this version does not know:
 * its number into *tag, the message's name into *in_message (either may
 * be NULL). */
bool rec_ctl_unknown_field(const ProtobufCMessage *m, uint32_t *tag,
			   const char **in_message);

/* m with its length prefix in a new buffer (caller frees). 0 or -ENOMEM;
 * -EMSGSIZE when it is longer than max. */
int rec_ctl_pack(const ProtobufCMessage *m, size_t max, unsigned char **out,
		 size_t *len);

/* Non-blocking, for a server's loop: queues m (length-prefixed) on q,
 * then sends what fd takes now. 0 or -errno (-EMSGSIZE above max). */
int rec_ctl_queue(struct prec_outq *q, int fd, const ProtobufCMessage *m, size_t max);
/* Sends what q holds while fd takes it: 0 (all sent, or the rest waits
 * for POLLOUT) or -errno. */
int rec_ctl_flush(struct prec_outq *q, int fd);

/* Blocking: writes all of m, length-prefixed, to fd. 0 or -errno. */
int rec_ctl_send(int fd, const ProtobufCMessage *m, size_t max);

/* Blocking with a deadline: the next message from fd into *msg (malloc'ed,
 * without prefix). 0; -ETIMEDOUT; -ECONNRESET when the peer closed first;
 * -EMSGSIZE when it announced more than max; -errno. */
int rec_ctl_recv(int fd, size_t max, int timeout_ms, unsigned char **msg,
		 size_t *len);

/* Connects to the daemon's socket (refusals logged with the fix). fd or
 * -errno. */
int rec_ctl_connect(const char *path);

/* Connect, send rq, wait for its reply (timeout_ms in all). 0 and *out,
 * or -errno after logging why there is no reply. */
int rec_ctl_call(const char *path, const Perfrec__Control__Request *rq,
		 int timeout_ms, Perfrec__Control__Reply **out);

#endif
