/*
 * test_record.c - `perfrec record` against the real kernel.
 *
 * Runs the built perfrec binary (PERFREC_BIN) on known workloads
 * (tests/kernel/workloads/pingpong.c) and reads the files back with
 * format/reader.h directly (no analyzer). Needs root or a permissive
 * perf_event_paranoid; skips with a message only when perf_event_open is
 * unavailable and CI is unset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/reader.h"

static char dir[64];
static char pingpong[512];
static const char *perfrec;
static bool perf_ok;

/* ---- running programs */

/* Starts argv with stdout/stderr into files (NULL = /dev/null). */
static pid_t spawn(char *const argv[], const char *out, const char *err)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (o < 0 || e < 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int wait_code(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		assert_int_equal(errno, EINTR);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

static int run(char *const argv[], const char *err)
{
	return wait_code(spawn(argv, NULL, err));
}

static char *slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return strcpy(buf, "");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void path_in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Waits (up to 20 s) until the recorder at path has written its header:
 * it is then past its startup (rings opened, tasks synthesized, signals
 * caught), however slow that was under ASan on a loaded machine. */
static void wait_started(const char *path)
{
	struct stat st;

	for (int i = 0; i < 2000; i++) {
		if (stat(path, &st) == 0 && st.st_size > 0)
			return;
		sleep_ms(10);
	}
	fail_msg("%s: the recorder wrote nothing in 20 s", path);
}

/* ---- reading a trace back */

struct ev { char name[64]; uint64_t ids[512]; size_t nids; char *tp_format; };
struct smp { uint64_t id, time; uint32_t pid, tid, cpu; uint8_t *raw; size_t raw_len;
	     uint64_t rids[8], rvals[8]; size_t nread; };
struct sw { uint32_t cpu, pid, tid, other_pid, other_tid; bool out, cpu_wide; uint64_t time; };
struct task { int kind; uint32_t pid, tid, ppid; char comm[32]; bool exec; };
struct gsnap { uint32_t group; bool final; uint64_t ids[8], vals[8]; size_t n; };

struct trace {
	bool header;
	char target[64];
	char workload0[512];
	int32_t workload_pid;
	struct ev ev[16];
	size_t nev;
	struct smp *s;
	size_t ns, cap_s;
	struct sw *w;
	size_t nw, cap_w;
	struct task t[4096];
	size_t nt;
	struct gsnap g[256];
	size_t ng;
	size_t group_descs, counting_groups;
	bool end;
	char stop_reason[64];
	int32_t exit_status;
	uint64_t end_samples, end_switches, end_lost;
	uint64_t end_time;
	size_t symtabs;               /* SymbolTable packets */
	uint64_t first_symtab_time;
	struct prec_reader_stats st;
};

static void load(const char *path, struct trace *t)
{
	struct prec_reader *r = prec_reader_open(path, NULL);
	struct prec_packet p;
	int ret;

	memset(t, 0, sizeof(*t));
	if (!r)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	while ((ret = prec_reader_next_packet(r, &p)) > 0) {
		const Perfrec__Packet *k = p.pkt;

		switch (k->data_case) {
		case PERFREC__PACKET__DATA_HEADER:
			t->header = true;
			snprintf(t->target, sizeof(t->target), "%s", k->header->target);
			if (k->header->n_workload)
				snprintf(t->workload0, sizeof(t->workload0), "%s", k->header->workload[0]);
			t->workload_pid = k->header->workload_pid;
			break;
		case PERFREC__PACKET__DATA_EVENT: {
			struct ev *e = &t->ev[t->nev++];

			assert_true(t->nev <= 16);
			snprintf(e->name, sizeof(e->name), "%s", k->event->name);
			e->nids = k->event->n_ids < 512 ? k->event->n_ids : 512;
			memcpy(e->ids, k->event->ids, e->nids * sizeof(uint64_t));
			if (k->event->tracepoint_format && *k->event->tracepoint_format)
				e->tp_format = strdup(k->event->tracepoint_format);
			break;
		}
		case PERFREC__PACKET__DATA_GROUP_DESC:
			t->group_descs++;
			if (k->group_desc->counting)
				t->counting_groups++;
			break;
		case PERFREC__PACKET__DATA_SAMPLE: {
			struct smp *s;

			if (t->ns == t->cap_s) {
				t->cap_s = t->cap_s ? t->cap_s * 2 : 1024;
				t->s = realloc(t->s, t->cap_s * sizeof(*t->s));
				assert_non_null(t->s);
			}
			s = &t->s[t->ns++];
			memset(s, 0, sizeof(*s));
			s->id = k->sample->id;
			s->time = p.time;
			s->pid = k->sample->pid;
			s->tid = k->sample->tid;
			s->cpu = k->sample->cpu;
			if (k->sample->raw.len) {
				s->raw = malloc(k->sample->raw.len);
				memcpy(s->raw, k->sample->raw.data, k->sample->raw.len);
				s->raw_len = k->sample->raw.len;
			}
			if (k->sample->read) {
				s->nread = k->sample->read->n_ids < 8 ? k->sample->read->n_ids : 8;
				for (size_t i = 0; i < s->nread; i++) {
					s->rids[i] = k->sample->read->ids[i];
					s->rvals[i] = k->sample->read->values[i];
				}
			}
			break;
		}
		case PERFREC__PACKET__DATA_CONTEXT_SWITCH: {
			const Perfrec__ContextSwitch *c = k->context_switch;

			if (t->nw == t->cap_w) {
				t->cap_w = t->cap_w ? t->cap_w * 2 : 1024;
				t->w = realloc(t->w, t->cap_w * sizeof(*t->w));
				assert_non_null(t->w);
			}
			t->w[t->nw++] = (struct sw){ c->cpu, c->pid, c->tid, c->other_pid,
						     c->other_tid, c->out, c->cpu_wide, p.time };
			break;
		}
		case PERFREC__PACKET__DATA_TASK:
			if (t->nt < 4096) {
				struct task *x = &t->t[t->nt++];
				const char *c = prec_frame_string(p.frame, k->task->comm);

				x->kind = k->task->kind;
				x->pid = k->task->pid;
				x->tid = k->task->tid;
				x->ppid = k->task->ppid;
				x->exec = k->task->exec;
				snprintf(x->comm, sizeof(x->comm), "%s", c ? c : "");
			}
			break;
		case PERFREC__PACKET__DATA_GROUP:
			if (t->ng < 256 && k->group->read) {
				struct gsnap *g = &t->g[t->ng++];

				g->group = k->group->group;
				g->final = k->group->final;
				g->n = k->group->read->n_ids < 8 ? k->group->read->n_ids : 8;
				for (size_t i = 0; i < g->n; i++) {
					g->ids[i] = k->group->read->ids[i];
					g->vals[i] = k->group->read->values[i];
				}
			}
			break;
		case PERFREC__PACKET__DATA_SESSION_END:
			t->end = true;
			snprintf(t->stop_reason, sizeof(t->stop_reason), "%s",
				 k->session_end->stop_reason);
			t->exit_status = k->session_end->exit_status;
			t->end_samples = k->session_end->samples;
			t->end_switches = k->session_end->switches;
			t->end_lost = k->session_end->lost;
			t->end_time = k->session_end->end_time;
			break;
		case PERFREC__PACKET__DATA_SYMBOLS:
			if (!t->symtabs++)
				t->first_symtab_time = p.time;
			break;
		default:
			break;
		}
	}
	assert_int_equal(ret, 0);
	prec_reader_stats(r, &t->st);
	prec_reader_free(r);
}

static void trace_free(struct trace *t)
{
	for (size_t i = 0; i < t->ns; i++)
		free(t->s[i].raw);
	for (size_t i = 0; i < t->nev; i++)
		free(t->ev[i].tp_format);
	free(t->s);
	free(t->w);
}

static const struct ev *find_event(const struct trace *t, const char *name)
{
	for (size_t i = 0; i < t->nev; i++)
		if (!strcmp(t->ev[i].name, name))
			return &t->ev[i];
	return NULL;
}

static bool has_id(const struct ev *e, uint64_t id)
{
	for (size_t i = 0; i < e->nids; i++)
		if (e->ids[i] == id)
			return true;
	return false;
}

static const struct task *find_comm(const struct trace *t, const char *comm)
{
	for (size_t i = 0; i < t->nt; i++)
		if (t->t[i].kind == PERFREC__TASK_EVENT__KIND__COMM && !strcmp(t->t[i].comm, comm))
			return &t->t[i];
	return NULL;
}

/* A thread of process pid named comm: a system-wide recording also holds
 * other processes' threads of that name (other tests running pingpong). */
static const struct task *find_thread(const struct trace *t, uint32_t pid, const char *comm)
{
	for (size_t i = 0; i < t->nt; i++)
		if (t->t[i].kind == PERFREC__TASK_EVENT__KIND__COMM && t->t[i].pid == pid &&
		    !strcmp(t->t[i].comm, comm))
			return &t->t[i];
	return NULL;
}

/* Whether pid was forked (transitively) from root, per FORK records. */
static bool descends_from(const struct trace *t, uint32_t pid, uint32_t root)
{
	for (int depth = 0; depth < 16; depth++) {
		uint32_t parent = 0;

		for (size_t i = 0; i < t->nt; i++)
			if (t->t[i].kind == PERFREC__TASK_EVENT__KIND__FORK &&
			    t->t[i].pid == pid && t->t[i].tid == pid)
				parent = t->t[i].ppid;
		if (!parent)
			return false;
		if (parent == root)
			return true;
		pid = parent;
	}
	return false;
}

/* Offset of a field in a tracepoint format text ("field:pid_t next_pid;\toffset:56;"). */
static int tp_offset(const char *fmt, const char *field)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), " %s;", field);
	p = strstr(fmt, pat);
	if (!p)
		return -1;
	p = strstr(p, "offset:");
	return p ? atoi(p + 7) : -1;
}

