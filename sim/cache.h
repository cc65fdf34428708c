#pragma once

/*
 * The memory-hierarchy model: 0 to 4 data cache levels (L1 .. L4), an optional instruction
 * cache (I1) beside L1, DRAM below the last level, and on-chip scratch ranges that bypass the
 * caches. It counts per-level events and DRAM bytes, split per array and per phase.
 *
 * Address ranges are half-open everywhere: [addr, addr + bytes).
 *
 * A config must pass cache_config_validate() before cache_create(); the access path trusts it.
 * No global state: any number of models can live in one process.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/util.h"

#define CACHE_MAX_LEVELS 4
#define CACHE_MAX_ARRAYS 64
#define CACHE_NAME_MAX 32
/* Named phases a model keeps (each holds counters per array and level); the final flush's
 * phase comes beside them. */
#define CACHE_MAX_PHASES 1024

enum cache_repl {
	CACHE_REPL_LRU = 0,
	CACHE_REPL_FIFO,
	CACHE_REPL_RANDOM,
	CACHE_REPL_PLRU,
};

enum cache_write_policy {
	CACHE_WRITE_BACK = 0,
	CACHE_WRITE_THROUGH,
};

enum cache_alloc_policy {
	CACHE_ALLOC_FETCH = 0, /* wa: a write miss fetches the line (read for ownership) */
	CACHE_ALLOC_NONE,      /* nwa: a write miss passes the write to the level below */
	CACHE_ALLOC_VALIDATE,  /* wv: a write miss allocates without fetching; bytes become valid */
};

enum cache_inclusion {
	CACHE_INCL_NINE = 0,  /* non-inclusive non-exclusive of the levels above */
	CACHE_INCL_INCLUSIVE, /* holds every line of the levels above; evictions back-invalidate */
	CACHE_INCL_EXCLUSIVE, /* victim cache of the level above: holds only its evicted lines */
};

enum cache_op {
	CACHE_OP_LOAD = 0,
	CACHE_OP_STORE,
	CACHE_OP_IFETCH,
	CACHE_OP_COUNT,
};

/* One access as trace readers deliver it. A kind of CACHE_OP_COUNT or more is not an access
 * (a trace control event) and stops cache_access_refs(). */
struct cache_ref {
	uint64_t addr;
	uint32_t size;  /* bytes, >= 1; addr + size must not wrap */
	uint16_t kind;  /* enum cache_op for accesses */
	uint16_t count; /* back-to-back repeats of the same access, >= 1 */
};

struct cache_level_config {
	char name[8]; /* "L1" .. "L4", "I1" */
	uint64_t size_bytes;
	uint32_t assoc;   /* ways per set; size/line when fully associative */
	bool fully_assoc; /* spelled "full" in specs */
	uint32_t line_bytes;
	enum cache_repl repl;
	enum cache_write_policy write;
	enum cache_alloc_policy alloc;
	enum cache_inclusion inclusion; /* relation to the levels above this one */
	bool quiet_writebacks; /* write-backs from above update a present line without touching its
				  recency and pass down when the line is absent (Cachegrind) */
	bool straddle_once; /* an access over two lines counts as one reference and at most one
			       miss; on a miss the level below sees both lines (Cachegrind) */
};

struct cache_config {
	unsigned levels; /* data levels; 0: no cache, every access moves its own bytes to DRAM */
	struct cache_level_config level[CACHE_MAX_LEVELS];
	bool has_icache; /* I1 beside L1; without it instruction fetches are only counted */
	struct cache_level_config icache;
	uint64_t seed;       /* random replacement; the same seed gives the same run */
	uint32_t index_ways; /* levels with more ways than this keep a hash index instead of
				scanning their sets [0: 64]; the counts do not depend on it */
	/* Set sampling, an estimate (0 or 1: off, exact): 1 set in k of every level reaches the
	 * caches, chosen by address chunk (the largest line of any level): one chunk index in
	 * each run of k (CACHE_SAMPLE_RESIDUE() in the first run, a hashed offset from it in the
	 * others: sim/drive/sample_sets.c keeps()); cache_sample_scale() multiplies the
	 * counts by k. A power of two; every level needs k sets at least per chunk (never fully
	 * assoc). */
	uint32_t sample_sets;
};

