/*
 * evlist.c - the opened event set: attrs, fds, rings, ids; see evlist.h.
 */
#include "recorder/events/evlist.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "recorder/events/groupopen.h"
#include "recorder/events/groupread.h"
#include "recorder/log.h"

#define PERF_IOC_SET_OUTPUT PERF_EVENT_IOC_SET_OUTPUT

static bool is_leader(const struct rec_event *ev)
{
	return ev->group < 0 || ev->member == 0;
}

static bool leader_sampled_group(const struct rec_evspecs *l,
				 const struct rec_event *ev)
{
	return ev->group >= 0 && (size_t)ev->group < l->ngroups &&
	       l->groups[ev->group].leader_sample;
}

bool rec_evlist_is_bpf_output(const struct rec_evlist *s, const struct rec_evsel *e)
{
	return s->cfg.off_cpu && e->ev == &s->bpf_ev;
}

bool rec_evlist_filterable(const struct rec_evlist *s, const struct rec_evsel *e)
{
	const struct rec_event *ev = e->ev;

	return !rec_evlist_is_bpf_output(s, e) && !ev->tracepoint &&
	       (e->attr.freq || e->attr.sample_period) &&
	       !(ev->pmu && (!strcmp(ev->pmu, "kprobe") || !strcmp(ev->pmu, "uprobe")));
}

/* The bpf-output event: the off-CPU program's records, every one (period
 * 1), with the raw data and the sample_id every event shares. Enabled from
 * the start: it is per CPU, not per task, so enable_on_exec cannot start
 * it, and the program only writes what the recording asked for. */
static void build_bpf_attr(struct rec_evlist *s, struct rec_evsel *e)
{
	struct perf_event_attr *a = &e->attr;
	uint64_t ring_bytes = (uint64_t)s->cfg.mmap_pages * s->page_size;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_BPF_OUTPUT;
	a->sample_period = 1;
	a->sample_type = REC_SID_TYPE | PERF_SAMPLE_RAW;
	a->read_format = PERF_FORMAT_ID;
	if (s->have_lost)
		a->read_format |= PERF_FORMAT_LOST;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(ring_bytes / 4 ? ring_bytes / 4 : 1);
	e->fmt.sample_type = a->sample_type;
	e->fmt.read_format = a->read_format;
	e->fmt.bpf_output = true;
}

static void build_attr(struct rec_evlist *s, size_t i)
{
	const struct rec_event *ev = &s->evspecs->ev[i];
	struct perf_event_attr *a = &s->sel[i].attr;
	const struct rec_evlist_cfg *cfg = &s->cfg;
	bool ls = leader_sampled_group(s->evspecs, ev);
	uint64_t ring_bytes = (uint64_t)cfg->mmap_pages * s->page_size;

	*a = ev->attr;
	a->size = sizeof(*a);
	a->sample_type = REC_SID_TYPE | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD;
	if (cfg->callchain || cfg->stack_user) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->sample_max_stack = cfg->max_stack;
	}
	if (cfg->stack_user) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = cfg->regs_user;
		a->sample_stack_user = cfg->stack_user;
		a->exclude_callchain_user = 1;
	}
	if (ev->tracepoint)
		a->sample_type |= PERF_SAMPLE_RAW;
	a->read_format = PERF_FORMAT_ID;
	if (s->have_lost)
		a->read_format |= PERF_FORMAT_LOST;
	if (ls) {
		a->sample_type |= PERF_SAMPLE_READ;
		a->read_format |= PERF_FORMAT_GROUP | PERF_FORMAT_ID |
				  PERF_FORMAT_TOTAL_TIME_ENABLED |
				  PERF_FORMAT_TOTAL_TIME_RUNNING;
	}
	if (ls && ev->member > 0) {
		/* Members of a {..}:S group only count; the leader's samples
		 * carry their values. */
		a->freq = 0;
		a->sample_period = 0;
	} else if (ev->tracepoint || a->type == PERF_TYPE_BREAKPOINT) {
		/* every hit of a tracepoint or breakpoint, unless -c says
		 * otherwise: a frequency means nothing for them */
		a->freq = 0;
		a->sample_period = cfg->period ? cfg->period : 1;
	} else if (ev->attr.sample_period) {
		/* a PMU term period=N wins */
		a->freq = 0;
	} else if (cfg->period) {
		a->freq = 0;
		a->sample_period = cfg->period;
	} else {
		a->freq = 1;
		a->sample_freq = cfg->freq;
	}
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	/* Group members follow their leader: only leaders start disabled. */
	a->disabled = is_leader(ev);
	a->enable_on_exec = cfg->enable_on_exec && is_leader(ev);
	a->inherit = cfg->inherit;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(ring_bytes / 4 ? ring_bytes / 4 : 1);
	if (i == 0) {
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		a->context_switch = cfg->switch_events;
	}
	s->sel[i].fmt.sample_type = a->sample_type;
	s->sel[i].fmt.read_format = a->read_format;
	s->sel[i].fmt.regs_user = a->sample_regs_user;
}

