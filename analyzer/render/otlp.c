/*
 * otlp.c - an OTLP ExportProfilesServiceRequest (see otlp.h).
 *
 * Call order: one pass over the samples (file order; each carries its own
 * timestamp) -> per sample: intern strings, location, stack and
 * attributes into the dictionary, encode the Sample into its event's
 * spill file -> write the request: the ResourceProfiles prefix, each
 * Profile's head and its spilled samples copied, then the dictionary.
 *
 * A dataset's traces share the dictionary (names pooled in the dataset's
 * pool); its files come host by host, so a host's ResourceProfiles is
 * written when the next host's first trace comes (or at the end), its
 * spill files then emptied, and the dictionary last.
 *
 * Field numbers are those of profiles.proto, profiles_service.proto,
 * common.proto and resource.proto (tests/data/otlp).
 */
#define _POSIX_C_SOURCE 200809L
#include "analyzer/render/otlp.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/base/hashmap.h"
#include "analyzer/read/trace.h"
#include "analyzer/render/pbwrite.h"
#include "format/base/grow.h"
#include "analyzer/symbols/resolve.h"

#define MAX_FRAMES 256

/* ExportProfilesServiceRequest */
#define F_REQ_RESOURCE_PROFILES 1
#define F_REQ_DICTIONARY 2
/* ResourceProfiles, Resource, KeyValue, AnyValue */
#define F_RP_RESOURCE 1
#define F_RP_SCOPE_PROFILES 2
#define F_RES_ATTRIBUTES 1
#define F_KV_KEY 1
#define F_KV_VALUE 2
#define F_AV_STRING 1
#define F_AV_INT 3
/* ScopeProfiles, InstrumentationScope */
#define F_SP_SCOPE 1
#define F_SP_PROFILES 2
#define F_SCOPE_NAME 1
#define F_SCOPE_VERSION 2
/* Profile, ValueType */
#define F_PR_SAMPLE_TYPE 1
#define F_PR_SAMPLES 2
#define F_PR_TIME 3
#define F_PR_DURATION 4
#define F_VT_TYPE 1
#define F_VT_UNIT 2
/* Sample */
#define F_S_STACK 1
#define F_S_ATTRS 2
#define F_S_VALUES 4
#define F_S_TIMESTAMPS 5
/* ProfilesDictionary */
#define F_D_MAPPINGS 1
#define F_D_LOCATIONS 2
#define F_D_FUNCTIONS 3
#define F_D_STRINGS 5
#define F_D_ATTRIBUTES 6
#define F_D_STACKS 7
/* Mapping, Location, Line, Function, Stack, KeyValueAndUnit */
#define F_M_FILENAME 4
#define F_L_MAPPING 1
#define F_L_ADDRESS 2
#define F_L_LINES 3
#define F_LN_FUNCTION 1
#define F_F_NAME 1
#define F_F_SYSTEM_NAME 2
#define F_F_FILENAME 3
#define F_ST_LOCATIONS 1
#define F_KVU_KEY 1
#define F_KVU_VALUE 2

struct framekey {
	const char *dso, *sym;
};

struct loc {            /* a location and its function (same index) */
	int32_t map;        /* mapping table index, 0 = none */
	int32_t name, file;
	uint64_t addr;
};

struct attrkey {
	int32_t key;
	int32_t is_str;
	int64_t ival;
	const char *sval;   /* pooled */
};

struct threadattrs {
	uint32_t pid;
	int32_t idx[4];
	int has;
};

struct profile {        /* one sampling event's samples, of the host */
	const char *event;  /* pooled name, NULL: unknown event */
	int clock;          /* a clock event: nanoseconds */
	size_t order;       /* event position + 1 where first met, 0 unknown */
	FILE *spill;
	uint64_t samples;
};