/* The residue modulo k that set sampling keeps in the first run of k set classes: the middle
 * one, away from residue 0, where every array's first line falls (arrays are aligned). */
#define CACHE_SAMPLE_RESIDUE(k) ((k) / 2)

/* The set classes of set sampling: chunks whose index is equal modulo the smallest level's
 * sets (in chunks) share a set at every level. Returns how many of them 1 in k keeps (the
 * runs of k classes, one sampled in each); 0 when cfg does not sample. */
uint64_t cache_sample_classes(const struct cache_config *cfg);

/* Per-level counters. Accesses are counted per line touched (an access that spans two lines
 * counts twice), except on a straddle_once level, where an access over two lines counts once
 * (and misses once). hits = reads + writes - read_misses - write_misses. */
struct cache_level_stats {
	uint64_t reads;  /* demand reads: loads, fills requested by the level above */
	uint64_t writes; /* stores, write-throughs and write-backs from above */
	uint64_t read_misses;
	uint64_t write_misses;
	uint64_t rfo_misses;    /* read misses caused by a write miss above (inside read_misses) */
	uint64_t ifetch_misses; /* read misses caused by instruction fetches (inside read_misses) */
	uint64_t fills;         /* lines fetched from below and installed */
	uint64_t evictions;     /* valid lines replaced */
	uint64_t writebacks;    /* dirty lines written below (flush included) */
	uint64_t flush_writebacks;
	uint64_t invalidations; /* lines dropped by back-invalidation from an inclusive level */
	uint64_t victims_in;    /* exclusive level: lines received from the level above */
};

/* DRAM-level traffic in bytes. read_bytes includes rfo_bytes and flush_read_bytes; write_bytes
 * includes flush_write_bytes, so the no-flush view is write_bytes - flush_write_bytes. */
struct cache_traffic {
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t rfo_bytes;         /* fills caused by write misses (read for ownership) */
	uint64_t flush_write_bytes; /* dirty lines written back by the final flush */
	uint64_t flush_read_bytes;  /* fills the flush caused (write-allocate below a flushed level)
				     */
};

/* What the processor issued, merged repeats included. */
struct cache_cpu_stats {
	uint64_t ops[CACHE_OP_COUNT]; /* loads, stores, instruction fetches */
	uint64_t bytes[CACHE_OP_COUNT];
	uint64_t scratch_read_bytes; /* loads and stores that hit a scratch range */
	uint64_t scratch_write_bytes;
};

struct cache;

/* Checks a config: geometry (power-of-two set count and line, line no larger than the cache,
 * ways dividing the lines), policy combinations. Returns 0, or -EINVAL with a one-line message
 * naming the bad level and part in err. */
int cache_config_validate(const struct cache_config *cfg, char *err, size_t errlen);

/* Builds a model from a validated config; the caches start empty. NULL when the config is not
 * valid or memory for its arrays is short. Caller frees with cache_destroy(). */
struct cache *cache_create(const struct cache_config *cfg);
void cache_destroy(struct cache *c);

/* The bytes cache_create() allocates for a valid cfg: its levels' arrays and the model. */
uint64_t cache_model_bytes(const struct cache_config *cfg);

/* The config the model was built from (borrowed). */
const struct cache_config *cache_get_config(const struct cache *c);

/* One load, store or instruction fetch of size bytes (size >= 1, addr + size must not wrap),
 * repeated count times back to back (count >= 1: merged same-line accesses). */
void cache_access(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op, uint32_t count);

/* The tracing layer's same-line merging: count accesses of one kind, back to back, all inside
 * the L1 line of the first one, [addr, addr + size); their sizes add up to bytes. Exact only
 * where cache_merge_is_exact() says so: the repeats are then hits that change no state. */
void cache_access_merged(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op,
			 uint32_t count, uint64_t bytes);

/* True when repeats on the line just accessed change no state (a write-back, write-allocate
 * L1 under any replacement policy), so merging them loses nothing. */
bool cache_merge_is_exact(const struct cache *c);

