/*
 * record.c - the recording session driver; see record.h for the steps.
 */
#include "recorder/record.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "format/error.h"
#include "format/writer.h"
#include "recorder/counters.h"
#include "recorder/cpumap.h"
#include "recorder/hostinfo.h"
#include "recorder/session.h"
#include "recorder/status.h"
#include "recorder/synth.h"
#include "recorder/workload.h"

#ifndef PERFREC_VERSION
#define PERFREC_VERSION "0"
#endif

#define LOOP_TIMEOUT_MS 100
#define STATUS_NS 1000000000ull
#define WORKLOAD_TAG UINT32_MAX

struct rec {
	const struct rec_record_opts *o;
	struct rec_record_result *res;
	struct rec_cpumap cpus;
	int *tids;                  /* task targets, expanded */
	size_t ntids;
	struct rec_evlist dummy;    /* used when only counters were asked for */
	const struct rec_evlist *evlist;
	struct rec_session s;
	bool session_ok;
	struct rec_counters *ctr;
	struct rec_workload wl;
	bool have_wl, wl_started;
	struct prec_sink *sink;
	bool own_sink;
	struct prec_writer *w;
	struct rec_emit e;
	bool emit_ok;
	bool *ring_reported;
	int ep;
	uint64_t start_ns;
	int write_err;
};

