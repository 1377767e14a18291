/*
 * trace.c - pass 1: descriptions, task names, symbol inputs, counts.
 */
#include "analyzer/read/trace.h"
#include "format/base/hashmap.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/read/frames.h"
#include "analyzer/symbols/symbolize.h"
#include "format/error.h"

static const char *const kind_names[ANA_NKINDS] = {
	"unknown", "kind1", "header", "event", "sample", "context_switch",
	"task", "mmap", "loss", "throttle", "group", "interned",
	"session_end", "raw", "symbols", "group_desc", "note", "unwind",
	"off_cpu", "filtered",
};

const char *ana_kind_name(int kind)
{
	return kind >= 0 && kind < ANA_NKINDS ? kind_names[kind] : "unknown";
}

/* Loss kind and off-CPU state names come from the schema (perfrec.proto's
 * Loss.Kind and OffCpu.State, in lower case), so a value added there is
 * named here without an edit. */
#define ENUM_NAMES_MAX 64
static char loss_names[ENUM_NAMES_MAX][40], state_names[ENUM_NAMES_MAX][40];
static pthread_once_t enum_names_once = PTHREAD_ONCE_INIT;

static void lower_names(const ProtobufCEnumDescriptor *d, char (*out)[40])
{
	for (unsigned i = 0; i < d->n_values; i++) {
		const ProtobufCEnumValue *v = &d->values[i];

		if (v->value < 0 || v->value >= ENUM_NAMES_MAX)
			continue;
		for (size_t k = 0; v->name[k] && k + 1 < sizeof(out[0]); k++)
			out[v->value][k] = (char)tolower((unsigned char)v->name[k]);
	}
}

static void make_enum_names(void)
{
	lower_names(&perfrec__loss__kind__descriptor, loss_names);
	lower_names(&perfrec__off_cpu__state__descriptor, state_names);
}

const char *ana_loss_kind_name(int kind)
{
	pthread_once(&enum_names_once, make_enum_names);
	return kind >= 0 && kind < ENUM_NAMES_MAX && loss_names[kind][0] ?
	       loss_names[kind] : "unknown";
}

const char *ana_offcpu_state_name(int state)
{
	pthread_once(&enum_names_once, make_enum_names);
	return state >= 0 && state < ENUM_NAMES_MAX && state_names[state][0] ?
	       state_names[state] : "other";
}

/* A deep copy of a decoded message (pack + unpack), owned by the caller. */
static void *copy_msg(const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return NULL;
	protobuf_c_message_pack(m, buf);
	void *r = protobuf_c_message_unpack(m->descriptor, NULL, n, buf);
	free(buf);
	return r;
}

struct task_ev {
	uint64_t time;
	uint32_t kind, pid, tid, ptid;
	const char *comm;
	uint64_t seq;   /* arrival order: stable tie-break */
};

struct pass1 {
	struct task_ev *tev;
	size_t ntev, captev;
	int err;
};

int64_t ana_trace_damage_packets(const struct ana_trace *s, size_t i)
{
	if (i >= s->ndamage)
		return -1;
	for (size_t j = 0; j < s->nframes; j++)
		if (s->frames[j].offset == s->damage[i].offset &&
		    s->frames[j].seq != PREC_SEQ_UNKNOWN)
			return s->frames[j].packets;
	return -1;
}

uint64_t ana_trace_lost_packets(const struct ana_trace *s)
{
	uint64_t n = 0;
	for (size_t i = 0; i < s->ndamage; i++) {
		int64_t k = ana_trace_damage_packets(s, i);
		if (k > 0)
			n += (uint64_t)k;
	}
	return n;
}

void ana_trace_note_damage(struct ana_trace *s, uint64_t offset, int err)
{
	for (size_t i = 0; i < s->ndamage; i++)
		if (s->damage[i].offset == offset)
			return;
	struct ana_damage *d = realloc(s->damage, (s->ndamage + 1) * sizeof(*d));
	if (!d)
		return;
	s->damage = d;
	d[s->ndamage].offset = offset;
	d[s->ndamage].err = err;
	s->ndamage++;
	prec_reader_note_damage(s->reader, offset, err);
}

