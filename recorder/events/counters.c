/*
 * counters.c - counting groups read periodically; see counters.h.
 *
 * Layout: every event of every --counters spec is a member (in the order
 * written); every group is a run [first, first + n) of members. Each member
 * has one fd per target (a cpu, or a pid); fd -1 means "not open there"
 * (unsupported on that target). On each target, the first member of a group
 * that opened is that target's leader, and a group read on it returns all
 * members that opened there, keyed by kernel id.
 */
#include "recorder/events/counters.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "recorder/events/evparse.h"
#include "recorder/log.h"
#include "recorder/events/groupopen.h"
#include "recorder/events/groupread.h"

struct ctr_target {
	int cpu;   /* -1 when counting a task */
	int pid;   /* -1 when counting a cpu */
};

struct ctr_member {
	struct perf_event_attr attr;   /* as opened (last target) */
	char *name;                    /* borrowed from c->evl */
	size_t group;
	uint32_t pos;                  /* position in its group */
	int *fd;                       /* [nt] */
	uint64_t *id;                  /* [nt] */
	size_t nopen;                  /* targets where fd >= 0 */
	char *error;                   /* NULL, or why not open somewhere */
	struct rec_counter_value last; /* summed over targets, last snapshot */
};

struct ctr_group {
	char *name;     /* owned */
	size_t first;   /* index into members */
	size_t n;
};

struct rec_counters {
	struct rec_evspecs evl;
	struct ctr_member *m;
	size_t nm;
	struct ctr_group *g;
	size_t ng;
	struct ctr_target *t;
	size_t nt;
	uint64_t interval_ns;
	uint64_t read_format;
	bool allow_unsupported;
	bool opened;
	uint32_t first_event, first_group;
};

#define BASE_READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_ID | \
			  PERF_FORMAT_TOTAL_TIME_ENABLED | \
			  PERF_FORMAT_TOTAL_TIME_RUNNING)

struct rec_counters *rec_counters_new(void)
{
	struct rec_counters *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->read_format = BASE_READ_FORMAT;
	return c;
}

static void close_all(struct rec_counters *c)
{
	for (size_t i = 0; i < c->nm; i++) {
		struct ctr_member *m = &c->m[i];

		for (size_t t = 0; m->fd && t < c->nt; t++)
			if (m->fd[t] >= 0)
				close(m->fd[t]);
		free(m->fd);
		free(m->id);
		free(m->error);
	}
	free(c->m);
	c->m = NULL;
	c->nm = 0;
	for (size_t g = 0; g < c->ng; g++)
		free(c->g[g].name);
	free(c->g);
	c->g = NULL;
	c->ng = 0;
	free(c->t);
	c->t = NULL;
	c->nt = 0;
	c->opened = false;
}

void rec_counters_free(struct rec_counters *c)
{
	if (!c)
		return;
	close_all(c);
	rec_evspecs_release(&c->evl);
	free(c);
}

static int counters_add(struct rec_counters *c, const char *spec,
			char *err, size_t errlen)
{
	size_t before = c->evl.n;
	int ret;

	if (c->opened) {
		snprintf(err, errlen, "counters: cannot add '%s' after open",
			 spec);
		return -EBUSY;
	}
	ret = rec_evspecs_parse(&c->evl, spec);   /* logs its own error */
	if (ret < 0)
		return ret;
	for (size_t i = before; i < c->evl.n; i++) {
		if (c->evl.ev[i].leader_sample) {
			snprintf(err, errlen, "counters: '%s': leader sampling "
				 "(:S) belongs in -e, --counters groups only "
				 "count", spec);
			return -EINVAL;
		}
		if (c->evl.ev[i].group >= 0 &&
		    c->evl.groups[c->evl.ev[i].group].n > REC_GROUP_MAX) {
			snprintf(err, errlen, "counters: group '%s' has more "
				 "than %d members", spec, REC_GROUP_MAX);
			return -E2BIG;
		}
	}
	return 0;
}

void rec_counters_set_interval(struct rec_counters *c, uint64_t ns)
{
	c->interval_ns = ns;
}

uint64_t rec_counters_interval_ns(const struct rec_counters *c)
{
	return c->interval_ns;
}

