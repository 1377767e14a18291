/*
 * perfmap.h - JIT symbol files, /tmp/perf-PID.map.
 *
 * The de-facto format written by JITs (V8/node --perf-basic-prof, the JVM
 * agents, LuaJIT, ...): one symbol per line,
 *
 *     START SIZE name with spaces
 *
 * START and SIZE in hex, with or without 0x; the name is the rest of the
 * line. Addresses are absolute in the process. The file is written by a
 * foreign program and may be torn or garbled: lines that do not parse are
 * skipped and counted, never fatal.
 *
 * How to use:
 *
 *   struct rec_perfmap m;
 *   ret = rec_perfmap_load_pid(pid, NULL, &m);   // NULL = "/tmp"
 *   ret == 0: m.syms[0 .. m.nsyms) sorted by start; -ENOENT: no file;
 *   rec_perfmap_release(&m);                     // always
 *
 * Ownership: struct rec_perfmap owns its symbols and names.
 */
#ifndef REC_PERFMAP_H
#define REC_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rec_perfmap_sym {
	uint64_t start, size;
	const char *name;
};

struct rec_perfmap {
	struct rec_perfmap_sym *syms;   /* sorted by start */
	size_t nsyms;
	size_t junk;                    /* lines skipped */
	char *names;
};

/* Parses len bytes of text. 0 or -ENOMEM. */
int rec_perfmap_parse(const char *text, size_t len, struct rec_perfmap *out);
/* Reads DIR/perf-PID.map (dir NULL = "/tmp"). -errno of open/read. Files
 * larger than max_bytes (0 = 256 MiB) are refused with -EFBIG; symlinks
 * (-ELOOP), non-regular files (-EINVAL) and, in /tmp, files owned by
 * someone else than root or the owner of /proc/PID (-EPERM) too. */
int rec_perfmap_load_pid(pid_t pid, const char *dir, size_t max_bytes,
			 struct rec_perfmap *out);
void rec_perfmap_release(struct rec_perfmap *m);

#endif
