#pragma once

/*
 * What tests reach of a feed (sim/drive/feed.c) beyond its interface, sim/drive/feed.h.
 */

#include <stdbool.h>

#include "sim/cache.h"
#include "sim/drive/feed.h"

/* The slices a feed of cfg on `threads` threads (a power of two the config splits by) asks
 * for: cache_feed_slices() before any model failed to fit. */
unsigned cache_feed_slices_for(const struct cache_config *cfg, unsigned threads);

/* While held, the slice threads take no batch: the caller's thread simulates every batch
 * itself, as rings fill and at the end. The counts are the same. */
void cache_feed_hold(struct cache_feed *f, bool hold);
