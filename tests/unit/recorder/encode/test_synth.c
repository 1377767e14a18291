/*
 * test_synth.c - existing tasks and maps from a /proc tree
 * (recorder/synth.c, on a fake tree) and the workload launcher
 * (recorder/workload.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/reader.h"
#include "format/sink.h"
#include "format/writer.h"
#include "recorder/encode/synth.h"
#include "recorder/recording/workload.h"

static char root[64];

static void put_file(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void put_dir(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static int setup(void **state)
{
	(void)state;
	strcpy(root, "/tmp/perfrec-proc-XXXXXX");
	assert_non_null(mkdtemp(root));
	/* pid 100: two threads, three maps of which two are executable */
	put_dir("100");
	put_dir("100/task");
	put_dir("100/task/100");
	put_dir("100/task/101");
	put_file("100/status", "Name:\tserver\nUmask:\t0022\nState:\tS\nTgid:\t100\nPPid:\t1\n");
	put_file("100/task/100/comm", "server\n");
	put_file("100/task/101/comm", "worker-1\n");
	put_file("100/maps",
		 "00400000-00452000 r-xp 00001000 08:02 173521      /usr/bin/server\n"
		 "00651000-00652000 rw-p 00051000 08:02 173521      /usr/bin/server\n"
		 "7f0000000000-7f0000100000 r-xs 00000000 00:00 0 \n"
		 "garbage line\n"
		 "7ffd5e1f0000-7ffd5e1f2000 r-xp 00000000 00:00 0          [vdso]\n");
	/* pid 200: a kernel thread (no maps, no task dir) */
	put_dir("200");
	put_file("200/status", "Name:\tkworker/0:1\nTgid:\t200\nPPid:\t2\n");
	put_file("200/maps", "");
	/* not a pid */
	put_dir("self-ish");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) == 0 ? 0 : 0;
}

struct seen {
	int tasks, maps;
	int server_main, worker, kworker;
	int text_map, anon_map, vdso_map;
};

static void read_back(struct prec_sink *sink, struct seen *s)
{
	size_t len;
	const void *data = prec_sink_mem_data(sink, &len);
	struct prec_reader *r = prec_reader_open_mem(data, len, NULL);
	struct prec_packet p;

	memset(s, 0, sizeof(*s));
	assert_non_null(r);
	while (prec_reader_next_packet(r, &p) > 0) {
		const Perfrec__Packet *k = p.pkt;

		assert_int_equal(p.stream, 0);
		if (k->data_case == PERFREC__PACKET__DATA_TASK) {
			const char *c = prec_frame_string(p.frame, k->task->comm);

			s->tasks++;
			assert_int_equal(k->task->kind, PERFREC__TASK_EVENT__KIND__EXISTING);
			assert_int_equal(p.time, 777);
			if (k->task->tid == 100) {
				assert_int_equal(k->task->pid, 100);
				assert_int_equal(k->task->ppid, 1);
				assert_string_equal(c, "server");
				s->server_main++;
			} else if (k->task->tid == 101) {
				assert_int_equal(k->task->pid, 100);
				assert_string_equal(c, "worker-1");
				s->worker++;
			} else if (k->task->tid == 200) {
				assert_int_equal(k->task->ppid, 2);
				assert_string_equal(c, "kworker/0:1");
				s->kworker++;
			}
		} else if (k->data_case == PERFREC__PACKET__DATA_MMAP) {
			const Perfrec__Mmap *m = k->mmap;
			const char *fn = prec_frame_string(p.frame, m->filename);

			s->maps++;
			assert_true(m->synthesized);
			assert_int_equal(m->pid, 100);
			assert_true(m->prot & PROT_EXEC);
			if (!strcmp(fn, "/usr/bin/server")) {
				assert_int_equal(m->start, 0x400000);
				assert_int_equal(m->len, 0x52000);
				assert_int_equal(m->pgoff, 0x1000);
				assert_int_equal(m->maj, 8);
				assert_int_equal(m->min, 2);
				assert_int_equal(m->ino, 173521);
				assert_int_equal(m->flags, MAP_PRIVATE);
				assert_int_equal(m->prot, PROT_READ | PROT_EXEC);
				s->text_map++;
			} else if (!strcmp(fn, "//anon")) {
				assert_int_equal(m->flags, MAP_SHARED);
				assert_int_equal(m->len, 0x100000);
				s->anon_map++;
			} else if (!strcmp(fn, "[vdso]")) {
				s->vdso_map++;
			} else {
				fail_msg("unexpected map %s", fn);
			}
		}
	}
	prec_reader_free(r);
}