/* Whether, just after loads and stores (stores[i]) at addrs[0 .. n), each inside one L1 line
 * and all reaching the model, repeating them in the same order any number of times would only
 * be hits that change no state: every line in L1 (and, for a store, dirty in a write-back L1,
 * or in a write-through one hit below it unchanged or passed on unallocated), no
 * write-validate L1. Each stream's repeats may then go as one cache_access_merged(), the
 * streams in their order: under LRU, FIFO, random and tree-PLRU alike the last touches, which
 * alone decide the state, come in the same order. False for a one-pass, feed or slice model
 * (plain models only). */
bool cache_repeats_settled(const struct cache *c, const uint64_t *addrs, const bool *stores,
			   unsigned n);

/* Simulates refs[0 .. n) in order up to the first that is not an access; returns how many
 * were consumed. The replay fast path: same result as one cache_access() per ref. */
size_t cache_access_refs(struct cache *c, const struct cache_ref *refs, size_t n);

/* For replay loops that decode their own stream: L1's tag array, to settle inline a load or
 * store that lies in one line and hits. Set s is tags[s * ways ..], its slots hold
 * (line << 1) | dirty; the most recent line is in slot 0 (LRU keeps slots in recency order).
 * A hit in slot 0 changes at most the dirty bit. */
struct cache_fast_l1 {
	uint64_t *tags;
	uint64_t set_mask;
	uint64_t ways;
	unsigned line_shift;
	bool lru; /* a hit moves the line to slot 0; otherwise a hit changes only the dirty bit */
	/* L2's tags and geometry where L1 and L2 are plain LRU levels of one line size
	 * (cache_fast_l2_hit()); l2_tags NULL otherwise. */
	uint64_t *l2_tags;
	uint64_t l2_set_mask;
	uint64_t l2_ways;
	/* A slice of a split run (cache_fast_l1_slice()): an access inside one L1 line belongs
	 * to it when ((addr >> slice_shift) & slice_mask) == slice_residue; the others change
	 * nothing and count as the processor's alone (cache_count_fast_other()). slice_mask 0:
	 * every access. */
	unsigned slice_shift;
	uint64_t slice_mask, slice_residue;
};

/* Fills *v and returns true when the inline test applies: a write-back L1 that is LRU, FIFO
 * or random, without write-validate, and no scratch ranges. */
bool cache_fast_l1(struct cache *c, struct cache_fast_l1 *v);

/* As cache_fast_l1(), also for a slice of a split run (cache_set_slice()), for a caller that
 * tests v->slice_mask as that says. */
bool cache_fast_l1_slice(struct cache *c, struct cache_fast_l1 *v);

/* ---- moving a set's slots by one place (the inline path below and cache.c) ---- */

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

/* The L1 set of line, for the inline test below. */
static inline uint64_t *
cache_fast_set(const struct cache_fast_l1 *v, uint64_t line)
{
	return v->tags + (line & v->set_mask) * v->ways;
}

/* Whether an access at addr inside one L1 line belongs to another slice of a split run than
 * v's (never when v is no slice: slice_mask and slice_residue 0). */
static inline bool
cache_fast_other_slice(const struct cache_fast_l1 *v, uint64_t addr)
{
	return ((addr >> v->slice_shift) & v->slice_mask) != v->slice_residue;
}

/* The inline hit test for a load (op 0) or store (op 1) of line: true when slot 0 of its set
 * holds it, and a store then marks it dirty (a load writes nothing: a write would make the
 * next access to the line wait for store forwarding). On false, try cache_fast_hit_older(). */
static inline bool
cache_fast_hit_recent(uint64_t *set, uint64_t line, unsigned op)
{
	if ((set[0] >> 1) != line)
		return false;
	if (op)
		set[0] |= 1;
	return true;
}

/* For a load (op 0) or store (op 1) of line that set (its L1 set) does not hold in slot 0:
 * if a later slot holds it, records the hit as the model does (LRU moves the line to slot 0,
 * a store marks it dirty) and returns true; the caller counts it with cache_count_fast().
 * Otherwise changes nothing and returns false: pass the access to cache_fast_miss(). */
