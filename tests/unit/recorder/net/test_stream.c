/*
 * test_stream.c - a sender (recorder/net/sender.c) and a collector on
 * loopback, each on its own thread: the archive equals the bytes written;
 * a collector that goes away and comes back on the same directory gets
 * the rest, with nothing lost or doubled; a spool that fills while no
 * collector listens drops new frames, counts them, and keeps the header;
 * a second recording under the same names is refused; a collector that
 * welcomes and refuses is retried ever more slowly; a welcome or ack
 * beyond what was sent is refused; a definitive refusal ends the stream
 * at once, a transient one is retried; an adapting sender cuts its frames
 * to the Welcome's limit; peers before their hello, and all of
 * them together, hold bounded memory in the collector.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "format/reader.h"
#include "recorder/net/collector.h"
#include "recorder/net/conn.h"
#include "recorder/net/sender.h"
#include "lib/logcap.h"
#include "unit/recorder/net/streamtest.h"

struct server {
	struct rec_tls *tls;             /* borrowed */
	struct rec_collector *c;
	pthread_t th;
	char listen[64];
};

static void *serve(void *arg)
{
	struct server *s = arg;

	rec_collector_run(s->c);
	return NULL;
}

static size_t server_max_buffer;   /* for the next server_start() */

static void server_start(struct server *s, const char *dir, int port)
{
	struct rec_collector_opts o = REC_COLLECTOR_OPTS_INIT;

	snprintf(s->listen, sizeof(s->listen), "127.0.0.1:%d", port);
	o.listen = s->listen;
	o.dir = dir;
	o.tls = s->tls;
	o.max_buffer = server_max_buffer;
	o.hello_timeout_ms = 20000;   /* what is refused is refused for a reason */
	assert_int_equal(rec_collector_new(&o, &s->c), 0);
	assert_int_equal(pthread_create(&s->th, NULL, serve, s), 0);
}

static int server_port(struct server *s)
{
	return rec_collector_port(s->c);
}

static void server_stop(struct server *s)
{
	rec_collector_stop(s->c);
	pthread_join(s->th, NULL);
	rec_collector_free(s->c);
	s->c = NULL;
}

/* Keeps port taken while "nobody listens" there: bound, not listening,
 * so a connect is refused, and no other test running beside this one can
 * start a server on it meanwhile. Close it before a server binds it. */
static int hold_port(int port)
{
	struct sockaddr_in a = { 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* A listener on 127.0.0.1 whose accept queue is full: the kernel drops
 * the SYNs of further connections, as an unreachable collector's network
 * would (the connect hangs). Its port; the listener and the connections
 * filling its queue in fds[0..7], -1 where unused. */
static int silent_port(int fds[8])
{
	struct sockaddr_in a = { 0 };
	socklen_t al = sizeof(a);
	int port;

	for (int i = 0; i < 8; i++)
		fds[i] = -1;
	fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fds[0] >= 0);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fds[0], (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fds[0], 0), 0);
	assert_int_equal(getsockname(fds[0], (struct sockaddr *)&a, &al), 0);
	port = ntohs(a.sin_port);
	for (int i = 1; i < 8; i++) {
		struct pollfd p;

		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		assert_true(fds[i] >= 0);
		if (connect(fds[i], (struct sockaddr *)&a, sizeof(a)) < 0)
			assert_int_equal(errno, EINPROGRESS);
		p = (struct pollfd){ fds[i], POLLOUT, 0 };
		if (poll(&p, 1, 100) == 0)
			return port;   /* this SYN was dropped: the queue is full */
	}
	fail_msg("the accept queue of a listen(fd, 0) socket did not fill");
	return -1;
}

/* A writer on a tee: local memory copy + the sender. */
struct client {
	struct rec_sender *snd;
	struct prec_sink *mem, *tee;
	struct prec_writer *w;
};

static struct rec_tls *client_tls;   /* for the next client_start() */

static void client_start(struct client *cl, int port, uint64_t spool, const char *session)
{
	struct rec_sender_opts o = REC_SENDER_OPTS_INIT;
	struct prec_writer_opts wo = PREC_WRITER_OPTS_INIT;
	char to[64];

	snprintf(to, sizeof(to), "127.0.0.1:%d", port);
	o.to = to;
	o.host = "testhost";
	o.session_id = session;
	o.spool_bytes = spool;
	o.backoff_max_ms = 200;
	o.tls = client_tls;
	assert_int_equal(rec_sender_new(&o, &cl->snd), 0);
	cl->mem = prec_sink_mem_new();
	cl->tee = prec_sink_tee_new(cl->mem, rec_sender_sink(cl->snd));
	wo.frame_size = 4096;
	cl->w = prec_writer_new(cl->tee, &wo);
	assert_non_null(cl->w);
}

static void client_free(struct client *cl)
{
	prec_writer_free(cl->w);
	rec_sender_free(cl->snd);
	prec_sink_free(cl->tee);
	prec_sink_free(cl->mem);
}

