/*
 * test_archive_file.c - resuming a session file (recorder/net/archive_file.c) after
 * disk damage: every record already in the file was acknowledged, so a
 * damaged byte anywhere in one (frame info, its size field, its magic, the
 * data frame) costs that frame alone: the file keeps its size, the next
 * record's number is right, the damage is logged by offset, appending goes
 * on and the whole trace reads. Only a real torn tail is cut; damage that
 * hides the record count refuses the resume and leaves the file as it is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/layout.h"
#include "format/reader.h"
#include "recorder/net/archive_file.h"
#include "lib/logcap.h"
#include "unit/recorder/net/streamtest.h"

#define MAXREC 4096
#define INFO_LEN (PREC_SKIP_HDR + PREC_INFO_SIZE)

struct fixture {
	char *dir;
	struct prec_sink *trace;
	const unsigned char *buf;
	size_t len, nrec, k;      /* k: records in the file before the damage */
	size_t off[MAXREC];
	char path[512];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->dir = st_tmpdir();
	f->trace = st_trace(3000, 2048);
	f->buf = prec_sink_mem_data(f->trace, &f->len);
	f->nrec = st_records(f->buf, f->len, f->off, MAXREC);
	assert_true(f->nrec > 20);
	assert_int_equal(f->off[f->nrec], f->len);
	f->k = f->nrec / 2;
	logcap_install();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	prec_sink_free(f->trace);
	st_rmdir(f->dir);
	free(f);
	return 0;
}

static size_t rec_len(const struct fixture *f, size_t i)   /* record i + 1 */
{
	return f->off[i + 1] - f->off[i];
}

/* Records [from, to) of the trace appended to host/session; synced. */
static void append(struct fixture *f, struct rec_archive_file *a, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		assert_int_equal(a->next_seq, i + 1);
		assert_int_equal(rec_archive_file_append(a, f->buf + f->off[i], rec_len(f, i)), 0);
	}
	assert_int_equal(rec_archive_file_sync(a), 0);
}

/* A session file holding the first k records (all acknowledged). */
static void write_first(struct fixture *f, const char *session, size_t k)
{
	struct rec_archive_file a;

	assert_int_equal(rec_archive_file_open(f->dir, "h", session, &a), 0);
	append(f, &a, 0, k);
	rec_archive_file_close(&a);
	snprintf(f->path, sizeof(f->path), "%s/h/%s.prec", f->dir, session);
}

static void poke(const char *path, size_t at, const void *bytes, size_t n)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, bytes, n, (off_t)at), (ssize_t)n);
	close(fd);
}

