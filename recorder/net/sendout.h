/*
 * sendout.h - the sender (sender.h) as the stream of a recording's outputs
 * (recording/outputs.h): each output gets a sender of its own, and what a
 * sender drops becomes data, a Loss packet of kind SENDER_DROPPED in the
 * recording it streams (DESIGN.md: losses are data). The outputs know
 * only their stream interface; the drivers of a recording that streams
 * (`perfrec record --to`, daemon sessions) make this one and hand it over.
 *
 * How to use:
 *
 *   struct rec_sendout *so;
 *   rec_sendout_new(&sender_opts, &so);
 *   oo.to = rec_sendout_stream(so);      // struct rec_outputs_opts
 *   rec_outputs_new(&oo, &out);
 *   ... the recording ...
 *   rec_outputs_free(out);
 *   rec_sendout_free(so);                // after the outputs
 *
 * The stream of an output is its struct rec_sender (rec_outputs_status()
 * gives the current one: rec_sender_stats() on it for a summary).
 *
 * Ownership: new() copies the options' strings and token; the TLS context
 * is borrowed and must outlive every sender made.
 */
#ifndef REC_SENDOUT_H
#define REC_SENDOUT_H

#include "recorder/net/sender.h"
#include "recorder/recording/outputs.h"

struct rec_sendout;

/* o->session_id: every output's stream is named so; NULL: the outputs
 * name each one (or the sender generates a name). 0 and *out, or -errno
 * (-ENOMEM, logged). */
int rec_sendout_new(const struct rec_sender_opts *o, struct rec_sendout **out);
/* The stream to give as rec_outputs_opts.to; owned by so. */
const struct rec_outputs_stream *rec_sendout_stream(const struct rec_sendout *so);
void rec_sendout_free(struct rec_sendout *so);   /* NULL is fine */

#endif
