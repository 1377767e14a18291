/*
 * fleet_load.c - N simulated hosts streaming real recorded frames to
 * collectors at the rates real hosts would, for tests/bench/fleet_load.sh.
 *
 *   fleet_load --to ADDR:PORT[,ADDR:PORT] --hosts N --seconds S --prefix P
 *              --archive DIR [--drain-timeout S] CLASS...
 *   CLASS = TRACE.prec:BYTES_PER_SECOND:WEIGHT
 *
 * Host i (named P-i, stream "load") belongs to a class chosen by weight
 * and streams that class's recording -- its header record, then its data
 * records over and over -- paced to the class's bytes per second, over
 * the real protocol (hello with a stream id and resend_from, frames,
 * acks, reconnects to the next collector with a resend from the
 * Welcome's resume point, as perfrec's sender does). Hosts start spread
 * over the first second. One thread and poll(2), so 1000 hosts cost the
 * generator little.
 *
 * After S seconds the hosts stop making frames and wait until all are
 * acknowledged (up to --drain-timeout, 120 s), then until each host's
 * archive file DIR/P-i/load.prec (written by `perfrec archive`) holds
 * what the host sent, and compare it byte for byte with the records the
 * host sent, in order: a shorter or different file is a loss, a longer
 * one a duplicate. Prints one line of key=value figures (see main()).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "format/record.h"
#include "recorder/net/wire.h"

#define MAX_CLASSES 8
#define MAX_ADDRS 4
/* what perfrec's sender keeps unacknowledged by default (--spool-size) */
#define SPOOL_BYTES (64u << 20)

struct class {
	unsigned char *trace;
	size_t nrec, *off;   /* record i: trace[off[i] .. off[i + 1]) */
	double rate;         /* bytes per second per host */
	double weight;
};

struct host {
	struct class *c;
	char name[32];
	unsigned char sid[16];
	int fd, state;       /* state: 0 idle, 1 connecting, 2 hello sent, 3 streaming */
	unsigned coll;       /* index into addrs */
	uint64_t made;       /* records made so far (seq 1..made exist) */
	uint64_t next;       /* seq to send next */
	uint64_t acked;
	uint64_t made_bytes, acked_bytes;
	double next_due;     /* when the next record is made */
	double retry_at;
	double backoff;      /* as perfrec's sender: 0.1 s doubling to 5 s,
			      * back to 0.1 s once frames are acknowledged */
	double *sent_at;     /* by seq */
	size_t sent_cap;
	/* the message being written: its header and payload, bytes done */
	unsigned char hdr[REC_WIRE_FRAME_HDR_MAX];
	unsigned char *small;   /* a hello */
	struct iovec v[2];
	size_t out_done, out_len;
	int has_out;
	struct prec_msgbuf in;
	unsigned reconnects, refusals;
	uint64_t dropped;
};

static struct class classes[MAX_CLASSES];
static unsigned nclasses;
static struct sockaddr_storage addrs[MAX_ADDRS];
static socklen_t addr_len[MAX_ADDRS];
static unsigned naddrs;
static double *lat;
static size_t nlat, lat_cap;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "fleet_load: %s\n", what);
	exit(2);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

/* the record index of seq: the header once, then the data records (not
 * the last: a session's end) over and over */
static size_t rec_of(const struct class *c, uint64_t seq)
{
	return seq == 1 ? 0 : 1 + (size_t)((seq - 2) % (c->nrec - 2));
}

static size_t rec_len(const struct class *c, uint64_t seq)
{
	size_t i = rec_of(c, seq);

	return c->off[i + 1] - c->off[i];
}

