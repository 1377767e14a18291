/*
 * record.c - the recording session driver; see record.h for the steps.
 */
#include "recorder/recording/recording.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "format/error.h"
#include "format/writer.h"
#include "recorder/events/counters.h"
#include "recorder/events/cpumap.h"
#include "recorder/encode/hostinfo.h"
#include "recorder/events/evset.h"
#include "recorder/ring/spool.h"
#include "recorder/recording/status.h"
#include "recorder/symbols/symcollect.h"   /* symbols (issue 6) */
#include "recorder/encode/synth.h"
#include "recorder/recording/workload.h"

#ifndef PERFREC_VERSION
#define PERFREC_VERSION "0"
#endif

#define LOOP_TIMEOUT_MS 100
#define STATUS_NS 1000000000ull
/* symbols (issue 6): tables of newly hit objects every 30 s, so long or
 * streamed recordings (and killed ones) carry them before the end */
#define SYMBOLS_NS (30ull * 1000000000ull)
/* Spool per CPU: deep enough to ride out seconds of an encoder that falls
 * behind (it starts at half a ring and doubles when full, see
 * setup_drain), bounded for many-CPU hosts. */
#define SPOOL_DEFAULT (32u << 20)       /* per CPU */
#define SPOOL_TOTAL_MAX (1ull << 30)    /* all CPUs together */
#define TURN_RECORDS 65536              /* per ring per consumer turn */
/* Ring size when -m is not given. Losses come from a ring filling while
 * the recorder is descheduled: at -F 10000 -g with switch events a CPU
 * writes ~16 MB/s, so perf's 512 KiB lasts ~30 ms and 4 MiB ~250 ms. Rings
 * are locked memory: above perf_event_mlock_kb only CAP_IPC_LOCK may map
 * them, so without it we stay at perf's size. */
#define RING_PAGES_SMALL 128            /* 512 KiB, perf's default */
#define RING_BYTES_BIG (4u << 20)       /* per CPU, with CAP_IPC_LOCK */
#define RING_TOTAL_MAX (256ull << 20)   /* all CPUs together */

/* The drain thread: moves records from the kernel rings into the spools
 * (memcpy only) and wakes the encoding thread through an eventfd. See
 * spool.h for why. Flags are accessed with __atomic builtins. */
struct drain {
	pthread_t th;
	bool started;
	int ep;            /* epoll over the ring fds */
	int efd;           /* eventfd: data moved / thread done */
	int stop;          /* 1: final move, then exit; 2: exit now */
	int done;
	int *ring_err;     /* [nrings]: the ring stopped on corruption */
	uint64_t wakeups;
};

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
	struct rec_symcollect *syms;   /* symbols (issue 6): what samples hit */
	bool *ring_reported;
	struct rec_spool *spools;   /* [s.nrings] */
	struct drain d;
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

/* CAP_IPC_LOCK in the effective set (/proc/self/status CapEff). */
static bool can_lock_memory(void)
{
	char line[256];
	bool yes = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long caps;

		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			yes = (caps >> 14) & 1;   /* CAP_IPC_LOCK = 14 */
			break;
		}
	}
	fclose(f);
	return yes;
}

/* -m not given: data pages per ring (a power of two). */
static size_t auto_ring_pages(size_t ncpus)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages;

	if (!can_lock_memory() || !page)
		return RING_PAGES_SMALL;
	pages = RING_BYTES_BIG / page;
	while (pages > RING_PAGES_SMALL &&
	       (uint64_t)pages * page * (ncpus ? ncpus : 1) > RING_TOTAL_MAX)
		pages /= 2;
	return pages > RING_PAGES_SMALL ? pages : RING_PAGES_SMALL;
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

