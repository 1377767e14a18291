/*
 * test_counters.c - counting groups on real kernel events (root).
 *
 * The workload (tests/kernel/workloads/faultpipe.c) touches K fresh pages
 * and does P pipe round trips pinned to one CPU, so page-faults >= K and
 * context-switches >= 2P are facts of the kernel, not of perfrec. Counting
 * {task-clock,page-faults,context-switches} must show those counts for the
 * member that counts them; page-faults is deliberately second, so taking
 * the leader's value (task-clock ns) for it would be caught.
 *
 * Skips (exit 77 is not used: cmocka skip) only when perf_event_open is
 * unavailable AND the CI variable is unset; under CI it fails instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "format/reader.h"
#include "format/scale.h"
#include "format/sink.h"
#include "format/writer.h"
#include "kernel/kerntest.h"
#include "recorder/events/counters.h"
#include "recorder/events/groupread.h"
#include "lib/logcap.h"

#define K_PAGES 3000
#define P_TRIPS 1000
#define GROUP3 "{task-clock,page-faults,context-switches}"

static const char *faultpipe_path(void)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/tests/faultpipe", PERFREC_BUILD_DIR);
	return path;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int setup(void **state)
{
	(void)state;
	kerntest_require_perf("test_counters");
	if (access(faultpipe_path(), X_OK) != 0)
		fail_msg("workload %s missing: build target faultpipe",
			 faultpipe_path());
	return 0;
}

/* Forks faultpipe K P held on a pipe; returns the pid, *go = write end. */
static pid_t spawn_held(long k, long p, int *go)
{
	int fds[2];
	pid_t pid;

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char b, ks[32], ps[32];
		int devnull = open("/dev/null", O_WRONLY);

		close(fds[1]);
		if (read(fds[0], &b, 1) != 1)
			_exit(126);
		if (devnull >= 0)
			dup2(devnull, 1);
		snprintf(ks, sizeof(ks), "%ld", k);
		snprintf(ps, sizeof(ps), "%ld", p);
		execl(faultpipe_path(), "faultpipe", ks, ps, (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

static size_t find_event(const struct rec_counters *c, const char *name)
{
	for (size_t i = 0; i < rec_counters_nevents(c); i++)
		if (strcmp(rec_counters_event_name(c, i), name) == 0)
			return i;
	fail_msg("event %s not found", name);
	return 0;
}

/* Snapshots recorded through the accessors, to compare with the file. */
struct seen {
	uint64_t v[64][3];
	size_t n;
};

/* Per task, started at exec: snapshots while the workload runs, then the
 * final one. Checks the counts, their monotony, and the written file. */
static void per_task_group(void **state)
{
	struct rec_counters *c = rec_counters_new();
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w;
	struct seen seen = { .n = 0 };
	int go, status = 0, ret;
	pid_t pid;
	size_t tc, pf, cs;
	struct rec_counter_value v[3];

	(void)state;
	assert_non_null(c);
	assert_non_null(sink);
	w = prec_writer_new(sink, NULL);
	assert_non_null(w);
	ret = rec_counters_add(c, GROUP3);
	assert_int_equal(ret, 0);
	rec_counters_set_interval(c, 2000000);
	assert_int_equal(rec_counters_ngroups(c), 1);
	assert_int_equal(rec_counters_nevents(c), 3);

	pid = spawn_held(K_PAGES, P_TRIPS, &go);
	ret = rec_counters_open(c, NULL, 0, &pid, 1, true);
	if (ret < 0)
		fail_msg("open: %s", logcap_err());
	assert_true(rec_counters_read_format(c) & PERF_FORMAT_GROUP);
	assert_true(rec_counters_read_format(c) & PERF_FORMAT_ID);
	assert_int_equal(rec_counters_describe(c, w, 0, 0), 0);
	tc = find_event(c, "task-clock");
	pf = find_event(c, "page-faults");
	cs = find_event(c, "context-switches");
	assert_int_equal(pf, 1);   /* page-faults is not the leader */
	for (size_t i = 0; i < 3; i++) {
		assert_true(rec_counters_event_opened(c, i));
		assert_null(rec_counters_event_error(c, i));
		assert_true(rec_counters_event_id(c, i, 0) != 0);
	}

	assert_int_equal(write(go, "g", 1), 1);
	close(go);
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		assert_int_equal(rec_counters_snapshot(c, w, mono_ns(), r == pid),
				 0);
		assert_true(seen.n < 64);
		for (size_t i = 0; i < 3; i++) {
			assert_int_equal(rec_counters_event_value(c, i, &v[i]), 0);
			seen.v[seen.n][i] = v[i].value;
		}
		seen.n++;
		if (r == pid)
			break;
		if (seen.n == 63) {   /* keep the last slot for the final read */
			assert_int_equal(waitpid(pid, &status, 0), pid);
			assert_int_equal(rec_counters_snapshot(c, w, mono_ns(),
							       true), 0);
			for (size_t i = 0; i < 3; i++) {
				rec_counters_event_value(c, i, &v[i]);
				seen.v[seen.n][i] = v[i].value;
			}
			seen.n++;
			break;
		}
		usleep(2000);
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	fprintf(stderr, "per task: task-clock %" PRIu64 " ns, page-faults %"
		PRIu64 ", context-switches %" PRIu64 " (%zu snapshots, "
		"enabled %" PRIu64 " running %" PRIu64 ")\n", v[tc].value,
		v[pf].value, v[cs].value, seen.n, v[tc].enabled, v[tc].running);
	assert_true(v[pf].value >= K_PAGES);
	assert_true(v[cs].value >= 2 * P_TRIPS);
	assert_true(v[tc].value > 0);
	/* The member's own count, not the leader's (task-clock ns). */
	assert_true(v[pf].value != v[tc].value);
	assert_true(v[pf].value < 100 * K_PAGES);
	/* Software events are never multiplexed: ran the whole time. */
	assert_true(v[pf].running == v[pf].enabled);
	for (size_t s = 1; s < seen.n; s++)
		for (size_t i = 0; i < 3; i++)
			assert_true(seen.v[s][i] >= seen.v[s - 1][i]);

	assert_int_equal(prec_writer_close(w), 0);

	/* Read the file back: EventDescs map ids to members, snapshots are
	 * monotonic per id, deltas sum to the final value. */
	{
		size_t len;
		const void *buf = prec_sink_mem_data(sink, &len);
		struct prec_reader *r = prec_reader_open_mem(buf, len, NULL);
		struct prec_packet p;
		uint64_t ids[3] = { 0 }, prev[3] = { 0 }, sum[3] = { 0 };
		uint64_t last[3] = { 0 };
		size_t nsnap = 0, nfinal = 0, ndesc = 0, ngd = 0;

		assert_non_null(r);
		while ((ret = prec_reader_next_packet(r, &p)) > 0) {
			const Perfrec__Packet *pk = p.pkt;

			if (pk->data_case == PERFREC__PACKET__DATA_EVENT) {
				const Perfrec__EventDesc *e = pk->event;

				assert_true(e->index < 3);
				assert_int_equal(e->n_ids, 1);
				assert_int_equal(e->group, 0);
				assert_int_equal(e->member, e->index);
				assert_int_equal(e->pids[0], pid);
				assert_int_equal(e->cpus[0], -1);
				assert_string_equal(e->error, "");
				ids[e->index] = e->ids[0];
				assert_true(ids[e->index] ==
					    rec_counters_event_id(c, e->index, 0));
				ndesc++;
			} else if (pk->data_case ==
				   PERFREC__PACKET__DATA_GROUP_DESC) {
				assert_string_equal(pk->group_desc->name, GROUP3);
				assert_int_equal(pk->group_desc->n_events, 3);
				assert_true(pk->group_desc->counting);
				assert_int_equal(pk->group_desc->interval_ns,
						 2000000);
				ngd++;
			} else if (pk->data_case == PERFREC__PACKET__DATA_GROUP) {
				const Perfrec__GroupRead *rd = pk->group->read;

				assert_int_equal(ndesc, 3);
				assert_int_equal(rd->n_ids, 3);
				assert_int_equal(rd->n_values, 3);
				assert_int_equal(pk->group->pid, pid);
				assert_int_equal(pk->group->cpu, -1);
				for (size_t i = 0; i < 3; i++) {
					size_t k;

					for (k = 0; k < 3; k++)
						if (rd->ids[k] == ids[i])
							break;
					assert_true(k < 3);
					assert_true(rd->values[k] >= prev[i]);
					sum[i] += rd->values[k] - prev[i];
					prev[i] = rd->values[k];
					last[i] = rd->values[k];
				}
				assert_false(nfinal);   /* final is the last */
				if (pk->group->final)
					nfinal++;
				nsnap++;
			}
		}
		assert_int_equal(ret, 0);
		assert_int_equal(ngd, 1);
		assert_int_equal(nsnap, seen.n);
		assert_int_equal(nfinal, 1);
		for (size_t i = 0; i < 3; i++) {
			assert_true(sum[i] == last[i]);
			assert_true(last[i] == seen.v[seen.n - 1][i]);
		}
		assert_true(last[pf] >= K_PAGES);
		prec_reader_free(r);
	}
	prec_writer_free(w);
	prec_sink_free(sink);
	rec_counters_free(c);
}

/* Reading the page-faults member's own fd: the kernel returns the leader
 * first, and the member's count is found by its id. */
static void member_fd_read_maps_by_id(void **state)
{
	struct rec_counters *c = rec_counters_new();
	uint64_t buf[3 + 3 * REC_GROUP_MAX];
	struct rec_group_read gr;
	int go, status;
	pid_t pid;
	ssize_t n;
	int idx;

	(void)state;
	assert_int_equal(rec_counters_add(c, GROUP3), 0);
	pid = spawn_held(K_PAGES, 10, &go);
	if (rec_counters_open(c, NULL, 0, &pid, 1, true))
		fail_msg("open: %s", logcap_err());
	assert_int_equal(write(go, "g", 1), 1);
	close(go);
	assert_int_equal(waitpid(pid, &status, 0), pid);

	n = read(rec_counters_event_fd(c, 1, 0), buf, sizeof(buf));
	assert_true(n > 0);
	assert_true(rec_group_read_parse(buf, (size_t)n,
					 rec_counters_read_format(c), &gr) > 0);
	assert_int_equal(gr.nr, 3);
	/* Leader first, although we read member 1's fd. */
	assert_true(gr.ids[0] == rec_counters_event_id(c, 0, 0));
	idx = rec_group_read_find(&gr, rec_counters_event_id(c, 1, 0));
	assert_int_equal(idx, 1);
	assert_true(gr.values[idx] >= K_PAGES);
	assert_true(gr.values[0] != gr.values[idx]);
	rec_counters_free(c);
}

/* Per CPU on every online CPU: the workload's faults are among them. */
static void per_cpu_group(void **state)
{
	struct rec_counters *c = rec_counters_new();
	int cpus[1024], ncpu = 0;
	long nc = sysconf(_SC_NPROCESSORS_ONLN);
	struct rec_counter_value v;
	int go, status;
	pid_t pid;

	(void)state;
	for (int i = 0; i < nc && i < 1024; i++)
		cpus[ncpu++] = i;
	assert_int_equal(rec_counters_add(c, GROUP3), 0);
	if (rec_counters_open(c, cpus, (size_t)ncpu, NULL, 0, false))
		fail_msg("open: %s", logcap_err());
	assert_int_equal(rec_counters_ntargets(c), (size_t)ncpu);
	assert_int_equal(rec_counters_enable(c), 0);
	pid = spawn_held(K_PAGES, P_TRIPS, &go);
	assert_int_equal(write(go, "g", 1), 1);
	close(go);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(rec_counters_snapshot(c, NULL, mono_ns(), true), 0);
	assert_int_equal(rec_counters_event_value(c, 1, &v), 0);
	fprintf(stderr, "per cpu (%d cpus): page-faults %" PRIu64 "\n", ncpu,
		v.value);
	assert_true(v.value >= K_PAGES);
	/* enabled is summed over cpus: about ncpu times the window. */
	assert_true(v.enabled > 0);
	assert_int_equal(rec_counters_event_value(c, 2, &v), 0);
	assert_true(v.value >= 2 * P_TRIPS);
	rec_counters_free(c);
}

/* Hardware events this host may lack: a group of only those fails up
 * front, a mixed group opens its supported members and marks the rest. */
static void unsupported_events(void **state)
{
	struct rec_counters *c = rec_counters_new();
	pid_t self = getpid();
	int ret;

	(void)state;
	assert_int_equal(rec_counters_add(c, "{cycles,instructions}"), 0);
	ret = rec_counters_open(c, NULL, 0, &self, 1, false);
	if (ret == 0) {
		fprintf(stderr, "this host has a hardware PMU: the "
			"unsupported-event checks do not apply here\n");
		rec_counters_free(c);
		return;
	}
	fprintf(stderr, "expected refusal: %s\n", logcap_err());
	assert_int_equal(ret, -EOPNOTSUPP);
	assert_non_null(strstr(logcap_err(), "cycles"));
	assert_non_null(strstr(logcap_err(), "not supported on this host: no hardware "
			       "PMU (VM?)"));
	rec_counters_free(c);

	/* Mixed: page-faults still counts, cycles is marked. */
	c = rec_counters_new();
	assert_int_equal(rec_counters_add(c, "{task-clock,cycles,page-faults}"), 0);
	ret = rec_counters_open(c, NULL, 0, &self, 1, false);
	if (ret)
		fail_msg("mixed group: %s", logcap_err());
	assert_int_equal(rec_counters_enable(c), 0);
	assert_false(rec_counters_event_opened(c, 1));
	assert_non_null(strstr(rec_counters_event_error(c, 1), "cycles: not "
			       "supported"));
	assert_true(rec_counters_event_opened(c, 2));
	{
		long psz = sysconf(_SC_PAGESIZE);
		volatile char *p = mmap(NULL, 256 * psz, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct rec_counter_value v;

		assert_true(p != MAP_FAILED);
		madvise((void *)p, 256 * psz, MADV_NOHUGEPAGE);
		for (int i = 0; i < 256; i++)
			p[i * psz] = 1;
		assert_int_equal(rec_counters_snapshot(c, NULL, mono_ns(), true),
				 0);
		assert_int_equal(rec_counters_event_value(c, 2, &v), 0);
		assert_true(v.value >= 256);
		assert_int_equal(rec_counters_event_value(c, 1, &v),
				 -EOPNOTSUPP);
		munmap((void *)p, 256 * psz);
	}
	rec_counters_free(c);

	/* Lenient mode (perfrec stat): an unsupported-only group is kept as
	 * "not supported" when something else counts. */
	c = rec_counters_new();
	rec_counters_set_allow_unsupported(c, true);
	assert_int_equal(rec_counters_add(c, "cycles,page-faults"), 0);
	assert_int_equal(rec_counters_open(c, NULL, 0, &self, 1, false), 0);
	assert_int_equal(rec_counters_ngroups(c), 2);
	assert_false(rec_counters_event_opened(c, 0));
	assert_true(rec_counters_event_opened(c, 1));
	rec_counters_free(c);
}

static void bad_specs(void **state)
{
	struct rec_counters *c = rec_counters_new();
	int pid = getpid();

	(void)state;
	assert_true(rec_counters_add(c, "{cpu-clock,page-faults}:S") < 0);
	assert_non_null(strstr(logcap_err(), ":S"));
	rec_counters_free(c);

	c = rec_counters_new();
	assert_true(rec_counters_add(c, "{no-such-event}") < 0);
	assert_true(strlen(logcap_err()) > 0);
	/* Nothing added: open refuses. */
	assert_int_equal(rec_counters_open(c, NULL, 0, &pid, 1, false), -EINVAL);
	rec_counters_free(c);

	/* A pid that does not exist: the kernel's ESRCH, named. */
	c = rec_counters_new();
	pid = 0x3ffffff0;
	assert_int_equal(rec_counters_add(c, GROUP3), 0);
	assert_int_equal(rec_counters_open(c, NULL, 0, &pid, 1, false), -ESRCH);
	assert_non_null(strstr(logcap_err(), "no such process"));
	rec_counters_free(c);

	/* A cpu that is not there: named as the cpu list's fault, not as an
	 * unsupported event. */
	c = rec_counters_new();
	pid = 100000;
	assert_int_equal(rec_counters_add(c, GROUP3), 0);
	assert_true(rec_counters_open(c, &pid, 1, NULL, 0, false) < 0);
	assert_non_null(strstr(logcap_err(), "cpu 100000 is not online"));
	rec_counters_free(c);
	rec_counters_free(NULL);
}

int main(void)
{
	logcap_install();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(per_task_group, setup),
		cmocka_unit_test_setup(member_fd_read_maps_by_id, setup),
		cmocka_unit_test_setup(per_cpu_group, setup),
		cmocka_unit_test_setup(unsupported_events, setup),
		cmocka_unit_test_setup(bad_specs, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
