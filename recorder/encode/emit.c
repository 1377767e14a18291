/*
 * emit.c - decoded perf records into trace packets; see emit.h.
 *
 * Packets are built on the stack from generated protobuf-c structs and
 * handed to the writer, which encodes them at once (it keeps no pointer to
 * them), so borrowing strings and bytes from the ring record is safe.
 */
#include "recorder/encode/emit.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/clock.h"
#include "recorder/events/groupread.h"

#ifndef PERF_RECORD_MISC_SWITCH_OUT_PREEMPT
#define PERF_RECORD_MISC_SWITCH_OUT_PREEMPT (1 << 14)
#endif

int rec_emit_init(struct rec_emit *e, struct prec_writer *w,
		  const struct rec_decode_ctx *dctx, int ncpu)
{
	memset(e, 0, sizeof(*e));
	e->w = w;
	e->dctx = dctx;
	e->ncpu = ncpu > 0 ? ncpu : 1;
	e->cpu = calloc((size_t)e->ncpu, sizeof(*e->cpu));
	if (!e->cpu)
		return -ENOMEM;
	return 0;
}

void rec_emit_release(struct rec_emit *e)
{
	if (!e)
		return;
	free(e->cpu);
	free(e->ips);
	free(e->regs);
	e->cpu = NULL;
	e->ips = NULL;
	e->regs = NULL;
}

static struct rec_emit_cpu *cpu_stats(struct rec_emit *e, int cpu)
{
	static struct rec_emit_cpu sink;   /* for records of no known CPU */

	if (cpu < 0 || cpu >= e->ncpu)
		return &sink;
	return &e->cpu[cpu];
}

static int append(struct rec_emit *e, uint32_t stream, Perfrec__Packet *p,
		  uint64_t t)
{
	return prec_writer_append(e->w, stream, p, t);
}

/* An intern call returned 0: the writer says why (writer.h). */
static int intern_failed(const struct rec_emit *e)
{
	return prec_writer_error(e->w);
}

static int emit_raw(struct rec_emit *e, uint32_t stream, int cpu,
		    const struct rec_record *r)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__RawRecord raw = PERFREC__RAW_RECORD__INIT;

	raw.type = r->type;
	raw.misc = r->misc;
	raw.data.data = (uint8_t *)r->payload;
	raw.data.len = r->payload_len;
	raw.cpu = r->sid.has_cpu ? r->sid.cpu : (uint32_t)cpu;
	p.data_case = PERFREC__PACKET__DATA_RAW;
	p.raw = &raw;
	return append(e, stream, &p, r->sid.has_time ? r->sid.time : 0);
}

static int grow(uint64_t **v, size_t *cap, uint64_t need)
{
	uint64_t *n;

	if (*cap >= need)
		return 0;
	if (need > SIZE_MAX / sizeof(*n))
		return -ENOMEM;
	n = realloc(*v, (size_t)need * sizeof(*n));
	if (!n)
		return -ENOMEM;
	*v = n;
	*cap = (size_t)need;
	return 0;
}

/* A sample with user registers and stack (--call-graph dwarf): the user
 * part of the callchain from the unwinder, after the kernel part already
 * in e->ips[0..*n); or the registers and the stack bytes an offline
 * unwind needs into s. */
