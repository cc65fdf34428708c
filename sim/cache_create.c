/*
 * The cache model's construction: a level's arrays, a model of a configuration's levels,
 * its size in bytes, and freeing it (the model's notes: cache.c).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/name_index.h"
#include "base/util.h"
#include "sim/cache_internal.h"

/* ---- construction ---- */

/* The bytes of level_init()'s arrays for cfg (valid), for index_ways. */
uint64_t
cache_level_bytes(const struct cache_level_config *cfg, uint32_t index_ways)
{
	uint64_t lines = cfg->size_bytes / cfg->line_bytes;
	uint64_t ways = cfg->fully_assoc ? lines : cfg->assoc, sets = lines / ways;
	uint64_t bytes = lines * sizeof(uint64_t);

	if (cfg->alloc == CACHE_ALLOC_VALIDATE)
		bytes += lines * sizeof(uint64_t);
	if (cfg->repl == CACHE_REPL_PLRU)
		bytes += sets * ways;
	if (ways > (index_ways ? index_ways : INDEX_WAYS))
		bytes += (UINT64_C(2) << log2_u64(lines)) * sizeof(uint32_t) +
			 2 * lines * sizeof(uint32_t) + 3 * sets * sizeof(uint32_t);
	return bytes;
}

/* Sets up level L of cfg; its arrays too unless bare (a level that only counts: the stack
 * pass's models). False when memory is short (cache_destroy() frees what was allocated). */
static bool
level_init(struct level *L, const struct cache_level_config *cfg, uint64_t seed, unsigned idx,
	   uint32_t index_ways, bool bare)
{
	uint64_t lines = cfg->size_bytes / cfg->line_bytes;
	uint64_t sets;
	unsigned bits;

	L->cfg = *cfg;
	L->ways = cfg->fully_assoc ? (uint32_t)lines : cfg->assoc;
	L->cfg.assoc = L->ways;
	sets = lines / L->ways;
	L->set_mask = sets - 1;
	L->line_shift = log2_u64(cfg->line_bytes);
	if (cfg->alloc == CACHE_ALLOC_VALIDATE) {
		L->granule_shift = cfg->line_bytes > 64 ? L->line_shift - 6 : 0;
		bits = cfg->line_bytes >> L->granule_shift;
		L->full_mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
	}
	/* Distinct, reproducible streams per level (splitmix64 constant). */
	L->rng = (seed ^ (UINT64_C(0x9e3779b97f4a7c15) * (idx + 1))) | 1;
	L->indexed = L->ways > (index_ways ? index_ways : INDEX_WAYS);
	L->ordered = !L->indexed && (cfg->repl == CACHE_REPL_LRU || cfg->repl == CACHE_REPL_FIFO);
	L->lru_order = L->ordered && cfg->repl == CACHE_REPL_LRU;
	/* The most-recent-slot shortcut needs slot 0 to be the most recent line. */
	L->fast_read =
		!L->indexed && cfg->repl != CACHE_REPL_PLRU && cfg->alloc != CACHE_ALLOC_VALIDATE;
	L->fast_write = L->fast_read && cfg->write == CACHE_WRITE_BACK;
	if (bare)
		return true;
	/* The arrays may be large (up to MAX_LINES lines): a shortage is the caller's to
	 * report, not an abort. All are allocated before any is written, so a shortage costs
	 * no time. */
	L->tags = array_alloc_huge(lines, sizeof(uint64_t), false);
	if (cfg->alloc == CACHE_ALLOC_VALIDATE)
		L->mask = array_alloc_huge(lines, sizeof(uint64_t), true);
	if (cfg->repl == CACHE_REPL_PLRU)
		L->plru = calloc(sets, L->ways);
	if (L->indexed) {
		uint64_t hsize = UINT64_C(1) << (log2_u64(lines) + 1);

		L->hash = array_alloc_huge(hsize, sizeof(*L->hash), true);
		L->hash_mask = hsize - 1;
		L->hash_shift = 64 - log2_u64(hsize);
		L->prev = array_alloc_huge(lines, sizeof(*L->prev), true);
		L->next = array_alloc_huge(lines, sizeof(*L->next), true);
		L->head = calloc(sets, sizeof(*L->head));
		L->tail = calloc(sets, sizeof(*L->tail));
		L->free_head = calloc(sets, sizeof(*L->free_head));
	}
	if (!L->tags || (cfg->alloc == CACHE_ALLOC_VALIDATE && !L->mask) ||
	    (cfg->repl == CACHE_REPL_PLRU && !L->plru) ||
	    (L->indexed &&
	     (!L->hash || !L->prev || !L->next || !L->head || !L->tail || !L->free_head)))
		return false;
	memset(L->tags, 0xff, lines * sizeof(uint64_t));
	if (L->indexed) {
		for (uint64_t st = 0; st < sets; st++) {
			L->head[st] = L->tail[st] = NIL;
			L->free_head[st] = (uint32_t)(st * L->ways);
			for (uint64_t w = 0; w < L->ways; w++) {
				uint64_t g = st * L->ways + w;

				L->next[g] = w + 1 < L->ways ? (uint32_t)(g + 1) : NIL;
			}
		}
	}
	return true;
}

/* A write to each page of [p, p + n): volatile, so that no compiler takes it for the zeros
 * calloc() already gave. */
