#pragma once

/*
 * LRU stack distances for several caches at once (Mattson et al. 1970): the caches share a set
 * count and line size and differ in ways, w[0] < w[1] < ... < w[n-1]. One LRU stack per set
 * holds the lines of the largest; a line's zone is the first cache that holds it (a line at
 * depth d is in every cache with w[k] >= d), so a reference of a line in zone z misses in
 * caches 0 .. z-1 and hits in the others. A marker per set and cache points at the line at
 * depth w[k]: each reference that misses in cache k pushes that line out of it, so the victim
 * of every cache is known when it is evicted, not when the line comes back.
 *
 * Dirty lines: a line is dirty in cache k when it has stayed in cache k since its last write.
 * Each line keeps the largest zone it has reached since its last write; it is dirty in cache k
 * exactly when that zone is at most k (a write sets it to 0; a line never written has n).
 */

#include <stdbool.h>
#include <stdint.h>

#define STACKDIST_MAX_CACHES 64

struct stackdist;

/* A line pushed out of one cache by a reference. */
struct stackdist_victim {
	uint64_t line;
	bool valid; /* false: the set was not yet full in that cache */
	bool dirty;
};

/* Stacks for `sets` sets (a power of two: the line's low bits pick the set) and n caches of
 * ways[0 .. n) ways, strictly increasing, n <= STACKDIST_MAX_CACHES. Returns NULL when the
 * arguments are out of range. Caller frees with stackdist_destroy(). */
struct stackdist *stackdist_create(uint64_t sets, const uint32_t *ways, unsigned n);
void stackdist_destroy(struct stackdist *s);

/* References line (write: the line ends dirty in every cache). Returns its zone z before the
 * reference: it missed in caches 0 .. z-1 (n: in all). victims[k] for k < z says what cache k
 * evicted to make room. */
unsigned stackdist_ref(struct stackdist *s, uint64_t line, bool write,
		       struct stackdist_victim *victims);

/* Calls fn for every line dirty in some cache, with the first cache `from` in which it is
 * dirty (it is dirty in caches from .. n-1), sets from the last to the first and in each set
 * the least recent line first; then every line is clean, as after a final flush. */
void stackdist_flush(struct stackdist *s, void (*fn)(void *ctx, uint64_t line, unsigned from),
		     void *ctx);
