/*
 * dump.c - packet printer. One small field emitter serves text and JSON
 * so both show the same fields.
 */
#include "analyzer/dump.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "analyzer/merge.h"
#include "analyzer/session.h"

struct em {
	FILE *f;
	int json;
	int n;   /* fields written on this line */
};

static void key(struct em *e, const char *k)
{
	if (e->json) {
		fputs(e->n++ ? ",\"" : "\"", e->f);
		fputs(k, e->f);
		fputs("\":", e->f);
	} else {
		fputc(' ', e->f);
		fputs(k, e->f);
		fputc('=', e->f);
	}
}

static void u64(struct em *e, const char *k, uint64_t v)
{
	key(e, k);
	fprintf(e->f, "%" PRIu64, v);
}

static void i64(struct em *e, const char *k, int64_t v)
{
	key(e, k);
	fprintf(e->f, "%" PRId64, v);
}

static void hex(struct em *e, const char *k, uint64_t v)
{
	key(e, k);
	fprintf(e->f, e->json ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64, v);
}

static void boolean(struct em *e, const char *k, int v)
{
	key(e, k);
	fputs(e->json ? (v ? "true" : "false") : (v ? "1" : "0"), e->f);
}

/* Text: quoted only when the value has spaces, quotes or is empty. */
static void str(struct em *e, const char *k, const char *v)
{
	key(e, k);
	if (!v)
		v = "";
	if (e->json) {
		ana_json_str(e->f, v);
		return;
	}
	if (*v && !strpbrk(v, " \t\n\"=\\"))
		fputs(v, e->f);
	else
		ana_json_str(e->f, v);
}

static void bytes_len(struct em *e, const char *k, size_t n)
{
	u64(e, k, n);
}