static int sample_ustack(struct rec_emit *e, const struct rec_record *r,
			 Perfrec__Sample *s, size_t *n)
{
	size_t keep = r->sample.stack_dyn;
	int nu = 0, stop = -1;
	uint64_t t0;

	if (!r->sample.nregs || !r->sample.stack_dyn)
		return 0;   /* a kernel thread, or nothing copied */
	e->st.ustacks++;
	if (e->unwind) {
		if (grow(&e->ips, &e->ips_cap, *n + 1 + REC_EMIT_USTACK_MAX) < 0)
			return -ENOMEM;
		t0 = prec_now_ns();
		nu = e->unwind(e->unwind_ctx, r, e->raw_stacks, e->ips + *n + 1,
			       REC_EMIT_USTACK_MAX, &keep, &stop);
		e->st.ustack_ns += prec_now_ns() - t0;
		if (stop >= 0 && (size_t)stop < sizeof(e->st.ustack_stops) /
		    sizeof(e->st.ustack_stops[0]))
			e->st.ustack_stops[stop]++;
		if (nu > 0) {
			e->st.ustack_unwound++;
			e->st.ustack_frames += (uint64_t)nu;
		}
		if (nu > 0 && !e->raw_stacks) {
			e->ips[*n] = PERF_CONTEXT_USER;
			*n += 1 + (size_t)nu;
			return 0;
		}
		if (keep > r->sample.stack_dyn)
			keep = r->sample.stack_dyn;
	}
	/* raw: the registers and the stack bytes, as the kernel gave them */
	if (grow(&e->regs, &e->regs_cap, r->sample.nregs) < 0)
		return -ENOMEM;
	memcpy(e->regs, r->sample.regs, r->sample.nregs * sizeof(uint64_t));
	s->regs_abi = (uint32_t)r->sample.regs_abi;
	s->regs_mask = r->sample.regs_mask;
	s->n_regs = r->sample.nregs;
	s->regs = e->regs;
	s->stack.data = (uint8_t *)r->sample.stack;
	s->stack.len = keep;
	s->stack_dyn_size = r->sample.stack_dyn;
	e->st.ustack_raw++;
	e->st.ustack_raw_bytes += keep;
	return 0;
}

/* ---- junk at the end of frame-pointer chains
 *
 * The analyzer's rule (analyzer/symbols/resolve.c, user_keep), applied
 * here so the junk never reaches the file: a frame-pointer walk through
 * code built without frame pointers reads whatever the register held
 * (zero, small integers, data addresses, a frame pointing at itself up
 * to the kernel's depth limit), and each such chain starts new callchain
 * nodes. The user part that ends the chain is cut at its first entry no
 * mapping of the process holds once an earlier one (the ip included)
 * was in a mapping, and before a run of one address that lasts to the
 * end (a looping walk). What is cut is counted in Sample.callchain_cut,
 * which readers show as one frame. The gatherer answers "mapped" from
 * the mappings decoded so far (records come merged by time, so they are
 * all there); when it cannot answer (< 0) the chain is kept whole. */

/* The address space after callchain marker m (1 kernel, 0 user, -1 one
 * the recorder does not map: hypervisor, guest); a value in the markers'
 * range that is none of them (junk of a walk) changes nothing. */
static int marker_mode(uint64_t m, int mode)
{
	if (m == PERF_CONTEXT_KERNEL)
		return 1;
	if (m == PERF_CONTEXT_USER)
		return 0;
	if (m == PERF_CONTEXT_HV || m == PERF_CONTEXT_GUEST ||
	    m == PERF_CONTEXT_GUEST_KERNEL || m == PERF_CONTEXT_GUEST_USER)
		return -1;
	return mode;
}

/* How many entries to cut from the end of ips[0..n) of sample r. */
static size_t chain_cut(struct rec_emit *e, const struct rec_record *r,
			const uint64_t *ips, size_t n)
{
	int cpumode = r->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	int mode = cpumode == PERF_RECORD_MISC_USER ? 0 :
		   cpumode == PERF_RECORD_MISC_KERNEL ? 1 : -1;
	uint32_t pid = r->sid.pid;
	uint64_t t = r->sid.time;
	size_t i0 = 0, run;
	int known = 0, m;

	/* the user part that ends the chain */
	for (size_t i = 0; i < n; i++)
		if (ips[i] >= PERF_CONTEXT_MAX) {
			mode = marker_mode(ips[i], mode);
			i0 = i + 1;
		}
	if (mode != 0 || i0 >= n)
		return 0;
	if (cpumode == PERF_RECORD_MISC_USER) {
		m = e->mapped(e->mapped_ctx, pid, r->sample.ip, t);
		if (m < 0)
			return 0;
		known = m;
	}
	for (size_t i = i0; i < n; i++) {
		if (i == i0 && ips[i] == r->sample.ip)
			continue;   /* the chain repeats the leaf */
		/* a return address: the call is the byte before it */
		m = ips[i] > 1 ? e->mapped(e->mapped_ctx, pid, ips[i] - 1, t) : 0;
		if (m < 0)
			return 0;
		if (m)
			known = 1;
		else if (known)
			return n - i;
		for (run = i + 1; run < n && ips[run] == ips[i]; run++)
			;
		if (run == n && n - i >= 2)
			return n - i - 1;   /* a looping walk: keep the first */
	}
	return 0;
}