void rec_counters_set_allow_unsupported(struct rec_counters *c, bool allow)
{
	c->allow_unsupported = allow;
}

/* Groups from the parsed list: a written group keeps its members, an event
 * outside braces becomes a group of one. Members keep the written order. */
static int build_groups(struct rec_counters *c)
{
	const struct rec_evspecs *l = &c->evl;

	c->m = calloc(l->n ? l->n : 1, sizeof(*c->m));
	c->g = calloc(l->n ? l->n : 1, sizeof(*c->g));
	if (!c->m || !c->g)
		return -ENOMEM;
	for (size_t i = 0; i < l->n;) {
		const struct rec_event *e = &l->ev[i];
		struct ctr_group *g = &c->g[c->ng];
		size_t n = 1;

		if (e->group >= 0 && (size_t)e->group < l->ngroups &&
		    l->groups[e->group].first == i)
			n = l->groups[e->group].n;
		if (n == 0 || i + n > l->n)
			return -EINVAL;   /* parser invariant broken */
		g->first = i;
		g->n = n;
		g->name = strdup(n > 1 || e->group >= 0 ?
				 l->groups[e->group].name : e->name);
		if (!g->name)
			return -ENOMEM;
		for (size_t k = 0; k < n; k++) {
			struct ctr_member *m = &c->m[i + k];

			m->name = l->ev[i + k].name;
			m->group = c->ng;
			m->pos = (uint32_t)k;
			m->attr = l->ev[i + k].attr;
		}
		c->ng++;
		i += n;
	}
	c->nm = l->n;
	return 0;
}

static void set_member_error(struct ctr_member *m, const char *msg)
{
	if (m->error)
		return;   /* keep the first reason */
	m->error = strdup(msg);
}

/* Whether cpu is online: /sys/devices/system/cpu/cpuN/online says "1"
 * (cpu0 often has no such file: it cannot go offline). A cpu that does
 * not exist at all has no directory. */
static bool cpu_online(int cpu)
{
	char path[96];
	FILE *f;
	int c;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
	if (access(path, F_OK) != 0)
		return false;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online",
		 cpu);
	f = fopen(path, "r");
	if (!f)
		return true;
	c = fgetc(f);
	fclose(f);
	return c != '0';
}

/* Opens group g on target t. Returns 0 or a negative errno with err set;
 * unsupported members are skipped and marked. */
static int open_group(struct rec_counters *c, size_t g, size_t t,
		      bool enable_on_exec, char *err, size_t errlen)
{
	struct ctr_group *grp = &c->g[g];
	struct ctr_target *tg = &c->t[t];
	int leader = -1;
	char msg[512];

	for (size_t k = 0; k < grp->n; k++) {
		struct ctr_member *m = &c->m[grp->first + k];
		struct perf_event_attr a = m->attr;
		int fd, ret;

		a.size = sizeof(a);
		/* Counting only: whatever the parser set for sampling goes. */
		a.sample_period = 0;
		a.freq = 0;
		a.sample_type = 0;
		a.watermark = 0;
		a.wakeup_events = 0;
		a.read_format = c->read_format;
		a.use_clockid = 1;
		a.clockid = CLOCK_MONOTONIC;
		a.inherit = tg->pid >= 0;
		/* Only the leader starts disabled: a member counts only while
		 * its leader does, so members open enabled and start with the
		 * leader (at exec too, with enable_on_exec on the leader). */
		a.disabled = leader < 0;
		a.enable_on_exec = leader < 0 && enable_on_exec;

		fd = rec_groupopen_event(&a, tg->pid, tg->cpu, leader);
		if (fd < 0) {
			rec_groupopen_explain(&a, m->name, tg->pid, tg->cpu,
					      fd, msg, sizeof(msg));
			/* An offline cpu gets ENODEV, a cpu past the last
			 * EINVAL: the target's fault, not the event's. */
			if ((fd == -ENODEV || fd == -EINVAL) && tg->cpu >= 0 &&
			    !cpu_online(tg->cpu)) {
				snprintf(err, errlen, "cpu %d is not online: "
					 "check the cpu list (see /sys/devices/"
					 "system/cpu/online)", tg->cpu);
				return fd;
			}
			if (rec_groupopen_unsupported(fd)) {
				set_member_error(m, msg);
				continue;
			}
			if (leader >= 0 && (fd == -EINVAL || fd == -ENOSPC))
				snprintf(err, errlen, "group '%s': %s",
					 grp->name, msg);
			else
				snprintf(err, errlen, "%s", msg);
			return fd;
		}
		m->fd[t] = fd;
		m->attr = a;
		ret = rec_groupopen_id(fd, &m->id[t]);
		if (ret < 0) {
			snprintf(err, errlen, "%s: PERF_EVENT_IOC_ID failed: %s",
				 m->name, strerror(-ret));
			return ret;
		}
		m->nopen++;
		if (leader < 0)
			leader = fd;
	}
	return 0;
}