static void load_class(const char *spec)
{
	char path[4096], *colon;
	struct class *c = &classes[nclasses];
	struct prec_record rec;
	size_t len, pos = 0, cap = 0;
	FILE *f;

	if (nclasses == MAX_CLASSES)
		die("too many classes");
	snprintf(path, sizeof(path), "%s", spec);
	colon = strrchr(path, ':');
	if (!colon)
		die("a class is TRACE:BYTES_PER_SECOND:WEIGHT");
	c->weight = atof(colon + 1);
	*colon = '\0';
	colon = strrchr(path, ':');
	if (!colon)
		die("a class is TRACE:BYTES_PER_SECOND:WEIGHT");
	c->rate = atof(colon + 1);
	*colon = '\0';
	f = fopen(path, "rb");
	if (!f)
		die("cannot open a class's trace");
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	rewind(f);
	c->trace = xrealloc(NULL, len);
	if (fread(c->trace, 1, len, f) != len)
		die("cannot read a class's trace");
	fclose(f);
	while (pos < len && prec_record_scan(c->trace + pos, len - pos, 0, &rec) == 1 &&
	       rec.kind != PREC_RECORD_INDEX) {
		if (c->nrec + 2 > cap) {
			cap = cap ? 2 * cap : 64;
			c->off = xrealloc(c->off, cap * sizeof(*c->off));
		}
		c->off[c->nrec++] = pos;
		pos += rec.len;
	}
	if (c->nrec < 3 || c->rate <= 0 || c->weight <= 0)
		die("a class needs a trace of 3 records or more, a rate and a weight");
	c->off[c->nrec] = pos;
	nclasses++;
}

static void parse_addrs(const char *list)
{
	char buf[1024], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *a = strtok_r(buf, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
		char *colon = strrchr(a, ':');

		if (!colon || naddrs == MAX_ADDRS)
			die("--to ADDR:PORT[,ADDR:PORT]");
		*colon = '\0';
		if (getaddrinfo(a, colon + 1, &hints, &ai))
			die("cannot resolve a --to address");
		memcpy(&addrs[naddrs], ai->ai_addr, ai->ai_addrlen);
		addr_len[naddrs++] = ai->ai_addrlen;
		freeaddrinfo(ai);
	}
}

static void drop_conn(struct host *h, double t)
{
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	h->state = 0;
	h->has_out = 0;
	free(h->small);
	h->small = NULL;
	prec_msgbuf_release(&h->in);
	h->coll = (h->coll + 1) % naddrs;
	if (h->backoff < 0.1)
		h->backoff = 0.1;
	h->retry_at = t + h->backoff / 2 + h->backoff / 2 * (double)(rand() % 1000) / 1000;
	h->backoff = h->backoff * 2 > 5 ? 5 : h->backoff * 2;
	h->reconnects++;
}

