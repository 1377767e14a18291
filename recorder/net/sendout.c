/*
 * sendout.c - the sender as the outputs' stream; see sendout.h.
 */
#include "recorder/net/sendout.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfrec.pb-c.h"
#include "format/base/opts.h"
#include "recorder/log.h"

struct rec_sendout {
	struct rec_outputs_stream stream;
	struct rec_sender_opts so;       /* its strings and token copied */
	char *to, *host, *session_id;
	void *token;
	uint64_t frame_fixed;            /* the recording's frame size once
					  * the first stream fixed it */
};

/* How long a recording waits, at its start, for the collector's Welcome
 * (its frame limit): a collector that answers at all answers well within
 * this, TLS handshake included; one that accepts the connection and then
 * says nothing costs the recording this much of its start. */
#define WELCOME_WAIT_MS 2000
/* ... and for the TCP connection to it, within that: a few round trips
 * of a WAN. A collector that is down or unreachable (no answer to the
 * SYN) costs no more; the frames are then cut to REC_WIRE_FRAME_UNHEARD,
 * what most collectors forward. */
#define REACH_WAIT_MS 300

static int sendout_open(void *ctx, const char *id, void **stream)
{
	struct rec_sendout *so = ctx;
	struct rec_sender_opts o = so->so;
	struct rec_sender *s;
	int ret;

	if (!o.session_id)
		o.session_id = id;
	if (so->frame_fixed) {
		/* the recording cuts its frames so: later streams only tell it */
		o.frame_bytes = so->frame_fixed;
		o.frame_adapts = false;
	}
	ret = rec_sender_new(&o, &s);
	if (ret < 0)
		return ret;
	*stream = s;
	return 0;
}

static struct prec_sink *sendout_sink(void *stream)
{
	return rec_sender_sink(stream);
}

static const char *sendout_id(void *stream)
{
	return rec_sender_session(stream);
}

static int sendout_record_drops(void *stream, struct rec_recording *r, char *why,
				size_t len)
{
	struct rec_sender_drops d;
	int ret;

	if (!rec_sender_take_drops(stream, &d))
		return 0;
	snprintf(why, len, "the collector did not acknowledge in time: %llu "
		 "frames (%llu bytes, %.3f..%.3f s) dropped from the stream, the send "
		 "spool (--spool-size) was full", (unsigned long long)d.records,
		 (unsigned long long)d.bytes, (double)d.t_min / 1e9, (double)d.t_max / 1e9);
	ret = rec_recording_write_loss(r, PERFREC__LOSS__KIND__SENDER_DROPPED,
				       d.packets, why);
	return ret < 0 ? ret : 1;
}

static size_t sendout_frame_size(void *ctx, void *stream)
{
	struct rec_sendout *so = ctx;

	so->frame_fixed = rec_sender_frame_size(stream, REACH_WAIT_MS, WELCOME_WAIT_MS);
	return (size_t)so->frame_fixed;
}

static int sendout_ended(void *stream, char *why, size_t len)
{
	return rec_sender_refused(stream, why, len) ? 1 : 0;
}

static int sendout_finish(void *stream, uint32_t timeout_ms)
{
	return rec_sender_finish(stream, timeout_ms);
}

static void sendout_free(void *stream)
{
	rec_sender_free(stream);
}

int rec_sendout_new(const struct rec_sender_opts *o, struct rec_sendout **out)
{
	struct rec_sendout *so = calloc(1, sizeof(*so));
	int ret = 0;

	*out = NULL;
	if (!so) {
		rec_log(REC_LOG_ERROR, "out of memory");
		return -ENOMEM;
	}
	so->so = *o;
	so->so.sz = sizeof(so->so);
	so->to = prec_opts_strdup(o->to, &ret);
	so->host = prec_opts_strdup(o->host, &ret);
	so->session_id = prec_opts_strdup(o->session_id, &ret);
	if (o->token_len) {
		so->token = malloc(o->token_len);
		if (!so->token)
			ret = -ENOMEM;
		else
			memcpy(so->token, o->token, o->token_len);
	}
	if (ret < 0) {
		rec_log(REC_LOG_ERROR, "out of memory");
		rec_sendout_free(so);
		return ret;
	}
	so->so.to = so->to;
	so->so.host = so->host;
	so->so.session_id = so->session_id;
	so->so.token = so->token;
	so->stream = (struct rec_outputs_stream){
		.ctx = so,
		.where = so->to ? so->to : "",
		.open = sendout_open,
		.sink = sendout_sink,
		.id = sendout_id,
		.record_drops = sendout_record_drops,
		.ended = sendout_ended,
		.frame_size = sendout_frame_size,
		.finish = sendout_finish,
		.free = sendout_free,
	};
	*out = so;
	return 0;
}

const struct rec_outputs_stream *rec_sendout_stream(const struct rec_sendout *so)
{
	return &so->stream;
}

void rec_sendout_free(struct rec_sendout *so)
{
	if (!so)
		return;
	free(so->to);
	free(so->host);
	free(so->session_id);
	free(so->token);
	free(so);
}
