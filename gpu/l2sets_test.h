#pragma once

/*
 * The hashed L2's placement, for tests only (tests/test-l2sets.c): which set a line lands in.
 */

#include <stdint.h>

#include "gpu/l2sets.h"

/* The sets simulated (all sets / sample). */
uint32_t l2sets_nsets(const struct l2sets *s);

/* The simulated set, in [0, l2sets_nsets()), of line `line` of tile id, and with two
 * partitions its home, the first half or the second (for tests). */
uint32_t l2sets_set_of(const struct l2sets *s, uint64_t id, uint32_t line);

/* A by_page cache's set of the line at addr in its partition (in [0, sets a partition), all
 * sets, sampled or not), and the partition in *home (for tests). */
uint32_t l2sets_page_set_of(const struct l2sets *s, uint64_t addr, unsigned *home);