static void start_conn(struct host *h)
{
	int one = 1;

	h->fd = socket(addrs[h->coll].ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (h->fd < 0)
		die("socket");
	setsockopt(h->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(h->fd, (struct sockaddr *)&addrs[h->coll], addr_len[h->coll]) < 0 &&
	    errno != EINPROGRESS) {
		drop_conn(h, now());
		return;
	}
	h->state = 1;
	prec_msgbuf_init(&h->in, REC_WIRE_MAX_SMALL);
}

static void queue_hello(struct host *h)
{
	Perfrec__Control__StreamMessage m = PERFREC__CONTROL__STREAM_MESSAGE__INIT;
	Perfrec__Control__Hello hello = PERFREC__CONTROL__HELLO__INIT;
	size_t len;

	hello.version = REC_WIRE_VERSION;
	hello.host = h->name;
	hello.session_id = (char *)"load";
	hello.recorder_version = (char *)"fleet_load";
	hello.frame_bytes = REC_WIRE_FRAME_UNHEARD;
	hello.frame_adapts = 1;
	hello.resend_from = h->acked + 1;
	hello.stream_id.data = h->sid;
	hello.stream_id.len = sizeof(h->sid);
	m.body_case = PERFREC__CONTROL__STREAM_MESSAGE__BODY_HELLO;
	m.hello = &hello;
	if (rec_wire_pack(&m, &h->small, &len))
		die("out of memory");
	h->v[0].iov_base = h->small;
	h->v[0].iov_len = len;
	h->v[1].iov_len = 0;
	h->out_len = len;
	h->out_done = 0;
	h->has_out = 1;
	h->state = 2;
}

static void queue_frame(struct host *h, double t)
{
	const struct class *c = h->c;
	size_t i = rec_of(c, h->next);

	h->v[1].iov_base = c->trace + c->off[i];
	h->v[1].iov_len = c->off[i + 1] - c->off[i];
	h->v[0].iov_base = h->hdr;
	h->v[0].iov_len = rec_wire_frame_header(h->next, h->v[1].iov_len, h->hdr);
	h->out_len = h->v[0].iov_len + h->v[1].iov_len;
	h->out_done = 0;
	h->has_out = 1;
	if (h->next >= h->sent_cap) {
		h->sent_cap = h->next * 2 + 64;
		h->sent_at = xrealloc(h->sent_at, h->sent_cap * sizeof(double));
	}
	h->sent_at[h->next] = t;
	h->next++;
}

/* Writes what it can of the queued message; -1 when the connection broke. */
static int write_out(struct host *h)
{
	while (h->has_out) {
		struct iovec v[2];
		int n = 0;
		size_t skip = h->out_done;
		ssize_t k;

		for (int i = 0; i < 2; i++) {
			if (skip >= h->v[i].iov_len) {
				skip -= h->v[i].iov_len;
				continue;
			}
			v[n].iov_base = (char *)h->v[i].iov_base + skip;
			v[n++].iov_len = h->v[i].iov_len - skip;
			skip = 0;
		}
		k = writev(h->fd, v, n);
		if (k < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		h->out_done += (size_t)k;
		if (h->out_done == h->out_len) {
			h->has_out = 0;
			free(h->small);
			h->small = NULL;
		}
	}
	return 0;
}

static void note_latency(double ms)
{
	if (nlat == lat_cap) {
		lat_cap = lat_cap ? 2 * lat_cap : 4096;
		lat = xrealloc(lat, lat_cap * sizeof(*lat));
	}
	lat[nlat++] = ms;
}

/* Reads acks, a Welcome or a refusal; -1 when the connection ended. */
static int read_in(struct host *h, double t)
{
	for (;;) {
		size_t room, len;
		void *b = prec_msgbuf_space(&h->in, &room);
		const unsigned char *msg;
		ssize_t n;
		int ret;

		if (!b)
			return -1;
		n = read(h->fd, b, room);
		if (n == 0)
			return -1;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		prec_msgbuf_commit(&h->in, (size_t)n);
		while ((ret = prec_msgbuf_next(&h->in, &msg, &len)) > 0) {
			Perfrec__Control__StreamMessage *m = rec_wire_unpack(msg, len);

			if (!m)
				return -1;
			switch (m->body_case) {
			case PERFREC__CONTROL__STREAM_MESSAGE__BODY_WELCOME:
				h->next = m->welcome->next_seq;
				if (h->next < 1 || h->next > h->made + 1)
					h->next = h->acked + 1;
				h->state = 3;
				break;
			case PERFREC__CONTROL__STREAM_MESSAGE__BODY_ACK:
				if (m->ack->seq > h->acked)
					h->backoff = 0.1;
				while (h->acked < m->ack->seq && h->acked < h->made) {
					h->acked++;
					h->acked_bytes += rec_len(h->c, h->acked);
					note_latency((t - h->sent_at[h->acked]) * 1e3);
				}
				break;
			case PERFREC__CONTROL__STREAM_MESSAGE__BODY_REFUSAL:
				h->refusals++;
				perfrec__control__stream_message__free_unpacked(m, NULL);
				return -1;
			default:
				break;
			}
			perfrec__control__stream_message__free_unpacked(m, NULL);
		}
		if (ret < 0)
			return -1;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* 0 equal, 1 lost (short or different), 2 duplicated (longer), 3 missing */
static int check_archive(const struct host *h, const char *dir, off_t *size)
{
	char path[4096];
	unsigned char *buf = NULL;
	size_t cap = 0;
	int ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/load.prec", dir, h->name);
	f = fopen(path, "rb");
	if (!f)
		return 3;
	for (uint64_t s = 1; s <= h->made && !ret; s++) {
		size_t len = rec_len(h->c, s), i = rec_of(h->c, s);

		if (len > cap) {
			cap = len;
			buf = xrealloc(buf, cap);
		}
		if (fread(buf, 1, len, f) != len || memcmp(buf, h->c->trace + h->c->off[i], len))
			ret = 1;
	}
	if (!ret && fgetc(f) != EOF)
		ret = 2;
	*size = ftello(f);
	fclose(f);
	free(buf);
	return ret;
}

static uint64_t archived_bytes(const struct host *hosts, unsigned n, const char *dir)
{
	uint64_t sum = 0;
	char path[4096];
	struct stat st;

	for (unsigned i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s/load.prec", dir, hosts[i].name);
		if (!stat(path, &st))
			sum += (uint64_t)st.st_size;
	}
	return sum;
}

int main(int argc, char **argv)
{
	unsigned n = 0;
	double secs = 10, drain_timeout = 120, t0, t_stop, t_acked = 0, t_archived = 0;
	double next_sample, max_lag_mb = 0, wsum = 0;
	const char *prefix = "h", *dir = NULL;
	struct host *hosts;
	struct pollfd *pfd;
	uint64_t made = 0, acked = 0, bytes = 0, dropped = 0;
	unsigned reconnects = 0, refusals = 0, ok = 0, lost = 0, dup = 0, missing = 0;
	int urandom;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--to") && i + 1 < argc)
			parse_addrs(argv[++i]);
		else if (!strcmp(argv[i], "--hosts") && i + 1 < argc)
			n = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "--prefix") && i + 1 < argc)
			prefix = argv[++i];
		else if (!strcmp(argv[i], "--archive") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--drain-timeout") && i + 1 < argc)
			drain_timeout = atof(argv[++i]);
		else
			load_class(argv[i]);
	}
	if (!naddrs || !n || !nclasses || !dir)
		die("usage: fleet_load --to ADDR:PORT[,...] --hosts N --seconds S --prefix P "
		    "--archive DIR TRACE:BYTES_PER_SECOND:WEIGHT...");
	for (unsigned k = 0; k < nclasses; k++)
		wsum += classes[k].weight;
	hosts = calloc(n, sizeof(*hosts));
	pfd = calloc(n, sizeof(*pfd));
	if (!hosts || !pfd)
		die("out of memory");
	urandom = open("/dev/urandom", O_RDONLY);
	t0 = now();
	for (unsigned i = 0; i < n; i++) {
		struct host *h = &hosts[i];
		/* class by weight, spread evenly over the hosts */
		double x = ((double)i + 0.5) / n * wsum, acc = 0;
		unsigned k = 0;

		while (k + 1 < nclasses && x > acc + classes[k].weight)
			acc += classes[k++].weight;
		h->c = &classes[k];
		snprintf(h->name, sizeof(h->name), "%s-%u", prefix, i);
		if (read(urandom, h->sid, sizeof(h->sid)) != (ssize_t)sizeof(h->sid))
			die("cannot read /dev/urandom");
		h->fd = -1;
		h->coll = i % naddrs;
		h->retry_at = t0 + (double)i / n;
		h->next_due = h->retry_at;
		h->next = 1;
	}
	close(urandom);
	t_stop = t0 + secs;
	next_sample = t0 + 1;
	for (;;) {
		double t = now(), wait = 0.05;
		unsigned all_acked = 1;

		for (unsigned i = 0; i < n; i++) {
			struct host *h = &hosts[i];

			/* frames made at the host's rate, kept until acknowledged */
			while (t < t_stop && h->next_due <= t) {
				size_t len = rec_len(h->c, h->made + 1);

				if (h->made_bytes - h->acked_bytes + len > SPOOL_BYTES) {
					h->dropped++;   /* the spool is full: never here */
					h->next_due += (double)len / h->c->rate;
					continue;
				}
				h->made++;
				h->made_bytes += len;
				h->next_due += (double)len / h->c->rate;
			}
			if (h->acked < h->made)
				all_acked = 0;
			if (h->state == 0 && h->retry_at <= t && h->made)
				start_conn(h);
			if (h->state == 3 && !h->has_out && h->next <= h->made)
				queue_frame(h, t);
			pfd[i].fd = h->fd;
			pfd[i].events = h->state ? POLLIN : 0;
			if (h->state == 1 || h->has_out)
				pfd[i].events |= POLLOUT;
		}
		if (t >= t_stop && all_acked && !t_acked)
			t_acked = t;
		if (t_acked || t > t_stop + drain_timeout)
			break;
		if (t >= next_sample) {
			uint64_t a = 0, ar = archived_bytes(hosts, n, dir);
			double mb;

			for (unsigned i = 0; i < n; i++)
				a += hosts[i].acked_bytes;
			mb = a > ar ? (double)(a - ar) / 1e6 : 0;
			if (mb > max_lag_mb)
				max_lag_mb = mb;
			next_sample = t + 1;
		}
		if (poll(pfd, n, (int)(wait * 1000)) < 0 && errno != EINTR)
			die("poll");
		t = now();
		for (unsigned i = 0; i < n; i++) {
			struct host *h = &hosts[i];

			if (h->fd < 0 || !pfd[i].revents)
				continue;
			if (h->state == 1 && (pfd[i].revents & (POLLOUT | POLLERR | POLLHUP))) {
				int err = 0;
				socklen_t el = sizeof(err);

				getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &err, &el);
				if (err) {
					drop_conn(h, t);
					continue;
				}
				queue_hello(h);
			}
			if ((pfd[i].revents & (POLLIN | POLLERR | POLLHUP)) && read_in(h, t) < 0) {
				drop_conn(h, t);
				continue;
			}
			if (h->has_out && write_out(h) < 0)
				drop_conn(h, t);
			while (h->fd >= 0 && h->state == 3 && !h->has_out && h->next <= h->made) {
				queue_frame(h, t);
				if (write_out(h) < 0)
					drop_conn(h, t);
			}
		}
	}
	/* the archive catches up: every host's file at least what it sent */
	if (t_acked) {
		uint64_t want = 0;

		for (unsigned i = 0; i < n; i++)
			want += hosts[i].made_bytes;
		while (now() < t_acked + drain_timeout) {
			if (archived_bytes(hosts, n, dir) >= want) {
				t_archived = now();
				break;
			}
			usleep(50000);
		}
	}
	for (unsigned i = 0; i < n; i++) {
		struct host *h = &hosts[i];
		off_t size = 0;

		made += h->made;
		acked += h->acked;
		bytes += h->acked_bytes;
		dropped += h->dropped;
		reconnects += h->reconnects;
		refusals += h->refusals;
		switch (check_archive(h, dir, &size)) {
		case 0: ok++; break;
		case 1: lost++; break;
		case 2: dup++; break;
		default: missing++; break;
		}
		if (h->fd >= 0)
			close(h->fd);
		free(h->sent_at);
		free(h->small);
		prec_msgbuf_release(&h->in);
	}
	qsort(lat, nlat, sizeof(*lat), cmp_double);
	{
		double span = (t_acked ? t_acked : now()) - t0;

		printf("hosts=%u seconds=%.1f frames=%llu acked=%llu bytes=%llu span=%.2f "
		       "frames_per_s=%.0f mb_per_s=%.2f ack_p50_ms=%.1f ack_p99_ms=%.1f "
		       "archive_drain_s=%.2f max_archive_lag_mb=%.1f reconnects=%u refusals=%u "
		       "spool_dropped=%llu hosts_ok=%u hosts_lost=%u hosts_dup=%u hosts_missing=%u\n",
		       n, secs, (unsigned long long)made, (unsigned long long)acked,
		       (unsigned long long)bytes, span, (double)acked / span,
		       (double)bytes / 1e6 / span, nlat ? lat[nlat / 2] : 0,
		       nlat ? lat[nlat * 99 / 100] : 0,
		       t_archived ? t_archived - t_acked : -1, max_lag_mb, reconnects,
		       refusals, (unsigned long long)dropped, ok, lost, dup, missing);
	}
	free(lat);
	free(hosts);
	free(pfd);
	return lost || dup || missing || !t_acked || !t_archived ? 1 : 0;
}
