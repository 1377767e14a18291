/*
 * stream_bench.c - N synthetic recorders streaming to a collector as fast
 * as it takes them, for tests/bench/stream_vs_file.sh.
 *
 *   stream_bench ADDR:PORT SENDERS SECONDS [TRACE.prec]
 *   stream_bench ADDR:PORT 1 SECONDS TRACE.prec --latency ARCHIVE_ROOT
 *
 * Each sender speaks the real protocol (hello, frames, reads the acks)
 * from pre-built messages: the records of TRACE (or of a synthetic trace)
 * cut once, their frames repeated with increasing seq, so the sender side
 * costs little CPU and the collector is what is measured. Prints one line:
 * "frames N bytes B seconds S acked A".
 *
 * --latency: one sender, one frame every 20 ms; for each, the time from
 * its send until its bytes are in ARCHIVE_ROOT/benchhost/<session>.prec
 * (written by the collector with --dir, or by perfrec archive from
 * JetStream). Prints "latency n N p50 X ms p90 Y ms p99 Z ms".
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "format/record.h"
#include "format/sink.h"
#include "format/writer.h"
#include "recorder/net/wire.h"

static const unsigned char *trace;
static size_t trace_len, nrec, off[1 << 16];
static const char *addr;
static double seconds;
static const char *latency_root;   /* --latency: the archive root */

