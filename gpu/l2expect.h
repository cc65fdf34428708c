#pragma once

/*
 * An L2 of 128-byte lines whose addresses are hashed to sets, as a GPU's L2 hashes them,
 * counted in expectation over the hash, one step per whole-tile access (as gpu/tilelru.h):
 * LRU in sets of `ways` lines. A line hits when fewer than `ways` of the distinct lines touched
 * since its last access fell in its set; with a uniform hash that count is Binomial(D / line,
 * 1 / sets), D the distinct bytes touched since (the LRU stack distance, exact, from the access
 * sequence alone), taken as Poisson(D x ways / capacity). So a tile's expected misses are
 * bytes x P(Poisson >= ways): near the capacity the misses rise smoothly, not at once as in a
 * fully associative LRU. gpu/l2sets.h simulates the same cache line by line (tests compare).
 *
 * Notes: loads fetch the missing lines; stores allocate without fetching (write-validate) and
 * make the whole tile dirty; a dirty line evicted before its next access is written then
 * (its eviction counted at that next access, or at l2expect_finish() for lines never accessed
 * again). A line's miss and its dirtiness are taken as independent. Nothing is flushed at the
 * end (ncu's counters). Traffic is an expectation, rounded to bytes when read.
 */

#include <stdbool.h>
#include <stdint.h>

#include "gpu/tilelru.h"

#define L2EXPECT_LINE 128      /* bytes */
#define L2EXPECT_WAYS_MAX 1024 /* above, the Poisson tail table gets long; use gpu/tilelru.h */

struct l2expect;

/* An empty L2 of capacity_bytes in sets of ways (1 .. L2EXPECT_WAYS_MAX) lines, for tiles
 * 0 .. ntiles-1. NULL when memory is short or the arguments are out of range. Caller frees
 * with l2expect_destroy(). */
struct l2expect *l2expect_create(uint64_t capacity_bytes, uint32_t ways, uint64_t ntiles);
void l2expect_destroy(struct l2expect *l);

/* Loads (write false) or stores (write true) all of tile id, bytes long (at least 1; the same
 * every time for one id), counted to class cls (< TILELRU_CLASSES). */
void l2expect_access(struct l2expect *l, uint64_t id, uint32_t bytes, unsigned cls, bool write);

/* Counts the dirty bytes evicted after their last access (call once, after the last access). */
void l2expect_finish(struct l2expect *l);

/* Expected DRAM traffic so far, of class cls, or of all classes with cls = TILELRU_CLASSES. */
struct tilelru_traffic l2expect_dram(const struct l2expect *l, unsigned cls);

/* The probability that a line is missing after D distinct bytes were touched since its last
 * access (for tests). */
double l2expect_miss_prob(const struct l2expect *l, double d_bytes);
