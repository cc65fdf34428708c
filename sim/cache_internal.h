#pragma once

/*
 * The cache model's internals, shared by its files (not an interface: sim/cache.h is):
 * cache.c (the hierarchy, access, the one-pass access path), cache_create.c (construction),
 * cache_sets.h (set operations, inline), cache_account.h (arrays' DRAM traffic, inline),
 * cache_flush.c (the final flush), cache_config.c (policy names, validation), cache_stats.c
 * (phases, arrays, getters, set sampling) and drive/onepass.c (one pass for many sizes).
 */

#include "sim/cache.h"
#include "sim/name_index.h"
#include "sim/drive/sample.h"
#include "sim/drive/stackdist.h"

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
	/* LRU in ordered slots, write-back, write-allocate, neither inclusive nor exclusive, no
	 * write-validate or quiet write-backs, and plain levels of the same line size below if
	 * any: its misses may take cache_plain.h's path. */
	bool plain;
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

/* Counts of a stack pass's references of one zone z, for each of the sizes 0 .. z-1. */
struct stack_zone {
	uint64_t read_misses, write_misses, rfo_misses, ifetch_misses, fills;
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
	/* Stack pass: what the sizes that missed count, by the reference's zone z (sizes 0 ..
	 * z-1 missed), not yet added to the models (cache_stack_settle()). */
	struct stack_zone *stack_zone;    /* [z], z = 0 .. nfan */
	struct cache_traffic *stack_fill; /* [array * (nfan + 1) + z]: the fills' bytes */
	unsigned *stack_fill_used;        /* the cells of stack_fill in use, in no order */
	unsigned stack_fill_nused;
	uint64_t *stack_evictions; /* [stack cache k] */
	bool stack_unsettled;
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
	/* Set sampling: an access reaches the caches when sample_keeps() (below). sample_mask 0
	 * and sample_residue 0: every access. */
	unsigned sample_shift, sample_block_shift, sample_hash_shift;
	uint64_t sample_mask, sample_residue, sample_block_mask;
	uint64_t sample_bytes[2]; /* bytes loaded (fetched), stored in the sampled sets */
	bool sample_scaled;
	/* A slice of a run split by set (cache_set_slice()): an access reaches the caches where
	 * it lies in chunks (2^slice_shift bytes) whose index is slice_residue modulo
	 * slice_mask + 1; sample_residue is then 1 with sample_mask 0, so the sampling test
	 * always fails and sends the access to the slice's test. */
	bool sliced;
	unsigned slice_shift;
	uint64_t slice_mask, slice_residue;
	struct sample_units sample_units; /* DRAM bytes per sampled chunk: the estimate's error */
	/* A feed model (sim/drive/feed.h): what it gets goes to the slices' ring, not to levels. */
	struct cache_feed *feed;
	/* A one-pass model whose sizes run on slice threads (cache_feed_attach_below()): what
	 * leaves its levels above the swept one goes to the slices' rings, not to its sizes. */
	struct cache_feed *below;
};

/* Set sampling's choice: chunk i (addr >> sample_shift) is in the run of k chunks numbered
 * b = i / k modulo the runs, and is kept where i modulo k is sample_residue XOR the top log2 k
 * bits of b times the golden-ratio constant (Fibonacci hashing: b = 0 gives 0, so the first
 * run keeps CACHE_SAMPLE_RESIDUE(k)). A fixed residue in every run kept the same columns of
 * an array whose rows span a multiple of k chunks: the offsets spread them. */
#define SAMPLE_HASH UINT64_C(0x9E3779B97F4A7C15)

static inline bool
sample_keeps(const struct cache *c, uint64_t addr)
{
	uint64_t run = (addr >> c->sample_block_shift) & c->sample_block_mask;
	uint64_t offset = (run * SAMPLE_HASH) >> c->sample_hash_shift;

	return (((addr >> c->sample_shift) ^ offset) & c->sample_mask) == c->sample_residue;
}

/* cache_config.c */
unsigned cache_chunk_shift(const struct cache_config *cfg);

/* cache_inclusion.c */
bool cache_back_invalidate(struct cache *c, int li, uint64_t line);

/* cache_create.c */
uint64_t cache_level_bytes(const struct cache_level_config *cfg, uint32_t index_ways);
struct cache *cache_build(const struct cache_config *cfg, unsigned ndata, unsigned bare);

/* cache.c */
void cache_dram_transfer(struct cache *c, uint64_t addr, uint64_t bytes, bool write, unsigned flags);
void cache_flush_writeback(struct cache *c, const struct level *L, uint64_t line);
/* fan_ref() of cache.c, for cache_plain.h: a request to a one-pass model's fan. */
unsigned cache_fan_ref(struct cache *c, uint64_t addr, uint64_t size, enum req req, uint32_t count,
		       unsigned flags);
/* A load or store of a scratch array, counted as cache_access_merged() counts it: true; false,
 * nothing counted, where addr lies in no scratch array. */
bool cache_scratch_access(struct cache *c, uint64_t addr, enum cache_op op, uint32_t count,
			  uint64_t bytes);

/* drive/feed.c: what a feed model gets, passed to the slices (its own counts kept here) */
void cache_feed_route(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op,
		      uint32_t count, uint64_t bytes);
/* cache_access_refs() on a feed model */
size_t cache_feed_refs(struct cache *c, const struct cache_ref *refs, size_t n);
void cache_feed_array(struct cache *c, const char *name, uint64_t base, uint64_t bytes);
void cache_feed_phase(struct cache *c, const char *name);
void cache_feed_set_phase(struct cache *c, int phase);
/* fan_ref() of a model with c->below: the request to the slice that owns its chunk */
void cache_feed_below(struct cache *c, uint64_t addr, uint64_t size, enum req req, uint32_t count,
		      unsigned flags);

/* cache_stats.c */
void cache_sync_phase(struct cache *c);

/* drive/onepass.c */
void cache_stack_settle(struct cache *c);