static void *drain_main(void *arg)
{
	struct rec *r = arg;
	struct drain *d = &r->d;
	struct epoll_event evs[64];
	bool pending = false;

	for (;;) {
		int stop = __atomic_load_n(&d->stop, __ATOMIC_ACQUIRE);
		bool moved = false;
		int n;

		if (stop == 2)
			break;
		/* A spool that was full is retried soon; otherwise the ring's
		 * wakeup watermark (or the timeout) wakes us. */
		n = epoll_wait(d->ep, evs, 64, stop ? 0 : pending ? 2 : LOOP_TIMEOUT_MS);
		if (n > 0)
			d->wakeups++;
		for (int k = 0; k < n; k++)
			if (evs[k].events & (EPOLLHUP | EPOLLERR))
				epoll_ctl(d->ep, EPOLL_CTL_DEL,
					  r->s.rings[evs[k].data.u32].fd, NULL);
		pending = false;
		for (size_t i = 0; i < r->s.nrings; i++) {
			struct rec_ring *k = &r->s.rings[i];
			long ret;

			if (!k->meta || __atomic_load_n(&d->ring_err[i], __ATOMIC_RELAXED))
				continue;
			ret = rec_spool_fill(&r->spools[i], k);
			if (ret < 0) {
				__atomic_store_n(&d->ring_err[i], 1, __ATOMIC_RELEASE);
				moved = true;
				continue;
			}
			/* Wake the encoder only for a worthwhile batch: it polls
			 * every LOOP_TIMEOUT_MS anyway, and each wakeup costs
			 * two context switches. */
			if (ret > 0) {
				struct perf_event_mmap_page *sm = r->spools[i].reader.meta;
				uint64_t fill = sm->data_head -
					__atomic_load_n(&sm->data_tail, __ATOMIC_ACQUIRE);

				if (fill >= r->spools[i].cap / 16 ||
				    fill >= r->spools[i].size / 2 || stop)
					moved = true;
			}
			/* a spool waiting to grow needs the consumer now */
			if (r->spools[i].growing)
				moved = true;
			if (rec_spool_pending(k))
				pending = true;
		}
		if (moved) {
			uint64_t one = 1;

			if (write(d->efd, &one, sizeof(one)) < 0) {
				/* the counter cannot overflow at our rate */
			}
		}
		if (stop && !pending)
			break;
		if (stop)
			usleep(1000);   /* wait for the consumer to make room */
	}
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	{
		uint64_t one = 1;

		if (write(d->efd, &one, sizeof(one)) < 0) {
			/* nothing to do: the consumer also polls with a timeout */
		}
	}
	return NULL;
}

/* Encodes what the spool of ring i holds (at most TURN_RECORDS). Returns 0
 * or the writer's error. */
static int consume_ring(struct rec *r, size_t i)
{
	struct rec_ring *sp = &r->spools[i].reader;
	int cpu = r->s.ring_cpu[i];
	uint32_t stream = 1 + (uint32_t)cpu;
	const struct perf_event_header *h;
	int ret = 0, n = 0;
	size_t count = 0;

	if (!r->s.rings[i].meta)
		return 0;
	rec_spool_sync(&r->spools[i]);
	rec_ring_read_begin(sp);
	while (count++ < TURN_RECORDS && (n = rec_ring_next(sp, &h)) > 0) {
		ret = rec_emit_record(&r->e, stream, cpu, h);
		if (ret < 0)
			break;
		/* a growth asked for mid-turn is applied at once: the
		 * producer waits for it with records in the kernel ring */
		rec_spool_sync(&r->spools[i]);
	}
	rec_ring_read_done(sp);
	if (!ret && !r->ring_reported[i] &&
	    (n < 0 || __atomic_load_n(&r->d.ring_err[i], __ATOMIC_ACQUIRE))) {
		char why[160];

		r->ring_reported[i] = true;
		snprintf(why, sizeof(why),
			 "ring of cpu %d stopped: corrupt record header (size < 8, larger "
			 "than the ring, or past data_head)", cpu);
		logf_(r, REC_LOG_ERROR, "%s; its later records are lost", why);
		ret = rec_emit_ring_error(&r->e, stream, cpu, rec_now_ns(), why);
	}
	return ret;
}