static void
touch_pages(void *p, uint64_t n)
{
	volatile unsigned char *b = p;

	for (uint64_t i = 0; p && i < n; i += 4096)
		b[i] = 0;
}

void
cache_prefault(struct cache *c)
{
	for (unsigned i = 0; i < c->nlv; i++) {
		const struct level *L = &c->lv[i];
		uint64_t lines = L->cfg.size_bytes / L->cfg.line_bytes, sets = lines / L->ways;

		if (!L->tags)
			continue; /* bare: no arrays */
		touch_pages(L->mask, lines * sizeof(uint64_t));
		touch_pages(L->plru, sets * L->ways);
		if (L->indexed) {
			touch_pages(L->hash, (L->hash_mask + 1) * sizeof(*L->hash));
			touch_pages(L->prev, lines * sizeof(*L->prev));
		}
	}
}

static const char *
phase_name_at(const void *owner, uint32_t i)
{
	return ((const struct cache *)owner)->phases[i].name;
}

/* A plain model of cfg's levels 0 .. ndata-1 (and I1); below the last of them lies DRAM, or
 * what a driver puts there. Level `bare` (CACHE_MAX_LEVELS: none) gets no arrays
 * (level_init()). NULL when memory is short. */
struct cache *
cache_build(const struct cache_config *cfg, unsigned ndata, unsigned bare)
{
	struct cache *c = xzalloc(sizeof(*c));

	c->cfg = *cfg;
	c->ndata = ndata;
	c->drive = &cache_plain_drive;
	c->icache = -1;
	for (unsigned i = 0; i < ndata; i++) {
		c->nlv = i + 1; /* what cache_destroy() frees */
		if (!level_init(&c->lv[i], &cfg->level[i], cfg->seed, i, cfg->index_ways,
				i == bare)) {
			cache_destroy(c);
			return NULL;
		}
		c->lv[i].below = i + 1 < ndata ? (int)i + 1 : -1;
		c->lv[i].below_exclusive =
			i + 1 < ndata && cfg->level[i + 1].inclusion == CACHE_INCL_EXCLUSIVE;
	}
	c->nlv = ndata;
	if (cfg->has_icache) {
		c->icache = (int)c->nlv;
		c->nlv++;
		if (!level_init(&c->lv[c->icache], &cfg->icache, cfg->seed, CACHE_MAX_LEVELS,
				cfg->index_ways, false)) {
			cache_destroy(c);
			return NULL;
		}
		c->lv[c->icache].below = cfg->levels >= 2 && ndata >= 2 ? 1 : -1;
	}
	for (unsigned i = 0; i < c->nlv; i++) {
		struct level *L = &c->lv[i];

		L->lower = L->below >= 0 ? &c->lv[L->below] : NULL;
		L->lower_whole = L->lower && L->lower->cfg.line_bytes >= L->cfg.line_bytes;
		L->keep_victim = !L->indexed;
		for (struct level *B = L->lower; B; B = B->below >= 0 ? &c->lv[B->below] : NULL)
			if (B->cfg.inclusion == CACHE_INCL_INCLUSIVE)
				L->keep_victim = false;
	}
	/* From the last data level up, so each sees whether the one below is plain. */
	for (unsigned i = ndata; i-- > 0;) {
		struct level *L = &c->lv[i];
		const struct cache_level_config *k = &L->cfg;

		L->plain = L->lru_order && k->write == CACHE_WRITE_BACK &&
			   k->alloc == CACHE_ALLOC_FETCH && k->inclusion == CACHE_INCL_NINE &&
			   !k->quiet_writebacks && !L->below_exclusive && L->keep_victim &&
			   (!L->lower ||
			    (L->lower->plain && L->lower->cfg.line_bytes == k->line_bytes));
	}
	snprintf(c->arrays[0].name, sizeof(c->arrays[0].name), "other");
	c->narrays = 1;
	c->phases_cap = 8;
	c->phases = xzalloc(c->phases_cap * sizeof(*c->phases));
	snprintf(c->phases[0].name, sizeof(c->phases[0].name), "(none)");
	c->nphases = 1;
	name_index_init(&c->phase_names, c, phase_name_at);
	return c;
}

uint64_t
cache_model_bytes(const struct cache_config *cfg)
{
	uint64_t bytes = sizeof(struct cache) + 8 * sizeof(struct phase);

	for (unsigned i = 0; i < cfg->levels; i++)
		bytes += cache_level_bytes(&cfg->level[i], cfg->index_ways);
	if (cfg->has_icache)
		bytes += cache_level_bytes(&cfg->icache, cfg->index_ways);
	return bytes;
}

void
cache_destroy(struct cache *c)
{
	if (!c)
		return;
	if (c->drive->destroy)
		c->drive->destroy(c);
	for (unsigned i = 0; i < c->nlv; i++) {
		free(c->lv[i].tags);
		free(c->lv[i].mask);
		free(c->lv[i].plru);
		free(c->lv[i].hash);
		free(c->lv[i].prev);
		free(c->lv[i].next);
		free(c->lv[i].head);
		free(c->lv[i].tail);
		free(c->lv[i].free_head);
	}
	free(c->phases);
	name_index_finish(&c->phase_names);
	free(c);
}

const struct cache_config *
cache_get_config(const struct cache *c)
{
	return &c->cfg;
}