static const struct rec_sample_fmt *lookup_fmt(void *arg, uint64_t id)
{
	const struct rec_evlist *s = arg;
	int i = rec_evlist_find_id(s, id);

	return i < 0 ? NULL : &s->sel[i].fmt;
}

int rec_evlist_init(struct rec_evlist *s, const struct rec_evspecs *l,
		     const struct rec_evlist_cfg *cfg)
{
	memset(s, 0, sizeof(*s));
	s->evspecs = l;
	s->cfg = *cfg;
	s->page_size = (size_t)sysconf(_SC_PAGESIZE);
	if (!s->cfg.mmap_pages || (s->cfg.mmap_pages & (s->cfg.mmap_pages - 1)))
		return -EINVAL;
	if (!l->n)
		return -EINVAL;
	s->sel = calloc(l->n + 1, sizeof(*s->sel));
	if (!s->sel)
		return -ENOMEM;
	/* per-event lost counts (Linux >= 6.0), read at the end */
	s->have_lost = rec_groupopen_have_lost();
	s->nsel = l->n;
	for (size_t i = 0; i < l->n; i++) {
		s->sel[i].ev = &l->ev[i];
		build_attr(s, i);
	}
	if (s->cfg.off_cpu) {
		s->bpf_ev.name = "bpf-output";
		s->bpf_ev.group = -1;
		s->sel[s->nsel].ev = &s->bpf_ev;
		build_bpf_attr(s, &s->sel[s->nsel]);
		s->nsel++;
	}
	s->dctx.sid_type = REC_SID_TYPE;
	s->dctx.lookup = lookup_fmt;
	s->dctx.arg = s;
	return 0;
}

static int add_fd(struct rec_evsel *e, int fd, int cpu, int pid, uint64_t id)
{
	struct rec_evsel_fd *n = realloc(e->fds, (e->nfds + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	e->fds = n;
	e->fds[e->nfds++] = (struct rec_evsel_fd){ fd, cpu, pid, id };
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = ((const struct rec_id_map *)a)->id;
	uint64_t y = ((const struct rec_id_map *)b)->id;

	return (x > y) - (x < y);
}

static int build_id_map(struct rec_evlist *s)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < s->nsel; i++)
		n += s->sel[i].nfds;
	s->ids = calloc(n ? n : 1, sizeof(*s->ids));
	if (!s->ids)
		return -ENOMEM;
	for (size_t i = 0; i < s->nsel; i++)
		for (size_t j = 0; j < s->sel[i].nfds; j++)
			s->ids[k++] = (struct rec_id_map){ s->sel[i].fds[j].id, (uint32_t)i };
	qsort(s->ids, k, sizeof(*s->ids), cmp_id);
	s->nids = k;
	return 0;
}