static inline bool
cache_fast_hit_older(const struct cache_fast_l1 *v, uint64_t *set, uint64_t line, unsigned op)
{
	uint64_t w = 1, e;

	/* Four slots a step, as scan_way() (sim/cache.c): the loop's own test comes once
	 * per four slots, and most calls scan them all and miss. */
	for (; w + 4 <= v->ways; w += 4) {
		if ((set[w] >> 1) == line)
			goto found;
		if ((set[w + 1] >> 1) == line) {
			w += 1;
			goto found;
		}
		if ((set[w + 2] >> 1) == line) {
			w += 2;
			goto found;
		}
		if ((set[w + 3] >> 1) == line) {
			w += 3;
			goto found;
		}
	}
	for (; w < v->ways; w++)
		if ((set[w] >> 1) == line)
			goto found;
	return false;
found:
	e = set[w] | op;
	if (v->lru) {
		slots_up(set, (uint32_t)w); /* set[1 .. w] = set[0 .. w-1] */
		set[0] = e;
	} else {
		set[w] = e;
	}
	return true;
}

/* L1 misses settled by cache_fast_l2_hit(), not yet in the counters. */
struct cache_fast_misses {
	uint64_t loads, stores, evictions;
};

/* For a load (op 0) or store (op 1) of line, part of a line (not all of it), that L1's set
 * does not hold (cache_fast_hit_older() said so), where v->l2_tags: when L1's victim (its last
 * slot) is clean or empty and L2 holds the line, does what the model's miss path does then
 * (L2's line moves to the front of its set, L1's victim leaves, the line enters L1 at the
 * front, dirty for a store), counts the miss in m and returns true. Otherwise changes nothing
 * and returns false: pass the access to cache_fast_miss(). Nothing below L2 takes part in an
 * L2 hit, so the two levels are all there is to update. */
static ALWAYS_INLINE bool
cache_fast_l2_hit(const struct cache_fast_l1 *v, uint64_t *set, uint64_t line, unsigned op,
		  struct cache_fast_misses *m)
{
	uint64_t victim = set[v->ways - 1], *s2, e;
	uint64_t w;

	if (victim != UINT64_MAX && (victim & 1))
		return false;
	s2 = v->l2_tags + (line & v->l2_set_mask) * v->l2_ways;
	for (w = 0; w < v->l2_ways && (s2[w] >> 1) != line; w++)
		;
	if (w == v->l2_ways)
		return false;
	/* s2[1 .. w] = s2[0 .. w-1], set[1 .. ways-1] = set[0 .. ways-2] */
	e = s2[w];
	slots_up(s2, (uint32_t)w);
	s2[0] = e;
	slots_up(set, (uint32_t)v->ways - 1);
	set[0] = (line << 1) | op;
	m->loads += !op;
	m->stores += op;
	m->evictions += victim != UINT64_MAX;
	return true;
}

/* Adds what cache_fast_l2_hit() settled to the counters and clears m: at L1 a read or write
 * miss, a fill and the eviction of any victim; at L2 a read that hit. */
void cache_count_fast_misses(struct cache *c, struct cache_fast_misses *m);

/* Simulates a load (op 0) or store (op 1) of [addr, addr + size) inside one line that L1 does
 * not hold (the caller has looked in every slot of its set). The caller counts the access with
 * cache_count_fast(), as for a hit; the miss and what it causes below are counted here. */
void cache_fast_miss(struct cache *c, uint64_t addr, uint32_t size, unsigned op);

/* Adds accesses settled through cache_fast_l1 (hits and cache_fast_miss()) to the counters. */
void cache_count_fast(struct cache *c, uint64_t loads, uint64_t stores, uint64_t load_bytes,
		      uint64_t store_bytes);
/* Adds accesses a slice left to the others (cache_fast_l1.slice_mask) to the processor's
 * counts alone. */
void cache_count_fast_other(struct cache *c, uint64_t loads, uint64_t stores, uint64_t load_bytes,
			    uint64_t store_bytes);

/* Writes every dirty line back, level by level from L1 down, as the final flush; lines stay
 * valid and clean. Traffic it causes is counted as flush traffic, in a phase named "flush". */
void cache_flush(struct cache *c);

