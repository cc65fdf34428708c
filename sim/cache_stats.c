/*
 * Notes:
 *  - A line is named by its line address (addr >> line_shift). A set's slots hold
 *    (line << 1) | dirty, or TAG_INVALID when empty.
 *  - LRU and FIFO keep each set's slots in order, most recently used (LRU) or newest (FIFO)
 *    first, the valid slots a prefix; so the victim is always the last slot and an LRU hit on
 *    slot 0 changes nothing. Random and tree-PLRU keep lines in fixed slots and fill the first
 *    empty slot before evicting anything.
 *  - A miss that allocates takes its victim out of the set, sends the fetch below, installs
 *    the line, and only then writes the victim back (or hands it to an exclusive level below):
 *    Dinero IV's order (its pending stack is LIFO and the copy-back is pushed first), so after
 *    an L1 miss the level below has the victim's line as its most recent.
 *  - A write-back from above is a write access to the level below (Dinero IV): it updates
 *    recency, and on a miss a write-allocate level allocates the line, fetching it first only
 *    if the write does not cover the whole line. A level marked quiet_writebacks instead marks
 *    a present line dirty without touching recency and passes an absent one down, which is how
 *    Cachegrind (which ignores write-backs) behaves.
 *  - The final flush writes dirty lines back level by level from L1 down; inside a level it
 *    goes from the last set to the first and, inside a set, from the least recent slot up:
 *    the order in which Dinero IV's end-of-trace copy-back reaches the level below.
 *  - An access that straddles lines touches every line it spans and counts once per line,
 *    except on a straddle_once level, which counts an access over two lines as Cachegrind
 *    does (cg_sim.c cachesim_ref_is_miss()): one reference, a miss if either line misses, and
 *    on a miss the level below is referenced with both lines, the one that hit too, again as
 *    one reference where that level counts once. Lines still move one by one: fills,
 *    evictions, write-backs and DRAM bytes are per line.
 *  - Merged repeats (count > 1): the first access is simulated and the others are hits on the
 *    line it just made most recent, which changes no replacement state under any policy here.
 *    Where repeats still travel (write-through, a no-write-allocate miss) they travel with
 *    their count.
 *  - Write-validate keeps a valid-bit per granule (a byte for lines up to 64 bytes, line/64
 *    bytes above): a store miss allocates without a fetch; a load that touches a granule no
 *    store made valid fetches the line then (counted as a read miss and a fill). Dirty lines
 *    are written back whole.
 *  - DRAM bytes: a fill moves the requesting level's line; a write-back moves a line; a write
 *    that passes the last level (write-through, no-write-allocate) moves its own bytes.
 */

#include "sim/cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/name_index.h"
#include "sim/sample.h"
#include "sim/stackdist.h"
#include "sim/util.h"

#define TAG_INVALID UINT64_MAX
#define INDEX_WAYS 64 /* above this, a level keeps a hash index instead of scanning sets */
#define NIL UINT32_MAX
#define MAX_LINES (UINT64_C(1) << 27) /* 1 GiB of tags: beyond that, refuse to simulate */

enum req {
	REQ_READ,      /* a load, or a fill requested by the level above */
	REQ_WRITE,     /* a store, or a write passed through from above */
	REQ_WRITEBACK, /* a dirty line evicted by the level above */
	REQ_VICTIM,    /* a line evicted by the level above into this exclusive level */
};

enum {
	F_RFO = 1u << 0,       /* the read serves a write miss above */
	F_IFETCH = 1u << 1,    /* the read serves an instruction fetch */
	F_FLUSH = 1u << 2,     /* traffic caused by the final flush */
	F_DIRTY = 1u << 3,     /* REQ_VICTIM: the line handed down is dirty */
	F_COUNTED = 1u << 4,   /* the caller already counted this read or write */
	F_FETCH = 1u << 5,     /* allocate(): fetch the line from below first */
	F_NEW_DIRTY = 1u << 6, /* allocate(): install the line dirty */
};

#define RES_DIRTY 1u /* a read at an exclusive level handed up a dirty line */

struct level {
	struct cache_level_config cfg;
	uint64_t *tags;
	uint64_t *mask; /* write-validate: valid granules per slot */
	uint8_t *plru;  /* tree-PLRU: node bits per set, nodes 1 .. ways-1 */
	uint32_t ways;
	uint64_t set_mask;
	unsigned line_shift;
	unsigned granule_shift;
	uint64_t full_mask;
	uint64_t rng;
	int below;           /* index of the level below, or -1 for DRAM */
	struct level *lower; /* the level below, or NULL for DRAM */
	bool lower_whole;    /* a line of this level lies inside one line of the level below */
	bool below_exclusive;
	bool ordered;   /* LRU or FIFO, few ways: slots kept in order */
	bool lru_order; /* ordered and LRU: a hit moves the line to slot 0 */
	/* No inclusive level below, so nothing back-invalidates this level's lines while one of
	 * its misses waits on the fetch: a victim may keep its slot until the new line takes it,
	 * instead of leaving the set first (not for an indexed level, whose free list and hash
	 * index must lose the victim first). */
	bool keep_victim;
	/* More than INDEX_WAYS ways (fully associative caches): a hash index from line to slot,
	 * and per-set lists in recency (LRU) or insertion (FIFO) order, so nothing is O(ways). */
	bool indexed;
	uint32_t *hash; /* slot + 1, or 0 for empty; linear probing */
	uint64_t hash_mask;
	unsigned hash_shift;
	uint32_t *prev, *next; /* list links per slot; free slots are chained through next */
	uint32_t *head, *tail, *free_head; /* per set */
	bool fast_read, fast_write;
	struct cache_level_stats st;
};

struct array {
	char name[CACHE_NAME_MAX];
	uint64_t base, len; /* [base, base + len): tested as addr - base < len, which cannot wrap */
	bool scratch;
	struct cache_traffic traffic;
	uint64_t scratch_bytes[2];
};

struct phase {
	char name[CACHE_NAME_MAX];
	struct cache_traffic traffic;
	struct cache_traffic per_array[CACHE_MAX_ARRAYS + 1];
	struct cache_level_stats lvl[CACHE_MAX_LEVELS + 1];
};

struct cache {
	struct cache_config cfg;
	struct level lv[CACHE_MAX_LEVELS + 1];
	unsigned nlv;
	unsigned
		ndata; /* data levels simulated here: cfg.levels, or a one-pass model's fan_level */
	/* A one-pass model (cache_create_onepass()): what leaves level fan_level - 1 (every access
	 * when fan_level is 0) goes to each model of fan[], one per size of level fan_level, or,
	 * with stack, to one LRU stack pass that counts into all of them. */
	struct cache **fan;
	unsigned nfan, fan_level;
	bool forward; /* fan_level 0 without stack: the whole access goes to every model */
	struct stackdist *stack;
	unsigned *stack_order;            /* stack cache k is fan[stack_order[k]] */
	struct stackdist_victim *victims; /* per stack cache */
	bool *taken;                      /* fan[k] handed out by cache_onepass_take() */
	/* Stack pass: reads and writes every size counts alike, not yet added to the models. */
	uint64_t stack_reads, stack_writes;
	int icache; /* index of I1 in lv, or -1 */
	struct cache_traffic dram;
	struct cache_cpu_stats cpu;
	struct array arrays[CACHE_MAX_ARRAYS + 1];
	unsigned narrays;
	unsigned nscratch;
	uint64_t scratch_lo, scratch_len; /* the span of every scratch range: outside it, none */
	unsigned last_array, prev_array;  /* find_array()'s guesses; 0 is none */
	struct phase *phases;
	unsigned nphases, phases_cap;
	struct name_index phase_names; /* named phases (1 ..) by name */
	unsigned cur_phase;
	struct cache_level_stats snap[CACHE_MAX_LEVELS + 1];
	/* Set sampling: an access reaches the caches when (addr >> sample_shift) & sample_mask
	 * is sample_residue. sample_mask 0: every access. */
	unsigned sample_shift;
	uint64_t sample_mask, sample_residue;
	bool sample_scaled;
	struct sample_units sample_units; /* DRAM bytes per sampled chunk: the estimate's error */
};

static const char *repl_names[] = { "lru", "fifo", "random", "plru" };
static const char *write_names[] = { "wb", "wt" };
static const char *alloc_names[] = { "wa", "nwa", "wv" };
static const char *incl_names[] = { "nine", "incl", "excl" };

const char *
cache_repl_str(enum cache_repl r)
{
	return repl_names[r];
}

const char *
cache_write_str(enum cache_write_policy w)
{
	return write_names[w];
}

const char *
cache_alloc_str(enum cache_alloc_policy a)
{
	return alloc_names[a];
}

const char *
cache_inclusion_str(enum cache_inclusion i)
{
	return incl_names[i];
}

/* ---- validation ---- */