static void wait_acked(struct client *cl, uint64_t n)
{
	struct rec_sender_stats st;

	for (int i = 0; i < 500; i++) {
		rec_sender_stats(cl->snd, &st);
		if (st.acked >= n)
			return;
		usleep(10000);
	}
	fail_msg("only %llu of %llu records acknowledged", (unsigned long long)st.acked,
		 (unsigned long long)n);
}

static void same_bytes(struct client *cl, const char *dir, const char *session)
{
	char path[512];
	size_t mlen, alen;
	const void *m = prec_sink_mem_data(cl->mem, &mlen);
	unsigned char *a;

	snprintf(path, sizeof(path), "%s/testhost/%s.prec", dir, session);
	a = st_slurp(path, &alen);
	assert_non_null(a);
	assert_int_equal(alen, mlen);
	assert_memory_equal(a, m, mlen);
	free(a);
}

static void test_stream_whole(void **state)
{
	char *dir = st_tmpdir();
	struct server s = { 0 };
	struct client cl;
	struct rec_sender_stats st;

	(void)state;
	server_start(&s, dir, 0);
	client_start(&cl, server_port(&s), 0, "whole");
	st_write_samples(cl.w, 20000, 1000);
	assert_int_equal(prec_writer_close(cl.w), 0);
	assert_int_equal(rec_sender_finish(cl.snd, 10000), 0);
	rec_sender_stats(cl.snd, &st);
	assert_int_equal(st.acked, st.records);
	assert_int_equal(st.sent, st.records);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.connects, 1);
	assert_int_equal(st.spool_used, 0);
	same_bytes(&cl, dir, "whole");
	client_free(&cl);
	server_stop(&s);
	st_rmdir(dir);
}

/* The collector stops mid-stream and comes back on the same port and
 * directory; the sender reconnects and resends from where it left. */
static void test_collector_restart(void **state)
{
	char *dir = st_tmpdir();
	struct server s = { 0 };
	struct client cl;
	struct rec_sender_stats st;
	int port, held;

	(void)state;
	server_start(&s, dir, 0);
	port = server_port(&s);
	client_start(&cl, port, 0, "restart");
	st_write_samples(cl.w, 8000, 1000);
	assert_int_equal(prec_writer_flush(cl.w), 0);
	wait_acked(&cl, 5);
	server_stop(&s);
	held = hold_port(port);
	/* written while no collector listens: kept in the spool */
	st_write_samples(cl.w, 8000, 100000000);
	assert_int_equal(prec_writer_flush(cl.w), 0);
	usleep(300000);
	close(held);
	server_start(&s, dir, port);
	st_write_samples(cl.w, 8000, 200000000);
	assert_int_equal(prec_writer_close(cl.w), 0);
	assert_int_equal(rec_sender_finish(cl.snd, 15000), 0);
	rec_sender_stats(cl.snd, &st);
	assert_true(st.connects >= 2);
	assert_int_equal(st.acked, st.records);
	assert_int_equal(st.dropped, 0);
	same_bytes(&cl, dir, "restart");
	client_free(&cl);
	server_stop(&s);
	st_rmdir(dir);
}

/* No collector: the spool fills, new frames are dropped and counted, the
 * header is kept, and the index is not sent (its offsets would lie). */
static void test_spool_full_drops(void **state)
{
	char *dir = st_tmpdir();
	struct server s = { 0 };
	struct client cl;
	struct rec_sender_stats st;
	struct rec_sender_drops d;
	int port, held;

	(void)state;
	/* a free port, then nobody listens on it for a while */
	server_start(&s, dir, 0);
	port = server_port(&s);
	server_stop(&s);
	held = hold_port(port);
	client_start(&cl, port, 64u << 10, "drops");
	st_write_samples(cl.w, 100000, 1000);
	assert_int_equal(prec_writer_flush(cl.w), 0);
	rec_sender_stats(cl.snd, &st);
	assert_true(st.dropped > 0);
	assert_true(st.spool_used <= (64u << 10));
	assert_true(rec_sender_take_drops(cl.snd, &d));
	assert_int_equal(d.records, st.dropped);
	assert_true(d.packets > 0 && d.t_max > d.t_min);
	assert_false(rec_sender_take_drops(cl.snd, &d));
	close(held);
	server_start(&s, dir, port);
	assert_int_equal(prec_writer_close(cl.w), 0);
	assert_int_equal(rec_sender_finish(cl.snd, 15000), 0);
	rec_sender_stats(cl.snd, &st);
	assert_int_equal(st.acked, st.records);
	{
		char path[512];
		struct prec_reader *r;
		struct prec_packet p;
		size_t n = 0;

		snprintf(path, sizeof(path), "%s/testhost/drops.prec", dir);
		r = prec_reader_open(path, NULL);
		assert_non_null(r);   /* the header made it */
		while (prec_reader_next_packet(r, &p) > 0)
			n++;
		assert_true(n > 0);
		prec_reader_free(r);
	}
	client_free(&cl);
	server_stop(&s);
	st_rmdir(dir);
}