/* Declares a named address range for per-array accounting. scratch: accesses to the range
 * never enter the caches and count as scratch bytes. Later declarations win where ranges
 * overlap. Returns the array's index (>= 1; 0 is "other"), or -ENOSPC past CACHE_MAX_ARRAYS. */
int cache_add_array(struct cache *c, const char *name, uint64_t base, uint64_t bytes, bool scratch);

/* Declares a phase; returns its index (>= 1; 0 is the unnamed phase before any), or -ENOSPC
 * past CACHE_MAX_PHASES ("flush" always finds room). Declaring an existing name returns the
 * existing index; names are cut to CACHE_NAME_MAX - 1 bytes. O(1) on average. */
int cache_add_phase(struct cache *c, const char *name);
/* Makes phase index current: later traffic is counted to it. */
void cache_set_phase(struct cache *c, int phase);

unsigned cache_level_count(const struct cache *c); /* data levels plus I1 if present */
/* Level i: 0 .. levels-1 are L1.., levels is I1. Borrowed; valid until cache_destroy(). */
const struct cache_level_config *cache_level_config(const struct cache *c, unsigned i);
const struct cache_level_stats *cache_level_stats(const struct cache *c, unsigned i);
/* Totals are summed from the per-(phase, array) cells on each call. */
const struct cache_traffic *cache_dram(struct cache *c);
const struct cache_cpu_stats *cache_cpu(const struct cache *c);

unsigned cache_array_count(const struct cache *c); /* including "other" at index 0 */
const char *cache_array_name(const struct cache *c, unsigned i);
bool cache_array_is_scratch(const struct cache *c, unsigned i);
const struct cache_traffic *cache_array_traffic(struct cache *c, unsigned i);
/* Adds `accesses` loads or stores of `bytes` in all to scratch array i (cache_add_array() with
 * scratch set), for a caller that keeps scratch addresses away from cache_access(). */
void cache_scratch_add(struct cache *c, unsigned i, enum cache_op op, uint64_t accesses,
		       uint64_t bytes);

/* As cache_fast_l1(), for a caller that keeps every scratch address away from the model (it
 * reports them with cache_scratch_add()): scratch ranges do not rule the fast path out. */
bool cache_fast_l1_without_scratch(struct cache *c, struct cache_fast_l1 *v);

/* Scratch bytes of array i: [0] read, [1] written. */
const uint64_t *cache_array_scratch(const struct cache *c, unsigned i);

unsigned cache_phase_count(const struct cache *c); /* including the unnamed phase 0 */
const char *cache_phase_name(const struct cache *c, unsigned i);
const struct cache_traffic *cache_phase_traffic(struct cache *c, unsigned i);
/* DRAM traffic of array a during phase p. */
const struct cache_traffic *cache_phase_array_traffic(const struct cache *c, unsigned p,
						      unsigned a);
/* Level counters accumulated while phase p was current. */
const struct cache_level_stats *cache_phase_level_stats(struct cache *c, unsigned p, unsigned i);

/*
 * One pass for many sizes of one level (the swept level): the levels above it are simulated
 * once and what leaves them feeds a model per size ("fanout"), or, for an LRU last level,
 * one LRU stack pass that counts for every size at once ("stack", sim/drive/stackdist.h). Each
 * size's model then holds every counter a model run on its own with that size would hold.
 * It applies when the swept level's input does not depend on its size: no inclusive level at
 * or below it (back-invalidation reaches above), the swept level not exclusive (it hands
 * lines back up), no straddle=once level below L1. The stack pass needs, besides, the last level,
 * LRU, write-back, write-allocate, no I1 beside a swept L1, and caches nested by inclusion
 * (sim/drive/stackdist.h): one set count (fully associative), or a fixed associativity (the
 * sizes change the set count).
 */
#define CACHE_ONEPASS_MAX 256

enum cache_onepass {
	CACHE_ONEPASS_SEPARATE = 0, /* no one-pass: each size needs its own run */
	CACHE_ONEPASS_FANOUT,
	CACHE_ONEPASS_STACK,
};

/* "separate", "fanout", "stack". */
const char *cache_onepass_str(enum cache_onepass m);