static int
check_geometry(const struct cache_level_config *l, char *err, size_t errlen)
{
	uint64_t lines, ways, sets;

	if (l->line_bytes == 0 || !is_pow2(l->line_bytes)) {
		snprintf(err, errlen, "%s: line size %u is not a power of two", l->name,
			 l->line_bytes);
		return -EINVAL;
	}
	if (l->size_bytes == 0) {
		snprintf(err, errlen, "%s: size is zero", l->name);
		return -EINVAL;
	}
	if (l->line_bytes > l->size_bytes) {
		snprintf(err, errlen, "%s: line (%u B) is larger than the cache (%llu B)", l->name,
			 l->line_bytes, (unsigned long long)l->size_bytes);
		return -EINVAL;
	}
	if (l->size_bytes % l->line_bytes) {
		snprintf(err, errlen, "%s: size %llu B is not a whole number of %u B lines",
			 l->name, (unsigned long long)l->size_bytes, l->line_bytes);
		return -EINVAL;
	}
	lines = l->size_bytes / l->line_bytes;
	if (lines > MAX_LINES) {
		snprintf(err, errlen, "%s: %llu lines is more than memsim simulates (%llu)",
			 l->name, (unsigned long long)lines, (unsigned long long)MAX_LINES);
		return -EINVAL;
	}
	ways = l->fully_assoc ? lines : l->assoc;
	if (ways == 0) {
		snprintf(err, errlen, "%s: associativity is zero", l->name);
		return -EINVAL;
	}
	if (ways > lines || lines % ways) {
		snprintf(err, errlen, "%s: %llu ways do not divide the %llu lines", l->name,
			 (unsigned long long)ways, (unsigned long long)lines);
		return -EINVAL;
	}
	sets = lines / ways;
	if (!is_pow2(sets)) {
		snprintf(err, errlen, "%s: %llu sets (size / (ways x line)) is not a power of two",
			 l->name, (unsigned long long)sets);
		return -EINVAL;
	}
	if (l->repl == CACHE_REPL_PLRU && !is_pow2(ways)) {
		snprintf(err, errlen, "%s: plru needs a power-of-two number of ways, not %llu",
			 l->name, (unsigned long long)ways);
		return -EINVAL;
	}
	return 0;
}

/* The largest line of the data levels and I1, as a shift (set sampling's chunk). */
static unsigned
chunk_shift(const struct cache_config *cfg)
{
	unsigned s = 0;

	for (unsigned i = 0; i < cfg->levels; i++)
		if (log2_u64(cfg->level[i].line_bytes) > s)
			s = log2_u64(cfg->level[i].line_bytes);
	if (cfg->has_icache && log2_u64(cfg->icache.line_bytes) > s)
		s = log2_u64(cfg->icache.line_bytes);
	return s;
}

/* Set sampling keeps 1 set in k of a level only when its set index holds the chunk's bits
 * that pick the residue: sets >= k x (chunk / line). */
static int
check_sampling_level(const struct cache_level_config *l, unsigned chunk, uint32_t k, char *err,
		     size_t errlen)
{
	uint64_t lines = l->size_bytes / l->line_bytes;
	uint64_t sets = lines / (l->fully_assoc ? lines : l->assoc);
	uint64_t need = (uint64_t)k << (chunk - log2_u64(l->line_bytes));

	if (l->fully_assoc || sets == 1) {
		snprintf(err, errlen,
			 "--sample-sets %u: %s is fully associative (one set): there are no sets "
			 "to sample",
			 k, l->name);
		return -EINVAL;
	}
	if (sets < need) {
		snprintf(err, errlen,
			 "--sample-sets %u: %s has %llu sets; sampling 1 set in %u needs %llu or "
			 "more",
			 k, l->name, (unsigned long long)sets, k, (unsigned long long)need);
		return -EINVAL;
	}
	return 0;
}

static int
check_sampling(const struct cache_config *cfg, char *err, size_t errlen)
{
	uint32_t k = cfg->sample_sets;
	unsigned chunk;
	int rc;

	if (k <= 1)
		return 0;
	chunk = chunk_shift(cfg); /* every line size checked by now */
	if (!is_pow2(k) || k > (UINT32_C(1) << 20)) {
		snprintf(err, errlen, "--sample-sets %u: not a power of two from 2 to 2^20", k);
		return -EINVAL;
	}
	if (cfg->levels == 0) {
		snprintf(err, errlen, "--sample-sets %u: no cache, no sets to sample", k);
		return -EINVAL;
	}
	for (unsigned i = 0; i < cfg->levels; i++)
		if ((rc = check_sampling_level(&cfg->level[i], chunk, k, err, errlen)))
			return rc;
	if (cfg->has_icache)
		return check_sampling_level(&cfg->icache, chunk, k, err, errlen);
	return 0;
}

int
cache_config_validate(const struct cache_config *cfg, char *err, size_t errlen)
{
	int rc;

	if (cfg->levels > CACHE_MAX_LEVELS) {
		snprintf(err, errlen, "%u cache levels; at most %d are supported", cfg->levels,
			 CACHE_MAX_LEVELS);
		return -EINVAL;
	}
	for (unsigned i = 0; i < cfg->levels; i++) {
		const struct cache_level_config *l = &cfg->level[i];
		const struct cache_level_config *up = i ? &cfg->level[i - 1] : NULL;

		if ((rc = check_geometry(l, err, errlen)))
			return rc;
		if (!up && l->inclusion != CACHE_INCL_NINE) {
			snprintf(err, errlen, "%s: '%s' needs a level above it", l->name,
				 cache_inclusion_str(l->inclusion));
			return -EINVAL;
		}
		if (!up && l->quiet_writebacks) {
			snprintf(err, errlen, "%s: 'quietwb' needs a level above it", l->name);
			return -EINVAL;
		}
		if (l->inclusion == CACHE_INCL_EXCLUSIVE) {
			if (up->line_bytes != l->line_bytes) {
				snprintf(
					err, errlen,
					"%s: 'excl' needs the same line size as %s (%u B, not %u B)",
					l->name, up->name, up->line_bytes, l->line_bytes);
				return -EINVAL;
			}
			if (up->write == CACHE_WRITE_THROUGH) {
				snprintf(err, errlen,
					 "%s: 'excl' below a write-through %s is not supported",
					 l->name, up->name);
				return -EINVAL;
			}
			if (l->quiet_writebacks) {
				snprintf(err, errlen, "%s: 'excl' and 'quietwb' do not combine",
					 l->name);
				return -EINVAL;
			}
		}
		if (l->inclusion == CACHE_INCL_INCLUSIVE) {
			for (unsigned j = 0; j < i; j++) {
				if (cfg->level[j].line_bytes > l->line_bytes) {
					snprintf(err, errlen,
						 "%s: 'incl' needs lines at least as large as %s's",
						 l->name, cfg->level[j].name);
					return -EINVAL;
				}
			}
			if (cfg->has_icache && i >= 1 && cfg->icache.line_bytes > l->line_bytes) {
				snprintf(err, errlen,
					 "%s: 'incl' needs lines at least as large as I1's",
					 l->name);
				return -EINVAL;
			}
		}
	}
	if (cfg->has_icache) {
		const struct cache_level_config *l = &cfg->icache;

		if ((rc = check_geometry(l, err, errlen)))
			return rc;
		if (l->inclusion != CACHE_INCL_NINE || l->quiet_writebacks) {
			snprintf(err, errlen, "I1: inclusion and write-back words do not apply");
			return -EINVAL;
		}
		if (cfg->levels == 0) {
			snprintf(err, errlen, "I1 needs an L1 beside it");
			return -EINVAL;
		}
		if (cfg->levels >= 2 && cfg->level[1].inclusion == CACHE_INCL_EXCLUSIVE) {
			snprintf(err, errlen, "L2: 'excl' with an I1 above is not supported");
			return -EINVAL;
		}
	}
	/* Last: it takes every level's line size, so an I1 with no line must be refused first. */
	return check_sampling(cfg, err, errlen);
}

/* ---- construction ---- */

