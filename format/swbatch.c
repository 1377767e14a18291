/*
 * swbatch.c - the SwitchBatch packet's columns (see swbatch.h; the layout
 * is format/SPEC.md section 6, "Switch batches").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/error.h"
#include "format/swbatch.h"
#include "format/varint.h"

#define FLAG_OUT 1u
#define FLAG_PREEMPT 2u
#define FLAG_CPU_WIDE 4u

/* Field numbers of SwitchBatch (perfrec.proto). */
enum { F_KEY_ID = 1, F_KEY_CPU, F_KEY_FLAGS, F_TASK_PID, F_TASK_TID, F_DT, F_KEY, F_TASK, F_OTHER };

void prec_swbatch_init(struct prec_swbatch *b, size_t rows)
{
	memset(b, 0, sizeof(*b));
	if (rows == 0)
		rows = 1;
	if (rows > PREC_SWBATCH_MAX_ROWS)
		rows = PREC_SWBATCH_MAX_ROWS;
	b->cap = rows;
}

void prec_swbatch_release(struct prec_swbatch *b)
{
	if (!b)
		return;
	free(b->dt);
	free(b->key);
	free(b->task);
	free(b->other);
	free(b->keys);
	free(b->tpid);
	free(b->ttid);
	free(b->kslots);
	free(b->tslots);
	memset(b, 0, sizeof(*b));
}

/* Every array at its full size on the first row: a stream that writes
 * switches writes many, and then no row ever allocates. */
static int alloc_all(struct prec_swbatch *b)
{
	size_t c = b->cap;

	b->nslots = 1;
	while (b->nslots < 2 * c)
		b->nslots *= 2;
	b->dt = malloc(c * sizeof(*b->dt));
	b->key = malloc(c * sizeof(*b->key));
	b->task = malloc(c * sizeof(*b->task));
	b->other = malloc(c * sizeof(*b->other));
	b->keys = malloc(c * sizeof(*b->keys));
	/* two tasks a row at most */
	b->tpid = malloc(2 * c * sizeof(*b->tpid));
	b->ttid = malloc(2 * c * sizeof(*b->ttid));
	b->kslots = calloc(b->nslots, sizeof(*b->kslots));
	b->tslots = calloc(2 * b->nslots, sizeof(*b->tslots));
	if (!b->dt || !b->key || !b->task || !b->other || !b->keys || !b->tpid ||
	    !b->ttid || !b->kslots || !b->tslots) {
		size_t cap = b->cap;
		prec_swbatch_release(b);
		b->cap = cap;
		return -ENOMEM;
	}
	b->gen = 1;
	return 0;
}

static uint32_t key_index(struct prec_swbatch *b, uint64_t id, uint32_t cpu, uint32_t flags)
{
	size_t mask = b->nslots - 1;
	size_t s = (size_t)(((id * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)cpu << 3 | flags) *
			      0xC2B2AE3D27D4EB4Full) >> 20) & mask;

	for (;; s = (s + 1) & mask) {
		struct prec_swbatch_slot *sl = &b->kslots[s];
		if (sl->gen != b->gen) {
			struct prec_swbatch_key *k = &b->keys[b->nkeys];
			k->id = id;
			k->cpu = cpu;
			k->flags = flags;
			sl->gen = b->gen;
			sl->idx = (uint32_t)b->nkeys++;
			b->bytes[F_KEY_ID] += prec_varint_size(id);
			b->bytes[F_KEY_CPU] += prec_varint_size(cpu);
			b->bytes[F_KEY_FLAGS] += prec_varint_size(flags);
			return sl->idx;
		}
		const struct prec_swbatch_key *k = &b->keys[sl->idx];
		if (k->id == id && k->cpu == cpu && k->flags == flags)
			return sl->idx;
	}
}

static uint32_t task_index(struct prec_swbatch *b, uint32_t pid, uint32_t tid)
{
	size_t mask = 2 * b->nslots - 1;
	uint64_t v = (uint64_t)pid << 32 | tid;
	size_t s = (size_t)((v * 0x9E3779B97F4A7C15ull) >> 20) & mask;

	for (;; s = (s + 1) & mask) {
		struct prec_swbatch_slot *sl = &b->tslots[s];
		if (sl->gen != b->gen) {
			b->tpid[b->ntasks] = pid;
			b->ttid[b->ntasks] = tid;
			sl->gen = b->gen;
			sl->idx = (uint32_t)b->ntasks++;
			b->bytes[F_TASK_PID] += prec_varint_size(pid);
			b->bytes[F_TASK_TID] += prec_varint_size(tid);
			return sl->idx;
		}
		if (b->tpid[sl->idx] == pid && b->ttid[sl->idx] == tid)
			return sl->idx;
	}
}

