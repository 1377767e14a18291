/*
 * wire.h - the messages of perfrec's stream connections (format/SPEC.md
 * section 10): every message is a u32 big-endian length N, then N bytes of one
 * protobuf message of proto/control.proto.
 *
 * The length prefix and the input buffers are format/base/msgbuf.h's: a
 * connection reads into a struct prec_msgbuf whose max is the largest
 * message its peer may send next (a collector takes a hello-sized
 * message before the hello, a frame after it).
 *
 * Frames (the bulk of the traffic) are encoded and decoded here without
 * protobuf-c, so their payload is neither copied nor allocated; the bytes
 * are exactly those protobuf-c produces (tests/unit/recorder/net checks
 * both ways). Every other message goes through protobuf-c.
 */
#ifndef REC_WIRE_H
#define REC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control.pb-c.h"
#include "format/base/msgbuf.h"

/* Stream protocol version spoken by this build. */
#define REC_WIRE_VERSION 1

/* The largest record a file holds (prec_record_scan()'s default max) and
 * the largest message on a stream connection: a record plus its frame
 * header. */
#define REC_WIRE_MAX_RECORD ((64u << 20) + (64u << 10))
#define REC_WIRE_MAX_MSG (REC_WIRE_MAX_RECORD + 64u)
/* Messages other than frames are small. */
#define REC_WIRE_MAX_SMALL (64u << 10)
/* A Hello: a token (at most 1024 bytes), four texts of at most
 * REC_WIRE_MAX_TEXT, a stream id and a few numbers fill well under 2 KiB. A
 * collector reads no more than this from a peer it does not know yet. */
#define REC_WIRE_MAX_HELLO 4096u
/* Hello's boot_id and recorder_version: printable ASCII, at most this. */
#define REC_WIRE_MAX_TEXT 64u
/* Hello.stream_id: at most this many bytes (16 from this recorder). */
#define REC_WIRE_MAX_STREAM_ID 32u
/* Frame sizes (the writer's packet bytes per frame, Hello.frame_bytes)
 * against a store's message limit: a record is at most its frame size
 * plus this room (its frame-info record, zstd's bound on bytes that do not
 * compress, the packet that crossed the size, the store's headers). */
#define REC_WIRE_FRAME_ROOM (64u << 10)
/* The frame size a collector that took records of at most max_msg bytes
 * can forward (Welcome.max_frame_bytes); at least 4 KiB. */
uint64_t rec_wire_frame_limit(uint64_t max_msg);
/* An adapting recorder that has heard no Welcome when its recording
 * starts cuts its frames at most this large: what fits NATS's default
 * max_payload (1 MiB), the store most fleets run. */
#define REC_WIRE_FRAME_UNHEARD ((1u << 20) - REC_WIRE_FRAME_ROOM)
/* Bytes before a frame's payload: length prefix and field headers. */
#define REC_WIRE_FRAME_HDR_MAX 32

/* The length prefix and frame header for a Frame{seq, data of data_len
 * bytes}; the payload follows them on the wire. Returns the header's
 * length (<= REC_WIRE_FRAME_HDR_MAX). */
size_t rec_wire_frame_header(uint64_t seq, size_t data_len,
			     unsigned char out[REC_WIRE_FRAME_HDR_MAX]);

/* When msg (one message, without its length prefix) is a Frame: 1 with
 * seq and the payload (pointing into msg). 0 when it is another message
 * (decode it with rec_wire_unpack). -EBADMSG when it is a malformed
 * frame. */
int rec_wire_parse_frame(const unsigned char *msg, size_t len, uint64_t *seq,
			 const unsigned char **data, size_t *data_len);

/* A message with its length prefix, in a new buffer (caller frees).
 * 0 or -ENOMEM. */
int rec_wire_pack(const Perfrec__Control__StreamMessage *m, unsigned char **out,
		  size_t *len);
/* Decodes msg (no prefix); NULL when it is not a valid message. Free with
 * perfrec__control__stream_message__free_unpacked(m, NULL). */
Perfrec__Control__StreamMessage *rec_wire_unpack(const unsigned char *msg,
						 size_t len);

/* msg (one StreamMessage, without its length prefix) when it is a Hello:
 * the number of the first of its text fields (host 2, boot_id 3,
 * session_id 4, recorder_version 5) that holds a NUL byte, which
 * protobuf-c's C string would silently cut there; 0 when none does or msg
 * is not a hello. */
unsigned rec_wire_hello_nul(const unsigned char *msg, size_t len);

/* Host and stream names (Hello.session_id) that may become path
 * components: 1..64 bytes of [A-Za-z0-9._-], not starting with '.' or
 * '-'. */
bool rec_wire_name_ok(const char *s);

/* a == b in time that depends only on blen (the secret's length). */
bool rec_wire_token_equal(const void *a, size_t alen, const void *b, size_t blen);

#endif
