/*
 * test_outputs.c - a recording's outputs (recorder/recording/outputs.c)
 * over synthetic rings (memsource.h), in a temp directory:
 *
 *   - keep runs over one list: the earlier runs' files the driver gives,
 *     then the outputs made; a file whose path holds another file leaves
 *     the list untouched, the oldest beyond keep are deleted, and the
 *     driver is told of both (hooks.forgotten), in that order;
 *   - a file of the newest removed by hand does not count: keep still
 *     leaves `keep` files;
 *   - the stream is the driver's: one opened per output under the file's
 *     name, it carries the same bytes as the file (a tee), its drops
 *     become a SENDER_DROPPED loss in the trace, a rotated-out stream is
 *     finished and freed, and a stream alone is named by where it goes.
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
#include <sys/stat.h>
#include <unistd.h>

#include "format/reader.h"
#include "recorder/recording/outputs.h"
#include "unit/recorder/recording/memsource.h"
#include "lib/logcap.h"

#define NCPU 2
static const int cpus[NCPU] = { 0, 1 };

struct fixture {
	char dir[64], stem[128];
	struct memsource m;
	struct rec_recording_opts ro;
	struct rec_recording *r;
	struct rec_outputs *out;
	char forgotten[8][PATH_MAX];
	size_t nforgotten;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct rec_recording_opts ro = REC_RECORDING_OPTS_INIT;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/perfrec-outputs-XXXXXX");
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
	logcap_install();
	*state = f;
	return 0;
}

/* The files in dir whose names start with prefix, in name order. */
static size_t count(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	DIR *d = opendir(f->dir);
	struct dirent *e;
	char p[PATH_MAX];

	rec_recording_free(f->r);
	rec_outputs_free(f->out);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", f->dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(f->dir);
	memsource_free(&f->m.pub);
	free(f);
	return 0;
}

static void forgotten(void *ctx, const char *path)
{
	struct fixture *f = ctx;

	assert_true(f->nforgotten < 8);
	snprintf(f->forgotten[f->nforgotten++], PATH_MAX, "%s", path);
}

/* The outputs of oo and a recording into them, started. */
static void start(struct fixture *f, struct rec_outputs_opts *oo)
{
	assert_int_equal(rec_outputs_new(oo, &f->out), 0);
	assert_int_equal(rec_recording_new(&f->ro, rec_outputs_sink(f->out),
					   rec_outputs_name(f->out), &f->r), 0);
	assert_int_equal(rec_recording_start(f->r), 0);
	assert_int_equal(rec_outputs_started(f->out), 0);
}

static void rotate(struct fixture *f, char *done)
{
	assert_int_equal(rec_outputs_rotate(f->out, f->r, done, PATH_MAX), 0);
}

static void stop(struct fixture *f)
{
	assert_int_equal(rec_recording_stop(f->r, "test"), 0);
	assert_int_equal(rec_outputs_finish(f->out), 0);
}

static void make_file(const char *path, struct stat *st)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs("an earlier run's output\n", fp);
	fclose(fp);
	assert_int_equal(stat(path, st), 0);
}

static void test_keep_earlier(void **state)
{
	struct fixture *f = *state;
	struct rec_outputs_opts oo = REC_OUTPUTS_OPTS_INIT;
	struct rec_outputs_file earlier[2];
	char e1[PATH_MAX], e2[PATH_MAX], other[PATH_MAX], done[PATH_MAX];
	struct stat st1, st2;

	/* e1: an earlier run's output; e2: its path now holds another file
	 * (the inode listed is other's) */
	snprintf(e1, sizeof(e1), "%s.19990101-000000.0001.prec", f->stem);
	snprintf(e2, sizeof(e2), "%s.19990101-000000.0002.prec", f->stem);
	snprintf(other, sizeof(other), "%s/other", f->dir);
	make_file(e1, &st1);
	make_file(e2, &st2);
	make_file(other, &st2);
	earlier[0] = (struct rec_outputs_file){ e1, st1.st_dev, st1.st_ino };
	earlier[1] = (struct rec_outputs_file){ e2, st2.st_dev, st2.st_ino };
	oo.stem = f->stem;
	oo.keep = 2;
	oo.earlier = earlier;
	oo.nearlier = 2;
	oo.hooks.ctx = f;
	oo.hooks.forgotten = forgotten;
	start(f, &oo);
	/* [e1, e2, first]: e2 is not ours and leaves the list; 2 remain */
	assert_int_equal(f->nforgotten, 1);
	assert_string_equal(f->forgotten[0], e2);
	assert_int_equal(access(e1, F_OK), 0);
	rotate(f, done);
	/* [e1, first, second]: e1 is the oldest beyond 2 */
	assert_int_equal(f->nforgotten, 2);
	assert_string_equal(f->forgotten[1], e1);
	assert_int_equal(access(e1, F_OK), -1);
	assert_int_equal(access(e2, F_OK), 0);      /* not ours: untouched */
	assert_int_equal(access(done, F_OK), 0);
	stop(f);
	assert_int_equal(count(f->dir, "s.2"), 2);   /* this run's two */
	assert_non_null(strstr(logcap_all(), "keeping the newest 2"));
}