/* Copies r's callchain into e->ips (aligned) and cuts its junk end
 * (r->sample.nr, .cut): before the observers, which then see only what
 * the trace keeps. */
static int sample_chain(struct rec_emit *e, struct rec_record *r)
{
	size_t n = (size_t)r->sample.nr, cut;

	r->sample.cut = 0;
	if (!n)
		return 0;
	if (grow(&e->ips, &e->ips_cap, r->sample.nr) < 0)
		return -ENOMEM;
	memcpy(e->ips, r->sample.ips, n * sizeof(uint64_t));
	/* a copied user stack replaces the user chain (sample_ustack) */
	if (!e->mapped || r->sample.stack)
		return 0;
	cut = chain_cut(e, r, e->ips, n);
	if (cut) {
		r->sample.nr -= cut;
		r->sample.cut = (uint32_t)cut;
		e->st.cut_chains++;
		e->st.cut_frames += cut;
	}
	return 0;
}

/* r's callchain is in e->ips (sample_chain). */
static int emit_sample(struct rec_emit *e, uint32_t stream,
		       const struct rec_record *r)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__Sample s = PERFREC__SAMPLE__INIT;
	Perfrec__GroupRead gr = PERFREC__GROUP_READ__INIT;
	struct rec_group_read rd;
	size_t n = (size_t)r->sample.nr;
	int ret;

	s.id = r->sid.id;
	s.cpu = r->sid.cpu;
	s.pid = r->sid.pid;
	s.tid = r->sid.tid;
	s.ip = r->sample.ip;
	s.period = r->sample.period;
	s.addr = r->sample.addr;
	s.misc = r->misc;
	s.stream_id = r->sid.stream_id;
	s.callchain_cut = r->sample.cut;
	if (r->sample.stack) {
		ret = sample_ustack(e, r, &s, &n);
		if (ret < 0)
			return ret;
	}
	if (n) {
		s.callchain = prec_writer_intern_callchain(e->w, stream, e->ips, n);
		if (!s.callchain)
			return intern_failed(e);
	}
	if (r->sample.raw) {
		s.raw.data = (uint8_t *)r->sample.raw;
		s.raw.len = r->sample.raw_size;
	}
	if (r->sample.read &&
	    rec_group_read_parse(r->sample.read, r->sample.read_len,
				 r->sample.read_format, &rd) > 0) {
		gr.time_enabled = rd.time_enabled;
		gr.time_running = rd.time_running;
		gr.n_values = rd.nr;
		gr.values = rd.values;
		if (rd.has_id) {
			gr.n_ids = rd.nr;
			gr.ids = rd.ids;
		}
		if (rd.has_lost) {
			gr.n_lost = rd.nr;
			gr.lost = rd.lost;
		}
		s.read = &gr;
	}
	p.data_case = PERFREC__PACKET__DATA_SAMPLE;
	p.sample = &s;
	return append(e, stream, &p, r->sid.time);
}

