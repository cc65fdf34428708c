/*
 * Tile-granular LRU, fully associative or in hashed sets, or random replacement
 * (gpu/tilelru.h).
 *
 * Notes: each tile keeps how many of its bytes are held and how many of those are dirty. Held
 * bytes are always the tile's newest: eviction takes the oldest tile's bytes first, and a
 * partial eviction leaves the rest as a suffix. Dirty bytes are a suffix of the held ones (a
 * store dirties the whole tile; a load refetches a clean prefix), so evicting e bytes writes
 * max(0, e - clean) of them.
 */

#include "gpu/tilelru_test.h"

#include <stdbool.h>
#include <stdlib.h>

#include "base/util.h"

#define NONE UINT32_MAX

struct tile {
	uint32_t prev, next; /* recency list: head newest (random: prev is the slot in held[]) */
	uint32_t held;       /* bytes held */
	uint32_t dirty;      /* bytes held and dirty: a suffix of the held ones */
	uint8_t cls;
};

/* One set: an LRU of its own capacity. */
struct set {
	uint64_t held; /* bytes held */
	uint32_t head, tail;
	uint32_t *ids, n, cap; /* random: the tiles held, in no order */
};

struct tilelru {
	uint64_t capacity; /* bytes, per set */
	uint32_t nsets;
	bool random;
	uint64_t rng; /* xorshift64 state */
	struct set *sets;
	struct tile *tiles;
	struct tilelru_traffic traffic[TILELRU_CLASSES];
};

struct tilelru *
tilelru_create(uint64_t capacity_bytes, uint64_t ntiles, uint32_t sets, uint64_t random_seed)
{
	struct tilelru *t;

	if (sets == 0 || capacity_bytes < sets || ntiles >= NONE)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tiles = calloc(ntiles ? ntiles : 1, sizeof(*t->tiles));
	t->sets = calloc(sets, sizeof(*t->sets));
	if (!t->tiles || !t->sets) {
		tilelru_destroy(t);
		return NULL;
	}
	t->capacity = capacity_bytes / sets;
	t->nsets = sets;
	t->random = random_seed != 0;
	t->rng = random_seed;
	for (uint32_t i = 0; i < sets; i++)
		t->sets[i].head = t->sets[i].tail = NONE;
	return t;
}

void
tilelru_destroy(struct tilelru *t)
{
	if (!t)
		return;
	free(t->tiles);
	for (uint32_t i = 0; t->sets && i < t->nsets; i++)
		free(t->sets[i].ids);
	free(t->sets);
	free(t);
}

/* The set of tile id: splitmix64's finalizer, so that neighbouring tiles spread as a GPU's
 * hashed L2 index spreads neighbouring lines. */
static struct set *
set_of(const struct tilelru *t, uint64_t id)
{
	uint64_t z = id + 0x9e3779b97f4a7c15ull;

	if (t->nsets == 1)
		return &t->sets[0];
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return &t->sets[(z ^ (z >> 31)) % t->nsets];
}

static void
unlink_tile(struct tilelru *t, struct set *st, uint32_t id)
{
	struct tile *e = &t->tiles[id];

	if (t->random) {
		uint32_t last = st->ids[--st->n];

		st->ids[e->prev] = last;
		t->tiles[last].prev = e->prev;
		return;
	}
	if (e->prev != NONE)
		t->tiles[e->prev].next = e->next;
	else
		st->head = e->next;
	if (e->next != NONE)
		t->tiles[e->next].prev = e->prev;
	else
		st->tail = e->prev;
}

static void
push_head(struct tilelru *t, struct set *st, uint32_t id)
{
	struct tile *e = &t->tiles[id];

	if (t->random) {
		if (st->n == st->cap) {
			st->cap = st->cap ? 2 * st->cap : 64;
			st->ids = xrealloc(st->ids, st->cap * sizeof(*st->ids));
		}
		e->prev = st->n;
		st->ids[st->n++] = id;
		return;
	}
	e->prev = NONE;
	e->next = st->head;
	if (st->head != NONE)
		t->tiles[st->head].prev = id;
	st->head = id;
	if (st->tail == NONE)
		st->tail = id;
}