struct ana_otlp {
	struct ana_trace *s;           /* the trace being added */
	const struct ana_filter *f;
	FILE *out;
	struct ana_strpool *pool;      /* names kept across traces */
	/* the host being written: its name (NULL before the first trace)
	 * and its first header's fields, pooled; its traces' wall-clock span */
	const char *host, *arch, *kernel, *version;
	uint64_t wall_lo, wall_hi;
	struct ana_pbw w;
	/* tables: entry 0 of each is the zero value, written at the end */
	struct prec_hashmap strs;      /* pooled const char * -> int32 */
	const char **strv;
	size_t nstr, capstr;
	struct prec_hashmap maps;      /* pooled dso -> int32 */
	int32_t *mapv;                 /* mapping i -> filename string */
	size_t nmap, capmap;
	struct prec_hashmap locs;      /* struct framekey -> int32 */
	struct loc *locv;
	size_t nloc, caploc;
	struct prec_hashmap stacks;    /* pooled key -> int32 */
	int32_t *stackpool;
	size_t npool, cappool;
	size_t *stackoff;              /* stack i: pool[off[i] .. off[i + 1]) */
	size_t capstackoff, nstack;
	struct prec_hashmap attrs;     /* struct attrkey -> int32 */
	struct attrkey *attrv;
	size_t nattr, capattr;
	struct prec_hashmap threads;   /* uint32 tid -> struct threadattrs, per trace */
	struct profile *profiles;      /* the host's, in order of first sample */
	size_t nprofiles, capprofiles;
	struct ana_loc *frames;
	int32_t *ids;
	char *key;
	size_t keycap;
	int64_t wall;                  /* realtime - monotonic, ns */
};

/* The string table index of s; -1 on ENOMEM. */
static int32_t str_index(struct ana_otlp *st, const char *s)
{
	const char *k = ana_strpool_intern(st->pool, s ? s : "");
	int created;
	int32_t *v = k ? prec_hashmap_get(&st->strs, &k, &created) : NULL;
	if (!v)
		return -1;
	if (created) {
		if (prec_grow(&st->strv, &st->capstr, st->nstr + 1, sizeof(*st->strv)))
			return -1;
		st->strv[st->nstr] = k;
		*v = (int32_t)st->nstr++;
	}
	return *v;
}

static int32_t map_index(struct ana_otlp *st, const char *dso)
{
	int created;
	int32_t *v = prec_hashmap_get(&st->maps, &dso, &created);
	if (!v)
		return -1;
	if (created) {
		int32_t name = str_index(st, dso);
		if (name < 0 || prec_grow(&st->mapv, &st->capmap, st->nmap + 1, sizeof(*st->mapv)))
			return -1;
		st->mapv[st->nmap] = name;
		*v = (int32_t)st->nmap++;
	}
	return *v;
}

static int32_t loc_index(struct ana_otlp *st, const struct ana_loc *fr)
{
	struct framekey k;
	memset(&k, 0, sizeof(k));
	const char *sym = ana_frame_name(st->s, fr);
	k.sym = sym ? ana_strpool_intern(st->pool, sym) : NULL;
	k.dso = fr->dso ? ana_strpool_intern(st->pool, fr->dso) : NULL;
	if (!k.sym || (fr->dso && !k.dso))
		return -1;
	int32_t *v = prec_hashmap_find(&st->locs, &k);
	if (v)
		return *v;
	struct loc l;
	memset(&l, 0, sizeof(l));
	if ((l.name = str_index(st, k.sym)) < 0 || (l.file = str_index(st, k.dso)) < 0)
		return -1;
	if (k.dso) {
		int32_t m = map_index(st, k.dso);
		if (m < 0)
			return -1;
		l.map = m + 1;   /* after the zero entry */
	}
	l.addr = fr->dso ? fr->dso_off : fr->ip;
	if (prec_grow(&st->locv, &st->caploc, st->nloc + 1, sizeof(*st->locv)) ||
	    !(v = prec_hashmap_get(&st->locs, &k, NULL)))
		return -1;
	st->locv[st->nloc] = l;
	*v = (int32_t)st->nloc++;
	return *v;
}

static int32_t stack_index(struct ana_otlp *st, int n)
{
	size_t len = 0;
	for (int i = 0; i < n; i++) {   /* leaf first */
		if ((st->ids[i] = loc_index(st, &st->frames[i])) < 0)
			return -1;
		len += (size_t)snprintf(st->key + len, st->keycap - len, "%" PRIx32 ",",
					(uint32_t)st->ids[i]);
	}
	const char *k = ana_strpool_intern_n(st->pool, st->key, len);
	int created;
	int32_t *v = k ? prec_hashmap_get(&st->stacks, &k, &created) : NULL;
	if (!v)
		return -1;
	if (created) {
		if (prec_grow(&st->stackoff, &st->capstackoff, st->nstack + 2,
				   sizeof(*st->stackoff)) ||
		    prec_grow(&st->stackpool, &st->cappool, st->npool + (size_t)n,
				   sizeof(*st->stackpool)))
			return -1;
		st->stackoff[st->nstack] = st->npool;
		memcpy(st->stackpool + st->npool, st->ids, (size_t)n * sizeof(*st->ids));
		st->npool += (size_t)n;
		st->stackoff[st->nstack + 1] = st->npool;
		*v = (int32_t)st->nstack++;
	}
	return *v;
}