static void test_all_processes(void **state)
{
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	struct rec_synth_stats st;
	struct seen s;

	(void)state;
	assert_int_equal(rec_synth_tasks(w, 0, root, NULL, 0, 777, &st), 0);
	assert_int_equal(prec_writer_close(w), 0);
	assert_int_equal(st.processes, 2);
	assert_int_equal(st.threads, 2);
	assert_int_equal(st.mmaps, 3);
	read_back(sink, &s);
	assert_int_equal(s.tasks, 3);
	assert_int_equal(s.server_main, 1);
	assert_int_equal(s.worker, 1);
	assert_int_equal(s.kworker, 1);
	assert_int_equal(s.maps, 3);   /* the rw-p data map is not executable */
	assert_int_equal(s.text_map, 1);
	assert_int_equal(s.anon_map, 1);
	assert_int_equal(s.vdso_map, 1);
	prec_writer_free(w);
	prec_sink_free(sink);
}

static void test_selected_pids(void **state)
{
	struct prec_sink *sink = prec_sink_mem_new();
	struct prec_writer *w = prec_writer_new(sink, NULL);
	int pids[] = { 200, 999 };   /* 999 does not exist: skipped */
	struct rec_synth_stats st;
	struct seen s;

	(void)state;
	assert_int_equal(rec_synth_tasks(w, 0, root, pids, 2, 777, &st), 0);
	assert_int_equal(prec_writer_close(w), 0);
	assert_int_equal(st.processes, 1);
	read_back(sink, &s);
	assert_int_equal(s.tasks, 1);
	assert_int_equal(s.kworker, 1);
	assert_int_equal(s.maps, 0);
	prec_writer_free(w);
	prec_sink_free(sink);
}

static void test_workload(void **state)
{
	struct rec_workload wl;
	char marker[128], *argv_ok[] = { "/bin/sh", "-c", "exit 5", NULL };
	char *argv_missing[] = { "/nonexistent/program", NULL };
	char touch[160];
	char *argv_touch[] = { "/bin/sh", "-c", touch, NULL };

	(void)state;
	assert_int_equal(rec_workload_prepare(&wl, argv_ok), 0);
	assert_true(wl.pid > 0);
	assert_false(rec_workload_poll(&wl));   /* waits for "go" */
	assert_int_equal(rec_workload_start(&wl), 0);
	rec_workload_wait(&wl);
	assert_true(wl.exited);
	assert_int_equal(rec_workload_exit_code(&wl), 5);
	rec_workload_release(&wl);

	assert_int_equal(rec_workload_prepare(&wl, argv_missing), 0);
	assert_int_equal(rec_workload_start(&wl), -ENOENT);
	assert_true(wl.exited);
	assert_int_equal(rec_workload_exit_code(&wl), 127);
	rec_workload_release(&wl);

	/* cancelled: the command never runs */
	snprintf(marker, sizeof(marker), "%s/ran", root);
	snprintf(touch, sizeof(touch), "touch %s", marker);
	assert_int_equal(rec_workload_prepare(&wl, argv_touch), 0);
	rec_workload_cancel(&wl);
	assert_true(wl.exited);
	assert_int_equal(rec_workload_exit_code(&wl), 127);
	assert_int_not_equal(access(marker, F_OK), 0);
	rec_workload_release(&wl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_processes),
		cmocka_unit_test(test_selected_pids),
		cmocka_unit_test(test_workload),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
