/*
 * Notes:
 *  - One set count: each set is a doubly linked list, most recent first, of at most
 *    ways[n-1] nodes; a line pushed past the last marker is in no cache and leaves the stack
 *    (and its node is reused). A reference of a line in zone z moves the marker of every cache
 *    k < z one place up (the line it pointed at drops to depth w[k] + 1: cache k's victim),
 *    then moves the line to the top. A marker at the top (w[k] = 1) points at the referenced
 *    line afterwards. A line that was itself the marker of its zone leaves its place to the
 *    line above it.
 *  - Several set counts: each set of cache k keeps a list, most recent first, of its lines of
 *    zone k only (in cache k, not in k - 1), and a count of all its lines. Within a set of
 *    cache k a line of a larger zone is older than one of a smaller: every line of the set
 *    lies in one set of each smaller cache, and a line pushed out of an LRU set is older than
 *    every line still in it. So the LRU line of a full set is the last of its list; where
 *    that list is empty, the set's lines are all in cache k - 1, where they fill the one set
 *    they share, and cache k pushes out what cache k - 1 did. A reference of zone z then
 *    costs one step for each cache 0 .. z-1 that misses, with no scan: the victim of cache k
 *    leaves its list, and the line cache k - 1 pushed out joins, first, the list of its own
 *    set of cache k. A set that is not full has never lost a line, and neither has any set of
 *    a larger cache under it: none of them pushes anything out.
 *  - A hash table (linear probing, backward-shift removal) finds a line's node. It starts
 *    small and doubles at half full: a sweep's largest cache may hold millions of lines that
 *    the kernel never fills, and a small table stays in the processor's caches. Sixteen
 *    neighbouring lines hash to one 64-byte block of the table (their order in it rotated by
 *    the hash, so strided lines do not pile up on one slot): kernels walk arrays, and the
 *    lookup of the next line then finds its slot already in the processor's cache. Nodes are
 *    handed out in order (the allocation's untouched pages cost nothing) and reused through a
 *    free list.
 *  - Memory: what stackdist_create*() allocate is refused with NULL, not an abort, when it is
 *    not there; a table that cannot double during the run marks the pass failed
 *    (stackdist_failed()) and every later reference returns 0 without changing anything.
 */

#include "sim/drive/stackdist.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define NIL UINT32_MAX
#define HASH_MIN 4096
#define ZONE_FREE UINT8_MAX /* a node on the free list (several set counts) */

struct node {
	uint64_t line;
	uint32_t prev, next; /* the line's list (its set's; its zone's in its set); next also chains
				free nodes */
	uint8_t zone;        /* first cache holding the line */
	uint8_t dirty; /* largest zone reached since the last write: dirty in caches >= this */
};

/* One set count: a set's list and its length. Several: the list of a set's lines of one
 * zone, and the number of all its lines. */
struct set {
	uint32_t head, tail, n;
};

struct stackdist {
	unsigned n;
	uint32_t ways[STACKDIST_MAX_CACHES];
	struct node *node;
	uint64_t nodes, used; /* capacity; nodes handed out at least once */
	uint32_t free_head;
	uint64_t live;
	uint32_t *hash; /* node + 1, or 0 for empty */
	uint64_t hash_mask, hash_max;
	unsigned hash_shift;
	/* One set count. */
	uint64_t set_mask;
	struct set *set;
	uint32_t *marker; /* [set * n + k]: the node at depth ways[k], NIL until the set has it */
	/* Several set counts (zone_set non-NULL). */
	struct set *zone_set[STACKDIST_MAX_CACHES]; /* [set]: cache k's lines of zone k */
	uint64_t sets_mask[STACKDIST_MAX_CACHES];
	bool failed; /* the hash table could not grow: the counts are not valid */
};

/* A table of hsize slots, or false (nothing changed) when memory is short. */
static bool
hash_alloc(struct stackdist *s, uint64_t hsize)
{
	uint32_t *h = array_alloc_huge(hsize, sizeof(*h), true);

	if (!h)
		return false;
	s->hash = h;
	s->hash_mask = hsize - 1;
	s->hash_shift = 64 - log2_u64(hsize);
	return true;
}

static uint64_t
hash_max_for(uint64_t nodes)
{
	return UINT64_C(1) << (log2_u64(nodes) + 1);
}

/* Nodes for `nodes` lines and a hash table that may grow to hold them all; NULL when memory is
 * short. */