static void flip(const char *path, const unsigned char *orig, size_t at, uint8_t mask)
{
	uint8_t b = orig[at] ^ mask;

	poke(path, at, &b, 1);
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

/* Packets a reader gets from r (freed), and the damaged frames it saw. */
static uint64_t count_packets(struct prec_reader *r, uint64_t *damaged)
{
	struct prec_reader_stats st;
	struct prec_packet p;
	uint64_t n = 0;

	assert_non_null(r);
	while (prec_reader_next_packet(r, &p) > 0)
		n++;
	prec_reader_stats(r, &st);
	*damaged = st.damaged_frames;
	prec_reader_free(r);
	return n;
}

static uint64_t read_packets(const char *path, uint64_t *damaged)
{
	return count_packets(prec_reader_open(path, NULL), damaged);
}

static uint64_t packets_in(const void *buf, size_t len)
{
	uint64_t dmg, n = count_packets(prec_reader_open_mem(buf, len, NULL), &dmg);

	assert_int_equal(dmg, 0);
	return n;
}

struct flip_case {
	const char *what;
	size_t at;          /* offset inside the damaged record */
	uint8_t mask;
	bool logged;        /* the resume can see it (metadata or zstd magic) */
};

/* One damaged byte in record m + 1 of a file of k records, resumed:
 * nothing cut, the count right, the damage logged by offset, the rest of
 * the trace appended, and the file equal to the trace but that byte. */
static void resume_after_flip(struct fixture *f, const char *session, size_t m,
			      const struct flip_case *c)
{
	struct rec_archive_file a;
	struct prec_record rec;
	uint64_t before, total, got, dmg;
	size_t at = f->off[m] + c->at, glen;
	unsigned char *g;
	char want[600];

	write_first(f, session, f->k);
	flip(f->path, f->buf, at, c->mask);
	before = file_size(f->path);
	logcap_clear();
	assert_int_equal(rec_archive_file_open(f->dir, "h", session, &a), 0);
	if (a.next_seq != f->k + 1 || a.size != before || a.cut)
		fail_msg("%s: resumed at record %llu (want %zu), %llu bytes of %llu, %llu cut",
			 c->what, (unsigned long long)a.next_seq, f->k + 1,
			 (unsigned long long)a.size, (unsigned long long)before,
			 (unsigned long long)a.cut);
	assert_int_equal(file_size(f->path), before);
	if (c->logged) {
		assert_int_equal(a.damaged, 1);
		snprintf(want, sizeof(want), "%s: damaged bytes at offset ", f->path);
		const char *w = strstr(logcap_all(), want);
		if (!w)
			fail_msg("%s: no damage warning; log:\n%s", c->what, logcap_all());
		unsigned long long o = strtoull(w + strlen(want), NULL, 10);
		assert_true(o >= f->off[m] && o < f->off[m + 1]);
	}
	assert_null(strstr(logcap_all(), "cut"));
	append(f, &a, f->k, f->nrec);
	assert_true(a.complete);
	rec_archive_file_close(&a);

	g = st_slurp(f->path, &glen);
	assert_int_equal(glen, f->len);
	assert_int_equal(g[at], f->buf[at] ^ c->mask);
	g[at] = f->buf[at];
	assert_memory_equal(g, f->buf, f->len);
	free(g);

	/* readers lose the damaged frame at most, and say so */
	total = packets_in(f->buf, f->len);
	assert_int_equal(prec_record_scan(f->buf + f->off[m], rec_len(f, m), 0, &rec), 1);
	got = read_packets(f->path, &dmg);
	assert_true(got <= total && got + rec.info.packets >= total);
	if (got < total)
		assert_true(dmg >= 1);
}

static void test_flips_resume_whole(void **state)
{
	struct fixture *f = *state;
	size_t m = f->k / 2, dl = rec_len(f, m) - INFO_LEN;
	const struct flip_case cases[] = {
		{ "frame-info payload (t_min)", PREC_SKIP_HDR + PREC_INFO_T_MIN + 2, 0x10, true },
		{ "frame-info csize", PREC_SKIP_HDR + PREC_INFO_CSIZE, 0x01, true },
		{ "frame-info seq", PREC_SKIP_HDR + PREC_INFO_SEQ, 0x04, true },
		{ "frame-info CRC", INFO_LEN - 2, 0xFF, true },
		{ "size field, low byte (52 -> 53)", 4, 0x01, true },
		{ "size field, high byte (52 -> 308)", 5, 0x01, true },
		{ "size field, out of range", 7, 0x80, true },
		{ "magic (not a record)", 1, 0xFF, true },
		{ "magic kind (frame info -> index)", 0, 0x03, true },
		{ "magic kind (frame info -> reserved)", 0, 0x0E, true },
		{ "data frame, zstd magic", INFO_LEN, 0xFF, true },
		{ "data frame, content", INFO_LEN + dl / 2, 0x55, false },
	};
	char session[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(session, sizeof(session), "flip%zu", i);
		resume_after_flip(f, session, m, &cases[i]);
	}
}

/* The last record's size field hit so that it seems to run past the end
 * (what a torn tail looks like): it is whole, so it stays. */
static void test_last_record_not_torn(void **state)
{
	struct fixture *f = *state;
	struct rec_archive_file a;
	uint64_t before;
	size_t k = 0;

	/* a file ending with a frame shorter than the damaged size says */
	for (size_t i = f->nrec - 2; i > 2 && !k; i--)
		if (rec_len(f, i) < PREC_SKIP_HDR + 0x334)
			k = i + 1;
	assert_true(k > 2);
	write_first(f, "lastsize", k);
	flip(f->path, f->buf, f->off[k - 1] + 5, 0x03);   /* size 52 -> 820 */
	before = file_size(f->path);
	logcap_clear();
	assert_int_equal(rec_archive_file_open(f->dir, "h", "lastsize", &a), 0);
	assert_int_equal(a.next_seq, k + 1);
	assert_int_equal(a.cut, 0);
	assert_int_equal(a.size, before);
	assert_int_equal(file_size(f->path), before);
	assert_non_null(strstr(logcap_all(), "damaged bytes at offset"));
	append(f, &a, k, f->nrec);
	rec_archive_file_close(&a);
	assert_int_equal(file_size(f->path), f->len);
}

/* A real torn tail (half of the next record, or zeros a crash left) is
 * still cut, and the session resumes at that record. */
static void test_torn_tail_cut(void **state)
{
	struct fixture *f = *state;
	struct rec_archive_file a;
	unsigned char zeros[4096] = { 0 };
	size_t half = rec_len(f, f->k) / 2;

	write_first(f, "torn", f->k);
	poke(f->path, f->off[f->k], f->buf + f->off[f->k], half);
	logcap_clear();
	assert_int_equal(rec_archive_file_open(f->dir, "h", "torn", &a), 0);
	assert_int_equal(a.next_seq, f->k + 1);
	assert_int_equal(a.cut, half);
	assert_int_equal(a.damaged, 0);
	assert_int_equal(file_size(f->path), f->off[f->k]);
	assert_non_null(strstr(logcap_all(), "cut"));
	rec_archive_file_close(&a);

	poke(f->path, f->off[f->k], zeros, sizeof(zeros));
	assert_int_equal(rec_archive_file_open(f->dir, "h", "torn", &a), 0);
	assert_int_equal(a.next_seq, f->k + 1);
	assert_int_equal(a.cut, sizeof(zeros));
	append(f, &a, f->k, f->nrec);
	rec_archive_file_close(&a);
	assert_int_equal(file_size(f->path), f->len);
}

/* Sessions of --list in name order: "one" then "two". */
static int list_entry(const struct rec_archive_entry *e, void *ctx)
{
	struct rec_archive_entry *out = ctx;
	size_t i = !strcmp(e->id, "two");

	out[i] = *e;
	out[i].path = NULL;
	return 0;
}

/* Two neighbouring frame infos and data-frame magics zeroed: how many
 * records the stretch held is unknown (frames may have been dropped by
 * the sender), so the resume is refused by name and nothing changes;
 * --list calls the file damaged. One such record alone is counted. */
static void test_unknown_count_refused(void **state)
{
	struct fixture *f = *state;
	struct rec_archive_file a;
	struct rec_archive_entry e[2];
	unsigned char zeros[INFO_LEN + 4] = { 0 }, *g;
	size_t m = f->k / 2, glen;
	uint64_t before;

	write_first(f, "one", f->k);
	poke(f->path, f->off[m], zeros, sizeof(zeros));
	logcap_clear();
	assert_int_equal(rec_archive_file_open(f->dir, "h", "one", &a), 0);
	assert_int_equal(a.next_seq, f->k + 1);
	assert_int_equal(a.damaged, 1);
	rec_archive_file_close(&a);

	write_first(f, "two", f->k);
	poke(f->path, f->off[m], zeros, sizeof(zeros));
	poke(f->path, f->off[m + 1], zeros, sizeof(zeros));
	before = file_size(f->path);
	logcap_clear();
	assert_int_equal(rec_archive_file_open(f->dir, "h", "two", &a), -EUCLEAN);
	assert_non_null(strstr(logcap_err(), f->path));
	assert_non_null(strstr(logcap_err(), "move it aside"));
	assert_int_equal(file_size(f->path), before);
	g = st_slurp(f->path, &glen);
	assert_memory_equal(g, f->buf, f->off[m]);
	assert_memory_equal(g + f->off[m + 2], f->buf + f->off[m + 2], before - f->off[m + 2]);
	free(g);

	memset(e, 0, sizeof(e));
	assert_int_equal(rec_archive_list(f->dir, list_entry, e), 0);
	assert_int_equal(e[0].status, REC_ARCHIVE_DAMAGED);   /* "one" */
	assert_true(e[0].resumable);
	assert_int_equal(e[0].damage_offset, f->off[m]);
	assert_int_equal(e[1].status, REC_ARCHIVE_DAMAGED);   /* "two" */
	assert_false(e[1].resumable);
	assert_string_equal(rec_archive_status_name(e[1].status), "damaged");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_flips_resume_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_last_record_not_torn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_tail_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_count_refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