static int32_t attr_index(struct ana_otlp *st, const char *key, const char *sval, int64_t ival)
{
	struct attrkey k;
	memset(&k, 0, sizeof(k));
	if ((k.key = str_index(st, key)) < 0)
		return -1;
	k.is_str = sval != NULL;
	k.ival = ival;
	if (sval && !(k.sval = ana_strpool_intern(st->pool, sval)))
		return -1;
	int created;
	int32_t *v = prec_hashmap_get(&st->attrs, &k, &created);
	if (!v)
		return -1;
	if (created) {
		if (prec_grow(&st->attrv, &st->capattr, st->nattr + 1, sizeof(*st->attrv)))
			return -1;
		st->attrv[st->nattr] = k;
		*v = (int32_t)st->nattr++;
	}
	return *v;
}

static const struct threadattrs *thread_attrs(struct ana_otlp *st, uint32_t pid, uint32_t tid)
{
	int created;
	struct threadattrs *t = prec_hashmap_get(&st->threads, &tid, &created);
	if (!t)
		return NULL;
	if (t->has && t->pid == pid)
		return t;
	/* names as they were last: what the thread became (exec) */
	uint64_t last = st->s->t_max ? st->s->t_max : UINT64_MAX;
	const char *comm = ana_trace_comm_name(st->s, tid, last);
	const char *pcomm = ana_trace_comm_name(st->s, pid, last);
	if (!comm || !pcomm)
		return NULL;
	int32_t a[4] = { attr_index(st, "process.pid", NULL, pid),
			 attr_index(st, "process.executable.name", pcomm, 0),
			 attr_index(st, "thread.id", NULL, tid),
			 attr_index(st, "thread.name", comm, 0) };
	for (int i = 0; i < 4; i++)
		if (a[i] < 0)
			return NULL;
	memcpy(t->idx, a, sizeof(a));
	t->pid = pid;
	t->has = 1;
	return t;
}

/* The host's profile of event position ev of the trace (-1 or out of
 * range: unknown); NULL without memory. */
static struct profile *profile_of(struct ana_otlp *st, int ev)
{
	struct ana_trace *s = st->s;
	const char *name = NULL;
	if (ev >= 0 && (size_t)ev < s->nevents &&
	    !(name = ana_strpool_intern(st->pool, ana_trace_event_name(s, ev))))
		return NULL;
	for (size_t i = 0; i < st->nprofiles; i++)
		if (st->profiles[i].event == name)
			return &st->profiles[i];
	if (prec_grow(&st->profiles, &st->capprofiles, st->nprofiles + 1, sizeof(*st->profiles)))
		return NULL;
	struct profile *pr = &st->profiles[st->nprofiles++];
	memset(pr, 0, sizeof(*pr));
	pr->event = name;
	pr->clock = name && strstr(name, "clock") != NULL;
	pr->order = name ? (size_t)ev + 1 : 0;
	return pr;
}

static int on_packet(void *ctx, const struct prec_packet *p)
{
	struct ana_otlp *st = ctx;
	if (p->pkt->data_case != PERFREC__PACKET__DATA_SAMPLE)
		return 0;
	const Perfrec__Sample *smp = p->pkt->sample;
	struct ana_trace *s = st->s;
	int ev = ana_trace_event_of(s, smp->id);
	int keep = ana_filter_sample(st->f, s, p, NULL);
	if (keep <= 0)
		return keep;
	int n = ana_resolve_sample(s, p, st->frames, MAX_FRAMES);
	if (n < 0)
		return n;
	int32_t stack = stack_index(st, n);
	const struct threadattrs *t = thread_attrs(st, smp->pid, smp->tid);
	if (stack < 0 || !t)
		return -ENOMEM;
	struct profile *pr = profile_of(st, ev);
	if (!pr)
		return -ENOMEM;
	if (!pr->spill && !(pr->spill = tmpfile()))
		return -EIO;
	uint64_t wall = (uint64_t)((int64_t)p->time + st->wall);
	uint8_t le[8];
	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(wall >> (8 * i));
	struct ana_pbw *w = &st->w;
	ana_pbw_begin(w, F_PR_SAMPLES);
	/* stack 0 is the zero entry: the table's index is one more */
	ana_pbw_varint(w, F_S_STACK, (uint64_t)stack + 1);
	ana_pbw_begin(w, F_S_ATTRS);
	for (int i = 0; i < 4; i++)
		ana_pbw_raw_varint(w, (uint64_t)t->idx[i] + 1);
	ana_pbw_end(w);
	ana_pbw_begin(w, F_S_VALUES);
	ana_pbw_raw_varint(w, smp->period ? smp->period : 1);
	ana_pbw_end(w);
	ana_pbw_bytes(w, F_S_TIMESTAMPS, le, sizeof(le));
	ana_pbw_end(w);
	pr->samples++;
	return ana_pbw_flush(w, pr->spill);
}

