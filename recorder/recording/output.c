/*
 * output.c - one output of a recording: the packets it starts with (so it
 * analyzes alone), its end (symbols hit, counter values, SessionEnd,
 * index), rotation to the next output, and write errors. See recording.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/error.h"
#include "format/base/clock.h"
#include "recorder/encode/meta.h"
#include "recorder/encode/synth.h"
#include "recorder/log.h"
#include "recorder/recording/recording_int.h"

/* ---- what the rest of the recording calls here, never the other way */

static const char *name_of(const struct rec_recording *r)
{
	return r->output_name[0] ? r->output_name : "the output";
}

static void log_write_error(struct rec_recording *r, int e)
{
	if (e == -ENOSPC || e == -EDQUOT)
		rec_log(REC_LOG_ERROR,
			"disk full while writing %s (%s): recording stopped; the file "
			"reads up to its last complete frame. Free space or write "
			"elsewhere (-o)", name_of(r), prec_strerror(e));
	else
		rec_log(REC_LOG_ERROR,
			"writing %s failed (%s): recording stopped; the file reads up "
			"to its last complete frame", name_of(r), prec_strerror(e));
}

/* A write error: the recording can only be released from now on. */
int recording_fail_write(struct rec_recording *r, int e)
{
	if (r->state != REC_RECORDING_FAILED) {
		log_write_error(r, e);
		r->state = REC_RECORDING_FAILED;
		r->err = e;
		r->stop_reason = "error: write failed";
	}
	return e;
}

bool recording_task_target(const struct rec_recording *r)
{
	return r->o.target == REC_TARGET_PIDS || r->o.target == REC_TARGET_TIDS;
}

int recording_open_writer(struct rec_recording *r, struct prec_sink *sink,
		       const char *name, struct prec_writer **out)
{
	struct prec_writer_opts wo = PREC_WRITER_OPTS_INIT;

	if (r->o.frame_size)
		wo.frame_size = r->o.frame_size;
	if (r->o.flush_ms)
		wo.flush_ms = r->o.flush_ms;
	if (r->o.zstd_level)
		wo.zstd_level = r->o.zstd_level;
	*out = prec_writer_new(sink, &wo);
	if (!*out) {
		int e = errno ? -errno : -ENOMEM;

		rec_log(REC_LOG_ERROR, "cannot start writing %s: %s",
			name ? name : "the output", prec_strerror(e));
		return e;
	}
	snprintf(r->output_name, sizeof(r->output_name), "%s", name ? name : "");
	return 0;
}

/* What every output starts with: header, event and group descriptions,
 * notes. */
int recording_write_preamble(struct rec_recording *r, uint64_t start_ns)
{
	struct rec_meta_header h;
	int ret;

	memset(&h, 0, sizeof(h));
	h.argc = r->o.argc;
	h.argv = r->o.argv_self;
	h.start_ns = start_ns;
	h.target = r->target;
	if (r->have_wl) {
		h.workload = r->o.argv;
		h.workload_pid = r->wl.pid;
	}
	ret = rec_meta_write_header(r->w, &h);
	if (!ret && r->src->ops->describe)
		ret = r->src->ops->describe(r->src, r->w);
	if (!ret && r->ctr)
		ret = rec_counters_describe(r->ctr, r->w, r->src->nevents,
					    r->src->ngroups);
	for (size_t i = 0; !ret && i < 2; i++)
		if (r->notes[i][0])
			ret = rec_meta_write_note(r->w, PERFREC__NOTE__LEVEL__WARNING,
						  r->notes[i]);
	return ret;
}

/* The tasks and maps that exist now (from /proc). */
int recording_write_tasks(struct rec_recording *r)
{
	struct rec_synth_stats sst;
	const int *sp = NULL;
	size_t sn = 0;

	if (r->o.proc_root && !r->o.proc_root[0])
		return 0;
	if (recording_task_target(r)) {
		sp = r->o.pids;
		sn = r->o.npids;
	}
	return rec_synth_tasks(r->w, 0, r->o.proc_root ? r->o.proc_root : "/proc",
			       sp, sn, prec_now_ns(), &sst);
}

void recording_begin_output(struct rec_recording *r, uint64_t now)
{
	r->base = r->e.st;
	memcpy(r->cpu_base, r->e.cpu, (size_t)r->e.ncpu * sizeof(*r->cpu_base));
	r->out_start_ns = now;
	r->outputs++;
}

/* ---- ending an output */

/* This output's part of the emit counts: whole-recording counts minus
 * those when the output began. */
