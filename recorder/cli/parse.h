/*
 * parse.h - the values every perfrec command line (and the daemon's
 * session files) take: counts, sizes, durations, frequencies. CPU lists
 * and pid/tid lists are events/cpumap.h and events/threadmap.h.
 *
 * One parser per kind of value, so `record --interval 100ms` and
 * `stat -I 100ms` (or a session file's interval) cannot mean different
 * things. Parsers never print; they return 0 or -EINVAL/-ERANGE and the
 * caller names the option in its message (rec_cli_bad_value()).
 */
#ifndef REC_CLI_PARSE_H
#define REC_CLI_PARSE_H

#include <stdint.h>

/* A decimal count 0..max. */
int rec_parse_uint(const char *s, uint64_t max, uint64_t *out);

/* Bytes: "4096", "64k", "32m", "1g" (binary multiples; "KiB", "MiB",
 * "GiB" and "kb"... also accepted), at most 1 TiB. */
int rec_parse_size(const char *s, uint64_t *out);

/* Nanoseconds: "100ms", "2.5s", "250us", "10ns", "1m" / "1min", "1h"; a
 * bare number is in units of unit_ns (1000000 for options documented in
 * milliseconds, 1000000000 for seconds). At most ~31 years. */
int rec_parse_duration(const char *s, uint64_t unit_ns, uint64_t *out);

/* A sampling frequency in Hz: "4000", "4k", "10kHz"; 1..10 MHz. */
int rec_parse_freq(const char *s, uint64_t *out);

/* How callchains are recorded: "fp" (frame pointers, what -g gives),
 * "dwarf" (user stacks copied and unwound with DWARF CFI), "dwarf,SIZE"
 * (stack bytes per sample, e.g. 16k: rounded up to a multiple of 8, from
 * 8 to 65528), and ",raw" after dwarf: write the stacks for the analyzer
 * to unwind ("dwarf,raw", "dwarf,16k,raw"). stack_user 0 = the default. */
struct rec_call_graph {
	int dwarf;           /* 0: frame pointers */
	uint32_t stack_user;
	int raw;
};
int rec_parse_call_graph(const char *s, struct rec_call_graph *out);

#endif