void ana_trace_set_window(struct ana_trace *s, uint64_t lo, uint64_t hi)
{
	s->windowed = 1;
	s->win_lo = lo;
	s->win_hi = hi;
}

void ana_trace_set_kinds(struct ana_trace *s, uint64_t kinds)
{
	s->scan_kinds = kinds;
}

static int pass1_packet(void *ctx, const struct prec_packet *p);

int ana_trace_select(const struct ana_trace *s, uint64_t kinds, uint64_t whole_kinds,
		       int windowed, const struct prec_frame_info **out, size_t *n)
{
	/* InternedData is in every frame that uses interning: it says
	 * nothing about what else the frame holds */
	uint64_t want = prec_kinds_stored(kinds) & ~PREC_KIND(PERFREC__PACKET__DATA_INTERNED);
	whole_kinds = prec_kinds_stored(whole_kinds);
	size_t k = 0;
	*out = s->frames;
	*n = s->nframes;
	if (!kinds && !windowed)
		return 0;
	struct prec_frame_info *sel = malloc((s->nframes ? s->nframes : 1) * sizeof(*sel));
	if (!sel)
		return -ENOMEM;
	for (size_t i = 0; i < s->nframes; i++) {
		const struct prec_frame_info *fi = &s->frames[i];
		if (kinds && fi->kinds && !(fi->kinds & want))
			continue;
		if (windowed && (fi->t_min || fi->t_max) &&
		    (fi->t_max < s->win_lo || fi->t_min > s->win_hi) &&
		    !(whole_kinds && (!fi->kinds || (fi->kinds & whole_kinds))))
			continue;
		sel[k++] = *fi;
	}
	if (k == s->nframes) {
		free(sel);
		return 0;
	}
	*out = sel;
	*n = k;
	return 0;
}

int ana_trace_scan(struct ana_trace *s, const char *what,
		     int (*cb)(void *ctx, const struct prec_packet *p), void *ctx)
{
	uint64_t kinds = s->scan_kinds;
	/* the deferred kinds are counted by this pass if it reads all their
	 * frames */
	uint64_t defer = 0;
	if (s->deferred && !s->windowed && (!kinds || (kinds & s->deferred) == s->deferred))
		defer = s->deferred;
	struct ana_frames_opts fo = { .jobs = s->opts.jobs, .kinds = kinds };
	const struct prec_frame_info *list;
	size_t n;
	if (ana_trace_select(s, kinds, 0, s->windowed, &list, &n) < 0)
		return -ENOMEM;
	struct ana_frames *af = ana_frames_new(s->reader, list, n, &fo);
	if (!af) {
		if (list != s->frames)
			free((void *)list);
		return -ENOMEM;
	}
	int ret = 0;
	struct ana_loaded *lf;
	size_t done = 0;
	while ((ret = ana_frames_next(af, &lf)) > 0) {
		if (lf->err)
			ana_trace_note_damage(s, lf->fi->offset, lf->err);
		for (size_t i = 0; i < lf->npkts && ret >= 0; i++) {
			const struct prec_packet *p = &lf->pkts[i];
			if (defer && (defer & PREC_KIND(p->pkt->data_case)) &&
			    (ret = pass1_packet(s, p)) < 0)
				break;
			ret = cb(ctx, p);
		}
		ana_frames_release(af, lf);
		if (ret < 0)
			break;
		done++;
		if (s->opts.progress)
			s->opts.progress(s->opts.ctx, what, done, n);
	}
	ana_frames_free(af);
	if (list != s->frames)
		free((void *)list);
	if (ret >= 0)
		s->deferred &= ~defer;
	return ret < 0 ? ret : 0;
}