static void output_counts(struct rec_recording *r, struct rec_emit_stats *st)
{
	const uint64_t *now = (const uint64_t *)&r->e.st;
	const uint64_t *base = (const uint64_t *)&r->base;
	uint64_t *out = (uint64_t *)st;

	for (size_t i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		out[i] = now[i] - base[i];
	for (int c = 0; c < r->e.ncpu; c++) {
		r->cpu_out[c].records = r->e.cpu[c].records - r->cpu_base[c].records;
		r->cpu_out[c].samples = r->e.cpu[c].samples - r->cpu_base[c].samples;
		r->cpu_out[c].lost = r->e.cpu[c].lost - r->cpu_base[c].lost;
		r->cpu_out[c].bytes = r->e.cpu[c].bytes - r->cpu_base[c].bytes;
		r->cpu_out[c].switches = r->e.cpu[c].switches - r->cpu_base[c].switches;
	}
}

/* Symbols hit so far, counter values, per-event losses, SessionEnd,
 * index, sync. */
int recording_end_output(struct rec_recording *r, uint64_t now, const char *reason,
		      bool final_counters)
{
	struct rec_emit_stats st;
	struct rec_emit_cpu *per_ring;
	struct rec_meta_end end;
	struct prec_writer_stats ws;
	int ret = 0;

	if (r->ctr)
		ret = rec_counters_snapshot(r->ctr, r->w, now, final_counters);
	if (!ret && r->syms_write) {
		int sret = rec_symgather_write(r->syms, r->w, 0, now);

		if (sret < 0)
			ret = sret;
	}
	if (!ret && r->src->ops->write_lost)
		ret = r->src->ops->write_lost(r->src, r->w, now, &r->event_lost);
	if (ret < 0)
		return ret;
	output_counts(r, &st);
	per_ring = calloc(r->src->nrings + 1, sizeof(*per_ring));
	if (!per_ring)
		return -ENOMEM;
	for (size_t i = 0; i < r->src->nrings; i++) {
		int cpu = r->src->ring_cpu[i];

		if (cpu >= 0 && cpu < r->e.ncpu)
			per_ring[i] = r->cpu_out[cpu];
	}
	memset(&end, 0, sizeof(end));
	end.end_ns = now;
	end.reason = reason;
	end.exit_status = r->have_wl && r->wl.exited ? rec_workload_exit_code(&r->wl) : -1;
	end.st = &st;
	end.cpu = per_ring;
	end.cpus = r->src->ring_cpu;
	end.ncpus = r->src->nrings;
	if (r->syms) {
		struct rec_symgather_stats ss;

		rec_symgather_stats(r->syms, &ss);
		end.symbol_bytes = ss.bytes;
		end.symbol_time_ns = ss.time_ns;
	}
	ret = rec_meta_write_end(r->w, &end);
	free(per_ring);
	if (!ret)
		ret = prec_writer_close(r->w);
	if (!ret) {
		prec_writer_stats(r->w, &ws);
		r->done_written += ws.bytes_written;
		r->done_raw += ws.bytes_raw;
	}
	return ret;
}

int rec_recording_rotate(struct rec_recording *r, struct prec_sink *next,
			 const char *output_name)
{
	struct prec_writer *nw;
	uint64_t now;
	int ret;

	if (r->state != REC_RECORDING_RUNNING) {
		rec_log(REC_LOG_ERROR, "cannot rotate: the recording is not running");
		return -EINVAL;
	}
	/* Every record consumed so far goes to the old output, every later
	 * one to the new: consume_all() is not running now. */
	now = prec_now_ns();
	ret = recording_end_output(r, now, "rotated", true);
	if (ret < 0)
		return recording_fail_write(r, ret);
	prec_writer_free(r->w);
	r->w = NULL;
	ret = recording_open_writer(r, next, output_name, &nw);
	if (ret < 0) {
		r->state = REC_RECORDING_FAILED;
		r->err = ret;
		r->stop_reason = "error: cannot open the next output";
		return ret;
	}
	r->w = nw;
	r->e.w = nw;
	if (r->syms)
		rec_symgather_restart(r->syms);
	recording_begin_output(r, now);
	ret = recording_write_preamble(r, now);
	if (!ret)
		ret = recording_write_tasks(r);
	if (!ret && r->ctr)
		ret = rec_counters_snapshot(r->ctr, r->w, now, false);
	if (!ret)
		ret = prec_writer_flush(r->w);
	if (ret < 0)
		return recording_fail_write(r, ret);
	return 0;
}

int rec_recording_write_loss(struct rec_recording *r, int kind, uint64_t count,
			     const char *reason)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__Loss l = PERFREC__LOSS__INIT;
	int ret;

	if (r->state != REC_RECORDING_RUNNING && r->state != REC_RECORDING_ENDING &&
	    r->state != REC_RECORDING_READY)
		return r->err ? r->err : -EINVAL;
	l.kind = (Perfrec__Loss__Kind)kind;
	l.count = count;
	l.reason = (char *)reason;
	p.data_case = PERFREC__PACKET__DATA_LOSS;
	p.loss = &l;
	ret = prec_writer_append(r->w, 0, &p, prec_now_ns());
	return ret < 0 ? recording_fail_write(r, ret) : 0;
}
