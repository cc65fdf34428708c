/*
 * The cache model's final flush: dirty lines written back level by level (the order: cache.c's
 * notes), then what its driver keeps below them.
 */

#include <stdint.h>
#include <stdlib.h>

#include "base/util.h"
#include "sim/cache_internal.h"

/* ---- flush ---- */

void
cache_flush_levels(struct cache *c, unsigned first)
{
	for (unsigned li = first; li < c->ndata; li++) {
		struct level *L = &c->lv[li];
		uint64_t sets = L->set_mask + 1;

		uint32_t *order = xzalloc(L->ways * sizeof(*order));

		for (uint64_t s = sets; s-- > 0;) {
			uint64_t *set = L->tags + s * L->ways;
			uint32_t n = 0;

			/* Least recent (or oldest) first: slots from the end, or an indexed level's
			 * list from its tail. The order is taken first because a write-back into an
			 * inclusive level can back-invalidate lines of this set. */
			if (L->indexed) {
				for (uint32_t g = L->tail[s]; g != NIL; g = L->prev[g])
					order[n++] = (uint32_t)(g - s * L->ways);
			} else {
				for (uint32_t w = L->ways; w-- > 0;)
					order[n++] = w;
			}
			for (uint32_t k = 0; k < n; k++) {
				uint64_t e = set[order[k]];

				if (e == TAG_INVALID || !(e & 1))
					continue;
				set[order[k]] = e & ~UINT64_C(1);
				L->st.writebacks++;
				L->st.flush_writebacks++;
				cache_flush_writeback(c, L, e >> 1);
			}
		}
		free(order);
	}
}

void
cache_flush(struct cache *c)
{
	cache_set_phase(c, cache_add_phase(c, "flush"));
	cache_flush_levels(c, 0);
	if (c->drive->flush)
		c->drive->flush(c); /* what a driver keeps below the levels: a one pass's sizes */
	cache_sync_phase(c);
}
