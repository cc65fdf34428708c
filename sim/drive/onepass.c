/*
 * One pass for many sizes of a level as a driver (sim/cache.h, cache_create_onepass()): which
 * method a sweep can take, the one-pass model (what leaves the levels above the swept one goes
 * to a model per size, or to one LRU stack pass that counts for all of them), its flush, the
 * hand-out of each size's model, and its sizes on slice threads (sim/drive/feed.h).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "sim/cache_internal.h"
#include "sim/drive/feed.h"
#include "sim/drive/stackdist.h"

/* Counts of a stack pass's references of one zone z, for each of the sizes 0 .. z-1. */
struct stack_zone {
	uint64_t read_misses, write_misses, rfo_misses, ifetch_misses, fills;
};

/* A one-pass model's state (c->mode): what leaves level fan_level - 1 (every access when
 * fan_level is 0) goes to each model of fan[], one per size of level fan_level, or, with
 * stack, to one LRU stack pass that counts into all of them. */
struct onepass {
	struct cache **fan;
	unsigned nfan, fan_level;
	bool forward; /* fan_level 0 without stack: the whole access goes to every model */
	bool *taken;  /* fan[k] handed out by cache_onepass_take() */
	struct stackdist *stack;
	unsigned *stack_order;            /* stack cache k is fan[stack_order[k]] */
	struct stackdist_victim *victims; /* per stack cache */
	/* Stack pass: reads and writes every size counts alike, not yet added to the models. */
	uint64_t stack_reads, stack_writes;
	/* Stack pass: what the sizes that missed count, by the reference's zone z (sizes 0 ..
	 * z-1 missed), not yet added to the models (cache_stack_settle()). */
	struct stack_zone *stack_zone;    /* [z], z = 0 .. nfan */
	struct cache_traffic *stack_fill; /* [array * (nfan + 1) + z]: the fills' bytes */
	unsigned *stack_fill_used;        /* the cells of stack_fill in use, in no order */
	unsigned stack_fill_nused;
	uint64_t *stack_evictions; /* [stack cache k] */
	bool stack_unsettled;
	/* The sizes on slice threads (cache_onepass_attach_threads()): what leaves the levels
	 * above goes to the slices' rings, not to fan or stack. */
	struct cache_feed *below;
};

