/*
 * The cache model's final flush: dirty lines written back level by level, and below a
 * one-pass model's levels each size's levels or the stack's lines (the order: cache.c's
 * notes).
 */

#include <stdint.h>
#include <stdlib.h>

#include "sim/cache_account.h"
#include "sim/cache_internal.h"
#include "sim/drive/stackdist.h"
#include "sim/util.h"

/* ---- flush ---- */

static void onepass_flush(struct cache *c);

/* The final flush of levels first .. ndata-1. */
static void
flush_levels(struct cache *c, unsigned first)
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
	flush_levels(c, 0);
	if (c->nfan)
		onepass_flush(c);
	cache_sync_phase(c);
}

struct flush_ctx {
	struct cache *c;
};

static void
stack_flush_line(void *ctx, uint64_t line, unsigned from)
{
	struct cache *c = ((struct flush_ctx *)ctx)->c;

	for (unsigned k = from; k < c->nfan; k++) {
		struct cache *s = c->fan[c->stack_order[k]];
		struct level *L = &s->lv[c->fan_level];

		L->st.writebacks++;
		L->st.flush_writebacks++;
		cache_dram_transfer(s, line << L->line_shift, L->cfg.line_bytes, true, F_FLUSH);
	}
}

/* The flush below the levels of a one-pass model: each size's levels, or the stack's lines. */
static void
onepass_flush(struct cache *c)
{
	cache_stack_settle(c);
	if (c->stack) {
		struct flush_ctx fc = { c };

		stackdist_flush(c->stack, stack_flush_line, &fc);
	} else {
		for (unsigned k = 0; k < c->nfan; k++)
			flush_levels(c->fan[k], c->fan_level);
	}
	for (unsigned k = 0; k < c->nfan; k++)
		cache_sync_phase(c->fan[k]);
}