static int counters_open(struct rec_counters *c, const int *cpus,
			 size_t ncpus, const int *pids, size_t npids,
			 bool enable_on_exec, char *err, size_t errlen)
{
	size_t nt = npids ? npids : ncpus;
	size_t opened = 0;
	int ret;

	if (c->opened) {
		snprintf(err, errlen, "counters: already open");
		return -EBUSY;
	}
	if (c->evl.n == 0) {
		snprintf(err, errlen, "counters: no events to count");
		return -EINVAL;
	}
	if (nt == 0) {
		snprintf(err, errlen, "counters: no cpu or pid to count on");
		return -EINVAL;
	}
	c->read_format = BASE_READ_FORMAT;
	if (rec_groupopen_have_lost())
		c->read_format |= PERF_FORMAT_LOST;

	ret = build_groups(c);
	if (ret < 0) {
		snprintf(err, errlen, "counters: %s", strerror(-ret));
		goto err_close;
	}
	c->t = calloc(nt, sizeof(*c->t));
	if (!c->t) {
		ret = -ENOMEM;
		snprintf(err, errlen, "counters: out of memory");
		goto err_close;
	}
	c->nt = nt;
	for (size_t t = 0; t < nt; t++) {
		c->t[t].cpu = npids ? -1 : cpus[t];
		c->t[t].pid = npids ? pids[t] : -1;
	}
	for (size_t i = 0; i < c->nm; i++) {
		c->m[i].fd = malloc(nt * sizeof(int));
		c->m[i].id = calloc(nt, sizeof(uint64_t));
		/* before the check: close_all() closes every fd[] >= 0 */
		for (size_t t = 0; c->m[i].fd && t < nt; t++)
			c->m[i].fd[t] = -1;
		if (!c->m[i].fd || !c->m[i].id) {
			ret = -ENOMEM;
			snprintf(err, errlen, "counters: out of memory");
			goto err_close;
		}
	}
	for (size_t t = 0; t < nt; t++)
		for (size_t g = 0; g < c->ng; g++) {
			ret = open_group(c, g, t, enable_on_exec, err, errlen);
			if (ret < 0)
				goto err_close;
		}

	/* A group that opened nowhere: only unsupported events. */
	for (size_t g = 0; g < c->ng; g++) {
		size_t n = 0;

		for (size_t k = 0; k < c->g[g].n; k++)
			n += c->m[c->g[g].first + k].nopen;
		opened += n;
		if (n == 0 && !c->allow_unsupported) {
			const struct ctr_member *m = &c->m[c->g[g].first];

			snprintf(err, errlen, "group '%s' has no event this "
				 "host supports: %s", c->g[g].name,
				 m->error ? m->error : "not supported");
			ret = -EOPNOTSUPP;
			goto err_close;
		}
	}
	if (opened == 0) {
		snprintf(err, errlen, "no event could be counted: %s",
			 c->m[0].error ? c->m[0].error : "not supported");
		ret = -EOPNOTSUPP;
		goto err_close;
	}
	c->opened = true;
	return 0;

err_close:
	close_all(c);
	return ret;
}

int rec_counters_add(struct rec_counters *c, const char *spec)
{
	char err[REC_LOG_MAX] = "";

	return rec_log_fail(counters_add(c, spec, err, sizeof(err)), err);
}

int rec_counters_open(struct rec_counters *c, const int *cpus, size_t ncpus,
		      const int *pids, size_t npids, bool enable_on_exec)
{
	char err[REC_LOG_MAX] = "";

	return rec_log_fail(counters_open(c, cpus, ncpus, pids, npids,
					  enable_on_exec, err, sizeof(err)), err);
}