/* A profile without its samples: its type, the host's time span. */
static void profile_head(struct ana_otlp *st, struct ana_pbw *w, const struct profile *pr)
{
	ana_pbw_begin(w, F_PR_SAMPLE_TYPE);
	ana_pbw_varint(w, F_VT_TYPE, (uint64_t)str_index(st, pr->event ? pr->event : "samples"));
	ana_pbw_varint(w, F_VT_UNIT, (uint64_t)str_index(st, pr->clock ? "nanoseconds" : "count"));
	ana_pbw_end(w);
	ana_pbw_fixed64(w, F_PR_TIME, st->wall_lo);
	if (st->wall_hi > st->wall_lo)
		ana_pbw_varint(w, F_PR_DURATION, st->wall_hi - st->wall_lo);
}

static int cmp_profile(const void *a, const void *b)
{
	const struct profile *x = a, *y = b;
	return (x->order > y->order) - (x->order < y->order);
}

static void kv_str(struct ana_pbw *w, uint32_t field, const char *key, const char *val)
{
	ana_pbw_begin(w, field);
	ana_pbw_str(w, F_KV_KEY, key);
	ana_pbw_begin(w, F_KV_VALUE);
	ana_pbw_str(w, F_AV_STRING, val);
	ana_pbw_end(w);
	ana_pbw_end(w);
}

static int copy_file(FILE *in, FILE *out)
{
	char buf[65536];
	size_t n;
	if (fseek(in, 0, SEEK_SET))
		return -EIO;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			return -EIO;
	return ferror(in) ? -EIO : 0;
}

static void write_dictionary(struct ana_otlp *st, struct ana_pbw *w)
{
	ana_pbw_begin(w, F_REQ_DICTIONARY);
	/* each table's entry 0: the zero value */
	ana_pbw_bytes(w, F_D_MAPPINGS, NULL, 0);
	for (size_t i = 0; i < st->nmap; i++) {
		ana_pbw_begin(w, F_D_MAPPINGS);
		ana_pbw_varint(w, F_M_FILENAME, (uint64_t)st->mapv[i]);
		ana_pbw_end(w);
	}
	ana_pbw_bytes(w, F_D_LOCATIONS, NULL, 0);
	for (size_t i = 0; i < st->nloc; i++) {
		const struct loc *l = &st->locv[i];
		ana_pbw_begin(w, F_D_LOCATIONS);
		if (l->map)
			ana_pbw_varint(w, F_L_MAPPING, (uint64_t)l->map);
		ana_pbw_varint(w, F_L_ADDRESS, l->addr);
		ana_pbw_begin(w, F_L_LINES);
		ana_pbw_varint(w, F_LN_FUNCTION, i + 1);
		ana_pbw_end(w);
		ana_pbw_end(w);
	}
	ana_pbw_bytes(w, F_D_FUNCTIONS, NULL, 0);
	for (size_t i = 0; i < st->nloc; i++) {
		const struct loc *l = &st->locv[i];
		ana_pbw_begin(w, F_D_FUNCTIONS);
		ana_pbw_varint(w, F_F_NAME, (uint64_t)l->name);
		ana_pbw_varint(w, F_F_SYSTEM_NAME, (uint64_t)l->name);
		ana_pbw_varint(w, F_F_FILENAME, (uint64_t)l->file);
		ana_pbw_end(w);
	}
	for (size_t i = 0; i < st->nstr; i++)   /* strv[0] is "" */
		ana_pbw_str(w, F_D_STRINGS, st->strv[i]);
	ana_pbw_bytes(w, F_D_ATTRIBUTES, NULL, 0);
	for (size_t i = 0; i < st->nattr; i++) {
		const struct attrkey *a = &st->attrv[i];
		ana_pbw_begin(w, F_D_ATTRIBUTES);
		ana_pbw_varint(w, F_KVU_KEY, (uint64_t)a->key);
		ana_pbw_begin(w, F_KVU_VALUE);
		if (a->is_str)
			ana_pbw_str(w, F_AV_STRING, a->sval);
		else
			ana_pbw_varint(w, F_AV_INT, (uint64_t)a->ival);
		ana_pbw_end(w);
		ana_pbw_end(w);
	}
	ana_pbw_bytes(w, F_D_STACKS, NULL, 0);
	for (size_t i = 0; i < st->nstack; i++) {
		ana_pbw_begin(w, F_D_STACKS);
		ana_pbw_begin(w, F_ST_LOCATIONS);
		for (size_t j = st->stackoff[i]; j < st->stackoff[i + 1]; j++)
			ana_pbw_raw_varint(w, (uint64_t)st->stackpool[j] + 1);
		ana_pbw_end(w);
		ana_pbw_end(w);
	}
	ana_pbw_end(w);
}

