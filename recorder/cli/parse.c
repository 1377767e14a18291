/*
 * parse.c - counts, sizes, durations, frequencies; see parse.h.
 */
#include "recorder/cli/parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SIZE_MAX_BYTES (1ull << 40)
#define DURATION_MAX_NS 1e18
#define FREQ_MAX 10000000ull

int rec_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* The number at the start of s (digits, one '.'), and the suffix after. */
static int number_and_suffix(const char *s, double *v, const char **suffix)
{
	char *end;

	if (!s || !(isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))))
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	/* strtod also takes hex, exponents and "inf": only plain decimals */
	for (const char *p = s; p < end; p++)
		if (!isdigit((unsigned char)*p) && *p != '.')
			return -EINVAL;
	if (errno || !isfinite(*v) || *v < 0)
		return -EINVAL;
	*suffix = end;
	return 0;
}

struct unit {
	const char *name;
	double mul;
};

static int scaled(const char *s, const struct unit *u, double bare,
		  double max, double *out)
{
	const char *suffix;
	double v;
	int ret = number_and_suffix(s, &v, &suffix);

	if (ret < 0)
		return ret;
	if (!*suffix) {
		v *= bare;
	} else {
		for (; u->name; u++)
			if (!strcasecmp(suffix, u->name))
				break;
		if (!u->name)
			return -EINVAL;
		v *= u->mul;
	}
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int rec_parse_size(const char *s, uint64_t *out)
{
	static const struct unit units[] = {
		{ "b", 1 }, { "k", 1024.0 }, { "kb", 1024.0 }, { "kib", 1024.0 },
		{ "m", 1048576.0 }, { "mb", 1048576.0 }, { "mib", 1048576.0 },
		{ "g", 1073741824.0 }, { "gb", 1073741824.0 }, { "gib", 1073741824.0 },
		{ NULL, 0 },
	};
	double v;
	int ret = scaled(s, units, 1, (double)SIZE_MAX_BYTES, &v);

	if (ret < 0)
		return ret;
	if (v != floor(v))
		return -EINVAL;   /* a fraction of a byte */
	*out = (uint64_t)v;
	return 0;
}

int rec_parse_duration(const char *s, uint64_t unit_ns, uint64_t *out)
{
	static const struct unit units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 }, { NULL, 0 },
	};
	double v;
	int ret = scaled(s, units, (double)unit_ns, DURATION_MAX_NS, &v);

	if (ret < 0)
		return ret;
	*out = (uint64_t)v;
	return 0;
}

int rec_parse_freq(const char *s, uint64_t *out)
{
	static const struct unit units[] = {
		{ "hz", 1 }, { "k", 1e3 }, { "khz", 1e3 }, { NULL, 0 },
	};
	double v;
	int ret = scaled(s, units, 1, (double)FREQ_MAX, &v);

	if (ret < 0)
		return ret;
	if (v < 1 || v != floor(v))
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

int rec_parse_call_graph(const char *s, struct rec_call_graph *out)
{
	char buf[64], *part, *save = NULL;
	int n = 0;

	memset(out, 0, sizeof(*out));
	if (!s || strlen(s) >= sizeof(buf))
		return -EINVAL;
	if (strcmp(s, "fp") == 0)
		return 0;
	strcpy(buf, s);
	for (part = strtok_r(buf, ",", &save); part; part = strtok_r(NULL, ",", &save), n++) {
		uint64_t v;

		if (n == 0) {
			if (strcmp(part, "dwarf") != 0)
				return -EINVAL;
			out->dwarf = 1;
		} else if (strcmp(part, "raw") == 0 && !out->raw) {
			out->raw = 1;
		} else if (n == 1 && rec_parse_size(part, &v) == 0) {
			v = (v + 7) & ~7ull;
			if (v < 8 || v > 65528)
				return -ERANGE;
			out->stack_user = (uint32_t)v;
		} else {
			return -EINVAL;
		}
	}
	/* empty parts ("dwarf,", ",dwarf", "dwarf,,raw"): strtok skips them */
	if (!out->dwarf || s[0] == ',' || s[strlen(s) - 1] == ',' || strstr(s, ",,"))
		return -EINVAL;
	return 0;
}
