/*
 * The inline L1 path's side of the model (sim/cache.h): what cache_fast_l1() tells the caller
 * about L1 (and L2), and the counters of the accesses it settled. Its misses go to
 * cache_fast_miss(), in cache.c with the rest of the access path.
 */

#include "sim/cache.h"

#include <stddef.h>

#include "sim/cache_internal.h"

bool
cache_fill_fast_l1(struct cache *c, struct cache_fast_l1 *v)
{
	struct level *L = &c->lv[0];

	if (c->ndata == 0 || !L->fast_write)
		return false;
	v->slice_shift = 0;
	v->slice_mask = 0;
	v->slice_residue = 0;
	v->tags = L->tags;
	v->set_mask = L->set_mask;
	v->ways = L->ways;
	v->line_shift = L->line_shift;
	v->lru = L->cfg.repl == CACHE_REPL_LRU;
	v->l2_tags = NULL;
	v->l2_set_mask = v->l2_ways = 0;
	/* A plain L1 over a plain L2 (same lines): an L2 hit may settle inline. Not with a one-pass
	 * model's fan right below L1, which is no L2 of this model. */
	if (L->plain && L->lower) {
		v->l2_tags = L->lower->tags;
		v->l2_set_mask = L->lower->set_mask;
		v->l2_ways = L->lower->ways;
	}
	return true;
}

bool
cache_fast_l1(struct cache *c, struct cache_fast_l1 *v)
{
	return c->drive->inline_l1 && !c->nscratch && cache_fill_fast_l1(c, v);
}

bool
cache_fast_l1_without_scratch(struct cache *c, struct cache_fast_l1 *v)
{
	return c->drive->inline_l1 && cache_fill_fast_l1(c, v);
}

void
cache_count_fast(struct cache *c, uint64_t loads, uint64_t stores, uint64_t load_bytes,
		 uint64_t store_bytes)
{
	c->lv[0].st.reads += loads;
	c->lv[0].st.writes += stores;
	c->cpu.ops[CACHE_OP_LOAD] += loads;
	c->cpu.ops[CACHE_OP_STORE] += stores;
	c->cpu.bytes[CACHE_OP_LOAD] += load_bytes;
	c->cpu.bytes[CACHE_OP_STORE] += store_bytes;
}

void
cache_count_fast_other(struct cache *c, uint64_t loads, uint64_t stores, uint64_t load_bytes,
		       uint64_t store_bytes)
{
	c->cpu.ops[CACHE_OP_LOAD] += loads;
	c->cpu.ops[CACHE_OP_STORE] += stores;
	c->cpu.bytes[CACHE_OP_LOAD] += load_bytes;
	c->cpu.bytes[CACHE_OP_STORE] += store_bytes;
}

void
cache_count_fast_misses(struct cache *c, struct cache_fast_misses *m)
{
	struct level *L = &c->lv[0];

	if (!(m->loads | m->stores))
		return; /* and no L2 to count in where cache_fast_l1() gave no l2_tags */
	L->st.read_misses += m->loads;
	L->st.write_misses += m->stores;
	L->st.fills += m->loads + m->stores;
	L->st.evictions += m->evictions;
	L->lower->st.reads += m->loads + m->stores;
	m->loads = m->stores = m->evictions = 0;
}