static struct stackdist *
alloc_common(unsigned n, uint64_t nodes)
{
	struct stackdist *s = xzalloc(sizeof(*s));

	s->n = n;
	s->nodes = nodes;
	s->node = array_alloc_huge(nodes, sizeof(*s->node), true);
	s->free_head = NIL;
	s->hash_max = hash_max_for(nodes);
	if (!s->node || !hash_alloc(s, s->hash_max < HASH_MIN ? s->hash_max : HASH_MIN)) {
		stackdist_destroy(s);
		return NULL;
	}
	return s;
}

uint64_t
stackdist_bytes(uint64_t sets, const uint32_t *ways, unsigned n)
{
	uint64_t nodes;

	if (!is_pow2(sets) || n == 0 || n > STACKDIST_MAX_CACHES)
		return 0;
	nodes = sets * ways[n - 1];
	/* The table at its largest, and the one it doubled from while both are held. */
	return sizeof(struct stackdist) + nodes * sizeof(struct node) +
	       hash_max_for(nodes) * sizeof(uint32_t) * 3 / 2 + sets * sizeof(struct set) +
	       sets * n * sizeof(uint32_t);
}

uint64_t
stackdist_bytes_sets(const uint64_t *sets, const uint32_t *ways, unsigned n)
{
	uint64_t nodes, bytes;

	if (n == 0 || n > STACKDIST_MAX_CACHES)
		return 0;
	nodes = sets[n - 1] * ways[n - 1] + 1;
	bytes = sizeof(struct stackdist) + nodes * sizeof(struct node) +
		hash_max_for(nodes) * sizeof(uint32_t) * 3 / 2;
	for (unsigned k = 0; k < n; k++)
		bytes += sets[k] * sizeof(struct set);
	return bytes;
}

struct stackdist *
stackdist_create(uint64_t sets, const uint32_t *ways, unsigned n)
{
	struct stackdist *s;
	uint64_t nodes;

	if (!is_pow2(sets) || n == 0 || n > STACKDIST_MAX_CACHES || ways[0] == 0)
		return NULL;
	for (unsigned k = 1; k < n; k++)
		if (ways[k] <= ways[k - 1])
			return NULL;
	nodes = sets * ways[n - 1];
	if (nodes >= NIL / 2)
		return NULL;
	s = alloc_common(n, nodes);
	if (!s)
		return NULL;
	memcpy(s->ways, ways, n * sizeof(*ways));
	s->set_mask = sets - 1;
	s->set = calloc(sets, sizeof(*s->set));
	s->marker = calloc(sets * n, sizeof(*s->marker));
	if (!s->set || !s->marker) {
		stackdist_destroy(s);
		return NULL;
	}
	for (uint64_t i = 0; i < sets; i++)
		s->set[i].head = s->set[i].tail = NIL;
	memset(s->marker, 0xff, sets * n * sizeof(*s->marker));
	return s;
}

struct stackdist *
stackdist_create_sets(const uint64_t *sets, const uint32_t *ways, unsigned n)
{
	struct stackdist *s;
	uint64_t nodes;

	if (n == 0 || n > STACKDIST_MAX_CACHES)
		return NULL;
	for (unsigned k = 0; k < n; k++) {
		if (!is_pow2(sets[k]) || ways[k] == 0)
			return NULL;
		if (k && (sets[k] < sets[k - 1] || ways[k] < ways[k - 1] ||
			  sets[k] * ways[k] <= sets[k - 1] * ways[k - 1]))
			return NULL;
	}
	/* One more than the largest cache holds: a new line takes its node before the largest
	 * cache's victim gives one back. */
	nodes = sets[n - 1] * ways[n - 1] + 1;
	if (nodes >= NIL / 2)
		return NULL;
	s = alloc_common(n, nodes);
	if (!s)
		return NULL;
	memcpy(s->ways, ways, n * sizeof(*ways));
	for (unsigned k = 0; k < n; k++) {
		s->zone_set[k] = array_alloc_huge(sets[k], sizeof(struct set), false);
		s->sets_mask[k] = sets[k] - 1;
		if (!s->zone_set[k]) {
			stackdist_destroy(s);
			return NULL;
		}
		for (uint64_t i = 0; i < sets[k]; i++)
			s->zone_set[k][i] = (struct set){ NIL, NIL, 0 };
	}
	return s;
}

void
stackdist_destroy(struct stackdist *s)
{
	if (!s)
		return;
	free(s->node);
	free(s->hash);
	free(s->set);
	free(s->marker);
	for (unsigned k = 0; k < s->n; k++)
		free(s->zone_set[k]);
	free(s);
}

/* ---- the line index ---- */

/* A line's first slot: its group of 16 lines picks a block of 16 slots by the hash's top bits,
 * and its place in the group, rotated by other bits of the hash, its slot in the block (a
 * table of fewer than 16 slots masks it). */
