/*
 * nobpf.c - bpf.h for a perfrec built without BPF (PERFREC_BPF off:
 * libbpf, clang or bpftool were missing at build time). Every entry
 * point says so and how to get a build with BPF.
 */
#include "recorder/bpf/bpf.h"

#include <errno.h>
#include <string.h>

#include "recorder/events/evlist.h"
#include "recorder/log.h"

bool rec_bpf_built(void)
{
	return false;
}

int rec_bpf_new(const struct rec_bpf_opts *o, struct rec_bpf **out)
{
	*out = NULL;
	rec_log(REC_LOG_ERROR, "%s: this perfrec was built without BPF; rebuild it "
		"with libbpf-dev, clang and bpftool installed (cmake -DPERFREC_BPF=ON)",
		o && o->events && o->events->off_cpu ? "--off-cpu" : "--filter");
	return -EOPNOTSUPP;
}

int rec_bpf_attach(struct rec_bpf *b, struct rec_evlist *s)
{
	(void)b;
	(void)s;
	return -EOPNOTSUPP;
}

int rec_bpf_emit(void *ctx, struct rec_emit *e, uint32_t stream,
		 const struct rec_record *r)
{
	(void)ctx;
	(void)e;
	(void)stream;
	(void)r;
	return 0;
}

int rec_bpf_tick(struct rec_bpf *b, struct rec_emit *e, uint64_t now_ns, bool final)
{
	(void)b;
	(void)e;
	(void)now_ns;
	(void)final;
	return 0;
}

void rec_bpf_stop(struct rec_bpf *b)
{
	(void)b;
}

void rec_bpf_stats(const struct rec_bpf *b, struct rec_bpf_stats *st)
{
	(void)b;
	memset(st, 0, sizeof(*st));
}

void rec_bpf_free(struct rec_bpf *b)
{
	(void)b;
}