static void cache_stack_settle(struct cache *c);
/* The drivers a one-pass model runs as (below): chosen by where the sizes lie. */
static const struct cache_drive forward_drive, top_drive, below_drive;

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
	 * sizes that change the ways), or a fixed associativity (sizes that change the set
	 * count). */
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
	struct onepass *op;
	struct cache *c;

	if (how == CACHE_ONEPASS_SEPARATE || how > can)
		return NULL;
	c = cache_build(cfg, level, CACHE_MAX_LEVELS);
	if (!c)
		return NULL;
	op = xzalloc(sizeof(*op));
	c->mode = op;
	if (level > 0)
		c->drive = &below_drive;
	else
		c->drive = how == CACHE_ONEPASS_FANOUT ? &forward_drive : &top_drive;
	op->fan_level = level;
	op->fan = xzalloc(n * sizeof(*op->fan));
	op->taken = xzalloc(n * sizeof(*op->taken));
	op->nfan = n;
	for (unsigned k = 0; k < n; k++) {
		struct cache_config one;
		char err[256];

		cache_config_resize(cfg, level, sizes[k], &one, err, sizeof(err));
		/* The stack holds the swept level's lines: its models only count. */
		op->fan[k] = cache_build(&one, one.levels,
					 how == CACHE_ONEPASS_STACK ? level : CACHE_MAX_LEVELS);
		if (!op->fan[k]) {
			cache_destroy(c);
			return NULL;
		}
	}
	op->forward = level == 0 && how == CACHE_ONEPASS_FANOUT;
	if (how == CACHE_ONEPASS_STACK) {
		uint32_t ways[STACKDIST_MAX_CACHES];
		uint64_t sets[STACKDIST_MAX_CACHES];

		op->stack_order = xzalloc(n * sizeof(*op->stack_order));
		op->victims = xzalloc(n * sizeof(*op->victims));
		stack_geometry(&cfg->level[level], sizes, n, op->stack_order, sets, ways);
		op->stack = stack_create(sets, ways, n);
		op->stack_zone = calloc(n + 1, sizeof(*op->stack_zone));
		op->stack_fill = calloc((CACHE_MAX_ARRAYS + 1) * (n + 1), sizeof(*op->stack_fill));
		op->stack_fill_used =
			calloc((CACHE_MAX_ARRAYS + 1) * (n + 1), sizeof(*op->stack_fill_used));
		op->stack_evictions = calloc(n, sizeof(*op->stack_evictions));
		if (!op->stack || !op->stack_zone || !op->stack_fill || !op->stack_fill_used ||
		    !op->stack_evictions) {
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

/* ---- the access path ---- */

/* One request of level-above traffic inside one line of the swept level, for every size at
 * once: what level_ref() does at a write-back, write-allocate LRU level above DRAM, with the
 * hit or miss and the victim of each size from the stack. */
static void
stack_ref(struct cache *c, uint64_t addr, uint32_t size, enum req req, uint32_t count,
	  unsigned flags)
{
	struct onepass *op = c->mode;
	const struct level *L0 = &op->fan[0]->lv[op->fan_level];
	unsigned shift = L0->line_shift;
	uint64_t line = addr >> shift, bytes = L0->cfg.line_bytes;
	bool write = req != REQ_READ;
	bool fetch = !write || size != bytes; /* a whole-line write needs no fetch */
	unsigned z = stackdist_ref(op->stack, line, write, op->victims);
	unsigned fill_flags = (flags | (write ? F_RFO : 0)) & (F_RFO | F_FLUSH);
	/* Every size's model has the arrays of this one, at the same indices: the line's array
	 * is looked up once for all the fills. */
	unsigned fill_array = z && fetch ? cache_array_of(c, addr & ~(bytes - 1)) : 0;
	struct stack_zone *sz;

	if (write)
		op->stack_writes += count;
	else
		op->stack_reads += count;
	if (z == 0)
		return;
	/* The misses and fills of sizes 0 .. z-1 are alike but for the size: counted once, by
	 * zone, and added to the sizes' models when they settle. */
	sz = &op->stack_zone[z];
	if (write) {
		sz->write_misses++;
	} else {
		sz->read_misses++;
		sz->rfo_misses += (flags & F_RFO) != 0;
		sz->ifetch_misses += (flags & F_IFETCH) != 0;
	}
	if (fetch) {
		unsigned cell = fill_array * (op->nfan + 1) + z;

		if (op->stack_fill[cell].read_bytes == 0)
			op->stack_fill_used[op->stack_fill_nused++] = cell;
		cache_traffic_add(&op->stack_fill[cell], bytes, false, fill_flags);
		sz->fills++;
	}
	op->stack_unsettled = true;
	/* The victims differ: sizes smallest first, the ones that missed are 0 .. z-1. */
	for (unsigned k = 0; k < z; k++) {
		const struct stackdist_victim *v = &op->victims[k];

		op->stack_evictions[k] += v->valid;
		if (v->valid && v->dirty) {
			struct cache *s = op->fan[op->stack_order[k]];
			struct level *L = &s->lv[op->fan_level];

			L->st.writebacks++;
			if (flags & F_FLUSH)
				L->st.flush_writebacks++;
			cache_dram_transfer(s, v->line << shift, bytes, true, flags & F_FLUSH);
		}
	}
}

static unsigned
fan_ref(struct cache *c, uint64_t addr, uint64_t size, enum req req, uint32_t count, unsigned flags)
{
	struct onepass *op = c->mode;

	flags &= ~F_COUNTED;
	if (op->below) {
		/* The sizes run on slice threads; their answer is always 0 (a swept level is
		 * never exclusive, and only an exclusive level hands a line up). */
		cache_feed_below(op->below, addr, size, req, count, flags);
		return 0;
	}
	if (op->stack) {
		uint64_t line_bytes = op->fan[0]->lv[op->fan_level].cfg.line_bytes;
		uint64_t last = addr + (size - 1);

		for (;;) {
			uint64_t piece_last = addr | (line_bytes - 1);

			if (piece_last > last)
				piece_last = last;
			stack_ref(c, addr, (uint32_t)(piece_last - addr + 1), req, count, flags);
			if (piece_last == last)
				break;
			addr = piece_last + 1;
		}
		return 0;
	}
	return cache_span_refs(op->fan, op->nfan, op->fan_level, addr, size, req, count, flags);
}

/* The whole access to every size's model (a fan-out of L1): each counts it all. */
static void
forward_access(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op, uint32_t count,
	       uint64_t bytes)
{
	const struct onepass *o = c->mode;

	for (unsigned k = 0; k < o->nfan; k++)
		cache_access_merged(o->fan[k], addr, size, op, count, bytes);
}

/* No level above the swept L1 (the stack pass): the plain model's counts, then the stack. */
static void
top_access(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op, uint32_t count,
	   uint64_t bytes)
{
	c->cpu.ops[op] += count;
	c->cpu.bytes[op] += bytes;
	if (op == CACHE_OP_IFETCH) {
		if (c->icache >= 0)
			cache_level_access(c, &c->lv[c->icache], addr, size, false, count,
					   F_IFETCH);
		return;
	}
	if (c->nscratch && cache_scratch_bytes(c, addr, op, bytes))
		return;
	fan_ref(c, addr, size, op == CACHE_OP_STORE ? REQ_WRITE : REQ_READ, count, 0);
}

/* A store's repeats settle above the swept level only: one that passes the last level would
 * reach the sizes. */
static bool
onepass_repeats(const struct cache *c, const uint64_t *addrs, const bool *stores, unsigned n)
{
	return cache_plain_repeats(c, addrs, stores, n, false);
}

/* ---- arrays, phases, flush ---- */

static void
onepass_array(struct cache *c, const char *name, uint64_t base, uint64_t bytes, bool scratch)
{
	struct onepass *op = c->mode;

	for (unsigned k = 0; k < op->nfan; k++)
		cache_add_array(op->fan[k], name, base, bytes, scratch);
	if (op->below)
		cache_feed_array(op->below, name, base, bytes);
}

static void
onepass_phase(struct cache *c, const char *name)
{
	struct onepass *op = c->mode;

	for (unsigned k = 0; k < op->nfan; k++)
		cache_add_phase(op->fan[k], name);
	if (op->below)
		cache_feed_phase(op->below, name);
}

static void
onepass_set_phase(struct cache *c, int phase)
{
	struct onepass *op = c->mode;

	if (op->below)
		cache_feed_set_phase(op->below, phase);
	cache_stack_settle(c); /* what the stack pass counted belongs to the phase that ends */
	for (unsigned k = 0; k < op->nfan; k++)
		cache_set_phase(op->fan[k], phase);
}

/* Adds what stack_ref() counted by zone to the model of stack cache k: the references of zones
 * above k missed in it. */
static void
settle_size(struct onepass *op, unsigned k)
{
	struct cache *s = op->fan[op->stack_order[k]];
	struct level *L = &s->lv[op->fan_level];
	struct phase *p = &s->phases[s->cur_phase];
	unsigned zones = op->nfan + 1;

	for (unsigned z = k + 1; z < zones; z++) {
		const struct stack_zone *sz = &op->stack_zone[z];

		L->st.read_misses += sz->read_misses;
		L->st.write_misses += sz->write_misses;
		L->st.rfo_misses += sz->rfo_misses;
		L->st.ifetch_misses += sz->ifetch_misses;
		L->st.fills += sz->fills;
	}
	L->st.evictions += op->stack_evictions[k];
	/* Only the cells in use: a trace may change phase every few accesses. */
	for (unsigned i = 0; i < op->stack_fill_nused; i++) {
		unsigned cell = op->stack_fill_used[i];
		const struct cache_traffic *f = &op->stack_fill[cell];
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
static void
cache_stack_settle(struct cache *c)
{
	struct onepass *op = c->mode;

	if (op->stack_unsettled) {
		unsigned zones = op->nfan + 1;

		for (unsigned k = 0; k < op->nfan; k++)
			settle_size(op, k);
		memset(op->stack_zone, 0, zones * sizeof(*op->stack_zone));
		for (unsigned i = 0; i < op->stack_fill_nused; i++)
			memset(&op->stack_fill[op->stack_fill_used[i]], 0, sizeof(*op->stack_fill));
		op->stack_fill_nused = 0;
		memset(op->stack_evictions, 0, op->nfan * sizeof(*op->stack_evictions));
		op->stack_unsettled = false;
	}
	if (op->stack_reads | op->stack_writes) {
		for (unsigned k = 0; k < op->nfan; k++) {
			struct level *L = &op->fan[k]->lv[op->fan_level];

			L->st.reads += op->stack_reads;
			L->st.writes += op->stack_writes;
		}
		op->stack_reads = op->stack_writes = 0;
	}
}

static void
stack_flush_line(void *ctx, uint64_t line, unsigned from)
{
	struct onepass *op = ctx;

	for (unsigned k = from; k < op->nfan; k++) {
		struct cache *s = op->fan[op->stack_order[k]];
		struct level *L = &s->lv[op->fan_level];

		L->st.writebacks++;
		L->st.flush_writebacks++;
		cache_dram_transfer(s, line << L->line_shift, L->cfg.line_bytes, true, F_FLUSH);
	}
}

/* The flush below the levels of a one-pass model: each size's levels, or the stack's lines. */
static void
onepass_flush(struct cache *c)
{
	struct onepass *op = c->mode;

	cache_stack_settle(c);
	if (op->stack) {
		stackdist_flush(op->stack, stack_flush_line, op);
	} else {
		for (unsigned k = 0; k < op->nfan; k++)
			cache_flush_levels(op->fan[k], op->fan_level);
	}
	for (unsigned k = 0; k < op->nfan; k++)
		cache_sync_phase(op->fan[k]);
}

static void
onepass_destroy(struct cache *c)
{
	struct onepass *op = c->mode;

	for (unsigned k = 0; k < op->nfan; k++)
		if (!op->taken[k])
			cache_destroy(op->fan[k]);
	free(op->fan);
	free(op->taken);
	stackdist_destroy(op->stack);
	free(op->stack_order);
	free(op->victims);
	free(op->stack_zone);
	free(op->stack_fill);
	free(op->stack_fill_used);
	free(op->stack_evictions);
	free(op);
}

/* Fan-out of L1: nothing of its own. */
static const struct cache_drive forward_drive = {
	.access = forward_access,
	.refs = cache_refs_each,
	.below = cache_dram_below,
	.array = onepass_array,
	.phase = onepass_phase,
	.set_phase = onepass_set_phase,
	.flush = onepass_flush,
	.destroy = onepass_destroy,
};

/* The stack pass over L1: no level above. */
static const struct cache_drive top_drive = {
	.access = top_access,
	.refs = cache_refs_each,
	.below = fan_ref,
	.array = onepass_array,
	.phase = onepass_phase,
	.set_phase = onepass_set_phase,
	.flush = onepass_flush,
	.destroy = onepass_destroy,
};

/* The levels above the swept one run the plain path; the sizes lie below them. */
static const struct cache_drive below_drive = {
	.access = cache_plain_access,
	.refs = cache_plain_refs,
	.below = fan_ref,
	.repeats = onepass_repeats,
	.array = onepass_array,
	.phase = onepass_phase,
	.set_phase = onepass_set_phase,
	.flush = onepass_flush,
	.destroy = onepass_destroy,
	.inline_l1 = true,
};

static bool
is_onepass(const struct cache *c)
{
	return c->drive == &forward_drive || c->drive == &top_drive || c->drive == &below_drive;
}

bool
cache_onepass_failed(const struct cache *c)
{
	const struct onepass *op = c->mode;

	return is_onepass(c) && op->stack && stackdist_failed(op->stack);
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

/* A fan-out of L1's own counts, the scratch accesses it was told of (cache_scratch_add()),
 * added to model s, which counted every other access itself. */
static void
add_scratch(const struct cache *c, struct cache *s)
{
	for (unsigned i = 0; i < CACHE_OP_COUNT; i++) {
		s->cpu.ops[i] += c->cpu.ops[i];
		s->cpu.bytes[i] += c->cpu.bytes[i];
	}
	s->cpu.scratch_read_bytes += c->cpu.scratch_read_bytes;
	s->cpu.scratch_write_bytes += c->cpu.scratch_write_bytes;
	for (unsigned a = 0; a < c->narrays && a < s->narrays; a++) {
		s->arrays[a].scratch_bytes[0] += c->arrays[a].scratch_bytes[0];
		s->arrays[a].scratch_bytes[1] += c->arrays[a].scratch_bytes[1];
	}
}

struct cache *
cache_onepass_take(struct cache *c, unsigned k)
{
	struct onepass *op = c->mode;
	struct cache *s;

	if (!is_onepass(c) || k >= op->nfan || op->taken[k])
		return NULL;
	cache_stack_settle(c);
	s = op->fan[k];
	if (op->forward)
		add_scratch(c, s);
	else
		copy_above(c, s);
	op->taken[k] = true;
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

/* ---- the sizes on slice threads ---- */

/* cache_create_onepass()'s arguments, for each slice's model. */
struct onepass_sizes {
	const struct cache_config *cfg;
	unsigned level;
	const uint64_t *sizes;
	unsigned n;
	enum cache_onepass how;
};

static struct cache *
make_slice(void *ctx)
{
	const struct onepass_sizes *z = ctx;

	return cache_create_onepass(z->cfg, z->level, z->sizes, z->n, z->how);
}

int
cache_onepass_attach_threads(struct cache *c, const struct cache_config *cfg, unsigned level,
			     const uint64_t *sizes, unsigned n, enum cache_onepass how,
			     unsigned threads, char *err, size_t errlen)
{
	struct onepass *op = c->mode;
	struct onepass_sizes z = { cfg, level, sizes, n, how };

	op->below = cache_feed_start_models(cfg, threads, make_slice, &z,
					    cache_onepass_bytes(cfg, level, sizes, n, how), err,
					    errlen);
	return op->below ? 0 : -ENOMEM;
}

/* Adds what slice model s counted for each size to c's: -ENOMEM where its stack ran out of
 * memory, -1 where it saw other sizes, arrays or phases. */
static int
add_slice_sizes(struct cache *c, struct cache *s)
{
	struct onepass *op = c->mode, *so = s->mode;

	if (cache_onepass_failed(s))
		return -ENOMEM;
	cache_stack_settle(s);
	if (so->nfan != op->nfan)
		return -1;
	for (unsigned k = 0; k < op->nfan; k++)
		if (cache_add_slice(op->fan[k], so->fan[k]))
			return -1;
	return 0;
}

int
cache_onepass_detach_threads(struct cache *c, bool flush, char *err, size_t errlen)
{
	struct onepass *op = c->mode;
	struct cache_feed *f = op->below;
	unsigned k = cache_feed_slices(f);
	int rc = 0;

	op->below = NULL;
	cache_feed_stop(f, flush);
	cache_stack_settle(c);
	/* What each thread's stack pass counted, settled; then each size's models added up. */
	for (unsigned i = 0; i < k && !rc; i++) {
		rc = add_slice_sizes(c, cache_feed_slice_model(f, i));
		if (rc == -ENOMEM)
			snprintf(err, errlen,
				 "memory ran out during the one pass (thread %u of %u)", i + 1, k);
		else if (rc)
			snprintf(err, errlen, "internal: thread %u saw other arrays or phases",
				 i + 1);
	}
	cache_feed_free(f);
	return rc;
}
