/*
 * Notes:
 *  - Each set is a doubly linked list, most recent first, of at most ways[n-1] nodes; a line
 *    pushed past the last marker is in no cache and leaves the stack (and its node is reused).
 *  - A hash table (linear probing, backward-shift removal) finds a line's node.
 *  - A reference of a line in zone z moves the marker of every cache k < z one place up (the
 *    line it pointed at drops to depth w[k] + 1: cache k's victim), then moves the line to the
 *    top. A marker at the top (w[k] = 1) points at the referenced line afterwards. A line that
 *    was itself the marker of its zone leaves its place to the line above it.
 */

#include "sim/stackdist.h"

#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

#define NIL UINT32_MAX

struct node {
	uint64_t line;
	uint32_t prev, next;
	uint8_t zone;  /* first cache holding the line */
	uint8_t dirty; /* largest zone reached since the last write: dirty in caches >= this */
};

struct set {
	uint32_t head, tail, n;
};

struct stackdist {
	uint64_t set_mask;
	unsigned n;
	uint32_t ways[STACKDIST_MAX_CACHES];
	struct node *node;
	uint32_t free_head;
	struct set *set;
	uint32_t *marker; /* [set * n + k]: the node at depth ways[k], NIL until the set has it */
	uint32_t *hash;   /* node + 1, or 0 for empty */
	uint64_t hash_mask;
	unsigned hash_shift;
};

struct stackdist *
stackdist_create(uint64_t sets, const uint32_t *ways, unsigned n)
{
	struct stackdist *s;
	uint64_t nodes, hsize;

	if (!is_pow2(sets) || n == 0 || n > STACKDIST_MAX_CACHES || ways[0] == 0)
		return NULL;
	for (unsigned k = 1; k < n; k++)
		if (ways[k] <= ways[k - 1])
			return NULL;
	nodes = sets * ways[n - 1];
	if (nodes >= NIL / 2)
		return NULL;
	s = xzalloc(sizeof(*s));
	s->set_mask = sets - 1;
	s->n = n;
	memcpy(s->ways, ways, n * sizeof(*ways));
	s->node = xzalloc(nodes * sizeof(*s->node));
	for (uint64_t i = 0; i < nodes; i++)
		s->node[i].next = i + 1 < nodes ? (uint32_t)(i + 1) : NIL;
	s->free_head = 0;
	s->set = xzalloc(sets * sizeof(*s->set));
	for (uint64_t i = 0; i < sets; i++)
		s->set[i].head = s->set[i].tail = NIL;
	s->marker = xzalloc(sets * n * sizeof(*s->marker));
	memset(s->marker, 0xff, sets * n * sizeof(*s->marker));
	hsize = UINT64_C(1) << (log2_u64(nodes) + 1);
	s->hash = xzalloc(hsize * sizeof(*s->hash));
	s->hash_mask = hsize - 1;
	s->hash_shift = 64 - log2_u64(hsize);
	return s;
}

void
stackdist_destroy(struct stackdist *s)
{
	if (!s)
		return;
	free(s->node);
	free(s->set);
	free(s->marker);
	free(s->hash);
	free(s);
}

static inline uint64_t
home(const struct stackdist *s, uint64_t line)
{
	return (line * UINT64_C(0x9e3779b97f4a7c15)) >> s->hash_shift;
}

static uint32_t
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
hash_insert(struct stackdist *s, uint64_t line, uint32_t x)
{
	uint64_t i = home(s, line);

	while (s->hash[i])
		i = (i + 1) & s->hash_mask;
	s->hash[i] = x + 1;
}

/* Backward-shift removal, as in sim/cache.c's index. */
static void
hash_remove(struct stackdist *s, uint64_t line)
{
	uint64_t i = home(s, line), j;

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

unsigned
stackdist_ref(struct stackdist *s, uint64_t line, bool write, struct stackdist_victim *victims)
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
			hash_remove(s, s->node[gone].line);
			s->node[gone].next = s->free_head;
			s->free_head = gone;
			st->n--;
		}
		x = s->free_head;
		s->free_head = s->node[x].next;
		s->node[x].line = line;
		s->node[x].dirty = (uint8_t)s->n;
		hash_insert(s, line, x);
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

void
stackdist_flush(struct stackdist *s, void (*fn)(void *ctx, uint64_t line, unsigned from),
		void *ctx)
{
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