/* The bytes of level_init()'s arrays for cfg (valid), for index_ways. */
static uint64_t
level_bytes(const struct cache_level_config *cfg, uint32_t index_ways)
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
	L->tags = malloc(lines * sizeof(uint64_t));
	if (cfg->alloc == CACHE_ALLOC_VALIDATE)
		L->mask = calloc(lines, sizeof(uint64_t));
	if (cfg->repl == CACHE_REPL_PLRU)
		L->plru = calloc(sets, L->ways);
	if (L->indexed) {
		uint64_t hsize = UINT64_C(1) << (log2_u64(lines) + 1);

		L->hash = calloc(hsize, sizeof(*L->hash));
		L->hash_mask = hsize - 1;
		L->hash_shift = 64 - log2_u64(hsize);
		L->prev = calloc(lines, sizeof(*L->prev));
		L->next = calloc(lines, sizeof(*L->next));
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

static const char *
phase_name_at(const void *owner, uint32_t i)
{
	return ((const struct cache *)owner)->phases[i].name;
}

/* A model of cfg's levels 0 .. ndata-1 (and I1); below the last of them lies DRAM, or, in a
 * one-pass model, the models of its fan. Level `bare` (CACHE_MAX_LEVELS: none) gets no arrays
 * (level_init()). NULL when memory is short. */
static struct cache *
build(const struct cache_config *cfg, unsigned ndata, unsigned bare)
{
	struct cache *c = xzalloc(sizeof(*c));

	c->cfg = *cfg;
	c->ndata = ndata;
	if (cfg->sample_sets > 1) {
		c->sample_shift = chunk_shift(cfg);
		c->sample_mask = cfg->sample_sets - 1;
		c->sample_residue = CACHE_SAMPLE_RESIDUE(cfg->sample_sets);
		sample_units_init(&c->sample_units, c->sample_shift);
	}
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
	snprintf(c->arrays[0].name, sizeof(c->arrays[0].name), "other");
	c->narrays = 1;
	c->phases_cap = 8;
	c->phases = xzalloc(c->phases_cap * sizeof(*c->phases));
	snprintf(c->phases[0].name, sizeof(c->phases[0].name), "(none)");
	c->nphases = 1;
	name_index_init(&c->phase_names, c, phase_name_at);
	return c;
}

struct cache *
cache_create(const struct cache_config *cfg)
{
	char err[256];

	if (cache_config_validate(cfg, err, sizeof(err)))
		return NULL;
	return build(cfg, cfg->levels, CACHE_MAX_LEVELS);
}

uint64_t
cache_model_bytes(const struct cache_config *cfg)
{
	uint64_t bytes = sizeof(struct cache) + 8 * sizeof(struct phase);

	for (unsigned i = 0; i < cfg->levels; i++)
		bytes += level_bytes(&cfg->level[i], cfg->index_ways);
	if (cfg->has_icache)
		bytes += level_bytes(&cfg->icache, cfg->index_ways);
	return bytes;
}

void
cache_destroy(struct cache *c)
{
	if (!c)
		return;
	for (unsigned k = 0; k < c->nfan; k++)
		if (!c->taken[k])
			cache_destroy(c->fan[k]);
	free(c->fan);
	free(c->taken);
	stackdist_destroy(c->stack);
	free(c->stack_order);
	free(c->victims);
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
	sample_units_finish(&c->sample_units);
	free(c);
}

const struct cache_config *
cache_get_config(const struct cache *c)
{
	return &c->cfg;
}

/* ---- accounting ---- */

static unsigned
find_array(struct cache *c, uint64_t addr)
{
	const struct array *a = &c->arrays[c->last_array];

	if (c->last_array && addr - a->base < a->len)
		return c->last_array;
	/* Loops walk two or three arrays in turn: the one before the last is the next guess. */
	a = &c->arrays[c->prev_array];
	if (c->prev_array && addr - a->base < a->len) {
		unsigned i = c->prev_array;

		c->prev_array = c->last_array;
		c->last_array = i;
		return i;
	}
	for (unsigned i = c->narrays; i-- > 1;) {
		a = &c->arrays[i];
		if (addr - a->base < a->len) {
			c->prev_array = c->last_array;
			c->last_array = i;
			return i;
		}
	}
	return 0;
}

static void
traffic_add(struct cache_traffic *t, uint64_t bytes, bool write, unsigned flags)
{
	if (write) {
		t->write_bytes += bytes;
		if (flags & F_FLUSH)
			t->flush_write_bytes += bytes;
	} else {
		t->read_bytes += bytes;
		if (flags & F_RFO)
			t->rfo_bytes += bytes;
		if (flags & F_FLUSH)
			t->flush_read_bytes += bytes;
	}
}

static void
dram_transfer(struct cache *c, uint64_t addr, uint64_t bytes, bool write, unsigned flags)
{
	unsigned a = find_array(c, addr);
	struct phase *p = &c->phases[c->cur_phase];

	/* Only the (phase, array) cell: the totals are summed from the cells when asked for. */
	traffic_add(&p->per_array[a], bytes, write, flags);
	if (c->sample_units.bytes)
		sample_units_add(&c->sample_units, addr, bytes);
}

/* ---- set operations ---- */

static inline int
scan_way(const uint64_t *set, uint32_t ways, uint64_t line)
{
	size_t i = 0;

	/* Four slots a step, so the loop's own test and count come once per four slots: on a
	 * miss of a 16-way level the loop was a third of the lookup. (A size_t index: with a
	 * 32-bit one the compiler widens each i + k on its own.) */
	for (; i + 4 <= ways; i += 4) {
		if ((set[i] >> 1) == line)
			return (int)i;
		if ((set[i + 1] >> 1) == line)
			return (int)i + 1;
		if ((set[i + 2] >> 1) == line)
			return (int)i + 2;
		if ((set[i + 3] >> 1) == line)
			return (int)i + 3;
	}
	for (; i < ways; i++)
		if ((set[i] >> 1) == line)
			return (int)i;
	return -1;
}

/* -- the index of high-associativity levels -- */

static inline uint64_t
hash_home(const struct level *L, uint64_t line)
{
	return (line * UINT64_C(0x9e3779b97f4a7c15)) >> L->hash_shift;
}

static int
index_find(const struct level *L, uint64_t set_idx, uint64_t line)
{
	for (uint64_t i = hash_home(L, line);; i = (i + 1) & L->hash_mask) {
		uint32_t h = L->hash[i];

		if (h == 0)
			return -1;
		if ((L->tags[h - 1] >> 1) == line)
			return (int)(h - 1 - set_idx * L->ways);
	}
}

static void
index_insert(struct level *L, uint64_t line, uint32_t g)
{
	uint64_t i = hash_home(L, line);

	while (L->hash[i])
		i = (i + 1) & L->hash_mask;
	L->hash[i] = g + 1;
}

/* Linear-probing removal with backward shift: later entries of the run move into the hole
 * when their home position allows it, so lookups never need tombstones. */
static void
index_remove(struct level *L, uint64_t line)
{
	uint64_t i = hash_home(L, line), j;

	while ((L->tags[L->hash[i] - 1] >> 1) != line)
		i = (i + 1) & L->hash_mask;
	for (j = i;;) {
		uint64_t k;

		j = (j + 1) & L->hash_mask;
		if (L->hash[j] == 0)
			break;
		k = hash_home(L, L->tags[L->hash[j] - 1] >> 1);
		/* Move entry j into hole i unless its home lies cyclically in (i, j]. */
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			L->hash[i] = L->hash[j];
			i = j;
		}
	}
	L->hash[i] = 0;
}

static void
list_unlink(struct level *L, uint64_t set_idx, uint32_t g)
{
	uint32_t p = L->prev[g], n = L->next[g];

	if (p == NIL)
		L->head[set_idx] = n;
	else
		L->next[p] = n;
	if (n == NIL)
		L->tail[set_idx] = p;
	else
		L->prev[n] = p;
}

static void
list_push_front(struct level *L, uint64_t set_idx, uint32_t g)
{
	uint32_t h = L->head[set_idx];

	L->prev[g] = NIL;
	L->next[g] = h;
	if (h == NIL)
		L->tail[set_idx] = g;
	else
		L->prev[h] = g;
	L->head[set_idx] = g;
}

static inline int
find_way(const struct level *L, const uint64_t *set, uint64_t set_idx, uint64_t line)
{
	return L->indexed ? index_find(L, set_idx, line) : scan_way(set, L->ways, line);
}

static void
plru_touch(struct level *L, uint64_t set_idx, uint32_t way)
{
	uint8_t *bits = L->plru + set_idx * L->ways;
	unsigned depth = log2_u64(L->ways);
	unsigned node = 1;

	/* Each node points to the half that holds the next victim: away from this way. */
	for (unsigned d = depth; d-- > 0;) {
		unsigned go = (way >> d) & 1;

		bits[node] = (uint8_t)!go;
		node = node * 2 + go;
	}
}

static uint32_t
plru_victim(const struct level *L, uint64_t set_idx)
{
	const uint8_t *bits = L->plru + set_idx * L->ways;
	unsigned node = 1;

	while (node < L->ways)
		node = node * 2 + bits[node];
	return node - L->ways;
}

static uint64_t
rng_next(struct level *L)
{
	/* xorshift64*: small, fast and reproducible from the seed. */
	L->rng ^= L->rng >> 12;
	L->rng ^= L->rng << 25;
	L->rng ^= L->rng >> 27;
	return L->rng * UINT64_C(2685821657736338717);
}

/* Set slots move by one place on LRU hits, installs and removals. Sets are short, and a libc
 * memmove call costs more than the move, so the moves are fixed-size copies that the compiler
 * keeps inline as a few vector loads and stores: blocks of 8 slots, then two copies that may
 * overlap for the rest. Each copy loads all its slots before it stores any, so a block may
 * overlap its own destination; blocks go in the order that leaves their sources unwritten.
 * (A plain loop of slot moves costs about four instructions a slot, and one the compiler
 * recognises as a copy becomes a memmove call.) */