int rec_evlist_find_id(const struct rec_evlist *s, uint64_t id)
{
	size_t lo = 0, hi = s->nids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ids[mid].id == id)
			return (int)s->ids[mid].sel;
		if (s->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int map_ring(struct rec_evlist *s, size_t ri, int fd, int cpu,
		    char *err, size_t errlen)
{
	int ret = rec_ring_mmap(&s->rings[ri], fd, cpu, s->cfg.mmap_pages,
				s->page_size);

	if (ret == -EPERM || ret == -ENOMEM) {
		int kb = 0;
		FILE *f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "re");

		if (f) {
			if (fscanf(f, "%d", &kb) != 1)
				kb = 0;
			fclose(f);
		}
		snprintf(err, errlen,
			 "cannot map the %zu KiB ring buffer of cpu %d (%s): it exceeds the "
			 "locked-memory limit (perf_event_mlock_kb is %d KiB per CPU, plus "
			 "ulimit -l); use a smaller -m PAGES or raise "
			 "/proc/sys/kernel/perf_event_mlock_kb",
			 (s->cfg.mmap_pages + 1) * s->page_size / 1024, cpu,
			 strerror(-ret), kb);
	} else if (ret < 0) {
		snprintf(err, errlen, "cannot map the ring buffer of cpu %d: %s",
			 cpu, strerror(-ret));
	}
	if (ret == 0)
		s->ring_cpu[ri] = cpu;
	return ret;
}

/* The bpf-output event of CPU ci (every task), into the CPU's ring. */
static int open_bpf_output(struct rec_evlist *s, size_t ci, int cpu, int *ring_fd,
			   char *err, size_t errlen)
{
	struct rec_evsel *e = &s->sel[s->nsel - 1];
	uint64_t id = 0;
	int fd = rec_groupopen_event(&e->attr, -1, cpu, -1), ret;

	if (fd < 0) {
		rec_groupopen_explain(&e->attr, "bpf-output (--off-cpu)", -1, cpu, fd,
				      err, errlen);
		return fd;
	}
	ret = add_fd(e, fd, cpu, -1, 0);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	ret = rec_groupopen_id(fd, &id);
	if (ret < 0) {
		snprintf(err, errlen, "bpf-output: PERF_EVENT_IOC_ID failed: %s",
			 strerror(-ret));
		return ret;
	}
	e->fds[e->nfds - 1].id = id;
	if (*ring_fd < 0) {
		ret = map_ring(s, ci, fd, cpu, err, errlen);
		if (ret < 0)
			return ret;
		*ring_fd = fd;
		s->nrings = ci + 1;
	} else if (ioctl(fd, PERF_IOC_SET_OUTPUT, *ring_fd) < 0) {
		ret = -errno;
		snprintf(err, errlen, "bpf-output on cpu %d: cannot redirect into the "
			 "CPU's ring (PERF_EVENT_IOC_SET_OUTPUT): %s", cpu, strerror(-ret));
		return ret;
	}
	return 0;
}