/* 1 when a and b encode to the same bytes, 0 when not, -ENOMEM. */
static int same_msg(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
	size_t na = protobuf_c_message_get_packed_size(a);
	if (na != protobuf_c_message_get_packed_size(b))
		return 0;
	uint8_t *ba = malloc(na ? 2 * na : 1);
	if (!ba)
		return -ENOMEM;
	protobuf_c_message_pack(a, ba);
	protobuf_c_message_pack(b, ba + na);
	int same = !memcmp(ba, ba + na, na);
	free(ba);
	return same;
}

/* The position of the event s already holds that e describes again, -1
 * when none, -2 when out of memory: the parts of a concatenated
 * file (a cat of rotations, format/SPEC.md section 8) each describe the
 * recording's events, with the same index and settings; their ids may
 * differ, so those are left out of the match. */
static int known_event(struct ana_trace *s, Perfrec__EventDesc *e)
{
	for (size_t i = 0; i < s->nevents; i++) {
		Perfrec__EventDesc *k = s->events[i];
		if (k->index != e->index)
			continue;
		size_t nk = k->n_ids, ne = e->n_ids;
		k->n_ids = e->n_ids = 0;
		int same = same_msg(&k->base, &e->base);
		k->n_ids = nk;
		e->n_ids = ne;
		if (same < 0)
			return -2;
		if (same)
			return (int)i;
	}
	return -1;
}

/* Adds e's ids that k lacks to k (ids allocated by protobuf-c's default
 * allocator: malloc). */
static int merge_ids(Perfrec__EventDesc *k, const Perfrec__EventDesc *e)
{
	for (size_t j = 0; j < e->n_ids; j++) {
		size_t i = 0;
		while (i < k->n_ids && k->ids[i] != e->ids[j])
			i++;
		if (i < k->n_ids)
			continue;
		uint64_t *ids = realloc(k->ids, (k->n_ids + 1) * sizeof(*ids));
		if (!ids)
			return -ENOMEM;
		k->ids = ids;
		k->ids[k->n_ids++] = e->ids[j];
	}
	return 0;
}

static int add_event(struct ana_trace *s, const Perfrec__EventDesc *e)
{
	Perfrec__EventDesc *c = copy_msg(&e->base);
	if (!c)
		return -ENOMEM;
	int pos = known_event(s, c);
	if (pos != -1) {
		int err = pos < 0 ? -ENOMEM : merge_ids(s->events[pos], c);
		for (size_t j = 0; !err && j < c->n_ids; j++) {
			int created;
			int *ev = prec_hashmap_get(&s->id2event, &c->ids[j], &created);
			if (!ev)
				err = -ENOMEM;
			else if (created)
				*ev = pos;
		}
		perfrec__event_desc__free_unpacked(c, NULL);
		return err;
	}
	Perfrec__EventDesc **a = realloc(s->events, (s->nevents + 1) * sizeof(*a));
	if (!a) {
		perfrec__event_desc__free_unpacked(c, NULL);
		return -ENOMEM;
	}
	s->events = a;
	a[s->nevents] = c;
	/* Usable at once by single-pass consumers (dump); re-made in
	 * finish once the events are sorted by index. */
	for (size_t j = 0; j < c->n_ids; j++) {
		int created;
		int *ev = prec_hashmap_get(&s->id2event, &c->ids[j], &created);
		if (!ev)
			return -ENOMEM;
		if (created)
			*ev = (int)s->nevents;
	}
	s->nevents++;
	return 0;
}

static int add_group(struct ana_trace *s, const Perfrec__GroupDesc *g)
{
	/* described again by a later part of a concatenated file */
	for (size_t i = 0; i < s->ngroups; i++) {
		int same = same_msg(&s->groups[i]->base, &g->base);
		if (same)
			return same < 0 ? same : 0;
	}
	Perfrec__GroupDesc *c = copy_msg(&g->base);
	if (!c)
		return -ENOMEM;
	Perfrec__GroupDesc **a = realloc(s->groups, (s->ngroups + 1) * sizeof(*a));
	if (!a) {
		perfrec__group_desc__free_unpacked(c, NULL);
		return -ENOMEM;
	}
	s->groups = a;
	a[s->ngroups++] = c;
	return 0;
}