static void ulist(struct em *e, const char *k, const uint64_t *v, size_t n, int as_hex)
{
	key(e, k);
	fputs(e->json ? "[" : "", e->f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', e->f);
		if (as_hex)
			fprintf(e->f, e->json ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64, v[i]);
		else
			fprintf(e->f, "%" PRIu64, v[i]);
	}
	fputs(e->json ? "]" : "", e->f);
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

static void fields(struct em *e, struct ana_session *s, const struct prec_packet *p)
{
	const Perfrec__Packet *k = p->pkt;
	switch (k->data_case) {
	case PERFREC__PACKET__DATA_HEADER: {
		const Perfrec__FileHeader *h = k->header;
		str(e, "host", h->hostname);
		str(e, "kernel", h->kernel_release);
		str(e, "machine", h->machine);
		u64(e, "cpus", h->cpus_online);
		u64(e, "start", h->start_time);
		str(e, "target", h->target);
		break;
	}
	case PERFREC__PACKET__DATA_EVENT: {
		const Perfrec__EventDesc *d = k->event;
		u64(e, "index", d->index);
		str(e, "name", d->name);
		u64(e, "type", d->type);
		hex(e, "config", d->config);
		boolean(e, "sampling", d->sampling);
		i64(e, "group", d->group);
		ulist(e, "ids", d->ids, d->n_ids, 0);
		if (d->error && *d->error)
			str(e, "error", d->error);
		break;
	}
	case PERFREC__PACKET__DATA_SAMPLE: {
		const Perfrec__Sample *m = k->sample;
		str(e, "event", ana_session_event_name(s, ana_session_event_of(s, m->id)));
		u64(e, "cpu", m->cpu);
		u64(e, "pid", m->pid);
		u64(e, "tid", m->tid);
		hex(e, "ip", m->ip);
		u64(e, "period", m->period);
		if (m->callchain) {
			size_t n = 0;
			const uint64_t *ips = prec_frame_callchain(p->frame, m->callchain, &n);
			if (ips)
				ulist(e, "callchain", ips, n, 1);
			else
				u64(e, "callchain_iid", m->callchain);
		}
		if (m->raw.len)
			bytes_len(e, "raw_bytes", m->raw.len);
		if (m->read)
			group_read(e, m->read);
		if (m->addr)
			hex(e, "addr", m->addr);
		break;
	}
	case PERFREC__PACKET__DATA_CONTEXT_SWITCH: {
		const Perfrec__ContextSwitch *c = k->context_switch;
		str(e, "dir", c->out ? "out" : "in");
		u64(e, "cpu", c->cpu);
		u64(e, "pid", c->pid);
		u64(e, "tid", c->tid);
		boolean(e, "preempt", c->preempt);
		if (c->cpu_wide) {
			u64(e, "other_pid", c->other_pid);
			u64(e, "other_tid", c->other_tid);
		}
		break;
	}
	case PERFREC__PACKET__DATA_TASK: {
		static const char *const kinds[] = { "comm", "fork", "exit", "existing" };
		const Perfrec__TaskEvent *t = k->task;
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
		break;
	}
	case PERFREC__PACKET__DATA_MMAP: {
		const Perfrec__Mmap *m = k->mmap;
		u64(e, "pid", m->pid);
		u64(e, "tid", m->tid);
		hex(e, "start", m->start);
		hex(e, "len", m->len);
		hex(e, "pgoff", m->pgoff);
		interned(e, "file", p, m->filename);
		if (m->synthesized)
			boolean(e, "synthesized", 1);
		break;
	}
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
		break;
	case PERFREC__PACKET__DATA_SESSION_END: {
		const Perfrec__SessionEnd *x = k->session_end;
		u64(e, "samples", x->samples);
		u64(e, "switches", x->switches);
		u64(e, "records", x->records);
		u64(e, "lost", x->lost);
		u64(e, "dropped", x->dropped);
		str(e, "stop", x->stop_reason);
		break;
	}
	case PERFREC__PACKET__DATA_RAW:
		u64(e, "type", k->raw->type);
		u64(e, "cpu", k->raw->cpu);
		bytes_len(e, "bytes", k->raw->data.len);
		break;
	case PERFREC__PACKET__DATA_SYMBOLS: {
		static const char *const kinds[] = { "elf", "kernel", "kernel_module",
						     "perf_map", "unavailable" };
		const Perfrec__SymbolTable *t = k->symbols;
		str(e, "what", (unsigned)t->kind < 5 ? kinds[t->kind] : "unknown");
		str(e, "path", t->path);
		u64(e, "symbols", t->n_starts);
		if (t->reason && *t->reason)
			str(e, "reason", t->reason);
		break;
	}
	case PERFREC__PACKET__DATA_GROUP_DESC: {
		const Perfrec__GroupDesc *g = k->group_desc;
		u64(e, "index", g->index);
		str(e, "name", g->name);
		key(e, "events");
		fputs(e->json ? "[" : "", e->f);
		for (size_t i = 0; i < g->n_events; i++)
			fprintf(e->f, "%s%" PRIu32, i ? "," : "", g->events[i]);
		fputs(e->json ? "]" : "", e->f);
		u64(e, "interval_ns", g->interval_ns);
		break;
	}
	case PERFREC__PACKET__DATA_NOTE:
		u64(e, "level", k->note->level);
		str(e, "text", k->note->text);
		break;
	default:
		break;
	}
}

/* Filters apply to the fields a packet has. */
static int pass(const struct ana_filter *f, const struct prec_packet *p)
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
		break;
	case PERFREC__PACKET__DATA_CONTEXT_SWITCH:
		cpu = k->context_switch->cpu, pid = k->context_switch->pid;
		tid = k->context_switch->tid;
		break;
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

static void line(struct ana_session *s, const struct prec_packet *p, FILE *out, int json)
{
	struct em e = { out, json, 0 };
	int kind = (int)p->pkt->data_case;
	if (json) {
		fprintf(out, "{\"time\":%" PRIu64 ",\"stream\":%" PRIu32 ",\"kind\":\"%s\"",
			p->time, p->stream, ana_kind_name(kind));
		e.n = 1;
		fields(&e, s, p);
		fputs("}\n", out);
	} else {
		fprintf(out, "%" PRIu64 ".%09" PRIu64 " s%" PRIu32 " %s",
			p->time / 1000000000u, p->time % 1000000000u, p->stream,
			ana_kind_name(kind));
		fields(&e, s, p);
		fputc('\n', out);
	}
}

static int dump_one(void *ctx, const struct prec_packet *p)
{
	void **c = ctx;
	struct ana_session *s = c[0];
	const struct ana_dump_opts *o = c[1];
	FILE *out = c[2];
	if (s->opts.single_pass) {
		int ret = ana_session_feed(s, p);   /* event names, as met */
		if (ret < 0)
			return ret;
	}
	if (pass(o->filter, p))
		line(s, p, out, o->fmt == ANA_FMT_JSON);
	return ferror(out) ? -EIO : 0;
}

static void merge_damage(void *ctx, const struct prec_frame_info *fi, int err)
{
	ana_session_note_damage(ctx, fi->offset, err);
}

int ana_dump_run(struct ana_session *s, const struct ana_dump_opts *o, FILE *out)
{
	void *ctx[3] = { s, (void *)o, out };
	if (o->file_order) {
		int ret = ana_session_scan(s, "dump", dump_one, ctx);
		if (!ret && s->opts.single_pass)
			ret = ana_session_finish(s);
		return ret;
	}
	struct ana_frames_opts fo = { .jobs = o->jobs };
	struct ana_merge *m = ana_merge_new(s->reader, s->frames, s->nframes, &fo);
	if (!m)
		return -ENOMEM;
	ana_merge_on_damage(m, merge_damage, s);
	const struct prec_packet *p;
	int ret;
	size_t done = 0, total = 0, last = 0;
	while ((ret = ana_merge_next(m, &p)) > 0) {
		if ((ret = dump_one(ctx, p)) < 0)
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
	if (!ret && s->opts.single_pass)
		ret = ana_session_finish(s);
	fflush(out);
	if (!ret && ferror(out))
		ret = -EIO;
	return ret;
}