/* The host's ResourceProfiles, its spill files copied and emptied. */
static int write_resource(struct ana_otlp *st, FILE *out)
{
	struct ana_pbw res, scope, *heads;
	ana_pbw_init(&res);
	ana_pbw_init(&scope);
	int ret = -ENOMEM;
	if (!st->host)
		return 0;   /* no trace yet */
	if (!(heads = calloc(st->nprofiles + 1, sizeof(*heads))))
		return -ENOMEM;
	/* by event position where first met, the unknown event first */
	prec_sort(st->profiles, st->nprofiles, sizeof(*st->profiles), cmp_profile);
	/* Resource and scope, then each profile's head: their sizes and the
	 * spill files' make the lengths of the enclosing messages. */
	ana_pbw_begin(&res, F_RP_RESOURCE);
	kv_str(&res, F_RES_ATTRIBUTES, "host.name", st->host);
	kv_str(&res, F_RES_ATTRIBUTES, "host.arch", st->arch);
	kv_str(&res, F_RES_ATTRIBUTES, "os.type", "linux");
	kv_str(&res, F_RES_ATTRIBUTES, "os.version", st->kernel);
	ana_pbw_end(&res);
	ana_pbw_begin(&scope, F_SP_SCOPE);
	ana_pbw_str(&scope, F_SCOPE_NAME, "perfrec");
	ana_pbw_str(&scope, F_SCOPE_VERSION, st->version);
	ana_pbw_end(&scope);
	uint64_t scope_len = scope.len;
	for (size_t i = 0; i < st->nprofiles; i++) {
		if (!st->profiles[i].spill)
			continue;
		ana_pbw_init(&heads[i]);
		profile_head(st, &heads[i], &st->profiles[i]);
		if (heads[i].err)
			goto out;
		long n = ftell(st->profiles[i].spill);
		if (n < 0 || fflush(st->profiles[i].spill)) {
			ret = -EIO;
			goto out;
		}
		uint64_t plen = heads[i].len + (uint64_t)n;
		scope_len += ana_pbw_prefix_size(F_SP_PROFILES, plen) + plen;
	}
	uint64_t rp_len = res.len + ana_pbw_prefix_size(F_RP_SCOPE_PROFILES, scope_len) + scope_len;
	struct ana_pbw *w = &st->w;
	ana_pbw_len_prefix(w, F_REQ_RESOURCE_PROFILES, rp_len);
	ana_pbw_raw(w, res.p, res.len);
	ana_pbw_len_prefix(w, F_RP_SCOPE_PROFILES, scope_len);
	ana_pbw_raw(w, scope.p, scope.len);
	if (res.err || scope.err || (ret = ana_pbw_flush(w, out)) < 0)
		goto out;
	for (size_t i = 0; i < st->nprofiles; i++) {
		if (!st->profiles[i].spill)
			continue;
		long n = ftell(st->profiles[i].spill);
		ana_pbw_len_prefix(w, F_SP_PROFILES, heads[i].len + (uint64_t)n);
		ana_pbw_raw(w, heads[i].p, heads[i].len);
		if ((ret = ana_pbw_flush(w, out)) < 0 ||
		    (ret = copy_file(st->profiles[i].spill, out)) < 0)
			goto out;
	}
	ret = 0;
out:
	for (size_t i = 0; i < st->nprofiles; i++) {
		ana_pbw_release(&heads[i]);
		if (st->profiles[i].spill)
			fclose(st->profiles[i].spill);
	}
	st->nprofiles = 0;
	free(heads);
	ana_pbw_release(&res);
	ana_pbw_release(&scope);
	return ret;
}