static int emit_task(struct rec_emit *e, uint32_t stream,
		     const struct rec_record *r)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__TaskEvent t = PERFREC__TASK_EVENT__INIT;
	uint64_t time = r->sid.time;

	t.cpu = r->sid.cpu;
	if (r->type == PERF_RECORD_COMM) {
		t.kind = PERFREC__TASK_EVENT__KIND__COMM;
		t.pid = r->comm.pid;
		t.tid = r->comm.tid;
		t.exec = !!(r->misc & PERF_RECORD_MISC_COMM_EXEC);
		t.comm = prec_writer_intern_string(e->w, stream, r->comm.comm);
		if (!t.comm)
			return intern_failed(e);
	} else {
		t.kind = r->type == PERF_RECORD_FORK ? PERFREC__TASK_EVENT__KIND__FORK
						     : PERFREC__TASK_EVENT__KIND__EXIT;
		t.pid = r->task.pid;
		t.tid = r->task.tid;
		t.ppid = r->task.ppid;
		t.ptid = r->task.ptid;
		if (!r->sid.has_time)
			time = r->task.time;
	}
	p.data_case = PERFREC__PACKET__DATA_TASK;
	p.task = &t;
	return append(e, stream, &p, time);
}

static int emit_mmap(struct rec_emit *e, uint32_t stream,
		     const struct rec_record *r)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__Mmap m = PERFREC__MMAP__INIT;

	m.pid = r->mmap2.pid;
	m.tid = r->mmap2.tid;
	m.start = r->mmap2.addr;
	m.len = r->mmap2.len;
	m.pgoff = r->mmap2.pgoff;
	m.maj = r->mmap2.maj;
	m.min = r->mmap2.min;
	m.ino = r->mmap2.ino;
	m.ino_generation = r->mmap2.ino_generation;
	m.prot = r->mmap2.prot;
	m.flags = r->mmap2.flags;
	m.misc = r->misc;
	m.cpu = r->sid.cpu;
	if (r->mmap2.build_id_size) {
		m.build_id.data = (uint8_t *)r->mmap2.build_id;
		m.build_id.len = r->mmap2.build_id_size;
	}
	m.filename = prec_writer_intern_string(e->w, stream, r->mmap2.filename);
	if (!m.filename)
		return intern_failed(e);
	p.data_case = PERFREC__PACKET__DATA_MMAP;
	p.mmap = &m;
	return append(e, stream, &p, r->sid.time);
}

static int emit_switch(struct rec_emit *e, uint32_t stream,
		       const struct rec_record *r)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__ContextSwitch cs = PERFREC__CONTEXT_SWITCH__INIT;

	cs.id = r->sid.id;
	cs.cpu = r->sid.cpu;
	cs.pid = r->sid.pid;
	cs.tid = r->sid.tid;
	cs.out = !!(r->misc & PERF_RECORD_MISC_SWITCH_OUT);
	cs.preempt = cs.out && (r->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	cs.cpu_wide = r->type == PERF_RECORD_SWITCH_CPU_WIDE;
	cs.other_pid = r->sw.next_prev_pid;
	cs.other_tid = r->sw.next_prev_tid;
	p.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
	p.context_switch = &cs;
	return append(e, stream, &p, r->sid.time);
}

static int emit_loss(struct rec_emit *e, uint32_t stream,
		     const struct rec_record *r, struct rec_emit_cpu *cs)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__Loss l = PERFREC__LOSS__INIT;

	l.cpu = r->sid.cpu;
	if (r->type == PERF_RECORD_LOST) {
		l.kind = PERFREC__LOSS__KIND__KERNEL_LOST;
		l.id = r->lost.id;
		l.count = r->lost.lost;
		e->st.lost_records++;
	} else {
		l.kind = PERFREC__LOSS__KIND__LOST_SAMPLES;
		l.id = r->sid.id;
		l.count = r->lost_samples.lost;
	}
	e->st.lost += l.count;
	cs->lost += l.count;
	p.data_case = PERFREC__PACKET__DATA_LOSS;
	p.loss = &l;
	return append(e, stream, &p, r->sid.time);
}