int prec_swbatch_add(struct prec_swbatch *b, const Perfrec__ContextSwitch *cs, int64_t dt)
{
	uint32_t flags;
	size_t i = b->n;

	if (!b->dt && alloc_all(b) < 0)
		return -ENOMEM;
	flags = (cs->out ? FLAG_OUT : 0) | (cs->preempt ? FLAG_PREEMPT : 0) |
		(cs->cpu_wide ? FLAG_CPU_WIDE : 0);
	b->dt[i] = dt;
	b->key[i] = key_index(b, cs->id, cs->cpu, flags);
	b->task[i] = task_index(b, cs->pid, cs->tid);
	b->other[i] = task_index(b, cs->other_pid, cs->other_tid);
	b->bytes[F_DT] += prec_varint_size(prec_zigzag(dt));
	b->bytes[F_KEY] += prec_varint_size(b->key[i]);
	b->bytes[F_TASK] += prec_varint_size(b->task[i]);
	b->bytes[F_OTHER] += prec_varint_size(b->other[i]);
	b->sum = (int64_t)((uint64_t)b->sum + (uint64_t)dt);
	b->n++;
	return 0;
}

void prec_swbatch_clear(struct prec_swbatch *b)
{
	b->n = 0;
	b->sum = 0;
	b->nkeys = 0;
	b->ntasks = 0;
	memset(b->bytes, 0, sizeof(b->bytes));
	if (++b->gen == 0) {
		/* the stamps wrapped: no slot may look valid */
		if (b->kslots)
			memset(b->kslots, 0, b->nslots * sizeof(*b->kslots));
		if (b->tslots)
			memset(b->tslots, 0, 2 * b->nslots * sizeof(*b->tslots));
		b->gen = 1;
	}
}

static void set_row(Perfrec__ContextSwitch *cs, uint64_t id, uint32_t cpu, uint32_t flags,
		    uint32_t pid, uint32_t tid, uint32_t other_pid, uint32_t other_tid)
{
	cs->id = id;
	cs->cpu = cpu;
	cs->pid = pid;
	cs->tid = tid;
	cs->out = !!(flags & FLAG_OUT);
	cs->preempt = !!(flags & FLAG_PREEMPT);
	cs->cpu_wide = !!(flags & FLAG_CPU_WIDE);
	cs->other_pid = other_pid;
	cs->other_tid = other_tid;
}

void prec_swbatch_row(const struct prec_swbatch *b, size_t i, Perfrec__ContextSwitch *cs)
{
	const struct prec_swbatch_key *k = &b->keys[b->key[i]];
	uint32_t t = b->task[i], o = b->other[i];

	set_row(cs, k->id, k->cpu, k->flags, b->tpid[t], b->ttid[t], b->tpid[o], b->ttid[o]);
}

static size_t body_size(const struct prec_swbatch *b)
{
	size_t sz = 0;

	for (int f = F_KEY_ID; f <= F_OTHER; f++)
		if (b->bytes[f])
			sz += 1 + prec_varint_size(b->bytes[f]) + b->bytes[f];
	return sz;
}

size_t prec_swbatch_size(const struct prec_swbatch *b)
{
	size_t body = body_size(b);
	size_t sz = 2 + prec_varint_size(body) + body;   /* key 20: two bytes */

	if (b->sum)
		sz += 1 + prec_varint_size(prec_zigzag(b->sum));
	return sz;
}

/* One packed field: key, length, then the values the caller writes. A
 * field whose values would all be empty is left out, as protobuf-c does
 * for a repeated field without elements (every column here has n >= 1
 * elements, each of at least one byte, so that never happens for rows). */
static uint8_t *field(uint8_t *p, int f, size_t bytes)
{
	*p++ = (uint8_t)(f << 3 | 2);
	return prec_varint_put(p, bytes);
}