/* s[1 .. n] = s[0 .. n-1] */
static inline void
slots_up(uint64_t *s, uint32_t n)
{
	/* The top 8 first: what is left below them stays unwritten. */
	for (; n > 8; n -= 8) {
		uint64_t a[8];

		memcpy(a, s + n - 8, sizeof(a));
		memcpy(s + n - 7, a, sizeof(a));
	}
	if (n >= 4) {
		uint64_t a[4], b[4];

		memcpy(a, s, sizeof(a));
		memcpy(b, s + n - 4, sizeof(b));
		memcpy(s + 1, a, sizeof(a));
		memcpy(s + n - 3, b, sizeof(b));
	} else if (n >= 2) {
		uint64_t a[2], b[2];

		memcpy(a, s, sizeof(a));
		memcpy(b, s + n - 2, sizeof(b));
		memcpy(s + 1, a, sizeof(a));
		memcpy(s + n - 1, b, sizeof(b));
	} else if (n == 1) {
		s[1] = s[0];
	}
}

/* s[0 .. n-1] = s[1 .. n] */
static inline void
slots_down(uint64_t *s, uint32_t n)
{
	/* The bottom 8 first: what is left above them stays unwritten. */
	for (; n > 8; n -= 8, s += 8) {
		uint64_t a[8];

		memcpy(a, s + 1, sizeof(a));
		memcpy(s, a, sizeof(a));
	}
	if (n >= 4) {
		uint64_t a[4], b[4];

		memcpy(a, s + 1, sizeof(a));
		memcpy(b, s + n - 3, sizeof(b));
		memcpy(s, a, sizeof(a));
		memcpy(s + n - 4, b, sizeof(b));
	} else if (n >= 2) {
		uint64_t a[2], b[2];

		memcpy(a, s + 1, sizeof(a));
		memcpy(b, s + n - 1, sizeof(b));
		memcpy(s, a, sizeof(a));
		memcpy(s + n - 2, b, sizeof(b));
	} else if (n == 1) {
		s[0] = s[1];
	}
}

/* touch() for indexed, random and tree-PLRU levels. */
static uint32_t
touch_other(struct level *L, uint64_t set_idx, uint32_t w)
{
	if (L->indexed) {
		uint32_t g = (uint32_t)(set_idx * L->ways + w);

		if (L->cfg.repl == CACHE_REPL_LRU && L->head[set_idx] != g) {
			list_unlink(L, set_idx, g);
			list_push_front(L, set_idx, g);
		} else if (L->cfg.repl == CACHE_REPL_PLRU) {
			plru_touch(L, set_idx, w);
		}
		return w;
	}
	if (L->cfg.repl == CACHE_REPL_PLRU)
		plru_touch(L, set_idx, w);
	return w;
}

/* Marks slot w used; returns where the line sits afterwards. */
static inline uint32_t
touch(struct level *L, uint64_t *set, uint64_t set_idx, uint32_t w)
{
	if (L->lru_order) {
		if (w > 0) {
			uint64_t e = set[w];

			slots_up(set, w);
			set[0] = e;
			if (L->mask) {
				uint64_t *m = L->mask + set_idx * L->ways;
				uint64_t me = m[w];

				slots_up(m, w);
				m[0] = me;
			}
		}
		return 0;
	}
	if (L->ordered)
		return w; /* FIFO: a hit changes nothing */
	return touch_other(L, set_idx, w);
}

static void
remove_slot(struct level *L, uint64_t *set, uint64_t set_idx, uint32_t w)
{
	if (L->indexed) {
		uint32_t g = (uint32_t)(set_idx * L->ways + w);

		index_remove(L, set[w] >> 1);
		list_unlink(L, set_idx, g);
		set[w] = TAG_INVALID;
		if (L->mask)
			L->mask[g] = 0;
		L->next[g] = L->free_head[set_idx];
		L->free_head[set_idx] = g;
		return;
	}
	if (L->ordered) {
		uint32_t tail = L->ways - 1 - w;

		slots_down(set + w, tail);
		set[L->ways - 1] = TAG_INVALID;
		if (L->mask) {
			uint64_t *m = L->mask + set_idx * L->ways;

			slots_down(m + w, tail);
			m[L->ways - 1] = 0;
		}
		return;
	}
	set[w] = TAG_INVALID;
	if (L->mask)
		L->mask[set_idx * L->ways + w] = 0;
}

/* Returns a free slot, or -1 when the set is full. */
static int
free_slot(const struct level *L, const uint64_t *set, uint64_t set_idx)
{
	if (L->indexed)
		return L->free_head[set_idx] == NIL
			       ? -1
			       : (int)(L->free_head[set_idx] - set_idx * L->ways);
	if (L->ordered)
		return set[L->ways - 1] == TAG_INVALID ? (int)L->ways - 1 : -1;
	for (uint32_t i = 0; i < L->ways; i++)
		if (set[i] == TAG_INVALID)
			return (int)i;
	return -1;
}

static uint32_t
choose_victim(struct level *L, uint64_t set_idx)
{
	switch (L->cfg.repl) {
	case CACHE_REPL_RANDOM:
		return (uint32_t)(rng_next(L) % L->ways);
	case CACHE_REPL_PLRU:
		return plru_victim(L, set_idx);
	default:
		/* LRU and FIFO: the end of the order. */
		return L->indexed ? (uint32_t)(L->tail[set_idx] - set_idx * L->ways) : L->ways - 1;
	}
}

/* Installs a line into the free slot w; returns its slot. */
static uint32_t
install(struct level *L, uint64_t *set, uint64_t set_idx, uint32_t w, uint64_t line, bool dirty,
	uint64_t mask)
{
	uint64_t e = (line << 1) | (dirty ? 1 : 0);

	if (L->indexed) {
		/* Any free slot will do: take the first of the free list. */
		uint32_t g = L->free_head[set_idx];

		L->free_head[set_idx] = L->next[g];
		w = (uint32_t)(g - set_idx * L->ways);
		set[w] = e;
		if (L->mask)
			L->mask[g] = mask;
		index_insert(L, line, g);
		list_push_front(L, set_idx, g);
		if (L->cfg.repl == CACHE_REPL_PLRU)
			plru_touch(L, set_idx, w);
		return w;
	}
	if (L->ordered) {
		slots_up(set, L->ways - 1);
		set[0] = e;
		if (L->mask) {
			uint64_t *m = L->mask + set_idx * L->ways;

			slots_up(m, L->ways - 1);
			m[0] = mask;
		}
		return 0;
	}
	set[w] = e;
	if (L->mask)
		L->mask[set_idx * L->ways + w] = mask;
	if (L->cfg.repl == CACHE_REPL_PLRU)
		plru_touch(L, set_idx, w);
	return w;
}

/* Granules of [addr, addr + size) inside one line: touched ones, or only fully written ones. */
static uint64_t
granules(const struct level *L, uint64_t addr, uint32_t size, bool whole_only)
{
	uint64_t off = addr & (L->cfg.line_bytes - 1);
	uint64_t g = UINT64_C(1) << L->granule_shift;
	uint64_t first = whole_only ? (off + g - 1) >> L->granule_shift : off >> L->granule_shift;
	uint64_t end = whole_only ? (off + size) >> L->granule_shift
				  : ((off + size - 1) >> L->granule_shift) + 1;
	uint64_t n;

	if (end <= first)
		return 0;
	n = end - first;
	return (n >= 64 ? UINT64_MAX : ((UINT64_C(1) << n) - 1)) << first;
}

/* ---- the hierarchy ---- */

/* The functions below take the level itself (struct level *), not its index: a miss passes
 * through several of them per level, and each would otherwise index c->lv again. */

static unsigned level_ref(struct cache *c, struct level *L, uint64_t addr, uint32_t size,
			  enum req req, uint32_t count, unsigned flags);
static unsigned fan_ref(struct cache *c, uint64_t addr, uint64_t size, enum req req, uint32_t count,
			unsigned flags);
static void stack_settle(struct cache *c);

/* Sends a request for [addr, addr + size) to level B of model c, split into B's lines. */
static unsigned
span_ref(struct cache *c, struct level *B, uint64_t addr, uint64_t size, enum req req,
	 uint32_t count, unsigned flags)
{
	uint64_t last = addr + (size - 1); /* the last byte: [addr, addr + size) may end at 2^64 */
	unsigned res = 0;

	for (;;) {
		uint64_t piece_last = addr | (B->cfg.line_bytes - 1);

		if (piece_last > last)
			piece_last = last;
		res |= level_ref(c, B, addr, (uint32_t)(piece_last - addr + 1), req, count, flags);
		if (piece_last == last)
			break;
		addr = piece_last + 1;
	}
	return res;
}

static int
level_index(const struct cache *c, const struct level *L)
{
	return (int)(L - c->lv);
}

/* Sends a request for [addr, addr + size) to what lies below level L, split into the lines of
 * the level below. */
