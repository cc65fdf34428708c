#pragma once

/*
 * The cache model's internals, shared by its files (not an interface: sim/cache.h is):
 * cache.c (the hierarchy, the whole access path: accounting, set operations, inclusion),
 * cache_create.c (construction), cache_flush.c (the final flush), cache_config.c (policy names, validation), cache_stats.c (phases,
 * arrays, getters), and the drivers of sim/drive/ (struct cache_drive), which wrap a model.
 */

#include "base/name_index.h"
#include "sim/cache.h"

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
	 * any: its misses may take cache.c's plain path. */
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

/*
 * What a model runs as (Dinero IV's d4cache carries its `ref` function the same way): the
 * entry points of its accesses and what lies below its last data level, chosen when the model
 * is created. The plain model's are cache_plain_drive (cache.c): its levels, then DRAM. A run
 * mode that wraps a model (sim/drive/: one pass, set sampling, a slice, the thread feed) gives
 * its own and keeps its state in c->mode, so the plain path tests no mode.
 */
struct cache_drive {
	/* cache_access_merged() */
	void (*access)(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op,
		       uint32_t count, uint64_t bytes);
	/* cache_access_refs() */
	size_t (*refs)(struct cache *c, const struct cache_ref *refs, size_t n);
	/* A request leaving the last data level for what lies below it (a line of that level,
	 * or a write that passes it); returns RES_DIRTY where a line handed up is dirty. */
	unsigned (*below)(struct cache *c, uint64_t addr, uint64_t size, enum req req,
			  uint32_t count, unsigned flags);
	/* cache_repeats_settled(); NULL: never. */
	bool (*repeats)(const struct cache *c, const uint64_t *addrs, const bool *stores,
			unsigned n);
	/* Told of an array and a phase after the model has them, and of a phase switch
	 * before it (NULL: nothing to tell). */
	void (*array)(struct cache *c, const char *name, uint64_t base, uint64_t bytes,
		      bool scratch);
	void (*phase)(struct cache *c, const char *name);
	void (*set_phase)(struct cache *c, int phase);
	/* cache_flush(), after the model's levels (NULL: nothing more) */
	void (*flush)(struct cache *c);
	/* frees c->mode (NULL: nothing to free) */
	void (*destroy)(struct cache *c);
	/* the inline L1 path (cache_fast_l1()) may settle its loads and stores */
	bool inline_l1;
};

struct cache {
	struct cache_config cfg;
	struct level lv[CACHE_MAX_LEVELS + 1];
	unsigned nlv;
	unsigned ndata; /* data levels simulated here: cfg.levels, or fewer (a one-pass model's) */
	int icache;     /* index of I1 in lv, or -1 */
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
	const struct cache_drive *drive;
	void *mode; /* the driver's state; NULL for the plain model */
};

/* cache_config.c */
unsigned cache_chunk_shift(const struct cache_config *cfg);

/* cache_create.c */
uint64_t cache_level_bytes(const struct cache_level_config *cfg, uint32_t index_ways);
struct cache *cache_build(const struct cache_config *cfg, unsigned ndata, unsigned bare);

/* cache.c */
extern const struct cache_drive cache_plain_drive;
void cache_dram_transfer(struct cache *c, uint64_t addr, uint64_t bytes, bool write, unsigned flags);
unsigned cache_array_of(struct cache *c, uint64_t addr);
void cache_traffic_add(struct cache_traffic *t, uint64_t bytes, bool write, unsigned flags);
/* cache_plain_drive's below: DRAM, the request's bytes (a write's count times). */
unsigned cache_dram_below(struct cache *c, uint64_t addr, uint64_t size, enum req req,
			  uint32_t count, unsigned flags);
void cache_flush_writeback(struct cache *c, const struct level *L, uint64_t line);
/* cache_plain_drive's access and refs, for drivers that run the plain model's levels. */
void cache_plain_access(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op,
			uint32_t count, uint64_t bytes);
size_t cache_plain_refs(struct cache *c, const struct cache_ref *refs, size_t n);
/* The same request for [addr, addr + size) to level li of each model of m[0 .. n), split into
 * that level's lines: a one-pass model's fan-out to each size. Returns the answers or'ed. */
unsigned cache_span_refs(struct cache *const *m, unsigned n, unsigned li, uint64_t addr,
			 uint64_t size, enum req req, uint32_t count, unsigned flags);
/* refs one cache_access() each, up to the first that is not an access: how many. */
size_t cache_refs_each(struct cache *c, const struct cache_ref *refs, size_t n);
/* One access of the processor through level L (L1, or I1 with F_IFETCH), line by line, not
 * counted as the processor's. */
void cache_level_access(struct cache *c, struct level *L, uint64_t addr, uint32_t size, bool write,
			uint32_t count, unsigned flags);
/* The bytes of a load or store of a scratch array, counted to it and to the processor's
 * scratch bytes: true; false, nothing counted, where addr lies in no scratch array. */
bool cache_scratch_bytes(struct cache *c, uint64_t addr, enum cache_op op, uint64_t bytes);
/* A load or store of a scratch array, counted as cache_access_merged() counts it: true; false,
 * nothing counted, where addr lies in no scratch array. */
bool cache_scratch_access(struct cache *c, uint64_t addr, enum cache_op op, uint32_t count,
			  uint64_t bytes);
/* cache_repeats_settled() of the plain model; with dram_below false, a store whose repeats
 * would pass the last data level is not settled (something other than DRAM lies below). */
bool cache_plain_repeats(const struct cache *c, const uint64_t *addrs, const bool *stores,
			 unsigned n, bool dram_below);

/* cache_fast.c: fills *v from L1 (and L2) where the model's levels allow the inline path,
 * whatever its driver and scratch ranges; slice fields zero. */
bool cache_fill_fast_l1(struct cache *c, struct cache_fast_l1 *v);

/* cache_flush.c: the final flush of data levels first .. ndata-1. */
void cache_flush_levels(struct cache *c, unsigned first);

/* cache_stats.c */
void cache_sync_phase(struct cache *c);
