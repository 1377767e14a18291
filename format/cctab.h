/*
 * cctab.h - a decoded frame's callchains (internal to format/).
 *
 * Holds the frame's callchain iids: whole chains (Callchain), nodes
 * (CallchainNodes runs, 1.1) and the leaves frame.c makes for samples
 * written in the callers form (Sample.callchain_callers). Every one is an
 * entry: an address and a parent entry, or a whole chain's ips. A
 * callchain is expanded into an ips array (in the frame's arena) the first
 * time it is asked for, and that array is kept, so repeated lookups cost
 * one hash probe.
 *
 * Nothing here trusts the file: a node's parent must already be an entry
 * when the node is defined, so parents always come earlier and no cycle
 * can form; depths are counted at definition and bounded
 * (PREC_CC_MAX_DEPTH), and an expansion is allocated at its known depth
 * from the arena, whose limit bounds the memory of a frame. What breaks a
 * rule is left undefined (a reference to it reads as unknown).
 *
 * Call order: _init, then per frame _clear (with the frame's arena), the
 * _add_* calls as InternedData packets come, _leaf for samples, _get for
 * lookups; _release at the end.
 */
#ifndef PREC_CCTAB_H
#define PREC_CCTAB_H

#include <stddef.h>
#include <stdint.h>

#include "format/arena.h"
#include "format/base/hashmap.h"

/* Longest callchain built from nodes: what a writer accepts (one ip per
 * 16 bytes of the 16 MiB packet limit). */
#define PREC_CC_MAX_DEPTH (1u << 20)
/* iids with this bit are the table's own (sample leaves): files never
 * define them. */
#define PREC_CC_SYNTH (1ull << 63)

/* The PERF_CONTEXT_* marker (uapi perf_event.h) a kernel callchain starts
 * with for a sample of this cpumode (misc & 7: PERF_RECORD_MISC_KERNEL,
 * USER, HYPERVISOR, GUEST_KERNEL, GUEST_USER), 0 for the others. The
 * writer (cctree.c) uses the same table. */
static inline uint64_t prec_cc_marker(uint32_t cpumode)
{
	static const uint64_t markers[8] = {
		0, (uint64_t)-128, (uint64_t)-512, (uint64_t)-32,
		(uint64_t)-2176, (uint64_t)-2560, 0, 0,
	};
	return markers[cpumode & 7];
}

struct prec_cc_ent {
	uint64_t addr;          /* the entry's first ip */
	const uint64_t *ips;    /* its expansion, NULL until made */
	uint32_t parent;        /* entry index + 1, 0 = none */
	uint32_t depth;         /* ips in the expansion; top bit: a leaf */
};

struct prec_cctab {
	struct prec_cc_ent *ents;
	size_t n, cap;
	uint32_t *dense;              /* file iid -> entry + 1, iids < dense_max */
	size_t ndense, dense_max;
	struct prec_hashmap sparse;   /* the other file iids -> entry + 1 */
	struct prec_cc_leaf *leaves;  /* sample leaves, their keys */
	size_t nleaves, cleaves;
	struct prec_hashidx lidx;     /* (callers, ip, marker) -> leaves[] */
	uint64_t max_iid;             /* largest callchain iid named so far */
	struct prec_arena *arena;     /* the frame's, for expansions */
};

void prec_cctab_init(struct prec_cctab *t);
void prec_cctab_release(struct prec_cctab *t);
/* Empties the table for a new frame whose memory comes from a. iids below
 * dense_max are kept in an array (writers number callchains 1, 2, 3 ...;
 * a frame of N bytes cannot define many more than N of them), the others
 * in a hash table: pass about the frame's size. */
void prec_cctab_clear(struct prec_cctab *t, struct prec_arena *a, size_t dense_max);

/* A whole Callchain: ips (n of them) must live as long as the frame.
 * 0 or -ENOMEM. */
int prec_cctab_add_chain(struct prec_cctab *t, uint64_t iid, const uint64_t *ips,
			 size_t n);
/* A CallchainNodes run (iid 0 = implicit, parent, its addrs values).
 * 0 or -ENOMEM; a run that breaks a rule defines what it can. */
int prec_cctab_add_run(struct prec_cctab *t, uint64_t iid, uint64_t parent,
		       const uint64_t *vals, size_t n);
/* The iid of the callchain [marker of cpumode, ip] + callchain(callers)
 * (callers 0: none), a PREC_CC_SYNTH iid; 0 when callers is not defined
 * (or no memory: then *err = -ENOMEM). */
uint64_t prec_cctab_leaf(struct prec_cctab *t, uint64_t callers, uint64_t ip,
			 uint32_t cpumode, int *err);
/* The ips of iid, n in *n; NULL when undefined, too deep for the arena,
 * or no memory. */
const uint64_t *prec_cctab_get(struct prec_cctab *t, uint64_t iid, size_t *n);

#endif
