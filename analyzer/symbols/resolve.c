/*
 * resolve.c - symbolizer calls plus interning of the names.
 */
#include "analyzer/symbols/resolve.h"

#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/symbols/demangle.h"
#include "analyzer/read/trace.h"
#include "analyzer/symbols/symbolize.h"
#include "analyzer/symbols/ustack.h"

int ana_ip_is_kernel(uint32_t misc, uint64_t ip)
{
	uint32_t mode = misc & ANA_CPUMODE_MASK;
	if (mode == ANA_CPUMODE_KERNEL || mode == ANA_CPUMODE_GUEST_KERNEL)
		return 1;
	if (mode == 0)
		return (ip >> 63) != 0;   /* unknown mode: kernel half of the space */
	return 0;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

int ana_resolve_ip(struct ana_trace *s, uint32_t pid, uint64_t ip,
		   int kernel, uint64_t time, struct ana_loc *out)
{
	memset(out, 0, sizeof(*out));
	out->ip = ip;
	out->kernel = kernel;
	if (!s->syms)
		return 0;
	struct ana_sym r;
	memset(&r, 0, sizeof(r));
	ana_symbols_resolve(s->syms, pid, ip, kernel, time, &r);
	/* The symbolizer's strings are stable per object and symbol: intern
	 * each pair once. */
	const char *key[2] = { r.dso, r.sym };
	const char **names = prec_hashmap_get(&s->name_cache, key, NULL);
	if (!names)
		return -ENOMEM;
	if (r.dso && !names[0] && !(names[0] = ana_strpool_intern(&s->pool, base_name(r.dso))))
		return -ENOMEM;
	if (r.sym && !names[1]) {
		/* C++ and Rust names as perf shows them, unless asked not to */
		char *d = s->opts.no_demangle ? NULL : ana_demangle(r.sym);
		names[1] = ana_strpool_intern(&s->pool, d ? d : r.sym);
		free(d);
		if (!names[1])
			return -ENOMEM;
	}
	out->dso = names[0];
	out->sym = names[1];
	out->dso_off = r.dso_off;
	out->sym_off = r.sym_off;
	out->kernel = r.kernel || kernel;
	return 0;
}

/* One return address into frames[n]: looked up at ip - 1 (the call), kept
 * as recorded. Every entry after the leaf is a return address: the
 * instruction after a call. When the call is the last instruction of its
 * function, that address is already the next function's first byte, so
 * the caller is looked up at ip - 1 (as perf, gdb and pprof do); the
 * frame keeps the real address and offset. */
static int resolve_caller(struct ana_trace *s, uint32_t pid, uint64_t ip,
			  int kernel, uint64_t time, struct ana_loc *fr)
{
	int ret = ana_resolve_ip(s, pid, ip ? ip - 1 : ip, kernel, time, fr);

	if (ret < 0)
		return ret;
	if (ip) {
		fr->ip = ip;
		if (fr->dso)
			fr->dso_off++;
		if (fr->sym)
			fr->sym_off++;
	}
	return 0;
}

/* ---- junk at the end of frame-pointer chains
 *
 * A frame-pointer walk through code built without frame pointers reads
 * whatever the register held: zero, small integers, 0xffffffff, or a
 * frame that points at itself, repeated up to the kernel's depth limit.
 * Such a walk is cut at the first entry no mapping of the process holds
 * (the trace's mappings are the executable ones) once one entry was
 * known (so a process whose mappings the trace lacks keeps its chain),
 * and before a run of one address that lasts to the end of the chain (a
 * looping walk; recursion ends in its callers, not in itself). The cut
 * entries become one "[truncated]" frame. */

/* The address space after callchain marker m (kernel = before it): a
 * value in the markers' range that is none of them (junk of a walk)
 * changes nothing. */
static int marker_kernel(uint64_t m, int kernel)
{
	if (m == ANA_PERF_CONTEXT_KERNEL || m == ANA_PERF_CONTEXT_GUEST_KERNEL)
		return 1;
	if (m == ANA_PERF_CONTEXT_USER || m == ANA_PERF_CONTEXT_GUEST_USER)
		return 0;
	return kernel;
}

static int user_mapped(struct ana_trace *s, uint32_t pid, uint64_t ip,
		       uint64_t time)
{
	struct ana_sym r;

	return ip > 1 && ana_symbols_resolve(s->syms, pid, ip - 1, 0, time, &r) >= 0 &&
	       (r.dso || r.sym);
}

/* The user entries ips[i0 .. end) (end: the next context marker, or
 * nips) to keep: returns the index where the cut starts (end when none).
 * known: an earlier frame of this sample was in a mapping. leaf: the
 * sample's ip, which a chain may repeat as its first entry (not a loop). */
static size_t user_keep(struct ana_trace *s, uint32_t pid, uint64_t time,
			const uint64_t *ips, size_t i0, size_t nips, int known,
			uint64_t leaf)
{
	size_t end = i0, run;

	while (end < nips && ips[end] < ANA_PERF_CONTEXT_MAX)
		end++;
	if (!s->syms || s->opts.no_cut)
		return end;
	for (size_t i = i0; i < end; i++) {
		if (i == i0 && ips[i] == leaf)
			continue;   /* not shown either (ana_resolve_sample) */
		if (user_mapped(s, pid, ips[i], time))
			known = 1;
		else if (known)
			return i;
		/* one address to the end: keep the first */
		for (run = i + 1; run < end && ips[run] == ips[i]; run++)
			;
		if (run == end && end - i >= 2)
			return i + 1;
	}
	return end;
}

int ana_resolve_cut(struct ana_trace *s, const struct prec_packet *p)
{
	const Perfrec__Sample *smp = p->pkt->sample;
	size_t nips = 0;
	const uint64_t *ips;
	int kernel, known;
	/* what the writer cut already (Sample.callchain_cut) */
	int cut = smp->callchain_cut > INT_MAX / 2 ? INT_MAX / 2 : (int)smp->callchain_cut;

	/* a copied user stack replaces the user chain (ana_resolve_sample) */
	if (!s->syms || s->opts.no_cut || !smp->callchain || ana_ustack_present(smp))
		return cut;
	ips = prec_frame_callchain(p->frame, smp->callchain, &nips);
	kernel = ana_ip_is_kernel(smp->misc, smp->ip);
	known = !kernel && user_mapped(s, smp->pid, smp->ip + 1, p->time);
	for (size_t i = 0; ips && i < nips; i++) {
		if (ips[i] >= ANA_PERF_CONTEXT_MAX) {
			kernel = marker_kernel(ips[i], kernel);
			continue;
		}
		if (kernel)
			continue;
		size_t keep = user_keep(s, smp->pid, p->time, ips, i, nips, known, smp->ip);
		size_t end = keep;

		while (end < nips && ips[end] < ANA_PERF_CONTEXT_MAX)
			end++;
		cut += (int)(end - keep);
		i = end - 1;
	}
	return cut;
}

/* The frame that stands for the entries cut from a chain. */
static int truncated_frame(struct ana_trace *s, struct ana_loc *fr)
{
	memset(fr, 0, sizeof(*fr));
	fr->sym = ana_strpool_intern(&s->pool, "[truncated]");
	return fr->sym ? 0 : -ENOMEM;
}

/* Longest user stack unwound per sample (perf's default max stack is
 * 127; a report keeps at most its own frame limit anyway). */
#define USTACK_MAX 256

int ana_resolve_sample(struct ana_trace *s, const struct prec_packet *p,
		       struct ana_loc *frames, size_t max)
{
	const Perfrec__Sample *smp = p->pkt->sample;
	uint64_t uips[USTACK_MAX];
	int nu = 0;
	if (!max)
		return 0;
	int kernel = ana_ip_is_kernel(smp->misc, smp->ip);
	int ret = ana_resolve_ip(s, smp->pid, smp->ip, kernel, p->time, &frames[0]);
	if (ret < 0)
		return ret;
	size_t n = 1;
	size_t nips = 0;
	const uint64_t *ips = smp->callchain ?
		prec_frame_callchain(p->frame, smp->callchain, &nips) : NULL;
	/* A copied user stack (--call-graph dwarf) gives the user part of
	 * the chain; the kernel's callchain still gives the kernel part. A
	 * user chain the kernel walked by frame pointers stays when it is
	 * longer than what the stack unwound to. */
	if (max > 1 && ana_ustack_present(smp)) {
		nu = ana_ustack_unwind(s, p, uips, max < USTACK_MAX ? max : USTACK_MAX);
		if (nu > 0) {
			size_t fp_user = 0;
			int in_user = !kernel;
			for (size_t i = 0; ips && i < nips; i++) {
				if (ips[i] >= ANA_PERF_CONTEXT_MAX)
					in_user = ips[i] == ANA_PERF_CONTEXT_USER ||
						  ips[i] == ANA_PERF_CONTEXT_GUEST_USER;
				else if (in_user)
					fp_user++;
			}
			if (fp_user > (size_t)nu)
				nu = 0;
		}
	}
	int first = 1, known = !kernel && (frames[0].dso || frames[0].sym);
	int cut_here = 0;
	size_t keep = 0;   /* in a user part: where its cut starts */
	for (size_t i = 0; ips && i < nips && n < max; i++) {
		uint64_t ip = ips[i];
		if (ip >= ANA_PERF_CONTEXT_MAX) {
			kernel = marker_kernel(ip, kernel);
			continue;
		}
		if (nu > 0 && !kernel)
			break;   /* the unwound stack replaces the user part */
		if (!kernel && (i == 0 || ips[i - 1] >= ANA_PERF_CONTEXT_MAX))
			keep = user_keep(s, smp->pid, p->time, ips, i, nips, known, smp->ip);
		if (!kernel && i >= keep) {
			size_t end = i;

			while (end < nips && ips[end] < ANA_PERF_CONTEXT_MAX)
				end++;
			s->cut.chains++;
			s->cut.frames += end - i;
			cut_here = 1;
			ret = truncated_frame(s, &frames[n]);
			if (ret < 0)
				return ret;
			n++;
			i = end - 1;
			continue;
		}
		if (first) {
			first = 0;
			if (ip == smp->ip)
				continue;   /* the chain repeats the leaf */
		}
		/* A user part starts with the user pc where the task entered
		 * the kernel: the interrupted instruction itself (a fault at a
		 * function's first byte belongs to that function), not a
		 * return address. */
		if (!kernel && (i == 0 || ips[i - 1] >= ANA_PERF_CONTEXT_MAX))
			ret = ana_resolve_ip(s, smp->pid, ip, 0, p->time, &frames[n]);
		else
			ret = resolve_caller(s, smp->pid, ip, kernel, p->time, &frames[n]);
		if (ret < 0)
			return ret;
		n++;
	}
	/* The writer cut the chain's junk end (Sample.callchain_cut): one
	 * frame for it, unless a cut of this chain here already stands for
	 * the end. */
	if (smp->callchain_cut && nu <= 0) {
		s->cut.frames += smp->callchain_cut;
		s->cut.chains += !cut_here;
		if (!cut_here && n < max) {
			ret = truncated_frame(s, &frames[n]);
			if (ret < 0)
				return ret;
			n++;
		}
	}
	/* The unwound chain starts with the user pc: the leaf itself for a
	 * sample taken in user mode, else where the task entered the kernel
	 * (the interrupted instruction, named as itself); the rest are
	 * return addresses. */
	for (int i = ana_ip_is_kernel(smp->misc, smp->ip) ? 0 : 1; i < nu && n < max; i++) {
		if (i == 0)
			ret = ana_resolve_ip(s, smp->pid, uips[i], 0, p->time, &frames[n]);
		else
			ret = resolve_caller(s, smp->pid, uips[i], 0, p->time, &frames[n]);
		if (ret < 0)
			return ret;
		n++;
	}
	return (int)n;
}

int ana_resolve_offcpu(struct ana_trace *s, const struct prec_packet *p,
		       struct ana_loc *frames, size_t max)
{
	const Perfrec__OffCpu *oc = p->pkt->off_cpu;
	size_t nips = 0, n = 0;
	const uint64_t *ips = oc->callchain ?
		prec_frame_callchain(p->frame, oc->callchain, &nips) : NULL;
	int kernel = 1;
	/* Every entry is where a call returns to: the first kernel one is in
	 * the scheduler's caller chain, the first user one is the return
	 * from the system call the task blocked in. */
	for (size_t i = 0; ips && i < nips && n < max; i++) {
		uint64_t ip = ips[i];
		if (ip >= ANA_PERF_CONTEXT_MAX) {
			kernel = ip == ANA_PERF_CONTEXT_KERNEL ||
				 ip == ANA_PERF_CONTEXT_GUEST_KERNEL;
			continue;
		}
		int ret = resolve_caller(s, oc->pid, ip, kernel, p->time, &frames[n]);
		if (ret < 0)
			return ret;
		n++;
	}
	if (!n && max) {
		/* no stack was recorded for it: one frame says so */
		memset(&frames[0], 0, sizeof(frames[0]));
		if (!(frames[0].sym = ana_strpool_intern(&s->pool, "[no stack]")))
			return -ENOMEM;
		n = 1;
	}
	return (int)n;
}

const char *ana_frame_name(struct ana_trace *s, const struct ana_loc *f)
{
	char buf[512];
	if (f->sym)
		return f->sym;
	struct {
		const char *dso;
		uint64_t off;
	} k;
	memset(&k, 0, sizeof(k));
	k.dso = f->dso;
	k.off = f->dso ? f->dso_off : f->ip;
	const char **name = prec_hashmap_get(&s->unknown_cache, &k, NULL);
	if (!name)
		return NULL;
	if (*name)
		return *name;
	if (f->dso && f->dso[0] == '[')   /* already bracketed: [kernel.kallsyms] */
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, f->dso, f->dso_off);
	else if (f->dso)
		snprintf(buf, sizeof(buf), "[%s]+0x%" PRIx64, f->dso, f->dso_off);
	else
		snprintf(buf, sizeof(buf), "0x%" PRIx64, f->ip);
	return *name = ana_strpool_intern(&s->pool, buf);
}