/* Counts p by kind and widens the time range. */
static inline void count_packet(struct ana_trace *s, const struct prec_packet *p)
{
	int kind = (int)p->pkt->data_case;
	if (kind <= 0 || kind >= ANA_NKINDS)
		kind = 0;
	s->kind_count[kind]++;
	if (p->time) {
		if (!s->t_min || p->time < s->t_min)
			s->t_min = p->time;
		if (p->time > s->t_max)
			s->t_max = p->time;
	}
}

static int pass1_packet(void *ctx, const struct prec_packet *p)
{
	struct ana_trace *s = ctx;
	struct pass1 *st = s->p1;
	const Perfrec__Packet *pkt = p->pkt;
	count_packet(s, p);
	switch (pkt->data_case) {
	case PERFREC__PACKET__DATA_HEADER:
		if (!s->header && !(s->header = copy_msg(&pkt->header->base)))
			return -ENOMEM;
		break;
	case PERFREC__PACKET__DATA_SESSION_END:
		if (s->end)
			perfrec__session_end__free_unpacked(s->end, NULL);
		if (!(s->end = copy_msg(&pkt->session_end->base)))
			return -ENOMEM;
		break;
	case PERFREC__PACKET__DATA_EVENT:
		return add_event(s, pkt->event);
	case PERFREC__PACKET__DATA_GROUP_DESC:
		return add_group(s, pkt->group_desc);
	case PERFREC__PACKET__DATA_NOTE: {
		const char *t = ana_strpool_intern(&s->pool, pkt->note->text ? pkt->note->text : "");
		void *a = t ? realloc(s->notes, (s->nnotes + 1) * sizeof(*s->notes)) : NULL;
		if (!a)
			return -ENOMEM;   /* s->notes is still the old array */
		s->notes = a;
		s->notes[s->nnotes].level = pkt->note->level;
		s->notes[s->nnotes].text = t;
		s->nnotes++;
		break;
	}
	case PERFREC__PACKET__DATA_SAMPLE:
		s->samples++;
		break;
	case PERFREC__PACKET__DATA_CONTEXT_SWITCH:
		s->switches++;
		break;
	case PERFREC__PACKET__DATA_THROTTLE:
		if (pkt->throttle->throttled)
			s->throttles++;
		break;
	case PERFREC__PACKET__DATA_OFF_CPU:
		if (pkt->off_cpu->count)
			s->offcpu_sums++;
		else
			s->offcpu_intervals++;
		s->offcpu_ns += pkt->off_cpu->duration;
		break;
	case PERFREC__PACKET__DATA_FILTERED: {
		uint32_t ev = pkt->filtered->event;
		struct ana_filtered *f = prec_hashmap_get(&s->filtered, &ev, NULL);
		if (!f)
			return -ENOMEM;
		f->dropped += pkt->filtered->dropped;
		f->kept += pkt->filtered->kept;
		break;
	}
	case PERFREC__PACKET__DATA_LOSS: {
		unsigned k = (unsigned)pkt->loss->kind;
		if (k < ANA_NLOSS) {
			s->loss_count[k] += pkt->loss->count;
			s->loss_records[k]++;
		}
		break;
	}
	case PERFREC__PACKET__DATA_TASK: {
		const Perfrec__TaskEvent *t = pkt->task;
		const char *comm = NULL;
		if (t->comm) {
			const char *c = prec_frame_string(p->frame, t->comm);
			if (c && !(comm = ana_strpool_intern(&s->pool, c)))
				return -ENOMEM;
		}
		if (st->ntev == st->captev) {
			size_t cap = st->captev ? st->captev * 2 : 256;
			struct task_ev *a = realloc(st->tev, cap * sizeof(*a));
			if (!a)
				return -ENOMEM;
			st->tev = a;
			st->captev = cap;
		}
		struct task_ev *e = &st->tev[st->ntev];
		e->time = p->time;
		e->kind = (uint32_t)t->kind;
		e->pid = t->pid;
		e->tid = t->tid;
		e->ptid = t->ptid;
		e->comm = comm;
		e->seq = st->ntev++;
		if (t->kind != PERFREC__TASK_EVENT__KIND__EXIT) {
			uint32_t *pid = prec_hashmap_get(&s->tid2pid, &t->tid, NULL);
			if (!pid)
				return -ENOMEM;
			*pid = t->pid;
		}
		break;
	}
	default:
		break;
	}
	if (s->syms && (pkt->data_case == PERFREC__PACKET__DATA_MMAP ||
			pkt->data_case == PERFREC__PACKET__DATA_TASK ||
			pkt->data_case == PERFREC__PACKET__DATA_SYMBOLS ||
			pkt->data_case == PERFREC__PACKET__DATA_UNWIND)) {
		int ret = ana_symbols_add(s->syms, p);
		if (ret == -ENOMEM)
			return ret;
	}
	return 0;
}