static int emit_throttle(struct rec_emit *e, uint32_t stream,
			 const struct rec_record *r)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__Throttle t = PERFREC__THROTTLE__INIT;

	t.throttled = r->type == PERF_RECORD_THROTTLE;
	t.id = r->throttle.id;
	t.cpu = r->sid.cpu;
	t.stream_id = r->throttle.stream_id;
	if (t.throttled)
		e->st.throttles++;
	p.data_case = PERFREC__PACKET__DATA_THROTTLE;
	p.throttle = &t;
	return append(e, stream, &p, r->sid.has_time ? r->sid.time : r->throttle.time);
}

int rec_emit_record(struct rec_emit *e, uint32_t stream, int ring_cpu,
		    const struct perf_event_header *hdr)
{
	struct rec_emit_cpu *cs = cpu_stats(e, ring_cpu);
	uint32_t side = e->side_stream ? e->side_stream : stream;
	uint32_t sw = e->switch_stream ? e->switch_stream : stream;
	struct perf_event_header h;
	struct rec_record r;
	int ret;

	/* kernel records are 8-byte aligned, but bytes of other origin (a
	 * fuzzer, a damaged ring) need not be: copy the header */
	memcpy(&h, hdr, sizeof(h));
	e->st.records++;
	e->st.bytes += h.size;
	cs->records++;
	cs->bytes += h.size;
	ret = rec_decode(e->dctx, hdr, h.size, &r);
	if (ret < 0) {
		/* Keep the bytes: a reader may still make sense of them. */
		e->st.bad++;
		if (!r.sid.has_cpu && ring_cpu >= 0)
			r.sid.cpu = (uint32_t)ring_cpu;
		return emit_raw(e, side, ring_cpu, &r);
	}
	if (ret == 0) {
		e->st.raw++;
		return emit_raw(e, side, ring_cpu, &r);
	}
	if (!r.sid.has_cpu && ring_cpu >= 0)
		r.sid.cpu = (uint32_t)ring_cpu;
	if (r.type == PERF_RECORD_SAMPLE && r.sample.bpf_output) {
		/* a BPF program's record: its owner makes the packet, on
		 * the scheduling stream (off-CPU time belongs with the
		 * switches a schedule reads, not with the samples) */
		e->st.bpf++;
		if (e->bpf_output)
			return e->bpf_output(e->bpf_ctx, e, sw, &r);
		e->st.raw++;
		return emit_raw(e, side, ring_cpu, &r);
	}
	/* the symbol gatherer sees it too (the trace's symbol tables).
	 * Not context switches: they carry no address and change no
	 * address space, and they are most records of a --switch-events
	 * trace. */
	if (r.type == PERF_RECORD_SAMPLE) {
		ret = sample_chain(e, &r);
		if (ret < 0)
			return ret;
	}
	if (e->observe && r.type != PERF_RECORD_SWITCH &&
	    r.type != PERF_RECORD_SWITCH_CPU_WIDE)
		e->observe(e->observe_ctx, &r);
	switch (r.type) {
	case PERF_RECORD_SAMPLE:
		e->st.samples++;
		cs->samples++;
		return emit_sample(e, stream, &r);
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		e->st.tasks++;
		return emit_task(e, side, &r);
	case PERF_RECORD_MMAP2:
		e->st.mmaps++;
		return emit_mmap(e, side, &r);
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		e->st.switches++;
		cs->switches++;
		return emit_switch(e, sw, &r);
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		return emit_loss(e, side, &r, cs);
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		return emit_throttle(e, side, &r);
	default:
		e->st.raw++;
		return emit_raw(e, side, ring_cpu, &r);
	}
}

int rec_emit_ring_error(struct rec_emit *e, uint32_t stream, int cpu,
			uint64_t time_ns, const char *reason)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__Loss l = PERFREC__LOSS__INIT;

	e->st.ring_errors++;
	l.kind = PERFREC__LOSS__KIND__RING_ERROR;
	l.cpu = cpu < 0 ? 0 : (uint32_t)cpu;
	l.reason = (char *)reason;
	p.data_case = PERFREC__PACKET__DATA_LOSS;
	p.loss = &l;
	return append(e, stream, &p, time_ns);
}