static void logf_(struct rec *r, enum rec_log_level lvl, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!r->o->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->o->log(r->o->ctx, lvl, msg);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int push_tid(struct rec *r, int tid, size_t *cap)
{
	if (r->ntids == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		int *n = realloc(r->tids, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->tids = n;
		*cap = nc;
	}
	r->tids[r->ntids++] = tid;
	return 0;
}

/* -p PID: every thread of PID (from /proc/PID/task); -t TID as given. */
static int resolve_tasks(struct rec *r, char *err, size_t errlen)
{
	const struct rec_record_opts *o = r->o;
	size_t cap = 0;

	for (size_t i = 0; i < o->npids; i++) {
		char path[64];
		DIR *d;
		struct dirent *de;

		if (kill(o->pids[i], 0) < 0 && errno == ESRCH) {
			snprintf(err, errlen, "no such %s: %d",
				 o->target == REC_TARGET_PIDS ? "process" : "thread",
				 o->pids[i]);
			return -ESRCH;
		}
		if (o->target == REC_TARGET_TIDS) {
			if (push_tid(r, o->pids[i], &cap) < 0)
				return -ENOMEM;
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%d/task", o->pids[i]);
		d = opendir(path);
		if (!d) {
			if (push_tid(r, o->pids[i], &cap) < 0)
				return -ENOMEM;
			continue;
		}
		while ((de = readdir(d))) {
			if (!isdigit((unsigned char)de->d_name[0]))
				continue;
			if (push_tid(r, atoi(de->d_name), &cap) < 0) {
				closedir(d);
				return -ENOMEM;
			}
		}
		closedir(d);
	}
	qsort(r->tids, r->ntids, sizeof(*r->tids), cmp_int);
	return 0;
}

static bool targets_alive(const struct rec *r)
{
	for (size_t i = 0; i < r->ntids; i++)
		if (kill(r->tids[i], 0) == 0 || errno != ESRCH)
			return true;
	return false;
}

static int write_header(struct rec *r)
{
	const struct rec_record_opts *o = r->o;
	struct rec_hostinfo h;
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	char target[256];
	int ret;

	rec_hostinfo_init(&h, PERFREC_VERSION);
	h.hdr.n_cmdline = o->argc > 0 ? (size_t)o->argc : 0;
	h.hdr.cmdline = o->argv_self;
	h.hdr.start_time = r->start_ns;
	switch (o->target) {
	case REC_TARGET_SYSTEM:
		snprintf(target, sizeof(target), "system-wide");
		break;
	case REC_TARGET_CPUS: {
		size_t n = (size_t)snprintf(target, sizeof(target), "cpus");

		for (size_t i = 0; i < r->cpus.n && n < sizeof(target) - 12; i++)
			n += (size_t)snprintf(target + n, sizeof(target) - n, "%s%d",
					      i ? "," : " ", r->cpus.cpu[i]);
		break;
	}
	case REC_TARGET_PIDS:
	case REC_TARGET_TIDS: {
		size_t n = (size_t)snprintf(target, sizeof(target), "%s",
					    o->target == REC_TARGET_PIDS ? "pid" : "tid");

		for (size_t i = 0; i < o->npids && n < sizeof(target) - 12; i++)
			n += (size_t)snprintf(target + n, sizeof(target) - n, "%s%d",
					      i ? "," : " ", o->pids[i]);
		break;
	}
	case REC_TARGET_COMMAND:
	default:
		snprintf(target, sizeof(target), "command");
		break;
	}
	h.hdr.target = target;
	if (r->have_wl) {
		size_t n = 0;

		while (o->argv[n])
			n++;
		h.hdr.n_workload = n;
		h.hdr.workload = (char **)o->argv;
		h.hdr.workload_pid = r->wl.pid;
	}
	p.data_case = PERFREC__PACKET__DATA_HEADER;
	p.header = &h.hdr;
	ret = prec_writer_append(r->w, 0, &p, r->start_ns);
	rec_hostinfo_release(&h);
	return ret;
}

static int write_note(struct rec *r, Perfrec__Note__Level lvl, const char *text)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__Note n = PERFREC__NOTE__INIT;

	n.level = lvl;
	n.text = (char *)text;
	p.data_case = PERFREC__PACKET__DATA_NOTE;
	p.note = &n;
	return prec_writer_append(r->w, 0, &p, 0);
}

/* Drains one ring into its stream. Returns 0 or the writer's error. */
static int drain_ring(struct rec *r, size_t i)
{
	struct rec_ring *ring = &r->s.rings[i];
	int cpu = r->s.ring_cpu[i];
	uint32_t stream = 1 + (uint32_t)cpu;
	const struct perf_event_header *h;
	int ret = 0, n;

	if (!ring->meta)
		return 0;
	rec_ring_read_begin(ring);
	while ((n = rec_ring_next(ring, &h)) > 0) {
		ret = rec_emit_record(&r->e, stream, cpu, h);
		if (ret < 0)
			break;
	}
	if (n < 0 && n != -ENOMEM && !r->ring_reported[i]) {
		char why[160];

		r->ring_reported[i] = true;
		snprintf(why, sizeof(why),
			 "ring of cpu %d stopped: corrupt record header at ring offset %llu",
			 cpu, (unsigned long long)ring->pos);
		logf_(r, REC_LOG_ERROR, "%s; its later records are lost", why);
		if (!ret)
			ret = rec_emit_ring_error(&r->e, stream, cpu, rec_now_ns(), why);
	}
	rec_ring_read_done(ring);
	return ret;
}

static int drain_all(struct rec *r)
{
	for (size_t i = 0; i < r->s.nrings; i++) {
		int ret = drain_ring(r, i);

		if (ret < 0)
			return ret;
	}
	return 0;
}

static int write_session_end(struct rec *r, uint64_t now, const char *reason)
{
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__SessionEnd se = PERFREC__SESSION_END__INIT;
	struct prec_writer_stats ws;
	Perfrec__CpuStats *cs = calloc(r->s.nrings + 1, sizeof(*cs));
	Perfrec__CpuStats **csp = calloc(r->s.nrings + 1, sizeof(*csp));
	int ret;

	if (!cs || !csp) {
		free(cs);
		free(csp);
		return -ENOMEM;
	}
	prec_writer_stats(r->w, &ws);
	se.end_time = now;
	se.samples = r->e.st.samples;
	se.switches = r->e.st.switches;
	se.records = r->e.st.records;
	se.lost = r->e.st.lost;
	se.dropped = 0;
	se.bytes_raw = ws.bytes_raw;
	se.bytes_written = ws.bytes_written;
	se.throttles = r->e.st.throttles;
	for (size_t i = 0; i < r->s.nrings; i++) {
		int cpu = r->s.ring_cpu[i];
		const struct rec_emit_cpu *c = &r->e.cpu[cpu];

		perfrec__cpu_stats__init(&cs[i]);
		cs[i].cpu = (uint32_t)cpu;
		cs[i].records = c->records;
		cs[i].samples = c->samples;
		cs[i].lost = c->lost;
		cs[i].bytes = c->bytes;
		cs[i].switches = c->switches;
		csp[i] = &cs[i];
	}
	se.n_cpus = r->s.nrings;
	se.cpus = csp;
	if (r->have_wl && r->wl.exited)
		se.exit_status = rec_workload_exit_code(&r->wl);
	se.stop_reason = (char *)reason;
	p.data_case = PERFREC__PACKET__DATA_SESSION_END;
	p.session_end = &se;
	ret = prec_writer_append(r->w, 0, &p, now);
	free(cs);
	free(csp);
	return ret;
}

static void emit_status(struct rec *r, uint64_t now, uint64_t *prev_t,
			uint64_t *prev_rec)
{
	struct rec_status_in in;
	struct prec_writer_stats ws;
	char line[256];

	prec_writer_stats(r->w, &ws);
	in.elapsed_ns = now - r->start_ns;
	in.records = r->e.st.records;
	in.records_prev = *prev_rec;
	in.dt_ns = now - *prev_t;
	in.lost = r->e.st.lost;
	in.bytes_written = ws.bytes_written;
	in.bytes_raw = ws.bytes_raw;
	r->o->status(r->o->ctx, rec_status_format(&in, line, sizeof(line)));
	*prev_t = now;
	*prev_rec = r->e.st.records;
}

static int setup_epoll(struct rec *r)
{
	struct epoll_event ev;

	r->ep = epoll_create1(EPOLL_CLOEXEC);
	if (r->ep < 0)
		return -errno;
	for (size_t i = 0; i < r->s.nrings; i++) {
		if (r->s.rings[i].fd < 0)
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.u32 = (uint32_t)i;
		if (epoll_ctl(r->ep, EPOLL_CTL_ADD, r->s.rings[i].fd, &ev) < 0)
			return -errno;
	}
	if (r->have_wl && r->wl.pidfd >= 0) {
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.u32 = WORKLOAD_TAG;
		if (epoll_ctl(r->ep, EPOLL_CTL_ADD, r->wl.pidfd, &ev) < 0)
			return -errno;
	}
	return 0;
}

/* The main loop. Returns the stop reason (static string) and sets
 * r->write_err on a writer failure. */
static const char *loop(struct rec *r)
{
	const struct rec_record_opts *o = r->o;
	struct epoll_event evs[64];
	uint64_t ival = r->ctr ? rec_counters_interval_ns(r->ctr) : 0;
	uint64_t next_ctr = r->start_ns + ival, next_status = r->start_ns + STATUS_NS;
	uint64_t prev_t = r->start_ns, prev_rec = 0;
	bool task_target = o->target == REC_TARGET_PIDS || o->target == REC_TARGET_TIDS;

	for (;;) {
		int timeout = LOOP_TIMEOUT_MS, n, ret;
		uint64_t now = rec_now_ns();

		if (ival && next_ctr > now && (next_ctr - now) / 1000000 < (uint64_t)timeout)
			timeout = (int)((next_ctr - now) / 1000000) + 1;
		n = epoll_wait(r->ep, evs, 64, timeout);
		if (n > 0)
			r->res->wakeups++;
		for (int k = 0; k < n; k++) {
			uint32_t tag = evs[k].data.u32;

			if (tag == WORKLOAD_TAG)
				continue;
			if ((evs[k].events & (EPOLLHUP | EPOLLERR)) && tag < r->s.nrings)
				epoll_ctl(r->ep, EPOLL_CTL_DEL, r->s.rings[tag].fd, NULL);
		}
		ret = drain_all(r);
		now = rec_now_ns();
		if (!ret)
			ret = prec_writer_flush_due(r->w, now);
		if (!ret && r->ctr && ival && now >= next_ctr) {
			ret = rec_counters_snapshot(r->ctr, r->w, now, false);
			while (next_ctr <= now)
				next_ctr += ival;
		}
		if (ret < 0) {
			r->write_err = ret;
			return "error: write failed";
		}
		if (o->status && now >= next_status) {
			emit_status(r, now, &prev_t, &prev_rec);
			next_status = now + STATUS_NS;
		}
		if (o->stop && *o->stop)
			return "signal";
		if (o->duration_ns && now - r->start_ns >= o->duration_ns)
			return "duration";
		if (r->have_wl && rec_workload_poll(&r->wl))
			return "workload exited";
		if (task_target && !targets_alive(r))
			return "targets exited";
	}
}

static int open_output(struct rec *r, char *err, size_t errlen)
{
	const struct rec_record_opts *o = r->o;
	struct prec_writer_opts wo = PREC_WRITER_OPTS_INIT;
	int fd;

	if (o->sink) {
		r->sink = o->sink;
	} else {
		fd = open(o->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			int e = -errno;

			snprintf(err, errlen, "cannot create %s: %s", o->output, strerror(-e));
			return e;
		}
		r->sink = prec_sink_fd_new(fd, 1);
		if (!r->sink) {
			close(fd);
			return -ENOMEM;
		}
		r->own_sink = true;
	}
	if (o->frame_size)
		wo.frame_size = o->frame_size;
	wo.flush_ms = o->flush_ms;
	r->w = prec_writer_new(r->sink, &wo);
	if (!r->w) {
		int e = errno ? -errno : -ENOMEM;

		snprintf(err, errlen, "cannot start writing %s: %s",
			 o->output ? o->output : "output", prec_strerror(e));
		return e;
	}
	return 0;
}

static int open_counters(struct rec *r, char *err, size_t errlen)
{
	const struct rec_record_opts *o = r->o;
	const int *pids = NULL;
	size_t npids = 0;
	int ret;

	if (!o->ncounters)
		return 0;
	r->ctr = rec_counters_new();
	if (!r->ctr)
		return -ENOMEM;
	for (size_t i = 0; i < o->ncounters; i++) {
		ret = rec_counters_add(r->ctr, o->counters[i], err, errlen);
		if (ret < 0)
			return ret;
	}
	rec_counters_set_interval(r->ctr, o->interval_ns);
	if (o->target == REC_TARGET_COMMAND) {
		pids = &r->wl.pid;
		npids = 1;
	} else if (r->ntids) {
		pids = r->tids;
		npids = r->ntids;
	}
	return rec_counters_open(r->ctr, r->cpus.cpu, r->cpus.n, pids, npids,
				 o->target == REC_TARGET_COMMAND, err, errlen);
}

static void explain_write_error(struct rec *r, int e, char *err, size_t errlen)
{
	const char *out = r->o->output ? r->o->output : "the output";

	if (e == -ENOSPC || e == -EDQUOT)
		snprintf(err, errlen,
			 "disk full while writing %s (%s): recording stopped; the file "
			 "reads up to its last complete frame. Free space or write elsewhere (-o)",
			 out, prec_strerror(e));
	else
		snprintf(err, errlen,
			 "writing %s failed (%s): recording stopped; the file reads up to "
			 "its last complete frame", out, prec_strerror(e));
}

int rec_record_run(const struct rec_record_opts *o,
		   struct rec_record_result *res, char *err, size_t errlen)
{
	struct rec r;
	struct rec_session_cfg cfg;
	const char *reason = "error";
	int ret;

	memset(&r, 0, sizeof(r));
	memset(res, 0, sizeof(*res));
	res->workload_exit = -1;
	r.o = o;
	r.res = res;
	r.ep = -1;
	r.evlist = o->evlist;
	err[0] = '\0';

	/* -- targets */
	if (o->target == REC_TARGET_CPUS) {
		r.cpus.cpu = malloc((o->ncpus ? o->ncpus : 1) * sizeof(int));
		if (!r.cpus.cpu)
			return -ENOMEM;
		memcpy(r.cpus.cpu, o->cpus, o->ncpus * sizeof(int));
		r.cpus.n = o->ncpus;
	} else {
		ret = rec_cpumap_online(&r.cpus);
		if (ret < 0) {
			snprintf(err, errlen, "cannot list the online CPUs: %s", strerror(-ret));
			goto out;
		}
	}
	if (o->target == REC_TARGET_PIDS || o->target == REC_TARGET_TIDS) {
		ret = resolve_tasks(&r, err, errlen);
		if (ret < 0)
			goto out;
	}
	if (!r.evlist || !r.evlist->n) {
		/* Counting only: a dummy event still carries comm/fork/mmap. */
		char perr[128];

		ret = rec_evlist_parse(&r.dummy, "dummy", perr, sizeof(perr));
		if (ret < 0) {
			snprintf(err, errlen, "%s", perr);
			goto out;
		}
		r.evlist = &r.dummy;
	}
	if (o->argv && o->argv[0]) {
		/* A command: the target itself, or (with -a/-C) what decides
		 * how long the system-wide recording lasts. */
		ret = rec_workload_prepare(&r.wl, o->argv);
		if (ret < 0) {
			snprintf(err, errlen, "cannot start '%s': %s", o->argv[0], strerror(-ret));
			goto out;
		}
		r.have_wl = true;
		res->have_workload = true;
	}

	/* -- events */
	memset(&cfg, 0, sizeof(cfg));
	cfg.freq = o->freq;
	cfg.period = o->period;
	cfg.callchain = o->callchain;
	cfg.switch_events = o->switch_events;
	cfg.inherit = o->target == REC_TARGET_PIDS || o->target == REC_TARGET_COMMAND;
	cfg.enable_on_exec = o->target == REC_TARGET_COMMAND;
	cfg.mmap_pages = o->mmap_pages;
	ret = rec_session_init(&r.s, r.evlist, &cfg);
	if (ret < 0) {
		snprintf(err, errlen, "bad session settings (-m must be a power of two): %s",
			 strerror(-ret));
		goto out;
	}
	r.session_ok = true;
	if (o->target == REC_TARGET_COMMAND)
		ret = rec_session_open(&r.s, r.cpus.cpu, r.cpus.n, &r.wl.pid, 1, err, errlen);
	else
		ret = rec_session_open(&r.s, r.cpus.cpu, r.cpus.n, r.tids, r.ntids, err, errlen);
	if (ret < 0)
		goto out;
	if (r.s.note[0])
		logf_(&r, REC_LOG_WARN, "%s", r.s.note);
	ret = open_counters(&r, err, errlen);
	if (ret < 0)
		goto out;
	r.ring_reported = calloc(r.s.nrings + 1, sizeof(bool));
	if (!r.ring_reported) {
		ret = -ENOMEM;
		goto out;
	}

	/* -- output and description */
	ret = open_output(&r, err, errlen);
	if (ret < 0)
		goto out;
	ret = rec_emit_init(&r.e, r.w, &r.s.dctx, rec_cpumap_max(&r.cpus));
	if (ret < 0)
		goto out;
	r.emit_ok = true;
	r.start_ns = rec_now_ns();
	ret = write_header(&r);
	if (!ret)
		ret = rec_session_describe(&r.s, r.w);
	if (!ret && r.ctr)
		ret = rec_counters_describe(r.ctr, r.w, (uint32_t)r.s.nsel,
					    (uint32_t)r.evlist->ngroups);
	if (!ret && r.s.note[0])
		ret = write_note(&r, PERFREC__NOTE__LEVEL__WARNING, r.s.note);
	if (!ret && rec_read_int_file("/proc/sys/kernel/kptr_restrict", 0) > 0 && geteuid())
		ret = write_note(&r, PERFREC__NOTE__LEVEL__WARNING,
				 "kernel addresses hidden by kptr_restrict");
	if (ret < 0) {
		explain_write_error(&r, ret, err, errlen);
		goto out;
	}
	ret = setup_epoll(&r);
	if (ret < 0) {
		snprintf(err, errlen, "epoll setup failed: %s", strerror(-ret));
		goto out;
	}

	/* -- start: a command target is enabled by its exec */
	if (o->target != REC_TARGET_COMMAND) {
		ret = rec_session_enable(&r.s);
		if (!ret && r.ctr)
			ret = rec_counters_enable(r.ctr);
		if (ret < 0) {
			snprintf(err, errlen, "cannot enable the events: %s", strerror(-ret));
			goto out;
		}
		{
			struct rec_synth_stats sst;
			const int *sp = NULL;
			size_t sn = 0;

			if (o->target == REC_TARGET_PIDS || o->target == REC_TARGET_TIDS) {
				sp = o->pids;
				sn = o->npids;
			}
			ret = rec_synth_tasks(r.w, 0, "/proc", sp, sn, rec_now_ns(), &sst);
			if (ret < 0) {
				explain_write_error(&r, ret, err, errlen);
				goto out;
			}
		}
	}
	if (r.have_wl) {
		ret = rec_workload_start(&r.wl);
		r.wl_started = true;
		if (ret < 0) {
			snprintf(err, errlen, "cannot run '%s': %s", o->argv[0], strerror(-ret));
			goto out;
		}
	}

	/* -- record */
	reason = loop(&r);

	/* -- stop: nothing new after disable, then take what is left */
	rec_session_disable(&r.s);
	if (r.have_wl && !r.wl.exited) {
		/* stopped by a signal or -d while the command runs */
		kill(r.wl.pid, SIGTERM);
		rec_workload_wait(&r.wl);
	}
	ret = r.write_err;
	if (!ret)
		ret = drain_all(&r);
	if (!ret && r.ctr)
		ret = rec_counters_snapshot(r.ctr, r.w, rec_now_ns(), true);
	if (!ret)
		ret = write_session_end(&r, rec_now_ns(), reason);
	if (!ret)
		ret = prec_writer_close(r.w);
	if (ret < 0) {
		explain_write_error(&r, ret, err, errlen);
		/* a failed writer cannot close; the frames written stay valid */
		if (r.own_sink)
			prec_sink_sync(r.sink);
	}
	snprintf(res->stop_reason, sizeof(res->stop_reason), "%s", reason);
out:
	if (r.emit_ok)
		res->st = r.e.st;
	if (r.w) {
		struct prec_writer_stats ws;

		prec_writer_stats(r.w, &ws);
		res->bytes_written = ws.bytes_written;
		res->bytes_raw = ws.bytes_raw;
	}
	if (r.start_ns)
		res->duration_ns = rec_now_ns() - r.start_ns;
	if (r.have_wl) {
		if (!r.wl_started)
			rec_workload_cancel(&r.wl);
		else
			rec_workload_wait(&r.wl);
		res->workload_exit = rec_workload_exit_code(&r.wl);
		rec_workload_release(&r.wl);
	}
	if (r.ep >= 0)
		close(r.ep);
	if (r.emit_ok)
		rec_emit_release(&r.e);
	prec_writer_free(r.w);
	if (r.own_sink)
		prec_sink_free(r.sink);
	rec_counters_free(r.ctr);
	if (r.session_ok)
		rec_session_release(&r.s);
	free(r.ring_reported);
	rec_evlist_release(&r.dummy);
	free(r.tids);
	rec_cpumap_release(&r.cpus);
	return ret;
}

const char *rec_record_summary(const struct rec_record_result *res, char *buf,
			       size_t len)
{
	uint64_t total = res->st.records + res->st.lost;

	snprintf(buf, len, "%llu samples, %llu switch events, %llu lost (%.1f%%)",
		 (unsigned long long)res->st.samples,
		 (unsigned long long)res->st.switches,
		 (unsigned long long)res->st.lost,
		 total ? 100.0 * (double)res->st.lost / (double)total : 0.0);
	return buf;
}
