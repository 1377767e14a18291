/*
 * symgather.c - the symbol gatherer's front (see symgather.h): new(),
 * and feed(), which turns kernel records into the address-space calls of
 * addrspace.c. The gatherer's files, top to bottom, each calling only
 * those below it:
 *
 *   symgather.c   new, feed, observe, stats
 *   symunwind.c    user stacks unwound at record time (--call-graph dwarf)
 *   symwrite.c     SymbolTable / UnwindTable packets of what was hit
 *   objfile.c      opening an object's file (or our [vdso] image)
 *   addrspace.c    processes, mappings, objects, hits, kernel symbols
 *
 * (symunwind.c and symwrite.c do not call each other.) Beside the chain,
 * symcache.c keeps symwrite.c's tables on disk by build-id; it calls
 * nothing of the gatherer (format/ and the log only).
 */
#include "recorder/symbols/symgather.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/encode/decode.h"
#include "format/base/clock.h"
#include "recorder/symbols/addrspace_int.h"
#include "recorder/symbols/kallsyms.h"
#include "recorder/log.h"

#define CPUMODE_MASK 7
#define CPUMODE_KERNEL 1
#define CPUMODE_USER 2
#define MISC_COMM_EXEC (1 << 13)

struct rec_symgather *rec_symgather_new(const struct rec_symgather_opts *o)
{
	static const struct rec_symgather_opts def = REC_SYMGATHER_OPTS_INIT;
	struct rec_symgather *sc;
	uint64_t t0 = prec_now_ns();

	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return NULL;
	sc->o = def;
	if (o) {
		/* options structs grow at the end: copy what the caller knows */
		size_t n = o->sz < sizeof(*o) ? o->sz : sizeof(*o);

		if (n < sizeof(size_t)) {
			free(sc);
			errno = EINVAL;
			return NULL;
		}
		memcpy(&sc->o, o, n);
		sc->o.sz = sizeof(sc->o);
	}
	if (!sc->o.chunk)
		sc->o.chunk = def.chunk;
	sc->obj_index.with_vals = 1;
	sc->proc_index.with_vals = 1;
	sc->hcache = calloc(HCACHE_SIZE, sizeof(*sc->hcache));
	if (!sc->hcache) {
		free(sc);
		errno = ENOMEM;
		return NULL;
	}
	sc->gen = 1;
	sc->arch = rec_symgather_arch(sc->o.machine);
	if (sc->o.kernel) {
		int ret;

		/* before the read: a change during it makes the next differ */
		sc->kfinger_ok = rec_kallsyms_fingerprint(sc->o.kallsyms_path,
							  &sc->kfinger) == 0;
		ret = rec_kallsyms_load(sc->o.kallsyms_path, &sc->ksyms);

		sc->st.kernel_status = ret;
		if (ret == 0 && sc->ksyms.nsyms) {
			sc->kstate = calloc(sc->ksyms.nsyms, 1);
			if (!sc->kstate) {
				rec_symgather_free(sc);
				errno = ENOMEM;
				return NULL;
			}
		} else if (ret == 0) {
			sc->st.kernel_status = -ENOENT;   /* no text symbols */
		}
	}
	if (sc->o.symcache_dir && *sc->o.symcache_dir) {
		char why[512];

		sc->cache = rec_symcache_open(sc->o.symcache_dir, sc->o.symcache_max,
					      why, sizeof(why));
		if (!sc->cache)
			rec_log(REC_LOG_WARN, "symbol cache off: %s", why);
	}
	sc->st.time_ns += prec_now_ns() - t0;
	return sc;
}


int rec_symgather_user_mapped(void *ctx, uint32_t pid, uint64_t addr,
			      uint64_t time)
{
	struct rec_symgather *sc = ctx;
	struct sc_proc *p;

	(void)time;   /* see symgather.h */
	if (!sc)
		return -EINVAL;
	p = sc->last_proc;
	if (!p || p->pid != pid) {
		p = rec_symgather_proc(sc, pid);
		if (!p)
			return -ENOMEM;
		sc->last_proc = p;
	}
	return rec_symgather_map_at(p, addr) != NULL;
}

int rec_symgather_feed(struct rec_symgather *sc, const struct rec_record *r)
{
	if (!sc || !r)
		return -EINVAL;
	switch (r->type) {
	case PERF_RECORD_SAMPLE: {
		int mode = r->misc & CPUMODE_MASK, ret = 0;
		uint64_t buf[64];

		if (mode != CPUMODE_KERNEL && mode != CPUMODE_USER)
			return 0;   /* hypervisor / guest: not ours to name */
		if (r->sample.ip)
			ret = rec_symgather_hit(sc, r->sid.pid, r->sample.ip,
						mode == CPUMODE_KERNEL);
		/* ips may be unaligned in the ring: copy in slices */
		for (uint64_t i = 0; !ret && i < r->sample.nr; i += 64) {
			size_t k = r->sample.nr - i < 64 ? (size_t)(r->sample.nr - i) : 64;

			memcpy(buf, (const uint8_t *)r->sample.ips + i * 8, k * 8);
			/* the first slice starts in the sample's own mode;
			 * later ones continue after a marker anyway */
			ret = rec_symgather_hit_callchain(sc, r->sid.pid, buf, k,
							  mode == CPUMODE_KERNEL);
		}
		return ret;
	}
	case PERF_RECORD_MMAP2: {
		struct rec_symgather_map m = { 0 };

		if (!r->mmap2.filename || !r->mmap2.len)
			return 0;
		m.pid = r->mmap2.pid;
		m.start = r->mmap2.addr;
		m.len = r->mmap2.len;
		m.pgoff = r->mmap2.pgoff;
		m.path = r->mmap2.filename;
		if (r->mmap2.build_id_size) {
			m.build_id = r->mmap2.build_id;
			m.build_id_len = r->mmap2.build_id_size;
		}
		if (m.pid == UINT32_MAX)
			return 0;   /* kernel maps: the kernel table covers them */
		return rec_symgather_add_mmap(sc, &m);
	}
	case PERF_RECORD_FORK:
		return rec_symgather_fork(sc, r->task.pid, r->task.ppid);
	case PERF_RECORD_COMM:
		if (r->misc & MISC_COMM_EXEC)
			return rec_symgather_exec(sc, r->comm.pid);
		return 0;
	case PERF_RECORD_EXIT:
		if (r->task.pid == r->task.tid)
			return rec_symgather_exit(sc, r->task.pid);
		return 0;
	default:
		return 0;
	}
}

void rec_symgather_observe(void *ctx, const struct rec_record *r)
{
	struct rec_symgather *sc = ctx;

	if (rec_symgather_feed(sc, r) < 0 && sc)
		sc->st.feed_errors++;
}

void rec_symgather_stats(const struct rec_symgather *sc,
			 struct rec_symgather_stats *st)
{
	if (!sc) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = sc->st;
}