size_t prec_swbatch_pack(const struct prec_swbatch *b, uint8_t *out)
{
	uint8_t *p = out;
	size_t i;

	if (b->sum) {
		*p++ = 0x08;
		p = prec_varint_put(p, prec_zigzag(b->sum));
	}
	*p++ = 0xA2;   /* field 20, length-delimited */
	*p++ = 0x01;
	p = prec_varint_put(p, body_size(b));
	if (b->nkeys) {
		p = field(p, F_KEY_ID, b->bytes[F_KEY_ID]);
		for (i = 0; i < b->nkeys; i++)
			p = prec_varint_put(p, b->keys[i].id);
		p = field(p, F_KEY_CPU, b->bytes[F_KEY_CPU]);
		for (i = 0; i < b->nkeys; i++)
			p = prec_varint_put(p, b->keys[i].cpu);
		p = field(p, F_KEY_FLAGS, b->bytes[F_KEY_FLAGS]);
		for (i = 0; i < b->nkeys; i++)
			p = prec_varint_put(p, b->keys[i].flags);
	}
	if (b->ntasks) {
		p = field(p, F_TASK_PID, b->bytes[F_TASK_PID]);
		for (i = 0; i < b->ntasks; i++)
			p = prec_varint_put(p, b->tpid[i]);
		p = field(p, F_TASK_TID, b->bytes[F_TASK_TID]);
		for (i = 0; i < b->ntasks; i++)
			p = prec_varint_put(p, b->ttid[i]);
	}
	if (b->n) {
		p = field(p, F_DT, b->bytes[F_DT]);
		for (i = 0; i < b->n; i++)
			p = prec_varint_put(p, prec_zigzag(b->dt[i]));
		p = field(p, F_KEY, b->bytes[F_KEY]);
		for (i = 0; i < b->n; i++)
			p = prec_varint_put(p, b->key[i]);
		p = field(p, F_TASK, b->bytes[F_TASK]);
		for (i = 0; i < b->n; i++)
			p = prec_varint_put(p, b->task[i]);
		p = field(p, F_OTHER, b->bytes[F_OTHER]);
		for (i = 0; i < b->n; i++)
			p = prec_varint_put(p, b->other[i]);
	}
	return (size_t)(p - out);
}

int prec_swbatch_expand(const Perfrec__SwitchBatch *m, int64_t dt, struct prec_arena *a,
			Perfrec__Packet **rows, size_t *n)
{
	static const Perfrec__Packet pinit = PERFREC__PACKET__INIT;
	static const Perfrec__ContextSwitch cinit = PERFREC__CONTEXT_SWITCH__INIT;
	size_t nr = m->n_dt, nk = m->n_key_id, nt = m->n_task_pid;
	uint64_t sum = 0;

	*rows = NULL;
	*n = 0;
	if (nr == 0 || nr > PREC_SWBATCH_MAX_ROWS || m->n_key != nr || m->n_task != nr ||
	    m->n_other != nr || m->n_key_cpu != nk || m->n_key_flags != nk ||
	    m->n_task_tid != nt)
		return PREC_E_DECODE;
	for (size_t i = 0; i < nr; i++) {
		if (m->key[i] >= nk || m->task[i] >= nt || m->other[i] >= nt)
			return PREC_E_DECODE;
		sum += (uint64_t)m->dt[i];
	}
	if (sum != (uint64_t)dt)
		return PREC_E_DECODE;

	Perfrec__Packet *pk = prec_arena_alloc(a, nr * sizeof(*pk));
	Perfrec__ContextSwitch *cs = prec_arena_alloc(a, nr * sizeof(*cs));
	if (!pk || !cs)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		uint32_t k = m->key[i], t = m->task[i], o = m->other[i];
		cs[i] = cinit;
		set_row(&cs[i], m->key_id[k], m->key_cpu[k], m->key_flags[k], m->task_pid[t],
			m->task_tid[t], m->task_pid[o], m->task_tid[o]);
		pk[i] = pinit;
		pk[i].dt = m->dt[i];
		pk[i].data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
		pk[i].context_switch = &cs[i];
	}
	*rows = pk;
	*n = nr;
	return 0;
}

/* One packed column of a batch: [p, end), read value by value. */
struct col {
	const uint8_t *p, *end;
};

/* Values a packed column holds: its bytes that end a varint. -1 when its
 * last varint runs past the column (protobuf-c refuses those). */
static long col_count(const struct col *c)
{
	long n = 0;

	for (const uint8_t *q = c->p; q < c->end; q++)
		n += *q < 0x80;
	return c->p < c->end && c->end[-1] >= 0x80 ? -1 : n;
}

/* The next value of a column: 0, -1 at its end, 1 for a varint longer
 * than its type's (protobuf-c truncates those: the caller lets it). */
static inline int col_u64(struct col *c, uint64_t *v)
{
	const uint8_t *q = c->p;

	if (q >= c->end)
		return -1;
	if (*q < 0x80) {   /* the common case: one byte */
		*v = *q;
		c->p = q + 1;
		return 0;
	}
	if (prec_varint_get(&q, c->end, v) < 0)
		return q - c->p >= 10 ? 1 : -1;
	if (q - c->p == 10 && q[-1] > 1)
		return 1;
	c->p = q;
	return 0;
}