/* finish() gives up after its timeout when nobody acknowledges, and says
 * how much is lost. */
static void test_finish_timeout(void **state)
{
	char *dir = st_tmpdir();
	struct server s = { 0 };
	struct client cl;
	int port, held;

	(void)state;
	server_start(&s, dir, 0);
	port = server_port(&s);
	server_stop(&s);
	held = hold_port(port);
	client_start(&cl, port, 0, "nobody");
	st_write_samples(cl.w, 1000, 1000);
	assert_int_equal(prec_writer_close(cl.w), 0);
	logcap_clear();
	assert_int_equal(rec_sender_finish(cl.snd, 300), -ETIMEDOUT);
	assert_non_null(strstr(logcap_err(), "not acknowledged"));
	client_free(&cl);
	close(held);
	st_rmdir(dir);
}

/* Certificates made with the openssl tool: a CA, the collector's
 * certificate for 127.0.0.1, a client certificate, and a second CA that
 * signed nothing here. */
static int make_certs(const char *dir)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd),
		 "cd %s && exec >log 2>&1 && "
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
		 "-keyout ca.key -out ca.pem -days 2 -subj /CN=test-ca && "
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
		 "-keyout other.key -out other.pem -days 2 -subj /CN=other-ca && "
		 "for n in server client; do "
		 "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
		 "-keyout $n.key -out $n.csr -subj /CN=$n && "
		 "printf 'subjectAltName=IP:127.0.0.1\n' > $n.ext && "
		 "openssl x509 -req -in $n.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
		 "-out $n.pem -days 2 -extfile $n.ext || exit 1; done", dir);
	return system(cmd);
}

static struct rec_tls *tls(bool server, const char *dir, const char *cert,
			   const char *ca)
{
	char c[512], k[512], a[512];
	struct rec_tls_opts o = { server, NULL, NULL, NULL };
	struct rec_tls *t;

	if (cert) {
		snprintf(c, sizeof(c), "%s/%s.pem", dir, cert);
		snprintf(k, sizeof(k), "%s/%s.key", dir, cert);
		o.cert = c;
		o.key = k;
	}
	if (ca) {
		snprintf(a, sizeof(a), "%s/%s.pem", dir, ca);
		o.ca = a;
	}
	assert_int_equal(rec_tls_new(&o, &t), 0);
	return t;
}

/* TLS 1.3 both ways: the stream arrives whole when the collector's
 * certificate verifies and the client presents one; a client that trusts
 * another CA, or has no certificate, gets nothing through. */
static void test_tls(void **state)
{
	char *dir = st_tmpdir(), *certs = st_tmpdir();
	struct server s = { 0 };
	struct client cl;
	struct rec_sender_stats st;
	struct rec_tls *srv, *good, *wrong_ca, *no_cert;

	(void)state;
	if (make_certs(certs) != 0)
		fail_msg("openssl could not make test certificates (see %s/log)", certs);
	srv = tls(true, certs, "server", "ca");     /* client certs required */
	good = tls(false, certs, "client", "ca");
	wrong_ca = tls(false, certs, "client", "other");
	no_cert = tls(false, certs, NULL, "ca");
	memset(&s, 0, sizeof(s));
	s.tls = srv;
	server_start(&s, dir, 0);

	client_tls = good;
	client_start(&cl, server_port(&s), 0, "tls");
	st_write_samples(cl.w, 5000, 1000);
	assert_int_equal(prec_writer_close(cl.w), 0);
	assert_int_equal(rec_sender_finish(cl.snd, 10000), 0);
	same_bytes(&cl, dir, "tls");
	client_free(&cl);

	for (int k = 0; k < 2; k++) {
		client_tls = k ? no_cert : wrong_ca;
		logcap_clear();
		client_start(&cl, server_port(&s), 0, k ? "nocert" : "wrongca");
		st_write_samples(cl.w, 100, 1000);
		assert_int_equal(prec_writer_close(cl.w), 0);
		assert_int_equal(rec_sender_finish(cl.snd, 700), -ETIMEDOUT);
		rec_sender_stats(cl.snd, &st);
		assert_int_equal(st.acked, 0);
		assert_int_equal(st.connects, 0);
		if (!k)
			assert_non_null(strstr(logcap_all(), "certificate"));
		client_free(&cl);
	}
	client_tls = NULL;
	server_stop(&s);
	rec_tls_free(srv);
	rec_tls_free(good);
	rec_tls_free(wrong_ca);
	rec_tls_free(no_cert);
	st_rmdir(certs);
	st_rmdir(dir);
}

/* Two recordings streamed under one host and session: the second is
 * refused with the reason and never takes the first one's acks for its
 * own (it used to take the session over, be acknowledged up to the
 * first's last record, and send nothing); the archive is the first's. */