/* The fd a group is read through on target t: its first open member. */
static int group_leader_fd(const struct rec_counters *c, size_t g, size_t t)
{
	for (size_t k = 0; k < c->g[g].n; k++) {
		int fd = c->m[c->g[g].first + k].fd[t];

		if (fd >= 0)
			return fd;
	}
	return -1;
}

/*
 * Start order, per group: DISABLE (group flag) so nothing counts, RESET
 * (group flag) so all start from 0, ENABLE each member alone while the
 * leader is still off (a member whose leader is off does not count), and
 * ENABLE the leader last: the kernel then schedules the whole group in one
 * step, so every member counts over the same window.
 *
 * Why not the textbook DISABLE/RESET/ENABLE all with PERF_IOC_FLAG_GROUP:
 * the group ENABLE enables the leader first and the siblings after it, and
 * a sibling enabled while its leader is already running is not scheduled
 * in (seen on 6.18: page-faults stayed 0 beside a running task-clock
 * leader). Enabling members before the leader avoids that path entirely.
 */
static int start_group(int leader_fd, const int *member_fds, size_t n)
{
	int ret = rec_groupopen_disable(leader_fd);

	if (!ret)
		ret = rec_groupopen_reset(leader_fd);
	for (size_t k = 0; k < n && !ret; k++)
		if (member_fds[k] >= 0 && member_fds[k] != leader_fd)
			ret = ioctl(member_fds[k], PERF_EVENT_IOC_ENABLE, 0) < 0 ?
			      -errno : 0;
	if (!ret)
		ret = ioctl(leader_fd, PERF_EVENT_IOC_ENABLE, 0) < 0 ? -errno : 0;
	return ret;
}

int rec_counters_enable(struct rec_counters *c)
{
	int fds[REC_GROUP_MAX];

	if (!c->opened)
		return -EINVAL;
	for (size_t t = 0; t < c->nt; t++)
		for (size_t g = 0; g < c->ng; g++) {
			int fd = group_leader_fd(c, g, t);
			int ret;

			if (fd < 0)
				continue;
			for (size_t k = 0; k < c->g[g].n && k < REC_GROUP_MAX; k++)
				fds[k] = c->m[c->g[g].first + k].fd[t];
			ret = start_group(fd, fds, c->g[g].n < REC_GROUP_MAX ?
					  c->g[g].n : REC_GROUP_MAX);
			if (ret < 0)
				return ret;
		}
	return 0;
}

