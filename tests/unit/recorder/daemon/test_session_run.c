/*
 * test_session_run.c - a daemon session (recorder/daemon/session_run.c) over
 * synthetic rings (memsource.h), writing into a temp directory: files
 * rotated by size and on request each read alone and together hold every
 * record once; --keep deletes the oldest, only of the files its session
 * made (this run's and, through its manifest, its earlier runs'; never a
 * file of its pattern it did not make, nor another session's on the same
 * stem); a flight session's snapshot
 * reads alone, says what it dropped, and the session goes on; options that
 * cannot work are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pthread.h>
#include <sys/stat.h>

#include "format/reader.h"
#include "recorder/daemon/session_run.h"
#include "recorder/net/collector.h"
#include "unit/recorder/recording/memsource.h"
#include "lib/logcap.h"

#define NCPU 2
static const int cpus[NCPU] = { 0, 1 };

struct fileinfo {
	size_t headers, ends, switches, flight_losses;
	int index_present;
};

static void read_file(const char *path, struct fileinfo *fi)
{
	struct prec_reader *r = prec_reader_open(path, NULL);
	struct prec_reader_stats st;
	struct prec_packet p;
	int ret;

	memset(fi, 0, sizeof(*fi));
	assert_non_null(r);
	while ((ret = prec_reader_next_packet(r, &p)) > 0) {
		switch (p.pkt->data_case) {
		case PERFREC__PACKET__DATA_HEADER:
			fi->headers++;
			break;
		case PERFREC__PACKET__DATA_SESSION_END:
			fi->ends++;
			break;
		case PERFREC__PACKET__DATA_CONTEXT_SWITCH:
			fi->switches++;
			break;
		case PERFREC__PACKET__DATA_LOSS:
			if (p.pkt->loss->kind == PERFREC__LOSS__KIND__FLIGHT_DROPPED)
				fi->flight_losses++;
			break;
		default:
			break;
		}
	}
	assert_int_equal(ret, 0);
	prec_reader_stats(r, &st);
	fi->index_present = st.index_present;
	assert_false(st.torn);
	assert_int_equal(st.damaged_frames, 0);
	prec_reader_free(r);
}

/* The session's files in dir (name order = time order), *n of them. */
static char **list(const char *dir, const char *prefix, size_t *n)
{
	struct dirent **ents;
	char **v;
	int k = scandir(dir, &ents, NULL, versionsort);

	assert_true(k >= 0);
	v = calloc((size_t)k + 1, sizeof(*v));
	*n = 0;
	for (int i = 0; i < k; i++) {
		if (!strncmp(ents[i]->d_name, prefix, strlen(prefix)))
			assert_true(asprintf(&v[(*n)++], "%s/%s", dir, ents[i]->d_name) > 0);
		free(ents[i]);
	}
	free(ents);
	return v;
}

static void list_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

struct fixture {
	char dir[64], stem[128];
	struct memsource m;
	struct rec_recording_opts ro;
	struct rec_session_run_opts so;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct rec_recording_opts ro = REC_RECORDING_OPTS_INIT;
	struct rec_session_run_opts so = REC_SESSION_RUN_OPTS_INIT;

	snprintf(f->dir, sizeof(f->dir), "/tmp/perfrec-session-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->stem, sizeof(f->stem), "%s/s", f->dir);
	memsource_init(&f->m);
	f->ro = ro;
	f->ro.source = &f->m.pub;
	f->ro.target = REC_TARGET_CPUS;
	f->ro.cpus = cpus;
	f->ro.ncpus = NCPU;
	f->ro.no_symbols = true;
	f->ro.proc_root = "";
	f->ro.flush_ms = 20;
	f->ro.frame_size = 4096;
	f->so = so;
	f->so.name = "s";
	f->so.rec = &f->ro;
	f->so.stem = f->stem;
	logcap_install();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	size_t n;
	char **v = list(f->dir, "", &n);

	for (size_t i = 0; i < n; i++)
		unlink(v[i]);
	list_free(v, n);
	rmdir(f->dir);
	memsource_free(&f->m.pub);
	free(f);
	return 0;
}

/* n switches on every cpu from time t0 (irregular times and tasks, so
 * they do not compress to nothing); steps whenever a ring is full. */
static void put(struct fixture *f, struct rec_session_run *s, uint64_t t0, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		uint32_t task = 100 + (uint32_t)(k * 7919 % 4099);
		uint64_t t = t0 + k * 1000 + k * k % 997;

		for (size_t i = 0; i < NCPU; i++)
			while (memsource_switch(&f->m, i, t, task, task + (uint32_t)i, k & 1) < 0)
				assert_true(rec_session_run_step(s, 5) > 0);
	}
}

