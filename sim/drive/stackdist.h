#pragma once

/*
 * LRU stack distances for several caches at once (Mattson et al. 1970), nested by inclusion:
 * cache k holds every line cache k - 1 holds. Two geometries:
 *
 *  - One set count, ways w[0] < w[1] < ... < w[n-1] (stackdist_create()): one LRU stack per
 *    set holds the lines of the largest; a line at depth d is in every cache with w[k] >= d.
 *  - Set counts that double, or stay, from one cache to the next, at ways that do not shrink
 *    (stackdist_create_sets(): a sweep of sizes at a fixed associativity). With sets picked by
 *    the line's low bits, an LRU cache with more sets (or more ways) holds every line of one
 *    with fewer (Hill and Smith's set-refinement inclusion): a line in cache k has fewer than
 *    w[k] more recent lines in its set of cache k, and its set in cache k + 1 holds a subset
 *    of those lines.
 *
 * Either way a line's zone is the first cache that holds it, so a reference of a line in zone
 * z misses in caches 0 .. z-1 and hits in the others, and the victim of every cache that
 * misses is known when it is evicted, not when the line comes back.
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
 * arguments are out of range or memory is short. Caller frees with stackdist_destroy(). */
struct stackdist *stackdist_create(uint64_t sets, const uint32_t *ways, unsigned n);

/* n caches of sets[k] sets (powers of two, each equal to or larger than the one before) and
 * ways[k] ways (at least 1, none fewer than the one before), each cache
 * larger than the one before; n <= STACKDIST_MAX_CACHES. Returns NULL when the arguments are
 * out of range or memory is short. Caller frees with stackdist_destroy(). */
struct stackdist *stackdist_create_sets(const uint64_t *sets, const uint32_t *ways, unsigned n);

/* The most bytes stackdist_create() and stackdist_create_sets() with these arguments hold during
 * a run (the line index at its largest, while it doubles); 0 when they are out of range. */
uint64_t stackdist_bytes(uint64_t sets, const uint32_t *ways, unsigned n);
uint64_t stackdist_bytes_sets(const uint64_t *sets, const uint32_t *ways, unsigned n);

void stackdist_destroy(struct stackdist *s);

/* References line (write: the line ends dirty in every cache). Returns its zone z before the
 * reference: it missed in caches 0 .. z-1 (n: in all). victims[k] for k < z says what cache k
 * evicted to make room. */
unsigned stackdist_ref(struct stackdist *s, uint64_t line, bool write,
		       struct stackdist_victim *victims);

/* True when memory ran out during the run (the line index could not grow): the zones returned
 * since are 0 and the counts are not valid. */
bool stackdist_failed(const struct stackdist *s);

/* Calls fn for every line dirty in some cache, with the first cache `from` in which it is
 * dirty (it is dirty in caches from .. n-1); then every line is clean, as after a final
 * flush. One set count: sets from the last to the first and in each set the least recent line
 * first. Several set counts: in no particular order (the caller counts, nothing lies below). */
void stackdist_flush(struct stackdist *s, void (*fn)(void *ctx, uint64_t line, unsigned from),
		     void *ctx);