static int evlist_open(struct rec_evlist *s, const int *cpus, size_t ncpus,
		       const int *pids, size_t npids, char *err, size_t errlen)
{
	static const int any = -1;
	size_t ngroups = s->evspecs->ngroups;
	int *leader = calloc(ngroups ? ngroups : 1, sizeof(*leader));
	int ret = 0;

	if (!leader)
		return -ENOMEM;
	if (!npids) {
		pids = &any;
		npids = 1;
	}
	s->rings = calloc(ncpus, sizeof(*s->rings));
	s->ring_cpu = calloc(ncpus, sizeof(*s->ring_cpu));
	if (!s->rings || !s->ring_cpu) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t ci = 0; ci < ncpus; ci++)
		s->rings[ci].fd = -1;
	for (size_t ci = 0; ci < ncpus; ci++) {
		int cpu = cpus[ci], ring_fd = -1;
		size_t alive = 0;

		for (size_t pi = 0; pi < npids; pi++) {
			bool gone = false;

			for (size_t g = 0; g < ngroups; g++)
				leader[g] = -1;
			for (size_t i = 0; i < s->nsel && !gone; i++) {
				struct rec_evsel *e = &s->sel[i];
				const struct rec_event *ev = e->ev;
				int gfd = ev->group >= 0 && ev->member > 0 ? leader[ev->group] : -1;
				uint64_t id = 0;
				int fd;

				if (rec_evlist_is_bpf_output(s, e))
					continue;   /* once per CPU, below */

				fd = rec_groupopen_event(&e->attr, pids[pi], cpu, gfd);
				if (fd == -EINVAL && e->attr.inherit &&
				    (e->attr.read_format & PERF_FORMAT_GROUP)) {
					/* Older kernels refuse inherit with group reads:
					 * the group then covers existing threads only. */
					e->attr.inherit = 0;
					snprintf(s->note, sizeof(s->note),
						 "%s: this kernel refuses group reads of inherited "
						 "events; new threads are not followed", ev->name);
					fd = rec_groupopen_event(&e->attr, pids[pi], cpu, gfd);
				}
				if ((fd == -EACCES || fd == -EPERM) && !e->attr.exclude_kernel &&
				    !ev->tracepoint && pids[pi] >= 0) {
					/* perf_event_paranoid 2 still allows user-space
					 * samples of one's own tasks, as perf falls back. */
					e->attr.exclude_kernel = 1;
					e->attr.exclude_hv = 1;
					snprintf(s->note, sizeof(s->note),
						 "%s: kernel samples excluded: perf_event_paranoid "
						 "forbids them (run as root or lower it to 1)",
						 ev->name);
					fd = rec_groupopen_event(&e->attr, pids[pi], cpu, gfd);
				}
				if (fd == -ESRCH && pids[pi] >= 0) {
					/* the task exited since we listed it */
					gone = true;
					break;
				}
				if (fd == -EINVAL && ev->group < 0) {
					snprintf(err, errlen,
						 "%s (cpu %d): the kernel refused to sample it (EINVAL): "
						 "its PMU may not support sampling (count it with "
						 "--counters or 'perfrec stat' instead), or a setting is "
						 "out of range (-F above "
						 "/proc/sys/kernel/perf_event_max_sample_rate, :p "
						 "precision)", ev->name, cpu);
					ret = fd;
					goto out;
				}
				if (fd < 0) {
					rec_groupopen_explain(&e->attr, ev->name, pids[pi], cpu,
							      fd, err, errlen);
					ret = fd;
					goto out;
				}
				ret = add_fd(e, fd, cpu, pids[pi], 0);
				if (ret < 0) {
					close(fd);
					goto out;
				}
				ret = rec_groupopen_id(fd, &id);
				if (ret < 0) {
					snprintf(err, errlen, "%s: PERF_EVENT_IOC_ID failed: %s",
						 ev->name, strerror(-ret));
					goto out;
				}
				e->fds[e->nfds - 1].id = id;
				if (ev->group >= 0 && ev->member == 0)
					leader[ev->group] = fd;
				if (ring_fd < 0) {
					ret = map_ring(s, ci, fd, cpu, err, errlen);
					if (ret < 0)
						goto out;
					ring_fd = fd;
					s->nrings = ci + 1;
				} else if (ioctl(fd, PERF_IOC_SET_OUTPUT, ring_fd) < 0) {
					ret = -errno;
					snprintf(err, errlen,
						 "%s on cpu %d: cannot redirect into the CPU's ring "
						 "(PERF_EVENT_IOC_SET_OUTPUT): %s",
						 ev->name, cpu, strerror(-ret));
					goto out;
				}
			}
			if (!gone)
				alive++;
		}
		if (!alive) {
			snprintf(err, errlen, "no target task exists any more");
			ret = -ESRCH;
			goto out;
		}
		if (s->cfg.off_cpu) {
			ret = open_bpf_output(s, ci, cpu, &ring_fd, err, errlen);
			if (ret < 0)
				goto out;
		}
	}
	s->nrings = ncpus;
	ret = build_id_map(s);