/* ---- setup */

static int setup(void **state)
{
	struct perf_event_attr a;
	const char *bd = getenv("PERFREC_BUILD_DIR");
	int fd;

	(void)state;
	perfrec = getenv("PERFREC_BIN") ? getenv("PERFREC_BIN") : PERFREC_BIN;
	snprintf(pingpong, sizeof(pingpong), "%s/tests/pingpong", bd ? bd : PERFREC_BUILD_DIR);
	strcpy(dir, "/tmp/perfrec-test-XXXXXX");
	assert_non_null(mkdtemp(dir));
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, 0);
	perf_ok = fd >= 0;
	if (fd >= 0)
		close(fd);
	if (!perf_ok && getenv("CI"))
		fprintf(stderr, "perf_event_open(cpu-clock, cpu 0) failed: %s; CI is set, "
			"so the kernel tests fail instead of skipping\n", strerror(errno));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s/tiny", dir);
	umount2(cmd, MNT_DETACH);   /* left mounted if test_disk_full failed */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 0;
	return 0;
}

static void need_perf(void)
{
	if (perf_ok)
		return;
	if (getenv("CI"))
		fail_msg("perf_event_open is unavailable (not root? perf_event_paranoid?)");
	fprintf(stderr, "SKIP: perf_event_open unavailable (run as root or lower "
		"/proc/sys/kernel/perf_event_paranoid); set CI=true to make this fail\n");
	skip();
}