struct result {
	uint64_t frames, bytes, acked;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int connect_to(void)
{
	char host[256], *colon;
	struct addrinfo hints, *ai;
	int fd, one = 1;

	snprintf(host, sizeof(host), "%s", addr);
	colon = strrchr(host, ':');
	*colon = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, colon + 1, &hints, &ai))
		return -1;
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int write_all(int fd, const struct iovec *iov, int n)
{
	struct iovec v[2];
	size_t left = 0;

	memcpy(v, iov, (size_t)n * sizeof(*iov));
	for (int i = 0; i < n; i++)
		left += v[i].iov_len;
	while (left) {
		ssize_t k = writev(fd, v, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		left -= (size_t)k;
		for (int i = 0; i < n && k; i++) {
			size_t t = (size_t)k < v[i].iov_len ? (size_t)k : v[i].iov_len;

			v[i].iov_base = (char *)v[i].iov_base + t;
			v[i].iov_len -= t;
			k -= (ssize_t)t;
		}
	}
	return 0;
}

/* Reads whatever acks are waiting; the last acked seq. */
static void drain_acks(int fd, struct prec_msgbuf *in, uint64_t *acked)
{
	struct pollfd p = { fd, POLLIN, 0 };

	while (poll(&p, 1, 0) > 0) {
		size_t room, len;
		void *b = prec_msgbuf_space(in, &room);
		const unsigned char *msg;
		ssize_t n = read(fd, b, room);

		if (n <= 0)
			return;
		prec_msgbuf_commit(in, (size_t)n);
		while (prec_msgbuf_next(in, &msg, &len) > 0) {
			Perfrec__Control__StreamMessage *m = rec_wire_unpack(msg, len);

			if (m && m->body_case == PERFREC__CONTROL__STREAM_MESSAGE__BODY_ACK)
				*acked = m->ack->seq;
			if (m)
				perfrec__control__stream_message__free_unpacked(m, NULL);
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One frame at a time: send, then wait until the archive file holds it. */
static void latency_run(int fd, const char *session, double end)
{
	static double lat[100000];
	char path[4096];
	size_t n = 0, expect = 0;
	uint64_t seq = 1;

	snprintf(path, sizeof(path), "%s/benchhost/%s.prec", latency_root, session);
	while (now() < end && n < sizeof(lat) / sizeof(lat[0])) {
		size_t i = seq == 1 ? 0 : 1 + (seq - 2) % (nrec - 2);
		unsigned char hdr[REC_WIRE_FRAME_HDR_MAX];
		struct iovec v[2];
		struct stat st;
		double t0, deadline;

		v[1].iov_base = (void *)(trace + off[i]);
		v[1].iov_len = off[i + 1] - off[i];
		v[0].iov_base = hdr;
		v[0].iov_len = rec_wire_frame_header(seq, v[1].iov_len, hdr);
		expect += v[1].iov_len;
		t0 = now();
		if (write_all(fd, v, 2) < 0)
			break;
		deadline = t0 + 30;
		while (now() < deadline && (stat(path, &st) < 0 || (size_t)st.st_size < expect))
			usleep(200);
		if (seq > 1)
			lat[n++] = (now() - t0) * 1000;
		seq++;
		usleep(20000);
		{
			char junk[4096];
			struct pollfd p = { fd, POLLIN, 0 };

			while (poll(&p, 1, 0) > 0 && read(fd, junk, sizeof(junk)) > 0)
				;   /* acks: not needed here */
		}
	}
	qsort(lat, n, sizeof(lat[0]), cmp_double);
	if (n)
		printf("latency n %zu p50 %.2f ms p90 %.2f ms p99 %.2f ms\n", n, lat[n / 2],
		       lat[n * 9 / 10], lat[n * 99 / 100]);
}

static void *sender(void *arg)
{
	struct result *r = arg;
	Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
	Perfrec__Control__Hello h = PERFREC__CONTROL__HELLO__INIT;
	struct prec_msgbuf in;
	unsigned char *hello;
	char session[64];
	size_t hlen;
	uint64_t seq = 1;
	double end;
	int fd = connect_to();

	if (fd < 0) {
		perror("stream_bench: connect");
		return NULL;
	}
	snprintf(session, sizeof(session), "bench-%d-%p", getpid(), arg);
	if (latency_root)
		snprintf(session, sizeof(session), "lat-%d", getpid());
	h.version = REC_WIRE_VERSION;
	h.host = (char *)"benchhost";
	h.session_id = session;
	m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_HELLO;
	m.hello = &h;
	rec_wire_pack(&m, &hello, &hlen);
	{
		struct iovec v = { hello, hlen };

		write_all(fd, &v, 1);
	}
	free(hello);
	prec_msgbuf_init(&in, REC_WIRE_MAX_SMALL);
	end = now() + seconds;
	if (latency_root) {
		latency_run(fd, session, end);
		prec_msgbuf_release(&in);
		close(fd);
		return NULL;
	}
	while (now() < end) {
		/* record 0 (the header) once, then the frames over and over */
		size_t i = seq == 1 ? 0 : 1 + (seq - 2) % (nrec - 2);
		unsigned char hdr[REC_WIRE_FRAME_HDR_MAX];
		struct iovec v[2];

		v[1].iov_base = (void *)(trace + off[i]);
		v[1].iov_len = off[i + 1] - off[i];
		v[0].iov_base = hdr;
		v[0].iov_len = rec_wire_frame_header(seq, v[1].iov_len, hdr);
		if (write_all(fd, v, 2) < 0)
			break;
		r->frames++;
		r->bytes += v[1].iov_len;
		seq++;
		if (seq % 16 == 0)
			drain_acks(fd, &in, &r->acked);
	}
	/* the last acks */
	for (int k = 0; k < 100 && r->acked + 1 < seq; k++) {
		usleep(10000);
		drain_acks(fd, &in, &r->acked);
	}
	prec_msgbuf_release(&in);
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 8;
	struct prec_sink *mem = NULL;
	struct result *res;
	pthread_t *th;
	struct prec_record rec;
	uint64_t frames = 0, bytes = 0, acked = 0;
	double t0;
	size_t pos = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: stream_bench ADDR:PORT SENDERS SECONDS [TRACE.prec]\n");
		return 2;
	}
	addr = argv[1];
	seconds = atof(argv[3]);
	if (argc > 6 && !strcmp(argv[5], "--latency")) {
		latency_root = argv[6];
		n = 1;
	}
	if (argc > 4) {
		FILE *f = fopen(argv[4], "rb");
		static unsigned char *buf;

		if (!f) {
			perror(argv[4]);
			return 1;
		}
		fseek(f, 0, SEEK_END);
		trace_len = (size_t)ftell(f);
		rewind(f);
		buf = malloc(trace_len);
		if (!buf || fread(buf, 1, trace_len, f) != trace_len)
			return 1;
		fclose(f);
		trace = buf;
	} else {
		struct prec_writer *w;

		mem = prec_sink_mem_new();
		w = prec_writer_new(mem, NULL);
		for (int i = 0; i < 400000; i++) {
			Perfrec__Packet p = PERFREC__PACKET__INIT;
			Perfrec__ContextSwitch cs = PERFREC__CONTEXT_SWITCH__INIT;

			cs.cpu = (uint32_t)(i & 1);
			cs.pid = cs.tid = 100 + (uint32_t)(i % 50);
			cs.out = i & 1;
			p.data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
			p.context_switch = &cs;
			prec_writer_append(w, 1 + (uint32_t)(i & 1), &p, 1000 + (uint64_t)i * 997);
		}
		prec_writer_close(w);
		prec_writer_free(w);
		trace = prec_sink_mem_data(mem, &trace_len);
	}
	while (pos < trace_len && nrec + 1 < sizeof(off) / sizeof(off[0]) &&
	       prec_record_scan(trace + pos, trace_len - pos, 0, &rec) == 1 &&
	       rec.kind != PREC_RECORD_INDEX) {
		off[nrec++] = pos;
		pos += rec.len;
	}
	off[nrec] = pos;
	if (nrec < 3) {
		fprintf(stderr, "stream_bench: the trace has too few frames\n");
		return 1;
	}
	res = calloc((size_t)n, sizeof(*res));
	th = calloc((size_t)n, sizeof(*th));
	t0 = now();
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, sender, &res[i]);
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		frames += res[i].frames;
		bytes += res[i].bytes;
		acked += res[i].acked;
	}
	if (!latency_root)
		printf("frames %llu bytes %llu seconds %.3f acked %llu\n",
	       (unsigned long long)frames, (unsigned long long)bytes, now() - t0,
	       (unsigned long long)acked);
	prec_sink_free(mem);
	free(res);
	free(th);
	return 0;
}
