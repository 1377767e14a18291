/*
 * sendloss.h - what a streaming sender dropped becomes data: a Loss packet
 * of kind SENDER_DROPPED in the recording it streams (DESIGN.md: losses
 * are data). Used by every driver of a recording that streams: `perfrec
 * record --to` and daemon sessions.
 */
#ifndef REC_SENDLOSS_H
#define REC_SENDLOSS_H

#include <stddef.h>

#include "recorder/net/sender.h"
#include "recorder/recording/recording.h"

/* The frames s dropped since the last call, written into r: 1 (and the
 * reason in why, for a warning), 0 when none were dropped (or s is
 * NULL), or the recording's error. */
int rec_sender_record_drops(struct rec_sender *s, struct rec_recording *r,
			    char *why, size_t len);

#endif