/* ---- tests */

#define ROUNDS 5000

/* System-wide while the command runs, with CPU-wide switch records and
 * the sched_switch tracepoint: every switch-out of the two threads must
 * name the same next task as the tracepoint saw. */
/* What the tracepoint on w's CPU saw nearest to switch-out w with w's task
 * as prev, for a failure message: a sched_switch lost, outside the 1 ms,
 * or naming another next task. */
static const char *unmatched_why(const struct trace *t, const struct ev *tp, const struct sw *w,
				 int prev_off, int next_off)
{
	static char why[128];
	const struct smp *best = NULL;
	int32_t next = 0;

	for (size_t j = 0; j < t->ns; j++) {
		const struct smp *s = &t->s[j];
		int32_t prev;

		if (s->cpu != w->cpu || !s->raw || !has_id(tp, s->id))
			continue;
		memcpy(&prev, s->raw + prev_off, 4);
		if ((uint32_t)prev != w->tid)
			continue;
		if (!best || llabs((long long)(s->time - w->time)) <
			     llabs((long long)(best->time - w->time))) {
			best = s;
			memcpy(&next, s->raw + next_off, 4);
		}
	}
	if (!best)
		return "no sched_switch of that task on that CPU";
	snprintf(why, sizeof(why), "nearest sched_switch of that task on that CPU %lld ns "
		 "away, next task %d", (long long)(best->time - w->time), next);
	return why;
}

static void test_pingpong_system_wide(void **state)
{
	char out[256], err[256], rounds[16];
	struct trace t;
	const struct task *ping, *pong, *exec_comm = NULL;
	const struct ev *cpuclk, *tp;
	uint32_t wpid;
	size_t own_samples = 0, tp_samples = 0, outs = 0, matched = 0, to_dead = 0;
	const struct sw *unmatched = NULL;
	bool exited = false;
	int prev_off, next_off;

	(void)state;
	need_perf();
	path_in_dir(out, sizeof(out), "pp.prec");
	path_in_dir(err, sizeof(err), "pp.err");
	snprintf(rounds, sizeof(rounds), "%d", ROUNDS);
	{
		char *argv[] = { (char *)perfrec, "record", "-a", "--switch-events", "-e",
				 "cpu-clock,sched:sched_switch", "-m", "2048", "-q", "-o", out,
				 "--", pingpong, rounds, "300", "7", NULL };

		assert_int_equal(run(argv, err), 7);   /* the command's exit status */
	}
	load(out, &t);
	assert_true(t.header);
	assert_string_equal(t.target, "system-wide");
	assert_string_equal(t.workload0, pingpong);
	wpid = (uint32_t)t.workload_pid;
	assert_true(wpid > 0);
	assert_true(t.end);
	assert_string_equal(t.stop_reason, "workload exited");
	assert_int_equal(t.exit_status, 7);
	assert_int_equal(t.end_samples, t.ns);
	assert_int_equal(t.end_switches, t.nw);
	if (t.end_lost)
		fail_msg("%llu records lost with 8 MiB rings", (unsigned long long)t.end_lost);
	assert_int_equal(t.st.damaged_frames, 0);
	assert_false(t.st.torn);
	assert_true(t.st.index_present);

	/* comm of the exec and of both threads, exit of the command */
	for (size_t i = 0; i < t.nt; i++) {
		if (t.t[i].kind == PERFREC__TASK_EVENT__KIND__COMM && t.t[i].pid == wpid &&
		    t.t[i].exec && !strcmp(t.t[i].comm, "pingpong"))
			exec_comm = &t.t[i];
		if (t.t[i].kind == PERFREC__TASK_EVENT__KIND__EXIT && t.t[i].pid == wpid &&
		    t.t[i].tid == wpid)
			exited = true;
	}
	assert_non_null(exec_comm);
	assert_true(exited);
	ping = find_thread(&t, wpid, "pp-ping");
	pong = find_thread(&t, wpid, "pp-pong");
	assert_non_null(ping);
	assert_non_null(pong);
	assert_int_equal(ping->pid, wpid);
	assert_int_equal(pong->pid, wpid);
	assert_int_not_equal(ping->tid, pong->tid);

	/* samples of the workload (it spins 300 ms first) */
	cpuclk = find_event(&t, "cpu-clock");
	tp = find_event(&t, "sched:sched_switch");
	assert_non_null(cpuclk);
	assert_non_null(tp);
	assert_int_equal(cpuclk->nids, sysconf(_SC_NPROCESSORS_ONLN));
	for (size_t i = 0; i < t.ns; i++)
		if (t.s[i].pid == wpid && has_id(cpuclk, t.s[i].id))
			own_samples++;
	if (own_samples < 100)
		fail_msg("only %zu cpu-clock samples of the workload", own_samples);

	/* the tracepoint: described with its format, samples carry payloads */
	assert_non_null(tp->tp_format);
	prev_off = tp_offset(tp->tp_format, "prev_pid");
	next_off = tp_offset(tp->tp_format, "next_pid");
	assert_true(prev_off > 0 && next_off > 0);
	for (size_t i = 0; i < t.ns; i++) {
		if (!has_id(tp, t.s[i].id))
			continue;
		tp_samples++;
		assert_true(t.s[i].raw_len >= (size_t)next_off + 4);
	}
	assert_true(tp_samples >= ROUNDS);

	/* >= ROUNDS switch-outs of the two threads, each naming the task the
	 * kernel switched to, as the tracepoint on that CPU at that moment saw.
	 * A preempted thread can be switched out for an exiting task already
	 * unhashed (another process's, on a busy machine): the switch record
	 * names it -1 (the kernel has no pid for a task no longer alive), the
	 * tracepoint its tid; that one matches any task but the idle one. */
	for (size_t i = 0; i < t.nw; i++) {
		const struct sw *w = &t.w[i];
		bool dead = w->other_tid == UINT32_MAX;
		size_t before = matched;

		if (!w->out || !w->cpu_wide || (w->tid != ping->tid && w->tid != pong->tid))
			continue;
		assert_int_equal(w->pid, wpid);
		outs++;
		for (size_t j = 0; j < t.ns; j++) {
			const struct smp *s = &t.s[j];
			int32_t prev, next;

			if (s->cpu != w->cpu || !s->raw || !has_id(tp, s->id))
				continue;
			if (s->time > w->time + 1000000 || s->time + 1000000 < w->time)
				continue;
			memcpy(&prev, s->raw + prev_off, 4);
			memcpy(&next, s->raw + next_off, 4);
			if ((uint32_t)prev == w->tid &&
			    (dead ? next != 0 : (uint32_t)next == w->other_tid)) {
				matched++;
				to_dead += dead;
				break;
			}
		}
		if (matched == before && !unmatched)
			unmatched = w;
	}
	if (outs < ROUNDS)
		fail_msg("%zu switch-outs of the ping/pong threads, want >= %d", outs, ROUNDS);
	if (unmatched)
		fail_msg("only %zu of %zu switch-outs match a sched_switch with the same "
			 "next task; the first not: cpu %u at %llu ns, tid %u to %u (%s)",
			 matched, outs, unmatched->cpu, (unsigned long long)unmatched->time,
			 unmatched->tid, unmatched->other_tid,
			 unmatched_why(&t, tp, unmatched, prev_off, next_off));
	/* a recorder that lost the next task's tid would name -1 often */
	if (to_dead * 100 > outs)
		fail_msg("%zu of %zu switch-outs name the next task -1", to_dead, outs);
	if (to_dead)
		print_message("%zu of %zu switch-outs to an exiting task (tid -1)\n", to_dead, outs);
	trace_free(&t);
}

