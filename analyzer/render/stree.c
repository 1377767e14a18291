/*
 * stree.c - weighted stack tree and its pruned views.
 *
 * Nodes live in one prec_hashmap keyed by {parent, tag, name}; a node is always
 * inserted after its parent, so parent index < child index, which gives
 * subtree sizes in one backward sweep. Sums saturate at UINT64_MAX (trace
 * periods are untrusted): a child never outweighs its parent.
 */
#include "analyzer/render/stree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/read/strpool.h"

struct skey {
	uint32_t parent, tag;
	const char *name;
};

struct sval {
	uint64_t weight, self, count;
	uint64_t base;
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void ana_stree_init(struct ana_stree *t)
{
	memset(t, 0, sizeof(*t));
	prec_hashmap_init(&t->nodes, sizeof(struct skey), sizeof(struct sval));
}

void ana_stree_release(struct ana_stree *t)
{
	prec_hashmap_release(&t->nodes);
	free(t->last);
	memset(t, 0, sizeof(*t));
}

uint32_t ana_stree_last_node(const struct ana_stree *t)
{
	return t->nlast ? t->last[t->nlast - 1].node : ANA_STREE_ROOT;
}

size_t ana_stree_nodes(const struct ana_stree *t)
{
	return prec_hashmap_count(&t->nodes);
}

/* One stack into the profile (base 0) or into the base (base 1). */
static int add(struct ana_stree *t, const struct ana_stree_frame *path, size_t n,
	       int leaf_first, uint64_t weight, int base)
{
	if (n > t->last_cap) {
		struct ana_stree_step *l = realloc(t->last, n * sizeof(*l));
		if (!l)
			return -ENOMEM;
		t->last = l;
		t->last_cap = n;
	}
	uint32_t parent = ANA_STREE_ROOT;
	struct sval *v = NULL;
	size_t same = 0;   /* frames equal to the previous stack's so far */
	for (size_t i = 0; i < n; i++) {
		const struct ana_stree_frame *f = &path[leaf_first ? n - 1 - i : i];
		struct ana_stree_step *st = &t->last[i];
		if (same == i && i < t->nlast && st->name == f->name && st->tag == f->tag) {
			same++;
			v = prec_hashmap_val(&t->nodes, st->node);
		} else {
			struct skey k;
			memset(&k, 0, sizeof(k));
			k.parent = parent;
			k.tag = f->tag;
			k.name = f->name;
			/* The index must fit below ANA_STREE_ROOT. */
			if (prec_hashmap_count(&t->nodes) >= ANA_STREE_ROOT - 1)
				goto fail;
			if (!(v = prec_hashmap_get(&t->nodes, &k, NULL)))
				goto fail;
			st->name = f->name;
			st->tag = f->tag;
			st->node = (uint32_t)prec_hashmap_index(&t->nodes, v);
		}
		if (base) {
			v->base = sat_add(v->base, weight);
		} else {
			v->weight = sat_add(v->weight, weight);
			v->count++;
		}
		parent = st->node;
	}
	t->nlast = n;
	if (base) {
		t->base = sat_add(t->base, weight);
		t->base_count++;
		return 0;
	}
	if (v)
		v->self = sat_add(v->self, weight);
	t->weight = sat_add(t->weight, weight);
	t->count++;
	return 0;

fail:
	/* Counts of the frames before the failure stay added: the caller
	 * gives up on the tree (ENOMEM). The path cache is void. */
	t->nlast = 0;
	return -ENOMEM;
}

int ana_stree_add(struct ana_stree *t, const struct ana_stree_frame *path,
		  size_t n, int leaf_first, uint64_t weight)
{
	return add(t, path, n, leaf_first, weight, 0);
}

int ana_stree_add_base(struct ana_stree *t, const struct ana_stree_frame *path,
		       size_t n, int leaf_first, uint64_t weight)
{
	return add(t, path, n, leaf_first, weight, 1);
}

/* from's nodes in index order, so a node's parent is mapped before it
 * and `to` keeps parent index < child index. */
int ana_stree_merge(struct ana_stree *to, const struct ana_stree *from,
		    struct ana_strpool *pool)
{
	size_t n = prec_hashmap_count(&from->nodes);
	uint32_t *map = malloc((n ? n : 1) * sizeof(*map));
	if (!map)
		return -ENOMEM;
	int ret = 0;
	for (size_t i = 0; i < n; i++) {
		const struct skey *k = prec_hashmap_key(&from->nodes, i);
		const struct sval *v = prec_hashmap_val(&from->nodes, i);
		struct skey nk;
		memset(&nk, 0, sizeof(nk));
		nk.parent = k->parent == ANA_STREE_ROOT ? ANA_STREE_ROOT : map[k->parent];
		nk.tag = k->tag;
		nk.name = k->name ? ana_strpool_intern(pool, k->name) : NULL;
		struct sval *tv = NULL;
		if ((k->name && !nk.name) || prec_hashmap_count(&to->nodes) >= ANA_STREE_ROOT - 1 ||
		    !(tv = prec_hashmap_get(&to->nodes, &nk, NULL))) {
			ret = -ENOMEM;
			break;
		}
		tv->weight = sat_add(tv->weight, v->weight);
		tv->self = sat_add(tv->self, v->self);
		tv->count = sat_add(tv->count, v->count);
		tv->base = sat_add(tv->base, v->base);
		map[i] = (uint32_t)prec_hashmap_index(&to->nodes, tv);
	}
	free(map);
	if (ret < 0)
		return ret;
	to->weight = sat_add(to->weight, from->weight);
	to->count = sat_add(to->count, from->count);
	to->base = sat_add(to->base, from->base);
	to->base_count = sat_add(to->base_count, from->base_count);
	return 0;
}

/* Children of every node in one array (CSR); slot n is the root. */
struct kids {
	const struct ana_stree *t;
	uint32_t *first;   /* n + 2: children of node i are list[first[i]..first[i+1]) */
	uint32_t *list;
	uint64_t *size;    /* nodes in the subtree of i, i included */
};

static const struct skey *key_of(const struct ana_stree *t, uint32_t i)
{
	return prec_hashmap_key(&t->nodes, i);
}

static const struct sval *val_of(const struct ana_stree *t, uint32_t i)
{
	return prec_hashmap_val(&t->nodes, i);
}

/* One sibling to sort: C11 qsort has no context argument, so each
 * element carries its sort keys. */
struct order {
	uint64_t weight;
	const char *name;
	uint32_t tag, node;
};

static int cmp_order(const void *pa, const void *pb)
{
	const struct order *a = pa, *b = pb;
	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	int c = a->name == b->name ? 0 : !a->name ? -1 : !b->name ? 1 : strcmp(a->name, b->name);
	if (c)
		return c;
	if (a->tag != b->tag)
		return a->tag < b->tag ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

static void kids_release(struct kids *k)
{
	free(k->first);
	free(k->list);
	free(k->size);
}

static int kids_build(struct kids *k, const struct ana_stree *t)
{
	size_t n = prec_hashmap_count(&t->nodes);
	memset(k, 0, sizeof(*k));
	k->t = t;
	k->first = calloc(n + 2, sizeof(*k->first));
	k->list = malloc((n ? n : 1) * sizeof(*k->list));
	k->size = malloc((n ? n : 1) * sizeof(*k->size));
	struct order *ord = malloc((n ? n : 1) * sizeof(*ord));
	if (!k->first || !k->list || !k->size || !ord) {
		free(ord);
		kids_release(k);
		return -ENOMEM;
	}
	/* Count, prefix-sum, fill: slot p + 1 counts the children of p. */
	for (size_t i = 0; i < n; i++) {
		uint32_t p = key_of(t, (uint32_t)i)->parent;
		k->first[(p == ANA_STREE_ROOT ? n : p) + 1]++;
	}
	for (size_t i = 0; i <= n; i++)
		k->first[i + 1] += k->first[i];
	uint32_t *fill = calloc(n + 1, sizeof(*fill));
	if (!fill) {
		free(ord);
		kids_release(k);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t p = key_of(t, (uint32_t)i)->parent;
		size_t slot = p == ANA_STREE_ROOT ? n : p;
		k->list[k->first[slot] + fill[slot]++] = (uint32_t)i;
	}
	free(fill);
	/* Siblings heaviest first, then by name and tag. */
	for (size_t p = 0; p <= n; p++) {
		uint32_t a = k->first[p], b = k->first[p + 1];
		if (b - a < 2)
			continue;
		for (uint32_t j = a; j < b; j++) {
			const struct skey *sk = key_of(t, k->list[j]);
			ord[j - a].weight = val_of(t, k->list[j])->weight;
			ord[j - a].name = sk->name;
			ord[j - a].tag = sk->tag;
			ord[j - a].node = k->list[j];
		}
		prec_sort(ord, b - a, sizeof(*ord), cmp_order);
		for (uint32_t j = a; j < b; j++)
			k->list[j] = ord[j - a].node;
	}
	free(ord);
	/* Subtree sizes: children come after their parent. */
	for (size_t i = 0; i < n; i++)
		k->size[i] = 1;
	for (size_t i = n; i-- > 0;) {
		uint32_t p = key_of(t, (uint32_t)i)->parent;
		if (p != ANA_STREE_ROOT)
			k->size[p] += k->size[i];
	}
	return 0;
}

struct walk {
	uint32_t node;      /* ANA_STREE_ROOT for the root */
	uint32_t depth;     /* depth of node's children */
	uint32_t next;      /* next child position in kids.list */
	uint64_t pw, pc, pn;  /* pruned children: weight, count, nodes */
	uint64_t pb;          /* ... and their base */
};

static int keep(const struct ana_stree *t, const struct sval *v, double fraction)
{
	if (fraction <= 0)
		return 1;
	/* Zero-weight stacks are pruned by their count instead. */
	if (t->weight)
		return (double)v->weight >= fraction * (double)t->weight;
	return (double)v->count >= fraction * (double)t->count;
}

/* One pre-order walk: counts the view's nodes, and fills v->nodes when it
 * is not NULL, with v->map for the kept nodes and ph (n + 1 entries, slot
 * n the root) with the placeholder of each node whose children were
 * pruned. stack holds depth + 1 entries at most (n + 1). */
static size_t walk(const struct kids *k, double fraction, struct walk *stack,
		   struct ana_stree_view *v, uint32_t *ph)
{
	const struct ana_stree *t = k->t;
	size_t n = prec_hashmap_count(&t->nodes), out = 0, sp = 0;
	uint64_t pruned = 0;
	stack[sp++] = (struct walk){ ANA_STREE_ROOT, 0, k->first[n], 0, 0, 0, 0 };
	while (sp) {
		struct walk *w = &stack[sp - 1];
		size_t slot = w->node == ANA_STREE_ROOT ? n : w->node;
		if (w->next < k->first[slot + 1]) {
			uint32_t c = k->list[w->next++];
			const struct sval *cv = val_of(t, c);
			if (!keep(t, cv, fraction)) {
				w->pw = sat_add(w->pw, cv->weight);
				w->pc = sat_add(w->pc, cv->count);
				w->pn += k->size[c];
				w->pb = sat_add(w->pb, cv->base);
				continue;
			}
			if (v) {
				struct ana_stree_vnode *o = &v->nodes[out];
				o->name = key_of(t, c)->name;
				o->tag = key_of(t, c)->tag;
				o->depth = w->depth;
				o->weight = cv->weight;
				o->self = cv->self;
				o->count = cv->count;
				o->base = cv->base;
				o->pruned = 0;
				v->map[c] = (uint32_t)out;
			}
			out++;
			stack[sp++] = (struct walk){ c, w->depth + 1, k->first[c], 0, 0, 0, 0 };
			continue;
		}
		if (w->pn) {
			if (v) {
				struct ana_stree_vnode *o = &v->nodes[out];
				memset(o, 0, sizeof(*o));
				o->depth = w->depth;
				o->weight = w->pw;
				o->self = w->pw;
				o->count = w->pc;
				o->base = w->pb;
				o->pruned = w->pn;
				ph[slot] = (uint32_t)out;
			}
			out++;
			pruned += w->pn;
		}
		sp--;
	}
	if (v)
		v->pruned_nodes = pruned;
	return out;
}

int ana_stree_view(const struct ana_stree *t, double fraction, size_t max_nodes,
		   struct ana_stree_view *v)
{
	memset(v, 0, sizeof(*v));
	v->weight = t->weight;
	v->count = t->count;
	v->base = t->base;
	v->base_count = t->base_count;
	size_t n = prec_hashmap_count(&t->nodes);
	struct kids k;
	int ret = kids_build(&k, t);
	if (ret)
		return ret;
	struct walk *stack = malloc((n + 1) * sizeof(*stack));
	if (!stack) {
		kids_release(&k);
		return -ENOMEM;
	}
	/* Past a fraction of 1 only placeholders remain (a node never
	 * outweighs the root), so the loop ends with at most one node. */
	size_t count = walk(&k, fraction, stack, NULL, NULL);
	while (max_nodes && count > max_nodes && fraction <= 1.0) {
		fraction = fraction > 0 ? fraction * 2 : 1.0 / (double)(max_nodes * 16);
		count = walk(&k, fraction, stack, NULL, NULL);
	}
	v->fraction = fraction > 0 ? fraction : 0;
	v->nodes = calloc(count ? count : 1, sizeof(*v->nodes));
	v->map = malloc((n ? n : 1) * sizeof(*v->map));
	uint32_t *ph = malloc((n + 1) * sizeof(*ph));
	if (!v->nodes || !v->map || !ph) {
		ret = -ENOMEM;
	} else {
		memset(v->map, 0xff, n * sizeof(*v->map));
		v->nmap = n;
		v->n = walk(&k, fraction, stack, v, ph);
		/* a pruned node: its parent's placeholder when the parent was
		 * kept, else its parent's (parents come first) */
		for (size_t i = 0; i < n; i++) {
			if (v->map[i] != UINT32_MAX)
				continue;
			uint32_t p = key_of(t, (uint32_t)i)->parent;
			if (p == ANA_STREE_ROOT)
				v->map[i] = ph[n];
			else if (v->nodes[v->map[p]].pruned)
				v->map[i] = v->map[p];
			else
				v->map[i] = ph[p];
		}
		ret = 0;
	}
	free(ph);
	free(stack);
	kids_release(&k);
	return ret;
}

void ana_stree_view_release(struct ana_stree_view *v)
{
	free(v->nodes);
	free(v->map);
	memset(v, 0, sizeof(*v));
}