out:
	free(leader);
	return ret;
}

int rec_evlist_open(struct rec_evlist *s, const int *cpus, size_t ncpus,
		    const int *pids, size_t npids)
{
	char err[REC_LOG_MAX] = "";
	int ret = evlist_open(s, cpus, ncpus, pids, npids, err, sizeof(err));

	if (ret < 0 && !err[0])
		snprintf(err, sizeof(err), "cannot open the events: %s",
			 strerror(-ret));
	return rec_log_fail(ret, err);
}

static int ioctl_leaders(struct rec_evlist *s, unsigned long req)
{
	int ret = 0;

	for (size_t i = 0; i < s->nsel; i++) {
		if (!is_leader(s->sel[i].ev) || rec_evlist_is_bpf_output(s, &s->sel[i]))
			continue;   /* bpf-output: enabled at open */
		for (size_t j = 0; j < s->sel[i].nfds; j++)
			if (ioctl(s->sel[i].fds[j].fd, req, 0) < 0 && !ret)
				ret = -errno;
	}
	return ret;
}

int rec_evlist_enable(struct rec_evlist *s)
{
	return ioctl_leaders(s, PERF_EVENT_IOC_ENABLE);
}

int rec_evlist_disable(struct rec_evlist *s)
{
	return ioctl_leaders(s, PERF_EVENT_IOC_DISABLE);
}

static int describe_event(struct rec_evlist *s, struct prec_writer *w,
			  size_t i)
{
	struct rec_evsel *e = &s->sel[i];
	const struct perf_event_attr *a = &e->attr;
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__EventDesc d = PERFREC__EVENT_DESC__INIT;
	uint64_t *ids = calloc(e->nfds + 1, sizeof(*ids));
	int32_t *cpus = calloc(e->nfds + 1, sizeof(*cpus));
	int32_t *pids = calloc(e->nfds + 1, sizeof(*pids));
	int ret = -ENOMEM;

	if (!ids || !cpus || !pids)
		goto out;
	d.index = (uint32_t)i;
	d.name = e->ev->name;
	d.type = a->type;
	d.config = a->config;
	d.config1 = a->config1;
	d.config2 = a->config2;
	d.freq = a->freq;
	if (a->freq)
		d.sample_freq = a->sample_freq;
	else
		d.sample_period = a->sample_period;
	d.sample_type = a->sample_type;
	d.read_format = a->read_format;
	memcpy(&d.attr_flags, (const char *)a + offsetof(struct perf_event_attr, read_format) +
	       sizeof(a->read_format), sizeof(d.attr_flags));
	d.bp_type = a->bp_type;
	if (a->type == PERF_TYPE_BREAKPOINT) {
		d.bp_addr = a->bp_addr;
		d.bp_len = a->bp_len;
	}
	d.wakeup_events = a->wakeup_events;
	d.clockid = a->clockid;
	d.sampling = (a->freq || a->sample_period) && !rec_evlist_is_bpf_output(s, e);
	if (rec_evlist_is_bpf_output(s, e)) {
		d.bpf_output = 1;
		d.off_cpu_threshold = s->cfg.off_cpu_threshold;
	}
	if (s->cfg.filter && rec_evlist_filterable(s, e))
		d.filter = (char *)s->cfg.filter;
	d.group = e->ev->group;
	d.member = e->ev->member > 0 ? (uint32_t)e->ev->member : 0;
	for (size_t j = 0; j < e->nfds; j++) {
		ids[j] = e->fds[j].id;
		cpus[j] = e->fds[j].cpu;
		pids[j] = e->fds[j].pid;
	}
	d.n_ids = d.n_cpus = d.n_pids = e->nfds;
	d.ids = ids;
	d.cpus = cpus;
	d.pids = pids;
	if (e->ev->tp_format)
		d.tracepoint_format = e->ev->tp_format;
	d.tracepoint_id = e->ev->tp_id;
	if (e->ev->pmu)
		d.pmu = e->ev->pmu;
	p.data_case = PERFREC__PACKET__DATA_EVENT;
	p.event = &d;
	ret = prec_writer_append(w, 0, &p, 0);
out:
	free(ids);
	free(cpus);
	free(pids);
	return ret;
}

