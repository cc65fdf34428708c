#pragma once

/*
 * The cache model's set operations: finding a line in a set, the hash index and lists of
 * levels with many ways, replacement state, moving slots, installing and removing lines.
 * Static inline, for cache.c alone: its access path calls them on every access (not an
 * interface: sim/cache.h is).
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/util.h"
#include "sim/cache_internal.h"
#include "sim/slots.h"

/* ---- set operations ---- */

static inline int
scan_way(const uint64_t *set, uint32_t ways, uint64_t line)
{
	size_t i = 0;

	/* Four slots a step, so the loop's own test and count come once per four slots: on a
	 * miss of a 16-way level the loop was a third of the lookup. (A size_t index: with a
	 * 32-bit one the compiler widens each i + k on its own.) */
	for (; i + 4 <= ways; i += 4) {
		if ((set[i] >> 1) == line)
			return (int)i;
		if ((set[i + 1] >> 1) == line)
			return (int)i + 1;
		if ((set[i + 2] >> 1) == line)
			return (int)i + 2;
		if ((set[i + 3] >> 1) == line)
			return (int)i + 3;
	}
	for (; i < ways; i++)
		if ((set[i] >> 1) == line)
			return (int)i;
	return -1;
}

/* -- the index of high-associativity levels -- */

static inline uint64_t
hash_home(const struct level *L, uint64_t line)
{
	return (line * UINT64_C(0x9e3779b97f4a7c15)) >> L->hash_shift;
}

static inline int
index_find(const struct level *L, uint64_t set_idx, uint64_t line)
{
	for (uint64_t i = hash_home(L, line);; i = (i + 1) & L->hash_mask) {
		uint32_t h = L->hash[i];

		if (h == 0)
			return -1;
		if ((L->tags[h - 1] >> 1) == line)
			return (int)(h - 1 - set_idx * L->ways);
	}
}

static inline void
index_insert(struct level *L, uint64_t line, uint32_t g)
{
	uint64_t i = hash_home(L, line);

	while (L->hash[i])
		i = (i + 1) & L->hash_mask;
	L->hash[i] = g + 1;
}

/* Linear-probing removal with backward shift: later entries of the run move into the hole
 * when their home position allows it, so lookups never need tombstones. */
static inline void
index_remove(struct level *L, uint64_t line)
{
	uint64_t i = hash_home(L, line), j;

	while ((L->tags[L->hash[i] - 1] >> 1) != line)
		i = (i + 1) & L->hash_mask;
	for (j = i;;) {
		uint64_t k;

		j = (j + 1) & L->hash_mask;
		if (L->hash[j] == 0)
			break;
		k = hash_home(L, L->tags[L->hash[j] - 1] >> 1);
		/* Move entry j into hole i unless its home lies cyclically in (i, j]. */
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			L->hash[i] = L->hash[j];
			i = j;
		}
	}
	L->hash[i] = 0;
}

static inline void
list_unlink(struct level *L, uint64_t set_idx, uint32_t g)
{
	uint32_t p = L->prev[g], n = L->next[g];

	if (p == NIL)
		L->head[set_idx] = n;
	else
		L->next[p] = n;
	if (n == NIL)
		L->tail[set_idx] = p;
	else
		L->prev[n] = p;
}

static inline void
list_push_front(struct level *L, uint64_t set_idx, uint32_t g)
{
	uint32_t h = L->head[set_idx];

	L->prev[g] = NIL;
	L->next[g] = h;
	if (h == NIL)
		L->tail[set_idx] = g;
	else
		L->prev[h] = g;
	L->head[set_idx] = g;
}

static inline int
find_way(const struct level *L, const uint64_t *set, uint64_t set_idx, uint64_t line)
{
	return L->indexed ? index_find(L, set_idx, line) : scan_way(set, L->ways, line);
}

static inline void
plru_touch(struct level *L, uint64_t set_idx, uint32_t way)
{
	uint8_t *bits = L->plru + set_idx * L->ways;
	unsigned depth = log2_u64(L->ways);
	unsigned node = 1;

	/* Each node points to the half that holds the next victim: away from this way. */
	for (unsigned d = depth; d-- > 0;) {
		unsigned go = (way >> d) & 1;

		bits[node] = (uint8_t)!go;
		node = node * 2 + go;
	}
}

static inline uint32_t
plru_victim(const struct level *L, uint64_t set_idx)
{
	const uint8_t *bits = L->plru + set_idx * L->ways;
	unsigned node = 1;

	while (node < L->ways)
		node = node * 2 + bits[node];
	return node - L->ways;
}

static inline uint64_t
rng_next(struct level *L)
{
	/* xorshift64*: small, fast and reproducible from the seed. */
	L->rng ^= L->rng >> 12;
	L->rng ^= L->rng << 25;
	L->rng ^= L->rng >> 27;
	return L->rng * UINT64_C(2685821657736338717);
}