static void test_keep_counts_what_is_there(void **state)
{
	struct fixture *f = *state;
	struct rec_outputs_opts oo = REC_OUTPUTS_OPTS_INIT;
	char first[PATH_MAX], second[PATH_MAX];

	oo.stem = f->stem;
	oo.keep = 3;
	oo.hooks.ctx = f;
	oo.hooks.forgotten = forgotten;
	start(f, &oo);
	rotate(f, first);
	rotate(f, second);
	/* first, second, third (current); the user deletes second */
	assert_int_equal(unlink(second), 0);
	rotate(f, second);
	/* second left the list: first, third and fourth are the newest 3 */
	assert_int_equal(f->nforgotten, 1);
	assert_int_equal(access(first, F_OK), 0);
	assert_int_equal(count(f->dir, "s."), 3);
	stop(f);
}

/* ---- a stream of the driver's: memory, its drops on request */

struct fake_stream {
	struct prec_sink *mem;
	char id[128];
	size_t index;
};

static struct {
	size_t opens, finishes, frees;
	bool opened_with_id[4];
	size_t bytes[4];               /* at free */
	bool drop;                     /* the next record_drops reports one */
} fs;

static int fake_open(void *ctx, const char *id, void **stream)
{
	struct fake_stream *s = calloc(1, sizeof(*s));

	(void)ctx;
	assert_non_null(s);
	assert_true(fs.opens < 4);
	s->mem = prec_sink_mem_new();
	s->index = fs.opens;
	fs.opened_with_id[fs.opens++] = id != NULL;
	snprintf(s->id, sizeof(s->id), "%s", id ? id : "generated");
	*stream = s;
	return 0;
}

static struct prec_sink *fake_sink(void *stream)
{
	return ((struct fake_stream *)stream)->mem;
}

static const char *fake_id(void *stream)
{
	return ((struct fake_stream *)stream)->id;
}

static int fake_record_drops(void *stream, struct rec_recording *r, char *why, size_t len)
{
	int ret;

	(void)stream;
	if (!fs.drop)
		return 0;
	fs.drop = false;
	snprintf(why, len, "the fake stream dropped a frame");
	ret = rec_recording_write_loss(r, PERFREC__LOSS__KIND__SENDER_DROPPED, 3, why);
	return ret < 0 ? ret : 1;
}

static int fake_finish(void *stream, uint32_t timeout_ms)
{
	(void)stream;
	(void)timeout_ms;
	fs.finishes++;
	return 0;
}

static void fake_free(void *stream)
{
	struct fake_stream *s = stream;

	prec_sink_mem_data(s->mem, &fs.bytes[s->index]);
	prec_sink_free(s->mem);
	free(s);
	fs.frees++;
}

static const struct rec_outputs_stream fake = {
	.where = "collector:1234",
	.open = fake_open,
	.sink = fake_sink,
	.id = fake_id,
	.record_drops = fake_record_drops,
	.finish = fake_finish,
	.free = fake_free,
};

static size_t sender_losses(const char *path)
{
	struct prec_reader *r = prec_reader_open(path, NULL);
	struct prec_packet p;
	size_t n = 0;
	int ret;

	assert_non_null(r);
	while ((ret = prec_reader_next_packet(r, &p)) > 0)
		n += p.pkt->data_case == PERFREC__PACKET__DATA_LOSS &&
		     p.pkt->loss->kind == PERFREC__LOSS__KIND__SENDER_DROPPED;
	assert_int_equal(ret, 0);
	prec_reader_free(r);
	return n;
}

static void test_stream(void **state)
{
	struct fixture *f = *state;
	struct rec_outputs_opts oo = REC_OUTPUTS_OPTS_INIT;
	struct rec_outputs_status os;
	char first[PATH_MAX], id[PATH_MAX];
	const char *base;
	struct stat st;

	memset(&fs, 0, sizeof(fs));
	oo.stem = f->stem;
	oo.to = &fake;
	start(f, &oo);
	assert_int_equal(fs.opens, 1);
	assert_true(fs.opened_with_id[0]);
	/* the stream is named after its file */
	rec_outputs_status(f->out, &os);
	base = strrchr(os.current_file, '/') + 1;
	snprintf(id, sizeof(id), "%s", fake_id(os.stream));
	assert_int_equal(strncmp(base, id, strlen(id)), 0);
	assert_string_equal(base + strlen(id), ".prec");
	fs.drop = true;
	assert_int_equal(rec_outputs_step(f->out, f->r), 0);
	assert_non_null(strstr(logcap_all(), "the fake stream dropped a frame"));
	rotate(f, first);
	assert_int_equal(fs.opens, 2);
	stop(f);
	/* the first stream finished in its thread, the second at finish();
	 * the first was freed when finish() joined it */
	assert_int_equal(fs.finishes, 2);
	assert_int_equal(fs.frees, 1);
	/* the tee: the first stream carried the first file's bytes */
	assert_int_equal(stat(first, &st), 0);
	assert_int_equal(fs.bytes[0], (size_t)st.st_size);
	assert_int_equal(sender_losses(first), 1);
	rec_outputs_free(f->out);
	f->out = NULL;
	assert_int_equal(fs.frees, 2);
}

static void test_stream_alone(void **state)
{
	struct fixture *f = *state;
	struct rec_outputs_opts oo = REC_OUTPUTS_OPTS_INIT;

	memset(&fs, 0, sizeof(fs));
	oo.to = &fake;
	start(f, &oo);
	/* no file and no name: the stream names itself, the output is
	 * called by where it goes */
	assert_false(fs.opened_with_id[0]);
	assert_string_equal(rec_outputs_name(f->out), "collector:1234");
	stop(f);
	assert_int_equal(count(f->dir, ""), 2);   /* "." and "..": no file */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keep_earlier, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keep_counts_what_is_there, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_alone, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
