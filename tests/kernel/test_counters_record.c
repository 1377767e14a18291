/*
 * test_counters_record.c - `perfrec record` end to end with counters:
 *
 *   perfrec record --counters '{task-clock,page-faults,context-switches}'
 *                  --interval 10ms -o T -- faultpipe K P
 *   perfrec record -e '{cpu-clock,page-faults}:S' -o T -- faultpipe K 0
 *
 * The binary (PERFREC_BIN) runs as a user would run it; the trace is read
 * back with format/reader.h. Values are located by the kernel ids the
 * EventDesc packets give, never by position.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "format/reader.h"
#include "kernel/kerntest.h"

#define K_PAGES 20000
#define P_TRIPS 2000

static char wl[4096], dir[] = "/tmp/perfrec-ctr-rec-XXXXXX", trace[4200];

static int setup(void **state)
{
	(void)state;
	kerntest_require_perf("test_counters_record");
	snprintf(wl, sizeof(wl), "%s/tests/faultpipe", PERFREC_BUILD_DIR);
	if (access(wl, X_OK) || access(PERFREC_BIN, X_OK))
		fail_msg("missing %s or %s", wl, PERFREC_BIN);
	if (strstr(dir, "XXXXXX"))   /* first test: make the directory */
		assert_non_null(mkdtemp(dir));
	snprintf(trace, sizeof(trace), "%s/t.prec", dir);
	return 0;
}

