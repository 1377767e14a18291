/*
 * dump.c - packet printer. One small field emitter serves text and JSON
 * so both show the same fields.
 */
#include "analyzer/reports/dump.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/read/merge.h"
#include "analyzer/read/trace.h"
#include "format/strescape.h"

/* Output goes through a private buffer flushed with fwrite: a dump is
 * millions of lines and stdio's formatted output was most of its cost. */
struct em {
	FILE *f;
	int json;
	int n;   /* fields written on this line */
	char *buf;
	size_t len, cap;
	int err;
	uint64_t flushes;   /* em_flush() calls: a buffer position is stale after one */
	/* Decimal text of the switch line's numbers that repeat line after
	 * line (see switch_line): the seconds of the time, and pids and
	 * tids in a direct-mapped table. */
	uint64_t sec;
	uint8_t sec_len;
	char sec_s[20];
	struct { uint32_t v; uint8_t len; char s[11]; } dec[256];
	/* A sample's event value as written (bare or quoted), made once per
	 * event name: the trace's names are stable pointers for the run. */
	const char *ev_name;
	size_t ev_len;
	char ev_s[128];
};

#define EM_FLUSH_AT (64u * 1024u)

static void em_flush(struct em *e)
{
	e->flushes++;
	if (e->len && fwrite(e->buf, 1, e->len, e->f) != e->len)
		e->err = -EIO;
	e->len = 0;
}

static void put(struct em *e, const char *s, size_t n)
{
	if (e->len + n > e->cap) {
		em_flush(e);
		if (n > e->cap) {
			if (fwrite(s, 1, n, e->f) != n)
				e->err = -EIO;
			return;
		}
	}
	memcpy(e->buf + e->len, s, n);
	e->len += n;
}

static void puts_(struct em *e, const char *s)
{
	put(e, s, strlen(s));
}

/* Where n bytes can be written in the buffer (flushed first when it
 * lacks them); the caller then sets e->len past what it wrote. n must not
 * exceed the buffer's size (fixed-width numbers only). */
static char *room(struct em *e, size_t n)
{
	if (e->cap - e->len < n)
		em_flush(e);
	return e->buf + e->len;
}

static void putc_(struct em *e, char ch)
{
	if (e->len == e->cap)
		em_flush(e);
	e->buf[e->len++] = ch;
}

static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Decimal writers for the hot line: 32-bit arithmetic, the digit count
 * by comparison, two digits per division. */
static char *w_u32(char *w, uint32_t v)
{
	int n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 :
		v < 100000 ? 5 : v < 1000000 ? 6 : v < 10000000 ? 7 :
		v < 100000000 ? 8 : v < 1000000000 ? 9 : 10;
	char *end = w + n;
	while (v >= 100) {
		uint32_t d = v % 100;
		v /= 100;
		end -= 2;
		memcpy(end, digit_pairs + 2 * d, 2);
	}
	if (v >= 10)
		memcpy(end - 2, digit_pairs + 2 * v, 2);
	else
		end[-1] = (char)('0' + v);
	return w + n;
}

/* Exactly 9 digits, zero-padded (nanoseconds of a second): the high 5
 * and low 4 digits apart, so the two chains of divisions overlap. */
static char *w_nine(char *w, uint32_t v)
{
	uint32_t hi = v / 10000, lo = v % 10000;
	w[0] = (char)('0' + hi / 10000);
	hi %= 10000;
	memcpy(w + 1, digit_pairs + 2 * (hi / 100), 2);
	memcpy(w + 3, digit_pairs + 2 * (hi % 100), 2);
	memcpy(w + 5, digit_pairs + 2 * (lo / 100), 2);
	memcpy(w + 7, digit_pairs + 2 * (lo % 100), 2);
	return w + 9;
}