static inline uint64_t
home(const struct stackdist *s, uint64_t line)
{
	uint64_t h = (line >> 4) * UINT64_C(0x9e3779b97f4a7c15);

	return (((h >> s->hash_shift) & ~(uint64_t)15) | ((line + (h >> 20)) & 15)) & s->hash_mask;
}

static inline uint32_t
find(const struct stackdist *s, uint64_t line)
{
	for (uint64_t i = home(s, line);; i = (i + 1) & s->hash_mask) {
		uint32_t h = s->hash[i];

		if (h == 0)
			return NIL;
		if (s->node[h - 1].line == line)
			return h - 1;
	}
}

static void
hash_put(struct stackdist *s, uint32_t x)
{
	uint64_t i = home(s, s->node[x].line);

	while (s->hash[i])
		i = (i + 1) & s->hash_mask;
	s->hash[i] = x + 1;
}

/* Adds node x (its line set) to the index, doubling the table at half full. A table that
 * cannot double fails the pass; the old one, half empty, still takes x. */
static void
hash_insert(struct stackdist *s, uint32_t x)
{
	if (++s->live * 2 > s->hash_mask + 1 && s->hash_mask + 1 < s->hash_max) {
		uint32_t *old = s->hash;
		uint64_t old_size = s->hash_mask + 1;

		if (hash_alloc(s, old_size * 2)) {
			for (uint64_t i = 0; i < old_size; i++)
				if (old[i])
					hash_put(s, old[i] - 1);
			free(old);
		} else {
			s->failed = true;
		}
	}
	hash_put(s, x);
}

/* Backward-shift removal, as in sim/cache.c's index. */
static void
hash_remove(struct stackdist *s, uint64_t line)
{
	uint64_t i = home(s, line), j;

	s->live--;
	while (s->node[s->hash[i] - 1].line != line)
		i = (i + 1) & s->hash_mask;
	for (j = i;;) {
		uint64_t k;

		j = (j + 1) & s->hash_mask;
		if (s->hash[j] == 0)
			break;
		k = home(s, s->node[s->hash[j] - 1].line);
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			s->hash[i] = s->hash[j];
			i = j;
		}
	}
	s->hash[i] = 0;
}

/* A node for line, in the index; its other fields are the caller's to set. */
static uint32_t
node_new(struct stackdist *s, uint64_t line)
{
	uint32_t x;

	if (s->free_head != NIL) {
		x = s->free_head;
		s->free_head = s->node[x].next;
	} else {
		x = (uint32_t)s->used++;
	}
	s->node[x].line = line;
	hash_insert(s, x);
	return x;
}

static void
node_free(struct stackdist *s, uint32_t x)
{
	hash_remove(s, s->node[x].line);
	s->node[x].next = s->free_head;
	s->free_head = x;
}

/* ---- one set count ---- */

static void
unlink_node(struct stackdist *s, struct set *st, uint32_t x)
{
	uint32_t p = s->node[x].prev, n = s->node[x].next;

	if (p == NIL)
		st->head = n;
	else
		s->node[p].next = n;
	if (n == NIL)
		st->tail = p;
	else
		s->node[n].prev = p;
}

static void
push_front(struct stackdist *s, struct set *st, uint32_t x)
{
	s->node[x].prev = NIL;
	s->node[x].next = st->head;
	if (st->head == NIL)
		st->tail = x;
	else
		s->node[st->head].prev = x;
	st->head = x;
}

static unsigned
list_ref(struct stackdist *s, uint64_t line, bool write, struct stackdist_victim *victims)
{
	uint64_t si = line & s->set_mask;
	struct set *st = &s->set[si];
	uint32_t *mk = s->marker + si * s->n;
	uint32_t x = find(s, line), gone = NIL;
	unsigned z = x == NIL ? s->n : s->node[x].zone;

	if (x != NIL && x == st->head) {
		/* Depth 1: a hit everywhere that moves nothing. */
		if (write)
			s->node[x].dirty = 0;
		return 0;
	}
	for (unsigned k = 0; k < z; k++) {
		uint32_t m = mk[k];
		struct node *v;

		victims[k].valid = m != NIL;
		if (m == NIL)
			continue;
		v = &s->node[m];
		victims[k].line = v->line;
		victims[k].dirty = v->dirty <= k;
		v->zone = (uint8_t)(k + 1);
		if (v->dirty < k + 1)
			v->dirty = (uint8_t)(k + 1);
		mk[k] = v->prev; /* NIL at the top: the referenced line, set below */
		if (k + 1 == s->n)
			gone = m;
	}
	if (x != NIL) {
		if (z < s->n && mk[z] == x)
			mk[z] = s->node[x].prev;
		unlink_node(s, st, x);
	} else {
		if (gone != NIL) {
			/* Pushed out of the largest cache: out of the stack. */
			unlink_node(s, st, gone);
			node_free(s, gone);
			st->n--;
		}
		x = node_new(s, line);
		s->node[x].dirty = (uint8_t)s->n;
		st->n++;
	}
	push_front(s, st, x);
	s->node[x].zone = 0;
	if (write)
		s->node[x].dirty = 0;
	for (unsigned k = 0; k < z; k++) {
		if (mk[k] == NIL && st->n >= s->ways[k])
			mk[k] = s->ways[k] == 1 ? x : st->tail;
	}
	return z;
}