static int consume_all(struct rec *r, bool *more)
{
	*more = false;
	for (size_t i = 0; i < r->s.nrings; i++) {
		int ret = consume_ring(r, i);

		if (ret < 0)
			return ret;
		if (r->spools[i].reader.head != r->spools[i].reader.pos ||
		    rec_ring_read_begin(&r->spools[i].reader))
			*more = true;
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
	if (r->syms) {   /* symbols (issue 6) */
		struct rec_symcollect_stats ss;

		rec_symcollect_stats(r->syms, &ss);
		se.symbol_bytes = ss.bytes;
		se.symbol_time_ns = ss.time_ns;
	}
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

/* Spools, eventfd, epoll over the rings, then the drain thread. */
static int setup_drain(struct rec *r)
{
	struct drain *d = &r->d;
	uint64_t ring = (uint64_t)r->s.cfg.mmap_pages * r->s.page_size;
	uint64_t spool = r->o->spool_bytes ? r->o->spool_bytes : SPOOL_DEFAULT, start;
	struct epoll_event ev;
	int ret;

	/* a power of two, at least two rings' worth */
	while (spool & (spool - 1))
		spool &= spool - 1;
	if (spool < 2 * ring)
		spool = 2 * ring;
	if (spool < 65536)
		spool = 65536;
	while (!r->o->spool_bytes && spool > 2 * ring &&
	       spool * r->s.nrings > SPOOL_TOTAL_MAX)
		spool /= 2;
	r->spools = calloc(r->s.nrings + 1, sizeof(*r->spools));
	d->ring_err = calloc(r->s.nrings + 1, sizeof(*d->ring_err));
	if (!r->spools || !d->ring_err)
		return -ENOMEM;
	/* The default spool starts at half a ring (two wakeup watermarks) and
	 * doubles only when it fills: a spool that cycles through all its
	 * pages has the kernel zero every one of them at first touch (16% of
	 * the recorder's CPU on the bench with 32 MiB per CPU). */
	start = r->o->spool_bytes ? spool : ring / 2;
	if (start < 65536)
		start = 65536;
	if (start > spool)
		start = spool;
	for (size_t i = 0; i < r->s.nrings; i++) {
		ret = rec_spool_init_grow(&r->spools[i], start, spool);
		if (ret < 0)
			return ret;
	}
	d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->efd < 0)
		return -errno;
	d->ep = epoll_create1(EPOLL_CLOEXEC);
	if (d->ep < 0)
		return -errno;
	for (size_t i = 0; i < r->s.nrings; i++) {
		if (r->s.rings[i].fd < 0)
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.u32 = (uint32_t)i;
		if (epoll_ctl(d->ep, EPOLL_CTL_ADD, r->s.rings[i].fd, &ev) < 0)
			return -errno;
	}
	ret = pthread_create(&d->th, NULL, drain_main, r);
	if (ret)
		return -ret;
	d->started = true;
	return 0;
}

/* Stops the drain thread: final (move everything) or abort. While a final
 * move waits for spool room, keep consuming. Returns the writer's error. */
static int stop_drain(struct rec *r, bool final)
{
	struct drain *d = &r->d;
	int ret = 0;
	bool more;

	if (!d->started)
		return 0;
	__atomic_store_n(&d->stop, final ? 1 : 2, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&d->done, __ATOMIC_ACQUIRE)) {
		struct pollfd pfd = { d->efd, POLLIN, 0 };
		uint64_t v;

		if (final && !ret) {
			ret = consume_all(r, &more);
			if (ret < 0)
				__atomic_store_n(&d->stop, 2, __ATOMIC_RELEASE);
		}
		if (poll(&pfd, 1, 10) > 0 && read(d->efd, &v, sizeof(v)) < 0) {
			/* spurious: poll again */
		}
	}
	pthread_join(d->th, NULL);
	d->started = false;
	/* everything moved is in the spools now */
	if (final && !ret) {
		do {
			ret = consume_all(r, &more);
		} while (!ret && more);
	}
	return ret;
}

static void release_drain(struct rec *r)
{
	if (r->d.started)
		stop_drain(r, false);
	if (r->d.ep > 0)
		close(r->d.ep);
	if (r->d.efd > 0)
		close(r->d.efd);
	for (size_t i = 0; r->spools && i < r->s.nrings; i++)
		rec_spool_release(&r->spools[i]);
	free(r->spools);
	free(r->d.ring_err);
}

/* The main loop. Returns the stop reason (static string) and sets
 * r->write_err on a writer failure. */