/* cfg with level `level` (0 for L1) resized to size_bytes, at the associativity its spec gave:
 * a level spelled "full" keeps one set (and its assoc field, 0); N ways stay N ways, also
 * where N made one set before (which spec_parse() flags fully associative, keeping N in
 * assoc). The result is flagged fully associative where spec_parse() would flag it: spelled
 * "full", or N ways that make one set. Returns 0, or -EINVAL with a one-line message in err
 * when the result is not valid. */
int cache_config_resize(const struct cache_config *cfg, unsigned level, uint64_t size_bytes,
			struct cache_config *out, char *err, size_t errlen);

/* The best method for the n sizes of level `level` of a valid cfg (distinct sizes, n <=
 * CACHE_ONEPASS_MAX). *why (may be NULL) says in a few words why a better one does not
 * apply, or is NULL for CACHE_ONEPASS_STACK. */
enum cache_onepass cache_onepass_method(const struct cache_config *cfg, unsigned level,
					const uint64_t *sizes, unsigned n, const char **why);

/* A model to run as one (the tracing layer, cache_flush()) that counts for each size with
 * method how (at most what cache_onepass_method() allows). Returns NULL when how does not
 * apply or memory is short. Its own counters mean nothing: take each size's model with
 * cache_onepass_take(). Caller frees with cache_destroy(), which frees the models not taken.
 * The stack pass's models hold no lines of the swept level, only its counts. */
struct cache *cache_create_onepass(const struct cache_config *cfg, unsigned level,
				   const uint64_t *sizes, unsigned n, enum cache_onepass how);
/* The most bytes cache_create_onepass() with these arguments holds during a run: the model of
 * the levels above, each size's, and the stack (cache_model_bytes(), stackdist_bytes()). */
uint64_t cache_onepass_bytes(const struct cache_config *cfg, unsigned level, const uint64_t *sizes,
			     unsigned n, enum cache_onepass how);
/* True when memory ran out during the run (the stack's line index could not grow): no size's
 * counts are valid. */
bool cache_onepass_failed(const struct cache *c);
/* The model of sizes[k], after the run (and flush): every counter as if it had run alone.
 * Caller frees with cache_destroy(); NULL when k is out of range or already taken. */
struct cache *cache_onepass_take(struct cache *c, unsigned k);

/* Makes one-pass model c (cache_create_onepass() of cfg for sizes[0 .. n) of level `level`
 * with method how, not yet accessed) run its sizes on `threads` threads (2 ..
 * cache_onepass_slices_max()), one slice each (sim/drive/feed.h): c simulates the levels above
 * the swept one itself, on the caller's thread, and hands what leaves them, in order, to the
 * slice that owns its chunk, whose one-pass model counts its sets for every size. Arrays and
 * phases go to every slice. Returns 0, or -ENOMEM with a one-line message in err (c
 * unchanged). */
int cache_onepass_attach_threads(struct cache *c, const struct cache_config *cfg, unsigned level,
				 const uint64_t *sizes, unsigned n, enum cache_onepass how,
				 unsigned threads, char *err, size_t errlen);
/* Ends it (after the caller's cache_flush(c), with flush): each thread flushes its sizes'
 * models, and they are added into c's, which then holds what one thread's pass would, counter
 * for counter (cache_onepass_take()). Returns 0, or with a message in err -ENOMEM where a
 * thread's stack pass ran out of memory, -1 otherwise. */
int cache_onepass_detach_threads(struct cache *c, bool flush, char *err, size_t errlen);

/* The most slices of a run split by set (cache_slices_max()), up to want, that the one-pass
 * model of these sizes splits into exactly: the fewest any size's config allows; 1 where the
 * swept level is L1 (the producer filters L1 hits before the split, for one L1). why as in
 * cache_slices_max(). */
unsigned cache_onepass_slices_max(const struct cache_config *cfg, unsigned level,
				  const uint64_t *sizes, unsigned n, unsigned want, char *why,
				  size_t whylen);

/* With set sampling (cfg.sample_sets > 1): multiplies every level count and every DRAM byte
 * count by the sampling factor, once (later calls do nothing); the processor's counts and
 * scratch bytes were counted whole. Call after the run and its flush, before reading. */
