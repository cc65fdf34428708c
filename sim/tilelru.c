/*
 * Tile-granular fully associative LRU (sim/tilelru.h).
 *
 * Notes: each tile keeps how many of its bytes are held and how many of those are dirty. Held
 * bytes are always the tile's newest: eviction takes the oldest tile's bytes first, and a
 * partial eviction leaves the rest as a suffix. Dirty bytes are a suffix of the held ones (a
 * store dirties the whole tile; a load refetches a clean prefix), so evicting e bytes writes
 * max(0, e - clean) of them.
 */

#include <stdbool.h>
#include <stdlib.h>

#include "sim/tilelru.h"

#define NONE UINT32_MAX

struct tile {
	uint32_t prev, next; /* recency list: head newest */
	uint32_t held;       /* bytes held */
	uint32_t dirty;      /* bytes held and dirty: a suffix of the held ones */
	uint8_t cls;
};

struct tilelru {
	uint64_t capacity; /* bytes */
	uint64_t held;     /* bytes held, all tiles */
	uint32_t head, tail;
	struct tile *tiles;
	struct tilelru_traffic traffic[TILELRU_CLASSES];
};

struct tilelru *
tilelru_create(uint64_t capacity_bytes, uint64_t ntiles)
{
	struct tilelru *t;

	if (capacity_bytes == 0 || ntiles >= NONE)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tiles = calloc(ntiles ? ntiles : 1, sizeof(*t->tiles));
	if (!t->tiles) {
		free(t);
		return NULL;
	}
	t->capacity = capacity_bytes;
	t->head = t->tail = NONE;
	return t;
}

void
tilelru_destroy(struct tilelru *t)
{
	if (!t)
		return;
	free(t->tiles);
	free(t);
}

static void
unlink_tile(struct tilelru *t, uint32_t id)
{
	struct tile *e = &t->tiles[id];

	if (e->prev != NONE)
		t->tiles[e->prev].next = e->next;
	else
		t->head = e->next;
	if (e->next != NONE)
		t->tiles[e->next].prev = e->prev;
	else
		t->tail = e->prev;
}

static void
push_head(struct tilelru *t, uint32_t id)
{
	struct tile *e = &t->tiles[id];

	e->prev = NONE;
	e->next = t->head;
	if (t->head != NONE)
		t->tiles[t->head].prev = id;
	t->head = id;
	if (t->tail == NONE)
		t->tail = id;
}

/* Evicts the oldest bytes until need more fit. */
static void
make_room(struct tilelru *t, uint64_t need)
{
	while (t->held + need > t->capacity && t->tail != NONE) {
		uint32_t id = t->tail;
		struct tile *e = &t->tiles[id];
		uint64_t over = t->held + need - t->capacity;
		uint32_t take = over < e->held ? (uint32_t)over : e->held;
		uint32_t clean = e->held - e->dirty;

		if (take > clean) {
			t->traffic[e->cls].write_bytes += take - clean;
			e->dirty -= take - clean;
		}
		e->held -= take;
		t->held -= take;
		if (e->held == 0)
			unlink_tile(t, id);
	}
}

/* True when the tiles older than id hold at least need bytes: the lines a partly held tile
 * lacks can then be fetched without evicting its own. */
static bool
older_cover(const struct tilelru *t, uint32_t id, uint64_t need)
{
	uint64_t sum = 0;

	for (uint32_t x = t->tail; x != id && x != NONE; x = t->tiles[x].prev) {
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
	uint32_t missing;

	if (e->held && e->held < bytes) {
		uint64_t room = t->capacity - t->held;
		uint32_t lack = bytes - e->held;

		/* A line-granular LRU fetches the missing prefix first; where that evicts the
		 * tile's own held lines (it is next to go), each of them then misses in turn,
		 * and the whole tile is fetched again. */
		if (lack > room && !older_cover(t, id, lack - room)) {
			t->traffic[e->cls].write_bytes += e->dirty;
			t->held -= e->held;
			e->held = e->dirty = 0;
			unlink_tile(t, id);
		}
	}
	missing = bytes - e->held;
	e->cls = (uint8_t)cls;
	if (e->held)
		unlink_tile(t, id);
	/* The tile's held bytes leave the count while it is off the list, so make_room() never
	 * takes from the tile being accessed. */
	t->held -= e->held;
	make_room(t, bytes);
	if (write) {
		e->dirty = bytes;
	} else {
		t->traffic[cls].read_bytes += missing;
	}
	e->held = bytes;
	t->held += bytes;
	push_head(t, id);
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

uint64_t
tilelru_held_bytes(const struct tilelru *t)
{
	return t->held;
}