/* ---- several set counts ---- */

static inline struct set *
zone_set(const struct stackdist *s, unsigned k, uint64_t line)
{
	return &s->zone_set[k][line & s->sets_mask[k]];
}

/* Line x, pushed out of cache k - 1, is in cache k's list of zone k now: the most recent of
 * them, since it outlived in cache k - 1 every line that list holds. */
static void
demote(struct stackdist *s, uint32_t x, unsigned k)
{
	push_front(s, zone_set(s, k, s->node[x].line), x);
	s->node[x].zone = (uint8_t)k;
}

static unsigned
sets_ref(struct stackdist *s, uint64_t line, bool write, struct stackdist_victim *victims)
{
	uint32_t x = find(s, line), out = NIL; /* out: pushed out of the cache before k */
	unsigned z, k;

	if (x == NIL) {
		z = s->n;
		x = node_new(s, line);
		s->node[x].dirty = (uint8_t)s->n;
	} else {
		struct set *home_set;

		z = s->node[x].zone;
		home_set = zone_set(s, z, line);
		if (z == 0 && home_set->head == x) {
			/* The most recent line of its set in every cache: nothing moves. */
			if (write)
				s->node[x].dirty = 0;
			return 0;
		}
		unlink_node(s, home_set, x);
	}
	for (k = 0; k < z; k++) {
		struct set *st = zone_set(s, k, line);
		struct node *v;

		if (st->n < s->ways[k])
			break;
		if (st->tail != NIL) {
			uint32_t lru = st->tail;

			unlink_node(s, st, lru);
			if (out != NIL)
				demote(s, out, k);
			out = lru;
		} /* else the set's lines are all in cache k - 1: out is its LRU line too */
		v = &s->node[out];
		victims[k].valid = true;
		victims[k].line = v->line;
		victims[k].dirty = v->dirty <= k;
		if (v->dirty < k + 1)
			v->dirty = (uint8_t)(k + 1);
	}
	if (k < z) {
		/* A set with room: the line joins it and each larger one, pushing out nothing. */
		if (out != NIL)
			demote(s, out, k);
		out = NIL;
		for (; k < z; k++) {
			zone_set(s, k, line)->n++;
			victims[k].valid = false;
		}
	}
	if (out != NIL && z < s->n) {
		demote(s, out, z);
	} else if (out != NIL) {
		/* Out of the largest cache, so out of all: the node goes back. */
		s->node[out].zone = ZONE_FREE;
		node_free(s, out);
	}
	push_front(s, zone_set(s, 0, line), x);
	s->node[x].zone = 0;
	if (write)
		s->node[x].dirty = 0;
	return z;
}

unsigned
stackdist_ref(struct stackdist *s, uint64_t line, bool write, struct stackdist_victim *victims)
{
	if (s->failed)
		return 0;
	return s->set ? list_ref(s, line, write, victims) : sets_ref(s, line, write, victims);
}

bool
stackdist_failed(const struct stackdist *s)
{
	return s->failed;
}

void
stackdist_flush(struct stackdist *s, void (*fn)(void *ctx, uint64_t line, unsigned from), void *ctx)
{
	if (!s->set) {
		for (uint64_t x = 0; x < s->used; x++) {
			struct node *v = &s->node[x];
			unsigned from = v->zone > v->dirty ? v->zone : v->dirty;

			if (v->zone == ZONE_FREE)
				continue;
			if (from < s->n)
				fn(ctx, v->line, from);
			v->dirty = (uint8_t)s->n;
		}
		return;
	}
	for (uint64_t si = s->set_mask + 1; si-- > 0;) {
		for (uint32_t x = s->set[si].tail; x != NIL; x = s->node[x].prev) {
			struct node *v = &s->node[x];
			unsigned from = v->zone > v->dirty ? v->zone : v->dirty;

			if (from < s->n)
				fn(ctx, v->line, from);
			v->dirty = (uint8_t)s->n;
		}
	}
}