static inline int col_u32(struct col *c, uint32_t *v)
{
	const uint8_t *start = c->p;
	uint64_t x = 0;
	int ret = col_u64(c, &x);

	if (ret == 0 && (x > UINT32_MAX || c->p - start > 5))
		return 1;
	*v = (uint32_t)x;
	return ret;
}

int prec_swbatch_decode(const uint8_t *body, size_t len, int64_t dt, struct prec_arena *a,
			Perfrec__Packet **rows, size_t *n)
{
	static const Perfrec__Packet pinit = PERFREC__PACKET__INIT;
	static const Perfrec__ContextSwitch cinit = PERFREC__CONTEXT_SWITCH__INIT;
	struct col c[F_OTHER + 1] = { { NULL, NULL } };
	const uint8_t *p = body, *end = body + len;
	uint64_t v, sum = 0;
	long cnt[F_OTHER + 1];
	int ret;

	*rows = NULL;
	*n = 0;
	/* the writer's shape: each field at most once, packed, not empty;
	 * anything else (repeats, unpacked values, unknown fields) is
	 * protobuf-c's to read */
	while (p < end) {
		unsigned f = *p >> 3;
		if (*p >= 0x80 || (*p & 7) != 2 || f < F_KEY_ID || f > F_OTHER || c[f].p)
			return 1;
		p++;
		if (prec_varint_get(&p, end, &v) < 0 || v > (uint64_t)(end - p) || v == 0)
			return 1;
		c[f].p = p;
		c[f].end = p + v;
		p += v;
	}
	for (int f = F_KEY_ID; f <= F_OTHER; f++)
		if ((cnt[f] = col_count(&c[f])) < 0)
			return 1;
	/* every check prec_swbatch_expand() makes, in its order */
	size_t nr = (size_t)cnt[F_DT], nk = (size_t)cnt[F_KEY_ID], nt = (size_t)cnt[F_TASK_PID];
	if (nr == 0 || nr > PREC_SWBATCH_MAX_ROWS || (size_t)cnt[F_KEY] != nr ||
	    (size_t)cnt[F_TASK] != nr || (size_t)cnt[F_OTHER] != nr ||
	    (size_t)cnt[F_KEY_CPU] != nk || (size_t)cnt[F_KEY_FLAGS] != nk ||
	    (size_t)cnt[F_TASK_TID] != nt)
		return PREC_E_DECODE;

	struct prec_swbatch_key *keys = prec_arena_alloc(a, (nk ? nk : 1) * sizeof(*keys));
	uint32_t *tpid = prec_arena_alloc(a, (nt ? nt : 1) * 2 * sizeof(*tpid));
	Perfrec__Packet *pk = prec_arena_alloc(a, nr * sizeof(*pk));
	Perfrec__ContextSwitch *cs = prec_arena_alloc(a, nr * sizeof(*cs));
	if (!keys || !tpid || !pk || !cs)
		return 1;   /* the long way then says which: ENOMEM or DECODE */
	uint32_t *ttid = tpid + nt;
	ret = 0;
	for (size_t i = 0; i < nk && !ret; i++) {
		ret = col_u64(&c[F_KEY_ID], &keys[i].id);
		ret = ret ? ret : col_u32(&c[F_KEY_CPU], &keys[i].cpu);
		ret = ret ? ret : col_u32(&c[F_KEY_FLAGS], &keys[i].flags);
	}
	for (size_t i = 0; i < nt && !ret; i++) {
		ret = col_u32(&c[F_TASK_PID], &tpid[i]);
		ret = ret ? ret : col_u32(&c[F_TASK_TID], &ttid[i]);
	}
	for (size_t i = 0; i < nr && !ret; i++) {
		uint32_t k, t, o;
		ret = col_u64(&c[F_DT], &v);
		ret = ret ? ret : col_u32(&c[F_KEY], &k);
		ret = ret ? ret : col_u32(&c[F_TASK], &t);
		ret = ret ? ret : col_u32(&c[F_OTHER], &o);
		if (ret)
			break;
		if (k >= nk || t >= nt || o >= nt)
			return PREC_E_DECODE;
		sum += (uint64_t)prec_unzigzag(v);
		cs[i] = cinit;
		set_row(&cs[i], keys[k].id, keys[k].cpu, keys[k].flags, tpid[t], ttid[t],
			tpid[o], ttid[o]);
		pk[i] = pinit;
		pk[i].dt = prec_unzigzag(v);
		pk[i].data_case = PERFREC__PACKET__DATA_CONTEXT_SWITCH;
		pk[i].context_switch = &cs[i];
	}
	if (ret)
		return 1;   /* counted above: only an over-long varint gets here */
	if (sum != (uint64_t)dt)
		return PREC_E_DECODE;
	*rows = pk;
	*n = nr;
	return 0;
}