/* A command target: per-task events that start at exec. */
static void test_command_target(void **state)
{
	char out[256], err[256];
	struct trace t;
	uint32_t wpid;
	size_t own = 0;

	(void)state;
	need_perf();
	path_in_dir(out, sizeof(out), "cmd.prec");
	path_in_dir(err, sizeof(err), "cmd.err");
	{
		char *argv[] = { (char *)perfrec, "record", "-e", "cpu-clock", "-F", "2000", "-g",
				 "-q", "-o", out, "--", pingpong, "200", "300", "3", NULL };

		assert_int_equal(run(argv, err), 3);
	}
	load(out, &t);
	assert_string_equal(t.target, "command");
	wpid = (uint32_t)t.workload_pid;
	for (size_t i = 0; i < t.ns; i++) {
		/* per-task events: nothing but the workload (or a process it
		 * forked, e.g. a sanitizer's helper) is sampled */
		if (t.s[i].pid != wpid && !descends_from(&t, t.s[i].pid, wpid))
			fail_msg("sample of pid %u, not of the workload %u or its children",
				 t.s[i].pid, wpid);
		own += t.s[i].pid == wpid;
	}
	if (own < 100)
		fail_msg("only %zu samples of a 300 ms spin at 2000 Hz", own);
	assert_non_null(find_comm(&t, "pingpong"));
	assert_true(find_comm(&t, "pingpong")->exec);
	assert_non_null(find_comm(&t, "pp-ping"));
	assert_int_equal(t.exit_status, 3);
	trace_free(&t);

	/* a command that does not exist: clear error, non-zero exit */
	{
		char *argv[] = { (char *)perfrec, "record", "-q", "-o", out, "--",
				 "/nonexistent/cmd", NULL };

		assert_int_not_equal(run(argv, err), 0);
		assert_non_null(strstr(slurp(err), "cannot run '/nonexistent/cmd'"));
	}
}

/* --no-symbols: no SymbolTable at all; --symbols-interval: tables are
 * written while recording, not only at the end. */