static char *w_u64(char *w, uint64_t v)
{
	if (v <= UINT32_MAX)
		return w_u32(w, (uint32_t)v);
	uint64_t hi = v / 1000000000u;
	if (hi > UINT32_MAX) {   /* beyond 4e18: rare, the slow way */
		char t[20];
		int i = sizeof(t);
		do {
			t[--i] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		memcpy(w, t + i, sizeof(t) - (size_t)i);
		return w + sizeof(t) - (size_t)i;
	}
	w = w_u32(w, (uint32_t)hi);
	return w_nine(w, (uint32_t)(v % 1000000000u));
}

static void putu(struct em *e, uint64_t v)
{
	char *w = room(e, 20);
	e->len = (size_t)(w_u64(w, v) - e->buf);
}

static void puti(struct em *e, int64_t v)
{
	if (v < 0) {
		putc_(e, '-');
		putu(e, (uint64_t)0 - (uint64_t)v);
	} else {
		putu(e, (uint64_t)v);
	}
}

static const char hex_pairs[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* 0x and v's hex digits at w (at most 18 bytes). */
static char *w_hex(char *w, uint64_t v)
{
	int n = v ? (67 - __builtin_clzll(v)) >> 2 : 1;   /* hex digits */
	char *end = w + 2 + n, *r = end;
	w[0] = '0';
	w[1] = 'x';
	for (; n >= 2; n -= 2) {
		end -= 2;
		memcpy(end, hex_pairs + 2 * (v & 0xff), 2);
		v >>= 8;
	}
	if (n)
		end[-1] = hex_pairs[2 * (v & 0xf) + 1];
	return r;
}

static void putx(struct em *e, uint64_t v)
{
	char *w = room(e, 18);
	e->len = (size_t)(w_hex(w, v) - e->buf);
}

/* JSON's escapes in both modes; a byte that is not UTF-8 is U+FFFD in
 * JSON (which must be UTF-8) and \xNN in text, as format/strescape.h
 * writes it. */
static void put_quoted(struct em *e, const char *s)
{
	static const char hexd[] = "0123456789abcdef";
	size_t n = strlen(s);

	putc_(e, '"');
	for (size_t i = 0; i < n;) {
		unsigned char ch = (unsigned char)s[i];
		uint32_t cp = ch;
		size_t k = 1;

		switch (ch) {
		case '"': put(e, "\\\"", 2); i++; continue;
		case '\\': put(e, "\\\\", 2); i++; continue;
		case '\n': put(e, "\\n", 2); i++; continue;
		case '\r': put(e, "\\r", 2); i++; continue;
		case '\t': put(e, "\\t", 2); i++; continue;
		}
		if (ch >= 0x80 && !(k = prec_utf8_char(s + i, n - i, &cp))) {
			if (e->json) {
				put(e, "\\ufffd", 6);
			} else {
				char x[4] = { '\\', 'x', hexd[ch >> 4], hexd[ch & 15] };
				put(e, x, 4);
			}
			i++;
			continue;
		}
		if (prec_is_control(cp)) {
			char u[6] = { '\\', 'u', '0', '0', hexd[cp >> 4], hexd[cp & 15] };
			put(e, u, 6);
		} else {
			put(e, s + i, k);
		}
		i += k;
	}
	putc_(e, '"');
}

/* Text: a value goes bare when it has no space, quote, '=', backslash,
 * control character or byte that is not UTF-8. */
static int bare(const char *v)
{
	size_t n = strlen(v);

	if (!n)
		return 0;
	for (size_t i = 0; i < n;) {
		unsigned char ch = (unsigned char)v[i];
		uint32_t cp;
		size_t k;

		if (ch < 0x80) {
			if (ch <= ' ' || ch == '"' || ch == '=' || ch == '\\' || ch == 0x7f)
				return 0;
			i++;
			continue;
		}
		k = prec_utf8_char(v + i, n - i, &cp);
		if (!k || prec_is_control(cp))
			return 0;
		i += k;
	}
	return 1;
}

static void key(struct em *e, const char *k)
{
	if (e->json) {
		if (e->n++)
			put(e, ",\"", 2);
		else
			putc_(e, '"');
		puts_(e, k);
		put(e, "\":", 2);
	} else {
		putc_(e, ' ');
		puts_(e, k);
		putc_(e, '=');
	}
}

static void u64(struct em *e, const char *k, uint64_t v)
{
	key(e, k);
	putu(e, v);
}

static void i64(struct em *e, const char *k, int64_t v)
{
	key(e, k);
	puti(e, v);
}

static void hex(struct em *e, const char *k, uint64_t v)
{
	key(e, k);
	if (e->json)
		putc_(e, '"');
	putx(e, v);
	if (e->json)
		putc_(e, '"');
}

static void boolean(struct em *e, const char *k, int v)
{
	key(e, k);
	if (e->json)
		puts_(e, v ? "true" : "false");
	else
		putc_(e, v ? '1' : '0');
}

/* Text: quoted unless bare() (empty values are quoted too). */
static void value(struct em *e, const char *v)
{
	if (!v)
		v = "";
	if (!e->json && bare(v))
		puts_(e, v);
	else
		put_quoted(e, v);
}

static void str(struct em *e, const char *k, const char *v)
{
	key(e, k);
	value(e, v);
}

static void bytes_len(struct em *e, const char *k, size_t n)
{
	u64(e, k, n);
}

/* A callchain's ips, straight into the buffer: a sample's chain is
 * most of its line. */
static void hexlist(struct em *e, const uint64_t *v, size_t n)
{
	int json = e->json;
	for (size_t i = 0; i < n; i++) {
		char *w = room(e, 21);
		if (i)
			*w++ = ',';
		if (json)
			*w++ = '"';
		w = w_hex(w, v[i]);
		if (json)
			*w++ = '"';
		e->len = (size_t)(w - e->buf);
	}
}

static void ulist(struct em *e, const char *k, const uint64_t *v, size_t n, int as_hex)
{
	key(e, k);
	if (e->json)
		putc_(e, '[');
	if (as_hex) {
		hexlist(e, v, n);
		n = 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (i)
			putc_(e, ',');
		if (as_hex && e->json)
			putc_(e, '"');
		if (as_hex)
			putx(e, v[i]);
		else
			putu(e, v[i]);
		if (as_hex && e->json)
			putc_(e, '"');
	}
	if (e->json)
		putc_(e, ']');
}

static void interned(struct em *e, const char *k, const struct prec_packet *p, uint64_t iid)
{
	const char *s = iid ? prec_frame_string(p->frame, iid) : NULL;
	if (s)
		str(e, k, s);
	else if (iid)
		u64(e, k, iid);   /* dangling iid: show the number */
	else
		str(e, k, "");
}

static void group_read(struct em *e, const Perfrec__GroupRead *r)
{
	if (!r)
		return;
	u64(e, "enabled", r->time_enabled);
	u64(e, "running", r->time_running);
	ulist(e, "ids", r->ids, r->n_ids, 0);
	ulist(e, "values", r->values, r->n_values, 0);
	if (r->n_lost)
		ulist(e, "lost", r->lost, r->n_lost, 0);
}

/* A sample's or off-CPU block's stack: the ips, or the iid when the
 * frame does not define it. */
static void callchain(struct em *e, const struct prec_packet *p, uint64_t iid)
{
	size_t n = 0;
	const uint64_t *ips;

	if (!iid)
		return;
	ips = prec_frame_callchain(p->frame, iid, &n);
	if (ips)
		ulist(e, "callchain", ips, n, 1);
	else
		u64(e, "callchain_iid", iid);
}

static void header_fields(struct em *e, const Perfrec__FileHeader *h)
{
	str(e, "host", h->hostname);
	str(e, "kernel", h->kernel_release);
	str(e, "machine", h->machine);
	u64(e, "cpus", h->cpus_online);
	u64(e, "start", h->start_time);
	str(e, "target", h->target);
}

static void event_fields(struct em *e, const Perfrec__EventDesc *d)
{
	u64(e, "index", d->index);
	str(e, "name", d->name);
	u64(e, "type", d->type);
	hex(e, "config", d->config);
	boolean(e, "sampling", d->sampling);
	i64(e, "group", d->group);
	ulist(e, "ids", d->ids, d->n_ids, 0);
	if (d->error && *d->error)
		str(e, "error", d->error);
	if (d->filter && *d->filter)
		str(e, "filter", d->filter);
	if (d->bpf_output) {
		boolean(e, "bpf_output", 1);
		u64(e, "off_cpu_threshold", d->off_cpu_threshold);
	}
}

/* The event field of a sample: its value rendered once per name and
 * kept in e->ev_s when it fits (a flush while writing it leaves it out). */
static void event_field(struct em *e, const char *name)
{
	key(e, "event");
	if (name && name == e->ev_name) {
		put(e, e->ev_s, e->ev_len);
		return;
	}
	size_t v0 = e->len;
	uint64_t flushes = e->flushes;
	value(e, name);
	e->ev_name = NULL;
	if (name && flushes == e->flushes && e->len - v0 <= sizeof(e->ev_s)) {
		e->ev_len = e->len - v0;
		memcpy(e->ev_s, e->buf + v0, e->ev_len);
		e->ev_name = name;
	}
}

static void sample_fields(struct em *e, struct ana_trace *s,
			  const struct prec_packet *p, const Perfrec__Sample *m)
{
	event_field(e, ana_trace_event_name(s, ana_trace_event_of(s, m->id)));
	u64(e, "cpu", m->cpu);
	u64(e, "pid", m->pid);
	u64(e, "tid", m->tid);
	hex(e, "ip", m->ip);
	u64(e, "period", m->period);
	callchain(e, p, m->callchain);
	if (m->raw.len)
		bytes_len(e, "raw_bytes", m->raw.len);
	if (m->read)
		group_read(e, m->read);
	if (m->addr)
		hex(e, "addr", m->addr);
	if (m->n_regs)
		u64(e, "user_regs", m->n_regs);
	if (m->stack.len || m->stack_dyn_size)
		bytes_len(e, "user_stack", m->stack.len);
}

static void off_cpu_fields(struct em *e, const struct prec_packet *p, const Perfrec__OffCpu *o)
{
	str(e, "what", o->count ? "sum" : "interval");
	str(e, "state", ana_offcpu_state_name(o->state));
	u64(e, "cpu", o->cpu);
	u64(e, "pid", o->pid);
	u64(e, "tid", o->tid);
	u64(e, "ns", o->duration);
	if (o->count)
		u64(e, "blocks", o->count);
	if (o->waker_tid) {
		u64(e, "waker_pid", o->waker_pid);
		u64(e, "waker_tid", o->waker_tid);
	}
	callchain(e, p, o->callchain);
}

static void context_switch_fields(struct em *e, const Perfrec__ContextSwitch *c)
{
	str(e, "dir", c->out ? "out" : "in");
	u64(e, "cpu", c->cpu);
	u64(e, "pid", c->pid);
	u64(e, "tid", c->tid);
	boolean(e, "preempt", c->preempt);
	if (c->cpu_wide) {
		u64(e, "other_pid", c->other_pid);
		u64(e, "other_tid", c->other_tid);
	}
}

static void task_fields(struct em *e, const struct prec_packet *p, const Perfrec__TaskEvent *t)
{
	static const char *const kinds[] = { "comm", "fork", "exit", "existing" };
	str(e, "what", (unsigned)t->kind < 4 ? kinds[t->kind] : "unknown");
	u64(e, "pid", t->pid);
	u64(e, "tid", t->tid);
	if (t->kind == PERFREC__TASK_EVENT__KIND__FORK ||
	    t->kind == PERFREC__TASK_EVENT__KIND__EXIT) {
		u64(e, "ppid", t->ppid);
		u64(e, "ptid", t->ptid);
	}
	if (t->comm)
		interned(e, "comm", p, t->comm);
	if (t->exec)
		boolean(e, "exec", 1);
}

static void mmap_fields(struct em *e, const struct prec_packet *p, const Perfrec__Mmap *m)
{
	u64(e, "pid", m->pid);
	u64(e, "tid", m->tid);
	hex(e, "start", m->start);
	hex(e, "len", m->len);
	hex(e, "pgoff", m->pgoff);
	interned(e, "file", p, m->filename);
	if (m->synthesized)
		boolean(e, "synthesized", 1);
}

static void session_end_fields(struct em *e, const Perfrec__SessionEnd *x)
{
	u64(e, "samples", x->samples);
	u64(e, "switches", x->switches);
	u64(e, "records", x->records);
	u64(e, "lost", x->lost);
	u64(e, "dropped", x->dropped);
	str(e, "stop", x->stop_reason);
}

static void symbols_fields(struct em *e, const Perfrec__SymbolTable *t)
{
	static const char *const kinds[] = { "elf", "kernel", "kernel_module",
					     "perf_map", "unavailable" };
	str(e, "what", (unsigned)t->kind < 5 ? kinds[t->kind] : "unknown");
	str(e, "path", t->path);
	u64(e, "symbols", t->n_starts);
	if (t->reason && *t->reason)
		str(e, "reason", t->reason);
}

static void unwind_fields(struct em *e, const Perfrec__UnwindTable *t)
{
	static const char *const secs[] = { "eh_frame", "eh_frame_hdr", "debug_frame" };
	str(e, "what", t->kind == PERFREC__UNWIND_TABLE__KIND__ELF ? "elf" : "unavailable");
	str(e, "path", t->path);
	for (size_t i = 0; i < t->n_sections; i++) {
		const Perfrec__UnwindSection *us = t->sections[i];
		bytes_len(e, (unsigned)us->kind < 3 ? secs[us->kind] : "section",
			  us->data.len);
	}
	if (t->reason && *t->reason)
		str(e, "reason", t->reason);
}

static void group_desc_fields(struct em *e, const Perfrec__GroupDesc *g)
{
	u64(e, "index", g->index);
	str(e, "name", g->name);
	key(e, "events");
	if (e->json)
		putc_(e, '[');
	for (size_t i = 0; i < g->n_events; i++) {
		if (i)
			putc_(e, ',');
		putu(e, g->events[i]);
	}
	if (e->json)
		putc_(e, ']');
	u64(e, "interval_ns", g->interval_ns);
}

/* The fields of packet p after its time and kind: one function per packet
 * kind with more than a few fields, the small ones inline. */
static void fields(struct em *e, struct ana_trace *s, const struct prec_packet *p)
{
	const Perfrec__Packet *k = p->pkt;
	switch (k->data_case) {
	case PERFREC__PACKET__DATA_HEADER:
		header_fields(e, k->header);
		break;
	case PERFREC__PACKET__DATA_EVENT:
		event_fields(e, k->event);
		break;
	case PERFREC__PACKET__DATA_SAMPLE:
		sample_fields(e, s, p, k->sample);
		break;
	case PERFREC__PACKET__DATA_OFF_CPU:
		off_cpu_fields(e, p, k->off_cpu);
		break;
	case PERFREC__PACKET__DATA_FILTERED:
		str(e, "event", ana_trace_event_name(s, (int)k->filtered->event));
		u64(e, "dropped", k->filtered->dropped);
		u64(e, "kept", k->filtered->kept);
		break;
	case PERFREC__PACKET__DATA_CONTEXT_SWITCH:
		context_switch_fields(e, k->context_switch);
		break;
	case PERFREC__PACKET__DATA_TASK:
		task_fields(e, p, k->task);
		break;
	case PERFREC__PACKET__DATA_MMAP:
		mmap_fields(e, p, k->mmap);
		break;
	case PERFREC__PACKET__DATA_LOSS:
		str(e, "what", ana_loss_kind_name(k->loss->kind));
		u64(e, "cpu", k->loss->cpu);
		u64(e, "id", k->loss->id);
		u64(e, "count", k->loss->count);
		if (k->loss->reason && *k->loss->reason)
			str(e, "reason", k->loss->reason);
		break;
	case PERFREC__PACKET__DATA_THROTTLE:
		str(e, "what", k->throttle->throttled ? "throttle" : "unthrottle");
		u64(e, "cpu", k->throttle->cpu);
		u64(e, "id", k->throttle->id);
		break;
	case PERFREC__PACKET__DATA_GROUP:
		u64(e, "group", k->group->group);
		i64(e, "cpu", k->group->cpu);
		i64(e, "pid", k->group->pid);
		if (k->group->final)
			boolean(e, "final", 1);
		group_read(e, k->group->read);
		break;
	case PERFREC__PACKET__DATA_INTERNED:
		u64(e, "strings", k->interned->n_strings);
		u64(e, "callchains", k->interned->n_callchains);
		if (k->interned->n_callchain_nodes)
			u64(e, "node_runs", k->interned->n_callchain_nodes);
		break;
	case PERFREC__PACKET__DATA_SESSION_END:
		session_end_fields(e, k->session_end);
		break;
	case PERFREC__PACKET__DATA_RAW:
		u64(e, "type", k->raw->type);
		u64(e, "cpu", k->raw->cpu);
		bytes_len(e, "bytes", k->raw->data.len);
		break;
	case PERFREC__PACKET__DATA_SYMBOLS:
		symbols_fields(e, k->symbols);
		break;
	case PERFREC__PACKET__DATA_UNWIND:
		unwind_fields(e, k->unwind);
		break;
	case PERFREC__PACKET__DATA_GROUP_DESC:
		group_desc_fields(e, k->group_desc);
		break;
	case PERFREC__PACKET__DATA_NOTE:
		u64(e, "level", k->note->level);
		str(e, "text", k->note->text);
		break;
	default:
		break;
	}
}

/* v in decimal at w, from e's table when it was the last value of its
 * slot (a switch line's pids and tids are a few tasks', over and over).
 * The caller guarantees 11 bytes at w. */
static char *w_id(struct em *e, char *w, uint32_t v)
{
	uint32_t h = (v ^ (v >> 8)) & 255;
	if (e->dec[h].len && e->dec[h].v == v) {
		memcpy(w, e->dec[h].s, sizeof(e->dec[h].s));
		return w + e->dec[h].len;
	}
	char *end = w_u32(w, v);
	e->dec[h].v = v;
	e->dec[h].len = (uint8_t)(end - w);
	memcpy(e->dec[h].s, w, (size_t)(end - w));
	return end;
}

/* Whole seconds of a time in decimal at w, kept from the previous line
 * (they change once a second of trace). The caller guarantees 20 bytes. */
static char *w_sec(struct em *e, char *w, uint64_t sec)
{
	if (!e->sec_len || e->sec != sec) {
		e->sec = sec;
		e->sec_len = (uint8_t)(w_u64(e->sec_s, sec) - e->sec_s);
	}
	memcpy(w, e->sec_s, sizeof(e->sec_s));
	return w + e->sec_len;
}

/* ---- the context-switch line, written without per-field calls
 *
 * Switch records are nearly every packet of a --switch-events trace, so
 * their line is assembled straight into the output buffer: the caller
 * guarantees SWITCH_LINE_MAX free bytes (the buffer is flushed at
 * EM_FLUSH_AT, half its size, so a line always starts with room). The
 * bytes are exactly those of the generic fields() path (golden tests
 * compare both formats). */
#define SWITCH_LINE_MAX 256

#define W_LIT(w, s) (memcpy((w), (s), sizeof(s) - 1), (w) + sizeof(s) - 1)

static void switch_line(struct em *e, const struct prec_packet *p)
{
	const Perfrec__ContextSwitch *c = p->pkt->context_switch;
	char *w = e->buf + e->len;
	if (e->json) {
		w = W_LIT(w, "{\"time\":");
		if (p->time / 1000000000u > UINT32_MAX || p->time <= UINT32_MAX) {
			w = w_u64(w, p->time);   /* as w_u64 writes any time */
		} else {
			w = w_sec(e, w, p->time / 1000000000u);
			w = w_nine(w, (uint32_t)(p->time % 1000000000u));
		}
		w = W_LIT(w, ",\"stream\":");
		w = w_u32(w, p->stream);
		w = c->out ? W_LIT(w, ",\"kind\":\"context_switch\",\"dir\":\"out\",\"cpu\":")
			   : W_LIT(w, ",\"kind\":\"context_switch\",\"dir\":\"in\",\"cpu\":");
		w = w_u32(w, c->cpu);
		w = W_LIT(w, ",\"pid\":");
		w = w_id(e, w, c->pid);
		w = W_LIT(w, ",\"tid\":");
		w = w_id(e, w, c->tid);
		w = c->preempt ? W_LIT(w, ",\"preempt\":true") : W_LIT(w, ",\"preempt\":false");
		if (c->cpu_wide) {
			w = W_LIT(w, ",\"other_pid\":");
			w = w_id(e, w, c->other_pid);
			w = W_LIT(w, ",\"other_tid\":");
			w = w_id(e, w, c->other_tid);
		}
		w = W_LIT(w, "}\n");
	} else {
		w = w_sec(e, w, p->time / 1000000000u);
		*w++ = '.';
		w = w_nine(w, (uint32_t)(p->time % 1000000000u));
		w = W_LIT(w, " s");
		w = w_u32(w, p->stream);
		w = c->out ? W_LIT(w, " context_switch dir=out cpu=")
			   : W_LIT(w, " context_switch dir=in cpu=");
		w = w_u32(w, c->cpu);
		w = W_LIT(w, " pid=");
		w = w_id(e, w, c->pid);
		w = W_LIT(w, " tid=");
		w = w_id(e, w, c->tid);
		w = c->preempt ? W_LIT(w, " preempt=1") : W_LIT(w, " preempt=0");
		if (c->cpu_wide) {
			w = W_LIT(w, " other_pid=");
			w = w_id(e, w, c->other_pid);
			w = W_LIT(w, " other_tid=");
			w = w_id(e, w, c->other_tid);
		}
		*w++ = '\n';
	}
	e->len = (size_t)(w - e->buf);
}

/* Filters apply to the fields a packet has (--event to samples). */
static int pass(struct ana_trace *s, const struct ana_filter *f,
		const struct prec_packet *p)
{
	if (!f || !f->active)
		return 1;
	if (!ana_filter_time(f, p->time))
		return 0;
	const Perfrec__Packet *k = p->pkt;
	uint32_t cpu = UINT32_MAX, pid = UINT32_MAX, tid = UINT32_MAX;
	switch (k->data_case) {
	case PERFREC__PACKET__DATA_SAMPLE:
		cpu = k->sample->cpu, pid = k->sample->pid, tid = k->sample->tid;
		if (f->nevents && !ana_filter_event(f, ana_trace_event_name(s,
				ana_trace_event_of(s, k->sample->id))))
			return 0;
		break;
	case PERFREC__PACKET__DATA_CONTEXT_SWITCH:
		cpu = k->context_switch->cpu, pid = k->context_switch->pid;
		tid = k->context_switch->tid;
		break;
	case PERFREC__PACKET__DATA_OFF_CPU:
		return ana_filter_offcpu(f, k->off_cpu->count, k->off_cpu->cpu,
					 k->off_cpu->pid, k->off_cpu->tid, p->time);
	case PERFREC__PACKET__DATA_TASK:
		pid = k->task->pid, tid = k->task->tid;
		break;
	case PERFREC__PACKET__DATA_MMAP:
		pid = k->mmap->pid, tid = k->mmap->tid;
		break;
	case PERFREC__PACKET__DATA_LOSS:
		cpu = k->loss->cpu;
		break;
	case PERFREC__PACKET__DATA_THROTTLE:
		cpu = k->throttle->cpu;
		break;
	case PERFREC__PACKET__DATA_RAW:
		cpu = k->raw->cpu;
		break;
	case PERFREC__PACKET__DATA_GROUP:
		if (k->group->cpu >= 0)
			cpu = (uint32_t)k->group->cpu;
		if (k->group->pid >= 0)
			pid = (uint32_t)k->group->pid;
		break;
	case PERFREC__PACKET__DATA_INTERNED:
		/* Bookkeeping of some stream: not about any CPU or task. */
		if (f->ncpus || f->npids || f->ntids)
			return 0;
		break;
	default:
		break;
	}
	if (cpu != UINT32_MAX && !ana_filter_cpu(f, cpu))
		return 0;
	if (pid != UINT32_MAX && !ana_filter_pid(f, pid))
		return 0;
	if (tid != UINT32_MAX && !ana_filter_tid(f, tid))
		return 0;
	return 1;
}

static void line(struct em *e, struct ana_trace *s, const struct prec_packet *p)
{
	int kind = (int)p->pkt->data_case;
	e->n = 0;
	if (kind == PERFREC__PACKET__DATA_CONTEXT_SWITCH &&
	    e->cap - e->len >= SWITCH_LINE_MAX) {
		switch_line(e, p);
	} else if (e->json) {
		put(e, "{\"time\":", 8);
		putu(e, p->time);
		put(e, ",\"stream\":", 10);
		putu(e, p->stream);
		put(e, ",\"kind\":\"", 9);
		puts_(e, ana_kind_name(kind));
		putc_(e, '"');
		e->n = 1;
		fields(e, s, p);
		put(e, "}\n", 2);
	} else {
		char *w = room(e, 32);
		w = w_sec(e, w, p->time / 1000000000u);
		*w++ = '.';
		w = w_nine(w, (uint32_t)(p->time % 1000000000u));
		w = W_LIT(w, " s");
		e->len = (size_t)(w - e->buf);
		putu(e, p->stream);
		putc_(e, ' ');
		puts_(e, ana_kind_name(kind));
		fields(e, s, p);
		putc_(e, '\n');
	}
	if (e->len >= EM_FLUSH_AT)
		em_flush(e);
}

struct dctx {
	struct ana_trace *s;
	const struct ana_dump_opts *o;
	struct em e;
};

static int dump_one(void *ctx, const struct prec_packet *p)
{
	struct dctx *d = ctx;
	struct ana_trace *s = d->s;
	if (s->opts.single_pass) {
		int ret = ana_trace_feed(s, p);   /* event names, as met */
		if (ret < 0)
			return ret;
	}
	if (pass(s, d->o->filter, p))
		line(&d->e, s, p);
	return d->e.err;
}

int ana_dump_run(struct ana_trace *s, const struct ana_dump_opts *o, FILE *out)
{
	struct dctx d;
	memset(&d, 0, sizeof(d));
	d.s = s;
	d.o = o;
	d.e.f = out;
	d.e.json = o->fmt == ANA_FMT_JSON;
	d.e.cap = 2 * EM_FLUSH_AT;
	d.e.buf = malloc(d.e.cap);
	if (!d.e.buf)
		return -ENOMEM;
	int ret = 0;
	if (o->file_order) {
		ret = ana_trace_scan(s, "dump", dump_one, &d);
	} else {
		/* --time: the window's frames, and the frames of descriptions
		 * and tasks whatever their time (format 1.1 keeps them apart;
		 * a frame that does not say what it holds is read) */
		const struct ana_filter *f = o->filter;
		const struct prec_frame_info *list;
		size_t n;
		if (f && ana_filter_windowed(f))
			ana_trace_set_window(s, f->tmin, f->tmax);
		ret = ana_trace_select(s, 0, ANA_KINDS_TRACE, f && ana_filter_windowed(f), &list, &n);
		if (ret < 0) {
			free(d.e.buf);
			return ret;
		}
		struct ana_frames_opts fo = { .jobs = o->jobs };
		struct ana_merge *m = ana_merge_trace(s, list, n, &fo);
		if (!m) {
			if (list != s->frames)
				free((void *)list);
			free(d.e.buf);
			return -ENOMEM;
		}
		const struct prec_packet *p;
		size_t done = 0, total = 0, last = 0;
		while ((ret = ana_merge_next(m, &p)) > 0) {
			if ((ret = dump_one(&d, p)) < 0)
				break;
			if (s->opts.progress) {
				ana_merge_progress(m, &done, &total);
				if (done != last) {
					last = done;
					s->opts.progress(s->opts.ctx, "dump", done, total);
				}
			}
		}
		ana_merge_free(m);
		if (list != s->frames)
			free((void *)list);
	}
	if (!ret && s->opts.single_pass)
		ret = ana_trace_finish(s);
	em_flush(&d.e);
	free(d.e.buf);
	if (fflush(out) || ferror(out))
		ret = ret ? ret : -EIO;
	return ret ? ret : d.e.err;
}