static int run(char **argv)
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Every kernel id of one event (one per opened fd: the recorder opens a
 * task's events once per CPU). */
struct idset {
	uint64_t id[256];
	size_t n;
};

static void idset_take(struct idset *s, const Perfrec__EventDesc *e)
{
	for (size_t i = 0; i < e->n_ids && s->n < 256; i++)
		s->id[s->n++] = e->ids[i];
}

/* Index in rd of the member whose id is in s, or -1. */
static int index_in(const Perfrec__GroupRead *rd, const struct idset *s)
{
	for (size_t i = 0; i < rd->n_ids; i++)
		for (size_t k = 0; k < s->n; k++)
			if (rd->ids[i] == s->id[k])
				return (int)i;
	return -1;
}

static int index_of(const Perfrec__GroupRead *rd, uint64_t id)
{
	for (size_t i = 0; i < rd->n_ids; i++)
		if (rd->ids[i] == id)
			return (int)i;
	return -1;
}

static void record_counters(void **state)
{
	char k[16], p[16];
	char *argv[] = { PERFREC_BIN, "record", "--counters",
			 "{task-clock,page-faults,context-switches}",
			 "--interval", "10ms", "-o", trace, "--", wl, k, p,
			 NULL };
	struct prec_reader *r;
	struct prec_packet pk;
	uint64_t id_tc = 0, id_pf = 0, id_cs = 0;
	uint64_t prev_pf = 0, sum_pf = 0, last_pf = 0, last_cs = 0, last_tc = 0;
	int ret, snaps = 0, finals = 0, gdesc = 0, group_index = -1;

	(void)state;
	snprintf(k, sizeof(k), "%d", K_PAGES);
	snprintf(p, sizeof(p), "%d", P_TRIPS);
	assert_int_equal(run(argv), 0);
	r = prec_reader_open(trace, NULL);
	assert_non_null(r);
	while ((ret = prec_reader_next_packet(r, &pk)) > 0) {
		const Perfrec__Packet *x = pk.pkt;

		if (x->data_case == PERFREC__PACKET__DATA_EVENT &&
		    x->event->n_ids == 1) {
			if (!strcmp(x->event->name, "task-clock"))
				id_tc = x->event->ids[0];
			if (!strcmp(x->event->name, "page-faults")) {
				id_pf = x->event->ids[0];
				assert_int_equal(x->event->member, 1);
			}
			if (!strcmp(x->event->name, "context-switches"))
				id_cs = x->event->ids[0];
		} else if (x->data_case == PERFREC__PACKET__DATA_GROUP_DESC &&
			   x->group_desc->counting) {
			gdesc++;
			group_index = (int)x->group_desc->index;
			assert_int_equal(x->group_desc->n_events, 3);
			assert_int_equal(x->group_desc->interval_ns, 10000000);
		} else if (x->data_case == PERFREC__PACKET__DATA_GROUP) {
			const Perfrec__GroupRead *rd = x->group->read;
			int i;

			assert_int_equal(finals, 0);   /* final is last */
			assert_int_equal((int)x->group->group, group_index);
			i = index_of(rd, id_pf);
			assert_true(i >= 0);
			assert_true(rd->values[i] >= prev_pf);
			sum_pf += rd->values[i] - prev_pf;
			prev_pf = last_pf = rd->values[i];
			last_cs = rd->values[index_of(rd, id_cs)];
			last_tc = rd->values[index_of(rd, id_tc)];
			finals += x->group->final;
			snaps++;
		}
	}
	assert_int_equal(ret, 0);
	prec_reader_free(r);
	fprintf(stderr, "record --counters: %d snapshots, page-faults %" PRIu64
		", context-switches %" PRIu64 ", task-clock %" PRIu64 " ns\n",
		snaps, last_pf, last_cs, last_tc);
	assert_int_equal(gdesc, 1);
	assert_true(id_tc && id_pf && id_cs);
	assert_true(snaps >= 2);
	assert_int_equal(finals, 1);
	assert_true(last_pf >= K_PAGES);
	assert_true(last_cs >= 2 * P_TRIPS);
	assert_true(last_pf != last_tc);
	assert_true(sum_pf == last_pf);
	unlink(trace);
}

static void record_leader_sampling(void **state)
{
	char k[16];
	char *argv[] = { PERFREC_BIN, "record", "-e",
			 "{cpu-clock,page-faults}:S", "-o", trace, "--", wl, k,
			 "0", NULL };
	struct prec_reader *r;
	struct prec_packet pk;
	struct idset id_clk = { .n = 0 }, id_pf = { .n = 0 };
	static struct { uint64_t id, prev; uint32_t tid; } seen[512];
	size_t nseen = 0;
	uint64_t max_pf = 0;
	int ret, samples = 0, with_read = 0;
	bool monotonic = true;

	(void)state;
	snprintf(k, sizeof(k), "%d", K_PAGES);
	assert_int_equal(run(argv), 0);
	r = prec_reader_open(trace, NULL);
	assert_non_null(r);
	while ((ret = prec_reader_next_packet(r, &pk)) > 0) {
		const Perfrec__Packet *x = pk.pkt;

		if (x->data_case == PERFREC__PACKET__DATA_EVENT &&
		    x->event->n_ids >= 1) {
			if (!strcmp(x->event->name, "cpu-clock"))
				idset_take(&id_clk, x->event);
			if (!strcmp(x->event->name, "page-faults"))
				idset_take(&id_pf, x->event);
		} else if (x->data_case == PERFREC__PACKET__DATA_SAMPLE) {
			const Perfrec__GroupRead *rd = x->sample->read;
			int i;

			samples++;
			if (!rd)
				continue;
			with_read++;
			assert_int_equal(rd->n_ids, 2);
			i = index_in(rd, &id_pf);
			assert_true(i >= 0);
			assert_true(index_in(rd, &id_clk) >= 0);
			assert_true(index_in(rd, &id_clk) != i);
			/* Monotonic per counter and task: each CPU's fd of
			 * the task counts only what ran on that CPU, and an
			 * inherited child task (e.g. the LeakSanitizer tracer
			 * of an ASan build) has counters of its own. */
			{
				size_t k;

				for (k = 0; k < nseen; k++)
					if (seen[k].id == rd->ids[i] &&
					    seen[k].tid == x->sample->tid)
						break;
				if (k == nseen && nseen < 512) {
					seen[k].id = rd->ids[i];
					seen[k].tid = x->sample->tid;
					seen[k].prev = 0;
					nseen++;
				}
				if (k < nseen) {
					if (rd->values[i] < seen[k].prev) {
						fprintf(stderr, "id %" PRIu64
							" tid %u: %" PRIu64
							" after %" PRIu64 "\n",
							rd->ids[i],
							x->sample->tid,
							rd->values[i],
							seen[k].prev);
						monotonic = false;
					}
					seen[k].prev = rd->values[i];
				}
			}
			if (rd->values[i] > max_pf)
				max_pf = rd->values[i];
		}
	}
	assert_int_equal(ret, 0);
	prec_reader_free(r);
	fprintf(stderr, "record {cpu-clock,page-faults}:S: %d samples (%d "
		"with read), page-faults up to %" PRIu64 "\n", samples,
		with_read, max_pf);
	assert_true(id_clk.n && id_pf.n);
	assert_true(samples > 0);
	assert_int_equal(with_read, samples);
	/* Each counter of each task only grows. */
	assert_true(monotonic);
	/* The last samples come after the K faults. */
	assert_true(max_pf >= K_PAGES * 9 / 10);
	unlink(trace);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(record_counters, setup),
		cmocka_unit_test_setup(record_leader_sampling, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