static unsigned
to_below(struct cache *c, const struct level *L, uint64_t addr, uint64_t size, enum req req,
	 uint32_t count, unsigned flags)
{
	struct level *B = L->lower;

	if (!B) {
		if (c->nfan)
			return fan_ref(c, addr, size, req, count, flags);
		dram_transfer(c, addr, req == REQ_READ ? size : size * count, req != REQ_READ,
			      flags);
		return 0;
	}
	return span_ref(c, B, addr, size, req, count, flags);
}

/* Sends line `line` of level L below, whole, once (a fill, a write-back, a victim): to_below()
 * without the split where the level below's lines are at least as large. */
static inline unsigned
line_below(struct cache *c, const struct level *L, uint64_t line, enum req req, unsigned flags)
{
	uint64_t addr = line << L->line_shift;

	if (L->lower_whole)
		return level_ref(c, L->lower, addr, L->cfg.line_bytes, req, 1, flags);
	if (!L->lower) {
		if (c->nfan)
			return fan_ref(c, addr, L->cfg.line_bytes, req, 1, flags);
		dram_transfer(c, addr, L->cfg.line_bytes, req != REQ_READ, flags);
		return 0;
	}
	return to_below(c, L, addr, L->cfg.line_bytes, req, 1, flags);
}

/* Removes the lines inside line `line` of level li from every level above li. Returns true if
 * any removed copy was dirty (its data joins li's write-back). */
static NOINLINE bool
back_invalidate(struct cache *c, int li, uint64_t line)
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

/* A line taken out of a set to make room, waiting to be written back. */
struct victim {
	bool valid;
	bool dirty;
	uint64_t line;
};

/* Takes slot w of level L's set as a victim: counts the eviction, removes the line from the
 * set unless L->keep_victim lets it stay until install() overwrites it, and, for an inclusive
 * level, back-invalidates the levels above (their dirty data joins the victim). */
static ALWAYS_INLINE struct victim
take_victim(struct cache *c, struct level *L, uint64_t *set, uint64_t set_idx, uint32_t w)
{
	struct victim v = { true, set[w] & 1, set[w] >> 1 };

	L->st.evictions++;
	if (!L->keep_victim)
		remove_slot(L, set, set_idx, w);
	if (L->cfg.inclusion == CACHE_INCL_INCLUSIVE)
		v.dirty |= back_invalidate(c, level_index(c, L), v.line);
	return v;
}

/* Sends a victim below: a write-back if dirty, or the hand-over to an exclusive level. */
static void
dispose_victim(struct cache *c, struct level *L, const struct victim *v, unsigned flags)
{
	flags &= F_FLUSH;
	if (v->dirty) {
		L->st.writebacks++;
		if (flags & F_FLUSH)
			L->st.flush_writebacks++;
	}
	if (L->below_exclusive)
		line_below(c, L, v->line, REQ_VICTIM, flags | (v->dirty ? F_DIRTY : 0));
	else if (v->dirty)
		line_below(c, L, v->line, REQ_WRITEBACK, flags);
}

/* Allocates `line` in level L after a miss, in Dinero IV's order: the victim leaves the set,
 * the fetch (with F_FETCH) reaches the level below, the line is installed (dirty with
 * F_NEW_DIRTY, with write-validate mask `mask`), and only then does the victim's write-back
 * go down. */
static void
allocate(struct cache *c, struct level *L, uint64_t *set, uint64_t line, uint64_t mask,
	 unsigned flags)
{
	uint64_t set_idx = line & L->set_mask;
	bool dirty = flags & F_NEW_DIRTY;
	struct victim v = { false, false, 0 };
	int w;

	if (L->ordered) {
		/* The valid slots are a prefix, in order: the last slot is free or the victim,
		 * and after a removal the free slot is the last one again. */
		w = (int)L->ways - 1;
		if (set[w] != TAG_INVALID)
			v = take_victim(c, L, set, set_idx, (uint32_t)w);
	} else {
		w = free_slot(L, set, set_idx);
		if (w < 0) {
			w = (int)choose_victim(L, set_idx);
			v = take_victim(c, L, set, set_idx, (uint32_t)w);
		}
	}
	if (flags & F_FETCH) {
		unsigned res =
			line_below(c, L, line, REQ_READ, flags & (F_RFO | F_IFETCH | F_FLUSH));

		L->st.fills++;
		dirty |= res & RES_DIRTY;
	}
	install(L, set, set_idx, (uint32_t)w, line, dirty, mask);
	if (v.valid)
		dispose_victim(c, L, &v, flags);
}

static void
count_read_miss(struct level *L, unsigned flags)
{
	L->st.read_misses++;
	if (flags & F_RFO)
		L->st.rfo_misses++;
	if (flags & F_IFETCH)
		L->st.ifetch_misses++;
}

static unsigned
level_read(struct cache *c, struct level *L, uint64_t *set, uint64_t set_idx, uint64_t line, int w,
	   uint64_t addr, uint32_t size, unsigned flags)
{
	if (L->cfg.inclusion == CACHE_INCL_EXCLUSIVE) {
		/* A victim cache hands the line up and forgets it; a miss is fetched from below
		 * straight into the level above. */
		if (w >= 0) {
			unsigned res = (set[w] & 1) ? RES_DIRTY : 0;

			remove_slot(L, set, set_idx, (uint32_t)w);
			return res;
		}
		count_read_miss(L, flags);
		return line_below(c, L, line, REQ_READ, flags & (F_RFO | F_IFETCH | F_FLUSH));
	}
	if (w >= 0) {
		uint32_t nw = touch(L, set, set_idx, (uint32_t)w);

		if (L->mask) {
			uint64_t *m = &L->mask[set_idx * L->ways + nw];

			if ((*m & granules(L, addr, size, false)) !=
			    granules(L, addr, size, false)) {
				/* Write-validated line with bytes never written: fetch them now. */
				count_read_miss(L, flags);
				line_below(c, L, line, REQ_READ,
					   flags & (F_RFO | F_IFETCH | F_FLUSH));
				L->st.fills++;
				*m = L->full_mask;
			}
		}
		return 0;
	}
	count_read_miss(L, flags);
	allocate(c, L, set, line, L->mask ? L->full_mask : 0, flags | F_FETCH);
	return 0;
}

static void
level_write(struct cache *c, struct level *L, uint64_t *set, uint64_t set_idx, uint64_t line, int w,
	    uint64_t addr, uint32_t size, enum req req, uint32_t count, unsigned flags)
{
	bool through = L->cfg.write == CACHE_WRITE_THROUGH;
	uint64_t wmask = L->mask ? granules(L, addr, size, true) : 0;

	if (w >= 0) {
		uint32_t nw = (req == REQ_WRITEBACK && L->cfg.quiet_writebacks)
				      ? (uint32_t)w
				      : touch(L, set, set_idx, (uint32_t)w);

		if (L->mask)
			L->mask[set_idx * L->ways + nw] |= wmask;
		if (through)
			to_below(c, L, addr, size, req, count, flags & F_FLUSH);
		else
			set[nw] |= 1;
		return;
	}
	if (L->cfg.inclusion == CACHE_INCL_EXCLUSIVE || L->cfg.alloc == CACHE_ALLOC_NONE ||
	    (req == REQ_WRITEBACK && L->cfg.quiet_writebacks)) {
		/* No allocation: every repeat misses and passes down. */
		L->st.write_misses += count;
		to_below(c, L, addr, size, req, count, flags & F_FLUSH);
		return;
	}
	L->st.write_misses++;
	if (L->cfg.alloc == CACHE_ALLOC_VALIDATE) {
		allocate(c, L, set, line, wmask, flags | (through ? 0 : F_NEW_DIRTY));
	} else {
		/* Write-allocate fetches the line unless the write covers all of it (a write-back
		 * of an equal-sized line): nothing would be merged, so Dinero IV skips the fetch.
		 */
		bool whole = size == L->cfg.line_bytes;

		allocate(c, L, set, line, L->mask ? L->full_mask : 0,
			 flags | F_RFO | (whole ? 0 : F_FETCH) | (through ? 0 : F_NEW_DIRTY));
	}
	if (through)
		to_below(c, L, addr, size, req, count, flags & F_FLUSH);
}

static void
level_victim(struct cache *c, struct level *L, uint64_t *set, uint64_t set_idx, uint64_t line,
	     int w, unsigned flags)
{
	bool dirty = flags & F_DIRTY;

	L->st.victims_in++;
	if (w >= 0) {
		uint32_t nw = touch(L, set, set_idx, (uint32_t)w);

		set[nw] |= dirty ? 1 : 0;
		return;
	}
	allocate(c, L, set, line, L->mask ? L->full_mask : 0,
		 (flags & F_FLUSH) | (dirty ? F_NEW_DIRTY : 0));
}

