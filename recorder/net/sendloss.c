/*
 * sendloss.c - sender drops into the trace; see sendloss.h.
 */
#include "recorder/net/sendloss.h"

#include <stdio.h>

#include "perfrec.pb-c.h"

int rec_sender_record_drops(struct rec_sender *s, struct rec_recording *r,
			    char *why, size_t len)
{
	struct rec_sender_drops d;
	int ret;

	if (!s || !rec_sender_take_drops(s, &d))
		return 0;
	snprintf(why, len, "the collector did not acknowledge in time: %llu "
		 "frames (%llu bytes, %.3f..%.3f s) dropped from the stream, the send "
		 "spool (--spool-size) was full", (unsigned long long)d.records,
		 (unsigned long long)d.bytes, (double)d.t_min / 1e9, (double)d.t_max / 1e9);
	ret = rec_recording_write_loss(r, PERFREC__LOSS__KIND__SENDER_DROPPED,
				       d.packets, why);
	return ret < 0 ? ret : 1;
}
