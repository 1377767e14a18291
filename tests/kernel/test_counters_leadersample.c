/*
 * test_counters_leadersample.c - leader sampling: {cpu-clock,page-faults}:S.
 *
 * The leader samples on cpu-clock with PERF_SAMPLE_READ and
 * PERF_FORMAT_GROUP, so every sample carries every member's value. This
 * drives the kernel directly (perf_event_open + ring) and decodes each
 * sample's read with rec_group_read_parse / rec_group_read_find, the code
 * the recorder uses for PERF_SAMPLE_READ: it checks the page-faults value
 * is found by its id (not the leader's cpu-clock ns at position 0), grows
 * monotonically across samples, and reaches the K faults the test made
 * before its last samples.
 *
 * (`perfrec record -e '{cpu-clock,page-faults}:S'` end to end belongs to
 * the record command; this covers the sampling-read path underneath.)
 */
#include <errno.h>
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
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "recorder/events/groupopen.h"
#include "recorder/events/groupread.h"

#define K_PAGES 2000
#define RING_PAGES 64

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Runs on the CPU for ms of this thread's CPU time (not wall time: on a
 * loaded host a wall-clock burn may get little CPU, hence few samples). */
static void burn_ms(unsigned ms)
{
	uint64_t end = thread_cpu_ns() + ms * 1000000ull;
	static volatile uint64_t sink;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink = sink + (uint64_t)i;
}

struct sample_seen {
	uint64_t n;
	uint64_t pf_first, pf_last, clock_last;
	uint64_t pf_max_before;   /* largest value seen so far */
	bool monotonic;
	bool leader_first;
};

static void leader_sampling_group(void **state)
{
	struct perf_event_attr a;
	uint64_t rf = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
		      PERF_FORMAT_TOTAL_TIME_ENABLED |
		      PERF_FORMAT_TOTAL_TIME_RUNNING;
	long psz = sysconf(_SC_PAGESIZE);
	int leader, member;
	uint64_t lid, mid;
	struct perf_event_mmap_page *mp;
	unsigned char *data, rec[65536];
	uint64_t head, tail, size;
	struct sample_seen s = { .monotonic = true, .leader_first = true };
	volatile char *pages;
	uint64_t faults_done_at_sample = 0;

	(void)state;
	if (rec_groupopen_have_lost())
		rf |= PERF_FORMAT_LOST;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 1000000;   /* 1 ms of cpu-clock */
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_READ;
	a.read_format = rf;
	a.disabled = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.exclude_kernel = 0;
	leader = rec_groupopen_event(&a, 0, -1, -1);
	if (leader < 0) {
		const char *ci = getenv("CI");

		if ((leader == -EACCES || leader == -EPERM ||
		     leader == -ENOSYS) && (!ci || !*ci)) {
			fprintf(stderr, "perf_event_open unavailable (%s), "
				"skipping\n", strerror(-leader));
			skip();
		}
		fail_msg("cpu-clock leader: %s", strerror(-leader));
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.read_format = rf;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	member = rec_groupopen_event(&a, 0, -1, leader);
	assert_true(member >= 0);
	assert_int_equal(rec_groupopen_id(leader, &lid), 0);
	assert_int_equal(rec_groupopen_id(member, &mid), 0);
	assert_true(lid != mid);

	mp = mmap(NULL, (size_t)(RING_PAGES + 1) * psz, PROT_READ | PROT_WRITE,
		  MAP_SHARED, leader, 0);
	assert_true(mp != MAP_FAILED);
	data = (unsigned char *)mp + psz;
	size = (uint64_t)RING_PAGES * psz;

	assert_int_equal(ioctl(leader, PERF_EVENT_IOC_RESET,
			       PERF_IOC_FLAG_GROUP), 0);
	assert_int_equal(ioctl(leader, PERF_EVENT_IOC_ENABLE, 0), 0);
	burn_ms(10);
	pages = mmap(NULL, (size_t)K_PAGES * psz, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(pages != MAP_FAILED);
	madvise((void *)pages, (size_t)K_PAGES * psz, MADV_NOHUGEPAGE);
	for (long i = 0; i < K_PAGES; i++)
		pages[i * psz] = 1;
	faults_done_at_sample = mono_ns();
	burn_ms(30);   /* samples after the faults */
	assert_int_equal(ioctl(leader, PERF_EVENT_IOC_DISABLE, 0), 0);

	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	tail = mp->data_tail;
	assert_true(head - tail <= size);
	while (tail < head) {
		struct perf_event_header h;
		const unsigned char *p;
		struct rec_group_read gr;
		uint64_t off = tail % size, t;
		long used;
		int pi;

		/* Copy the record out, wrapping around the ring's end. */
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(off + i) % size];
		/* h.size is 16 bits: rec (64 KiB) always holds it. */
		assert_true(h.size >= sizeof(h));
		for (size_t i = 0; i < h.size; i++)
			rec[i] = data[(off + i) % size];
		tail += h.size;
		if (h.type != PERF_RECORD_SAMPLE)
			continue;
		p = rec + sizeof(h) + 8 /* ip */ + 8 /* pid, tid */;
		memcpy(&t, p, 8);
		p += 8;
		used = rec_group_read_parse(p, (size_t)(rec + h.size - p), rf,
					    &gr);
		assert_true(used > 0);
		assert_int_equal(gr.nr, 2);
		if (gr.ids[0] != lid)
			s.leader_first = false;
		pi = rec_group_read_find(&gr, mid);
		assert_true(pi >= 0);
		assert_true(rec_group_read_find(&gr, lid) >= 0);
		if (s.n && gr.values[pi] < s.pf_last)
			s.monotonic = false;
		if (!s.n)
			s.pf_first = gr.values[pi];
		s.pf_last = gr.values[pi];
		s.clock_last = gr.values[rec_group_read_find(&gr, lid)];
		if (t > faults_done_at_sample && s.pf_max_before < s.pf_last)
			s.pf_max_before = s.pf_last;
		s.n++;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);

	fprintf(stderr, "%" PRIu64 " samples; page-faults first %" PRIu64
		" last %" PRIu64 "; cpu-clock last %" PRIu64 " ns\n", s.n,
		s.pf_first, s.pf_last, s.clock_last);
	assert_true(s.n >= 20);
	assert_true(s.leader_first);
	assert_true(s.monotonic);
	/* Samples taken after the K faults carry at least K in the member. */
	assert_true(s.pf_max_before >= K_PAGES);
	assert_true(s.pf_first < K_PAGES);
	assert_true(s.pf_last != s.clock_last);

	munmap((void *)pages, (size_t)K_PAGES * psz);
	munmap(mp, (size_t)(RING_PAGES + 1) * psz);
	close(member);
	close(leader);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(leader_sampling_group),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
