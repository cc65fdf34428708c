/*
 * Inclusive levels: a line leaving one takes its copies out of every level above it (cache.c
 * calls this when it takes such a level's victim; rare, so out of the access path's file).
 */

#include <stdbool.h>
#include <stdint.h>

#include "sim/cache_internal.h"
#include "sim/cache_sets.h"

/* Removes the lines inside line `line` of level li from every level above li. Returns true if
 * any removed copy was dirty (its data joins li's write-back). */
bool
cache_back_invalidate(struct cache *c, int li, uint64_t line)
{
	unsigned shift = c->lv[li].line_shift;
	uint64_t base = line << shift, last = base + ((UINT64_C(1) << shift) - 1);
	bool dirty = false;

	for (unsigned u = 0; u < c->nlv; u++) {
		struct level *U = &c->lv[u];

		/* Levels above li: data levels 0..li-1, and I1 when it feeds a level at or above
		 * li. */
		if ((int)u == li || (u < c->ndata && (int)u > li))
			continue;
		if ((int)u == c->icache && (U->below < 0 || U->below > li))
			continue;
		for (uint64_t a = base;; a += U->cfg.line_bytes) {
			uint64_t ul = a >> U->line_shift;
			uint64_t si = ul & U->set_mask;
			uint64_t *set = U->tags + si * U->ways;
			int w = find_way(U, set, si, ul);

			if (w >= 0) {
				dirty |= set[w] & 1;
				remove_slot(U, set, si, (uint32_t)w);
				U->st.invalidations++;
			}
			if (last - a < U->cfg.line_bytes)
				break;
		}
	}
	return dirty;
}