static int cmp_tev(const void *a, const void *b)
{
	const struct task_ev *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct comm_pos {
	struct ana_task_comm c;
	size_t pos;
};

/* (tid, position): positions follow time order, so each tid's entries
 * stay in time order and equal times keep arrival order. */
static int cmp_comm_pos(const void *a, const void *b)
{
	const struct comm_pos *x = a, *y = b;
	if (x->c.tid != y->c.tid)
		return x->c.tid < y->c.tid ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Replays task events in time order: COMM/EXISTING name a task, FORK gives
 * the child its parent's current name. */
static int build_comms(struct ana_trace *s, struct pass1 *st)
{
	prec_sort(st->tev, st->ntev, sizeof(*st->tev), cmp_tev);
	struct prec_hashmap cur;   /* tid -> const char * current comm */
	prec_hashmap_init(&cur, sizeof(uint32_t), sizeof(const char *));
	int ret = 0;
	/* Finish may run again after more packets were fed: rebuild. */
	free(s->comms);
	s->ncomms = 0;
	s->comms = malloc((st->ntev ? st->ntev : 1) * sizeof(*s->comms));
	if (!s->comms) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < st->ntev; i++) {
		const struct task_ev *e = &st->tev[i];
		const char *comm = NULL;
		if (e->kind == PERFREC__TASK_EVENT__KIND__COMM ||
		    e->kind == PERFREC__TASK_EVENT__KIND__EXISTING) {
			comm = e->comm;
		} else if (e->kind == PERFREC__TASK_EVENT__KIND__FORK) {
			const char **pc = prec_hashmap_find(&cur, &e->ptid);
			comm = pc ? *pc : NULL;
		}
		if (!comm)
			continue;
		const char **c = prec_hashmap_get(&cur, &e->tid, NULL);
		if (!c) {
			ret = -ENOMEM;
			goto out;
		}
		*c = comm;
		/* Entries are appended in time order; the stable merge below
		 * keeps that order among equal times. */
		s->comms[s->ncomms].tid = e->tid;
		s->comms[s->ncomms].time = e->time;
		s->comms[s->ncomms].comm = comm;
		s->ncomms++;
	}
	struct comm_pos *tmp = malloc((s->ncomms ? s->ncomms : 1) * sizeof(*tmp));
	if (!tmp) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->ncomms; i++) {
		tmp[i].c = s->comms[i];
		tmp[i].pos = i;
	}
	prec_sort(tmp, s->ncomms, sizeof(*tmp), cmp_comm_pos);
	for (size_t i = 0; i < s->ncomms; i++)
		s->comms[i] = tmp[i].c;
	free(tmp);
out:
	prec_hashmap_release(&cur);
	return ret;
}