static void test_symbol_options(void **state)
{
	char out[256], err[256];
	struct trace t;

	(void)state;
	need_perf();
	path_in_dir(out, sizeof(out), "nosym.prec");
	path_in_dir(err, sizeof(err), "nosym.err");
	{
		char *argv[] = { (char *)perfrec, "record", "-e", "cpu-clock", "-F", "2000", "-g",
				 "--no-symbols", "-q", "-o", out, "--", pingpong, "200", "300", "0",
				 NULL };

		assert_int_equal(run(argv, err), 0);
	}
	load(out, &t);
	assert_true(t.end);
	assert_true(t.ns > 0);
	assert_int_equal(t.symtabs, 0);
	trace_free(&t);

	path_in_dir(out, sizeof(out), "symival.prec");
	{
		/* 1.2 s of spinning, symbols every 100 ms: the first tables
		 * go out long before the end */
		char *argv[] = { (char *)perfrec, "record", "-e", "cpu-clock", "-F", "2000", "-g",
				 "--symbols-interval", "100ms", "-q", "-o", out, "--", pingpong,
				 "200", "1200", "0", NULL };

		assert_int_equal(run(argv, err), 0);
	}
	load(out, &t);
	assert_true(t.end);
	assert_true(t.symtabs > 0);
	if (t.first_symtab_time + 500000000ull > t.end_time)
		fail_msg("first SymbolTable %.3f s before the end: not written while recording",
			 (double)(t.end_time - t.first_symtab_time) / 1e9);
	trace_free(&t);

	/* bad values are refused with the option named */
	{
		char *argv[] = { (char *)perfrec, "record", "--symbols-interval", "soon",
				 "-q", "-o", out, "--", "true", NULL };

		assert_int_not_equal(run(argv, err), 0);
		assert_non_null(strstr(slurp(err), "--symbols-interval"));
	}
}

/* {a,b}:S: every sample of the leader carries both members' values, keyed
 * by the members' own kernel ids. */
static void test_leader_sampling(void **state)
{
	char out[256], err[256];
	struct trace t;
	const struct ev *lead, *pf;
	size_t with_read = 0;
	uint64_t last_pf = 0;

	(void)state;
	need_perf();
	path_in_dir(out, sizeof(out), "ls.prec");
	path_in_dir(err, sizeof(err), "ls.err");
	{
		char *argv[] = { (char *)perfrec, "record", "-e", "{cpu-clock,page-faults}:S",
				 "-q", "-o", out, "--", pingpong, "100", "200", "0", NULL };

		assert_int_equal(run(argv, err), 0);
	}
	load(out, &t);
	lead = find_event(&t, "cpu-clock");
	pf = find_event(&t, "page-faults");
	assert_non_null(lead);
	assert_non_null(pf);
	assert_int_equal(t.group_descs, 1);
	for (size_t i = 0; i < t.ns; i++) {
		const struct smp *s = &t.s[i];

		/* members do not sample themselves */
		assert_true(has_id(lead, s->id));
		assert_int_equal(s->nread, 2);
		assert_true(has_id(lead, s->rids[0]));
		assert_true(has_id(pf, s->rids[1]));
		with_read++;
		/* one counter per (thread, cpu) with inherited per-CPU events:
		 * it only grows */
		if (s->cpu == t.s[0].cpu && s->tid == t.s[0].tid &&
		    s->rids[1] == t.s[0].rids[1]) {
			assert_true(s->rvals[1] >= last_pf);
			last_pf = s->rvals[1];
		}
	}
	if (with_read < 50)
		fail_msg("only %zu leader samples", with_read);
	trace_free(&t);
}

/* A recorder killed with SIGKILL leaves a file that reads to its last frame. */
static void test_sigkill_reads_back(void **state)
{
	char out[256], err[256];
	struct trace t;
	pid_t pid;

	(void)state;
	need_perf();
	path_in_dir(out, sizeof(out), "kill.prec");
	path_in_dir(err, sizeof(err), "kill.err");
	{
		char *argv[] = { (char *)perfrec, "record", "-a", "--switch-events", "-q",
				 "--flush-ms", "100", "-o", out, NULL };

		pid = spawn(argv, NULL, err);
	}
	wait_started(out);
	sleep_ms(1500);
	kill(pid, SIGKILL);
	assert_int_equal(wait_code(pid), 128 + SIGKILL);
	load(out, &t);
	assert_true(t.header);
	assert_false(t.end);                 /* never got to write it */
	assert_false(t.st.index_present);
	assert_true(t.st.frames >= 2);
	assert_int_equal(t.st.damaged_frames, 0);
	if (t.ns < 100)
		fail_msg("only %zu samples before the kill", t.ns);
	trace_free(&t);
}

/* SIGINT ends cleanly: session end, index, exit 0. */
static void test_sigint_clean_stop(void **state)
{
	char out[256], err[256];
	struct trace t;
	pid_t pid;

	(void)state;
	need_perf();
	path_in_dir(out, sizeof(out), "int.prec");
	path_in_dir(err, sizeof(err), "int.err");
	{
		char *argv[] = { (char *)perfrec, "record", "-a", "-o", out, NULL };

		pid = spawn(argv, NULL, err);
	}
	wait_started(out);
	sleep_ms(500);
	kill(pid, SIGINT);
	assert_int_equal(wait_code(pid), 0);
	load(out, &t);
	assert_true(t.end);
	assert_string_equal(t.stop_reason, "signal");
	assert_true(t.st.index_present);
	assert_false(t.st.torn);
	assert_int_equal(t.end_samples, t.ns);
	/* the summary line the user sees */
	assert_non_null(strstr(slurp(err), " samples, "));
	/* no switch events were asked for: none are counted */
	assert_null(strstr(slurp(err), "switch events"));
	assert_non_null(strstr(slurp(err), " lost ("));
	trace_free(&t);
}