void cache_sample_scale(struct cache *c);

/* What set sampling saw: the sample behind an estimate, in the sample's own counts (before
 * cache_sample_scale()'s factor). sim/drive/sample.h judges it. */
struct cache_sample {
	uint32_t sample_sets; /* k; 1 when not sampled, and the rest is then zero */
	/* Bytes the processor loaded and stored outside scratch and fetched through an I1, all
	 * of them, sampled or not: above zero, an exact run would count a miss at least. */
	uint64_t cached_bytes;
	/* Of them: read (loads, fetches) and written, all; and those that reached the sampled
	 * sets. Were the sample representative, k times the sampled ones would be all. */
	uint64_t cached_read_bytes, cached_write_bytes;
	uint64_t sampled_read_bytes, sampled_write_bytes;
	uint64_t refs;                         /* references to L1 (and I1) in the sampled sets */
	unsigned levels;                       /* as cache_level_count() */
	uint64_t misses[CACHE_MAX_LEVELS + 1]; /* per level, in the sampled sets */
	uint64_t dram_bytes;                   /* the sampled sets' DRAM bytes, read and written */
	uint64_t dram_chunks; /* chunks (the largest line of any level) that moved them */
	/* sum(y)^2 / sum(y^2) over those chunks, y a chunk's DRAM bytes: the chunk count when
	 * each moved as many bytes, fewer when a few moved most (sim/drive/sample.h) */
	double dram_effective_chunks;
	/* The sampled set classes (cache_sample_classes()) and the relative variance of their
	 * DRAM bytes: s^2 / mean^2 over the classes, those that moved none included. */
	uint64_t set_classes;
	double class_rel_variance;
};

/* Fills *out for model c, before or after cache_sample_scale(). */
void cache_sample_get(struct cache *c, struct cache_sample *out);

/*
 * A run split by set over threads (replay --threads): slice i of k (k a power of two) is a
 * model that simulates only the accesses, or their pieces, in chunks (the largest line of any
 * level) whose index is i modulo k. The k slices run the whole trace each; the sum of their
 * level and DRAM counts (cache_add_slice()) is the whole run's, exactly (sim/drive/slice.c
 * says why). Each slice counts every access as the processor's, and scratch bytes, whole.
 */
#define CACHE_MAX_SLICES 64
/* The most classes of chunks a feed deals to its slices (sim/cache_run.h). */
#define CACHE_CLASSES_MAX 128

/* The most slices, up to want, that cfg splits into exactly: want rounded down to a power of
 * two, then lowered to what each level's sets allow; 1 for a config that does not split.
 * Where the result is below want, why says in one line what stops more (else ""). */
unsigned cache_slices_max(const struct cache_config *cfg, unsigned want, char *why, size_t whylen);
/* The most classes of chunks, up to CACHE_CLASSES_MAX, whose sets lie apart at every level of
 * cfg, as cache_slices_max() counts slices: a feed deals them to its slices. */
unsigned cache_classes_max(const struct cache_config *cfg);

/* Makes c, new and not yet accessed, slice index of slices (slices <= cache_slices_max() for
 * its config; 1: the whole run, nothing changes). */
void cache_set_slice(struct cache *c, unsigned slices, unsigned index);

/* Writes every page of c's level arrays once. A zeroed page that a thread reads first maps
 * the shared zero page, and the first write replaces that mapping, which in a process with
 * threads interrupts every core it runs on to flush its TLB. Called on each slice's model
 * before the threads start, no write during the run does. */
void cache_prefault(struct cache *c);

/* Adds the level, DRAM, per-array and per-phase counts of slice src to dst, both run over
 * the same trace and flushed alike; the processor's counts and scratch bytes stay dst's.
 * Returns 0, or -1 (nothing added) when their arrays or phases differ. */
int cache_add_slice(struct cache *dst, struct cache *src);

/* Names used in specs and reports. */
const char *cache_repl_str(enum cache_repl r);
const char *cache_write_str(enum cache_write_policy w);
const char *cache_alloc_str(enum cache_alloc_policy a);
const char *cache_inclusion_str(enum cache_inclusion i);