static int cmp_event(const void *a, const void *b)
{
	const Perfrec__EventDesc *x = *(Perfrec__EventDesc *const *)a;
	const Perfrec__EventDesc *y = *(Perfrec__EventDesc *const *)b;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_group(const void *a, const void *b)
{
	const Perfrec__GroupDesc *x = *(Perfrec__GroupDesc *const *)a;
	const Perfrec__GroupDesc *y = *(Perfrec__GroupDesc *const *)b;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Damage met by the reader itself (index rebuild, torn tail). */
static void reader_damage(void *ctx, uint64_t offset, int err)
{
	struct ana_trace *s = ctx;
	for (size_t i = 0; i < s->ndamage; i++)
		if (s->damage[i].offset == offset)
			return;
	struct ana_damage *d = realloc(s->damage, (s->ndamage + 1) * sizeof(*d));
	if (!d)
		return;
	s->damage = d;
	d[s->ndamage].offset = offset;
	d[s->ndamage].err = err;
	s->ndamage++;
}

static void take_reader_stats(struct ana_trace *s)
{
	struct prec_reader_stats rs;
	prec_reader_stats(s->reader, &rs);
	s->torn = rs.torn;
	s->torn_offset = rs.torn_offset;
	s->index_present = rs.index_present;
	s->index_rebuilt = rs.index_rebuilt;
	s->unknown_packets = rs.unknown_packets;
}

/* Single-pass mode: the header (for the trace start that relative --time
 * filters need) from the first frame in file order. */
static int peek_header(struct ana_trace *s)
{
	if (!s->nframes)
		return 0;
	struct prec_frame *f = prec_frame_new();
	if (!f)
		return -ENOMEM;
	int ret = prec_reader_load_frame(s->reader, &s->frames[0], f);
	struct prec_packet p;
	while (ret == 0 && prec_frame_next(f, &p) > 0) {
		if (p.pkt->data_case == PERFREC__PACKET__DATA_HEADER) {
			s->header = copy_msg(&p.pkt->header->base);
			break;
		}
	}
	prec_frame_free(f);
	if (ret == -ENOMEM)
		return ret;
	return 0;   /* a damaged first frame is reported by the main pass */
}

int ana_trace_open(struct ana_trace **out, const char *path,
		     const struct ana_trace_opts *opts)
{
	*out = NULL;
	struct ana_trace *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	int ret;
	s->p1 = calloc(1, sizeof(*s->p1));
	if (!s->p1) {
		free(s);
		return -ENOMEM;
	}
	s->path = path;
	if (opts)
		s->opts = *opts;
	ana_strpool_init(&s->pool);
	prec_hashmap_init(&s->id2event, sizeof(uint64_t), sizeof(int));
	prec_hashmap_init(&s->tid2pid, sizeof(uint32_t), sizeof(uint32_t));
	prec_hashmap_init(&s->filtered, sizeof(uint32_t), sizeof(struct ana_filtered));
	prec_hashmap_init(&s->name_cache, 2 * sizeof(const char *), 2 * sizeof(const char *));
	prec_hashmap_init(&s->unknown_cache, sizeof(const char *) + sizeof(uint64_t),
		     sizeof(const char *));

	struct prec_reader_opts ro = PREC_READER_OPTS_INIT;
	ro.on_damage = reader_damage;
	ro.ctx = s;
	ret = 0;
	if (s->opts.mem) {
		s->reader = prec_reader_open_mem_err(s->opts.mem, s->opts.mem_len, &ro, &ret);
	} else {
		s->reader = prec_reader_open_err(path, &ro, &ret);
	}
	if (!s->reader) {
		if (!ret)
			ret = errno ? -errno : PREC_E_CORRUPT;
		goto err;
	}
	ret = prec_reader_index(s->reader, &s->frames, &s->nframes);
	if (ret < 0)
		goto err;
	{
		/* Damage the index rebuild walked over (not in the frame list). */
		const struct prec_damage *d;
		size_t nd = 0;
		if (prec_reader_damage(s->reader, &d, &nd) == 0)
			for (size_t i = 0; i < nd; i++)
				reader_damage(s, d[i].offset, d[i].err);
	}
	if (s->opts.symbols) {
		s->syms = ana_symbols_new();
		if (!s->syms) {
			ret = -ENOMEM;
			goto err;
		}
		if (s->opts.symfs) {
			ret = ana_symbols_set_symfs(s->syms, s->opts.symfs);
			if (ret < 0)
				goto err;
		}
	}
	if (s->opts.single_pass) {
		ret = peek_header(s);
		if (ret < 0)
			goto err;
		take_reader_stats(s);
		s->start = s->header && s->header->start_time ? s->header->start_time : 0;
		for (size_t i = 0; !s->start && i < s->nframes; i++)
			if (s->frames[i].t_min && (!s->start || s->frames[i].t_min < s->start))
				s->start = s->frames[i].t_min;
		*out = s;
		return 0;
	}
	s->scan_kinds = (s->opts.pass1_kinds ? s->opts.pass1_kinds : PREC_KINDS_ALL) &
			~s->opts.deferred_kinds;
	ret = ana_trace_scan(s, "reading", pass1_packet, s);
	s->scan_kinds = 0;
	s->deferred = s->opts.deferred_kinds;
	/* The trace's time range counts the frames pass 1 skipped (or left
	 * to a later pass) by their indexed times. */
	for (size_t i = 0; s->opts.pass1_kinds && i < s->nframes; i++) {
		const struct prec_frame_info *fi = &s->frames[i];
		if (fi->t_min && (!s->t_min || fi->t_min < s->t_min))
			s->t_min = fi->t_min;
		if (fi->t_max > s->t_max)
			s->t_max = fi->t_max;
	}
	if (ret < 0)
		goto err;
	ret = ana_trace_finish(s);
	if (ret < 0)
		goto err;
	*out = s;
	return 0;

err:
	ana_trace_free(s);
	return ret;
}

int ana_trace_feed(struct ana_trace *s, const struct prec_packet *p)
{
	/* Most packets of a sched run: counted without pass1_packet()'s
	 * frame (what it does for them, in fewer instructions). */
	if (p->pkt->data_case == PERFREC__PACKET__DATA_CONTEXT_SWITCH) {
		count_packet(s, p);
		s->switches++;
		return 0;
	}
	return pass1_packet(s, p);
}

int ana_trace_finish(struct ana_trace *s)
{
	int ret = build_comms(s, s->p1);
	if (ret < 0)
		return ret;
	if (s->syms && (ret = ana_symbols_finish(s->syms)) < 0)
		return ret;
	prec_sort(s->events, s->nevents, sizeof(*s->events), cmp_event);
	prec_sort(s->groups, s->ngroups, sizeof(*s->groups), cmp_group);
	prec_hashmap_release(&s->id2event);
	prec_hashmap_init(&s->id2event, sizeof(uint64_t), sizeof(int));
	for (size_t i = 0; i < s->nevents; i++) {
		for (size_t j = 0; j < s->events[i]->n_ids; j++) {
			int created;
			int *ev = prec_hashmap_get(&s->id2event, &s->events[i]->ids[j], &created);
			if (!ev)
				return -ENOMEM;
			if (created)
				*ev = (int)i;
		}
	}
	if (!s->opts.single_pass || !s->start)
		s->start = s->header && s->header->start_time ? s->header->start_time : s->t_min;

	take_reader_stats(s);
	s->good_frames = s->bytes_compressed = s->bytes_raw = 0;
	for (size_t i = 0; i < s->nframes; i++) {
		int bad = 0;
		for (size_t j = 0; j < s->ndamage; j++)
			if (s->damage[j].offset == s->frames[i].offset)
				bad = 1;
		if (bad)
			continue;
		s->good_frames++;
		s->bytes_compressed += s->frames[i].compressed_size;
		s->bytes_raw += s->frames[i].raw_size;
	}
	return 0;
}

void ana_trace_free(struct ana_trace *s)
{
	if (!s)
		return;
	if (s->p1)
		free(s->p1->tev);
	free(s->p1);
	ana_symbols_free(s->syms);
	if (s->header)
		perfrec__file_header__free_unpacked(s->header, NULL);
	if (s->end)
		perfrec__session_end__free_unpacked(s->end, NULL);
	for (size_t i = 0; i < s->nevents; i++)
		perfrec__event_desc__free_unpacked(s->events[i], NULL);
	free(s->events);
	for (size_t i = 0; i < s->ngroups; i++)
		perfrec__group_desc__free_unpacked(s->groups[i], NULL);
	free(s->groups);
	free(s->notes);
	free(s->comms);
	free(s->damage);
	prec_hashmap_release(&s->id2event);
	prec_hashmap_release(&s->tid2pid);
	prec_hashmap_release(&s->filtered);
	prec_hashmap_release(&s->name_cache);
	prec_hashmap_release(&s->unknown_cache);
	ana_strpool_release(&s->pool);
	prec_reader_free(s->reader);
	free(s);
}

const char *ana_trace_comm_name(struct ana_trace *s, uint32_t tid,
				  uint64_t time)
{
	const char *c = ana_trace_comm(s, tid, time);
	char buf[32];

	if (c)
		return c;
	snprintf(buf, sizeof(buf), ":%" PRIu32, tid);
	return ana_strpool_intern(&s->pool, buf);
}

/* The idle task has no COMM record (it never execs and /proc does not
 * list it): perf names pid/tid 0 "swapper", the kernel's name for it. */
#define IDLE_COMM "swapper"

const char *ana_trace_comm(const struct ana_trace *s, uint32_t tid,
			     uint64_t time)
{
	/* First entry of tid by binary search, then the last at or before
	 * time among its entries. */
	size_t lo = 0, hi = s->ncomms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->comms[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= s->ncomms || s->comms[lo].tid != tid)
		return tid == 0 ? IDLE_COMM : NULL;
	size_t first = lo;
	hi = lo;
	while (hi < s->ncomms && s->comms[hi].tid == tid)
		hi++;
	/* Entries of one tid are few; binary search anyway for long lives. */
	size_t a = first, b = hi;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (s->comms[mid].time <= time)
			a = mid + 1;
		else
			b = mid;
	}
	return a > first ? s->comms[a - 1].comm : s->comms[first].comm;
}

int ana_trace_event_of(const struct ana_trace *s, uint64_t id)
{
	const int *ev = prec_hashmap_find(&s->id2event, &id);
	if (ev)
		return *ev;
	int only = -1;
	for (size_t i = 0; i < s->nevents; i++) {
		if (!s->events[i]->sampling)
			continue;
		if (only >= 0)
			return -1;
		only = (int)i;
	}
	return only;
}

const char *ana_trace_event_name(const struct ana_trace *s, int ev)
{
	if (ev < 0 || (size_t)ev >= s->nevents)
		return "[unknown]";
	const char *n = s->events[ev]->name;
	return n && *n ? n : "[unnamed]";
}

int ana_trace_offcpu_event(const struct ana_trace *s)
{
	for (size_t i = 0; i < s->nevents; i++)
		if (s->events[i]->bpf_output)
			return (int)i;
	return -1;
}

uint32_t ana_trace_pid_of(const struct ana_trace *s, uint32_t tid)
{
	const uint32_t *pid = prec_hashmap_find(&s->tid2pid, &tid);
	return pid ? *pid : tid;
}