/* -p: existing process, described from /proc, only its samples. */
static void test_pid_target(void **state)
{
	char out[256], err[256], pidarg[16];
	struct trace t;
	pid_t w;
	bool existing = false;

	(void)state;
	need_perf();
	path_in_dir(out, sizeof(out), "pid.prec");
	path_in_dir(err, sizeof(err), "pid.err");
	{
		/* spins 10 s (killed after): the 0.5 s recording ends
		 * by its duration however slow its startup */
		char *wargv[] = { pingpong, "10", "10000", "0", NULL };

		w = spawn(wargv, NULL, NULL);
	}
	sleep_ms(200);
	snprintf(pidarg, sizeof(pidarg), "%d", (int)w);
	{
		char *argv[] = { (char *)perfrec, "record", "-p", pidarg, "-d", "0.5", "-q",
				 "-o", out, NULL };

		assert_int_equal(run(argv, err), 0);
	}
	kill(w, SIGKILL);
	wait_code(w);
	load(out, &t);
	assert_string_equal(t.stop_reason, "duration");
	for (size_t i = 0; i < t.ns; i++)
		assert_int_equal(t.s[i].pid, (uint32_t)w);
	if (t.ns < 100)
		fail_msg("only %zu samples of a spinning process in 0.5 s", t.ns);
	for (size_t i = 0; i < t.nt; i++)
		if (t.t[i].kind == PERFREC__TASK_EVENT__KIND__EXISTING &&
		    t.t[i].pid == (uint32_t)w && !strcmp(t.t[i].comm, "pingpong"))
			existing = true;
	assert_true(existing);
	trace_free(&t);
}

/* --counters beside sampling: snapshots every interval and a final one,
 * each member's value its own. */
static void test_counters_beside_sampling(void **state)
{
	char out[256], err[256];
	struct trace t;
	const struct ev *cs;
	size_t finals = 0;
	uint64_t last = 0;

	(void)state;
	need_perf();
	path_in_dir(out, sizeof(out), "ctr.prec");
	path_in_dir(err, sizeof(err), "ctr.err");
	{
		char *argv[] = { (char *)perfrec, "record", "-e", "cpu-clock", "--counters",
				 "{task-clock,page-faults,context-switches}", "--interval", "50ms",
				 "-q", "-o", out, "--", pingpong, "3000", "300", "0", NULL };

		if (run(argv, err) != 0)
			fail_msg("perfrec failed: %s", slurp(err));
	}
	load(out, &t);
	assert_int_equal(t.counting_groups, 1);
	cs = find_event(&t, "context-switches");
	assert_non_null(cs);
	assert_non_null(find_event(&t, "cpu-clock"));
	assert_true(t.ng >= 2);
	for (size_t i = 0; i < t.ng; i++) {
		for (size_t k = 0; k < t.g[i].n; k++) {
			if (!has_id(cs, t.g[i].ids[k]))
				continue;
			assert_true(t.g[i].vals[k] >= last);
			last = t.g[i].vals[k];
		}
		finals += t.g[i].final;
	}
	assert_true(finals >= 1);
	/* each round blocks both threads once */
	if (last < 3000)
		fail_msg("context-switches = %llu, want >= 3000", (unsigned long long)last);
	trace_free(&t);
}

static void test_bad_event_string(void **state)
{
	char out[256], err[256];

	(void)state;
	path_in_dir(out, sizeof(out), "bad.prec");
	path_in_dir(err, sizeof(err), "bad.err");
	{
		char *argv[] = { (char *)perfrec, "record", "-e", "cpu-clock,cpu-clok", "-o", out,
				 "--", "/bin/true", NULL };

		assert_int_not_equal(run(argv, err), 0);
	}
	assert_non_null(strstr(slurp(err), "unknown event 'cpu-clok'"));
	assert_non_null(strstr(slurp(err), "perfrec list"));
	{
		char *argv[] = { (char *)perfrec, "record", "-e", "sched:no_such_tracepoint",
				 "-o", out, "--", "/bin/true", NULL };

		assert_int_not_equal(run(argv, err), 0);
	}
	assert_non_null(strstr(slurp(err), "sched:no_such_tracepoint"));
	{
		char *argv[] = { (char *)perfrec, "record", "-F", "9000000", "-o", out,
				 "--", "/bin/true", NULL };

		assert_int_not_equal(run(argv, err), 0);
		assert_non_null(strstr(slurp(err), "perf_event_max_sample_rate"));
	}
	{
		char *argv[] = { (char *)perfrec, "record", "--bogus", NULL };

		assert_int_not_equal(run(argv, err), 0);
		assert_non_null(strstr(slurp(err), "unknown option '--bogus'"));
	}
}

/* A whole file's bytes (malloc'd), *len its size; NULL when missing. */
static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	*len = 0;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Runs argv as uid (0: as we are) and waits; stderr into err. */
static int run_as(char *const argv[], const char *err, uid_t uid)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open("/dev/null", O_WRONLY);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0666);

		if (o < 0 || e < 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		if (uid && (setgid(uid) < 0 || setuid(uid) < 0))
			_exit(125);
		execv(argv[0], argv);
		_exit(127);
	}
	return wait_code(pid);
}

/* A start that fails leaves an existing output byte for byte as it was,
 * and makes no FILE.old: a process that does not exist, a command that
 * cannot run, events the kernel refuses (a tracepoint that does not
 * exist; -a as a user perf_event_paranoid refuses), an output that cannot
 * be written (then the command does not run either). */
