/*
 * test_stream.c - a sender (recorder/net/sender.c) and a collector on
 * loopback, each on its own thread: the archive equals the bytes written;
 * a collector that goes away and comes back on the same directory gets
 * the rest, with nothing lost or doubled; a spool that fills while no
 * collector listens drops new frames, counts them, and keeps the header.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
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

static void server_start(struct server *s, const char *dir, int port)
{
	struct rec_collector_opts o = REC_COLLECTOR_OPTS_INIT;

	snprintf(s->listen, sizeof(s->listen), "127.0.0.1:%d", port);
	o.listen = s->listen;
	o.dir = dir;
	o.tls = s->tls;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_whole),
		cmocka_unit_test(test_collector_restart),
		cmocka_unit_test(test_spool_full_drops),
		cmocka_unit_test(test_finish_timeout),
		cmocka_unit_test(test_tls),
	};

	signal(SIGPIPE, SIG_IGN);
	logcap_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