static void test_two_recordings(void **state)
{
	char *dir = st_tmpdir();
	struct server s = { 0 };
	struct client a, b;
	struct rec_sender_stats sa, sb;

	(void)state;
	server_start(&s, dir, 0);
	client_start(&a, server_port(&s), 0, "same");
	st_write_samples(a.w, 8000, 1000);
	assert_int_equal(prec_writer_flush(a.w), 0);
	wait_acked(&a, 5);
	logcap_clear();
	client_start(&b, server_port(&s), 0, "same");
	st_write_samples(b.w, 8000, 1000);
	assert_int_equal(prec_writer_flush(b.w), 0);
	for (int i = 0; i < 500; i++) {
		rec_sender_stats(b.snd, &sb);
		if (sb.last_error[0])
			break;
		usleep(10000);
	}
	if (!strstr(sb.last_error, "being streamed by another recording"))
		fail_msg("the second recording was not refused: '%s'", sb.last_error);
	st_write_samples(a.w, 8000, 100000000);
	assert_int_equal(prec_writer_close(a.w), 0);
	assert_int_equal(rec_sender_finish(a.snd, 10000), 0);
	rec_sender_stats(a.snd, &sa);
	assert_int_equal(sa.acked, sa.records);
	same_bytes(&a, dir, "same");
	/* the refusal was definitive: the second stream ended at once (its
	 * file stays another recording's) */
	assert_true(rec_sender_refused(b.snd, NULL, 0));
	assert_int_equal(prec_writer_close(b.w), 0);
	assert_int_equal(rec_sender_finish(b.snd, 1500), -ECONNREFUSED);
	rec_sender_stats(b.snd, &sb);
	assert_int_equal(sb.acked, 0);
	assert_int_equal(sb.connects, 0);
	assert_non_null(strstr(logcap_all(), "another recording"));
	same_bytes(&a, dir, "same");
	client_free(&a);
	client_free(&b);
	server_stop(&s);
	st_rmdir(dir);
}

/* ---- a scripted collector: for each connection, reads the hello and
 * answers with the script's messages, then closes (or waits for the
 * sender to close when hold). */

struct fake {
	int lfd, port;
	pthread_t th;
	volatile int stop;
	unsigned conns;
	uint64_t welcome_next, ack;     /* 0: not sent */
	bool refuse, hold;
	bool definitive;                /* the refusal says so */
	unsigned refuse_version;        /* the refusal's version; 0 = ours */
	uint64_t max_frame;             /* Welcome.max_frame_bytes */
	uint64_t hello_frame;           /* the last hello's frame_bytes */
	bool hello_adapts;              /* and frame_adapts */
	unsigned welcome_delay_ms;      /* before the welcome */
};

static void fake_send(int fd, const Perfrec__Control__StreamMessage *m)
{
	unsigned char *b;
	size_t n;

	assert_int_equal(rec_wire_pack(m, &b, &n), 0);
	if (write(fd, b, n) != (ssize_t)n) {
		/* the sender went away: the next connection counts */
	}
	free(b);
}

static void fake_answer(struct fake *f, int fd)
{
	Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
	Perfrec__Control__Welcome w = PERFREC__CONTROL__WELCOME__INIT;
	Perfrec__Control__Ack a = PERFREC__CONTROL__ACK__INIT;
	Perfrec__Control__Refusal r = PERFREC__CONTROL__REFUSAL__INIT;
	struct pollfd p = { fd, POLLIN, 0 };
	char buf[4096];

	ssize_t n;

	if (poll(&p, 1, 2000) <= 0 || (n = read(fd, buf, sizeof(buf))) <= 4)
		return;   /* the hello (small: one read) */
	{
		Perfrec__Control__StreamMessage *h =
			rec_wire_unpack((unsigned char *)buf + 4, (size_t)n - 4);

		if (h && h->body_case == PERFREC__CONTROL__STREAM_MESSAGE__BODY_HELLO) {
			__atomic_store_n(&f->hello_frame, h->hello->frame_bytes,
					 __ATOMIC_SEQ_CST);
			__atomic_store_n(&f->hello_adapts, h->hello->frame_adapts,
					 __ATOMIC_SEQ_CST);
		}
		if (h)
			perfrec__control__stream_message__free_unpacked(h, NULL);
	}
	if (f->welcome_delay_ms)
		usleep(f->welcome_delay_ms * 1000u);
	w.version = REC_WIRE_VERSION;
	w.next_seq = f->welcome_next;
	w.max_frame_bytes = f->max_frame;
	m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_WELCOME;
	m.welcome = &w;
	if (f->welcome_next)
		fake_send(fd, &m);
	if (f->ack) {
		a.seq = f->ack;
		m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_ACK;
		m.ack = &a;
		fake_send(fd, &m);
	}
	if (f->refuse) {
		r.reason = (char *)(f->definitive ? "bad token" : "disk full");
		r.version = f->refuse_version ? f->refuse_version : REC_WIRE_VERSION;
		r.definitive = f->definitive;
		m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_REFUSAL;
		m.refusal = &r;
		fake_send(fd, &m);
	}
	while (f->hold && !f->stop && poll(&p, 1, 100) >= 0)
		if ((p.revents & POLLIN) && read(fd, buf, sizeof(buf)) <= 0)
			break;
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;

	while (!f->stop) {
		struct pollfd p = { f->lfd, POLLIN, 0 };
		int fd;

		if (poll(&p, 1, 50) <= 0)
			continue;
		fd = accept(f->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		__atomic_add_fetch(&f->conns, 1, __ATOMIC_SEQ_CST);
		fake_answer(f, fd);
		close(fd);
	}
	return NULL;
}

static void fake_start(struct fake *f)
{
	struct sockaddr_in a = { 0 };
	socklen_t al = sizeof(a);

	f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(f->lfd >= 0);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f->lfd, 16), 0);
	assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&a, &al), 0);
	f->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&f->th, NULL, fake_main, f), 0);
}