int rec_counters_describe(struct rec_counters *c, struct prec_writer *w,
			  uint32_t first_event, uint32_t first_group)
{
	int ret = 0;

	if (!c->opened)
		return -EINVAL;
	c->first_event = first_event;
	c->first_group = first_group;
	if (!w)
		return 0;

	for (size_t i = 0; i < c->nm && ret == 0; i++) {
		const struct ctr_member *m = &c->m[i];
		Perfrec__Packet pkt = PERFREC__PACKET__INIT;
		Perfrec__EventDesc ed = PERFREC__EVENT_DESC__INIT;
		uint64_t *ids = calloc(c->nt, sizeof(*ids));
		int32_t *cpus = calloc(c->nt, sizeof(*cpus));
		int32_t *pids = calloc(c->nt, sizeof(*pids));
		uint64_t *bad = calloc(c->nt, sizeof(*bad));
		size_t n = 0, nbad = 0;

		if (!ids || !cpus || !pids || !bad) {
			ret = -ENOMEM;
			goto next;
		}
		for (size_t t = 0; t < c->nt; t++) {
			if (m->fd[t] >= 0) {
				ids[n] = m->id[t];
				cpus[n] = c->t[t].cpu;
				pids[n] = c->t[t].pid;
				n++;
			} else if (c->t[t].cpu >= 0) {
				bad[nbad++] = (uint64_t)c->t[t].cpu;
			}
		}
		ed.index = first_event + (uint32_t)i;
		ed.name = m->name;
		ed.type = m->attr.type;
		ed.config = m->attr.config;
		ed.config1 = m->attr.config1;
		ed.config2 = m->attr.config2;
		ed.read_format = m->attr.read_format;
		/* The bitfield word follows read_format in the attr. */
		memcpy(&ed.attr_flags, (const char *)&m->attr +
		       offsetof(struct perf_event_attr, read_format) +
		       sizeof(m->attr.read_format), sizeof(ed.attr_flags));
		ed.bp_type = m->attr.bp_type;
		ed.clockid = m->attr.clockid;
		ed.sampling = false;
		ed.group = (int32_t)(first_group + m->group);
		ed.member = m->pos;
		ed.n_ids = n;
		ed.ids = ids;
		ed.n_cpus = n;
		ed.cpus = cpus;
		ed.n_pids = n;
		ed.pids = pids;
		ed.n_unsupported_on_cpus = nbad;
		ed.unsupported_on_cpus = bad;
		ed.error = m->error ? m->error : "";
		pkt.data_case = PERFREC__PACKET__DATA_EVENT;
		pkt.event = &ed;
		ret = prec_writer_append(w, 0, &pkt, 0);
next:
		free(ids);
		free(cpus);
		free(pids);
		free(bad);
	}
	for (size_t g = 0; g < c->ng && ret == 0; g++) {
		Perfrec__Packet pkt = PERFREC__PACKET__INIT;
		Perfrec__GroupDesc gd = PERFREC__GROUP_DESC__INIT;
		uint32_t ev[REC_GROUP_MAX];

		for (size_t k = 0; k < c->g[g].n && k < REC_GROUP_MAX; k++)
			ev[k] = first_event + (uint32_t)(c->g[g].first + k);
		gd.index = first_group + (uint32_t)g;
		gd.name = c->g[g].name;
		gd.n_events = c->g[g].n;
		gd.events = ev;
		gd.counting = true;
		gd.interval_ns = c->interval_ns;
		pkt.data_case = PERFREC__PACKET__DATA_GROUP_DESC;
		pkt.group_desc = &gd;
		ret = prec_writer_append(w, 0, &pkt, 0);
	}
	return ret;
}

/* Reads group g on target t into gr. 0, -errno, or -EPROTO when the read
 * does not have the shape the group was opened with. */
static int read_group(const struct rec_counters *c, size_t g, size_t t,
		      struct rec_group_read *gr)
{
	uint64_t buf[3 + 3 * REC_GROUP_MAX];
	int fd = group_leader_fd(c, g, t);
	size_t nopen = 0;
	ssize_t n;
	long used;

	if (fd < 0)
		return -ENOENT;
	for (size_t k = 0; k < c->g[g].n; k++)
		nopen += c->m[c->g[g].first + k].fd[t] >= 0;
	n = read(fd, buf, rec_group_read_size(c->read_format,
					      (uint32_t)nopen));
	if (n < 0)
		return -errno;
	used = rec_group_read_parse(buf, (size_t)n, c->read_format, gr);
	if (used < 0)
		return (int)used;
	if (gr->nr != nopen)
		return -EPROTO;
	return 0;
}

int rec_counters_snapshot(struct rec_counters *c, struct prec_writer *w,
			  uint64_t now_ns, bool final)
{
	if (!c->opened)
		return -EINVAL;
	for (size_t i = 0; i < c->nm; i++)
		memset(&c->m[i].last, 0, sizeof(c->m[i].last));

	for (size_t g = 0; g < c->ng; g++)
		for (size_t t = 0; t < c->nt; t++) {
			struct rec_group_read gr;
			int ret = read_group(c, g, t, &gr);

			if (ret == -ENOENT)
				continue;   /* nothing of g opened on t */
			if (ret == -ECHILD || ret == -ESRCH)
				continue;   /* the target task is exiting: the
					     * kernel folds its counts into
					     * the final read; no snapshot now */
			if (ret < 0)
				return ret;
			/* Map by id: the kernel lists the leader first,
			 * whichever member the read went through. */
			for (size_t k = 0; k < c->g[g].n; k++) {
				struct ctr_member *m = &c->m[c->g[g].first + k];
				int idx;

				if (m->fd[t] < 0)
					continue;
				idx = rec_group_read_find(&gr, m->id[t]);
				if (idx < 0)
					return -EPROTO;
				m->last.value += gr.values[idx];
				m->last.enabled += gr.time_enabled;
				m->last.running += gr.time_running;
				m->last.lost += gr.lost[idx];
			}
			if (w) {
				Perfrec__Packet pkt = PERFREC__PACKET__INIT;
				Perfrec__GroupSnapshot gs =
					PERFREC__GROUP_SNAPSHOT__INIT;
				Perfrec__GroupRead rd = PERFREC__GROUP_READ__INIT;

				rd.time_enabled = gr.time_enabled;
				rd.time_running = gr.time_running;
				rd.n_ids = gr.nr;
				rd.ids = gr.ids;
				rd.n_values = gr.nr;
				rd.values = gr.values;
				if (gr.has_lost) {
					rd.n_lost = gr.nr;
					rd.lost = gr.lost;
				}
				gs.group = c->first_group + (uint32_t)g;
				gs.cpu = c->t[t].cpu;
				gs.pid = c->t[t].pid;
				gs.read = &rd;
				gs.final = final;
				pkt.data_case = PERFREC__PACKET__DATA_GROUP;
				pkt.group = &gs;
				ret = prec_writer_append(w, 0, &pkt, now_ns);
				if (ret < 0)
					return ret;
			}
		}
	return 0;
}