/* One request to level L for bytes inside one of its lines. */
static unsigned
level_ref(struct cache *c, struct level *L, uint64_t addr, uint32_t size, enum req req,
	  uint32_t count, unsigned flags)
{
	uint64_t line = addr >> L->line_shift;
	uint64_t set_idx = line & L->set_mask;
	uint64_t *set = L->tags + set_idx * L->ways;
	int w = find_way(L, set, set_idx, line);

	switch (req) {
	case REQ_READ:
		if (!(flags & F_COUNTED))
			L->st.reads += count;
		return level_read(c, L, set, set_idx, line, w, addr, size, flags & ~F_COUNTED);
	case REQ_VICTIM:
		level_victim(c, L, set, set_idx, line, w, flags);
		return 0;
	default:
		if (!(flags & F_COUNTED))
			L->st.writes += count;
		level_write(c, L, set, set_idx, line, w, addr, size, req, count,
			    flags & ~F_COUNTED);
		return 0;
	}
}

static bool
scratch_access(struct cache *c, uint64_t addr, enum cache_op op, uint64_t bytes)
{
	struct array *a;

	if (addr - c->scratch_lo >= c->scratch_len)
		return false;
	/* The array owning addr (the last declared where ranges overlap), as for DRAM traffic. */
	a = &c->arrays[find_array(c, addr)];
	if (!a->scratch)
		return false;
	a->scratch_bytes[op == CACHE_OP_STORE] += bytes;
	if (op == CACHE_OP_STORE)
		c->cpu.scratch_write_bytes += bytes;
	else
		c->cpu.scratch_read_bytes += bytes;
	return true;
}

static uint64_t
misses_of(const struct cache_level_stats *st)
{
	return st->read_misses + st->write_misses;
}

/* What an access over two lines added to the access level's counters since `before`, counted
 * as one reference (count of them, its repeats) and at most one miss, Cachegrind's way. */
static void
count_once(struct cache_level_stats *st, const struct cache_level_stats *before, bool write,
	   uint32_t count)
{
	bool missed = misses_of(st) > misses_of(before);

	if (write) {
		st->writes = before->writes + count;
		st->write_misses = before->write_misses + missed;
	} else {
		st->reads = before->reads + count;
		st->read_misses = before->read_misses + missed;
	}
	if (st->ifetch_misses > before->ifetch_misses)
		st->ifetch_misses = before->ifetch_misses + missed;
}

/* The same for a level below: the fills it served for the two lines (and the read of the line
 * that hit above) are one reference and at most one miss; writes (write-backs from above)
 * stay as they are. */
static void
count_once_below(struct cache_level_stats *st, const struct cache_level_stats *before)
{
	bool missed = st->read_misses > before->read_misses;

	if (st->reads > before->reads)
		st->reads = before->reads + 1;
	st->read_misses = before->read_misses + missed;
	if (st->rfo_misses > before->rfo_misses)
		st->rfo_misses = before->rfo_misses + missed;
	if (st->ifetch_misses > before->ifetch_misses)
		st->ifetch_misses = before->ifetch_misses + missed;
}

static void level_lines(struct cache *c, struct level *L, uint64_t addr, uint32_t size, bool write,
			uint32_t count, unsigned flags);

/* An access over exactly two lines of a straddle_once level L (see Notes). */
static void
access_once(struct cache *c, struct level *L, uint64_t addr, uint32_t size, bool write,
	    uint32_t count, unsigned flags)
{
	struct cache_level_stats before[CACHE_MAX_LEVELS + 1];
	int li = (int)(L - c->lv);
	uint64_t split = ((addr >> L->line_shift) + 1) << L->line_shift;
	uint64_t m0 = misses_of(&L->st), m1;
	bool miss_a, miss_b;

	for (unsigned i = 0; i < c->nlv; i++)
		before[i] = c->lv[i].st;
	level_lines(c, L, addr, (uint32_t)(split - addr), write, count, flags);
	m1 = misses_of(&L->st);
	level_lines(c, L, split, (uint32_t)(addr + size - split), write, count, flags);
	miss_a = m1 > m0;
	miss_b = misses_of(&L->st) > m1;
	/* One line missed, the other hit: the level below sees the hit line too. */
	if (miss_a != miss_b && L->below >= 0) {
		uint64_t a = miss_a ? split : addr, n = miss_a ? addr + size - split : split - addr;

		to_below(c, L, a, n, REQ_READ, 1, flags & (F_IFETCH | F_FLUSH));
	}
	count_once(&L->st, &before[li], write, count);
	for (int b = L->below; b >= 0; b = c->lv[b].below)
		if (c->lv[b].cfg.straddle_once)
			count_once_below(&c->lv[b].st, &before[b]);
}

/* One access through level L (L1, or I1 for instruction fetches), line by line. */
static void
access_lines(struct cache *c, struct level *L, uint64_t addr, uint32_t size, bool write,
	     uint32_t count, unsigned flags)
{
	if (L->cfg.straddle_once &&
	    (addr >> L->line_shift) + 1 == (addr + size - 1) >> L->line_shift) {
		access_once(c, L, addr, size, write, count, flags);
		return;
	}
	level_lines(c, L, addr, size, write, count, flags);
}

static void
level_lines(struct cache *c, struct level *L, uint64_t addr, uint32_t size, bool write,
	    uint32_t count, unsigned flags)
{
	uint64_t first = addr >> L->line_shift;
	uint64_t last = (addr + size - 1) >> L->line_shift;

	for (uint64_t line = first;; line++) {
		uint64_t piece = line == first ? addr : line << L->line_shift;
		uint64_t piece_end = line == last ? addr + size : (line + 1) << L->line_shift;
		uint64_t *set = L->tags + (line & L->set_mask) * L->ways;

		/* Hit on the most recent slot: no replacement state changes (see Notes). */
		if ((set[0] >> 1) == line && (write ? L->fast_write : L->fast_read)) {
			if (write) {
				L->st.writes += count;
				set[0] |= 1;
			} else {
				L->st.reads += count;
			}
		} else {
			level_ref(c, L, piece, (uint32_t)(piece_end - piece),
				  write ? REQ_WRITE : REQ_READ, count, flags);
		}
		if (line == last)
			break;
	}
}

void
cache_access(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op, uint32_t count)
{
	cache_access_merged(c, addr, size, op, count, (uint64_t)size * count);
}

void
cache_access_merged(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op, uint32_t count,
		    uint64_t bytes)
{
	bool write = op == CACHE_OP_STORE;

	if (c->forward) {
		for (unsigned k = 0; k < c->nfan; k++)
			cache_access_merged(c->fan[k], addr, size, op, count, bytes);
		return;
	}
	c->cpu.ops[op] += count;
	c->cpu.bytes[op] += bytes;
	if (op == CACHE_OP_IFETCH) {
		if (c->icache >= 0 &&
		    ((addr >> c->sample_shift) & c->sample_mask) == c->sample_residue)
			access_lines(c, &c->lv[c->icache], addr, size, false, count, F_IFETCH);
		return;
	}
	if (c->nscratch && scratch_access(c, addr, op, bytes))
		return;
	if (((addr >> c->sample_shift) & c->sample_mask) != c->sample_residue)
		return; /* in a set that sampling leaves out */
	if (c->ndata == 0) {
		if (c->nfan)
			fan_ref(c, addr, size, write ? REQ_WRITE : REQ_READ, count, 0);
		else
			dram_transfer(c, addr, bytes, write, 0);
		return;
	}
	access_lines(c, &c->lv[0], addr, size, write, count, 0);
}

void
cache_scratch_add(struct cache *c, unsigned i, enum cache_op op, uint64_t accesses, uint64_t bytes)
{
	struct array *a = &c->arrays[i];

	if (c->forward) {
		for (unsigned k = 0; k < c->nfan; k++)
			cache_scratch_add(c->fan[k], i, op, accesses, bytes);
		return;
	}
	c->cpu.ops[op] += accesses;
	c->cpu.bytes[op] += bytes;
	a->scratch_bytes[op == CACHE_OP_STORE] += bytes;
	if (op == CACHE_OP_STORE)
		c->cpu.scratch_write_bytes += bytes;
	else
		c->cpu.scratch_read_bytes += bytes;
}

bool
cache_fast_l1(struct cache *c, struct cache_fast_l1 *v)
{
	return !c->nscratch && cache_fast_l1_without_scratch(c, v);
}

bool
cache_fast_l1_without_scratch(struct cache *c, struct cache_fast_l1 *v)
{
	struct level *L = &c->lv[0];

	if (c->ndata == 0 || !L->fast_write || c->sample_mask)
		return false;
	v->tags = L->tags;
	v->set_mask = L->set_mask;
	v->ways = L->ways;
	v->line_shift = L->line_shift;
	v->lru = L->cfg.repl == CACHE_REPL_LRU;
	return true;
}