static void test_failed_start_keeps_output(void **state)
{
	char sub[256], out[300], old[310], err[300], marker[300], dead[16];
	char *before, *after;
	size_t nb, na;
	pid_t gone;

	(void)state;
	need_perf();
	/* a directory the unprivileged user can write too */
	path_in_dir(sub, sizeof(sub), "keep");
	assert_int_equal(mkdir(sub, 0777), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	assert_int_equal(chmod(dir, 0711), 0);
	snprintf(out, sizeof(out), "%s/u.prec", sub);
	snprintf(old, sizeof(old), "%s.old", out);
	snprintf(err, sizeof(err), "%s/u.err", sub);
	snprintf(marker, sizeof(marker), "%s/ran", sub);
	{
		char *argv[] = { (char *)perfrec, "record", "-q", "-o", out, "--", "/bin/true", NULL };

		assert_int_equal(run(argv, err), 0);
	}
	assert_int_equal(chmod(out, 0666), 0);
	before = read_all(out, &nb);
	assert_non_null(before);
	assert_true(nb > 0);
	/* a pid that just exited and was reaped: no such process */
	gone = fork();
	assert_true(gone >= 0);
	if (gone == 0)
		_exit(0);
	wait_code(gone);
	snprintf(dead, sizeof(dead), "%d", (int)gone);
	{
		char *a1[] = { (char *)perfrec, "record", "-p", dead, "-o", out, NULL };
		char *a2[] = { (char *)perfrec, "record", "-o", out, "--", "/nonexistent/cmd", NULL };
		char *a3[] = { (char *)perfrec, "record", "-e", "sched:no_such_tracepoint", "-o", out,
			       "--", "/bin/true", NULL };
		char *a4[] = { (char *)perfrec, "record", "-a", "-d", "1", "-o", out, NULL };
		char *a5[] = { (char *)perfrec, "record", "-o", "/nonexistent/dir/u.prec", "--",
			       "/usr/bin/touch", marker, NULL };
		struct { char **argv; uid_t uid; const char *says; } c[] = {
			{ a1, 0, dead }, { a2, 0, "/nonexistent/cmd" },
			{ a3, 0, "no_such_tracepoint" }, { a4, 65534, "perf_event_paranoid" },
			{ a5, 0, "/nonexistent/dir" },
		};
		int paranoid = 2;
		FILE *pf = fopen("/proc/sys/kernel/perf_event_paranoid", "r");

		if (pf) {
			if (fscanf(pf, "%d", &paranoid) != 1)
				paranoid = 2;
			fclose(pf);
		}
		for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
			if (c[i].uid && paranoid < 1) {
				fprintf(stderr, "SKIP: -a as uid %d: perf_event_paranoid %d lets it "
					"record\n", (int)c[i].uid, paranoid);
				continue;
			}
			if (run_as(c[i].argv, err, c[i].uid) == 0)
				fail_msg("case %zu (%s) started", i, c[i].says);
			if (!strstr(slurp(err), c[i].says))
				fail_msg("case %zu: the error does not name %s: %s", i, c[i].says,
					 slurp(err));
			after = read_all(out, &na);
			if (!after || na != nb || memcmp(before, after, nb))
				fail_msg("case %zu (%s): %s changed (%zu bytes, was %zu): %s", i,
					 c[i].says, out, na, nb, slurp(err));
			free(after);
			if (access(old, F_OK) == 0)
				fail_msg("case %zu (%s): %s appeared", i, c[i].says, old);
		}
	}
	if (access(marker, F_OK) == 0)
		fail_msg("the command ran although the output cannot be written");
	free(before);
}

/* A tracefs mounted 0700 (the kernel's default) is not "unmounted" for a
 * user who may not search it: the message says what is wrong and the
 * fixes (remount mode=755, or the privilege). */
static void test_tracefs_not_readable(void **state)
{
	char out[256], err[256];
	struct stat st;

	(void)state;
	if (stat("/sys/kernel/tracing/events", &st) < 0 || stat("/sys/kernel/tracing", &st) < 0 ||
	    (st.st_mode & S_IXOTH)) {
		fprintf(stderr, "SKIP: /sys/kernel/tracing is not a tracefs others may not "
			"search (mode 0%o)\n", (unsigned)(st.st_mode & 07777));
		skip();
	}
	/* a directory the unprivileged user can write its stderr into */
	path_in_dir(out, sizeof(out), "tp");
	assert_int_equal(mkdir(out, 0777), 0);
	assert_int_equal(chmod(out, 0777), 0);
	assert_int_equal(chmod(dir, 0711), 0);
	path_in_dir(out, sizeof(out), "tp/tp.prec");
	path_in_dir(err, sizeof(err), "tp/tp.err");
	{
		char *argv[] = { (char *)perfrec, "record", "-e", "sched:sched_switch", "-o", out,
				 "--", "/bin/true", NULL };

		assert_int_not_equal(run_as(argv, err, 65534), 0);
	}
	if (strstr(slurp(err), "not mounted") || !strstr(slurp(err), "mode=755") ||
	    !strstr(slurp(err), "/sys/kernel/tracing"))
		fail_msg("unhelpful message: %s", slurp(err));
}

/* -o -: the trace goes to standard output (a file here) and reads back;
 * the recorded command's own output goes to standard error, not into the
 * trace. */