int rec_evlist_describe(struct rec_evlist *s, struct prec_writer *w)
{
	int ret = 0;

	for (size_t i = 0; i < s->nsel && !ret; i++)
		ret = describe_event(s, w, i);
	for (size_t g = 0; g < s->evspecs->ngroups && !ret; g++) {
		const struct rec_group *gr = &s->evspecs->groups[g];
		Perfrec__Packet p = PERFREC__PACKET__INIT;
		Perfrec__GroupDesc d = PERFREC__GROUP_DESC__INIT;
		uint32_t *ev = calloc(gr->n ? gr->n : 1, sizeof(*ev));

		if (!ev)
			return -ENOMEM;
		for (size_t k = 0; k < gr->n; k++)
			ev[k] = (uint32_t)(gr->first + k);
		d.index = (uint32_t)g;
		d.name = gr->name;
		d.n_events = gr->n;
		d.events = ev;
		d.leader_sampling = gr->leader_sample;
		p.data_case = PERFREC__PACKET__DATA_GROUP_DESC;
		p.group_desc = &d;
		ret = prec_writer_append(w, 0, &p, 0);
		free(ev);
	}
	return ret;
}

int rec_evlist_write_lost(struct rec_evlist *s, struct prec_writer *w,
			   uint64_t now_ns, uint64_t *total)
{
	unsigned char buf[8 * (3 + 3 * REC_GROUP_MAX)];
	int ret = 0;

	if (!s->have_lost)
		return 0;
	for (size_t i = 0; i < s->nsel && !ret; i++) {
		struct rec_evsel *e = &s->sel[i];

		for (size_t j = 0; j < e->nfds && !ret; j++) {
			Perfrec__Packet p = PERFREC__PACKET__INIT;
			Perfrec__Loss l = PERFREC__LOSS__INIT;
			struct rec_group_read gr;
			ssize_t n = read(e->fds[j].fd, buf, sizeof(buf));
			int k;

			if (n <= 0 || rec_group_read_parse(buf, (size_t)n, e->attr.read_format, &gr) < 0)
				continue;
			k = gr.has_id ? rec_group_read_find(&gr, e->fds[j].id) : 0;
			if (k < 0 || !gr.has_lost || gr.lost[k] <= e->fds[j].lost_written)
				continue;
			l.kind = PERFREC__LOSS__KIND__EVENT_LOST;
			l.id = e->fds[j].id;
			l.cpu = e->fds[j].cpu < 0 ? 0 : (uint32_t)e->fds[j].cpu;
			l.count = gr.lost[k] - e->fds[j].lost_written;
			e->fds[j].lost_written = gr.lost[k];
			*total += l.count;
			p.data_case = PERFREC__PACKET__DATA_LOSS;
			p.loss = &l;
			ret = prec_writer_append(w, 0, &p, now_ns);
		}
	}
	return ret;
}

void rec_evlist_release(struct rec_evlist *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nrings && s->rings; i++)
		rec_ring_release(&s->rings[i]);
	for (size_t i = 0; i < s->nsel; i++) {
		for (size_t j = 0; j < s->sel[i].nfds; j++)
			close(s->sel[i].fds[j].fd);
		free(s->sel[i].fds);
	}
	free(s->sel);
	free(s->rings);
	free(s->ring_cpu);
	free(s->ids);
	memset(s, 0, sizeof(*s));
}