/* The next victim: the set's oldest tile, or a random one. */
static uint32_t
victim(struct tilelru *t, const struct set *st)
{
	if (!t->random)
		return st->tail;
	if (st->n == 0)
		return NONE;
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return st->ids[t->rng % st->n];
}

/* Evicts bytes (the oldest, or a random tile's) until need more fit. */
static void
make_room(struct tilelru *t, struct set *st, uint64_t need)
{
	uint32_t id;

	while (st->held + need > t->capacity && (id = victim(t, st)) != NONE) {
		struct tile *e = &t->tiles[id];
		uint64_t over = st->held + need - t->capacity;
		uint32_t take = over < e->held ? (uint32_t)over : e->held;
		uint32_t clean = e->held - e->dirty;

		if (take > clean) {
			t->traffic[e->cls].write_bytes += take - clean;
			e->dirty -= take - clean;
		}
		e->held -= take;
		st->held -= take;
		if (e->held == 0)
			unlink_tile(t, st, id);
	}
}

/* True when the tiles older than id hold at least need bytes: the lines a partly held tile
 * lacks can then be fetched without evicting its own. */
static bool
older_cover(const struct tilelru *t, const struct set *st, uint32_t id, uint64_t need)
{
	uint64_t sum = 0;

	for (uint32_t x = st->tail; x != id && x != NONE; x = t->tiles[x].prev) {
		sum += t->tiles[x].held;
		if (sum >= need)
			return true;
	}
	return false;
}

void
tilelru_access(struct tilelru *t, uint64_t id64, uint32_t bytes, unsigned cls, bool write)
{
	uint32_t id = (uint32_t)id64;
	struct tile *e = &t->tiles[id];
	struct set *st = set_of(t, id64);
	uint32_t missing;

	if (e->held && e->held < bytes) {
		uint64_t room = t->capacity - st->held;
		uint32_t lack = bytes - e->held;

		/* A line-granular LRU fetches the missing prefix first; where that evicts the
		 * tile's own held lines (it is next to go), each of them then misses in turn,
		 * and the whole tile is fetched again. */
		if (!t->random && lack > room && !older_cover(t, st, id, lack - room)) {
			t->traffic[e->cls].write_bytes += e->dirty;
			st->held -= e->held;
			e->held = e->dirty = 0;
			unlink_tile(t, st, id);
		}
	}
	missing = bytes - e->held;
	e->cls = (uint8_t)cls;
	if (e->held)
		unlink_tile(t, st, id);
	/* The tile's held bytes leave the count while it is off the list, so make_room() never
	 * takes from the tile being accessed. */
	st->held -= e->held;
	make_room(t, st, bytes);
	if (write) {
		e->dirty = bytes;
	} else {
		t->traffic[cls].read_bytes += missing;
	}
	e->held = bytes;
	st->held += bytes;
	push_head(t, st, id);
}

struct tilelru_traffic
tilelru_dram(const struct tilelru *t, unsigned cls)
{
	struct tilelru_traffic sum = { 0, 0 };

	if (cls < TILELRU_CLASSES)
		return t->traffic[cls];
	for (unsigned i = 0; i < TILELRU_CLASSES; i++) {
		sum.read_bytes += t->traffic[i].read_bytes;
		sum.write_bytes += t->traffic[i].write_bytes;
	}
	return sum;
}

bool
tilelru_holds(const struct tilelru *t, uint64_t id, uint32_t bytes)
{
	return t->tiles[id].held >= bytes;
}

uint64_t
tilelru_held_bytes(const struct tilelru *t)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < t->nsets; i++)
		sum += t->sets[i].held;
	return sum;
}
