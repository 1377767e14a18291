/*
 * resolve.h - sample addresses and callchains to interned frame names.
 *
 * Wraps the symbolizer for the reports: every name it returns is interned
 * in the trace's string pool, so equal names are equal pointers and can
 * be used directly in aggregation keys.
 *
 * Callchains hold the kernel's ips with PERF_CONTEXT_* markers; the
 * markers switch between kernel and user address spaces and are never
 * frames themselves. A sample that carries a copy of its user stack
 * (--call-graph dwarf) gets its user frames from unwinding it (ustack.h)
 * and only the kernel part from the callchain. The sample's own ip is the leaf (frames[0]); when the
 * chain starts with the same ip it is not repeated. Every later entry is a
 * return address and is looked up at ip - 1, so a call that ends its
 * function names the caller, not the next function; ana_loc.ip and
 * dso_off keep the address as recorded.
 */
#ifndef ANA_RESOLVE_H
#define ANA_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"

struct ana_trace;

/* Markers as the kernel writes them (uapi perf_event.h values), defined
 * here so the analyzer needs no Linux header. */
#define ANA_PERF_CONTEXT_HV ((uint64_t)-32)
#define ANA_PERF_CONTEXT_KERNEL ((uint64_t)-128)
#define ANA_PERF_CONTEXT_USER ((uint64_t)-512)
#define ANA_PERF_CONTEXT_GUEST ((uint64_t)-2048)
#define ANA_PERF_CONTEXT_GUEST_KERNEL ((uint64_t)-2176)
#define ANA_PERF_CONTEXT_GUEST_USER ((uint64_t)-2560)
#define ANA_PERF_CONTEXT_MAX ((uint64_t)-4095)

/* perf_event_header.misc cpumode values (low 3 bits). */
#define ANA_CPUMODE_MASK 7u
#define ANA_CPUMODE_KERNEL 1u
#define ANA_CPUMODE_USER 2u
#define ANA_CPUMODE_GUEST_KERNEL 4u

struct ana_loc {
	const char *dso;   /* interned object name (basename), or NULL */
	const char *sym;   /* interned symbol, or NULL when unknown */
	uint64_t ip;
	uint64_t dso_off;
	uint64_t sym_off;  /* ip - the symbol's start, when sym is set */
	int kernel;
};

/* Resolves one address (the trace must have been opened with symbols). */
int ana_resolve_ip(struct ana_trace *s, uint32_t pid, uint64_t ip,
		   int kernel, uint64_t time, struct ana_loc *out);

/* Resolves a sample's leaf and callchain into frames[0..max), leaf first.
 * Returns the number of frames (>= 1 when max >= 1), or -ENOMEM. */
int ana_resolve_sample(struct ana_trace *s, const struct prec_packet *p,
		       struct ana_loc *frames, size_t max);

/* A sample's user callchain walked by frame pointers ends at junk (see
 * resolve.c): ana_resolve_sample() shows the cut entries as one
 * "[truncated]" frame and counts them in s->cut, unless opts.no_cut.
 * This returns how many entries it would cut from p's chain, without
 * naming any frame (for `info`); 0 without symbols. */
int ana_resolve_cut(struct ana_trace *s, const struct prec_packet *p);

/* Resolves an OffCpu packet's callchain (kernel then user frames, each a
 * return address) into frames[0..max), innermost first. A packet
 * without a stack gets one frame named "[no stack]". Returns the number
 * of frames (>= 1 when max >= 1), or -ENOMEM. */
int ana_resolve_offcpu(struct ana_trace *s, const struct prec_packet *p,
		       struct ana_loc *frames, size_t max);

/* A display name for a frame: the symbol, else "[dso]+0xoff", else the
 * address in hex. The returned string is interned in the trace pool. */
const char *ana_frame_name(struct ana_trace *s, const struct ana_loc *f);

/* True when an ip of a sample with this misc is a kernel address. */
int ana_ip_is_kernel(uint32_t misc, uint64_t ip);

#endif