size_t rec_counters_ngroups(const struct rec_counters *c)
{
	if (c->opened)
		return c->ng;
	/* Before open: count as build_groups() will. */
	size_t n = 0;

	for (size_t i = 0; i < c->evl.n; i++) {
		const struct rec_event *e = &c->evl.ev[i];

		if (e->group < 0 || e->member == 0)
			n++;
	}
	return n;
}

size_t rec_counters_nevents(const struct rec_counters *c)
{
	return c->evl.n;
}

uint64_t rec_counters_read_format(const struct rec_counters *c)
{
	return c->read_format;
}

size_t rec_counters_ntargets(const struct rec_counters *c)
{
	return c->nt;
}

const char *rec_counters_event_name(const struct rec_counters *c, size_t i)
{
	return i < c->evl.n ? c->evl.ev[i].name : NULL;
}

const char *rec_counters_event_error(const struct rec_counters *c, size_t i)
{
	return c->opened && i < c->nm ? c->m[i].error : NULL;
}

bool rec_counters_event_opened(const struct rec_counters *c, size_t i)
{
	return c->opened && i < c->nm && c->m[i].nopen > 0;
}

void rec_counters_event_kind(const struct rec_counters *c, size_t i,
			     uint32_t *type, uint64_t *config)
{
	*type = i < c->evl.n ? c->evl.ev[i].attr.type : 0;
	*config = i < c->evl.n ? c->evl.ev[i].attr.config : 0;
}

size_t rec_counters_event_group(const struct rec_counters *c, size_t i)
{
	return c->opened && i < c->nm ? c->m[i].group : 0;
}

const char *rec_counters_group_name(const struct rec_counters *c, size_t g)
{
	return c->opened && g < c->ng ? c->g[g].name : NULL;
}

int rec_counters_event_fd(const struct rec_counters *c, size_t i, size_t t)
{
	return c->opened && i < c->nm && t < c->nt ? c->m[i].fd[t] : -1;
}

uint64_t rec_counters_event_id(const struct rec_counters *c, size_t i,
			       size_t t)
{
	return c->opened && i < c->nm && t < c->nt && c->m[i].fd[t] >= 0 ?
	       c->m[i].id[t] : 0;
}

int rec_counters_event_value(const struct rec_counters *c, size_t i,
			     struct rec_counter_value *v)
{
	if (!c->opened || i >= c->nm)
		return -EINVAL;
	*v = c->m[i].last;
	return c->m[i].nopen ? 0 : -EOPNOTSUPP;
}

bool rec_counters_group_never_ran(const struct rec_counters *c, size_t g)
{
	const struct ctr_member *m = NULL;

	if (!c->opened || g >= c->ng)
		return false;
	/* Members share their group's times: any open member tells. */
	for (size_t k = 0; k < c->g[g].n && !m; k++)
		if (c->m[c->g[g].first + k].nopen)
			m = &c->m[c->g[g].first + k];
	return m && m->last.enabled > 0 && m->last.running == 0;
}