void
cache_fast_miss(struct cache *c, uint64_t addr, uint32_t size, unsigned op)
{
	struct level *L = &c->lv[0];
	uint64_t line = addr >> L->line_shift;
	uint64_t set_idx = line & L->set_mask;
	uint64_t *set = L->tags + set_idx * L->ways;

	/* level_ref() without the lookup the caller has made, and with the access counted. */
	if (op)
		level_write(c, L, set, set_idx, line, -1, addr, size, REQ_WRITE, 1, 0);
	else
		level_read(c, L, set, set_idx, line, -1, addr, size, 0);
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

bool
cache_merge_is_exact(const struct cache *c)
{
	const struct cache_level_config *l1 = &c->cfg.level[0];

	/* Write-through and no-write-allocate send every repeated store below; write-validate
	 * repeats can validate more bytes; with no cache each access is its own transfer. */
	return c->cfg.levels > 0 && l1->write == CACHE_WRITE_BACK && l1->alloc == CACHE_ALLOC_FETCH;
}

/* Loads and stores from refs[0] up to the first other kind; returns how many. */
static size_t
data_refs(struct cache *c, const struct cache_ref *refs, size_t n)
{
	struct level *L = &c->lv[0];
	uint64_t ops = 0, st_ops = 0, bytes = 0, st_bytes = 0, lines = 0, st_lines = 0;
	const uint64_t *tags;
	uint64_t set_mask, ways;
	unsigned shift;
	size_t i, end;

	if (c->ndata == 0 || c->nscratch || !L->fast_write || c->sample_mask) {
		for (i = 0; i < n && refs[i].kind <= CACHE_OP_STORE; i++)
			cache_access(c, refs[i].addr, refs[i].size, (enum cache_op)refs[i].kind,
				     refs[i].count);
		return i;
	}
	/* The common case: a write-back L1 without scratch ranges, where a load or store that
	 * hits the most recent slot of its set changes at most a dirty bit. The counters are
	 * summed in a pass of their own so the simulation loop keeps its state in registers. */
	shift = L->line_shift;
	for (end = 0; end < n && refs[end].kind <= CACHE_OP_STORE; end++) {
		/* Scalars with k in {0, 1} as a multiplier: arrays indexed by kind would chain
		 * every iteration through store-to-load forwarding. */
		const struct cache_ref *r = &refs[end];
		uint64_t k = r->kind, cnt = r->count, b = (uint64_t)r->size * cnt;
		uint64_t one = ((r->addr ^ (r->addr + r->size - 1)) >> shift) == 0;

		ops += cnt;
		st_ops += k * cnt;
		bytes += b;
		st_bytes += k * b;
		lines += one * cnt;
		st_lines += one * k * cnt;
	}
	c->cpu.ops[CACHE_OP_LOAD] += ops - st_ops;
	c->cpu.ops[CACHE_OP_STORE] += st_ops;
	c->cpu.bytes[CACHE_OP_LOAD] += bytes - st_bytes;
	c->cpu.bytes[CACHE_OP_STORE] += st_bytes;
	L->st.reads += lines - st_lines;
	L->st.writes += st_lines;

	tags = L->tags;
	set_mask = L->set_mask;
	ways = L->ways;
	for (i = 0; i < end; i++) {
		const struct cache_ref *r = &refs[i];
		uint64_t addr = r->addr;
		uint64_t line = addr >> shift;
		unsigned k = r->kind;
		uint64_t *set;

		if (__builtin_expect(((addr + r->size - 1) >> shift) != line, 0)) {
			access_lines(c, L, addr, r->size, k, r->count, 0);
			continue;
		}
		set = (uint64_t *)tags + (line & set_mask) * ways;
		if (__builtin_expect((set[0] >> 1) == line, 1)) {
			set[0] |= k;
			continue;
		}
		level_ref(c, L, addr, r->size, k ? REQ_WRITE : REQ_READ, r->count, F_COUNTED);
	}
	return end;
}

size_t
cache_access_refs(struct cache *c, const struct cache_ref *refs, size_t n)
{
	size_t i = 0;

	while (i < n) {
		i += data_refs(c, refs + i, n - i);
		for (; i < n && refs[i].kind == CACHE_OP_IFETCH; i++)
			cache_access(c, refs[i].addr, refs[i].size, CACHE_OP_IFETCH, refs[i].count);
		if (i < n && refs[i].kind >= CACHE_OP_COUNT)
			break;
	}
	return i;
}

/* ---- phases ---- */

static void
stats_add_delta(struct cache_level_stats *dst, const struct cache_level_stats *now,
		struct cache_level_stats *snap)
{
	uint64_t *d = (uint64_t *)dst, *s = (uint64_t *)snap;
	const uint64_t *n = (const uint64_t *)now;

	for (size_t i = 0; i < sizeof(*dst) / sizeof(uint64_t); i++) {
		d[i] += n[i] - s[i];
		s[i] = n[i];
	}
}

static void
sync_phase(struct cache *c)
{
	for (unsigned i = 0; i < c->nlv; i++)
		stats_add_delta(&c->phases[c->cur_phase].lvl[i], &c->lv[i].st, &c->snap[i]);
}

int
cache_add_phase(struct cache *c, const char *name)
{
	struct phase *p;
	char cut[CACHE_NAME_MAX];
	int64_t i;

	snprintf(cut, sizeof(cut), "%s", name);
	i = name_index_find(&c->phase_names, cut);
	if (i >= 0)
		return (int)i;
	/* A one-pass model's models keep the same phases, at the same indices. */
	for (unsigned k = 0; k < c->nfan; k++)
		cache_add_phase(c->fan[k], name);
	/* The final flush always finds room: its phase is the one past the cap. */
	if (c->nphases > CACHE_MAX_PHASES && strcmp(cut, "flush") != 0)
		return -ENOSPC;
	if (c->nphases == c->phases_cap) {
		c->phases_cap *= 2;
		c->phases = xrealloc(c->phases, c->phases_cap * sizeof(*c->phases));
	}
	p = &c->phases[c->nphases];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", cut);
	name_index_add(&c->phase_names, p->name, c->nphases);
	return (int)c->nphases++;
}

void
cache_set_phase(struct cache *c, int phase)
{
	if (phase < 0 || (unsigned)phase >= c->nphases || (unsigned)phase == c->cur_phase)
		return;
	stack_settle(c); /* what the stack pass counted belongs to the phase that ends */
	for (unsigned k = 0; k < c->nfan; k++)
		cache_set_phase(c->fan[k], phase);
	sync_phase(c);
	c->cur_phase = (unsigned)phase;
}

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
				line_below(c, L, e >> 1, REQ_WRITEBACK, F_FLUSH);
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
	sync_phase(c);
}

/* ---- arrays ---- */

int
cache_add_array(struct cache *c, const char *name, uint64_t base, uint64_t bytes, bool scratch)
{
	struct array *a;

	if (c->narrays > CACHE_MAX_ARRAYS)
		return -ENOSPC;
	a = &c->arrays[c->narrays];
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->base = base;
	a->len = bytes;
	a->scratch = scratch;
	c->last_array = c->prev_array = 0; /* the new range may hide part of an older one */
	for (unsigned k = 0; k < c->nfan; k++)
		cache_add_array(c->fan[k], name, base, bytes, scratch);
	if (scratch && bytes) {
		/* The span's last byte, not its end, which may lie at 2^64. */
		uint64_t lo = base, last = base + (bytes - 1);

		if (c->nscratch) {
			uint64_t old_last = c->scratch_lo + (c->scratch_len - 1);

			if (c->scratch_lo < lo)
				lo = c->scratch_lo;
			if (old_last > last)
				last = old_last;
		}
		c->scratch_lo = lo;
		c->scratch_len =
			last - lo + 1; /* 0 only for the whole address space: unreachable */
		c->nscratch++;
	}
	return (int)c->narrays++;
}

/* ---- getters ---- */

unsigned
cache_level_count(const struct cache *c)
{
	return c->nlv;
}

const struct cache_level_config *
cache_level_config(const struct cache *c, unsigned i)
{
	return &c->lv[i].cfg;
}

const struct cache_level_stats *
cache_level_stats(const struct cache *c, unsigned i)
{
	return &c->lv[i].st;
}

static void
traffic_sum(struct cache_traffic *dst, const struct cache_traffic *t)
{
	dst->read_bytes += t->read_bytes;
	dst->write_bytes += t->write_bytes;
	dst->rfo_bytes += t->rfo_bytes;
	dst->flush_write_bytes += t->flush_write_bytes;
	dst->flush_read_bytes += t->flush_read_bytes;
}

/* Rebuilds the DRAM, per-array and per-phase totals from the (phase, array) cells. */
static void
sum_traffic(struct cache *c)
{
	memset(&c->dram, 0, sizeof(c->dram));
	for (unsigned a = 0; a < c->narrays; a++)
		memset(&c->arrays[a].traffic, 0, sizeof(c->arrays[a].traffic));
	for (unsigned p = 0; p < c->nphases; p++) {
		struct phase *ph = &c->phases[p];

		memset(&ph->traffic, 0, sizeof(ph->traffic));
		for (unsigned a = 0; a < c->narrays; a++) {
			traffic_sum(&ph->traffic, &ph->per_array[a]);
			traffic_sum(&c->arrays[a].traffic, &ph->per_array[a]);
		}
		traffic_sum(&c->dram, &ph->traffic);
	}
}

const struct cache_traffic *
cache_dram(struct cache *c)
{
	sum_traffic(c);
	return &c->dram;
}