/* touch() for indexed, random and tree-PLRU levels. */
static inline uint32_t
touch_other(struct level *L, uint64_t set_idx, uint32_t w)
{
	if (L->indexed) {
		uint32_t g = (uint32_t)(set_idx * L->ways + w);

		if (L->cfg.repl == CACHE_REPL_LRU && L->head[set_idx] != g) {
			list_unlink(L, set_idx, g);
			list_push_front(L, set_idx, g);
		} else if (L->cfg.repl == CACHE_REPL_PLRU) {
			plru_touch(L, set_idx, w);
		}
		return w;
	}
	if (L->cfg.repl == CACHE_REPL_PLRU)
		plru_touch(L, set_idx, w);
	return w;
}

/* Marks slot w used; returns where the line sits afterwards. */
static inline uint32_t
touch(struct level *L, uint64_t *set, uint64_t set_idx, uint32_t w)
{
	if (L->lru_order) {
		if (w > 0) {
			uint64_t e = set[w];

			slots_up(set, w);
			set[0] = e;
			if (L->mask) {
				uint64_t *m = L->mask + set_idx * L->ways;
				uint64_t me = m[w];

				slots_up(m, w);
				m[0] = me;
			}
		}
		return 0;
	}
	if (L->ordered)
		return w; /* FIFO: a hit changes nothing */
	return touch_other(L, set_idx, w);
}

static inline void
remove_slot(struct level *L, uint64_t *set, uint64_t set_idx, uint32_t w)
{
	if (L->indexed) {
		uint32_t g = (uint32_t)(set_idx * L->ways + w);

		index_remove(L, set[w] >> 1);
		list_unlink(L, set_idx, g);
		set[w] = TAG_INVALID;
		if (L->mask)
			L->mask[g] = 0;
		L->next[g] = L->free_head[set_idx];
		L->free_head[set_idx] = g;
		return;
	}
	if (L->ordered) {
		uint32_t tail = L->ways - 1 - w;

		slots_down(set + w, tail);
		set[L->ways - 1] = TAG_INVALID;
		if (L->mask) {
			uint64_t *m = L->mask + set_idx * L->ways;

			slots_down(m + w, tail);
			m[L->ways - 1] = 0;
		}
		return;
	}
	set[w] = TAG_INVALID;
	if (L->mask)
		L->mask[set_idx * L->ways + w] = 0;
}

/* Returns a free slot, or -1 when the set is full. */
static inline int
free_slot(const struct level *L, const uint64_t *set, uint64_t set_idx)
{
	if (L->indexed)
		return L->free_head[set_idx] == NIL
			       ? -1
			       : (int)(L->free_head[set_idx] - set_idx * L->ways);
	if (L->ordered)
		return set[L->ways - 1] == TAG_INVALID ? (int)L->ways - 1 : -1;
	for (uint32_t i = 0; i < L->ways; i++)
		if (set[i] == TAG_INVALID)
			return (int)i;
	return -1;
}

static inline uint32_t
choose_victim(struct level *L, uint64_t set_idx)
{
	switch (L->cfg.repl) {
	case CACHE_REPL_RANDOM:
		return (uint32_t)(rng_next(L) % L->ways);
	case CACHE_REPL_PLRU:
		return plru_victim(L, set_idx);
	default:
		/* LRU and FIFO: the end of the order. */
		return L->indexed ? (uint32_t)(L->tail[set_idx] - set_idx * L->ways) : L->ways - 1;
	}
}

/* Installs a line into the free slot w; returns its slot. */
static inline uint32_t
install(struct level *L, uint64_t *set, uint64_t set_idx, uint32_t w, uint64_t line, bool dirty,
	uint64_t mask)
{
	uint64_t e = (line << 1) | (dirty ? 1 : 0);

	if (L->indexed) {
		/* Any free slot will do: take the first of the free list. */
		uint32_t g = L->free_head[set_idx];

		L->free_head[set_idx] = L->next[g];
		w = (uint32_t)(g - set_idx * L->ways);
		set[w] = e;
		if (L->mask)
			L->mask[g] = mask;
		index_insert(L, line, g);
		list_push_front(L, set_idx, g);
		if (L->cfg.repl == CACHE_REPL_PLRU)
			plru_touch(L, set_idx, w);
		return w;
	}
	if (L->ordered) {
		slots_up(set, L->ways - 1);
		set[0] = e;
		if (L->mask) {
			uint64_t *m = L->mask + set_idx * L->ways;

			slots_up(m, L->ways - 1);
			m[0] = mask;
		}
		return 0;
	}
	set[w] = e;
	if (L->mask)
		L->mask[set_idx * L->ways + w] = mask;
	if (L->cfg.repl == CACHE_REPL_PLRU)
		plru_touch(L, set_idx, w);
	return w;
}

/* Granules of [addr, addr + size) inside one line: touched ones, or only fully written ones. */
static inline uint64_t
granules(const struct level *L, uint64_t addr, uint32_t size, bool whole_only)
{
	uint64_t off = addr & (L->cfg.line_bytes - 1);
	uint64_t g = UINT64_C(1) << L->granule_shift;
	uint64_t first = whole_only ? (off + g - 1) >> L->granule_shift : off >> L->granule_shift;
	uint64_t end = whole_only ? (off + size) >> L->granule_shift
				  : ((off + size - 1) >> L->granule_shift) + 1;
	uint64_t n;

	if (end <= first)
		return 0;
	n = end - first;
	return (n >= 64 ? UINT64_MAX : ((UINT64_C(1) << n) - 1)) << first;
}