/* Steps until the session has taken `records` records. */
static void drain(struct rec_session_run *s, uint64_t records)
{
	struct rec_session_run_status st;

	for (int i = 0; i < 2000; i++) {
		rec_session_run_status(s, &st);
		if (st.rs.st.records >= records)
			return;
		assert_true(rec_session_run_step(s, 5) > 0);
	}
	fail_msg("only %llu of %llu records taken", (unsigned long long)st.rs.st.records,
		 (unsigned long long)records);
}

static void test_rotation(void **state)
{
	struct fixture *f = *state;
	struct rec_session_run *s;
	struct rec_session_run_status st;
	struct fileinfo fi;
	char done[PATH_MAX], first[PATH_MAX];
	size_t n, total = 0;
	char **files;

	f->so.rotate_bytes = 6000;   /* a few frames each */
	assert_int_equal(rec_session_run_new(&f->so, &s), 0);
	assert_int_equal(rec_session_run_start(s), 0);
	rec_session_run_status(s, &st);
	snprintf(first, sizeof(first), "%s", st.current_file);
	assert_non_null(strstr(first, "/s."));
	put(f, s, 1000, 3000);
	drain(s, 2 * 3000);
	/* and one on request */
	assert_int_equal(rec_session_run_rotate(s, done, sizeof(done)), 0);
	rec_session_run_status(s, &st);
	assert_string_not_equal(done, st.current_file);
	put(f, s, 100000, 500);
	drain(s, 2 * 3500);
	assert_int_equal(rec_session_run_stop(s, "test"), 0);
	rec_session_run_status(s, &st);
	assert_true(st.rs.outputs >= 3);
	rec_session_run_free(s);

	files = list(f->dir, "s.", &n);
	assert_int_equal(n, st.rs.outputs);
	assert_string_equal(files[0], first);
	for (size_t i = 0; i < n; i++) {
		read_file(files[i], &fi);
		assert_int_equal(fi.headers, 1);   /* each reads alone */
		assert_int_equal(fi.ends, 1);
		assert_true(fi.index_present);
		total += fi.switches;
	}
	assert_int_equal(total, 2 * 3500);     /* every record once */
	list_free(files, n);
}

static void test_keep(void **state)
{
	struct fixture *f = *state;
	struct rec_session_run *s;
	char done[PATH_MAX];
	size_t n;
	char **files;

	f->so.keep = 2;
	assert_int_equal(rec_session_run_new(&f->so, &s), 0);
	assert_int_equal(rec_session_run_start(s), 0);
	for (int i = 0; i < 5; i++) {
		put(f, s, 1000 + (uint64_t)i * 100, 50);
		drain(s, 2 * 50 * ((uint64_t)i + 1));
		assert_int_equal(rec_session_run_rotate(s, done, sizeof(done)), 0);
	}
	files = list(f->dir, "s.", &n);
	assert_int_equal(n, 2);
	list_free(files, n);
	assert_non_null(strstr(logcap_all(), "keeping the newest 2"));
	assert_int_equal(rec_session_run_stop(s, "test"), 0);
	rec_session_run_free(s);
}

/* One run of session name on f's stem: started, rotated `rotations`
 * times, stopped. */