static const char *loop(struct rec *r)
{
	const struct rec_record_opts *o = r->o;
	uint64_t ival = r->ctr ? rec_counters_interval_ns(r->ctr) : 0;
	uint64_t next_ctr = r->start_ns + ival, next_status = r->start_ns + STATUS_NS;
	uint64_t prev_t = r->start_ns, prev_rec = 0;
	uint64_t syms_ival = o->symbols_interval_ns ? o->symbols_interval_ns : SYMBOLS_NS;
	uint64_t next_syms = r->start_ns + syms_ival;   /* symbols (issue 6) */
	bool task_target = o->target == REC_TARGET_PIDS || o->target == REC_TARGET_TIDS;
	bool more = false;

	for (;;) {
		struct pollfd pfd[2] = { { r->d.efd, POLLIN, 0 }, { -1, POLLIN, 0 } };
		int timeout = more ? 0 : LOOP_TIMEOUT_MS, ret;
		uint64_t now = rec_now_ns(), v;

		if (r->have_wl && r->wl.pidfd >= 0 && !r->wl.exited)
			pfd[1].fd = r->wl.pidfd;
		if (ival && next_ctr > now && (next_ctr - now) / 1000000 < (uint64_t)timeout)
			timeout = (int)((next_ctr - now) / 1000000) + 1;
		if (poll(pfd, 2, timeout) > 0 && (pfd[0].revents & POLLIN) &&
		    read(r->d.efd, &v, sizeof(v)) < 0) {
			/* EAGAIN: another turn already took it */
		}
		ret = consume_all(r, &more);
		now = rec_now_ns();
		if (!ret)
			ret = prec_writer_flush_due(r->w, now);
		if (!ret && r->syms && now >= next_syms) {   /* symbols (issue 6) */
			int sret = rec_symcollect_write(r->syms, r->w, 0, now);

			if (sret < 0)
				ret = sret;
			next_syms = now + syms_ival;
		}
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
		if (r->have_wl && rec_workload_poll(&r->wl)) {
			/* The workload's threads switch out for the last time
			 * just after its exit is reported: give the kernel a
			 * moment, so the final drain holds those records. */
			struct timespec grace = { 0, 20 * 1000000 };

			nanosleep(&grace, NULL);
			return "workload exited";
		}
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
	if (o->zstd_level)
		wo.zstd_level = o->zstd_level;
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
	r.d.ep = -1;
	r.d.efd = -1;
	r.evlist = o->evlist;
	err[0] = '\0';

	/* -- targets */
	if (o->target == REC_TARGET_CPUS) {
		struct rec_cpumap online = REC_CPUMAP_INIT;

		ret = rec_cpumap_online(&online);
		for (size_t i = 0; !ret && i < o->ncpus; i++) {
			if (rec_cpumap_index(&online, o->cpus[i]) < 0) {
				snprintf(err, errlen, "cpu %d is not online (online CPUs: "
					 "/sys/devices/system/cpu/online, %zu of them)",
					 o->cpus[i], online.n);
				ret = -ENODEV;
			}
		}
		rec_cpumap_release(&online);
		if (ret < 0)
			return ret;
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
	if (!o->period) {
		int max = rec_read_int_file("/proc/sys/kernel/perf_event_max_sample_rate", 0);

		if (max > 0 && o->freq > (uint64_t)max) {
			snprintf(err, errlen, "-F %llu is above this kernel's limit of %d Hz "
				 "(/proc/sys/kernel/perf_event_max_sample_rate): use -F %d or "
				 "lower, or raise the limit", (unsigned long long)o->freq, max, max);
			ret = -EINVAL;
			goto out;
		}
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.freq = o->freq;
	cfg.period = o->period;
	cfg.callchain = o->callchain;
	cfg.switch_events = o->switch_events;
	cfg.inherit = o->target == REC_TARGET_PIDS || o->target == REC_TARGET_COMMAND;
	cfg.enable_on_exec = o->target == REC_TARGET_COMMAND;
	cfg.mmap_pages = o->mmap_pages ? o->mmap_pages : auto_ring_pages(r.cpus.n);
	res->mmap_pages = cfg.mmap_pages;
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
	/* symbols (issue 6): kallsyms now, hit objects' tables at the end */
	r.syms = o->no_symbols ? NULL : rec_symcollect_new(NULL);
	if (o->no_symbols) {
		/* asked for: nothing to say */
	} else if (r.syms) {
		r.e.observe = rec_symcollect_observe;
		r.e.observe_ctx = r.syms;
	} else {
		logf_(&r, REC_LOG_WARN, "no symbols will be recorded: %s",
		      strerror(errno));
	}
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
	ret = setup_drain(&r);
	if (ret < 0) {
		snprintf(err, errlen, "cannot set up the drain thread: %s", strerror(-ret));
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
	/* Cut the metadata frame now: a recorder killed early still leaves a
	 * file that says what it was recording. */
	ret = prec_writer_flush(r.w);
	if (ret < 0) {
		explain_write_error(&r, ret, err, errlen);
		goto out;
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
	{
		int dret = stop_drain(&r, !ret);

		if (!ret)
			ret = dret;
	}
	if (!ret)
		ret = rec_session_write_lost(&r.s, r.w, rec_now_ns(), &res->event_lost);
	if (!ret && r.ctr)
		ret = rec_counters_snapshot(r.ctr, r.w, rec_now_ns(), true);
	if (!ret && r.syms) {   /* symbols (issue 6) */
		int sret = rec_symcollect_write(r.syms, r.w, 0, rec_now_ns());

		if (sret < 0)
			ret = sret;
	}
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
	if (r.d.started)
		stop_drain(&r, false);   /* join before reading its counters */
	res->wakeups = r.d.wakeups;
	for (size_t i = 0; r.spools && i < r.s.nrings; i++)
		res->spool_full += r.spools[i].full;
	release_drain(&r);
	if (r.emit_ok)
		rec_emit_release(&r.e);
	rec_symcollect_free(r.syms);   /* symbols (issue 6) */
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