const struct cache_cpu_stats *
cache_cpu(const struct cache *c)
{
	return &c->cpu;
}

unsigned
cache_array_count(const struct cache *c)
{
	return c->narrays;
}

const char *
cache_array_name(const struct cache *c, unsigned i)
{
	return c->arrays[i].name;
}

bool
cache_array_is_scratch(const struct cache *c, unsigned i)
{
	return c->arrays[i].scratch;
}

const struct cache_traffic *
cache_array_traffic(struct cache *c, unsigned i)
{
	sum_traffic(c);
	return &c->arrays[i].traffic;
}

const uint64_t *
cache_array_scratch(const struct cache *c, unsigned i)
{
	return c->arrays[i].scratch_bytes;
}

unsigned
cache_phase_count(const struct cache *c)
{
	return c->nphases;
}

const char *
cache_phase_name(const struct cache *c, unsigned i)
{
	return c->phases[i].name;
}

const struct cache_traffic *
cache_phase_traffic(struct cache *c, unsigned i)
{
	sum_traffic(c);
	return &c->phases[i].traffic;
}

const struct cache_traffic *
cache_phase_array_traffic(const struct cache *c, unsigned p, unsigned a)
{
	return &c->phases[p].per_array[a];
}

const struct cache_level_stats *
cache_phase_level_stats(struct cache *c, unsigned p, unsigned i)
{
	sync_phase(c);
	return &c->phases[p].lvl[i];
}

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
	 * caches nested by inclusion (sim/stackdist.h): one set count (fully associative, or
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
 * sets (sim/stackdist.h: nested either way). NULL when memory is short. */
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
	c = build(cfg, level, CACHE_MAX_LEVELS);
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
		c->fan[k] = build(&one, one.levels,
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
		if (!c->stack) {
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
			bytes -= level_bytes(&one.level[level], one.index_ways);
	}
	if (how == CACHE_ONEPASS_STACK && n <= STACKDIST_MAX_CACHES) {
		uint32_t ways[STACKDIST_MAX_CACHES];
		uint64_t sets[STACKDIST_MAX_CACHES];
		unsigned order[STACKDIST_MAX_CACHES];

		stack_geometry(&cfg->level[level], sizes, n, order, sets, ways);
		bytes += stack_bytes(sets, ways, n);
	}
	return bytes;
}

bool
cache_onepass_failed(const struct cache *c)
{
	return c->stack && stackdist_failed(c->stack);
}

/* One request of level-above traffic inside one line of the swept level, for every size at
 * once: what level_ref() does at a write-back, write-allocate LRU level above DRAM, with the
 * hit or miss and the victim of each size from the stack. */
static void
stack_ref(struct cache *c, uint64_t addr, uint32_t size, enum req req, uint32_t count,
	  unsigned flags)
{
	const struct level *L0 = &c->fan[0]->lv[c->fan_level];
	unsigned shift = L0->line_shift;
	uint64_t line = addr >> shift, bytes = L0->cfg.line_bytes;
	bool write = req != REQ_READ;
	bool fetch = !write || size != bytes; /* a whole-line write needs no fetch */
	unsigned z = stackdist_ref(c->stack, line, write, c->victims);
	unsigned fill_flags = (flags | (write ? F_RFO : 0)) & (F_RFO | F_FLUSH);

	if (write)
		c->stack_writes += count;
	else
		c->stack_reads += count;
	/* Sizes smallest first: the ones that missed are 0 .. z-1. */
	for (unsigned k = 0; k < z; k++) {
		struct cache *s = c->fan[c->stack_order[k]];
		struct level *L = &s->lv[c->fan_level];
		const struct stackdist_victim *v = &c->victims[k];

		if (write)
			L->st.write_misses++;
		else
			count_read_miss(L, flags);
		if (v->valid)
			L->st.evictions++;
		if (fetch) {
			dram_transfer(s, addr & ~(bytes - 1), bytes, false, fill_flags);
			L->st.fills++;
		}
		if (v->valid && v->dirty) {
			L->st.writebacks++;
			if (flags & F_FLUSH)
				L->st.flush_writebacks++;
			dram_transfer(s, v->line << shift, bytes, true, flags & F_FLUSH);
		}
	}
}

static unsigned
fan_ref(struct cache *c, uint64_t addr, uint64_t size, enum req req, uint32_t count, unsigned flags)
{
	unsigned res = 0;

	flags &= ~F_COUNTED;
	if (c->stack) {
		uint64_t line_bytes = c->fan[0]->lv[c->fan_level].cfg.line_bytes;
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
	for (unsigned k = 0; k < c->nfan; k++) {
		struct cache *s = c->fan[k];

		res |= span_ref(s, &s->lv[c->fan_level], addr, size, req, count, flags);
	}
	return res;
}

/* Adds the stack pass's reads and writes, which every size counts alike, to each size's
 * model: before anything that changes how a model counts (its phase) and before its counters
 * are read. */
static void
stack_settle(struct cache *c)
{
	if (c->stack_reads | c->stack_writes) {
		for (unsigned k = 0; k < c->nfan; k++) {
			struct level *L = &c->fan[k]->lv[c->fan_level];

			L->st.reads += c->stack_reads;
			L->st.writes += c->stack_writes;
		}
		c->stack_reads = c->stack_writes = 0;
	}
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
		dram_transfer(s, line << L->line_shift, L->cfg.line_bytes, true, F_FLUSH);
	}
}

/* The flush below the levels of a one-pass model: each size's levels, or the stack's lines. */
static void
onepass_flush(struct cache *c)
{
	stack_settle(c);
	if (c->stack) {
		struct flush_ctx fc = { c };

		stackdist_flush(c->stack, stack_flush_line, &fc);
	} else {
		for (unsigned k = 0; k < c->nfan; k++)
			flush_levels(c->fan[k], c->fan_level);
	}
	for (unsigned k = 0; k < c->nfan; k++)
		sync_phase(c->fan[k]);
}

/* Copies what c counted above the swept level (the levels, the processor, scratch bytes) into
 * model s: s then reads as a model run on its own. */
static void
copy_above(struct cache *c, struct cache *s)
{
	sync_phase(c);
	sync_phase(s);
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
	stack_settle(c);
	s = c->fan[k];
	if (!c->forward)
		copy_above(c, s);
	c->taken[k] = true;
	return s;
}

unsigned
cache_onepass_count(const struct cache *c)
{
	return c->nfan;
}

/* ---- set sampling ---- */

static void
stats_scale(struct cache_level_stats *st, uint64_t k)
{
	uint64_t *w = (uint64_t *)st;

	for (size_t i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		w[i] *= k;
}

static void
traffic_scale(struct cache_traffic *t, uint64_t k)
{
	t->read_bytes *= k;
	t->write_bytes *= k;
	t->rfo_bytes *= k;
	t->flush_write_bytes *= k;
	t->flush_read_bytes *= k;
}

void
cache_sample_scale(struct cache *c)
{
	uint64_t k = c->cfg.sample_sets;

	if (k <= 1 || c->sample_scaled)
		return;
	sync_phase(c);
	for (unsigned i = 0; i < c->nlv; i++) {
		stats_scale(&c->lv[i].st, k);
		c->snap[i] = c->lv[i].st;
		for (unsigned p = 0; p < c->nphases; p++)
			stats_scale(&c->phases[p].lvl[i], k);
	}
	for (unsigned p = 0; p < c->nphases; p++)
		for (unsigned a = 0; a < c->narrays; a++)
			traffic_scale(&c->phases[p].per_array[a], k);
	c->sample_scaled = true;
}

void
cache_sample_get(struct cache *c, struct cache_sample *out)
{
	uint64_t k = c->cfg.sample_sets > 1 ? c->cfg.sample_sets : 1;
	uint64_t div = c->sample_scaled ? k : 1; /* back to the sample's own counts */
	const struct cache_cpu_stats *cs = &c->cpu;
	const struct cache_traffic *t = cache_dram(c);
	struct sample_spread sp;

	memset(out, 0, sizeof(*out));
	out->sample_sets = (uint32_t)k;
	if (k == 1)
		return;
	out->cached_bytes = cs->bytes[CACHE_OP_LOAD] + cs->bytes[CACHE_OP_STORE] -
			    cs->scratch_read_bytes - cs->scratch_write_bytes;
	if (c->icache >= 0)
		out->cached_bytes += cs->bytes[CACHE_OP_IFETCH];
	out->levels = c->nlv;
	for (unsigned i = 0; i < c->nlv; i++) {
		const struct cache_level_stats *st = &c->lv[i].st;

		out->misses[i] = (st->read_misses + st->write_misses) / div;
		if (i == 0 || (int)i == c->icache)
			out->refs += (st->reads + st->writes) / div;
	}
	out->dram_bytes = (t->read_bytes + t->write_bytes) / div;
	sample_units_spread(&c->sample_units, &sp);
	out->dram_chunks = sp.chunks;
	out->dram_effective_chunks = sp.effective_chunks;
}
