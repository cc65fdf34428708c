#pragma once

/*
 * A fully associative LRU cache whose accesses are whole tiles: each access names a tile (an
 * id in [0, ntiles)) and its size, and moves all of it at once, as a GPU thread block loads a
 * K tile or stores an O tile. For such streams it counts exactly what a line-granular fully
 * associative LRU of the same capacity counts (sim/cache.c with one set): a tile's lines are
 * touched back to back, so they sit together in the recency order and leave it oldest line
 * first; a tile partly evicted keeps its newest bytes, and a later load fetches the rest.
 * It does per tile what sim/cache.c does per line, so kernels that move gigabytes in 16 KiB
 * tiles run in milliseconds (tests/test-sdpa.c checks the two agree). Two variants, for
 * trying other L2 models: sets (tiles hashed to independent LRUs of capacity / sets each) and
 * random replacement (a random held tile's bytes leave first; no longer line-exact).
 *
 * Notes: loads fetch what is missing (read bytes); stores allocate without fetching
 * (write-validate, as a GPU's L2 does for full sectors) and make the tile dirty; evicting dirty
 * bytes writes them (write bytes). Nothing is flushed at the end: ncu's counters, read at
 * kernel end, see only write-backs during the kernel. Each tile has a class (an array index
 * below TILELRU_CLASSES) for the per-array counts.
 */

#include <stdbool.h>
#include <stdint.h>

#define TILELRU_CLASSES 16

struct tilelru_traffic {
	uint64_t read_bytes;
	uint64_t write_bytes;
};

struct tilelru;

/* An empty cache of capacity_bytes for tiles 0 .. ntiles-1, in `sets` sets of capacity_bytes /
 * sets each (1: fully associative); random_seed 0 replaces the oldest bytes (LRU), any other
 * value a random tile's, from that seed (the same seed gives the same run); a tile's set is a hash
 * of its id, as a GPU's L2 hashes addresses to sets, so that a set of a tiles' bytes behaves on
 * average as a line-granular LRU of that many ways with a hashed index. NULL when memory is short
 * or capacity_bytes < sets. Caller frees with tilelru_destroy(). */
struct tilelru *tilelru_create(uint64_t capacity_bytes, uint64_t ntiles, uint32_t sets,
			       uint64_t random_seed);
void tilelru_destroy(struct tilelru *t);

/* Loads (write false) or stores (write true) all of tile id, bytes long (1 .. a set's capacity; the
 * same every time for one id), counted to class cls (< TILELRU_CLASSES). */
void tilelru_access(struct tilelru *t, uint64_t id, uint32_t bytes, unsigned cls, bool write);

/* DRAM traffic so far, of class cls, or of all classes with cls = TILELRU_CLASSES. */
struct tilelru_traffic tilelru_dram(const struct tilelru *t, unsigned cls);

/* True when all bytes of tile id are held; changes nothing. */
bool tilelru_holds(const struct tilelru *t, uint64_t id, uint32_t bytes);