static void fake_stop(struct fake *f)
{
	f->stop = 1;
	pthread_join(f->th, NULL);
	close(f->lfd);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A collector that welcomes and then refuses (a full disk) is not asked
 * ten times a second for ever: without acknowledged records the backoff
 * grows (100 ms, 200 ms ... up to 5 s). */
static void test_backoff_after_welcome(void **state)
{
	struct fake f = { .welcome_next = 1, .refuse = true };
	struct rec_sender_opts o = REC_SENDER_OPTS_INIT;
	struct rec_sender *snd;
	uint64_t t0;
	unsigned n;
	char to[64];

	(void)state;
	fake_start(&f);
	snprintf(to, sizeof(to), "127.0.0.1:%d", f.port);
	o.to = to;
	o.host = "testhost";
	o.session_id = "backoff";
	o.backoff_max_ms = 5000;
	assert_int_equal(rec_sender_new(&o, &snd), 0);
	t0 = mono_ms();
	while (mono_ms() - t0 < 3000)
		usleep(50000);
	n = __atomic_load_n(&f.conns, __ATOMIC_SEQ_CST);
	rec_sender_free(snd);
	fake_stop(&f);
	/* 50+100+200+400+800+1600 ms at the least between the first seven */
	if (n > 7)
		fail_msg("%u connections in 3 s to a collector that refuses after its "
			 "welcome", n);
	assert_true(n >= 2);
}

/* The frame size: an adapting sender takes the Welcome's limit and tells
 * it, fixed, in every later hello; one that heard nothing in time takes
 * what NATS's default max_payload holds, and a later Welcome below that
 * ends the stream; a sender that does not adapt keeps its size. */
static void test_frame_size(void **state)
{
	struct fake f = { .welcome_next = 1, .refuse = true, .max_frame = 100000 };
	struct rec_sender_opts o = REC_SENDER_OPTS_INIT;
	struct rec_sender *snd;
	char to[64], why[256];
	uint64_t t0;
	int port, held;

	(void)state;
	fake_start(&f);
	snprintf(to, sizeof(to), "127.0.0.1:%d", f.port);
	o.to = to;
	o.host = "testhost";
	o.session_id = "frames";
	o.backoff_max_ms = 100;
	o.frame_bytes = 1u << 20;
	o.frame_adapts = true;
	assert_int_equal(rec_sender_new(&o, &snd), 0);
	t0 = mono_ms();
	assert_int_equal(rec_sender_frame_size(snd, 5000, 5000), 100000);
	assert_true(mono_ms() - t0 < 2000);
	/* the first hello offered to adapt; later ones tell the size */
	t0 = mono_ms();
	while (__atomic_load_n(&f.conns, __ATOMIC_SEQ_CST) < 3 && mono_ms() - t0 < 3000)
		usleep(10000);
	assert_true(__atomic_load_n(&f.conns, __ATOMIC_SEQ_CST) >= 3);
	usleep(50000);
	assert_int_equal(__atomic_load_n(&f.hello_frame, __ATOMIC_SEQ_CST), 100000);
	assert_false(__atomic_load_n(&f.hello_adapts, __ATOMIC_SEQ_CST));
	assert_false(rec_sender_refused(snd, NULL, 0));
	rec_sender_free(snd);
	fake_stop(&f);

	/* nobody listens: the size NATS's default max_payload holds, at once */
	f = (struct fake){ 0 };
	fake_start(&f);
	fake_stop(&f);
	port = f.port;
	held = hold_port(port);
	snprintf(to, sizeof(to), "127.0.0.1:%d", port);
	assert_int_equal(rec_sender_new(&o, &snd), 0);
	t0 = mono_ms();
	assert_int_equal(rec_sender_frame_size(snd, 5000, 5000), REC_WIRE_FRAME_UNHEARD);
	assert_true(mono_ms() - t0 < 2000);
	rec_sender_free(snd);
	close(held);

	/* a collector whose network drops the SYN: no longer than reach_ms
	 * (the connect itself would take its 5 s timeout) */
	{
		int fds[8];

		port = silent_port(fds);
		snprintf(to, sizeof(to), "127.0.0.1:%d", port);
		assert_int_equal(rec_sender_new(&o, &snd), 0);
		t0 = mono_ms();
		assert_int_equal(rec_sender_frame_size(snd, 300, 2000), REC_WIRE_FRAME_UNHEARD);
		t0 = mono_ms() - t0;
		if (t0 < 250 || t0 > 1000)
			fail_msg("an unreachable collector cost %llu ms, not ~300",
				 (unsigned long long)t0);
		rec_sender_free(snd);
		for (int i = 0; i < 8; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}

	/* reached, a Welcome that takes longer than reach_ms still counts */
	f = (struct fake){ .welcome_next = 1, .hold = true, .max_frame = 200000,
			   .welcome_delay_ms = 600 };
	fake_start(&f);
	snprintf(to, sizeof(to), "127.0.0.1:%d", f.port);
	assert_int_equal(rec_sender_new(&o, &snd), 0);
	assert_int_equal(rec_sender_frame_size(snd, 300, 3000), 200000);
	rec_sender_free(snd);
	fake_stop(&f);

	/* the Welcome comes after the size was fixed, with a lower limit */
	f = (struct fake){ .welcome_next = 1, .hold = true, .max_frame = 4096,
			   .welcome_delay_ms = 400 };
	fake_start(&f);
	snprintf(to, sizeof(to), "127.0.0.1:%d", f.port);
	assert_int_equal(rec_sender_new(&o, &snd), 0);
	assert_int_equal(rec_sender_frame_size(snd, 100, 100), REC_WIRE_FRAME_UNHEARD);
	t0 = mono_ms();
	while (!rec_sender_refused(snd, why, sizeof(why)) && mono_ms() - t0 < 2000)
		usleep(10000);
	assert_true(rec_sender_refused(snd, why, sizeof(why)));
	assert_non_null(strstr(why, "--frame-size 4k or less"));
	rec_sender_free(snd);
	fake_stop(&f);

	/* an explicit size stays, whatever the collector says */
	f = (struct fake){ .welcome_next = 1, .hold = true, .max_frame = 4096 };
	fake_start(&f);
	snprintf(to, sizeof(to), "127.0.0.1:%d", f.port);
	o.frame_adapts = false;
	assert_int_equal(rec_sender_new(&o, &snd), 0);
	assert_int_equal(rec_sender_frame_size(snd, 2000, 2000), 1u << 20);
	rec_sender_free(snd);
	fake_stop(&f);
}

/* The collector's side, on a real one (a directory: its own record limit,
 * 64 MiB of frame): an adapting hello above it is welcomed with the
 * limit; a hello that does not adapt is refused, definitively. */
static void test_frame_size_collector(void **state)
{
	struct server srv = { 0 };
	struct rec_sender_opts o = REC_SENDER_OPTS_INIT;
	struct rec_sender *snd;
	char *dir = st_tmpdir(), to[64], why[512];
	uint64_t t0;

	(void)state;
	server_start(&srv, dir, 0);
	snprintf(to, sizeof(to), "127.0.0.1:%d", server_port(&srv));
	o.to = to;
	o.host = "testhost";
	o.session_id = "big";
	o.backoff_max_ms = 100;
	o.frame_bytes = 100ull << 20;
	o.frame_adapts = true;
	assert_int_equal(rec_sender_new(&o, &snd), 0);
	assert_int_equal(rec_sender_frame_size(snd, 5000, 5000),
			 rec_wire_frame_limit(REC_WIRE_MAX_RECORD));
	assert_int_equal(rec_wire_frame_limit(REC_WIRE_MAX_RECORD), 64ull << 20);
	rec_sender_free(snd);

	o.frame_adapts = false;
	o.session_id = "fixed";
	assert_int_equal(rec_sender_new(&o, &snd), 0);
	t0 = mono_ms();
	while (!rec_sender_refused(snd, why, sizeof(why)) && mono_ms() - t0 < 2000)
		usleep(10000);
	assert_true(rec_sender_refused(snd, why, sizeof(why)));
	assert_non_null(strstr(why, "larger than this collector takes"));
	rec_sender_free(snd);
	server_stop(&srv);
	st_rmdir(dir);
}

/* A refusal of the hello that no reconnect can change (Refusal.definitive,
 * or another protocol version from a collector that does not say so)
 * ends the stream at once: one connection, the reason kept, the spool
 * freed, records taken and not kept, finish fails at once. A transient
 * refusal of the hello is retried. */
static void test_definitive_refusal(void **state)
{
	(void)state;
	for (int k = 0; k < 3; k++) {
		struct fake f = { .refuse = true, .definitive = k == 0,
				  .refuse_version = k == 1 ? REC_WIRE_VERSION + 1 : 0 };
		struct rec_sender_opts o = REC_SENDER_OPTS_INIT;
		struct rec_sender_stats st;
		struct rec_sender *snd;
		struct prec_sink *tr = st_trace(50, 1024);
		size_t tlen;
		const unsigned char *t = prec_sink_mem_data(tr, &tlen);
		char to[64], why[256] = "";
		uint64_t t0, took;
		bool refused = false;

		fake_start(&f);
		snprintf(to, sizeof(to), "127.0.0.1:%d", f.port);
		o.to = to;
		o.host = "testhost";
		o.session_id = "refused";
		o.backoff_max_ms = 200;
		assert_int_equal(rec_sender_new(&o, &snd), 0);
		assert_int_equal(prec_sink_write(rec_sender_sink(snd), t, tlen), 0);
		t0 = mono_ms();
		while (mono_ms() - t0 < 2000 && !(refused = rec_sender_refused(snd, why,
									       sizeof(why))))
			usleep(10000);
		took = mono_ms() - t0;
		if (k == 2) {
			/* transient: retried, never ended */
			assert_false(refused);
			assert_true(__atomic_load_n(&f.conns, __ATOMIC_SEQ_CST) >= 3);
			rec_sender_free(snd);
			fake_stop(&f);
			prec_sink_free(tr);
			continue;
		}
		if (!refused)
			fail_msg("case %d: not ended within 2 s", k);
		assert_true(took < 2000);
		assert_non_null(strstr(why, k == 0 ? "refused by the collector: bad token" :
				       "refused by the collector: disk full"));
		usleep(500000);
		assert_int_equal(__atomic_load_n(&f.conns, __ATOMIC_SEQ_CST), 1);
		rec_sender_stats(snd, &st);
		assert_int_equal(st.spool_used, 0);
		/* the writer goes on: taken, not kept */
		assert_int_equal(prec_sink_write(rec_sender_sink(snd), t, tlen), 0);
		rec_sender_stats(snd, &st);
		assert_int_equal(st.spool_used, 0);
		t0 = mono_ms();
		assert_int_equal(rec_sender_finish(snd, 5000), -ECONNREFUSED);
		assert_true(mono_ms() - t0 < 500);
		rec_sender_free(snd);
		fake_stop(&f);
		prec_sink_free(tr);
	}
}

/* A welcome or an ack beyond what the sender sent (what another
 * recording's collector session says) is a protocol error: nothing is
 * taken off the spool, no counter wraps. */
static void test_ack_beyond_sent(void **state)
{
	for (int k = 0; k < 2; k++) {
		struct fake f = { .welcome_next = k ? 1 : 500, .ack = k ? 400 : 0,
				  .hold = true };
		struct rec_sender_opts o = REC_SENDER_OPTS_INIT;
		struct prec_writer_opts wo = PREC_WRITER_OPTS_INIT;
		struct rec_sender_stats st;
		struct rec_sender *snd;
		struct prec_writer *w;
		char to[64];

		(void)state;
		fake_start(&f);
		snprintf(to, sizeof(to), "127.0.0.1:%d", f.port);
		o.to = to;
		o.host = "testhost";
		o.session_id = "beyond";
		assert_int_equal(rec_sender_new(&o, &snd), 0);
		wo.frame_size = 4096;
		w = prec_writer_new(rec_sender_sink(snd), &wo);
		st_write_samples(w, 3000, 1000);
		assert_int_equal(prec_writer_close(w), 0);
		logcap_clear();
		assert_int_equal(rec_sender_finish(snd, 700), -ETIMEDOUT);
		rec_sender_stats(snd, &st);
		assert_int_equal(st.acked, 0);
		assert_int_equal(st.spool_used, st.bytes);
		if (!strstr(st.last_error, "a protocol error"))
			fail_msg("%s: '%s'", k ? "ack" : "welcome", st.last_error);
		assert_null(strstr(logcap_all(), "18446744073709"));
		prec_writer_free(w);
		rec_sender_free(snd);
		fake_stop(&f);
	}
}

/* ---- raw peers */

static int raw_connect(int port)
{
	struct sockaddr_in a = { 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Sends up to n bytes of zeros (less when the peer stops reading or
 * closes) within ms; returns what was sent. */
static size_t raw_fill(int fd, size_t n, int ms)
{
	static const char zeros[1 << 16];
	uint64_t end = mono_ms() + (uint64_t)ms;
	size_t sent = 0;

	while (sent < n && mono_ms() < end) {
		struct pollfd p = { fd, POLLOUT, 0 };
		ssize_t k;

		if (poll(&p, 1, 50) <= 0)
			continue;
		k = send(fd, zeros, n - sent < sizeof(zeros) ? n - sent : sizeof(zeros),
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (k <= 0)
			break;
		sent += (size_t)k;
	}
	return sent;
}

/* The reason of the Refusal the peer got within ms, or "" (caller
 * frees). */
static char *raw_refusal(int fd, int ms)
{
	struct prec_msgbuf in;
	uint64_t end = mono_ms() + (uint64_t)ms;
	char *why = strdup("");

	prec_msgbuf_init(&in, REC_WIRE_MAX_SMALL);
	while (!why[0] && mono_ms() < end) {
		struct pollfd p = { fd, POLLIN, 0 };
		const unsigned char *msg;
		size_t room, len;
		void *b;
		ssize_t k;

		if (poll(&p, 1, 50) <= 0)
			continue;
		b = prec_msgbuf_space(&in, &room);
		k = read(fd, b, room);
		if (k <= 0)
			break;
		prec_msgbuf_commit(&in, (size_t)k);
		while (prec_msgbuf_next(&in, &msg, &len) > 0) {
			Perfrec__Control__StreamMessage *m = rec_wire_unpack(msg, len);

			if (m && m->body_case == PERFREC__CONTROL__STREAM_MESSAGE__BODY_REFUSAL) {
				free(why);
				why = strdup(m->refusal->reason);
			}
			perfrec__control__stream_message__free_unpacked(m, NULL);
		}
	}
	prec_msgbuf_release(&in);
	return why;
}

/* Peers that never say hello cannot make the collector hold their big
 * messages: each is refused once it passes a hello's size (they used to
 * hold up to 64 MiB each, 1.1 GiB for 24 of them). */
static void test_flood_before_hello(void **state)
{
	enum { N = 16 };
	char *dir = st_tmpdir();
	struct server s = { 0 };
	struct rec_collector_stats st;
	const unsigned char len[4] = { 0x04, 0, 0, 0 };   /* 64 MiB */
	int fd[N];

	(void)state;
	server_start(&s, dir, 0);
	for (int i = 0; i < N; i++) {
		fd[i] = raw_connect(server_port(&s));
		assert_int_equal(write(fd[i], len, 4), 4);
	}
	for (int i = 0; i < N; i++)
		raw_fill(fd[i], 4u << 20, 200);
	for (int i = 0; i < N; i++) {
		char *why = raw_refusal(fd[i], 5000);

		if (!strstr(why, "before the hello is larger than any hello"))
			fail_msg("flooder %d: refusal '%s'", i, why);
		free(why);
		close(fd[i]);
	}
	rec_collector_stats(s.c, &st);
	if (st.buffered_peak > N * (4 + REC_WIRE_MAX_HELLO))
		fail_msg("%llu bytes buffered for %d peers before their hello",
			 (unsigned long long)st.buffered_peak, N);
	server_stop(&s);
	st_rmdir(dir);
}

/* Peers that said hello and then send big messages slowly hold no more
 * than --max-buffer together: the one that would pass it is refused
 * with the reason. */
static void test_total_buffer(void **state)
{
	enum { N = 4 };
	char *dir = st_tmpdir();
	struct server s = { 0 };
	struct rec_collector_stats st;
	const unsigned char len[4] = { 0x04, 0, 0, 0 };   /* 64 MiB */
	int fd[N], refused = 0;

	(void)state;
	server_max_buffer = 96u << 20;
	server_start(&s, dir, 0);
	server_max_buffer = 0;
	for (int i = 0; i < N; i++) {
		struct st_buf sb = { 0 };
		char id[16];

		snprintf(id, sizeof(id), "big%d", i);
		st_put_hello_id(&sb, REC_WIRE_VERSION, "testhost", id, NULL, id);
		st_put(&sb, len, 4);
		fd[i] = raw_connect(server_port(&s));
		assert_int_equal(write(fd[i], sb.b, sb.len), (ssize_t)sb.len);
		free(sb.b);
	}
	for (int i = 0; i < N; i++)
		raw_fill(fd[i], 40u << 20, 3000);
	for (int i = 0; i < N; i++) {
		char *why = raw_refusal(fd[i], 300);

		refused += strstr(why, "--max-buffer") != NULL;
		free(why);
		close(fd[i]);
	}
	rec_collector_stats(s.c, &st);
	if (!refused || st.buffered_peak > (96u << 20))
		fail_msg("%d refused, %llu bytes buffered at the most", refused,
			 (unsigned long long)st.buffered_peak);
	server_stop(&s);
	st_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_whole),
		cmocka_unit_test(test_collector_restart),
		cmocka_unit_test(test_spool_full_drops),
		cmocka_unit_test(test_finish_timeout),
		cmocka_unit_test(test_tls),
		cmocka_unit_test(test_two_recordings),
		cmocka_unit_test(test_backoff_after_welcome),
		cmocka_unit_test(test_ack_beyond_sent),
		cmocka_unit_test(test_definitive_refusal),
		cmocka_unit_test(test_frame_size),
		cmocka_unit_test(test_frame_size_collector),
		cmocka_unit_test(test_flood_before_hello),
		cmocka_unit_test(test_total_buffer),
	};

	signal(SIGPIPE, SIG_IGN);
	logcap_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