static void test_output_stdout(void **state)
{
	char out[256], err[256];
	struct trace t;
	bool had_dash = access("-", F_OK) == 0;   /* in the working directory */

	(void)state;
	need_perf();
	path_in_dir(out, sizeof(out), "stdout.prec");
	path_in_dir(err, sizeof(err), "stdout.err");
	{
		char *argv[] = { (char *)perfrec, "record", "-o", "-", "--", "/bin/echo",
				 "said-by-the-workload", NULL };

		assert_int_equal(wait_code(spawn(argv, out, err)), 0);
	}
	assert_non_null(strstr(slurp(err), "said-by-the-workload"));
	assert_non_null(strstr(slurp(err), "written to standard output"));
	assert_null(strstr(slurp(out), "said-by-the-workload"));
	if (!had_dash && access("-", F_OK) == 0)
		fail_msg("a file named '-' was written");
	load(out, &t);
	assert_true(t.header);
	assert_true(t.end);
	assert_string_equal(t.workload0, "/bin/echo");
	assert_true(t.st.index_present);
	assert_false(t.st.torn);
	trace_free(&t);
}

/* A full disk ends the recording with a clear error; the file still reads
 * up to its last complete frame. */
static void test_disk_full(void **state)
{
	char mnt[200], out[256], err[256];
	struct trace t;
	pid_t busy;
	int code;

	(void)state;
	need_perf();
	path_in_dir(mnt, sizeof(mnt), "tiny");
	assert_int_equal(mkdir(mnt, 0755), 0);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=256k") < 0) {
		if (getenv("CI"))
			fail_msg("cannot mount a small tmpfs: %s", strerror(errno));
		fprintf(stderr, "SKIP: mounting a tmpfs needs root\n");
		skip();
	}
	snprintf(out, sizeof(out), "%s/full.prec", mnt);
	path_in_dir(err, sizeof(err), "full.err");
	/* An idle host may not fill even 256 KiB in 20 s: a ping-pong beside
	 * the recording makes context switches until perfrec hits the limit. */
	busy = fork();
	assert_true(busy >= 0);
	if (busy == 0) {
		execl(pingpong, pingpong, "100000000", "0", (char *)NULL);
		_exit(127);
	}
	{
		char *argv[] = { (char *)perfrec, "record", "-a", "-g", "--switch-events",
				 "--flush-ms", "50", "-o", out, "-d", "20", NULL };

		code = run(argv, err);
	}
	kill(busy, SIGKILL);
	waitpid(busy, NULL, 0);
	assert_int_not_equal(code, 0);
	assert_non_null(strstr(slurp(err), "disk full while writing"));
	assert_non_null(strstr(slurp(err), "No space left on device"));
	load(out, &t);
	assert_true(t.header);
	assert_true(t.ns > 0);
	assert_int_equal(t.st.damaged_frames, 0);
	trace_free(&t);
	assert_int_equal(umount(mnt), 0);
}

static void test_list(void **state)
{
	char out[256];
	pid_t pid;

	(void)state;
	path_in_dir(out, sizeof(out), "list.out");
	{
		char *argv[] = { (char *)perfrec, "list", NULL };

		pid = spawn(argv, out, NULL);
		assert_int_equal(wait_code(pid), 0);
	}
	assert_non_null(strstr(slurp(out), "cpu-clock"));
	assert_non_null(strstr(slurp(out), "context-switches"));
	assert_non_null(strstr(slurp(out), "software"));
	need_perf();   /* tracefs: root */
	{
		char *argv[] = { (char *)perfrec, "list", "sched_switch", NULL };

		pid = spawn(argv, out, NULL);
		assert_int_equal(wait_code(pid), 0);
	}
	assert_non_null(strstr(slurp(out), "sched:sched_switch"));
	assert_null(strstr(slurp(out), "cpu-clock"));
}

/* -C: only that CPU's ring, only its samples. */
static void test_cpu_list(void **state)
{
	char out[256], err[256];
	struct trace t;
	const struct ev *e;

	(void)state;
	need_perf();
	path_in_dir(out, sizeof(out), "cpu.prec");
	path_in_dir(err, sizeof(err), "cpu.err");
	{
		char *argv[] = { (char *)perfrec, "record", "-C", "0", "-F", "1000", "-q", "-o",
				 out, "--", pingpong, "100", "300", "0", NULL };

		if (run(argv, err) != 0)
			fail_msg("perfrec failed: %s", slurp(err));
	}
	load(out, &t);
	assert_string_equal(t.target, "cpus 0");
	e = find_event(&t, "cpu-clock");
	assert_non_null(e);
	assert_int_equal(e->nids, 1);
	/* 300 ms at 1000 Hz; the workload may run on another CPU, so only
	 * ask for a few */
	assert_true(t.ns >= 20);
	for (size_t i = 0; i < t.ns; i++)
		assert_int_equal(t.s[i].cpu, 0);
	trace_free(&t);
	{
		char *argv[] = { (char *)perfrec, "record", "-C", "4096", "-q", "-o", out,
				 "-d", "0.1", NULL };

		assert_int_not_equal(run(argv, err), 0);
		assert_non_null(strstr(slurp(err), "cpu 4096 is not online"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_event_string),
		cmocka_unit_test(test_pingpong_system_wide),
		cmocka_unit_test(test_command_target),
		cmocka_unit_test(test_symbol_options),
		cmocka_unit_test(test_leader_sampling),
		cmocka_unit_test(test_sigkill_reads_back),
		cmocka_unit_test(test_sigint_clean_stop),
		cmocka_unit_test(test_pid_target),
		cmocka_unit_test(test_counters_beside_sampling),
		cmocka_unit_test(test_disk_full),
		cmocka_unit_test(test_failed_start_keeps_output),
		cmocka_unit_test(test_output_stdout),
		cmocka_unit_test(test_tracefs_not_readable),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_cpu_list),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
