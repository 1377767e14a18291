/*
 * memsource.h - an event source (recorder/recording/source.h) over rings
 * in memory, written by the test the way the kernel writes perf rings:
 * records at data_head, published with a release store. Lets a whole
 * recording run without perf_event_open.
 *
 * One event, kernel id MEM_ID, sample_type REC_SID_TYPE | IP | PERIOD;
 * every record carries sample_id (pid, tid, time, cpu, id).
 */
#ifndef PERFREC_TEST_MEMSOURCE_H
#define PERFREC_TEST_MEMSOURCE_H

#include <stdlib.h>
#include <string.h>

#include "format/writer.h"
#include "recorder/events/evlist.h"
#include "recorder/recording/source.h"

#define MEM_PAGE 4096
#define MEM_DATA (64 * 1024)
#define MEM_ID 77

struct memsource {
	struct rec_source pub;
	struct rec_ring rings[8];
	int cpus[8];
	unsigned char *mem[8];
	uint64_t head[8];              /* where the "kernel" writes next */
	struct rec_sample_fmt fmt;
	struct rec_decode_ctx dctx;
	int enabled, disabled, described;
};

static const struct rec_sample_fmt *memsource_lookup(void *arg, uint64_t id)
{
	struct memsource *m = arg;

	return id == MEM_ID ? &m->fmt : NULL;
}

static int memsource_open(struct rec_source *src, const int *cpus, size_t ncpus,
			  const int *pids, size_t npids)
{
	struct memsource *m = (struct memsource *)src;

	(void)pids;
	(void)npids;
	if (ncpus > 8)
		ncpus = 8;
	for (size_t i = 0; i < ncpus; i++) {
		m->mem[i] = aligned_alloc(MEM_PAGE, MEM_PAGE + MEM_DATA);
		if (!m->mem[i])
			return -12;
		memset(m->mem[i], 0, MEM_PAGE + MEM_DATA);
		((struct perf_event_mmap_page *)m->mem[i])->data_offset = MEM_PAGE;
		((struct perf_event_mmap_page *)m->mem[i])->data_size = MEM_DATA;
		if (rec_ring_init_mem(&m->rings[i], m->mem[i], MEM_PAGE, MEM_DATA) < 0)
			return -22;
		m->rings[i].fd = -1;
		m->rings[i].cpu = cpus[i];
		m->cpus[i] = cpus[i];
	}
	src->rings = m->rings;
	src->nrings = ncpus;
	src->ring_cpu = m->cpus;
	src->dctx = &m->dctx;
	return 0;
}

static int memsource_describe(struct rec_source *src, struct prec_writer *w)
{
	struct memsource *m = (struct memsource *)src;
	Perfrec__Packet p = PERFREC__PACKET__INIT;
	Perfrec__EventDesc d = PERFREC__EVENT_DESC__INIT;
	uint64_t id = MEM_ID;

	m->described++;
	d.name = (char *)"mem-event";
	d.sample_type = m->fmt.sample_type;
	d.n_ids = 1;
	d.ids = &id;
	d.sampling = 1;
	p.data_case = PERFREC__PACKET__DATA_EVENT;
	p.event = &d;
	return prec_writer_append(w, 0, &p, 0);
}

static int memsource_enable(struct rec_source *src)
{
	((struct memsource *)src)->enabled++;
	return 0;
}

static int memsource_disable(struct rec_source *src)
{
	((struct memsource *)src)->disabled++;
	return 0;
}

static void memsource_free(struct rec_source *src)
{
	struct memsource *m = (struct memsource *)src;

	for (size_t i = 0; i < 8; i++)
		free(m->mem[i]);
	memset(m, 0, sizeof(*m));
}

static const struct rec_source_ops memsource_ops = {
	.open = memsource_open,
	.describe = memsource_describe,
	.enable = memsource_enable,
	.disable = memsource_disable,
	.write_lost = NULL,
	.free = memsource_free,
};

static inline void memsource_init(struct memsource *m)
{
	memset(m, 0, sizeof(*m));
	m->pub.ops = &memsource_ops;
	m->pub.nevents = 1;
	m->pub.ring_pages = MEM_DATA / MEM_PAGE;
	m->pub.page_size = MEM_PAGE;
	m->pub.note = "";
	m->fmt.sample_type = REC_SID_TYPE | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD;
	m->dctx.sid_type = REC_SID_TYPE;
	m->dctx.lookup = memsource_lookup;
	m->dctx.arg = m;
}

/* Free bytes in ring i (what the consumer has not released yet counts). */
static inline uint64_t memsource_room(struct memsource *m, size_t i)
{
	struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *)m->mem[i];

	return MEM_DATA - (m->head[i] - __atomic_load_n(&meta->data_tail, __ATOMIC_ACQUIRE));
}

static inline void memsource_put(struct memsource *m, size_t i, const void *buf, size_t n)
{
	unsigned char *data = m->mem[i] + MEM_PAGE;

	for (size_t k = 0; k < n; k++)
		data[(m->head[i] + k) % MEM_DATA] = ((const unsigned char *)buf)[k];
	m->head[i] += n;
}

static inline void memsource_publish(struct memsource *m, size_t i)
{
	struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *)m->mem[i];

	__atomic_store_n(&meta->data_head, m->head[i], __ATOMIC_RELEASE);
}

/* sample_id of REC_SID_TYPE: pid, tid, time, cpu, res, identifier */
struct memsource_sid {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t id;
};

/* A PERF_RECORD_SWITCH_CPU_WIDE of ring i. Returns 0, or -1 when the ring
 * has no room (the caller steps the recording and retries). */
static inline int memsource_switch(struct memsource *m, size_t i, uint64_t time,
				   uint32_t pid, uint32_t tid, int out)
{
	struct {
		struct perf_event_header h;
		uint32_t next_prev_pid, next_prev_tid;
		struct memsource_sid sid;
	} r;

	if (memsource_room(m, i) < sizeof(r))
		return -1;
	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_SWITCH_CPU_WIDE;
	r.h.misc = out ? PERF_RECORD_MISC_SWITCH_OUT : 0;
	r.h.size = sizeof(r);
	r.next_prev_pid = pid + 1;
	r.next_prev_tid = tid + 1;
	r.sid.pid = pid;
	r.sid.tid = tid;
	r.sid.time = time;
	r.sid.cpu = (uint32_t)m->cpus[i];
	r.sid.id = MEM_ID;
	memsource_put(m, i, &r, sizeof(r));
	memsource_publish(m, i);
	return 0;
}

/* A PERF_RECORD_SAMPLE of the event (IDENTIFIER, IP, TID, TIME, CPU,
 * PERIOD in the kernel's order). */
static inline int memsource_sample(struct memsource *m, size_t i, uint64_t time,
				   uint32_t pid, uint64_t ip)
{
	struct {
		struct perf_event_header h;
		uint64_t identifier, ip;
		uint32_t pid, tid;
		uint64_t time;
		uint32_t cpu, res;
		uint64_t period;
	} r;

	if (memsource_room(m, i) < sizeof(r))
		return -1;
	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_SAMPLE;
	r.h.misc = PERF_RECORD_MISC_USER;
	r.h.size = sizeof(r);
	r.identifier = MEM_ID;
	r.ip = ip;
	r.pid = r.tid = pid;
	r.time = time;
	r.cpu = (uint32_t)m->cpus[i];
	r.period = 1;
	memsource_put(m, i, &r, sizeof(r));
	memsource_publish(m, i);
	return 0;
}

#endif