static void keep_run(struct fixture *f, const char *name, unsigned keep, int rotations)
{
	struct rec_session_run *s;
	char done[PATH_MAX];

	/* a fresh source per run (one open each) */
	memsource_free(&f->m.pub);
	memsource_init(&f->m);
	f->so.name = name;
	f->so.keep = keep;
	assert_int_equal(rec_session_run_new(&f->so, &s), 0);
	assert_int_equal(rec_session_run_start(s), 0);
	for (int i = 0; i < rotations; i++)
		assert_int_equal(rec_session_run_rotate(s, done, sizeof(done)), 0);
	assert_int_equal(rec_session_run_stop(s, "test"), 0);
	rec_session_run_free(s);
}

static void test_keep_own_files(void **state)
{
	struct fixture *f = *state;
	char mdir[256], planted[PATH_MAX], path[PATH_MAX];
	size_t n;
	char **files;
	FILE *fp;

	snprintf(mdir, sizeof(mdir), "%s/.manifests", f->dir);
	f->so.manifest_dir = mdir;
	/* a file of the session's pattern it did not make */
	snprintf(planted, sizeof(planted), "%s/s.20000101-000000.0001.prec", f->dir);
	fp = fopen(planted, "w");
	assert_non_null(fp);
	fclose(fp);
	keep_run(f, "s", 2, 3);              /* 4 made, 2 kept */
	files = list(f->dir, "s.", &n);
	assert_int_equal(n, 3);              /* + the planted one */
	list_free(files, n);
	assert_int_equal(access(planted, F_OK), 0);
	/* the next run of s deletes its previous run's oldest */
	keep_run(f, "s", 2, 0);
	files = list(f->dir, "s.", &n);
	assert_int_equal(n, 3);
	list_free(files, n);
	assert_int_equal(access(planted, F_OK), 0);
	/* another session on the same stem never deletes s's files */
	keep_run(f, "t", 1, 2);
	files = list(f->dir, "s.", &n);
	assert_int_equal(n, 4);              /* s's 2, the planted one, t's newest */
	list_free(files, n);
	/* a garbled manifest counts as none: s's earlier files are left
	 * alone, its new run keeps its own newest */
	snprintf(path, sizeof(path), "%s/s.manifest", mdir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("\x0a\x05garbage and more", fp);
	fclose(fp);
	keep_run(f, "s", 1, 2);
	files = list(f->dir, "s.", &n);
	assert_int_equal(n, 5);
	list_free(files, n);
	assert_non_null(strstr(logcap_all(), "is not a manifest of session s"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/t.manifest", mdir);
	unlink(path);
	rmdir(mdir);
}

static void test_flight(void **state)
{
	struct fixture *f = *state;
	struct rec_session_run *s;
	struct rec_session_run_status st;
	struct fileinfo fi;
	char path[PATH_MAX], written[PATH_MAX], done[PATH_MAX];

	f->so.flight_bytes = 16384;
	assert_int_equal(rec_session_run_new(&f->so, &s), 0);
	assert_int_equal(rec_session_run_start(s), 0);
	put(f, s, 1000, 5000);
	drain(s, 2 * 5000);
	rec_session_run_status(s, &st);
	assert_true(st.flight);
	assert_true(st.fl.dropped_frames > 0);
	assert_string_equal(st.current_file, "");
	assert_int_equal(rec_session_run_rotate(s, done, sizeof(done)), -EINVAL);

	snprintf(path, sizeof(path), "%s/snap.prec", f->dir);
	assert_int_equal(rec_session_run_snapshot(s, path, written, sizeof(written)), 0);
	assert_string_equal(written, path);
	read_file(path, &fi);
	assert_int_equal(fi.headers, 1);
	assert_int_equal(fi.ends, 1);
	assert_true(fi.index_present);
	assert_int_equal(fi.flight_losses, 1);
	assert_true(fi.switches > 0 && fi.switches < 2 * 5000);
	/* never over a file */
	assert_int_equal(rec_session_run_snapshot(s, path, written, sizeof(written)), -EEXIST);

	/* the session goes on, into a fresh buffer */
	put(f, s, 50000, 100);
	drain(s, 2 * 5100);
	assert_int_equal(rec_session_run_snapshot(s, NULL, written, sizeof(written)), 0);
	assert_non_null(strstr(written, ".snapshot.prec"));
	read_file(written, &fi);
	assert_int_equal(fi.headers, 1);
	assert_int_equal(fi.switches, 2 * 100);   /* nothing dropped: all of it */
	assert_int_equal(fi.flight_losses, 0);
	rec_session_run_status(s, &st);
	assert_int_equal(st.snapshots, 2);
	assert_int_equal(rec_session_run_stop(s, "test"), 0);
	rec_session_run_free(s);
}

static void test_refused(void **state)
{
	struct fixture *f = *state;
	struct rec_session_run *s;
	char done[PATH_MAX];

	f->so.stem = NULL;   /* no file, no stream, no flight */
	assert_int_equal(rec_session_run_new(&f->so, &s), -EINVAL);
	assert_non_null(strstr(logcap_err(), "has no output"));
	f->so.stem = f->stem;
	f->so.flight_bytes = 65536;
	f->so.rotate_ns = 1000000000ull;
	assert_int_equal(rec_session_run_new(&f->so, &s), -EINVAL);
	f->so.rotate_ns = 0;
	f->so.flight_bytes = 0;
	/* a snapshot of a file session */
	assert_int_equal(rec_session_run_new(&f->so, &s), 0);
	assert_int_equal(rec_session_run_start(s), 0);
	assert_int_equal(rec_session_run_snapshot(s, NULL, done, sizeof(done)), -EINVAL);
	assert_int_equal(rec_session_run_stop(s, "test"), 0);
	assert_int_equal(rec_session_run_stop(s, "again"), 0);   /* idempotent */
	assert_int_equal(rec_session_run_rotate(s, done, sizeof(done)), -EINVAL);
	rec_session_run_free(s);
}

static void *serve(void *arg)
{
	rec_collector_run(arg);
	return NULL;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)n + 1);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* Files and a collector at once: each output is a stream of its own,
 * named like its file, archived byte for byte the same. */
static void test_streams(void **state)
{
	struct fixture *f = *state;
	struct rec_collector_opts co = REC_COLLECTOR_OPTS_INIT;
	struct rec_sender_opts to = REC_SENDER_OPTS_INIT;
	struct rec_collector *c;
	struct rec_session_run *s;
	char arch[128], listen[64], done[PATH_MAX], path[PATH_MAX];
	pthread_t th;
	size_t n;
	char **files;

	snprintf(arch, sizeof(arch), "%s/arch", f->dir);
	assert_int_equal(mkdir(arch, 0700), 0);
	co.listen = "127.0.0.1:0";
	co.dir = arch;
	assert_int_equal(rec_collector_new(&co, &c), 0);
	assert_int_equal(pthread_create(&th, NULL, serve, c), 0);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", rec_collector_port(c));
	to.to = listen;
	to.host = "testhost";
	f->so.to = &to;
	assert_int_equal(rec_session_run_new(&f->so, &s), 0);
	assert_int_equal(rec_session_run_start(s), 0);
	for (int i = 0; i < 2; i++) {
		put(f, s, 1000 + (uint64_t)i * 100000, 300);
		drain(s, 2 * 300 * ((uint64_t)i + 1));
		assert_int_equal(rec_session_run_rotate(s, done, sizeof(done)), 0);
	}
	put(f, s, 500000, 300);
	drain(s, 2 * 900);
	assert_int_equal(rec_session_run_stop(s, "test"), 0);   /* waits for the acks */
	rec_session_run_free(s);
	rec_collector_stop(c);
	pthread_join(th, NULL);
	rec_collector_free(c);

	files = list(f->dir, "s.", &n);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++) {
		const char *base = strrchr(files[i], '/') + 1;
		unsigned char *a, *b;
		size_t la, lb;

		snprintf(path, sizeof(path), "%s/testhost/%s", arch, base);
		a = slurp(files[i], &la);
		b = slurp(path, &lb);
		assert_int_equal(la, lb);
		assert_memory_equal(a, b, la);
		free(a);
		free(b);
		unlink(path);
	}
	list_free(files, n);
	snprintf(path, sizeof(path), "%s/testhost", arch);
	rmdir(path);
	rmdir(arch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rotation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keep_own_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_streams, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
