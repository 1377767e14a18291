/*
 * natstest.h - a real nats-server (-js, loopback, a temporary store) for
 * the JetStream tests: started on a free port, killed with -9 and its
 * store removed at the end. A test without nats-server on PATH is
 * skipped. Also a way to wait for publish results (rec_js_poll) with a
 * bound in time.
 */
#ifndef PERFREC_TEST_NATSTEST_H
#define PERFREC_TEST_NATSTEST_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "recorder/net/jetstream.h"

struct nt_server {
	pid_t pid;
	int port;
	char dir[64];
	char url[64];
};

static inline uint64_t nt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A free port below the kernel's ephemeral range, where no client
 * connection is given one meanwhile (as tests/lib/ports.sh). */
static inline int nt_free_port(void)
{
	srand((unsigned)getpid() ^ (unsigned)nt_now_ms());
	for (int i = 0; i < 1000; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		int fd = socket(AF_INET, SOCK_STREAM, 0), port = 10000 + rand() % 22000;
		bool ok;

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a.sin_port = htons((uint16_t)port);
		ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
		close(fd);
		if (ok)
			return port;
	}
	fail_msg("no free port");
	return -1;
}

static inline bool nt_listening(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

/* The servers running (pid, store), killed at exit: a failed assertion
 * leaves the test function without its nt_stop(). */
static struct {
	pid_t pid;
	char dir[64];
} nt_running[8];

static inline void nt_kill_all(void)
{
	char cmd[128];

	for (size_t i = 0; i < sizeof(nt_running) / sizeof(*nt_running); i++) {
		if (nt_running[i].pid <= 0)
			continue;
		kill(nt_running[i].pid, SIGKILL);
		waitpid(nt_running[i].pid, NULL, 0);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", nt_running[i].dir);
		if (system(cmd) != 0) {
			/* a temporary directory left behind */
		}
	}
}

static inline void nt_track(pid_t old, pid_t pid, const char *dir)
{
	static bool registered;
	size_t i;

	if (!registered)
		atexit(nt_kill_all);
	registered = true;
	for (i = 0; i < sizeof(nt_running) / sizeof(*nt_running) - 1; i++)
		if (nt_running[i].pid == old)
			break;
	nt_running[i].pid = pid;
	snprintf(nt_running[i].dir, sizeof(nt_running[i].dir), "%s", dir);
}

/* Starts the server on n->port (0: a free one) and n->dir (""): a new
 * temporary store); false when nats-server is not installed. */
static inline bool nt_start(struct nt_server *n)
{
	char port[16], log[128];

	if (system("command -v nats-server >/dev/null 2>&1") != 0)
		return false;
	if (!n->port)
		n->port = nt_free_port();
	if (!n->dir[0]) {
		snprintf(n->dir, sizeof(n->dir), "/tmp/perfrec-nats-XXXXXX");
		assert_non_null(mkdtemp(n->dir));
	}
	snprintf(n->url, sizeof(n->url), "nats://127.0.0.1:%d", n->port);
	snprintf(port, sizeof(port), "%d", n->port);
	snprintf(log, sizeof(log), "%s/server.log", n->dir);
	n->pid = fork();
	assert_true(n->pid >= 0);
	if (n->pid)
		nt_track(0, n->pid, n->dir);
	if (!n->pid) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("nats-server", "nats-server", "-js", "-sd", n->dir, "-a", "127.0.0.1",
		       "-p", port, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200 && !nt_listening(n->port); i++)
		usleep(50000);
	assert_true(nt_listening(n->port));
	return true;
}

/* kill -9: the store stays, for nt_start() again. */
static inline void nt_kill(struct nt_server *n)
{
	if (n->pid > 0) {
		kill(n->pid, SIGKILL);
		waitpid(n->pid, NULL, 0);
		nt_track(n->pid, 0, "");
	}
	n->pid = 0;
}

static inline void nt_stop(struct nt_server *n)
{
	char cmd[128];

	nt_kill(n);
	if (n->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", n->dir);
		assert_int_equal(system(cmd), 0);
	}
}

/* A slow link with a deep buffer between a client and the server: it
 * reads whatever the client sends at once (the client's writes never
 * block) and passes it on at `rate` bytes per second; the server's
 * answers go back at once. One connection, on its own thread. */
struct nt_link {
	int lfd, port, server_port;
	size_t rate;
	pthread_t th;
	char url[64];
};

static inline void *nt_link_run(void *arg)
{
	struct nt_link *l = arg;
	int c = accept(l->lfd, NULL, NULL), sv = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)l->server_port) };
	unsigned char *buf = NULL, tmp[65536];
	size_t off = 0, len = 0, cap = 0, sent = 0;   /* buf[off, len) waits */
	uint64_t t0 = nt_now_ms();

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (c < 0 || connect(sv, (struct sockaddr *)&a, sizeof(a)) < 0)
		return NULL;
	for (;;) {
		struct pollfd p[2] = { { .fd = c, .events = POLLIN },
				       { .fd = sv, .events = POLLIN } };
		size_t allowed = (size_t)((nt_now_ms() - t0) * l->rate / 1000);
		ssize_t r;

		poll(p, 2, 5);
		if (p[0].revents & (POLLIN | POLLHUP)) {
			r = read(c, tmp, sizeof(tmp));
			if (r <= 0)
				break;
			if (off && off == len)
				off = len = 0;
			if (len + (size_t)r > cap) {
				if (len > off)
					memmove(buf, buf + off, len - off);
				len -= off;
				off = 0;
				cap = (len + (size_t)r) * 2;
				buf = realloc(buf, cap);
				if (!buf)
					break;
			}
			memcpy(buf + len, tmp, (size_t)r);
			len += (size_t)r;
		}
		if (p[1].revents & (POLLIN | POLLHUP)) {
			r = read(sv, tmp, sizeof(tmp));
			if (r <= 0 || write(c, tmp, (size_t)r) != r)
				break;
		}
		if (allowed > sent && len > off) {
			size_t n = allowed - sent < len - off ? allowed - sent : len - off;

			r = write(sv, buf + off, n);
			if (r > 0) {
				off += (size_t)r;
				sent += (size_t)r;
			}
		}
		if (len == off)
			sent = allowed;   /* an idle link does not save up */
	}
	free(buf);
	close(c);
	close(sv);
	return NULL;
}

static inline void nt_link_start(struct nt_link *l, int server_port, size_t rate)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t sl = sizeof(a);

	l->server_port = server_port;
	l->rate = rate;
	l->lfd = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(l->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l->lfd, 1), 0);
	assert_int_equal(getsockname(l->lfd, (struct sockaddr *)&a, &sl), 0);
	l->port = ntohs(a.sin_port);
	snprintf(l->url, sizeof(l->url), "nats://127.0.0.1:%d", l->port);
	assert_int_equal(pthread_create(&l->th, NULL, nt_link_run, l), 0);
}

/* After the client closed its connection. */
static inline void nt_link_stop(struct nt_link *l)
{
	pthread_join(l->th, NULL);
	close(l->lfd);
}

/* Applies publish results until done(s) or timeout_ms passed; returns
 * done(s). */
static inline bool nt_poll_until(struct rec_js *js, struct rec_js_stream *s,
				 bool (*done)(struct rec_js_stream *s), int timeout_ms)
{
	uint64_t end = nt_now_ms() + (uint64_t)timeout_ms;
	struct pollfd p = { .fd = rec_js_pollfd(js), .events = POLLIN };

	while (!done(s) && nt_now_ms() < end) {
		poll(&p, 1, 50);
		rec_js_poll(js);
	}
	return done(s);
}

#endif
