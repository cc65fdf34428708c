/*
 * One pass for many sizes of a level: which method a sweep can take, and a one-pass model's
 * construction and hand-out. Its access path stays in cache.c beside the hierarchy it calls
 * into (span_ref(): inlined there), its flush is in cache_flush.c.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cache_internal.h"
#include "sim/util.h"

/* ---- one pass for many sizes ---- */

const char *
cache_onepass_str(enum cache_onepass m)
{
	static const char *names[] = { "separate", "fanout", "stack" };

	return names[m];
}

/* Whether l's spec said "full" rather than a number of ways: spec_parse() flags a level whose
 * N ways make one set fully associative too, but keeps N in assoc (and "full" leaves it 0). */
static bool
spelled_full(const struct cache_level_config *l)
{
	return l->fully_assoc && (l->assoc == 0 || l->assoc != l->size_bytes / l->line_bytes);
}

int
cache_config_resize(const struct cache_config *cfg, unsigned level, uint64_t size_bytes,
		    struct cache_config *out, char *err, size_t errlen)
{
	struct cache_level_config *l;

	if (level >= cfg->levels) {
		snprintf(err, errlen, "L%u is not a level of this cache", level + 1);
		return -EINVAL;
	}
	*out = *cfg;
	l = &out->level[level];
	/* The associativity as the spec gave it: "full" stays one set (assoc 0, the model takes
	 * its ways from the size), N ways stay N ways, even where they made one set at the old
	 * size. Where N ways make one set at the new size, flagged so as spec_parse() does. */
	l->fully_assoc = spelled_full(&cfg->level[level]) ||
			 (uint64_t)l->assoc * l->line_bytes == size_bytes;
	l->size_bytes = size_bytes;
	return cache_config_validate(out, err, errlen);
}

/* The sets of level l resized to size_bytes (the config is valid). */
static uint64_t
sets_at(const struct cache_level_config *l, uint64_t size_bytes)
{
	uint64_t lines = size_bytes / l->line_bytes;

	return spelled_full(l) ? 1 : lines / l->assoc;
}

enum cache_onepass
cache_onepass_method(const struct cache_config *cfg, unsigned level, const uint64_t *sizes,
		     unsigned n, const char **why)
{
	const struct cache_level_config *l;
	const char *unused;
	char err[256];
	uint64_t sets;

	if (!why)
		why = &unused;
	*why = NULL;
	if (level >= cfg->levels || n == 0 || n > CACHE_ONEPASS_MAX) {
		*why = "no such level, or no sizes";
		return CACHE_ONEPASS_SEPARATE;
	}
	l = &cfg->level[level]; /* only now: a level past the array is not even addressed */
	for (unsigned k = 0; k < n; k++) {
		struct cache_config one;

		if (cache_config_resize(cfg, level, sizes[k], &one, err, sizeof(err))) {
			*why = "a size is not a valid cache";
			return CACHE_ONEPASS_SEPARATE;
		}
		for (unsigned j = 0; j < k; j++)
			if (sizes[j] == sizes[k]) {
				*why = "a size is given twice";
				return CACHE_ONEPASS_SEPARATE;
			}
	}
	/* Whatever lies at or below the swept level must not reach back above it. */
	for (unsigned i = level; i < cfg->levels; i++) {
		if (cfg->level[i].inclusion == CACHE_INCL_INCLUSIVE) {
			*why = "an inclusive level at or below the swept one back-invalidates the "
			       "levels above it";
			return CACHE_ONEPASS_SEPARATE;
		}
		if (level > 0 && cfg->level[i].straddle_once) {
			*why = "a straddle=once level below L1 counts across levels";
			return CACHE_ONEPASS_SEPARATE;
		}
	}
	if (l->inclusion == CACHE_INCL_EXCLUSIVE) {
		*why = "an exclusive level hands lines back up";
		return CACHE_ONEPASS_SEPARATE;
	}
	if (cfg->sample_sets > 1) {
		*why = "set sampling runs each size on its own";
		return CACHE_ONEPASS_SEPARATE;
	}
	/* The stack pass: the simple write-back, fetch-on-write LRU level at the bottom, and
	 * caches nested by inclusion (sim/drive/stackdist.h): one set count (fully associative, or
	 * sizes that change the ways), or a fixed associativity of a few ways (sizes that change
	 * the set count). */
	if (l->repl != CACHE_REPL_LRU)
		*why = "the swept level is not LRU";
	else if (level + 1 != cfg->levels)
		*why = "levels below the swept one need each size's own miss stream";
	else if (l->write != CACHE_WRITE_BACK || l->alloc != CACHE_ALLOC_FETCH ||
		 l->quiet_writebacks || l->straddle_once)
		*why = "the swept level is not plain write-back write-allocate";
	else if (level == 0 && cfg->has_icache)
		*why = "an I1 beside a swept L1";
	else if (n > STACKDIST_MAX_CACHES)
		*why = "too many sizes";
	if (*why)
		return CACHE_ONEPASS_FANOUT;
	sets = sets_at(l, sizes[0]);
	for (unsigned k = 1; k < n; k++)
		if (sets_at(l, sizes[k]) != sets && l->assoc > STACKDIST_MAX_SET_WAYS) {
			*why = "the sizes have different set counts at more than 64 ways";
			return CACHE_ONEPASS_FANOUT;
		}
	return CACHE_ONEPASS_STACK;
}

