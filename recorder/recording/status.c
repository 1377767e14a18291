/*
 * status.c - live status line formatting; see status.h.
 */
#include "recorder/recording/status.h"

#include <stdio.h>

const char *rec_status_bytes(uint64_t b, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)b);
	else
		snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}

const char *rec_status_format(const struct rec_status_in *in, char *buf,
			      size_t len)
{
	char bytes[32], rate[32];
	double r = 0;

	if (in->dt_ns && in->records >= in->records_prev)
		r = (double)(in->records - in->records_prev) * 1e9 / (double)in->dt_ns;
	if (r >= 1e6)
		snprintf(rate, sizeof(rate), "%.1fM", r / 1e6);
	else if (r >= 1e3)
		snprintf(rate, sizeof(rate), "%.1fk", r / 1e3);
	else
		snprintf(rate, sizeof(rate), "%.0f", r);
	rec_status_bytes(in->bytes_written, bytes, sizeof(bytes));
	if (in->bytes_written)
		snprintf(buf, len, "[perfrec] %.1fs  %s rec/s  lost %llu  %s written  ratio %.1fx",
			 (double)in->elapsed_ns / 1e9, rate,
			 (unsigned long long)in->lost, bytes,
			 (double)in->bytes_raw / (double)in->bytes_written);
	else
		snprintf(buf, len, "[perfrec] %.1fs  %s rec/s  lost %llu  %s written",
			 (double)in->elapsed_ns / 1e9, rate,
			 (unsigned long long)in->lost, bytes);
	return buf;
}