int ana_otlp_new(struct ana_otlp **out, const struct ana_filter *f, struct ana_strpool *pool,
		 FILE *fout)
{
	struct ana_otlp *st = calloc(1, sizeof(*st));
	*out = NULL;
	if (!st)
		return -ENOMEM;
	st->f = f;
	st->out = fout;
	st->pool = pool;
	ana_pbw_init(&st->w);
	prec_hashmap_init(&st->strs, sizeof(const char *), sizeof(int32_t));
	prec_hashmap_init(&st->maps, sizeof(const char *), sizeof(int32_t));
	prec_hashmap_init(&st->locs, sizeof(struct framekey), sizeof(int32_t));
	prec_hashmap_init(&st->stacks, sizeof(const char *), sizeof(int32_t));
	prec_hashmap_init(&st->attrs, sizeof(struct attrkey), sizeof(int32_t));
	prec_hashmap_init(&st->threads, sizeof(uint32_t), sizeof(struct threadattrs));
	st->keycap = MAX_FRAMES * 9 + 1;   /* hex index and a comma per frame */
	st->frames = calloc(MAX_FRAMES, sizeof(*st->frames));
	st->ids = calloc(MAX_FRAMES, sizeof(*st->ids));
	st->key = malloc(st->keycap);
	if (!st->frames || !st->ids || !st->key || str_index(st, "") != 0) {
		ana_otlp_free(st);
		return -ENOMEM;
	}
	*out = st;
	return 0;
}

/* A header's string field, pooled ("" when absent); NULL without memory. */
static const char *header_str(struct ana_otlp *st, const char *v)
{
	return ana_strpool_intern(st->pool, v ? v : "");
}

int ana_otlp_add(struct ana_otlp *st, struct ana_trace *s, const char *host)
{
	const Perfrec__FileHeader *h = s->header;
	/* a trace's host is its header's (the dataset's host names it too) */
	const char *name = header_str(st, host ? host : h ? h->hostname : NULL);
	if (!name)
		return -ENOMEM;
	int ret;
	if (name != st->host) {
		if ((ret = write_resource(st, st->out)) < 0)
			return ret;
		st->host = name;
		st->arch = header_str(st, h ? h->machine : NULL);
		st->kernel = header_str(st, h ? h->kernel_release : NULL);
		st->version = header_str(st, h ? h->recorder_version : NULL);
		if (!st->arch || !st->kernel || !st->version)
			return -ENOMEM;
		st->wall_lo = UINT64_MAX;
		st->wall_hi = 0;
	}
	st->s = s;
	st->wall = 0;
	if (h && h->realtime_ns && h->monotonic_ns)
		st->wall = (int64_t)(h->realtime_ns - h->monotonic_ns);
	uint64_t lo = (uint64_t)((int64_t)s->start + st->wall);
	uint64_t hi = lo + (s->t_max > s->start ? s->t_max - s->start : 0);
	st->wall_lo = lo < st->wall_lo ? lo : st->wall_lo;
	st->wall_hi = hi > st->wall_hi ? hi : st->wall_hi;
	prec_hashmap_clear(&st->threads);   /* names and pids of this trace */
	ana_trace_set_kinds(s, PREC_KIND(PERFREC__PACKET__DATA_SAMPLE));
	ret = ana_trace_scan(s, "export", on_packet, st);
	ana_trace_set_kinds(s, 0);
	st->s = NULL;
	return ret < 0 ? ret : 0;
}

int ana_otlp_finish(struct ana_otlp *st)
{
	int ret = write_resource(st, st->out);
	if (ret < 0)
		return ret;
	write_dictionary(st, &st->w);
	if ((ret = ana_pbw_flush(&st->w, st->out)) < 0)
		return ret;
	return fflush(st->out) || ferror(st->out) ? -EIO : 0;
}

void ana_otlp_free(struct ana_otlp *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->nprofiles; i++)
		if (st->profiles[i].spill)
			fclose(st->profiles[i].spill);
	free(st->profiles);
	free(st->frames);
	free(st->ids);
	free(st->key);
	free(st->strv);
	free(st->mapv);
	free(st->locv);
	free(st->stackpool);
	free(st->stackoff);
	free(st->attrv);
	ana_pbw_release(&st->w);
	prec_hashmap_release(&st->strs);
	prec_hashmap_release(&st->maps);
	prec_hashmap_release(&st->locs);
	prec_hashmap_release(&st->stacks);
	prec_hashmap_release(&st->attrs);
	prec_hashmap_release(&st->threads);
	free(st);
}
