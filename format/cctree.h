/*
 * cctree.h - the writer's per-frame callchain tree (internal to format/).
 *
 * Callchains are stored as nodes: (parent node, address), so the callers
 * many callchains share are written once per frame (SPEC.md section 6,
 * CallchainNodes). A node's iid is its index + 1: nodes are numbered in
 * the order they are made, which is the order they are written, so every
 * run the writer emits is numbered implicitly and every parent is written
 * before its children.
 *
 * Sample leaves. A kernel callchain starts with the context marker of the
 * sample's cpumode and the sample's own ip: [PERF_CONTEXT_USER, ip,
 * callers...]. A Sample can leave those two out (Sample.callchain_callers)
 * and name only the callers' node, which samples at different ips share.
 * Whether that applies is known only when the packet is appended (its ip
 * and misc), so prec_cctree_intern() returns, for a chain of that shape, a
 * *leaf handle* (PREC_CC_LEAF | index) instead of a node iid: the writer
 * turns it into the callers form (prec_cctree_sample()) or into the node
 * iid of the whole chain (prec_cctree_resolve(), which makes the two
 * nodes then) before the packet is encoded. Handles never reach the file.
 *
 * Pending nodes: nodes[emitted..n) are not in the frame yet; the writer
 * puts them into the next InternedData packet (prec_cctree_emitted()).
 *
 * Frame cuts: prec_cctree_reset() empties the tree, unless something was
 * interned since the last append of the stream (prec_cctree_appended()):
 * then a handle or iid is held by a packet not appended yet, and every
 * node is kept and becomes pending again (written anew in the next frame
 * under the same iids). Writers cut only after an append, so in practice
 * the tree always restarts empty.
 */
#ifndef PREC_CCTREE_H
#define PREC_CCTREE_H

#include <stddef.h>
#include <stdint.h>

#define PREC_CC_LEAF (1ull << 63)
#define PREC_CC_EMPTY UINT64_MAX   /* parent of the empty chain's entry */

struct prec_cctree_node {
	uint64_t parent;    /* iid, 0 = root */
	uint64_t addr;
};

struct prec_cctree_leaf {
	uint64_t callers;   /* node iid of ips[2..], 0 = none */
	uint64_t ip;        /* ips[1] */
	uint64_t marker;    /* ips[0], a PERF_CONTEXT_* marker */
	uint64_t iid;       /* node iid of the whole chain once made, else 0 */
};

struct prec_cctree {
	struct prec_cctree_node *nodes;   /* by iid - 1 */
	size_t n, cap;
	size_t emitted;
	uint64_t *slots;                  /* (parent, addr) -> index + 1, tag */
	size_t nslots;                    /* power of two */
	struct prec_cctree_leaf *leaves;  /* by handle & ~PREC_CC_LEAF */
	size_t nleaves, lcap;
	uint32_t *lslots;                 /* (callers, ip, marker) -> index + 1 */
	size_t nlslots;
	uint64_t empty;                   /* iid of the empty chain, 0 = none */
	uint64_t *prev_ips, *prev_iids;   /* the last root chain and its nodes */
	size_t prev_n, prev_cap;
	uint64_t *cslots;                 /* whole chains: hash tag | node iid */
	size_t ncslots, ncchains;
	int busy;                         /* interned since the last append */
};

void prec_cctree_init(struct prec_cctree *t);
void prec_cctree_release(struct prec_cctree *t);

/* Node iid or leaf handle for ips[0..n). The empty chain (n = 0) has no
 * node: it gets an entry of its own (parent PREC_CC_EMPTY), written as a
 * Callchain without ips. 0 and -ENOMEM in *err when out of memory. */
uint64_t prec_cctree_intern(struct prec_cctree *t, const uint64_t *ips, size_t n,
			    int *err);

/* For a Sample whose callchain is id (a node iid or a leaf handle): the
 * value to write in Sample.callchain and whether callchain_callers is set.
 * A handle whose ip and marker match the sample gives the callers form;
 * any other is resolved. 0, or -ENOMEM / -EINVAL (a handle this tree did
 * not give out). */
int prec_cctree_sample(struct prec_cctree *t, uint64_t id, uint64_t ip,
		       uint32_t misc, uint64_t *callchain, int *callers);

/* Node iid for id (a handle is made into the nodes of its whole chain);
 * id is returned as it is when it is not a handle. 0 and *err set on
 * failure. */
uint64_t prec_cctree_resolve(struct prec_cctree *t, uint64_t id, int *err);

static inline size_t prec_cctree_pending(const struct prec_cctree *t)
{
	return t->n - t->emitted;
}
static inline void prec_cctree_emitted(struct prec_cctree *t) { t->emitted = t->n; }
static inline void prec_cctree_appended(struct prec_cctree *t) { t->busy = 0; }

/* The values of CallchainNodes.addrs for node i (not the empty chain's
 * entry): one or two, into out[0..2); returns how many. */
size_t prec_cctree_code(const struct prec_cctree *t, size_t i, uint64_t out[2]);

/* A new frame (see above). */
void prec_cctree_reset(struct prec_cctree *t);

#endif