/* The stack pass's caches, smallest first: order[k] is the size of stack cache k, which has
 * sets[k] sets of ways[k] ways (an insertion sort: a sweep has a few sizes). */
static void
stack_geometry(const struct cache_level_config *l, const uint64_t *sizes, unsigned n,
	       unsigned *order, uint64_t *sets, uint32_t *ways)
{
	for (unsigned k = 0; k < n; k++)
		order[k] = k;
	for (unsigned k = 1; k < n; k++)
		for (unsigned j = k; j > 0 && sizes[order[j]] < sizes[order[j - 1]]; j--) {
			unsigned t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (unsigned k = 0; k < n; k++) {
		sets[k] = sets_at(l, sizes[order[k]]);
		ways[k] = (uint32_t)(sizes[order[k]] / l->line_bytes / sets[k]);
	}
}

/* The stack for those caches: a fixed set count grows the ways, a fixed associativity the
 * sets (sim/drive/stackdist.h: nested either way). NULL when memory is short. */
static struct stackdist *
stack_create(const uint64_t *sets, const uint32_t *ways, unsigned n)
{
	return sets[0] == sets[n - 1] ? stackdist_create(sets[0], ways, n)
				      : stackdist_create_sets(sets, ways, n);
}

/* What stack_create() holds at most. */
static uint64_t
stack_bytes(const uint64_t *sets, const uint32_t *ways, unsigned n)
{
	return sets[0] == sets[n - 1] ? stackdist_bytes(sets[0], ways, n)
				      : stackdist_bytes_sets(sets, ways, n);
}

struct cache *
cache_create_onepass(const struct cache_config *cfg, unsigned level, const uint64_t *sizes,
		     unsigned n, enum cache_onepass how)
{
	enum cache_onepass can = cache_onepass_method(cfg, level, sizes, n, NULL);
	struct cache *c;

	if (how == CACHE_ONEPASS_SEPARATE || how > can)
		return NULL;
	c = cache_build(cfg, level, CACHE_MAX_LEVELS);
	if (!c)
		return NULL;
	c->fan_level = level;
	c->fan = xzalloc(n * sizeof(*c->fan));
	c->taken = xzalloc(n * sizeof(*c->taken));
	c->nfan = n;
	for (unsigned k = 0; k < n; k++) {
		struct cache_config one;
		char err[256];

		cache_config_resize(cfg, level, sizes[k], &one, err, sizeof(err));
		/* The stack holds the swept level's lines: its models only count. */
		c->fan[k] = cache_build(&one, one.levels,
				  how == CACHE_ONEPASS_STACK ? level : CACHE_MAX_LEVELS);
		if (!c->fan[k]) {
			cache_destroy(c);
			return NULL;
		}
	}
	c->forward = level == 0 && how == CACHE_ONEPASS_FANOUT;
	if (how == CACHE_ONEPASS_STACK) {
		uint32_t ways[STACKDIST_MAX_CACHES];
		uint64_t sets[STACKDIST_MAX_CACHES];

		c->stack_order = xzalloc(n * sizeof(*c->stack_order));
		c->victims = xzalloc(n * sizeof(*c->victims));
		stack_geometry(&cfg->level[level], sizes, n, c->stack_order, sets, ways);
		c->stack = stack_create(sets, ways, n);
		c->stack_zone = calloc(n + 1, sizeof(*c->stack_zone));
		c->stack_fill = calloc((CACHE_MAX_ARRAYS + 1) * (n + 1), sizeof(*c->stack_fill));
		c->stack_fill_used =
			calloc((CACHE_MAX_ARRAYS + 1) * (n + 1), sizeof(*c->stack_fill_used));
		c->stack_evictions = calloc(n, sizeof(*c->stack_evictions));
		if (!c->stack || !c->stack_zone || !c->stack_fill || !c->stack_fill_used ||
		    !c->stack_evictions) {
			cache_destroy(c);
			return NULL;
		}
	}
	return c;
}

uint64_t
cache_onepass_bytes(const struct cache_config *cfg, unsigned level, const uint64_t *sizes,
		    unsigned n, enum cache_onepass how)
{
	struct cache_config above = *cfg;
	uint64_t bytes;

	above.levels = level;
	bytes = cache_model_bytes(&above);
	for (unsigned k = 0; k < n; k++) {
		struct cache_config one;
		char err[256];

		if (cache_config_resize(cfg, level, sizes[k], &one, err, sizeof(err)))
			continue;
		bytes += cache_model_bytes(&one);
		if (how == CACHE_ONEPASS_STACK)
			bytes -= cache_level_bytes(&one.level[level], one.index_ways);
	}
	if (how == CACHE_ONEPASS_STACK && n <= STACKDIST_MAX_CACHES) {
		uint32_t ways[STACKDIST_MAX_CACHES];
		uint64_t sets[STACKDIST_MAX_CACHES];
		unsigned order[STACKDIST_MAX_CACHES];

		stack_geometry(&cfg->level[level], sizes, n, order, sets, ways);
		bytes += stack_bytes(sets, ways, n) + (n + 1) * sizeof(struct stack_zone) +
			 (CACHE_MAX_ARRAYS + 1) * (n + 1) *
				 (sizeof(struct cache_traffic) + sizeof(unsigned)) +
			 n * sizeof(uint64_t);
	}
	return bytes;
}

/* Adds what stack_ref() counted by zone to the model of stack cache k: the references of zones
 * above k missed in it. */
static void
settle_size(struct cache *c, unsigned k)
{
	struct cache *s = c->fan[c->stack_order[k]];
	struct level *L = &s->lv[c->fan_level];
	struct phase *p = &s->phases[s->cur_phase];
	unsigned zones = c->nfan + 1;

	for (unsigned z = k + 1; z < zones; z++) {
		const struct stack_zone *sz = &c->stack_zone[z];

		L->st.read_misses += sz->read_misses;
		L->st.write_misses += sz->write_misses;
		L->st.rfo_misses += sz->rfo_misses;
		L->st.ifetch_misses += sz->ifetch_misses;
		L->st.fills += sz->fills;
	}
	L->st.evictions += c->stack_evictions[k];
	/* Only the cells in use: a trace may change phase every few accesses. */
	for (unsigned i = 0; i < c->stack_fill_nused; i++) {
		unsigned cell = c->stack_fill_used[i];
		const struct cache_traffic *f = &c->stack_fill[cell];
		struct cache_traffic *t = &p->per_array[cell / zones];

		if (cell % zones > k) {
			t->read_bytes += f->read_bytes;
			t->rfo_bytes += f->rfo_bytes;
			t->flush_read_bytes += f->flush_read_bytes;
		}
	}
}

/* Adds what the stack pass counted for all sizes at once (the reads and writes, which every
 * size counts alike; the misses, fills and evictions, by zone) to each size's model: before
 * anything that changes how a model counts (its phase) and before its counters are read. */
void
cache_stack_settle(struct cache *c)
{
	if (c->stack_unsettled) {
		unsigned zones = c->nfan + 1;

		for (unsigned k = 0; k < c->nfan; k++)
			settle_size(c, k);
		memset(c->stack_zone, 0, zones * sizeof(*c->stack_zone));
		for (unsigned i = 0; i < c->stack_fill_nused; i++)
			memset(&c->stack_fill[c->stack_fill_used[i]], 0, sizeof(*c->stack_fill));
		c->stack_fill_nused = 0;
		memset(c->stack_evictions, 0, c->nfan * sizeof(*c->stack_evictions));
		c->stack_unsettled = false;
	}
	if (c->stack_reads | c->stack_writes) {
		for (unsigned k = 0; k < c->nfan; k++) {
			struct level *L = &c->fan[k]->lv[c->fan_level];

			L->st.reads += c->stack_reads;
			L->st.writes += c->stack_writes;
		}
		c->stack_reads = c->stack_writes = 0;
	}
}

bool
cache_onepass_failed(const struct cache *c)
{
	return c->stack && stackdist_failed(c->stack);
}

/* Copies what c counted above the swept level (the levels, the processor, scratch bytes) into
 * model s: s then reads as a model run on its own. */
static void
copy_above(struct cache *c, struct cache *s)
{
	cache_sync_phase(c);
	cache_sync_phase(s);
	for (unsigned i = 0; i < c->nlv; i++) {
		/* Data levels keep their index; I1 is the last level of each model. */
		unsigned j = (int)i == c->icache ? (unsigned)s->icache : i;

		s->lv[j].st = c->lv[i].st;
		s->snap[j] = c->lv[i].st;
		for (unsigned p = 0; p < c->nphases && p < s->nphases; p++)
			s->phases[p].lvl[j] = c->phases[p].lvl[i];
	}
	s->cpu = c->cpu;
	for (unsigned a = 0; a < c->narrays && a < s->narrays; a++) {
		s->arrays[a].scratch_bytes[0] = c->arrays[a].scratch_bytes[0];
		s->arrays[a].scratch_bytes[1] = c->arrays[a].scratch_bytes[1];
	}
}

struct cache *
cache_onepass_take(struct cache *c, unsigned k)
{
	struct cache *s;

	if (k >= c->nfan || c->taken[k])
		return NULL;
	cache_stack_settle(c);
	s = c->fan[k];
	if (!c->forward)
		copy_above(c, s);
	c->taken[k] = true;
	return s;
}

unsigned
cache_onepass_slices_max(const struct cache_config *cfg, unsigned level, const uint64_t *sizes,
			 unsigned n, unsigned want, char *why, size_t whylen)
{
	unsigned k = cache_slices_max(cfg, want, why, whylen);

	if (k > 1 && level == 0) {
		snprintf(why, whylen,
			 "the swept level is L1: the threads split what leaves one L1");
		return 1;
	}
	for (unsigned i = 0; i < n && k > 1; i++) {
		struct cache_config one;
		char err[256], w[256];
		unsigned m;

		if (cache_config_resize(cfg, level, sizes[i], &one, err, sizeof(err)))
			return 1;
		m = cache_slices_max(&one, k, w, sizeof(w));
		if (m < k) {
			k = m;
			snprintf(why, whylen, "at %llu bytes, %s", (unsigned long long)sizes[i], w);
		}
	}
	return k;
}
