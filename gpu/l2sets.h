#pragma once

/*
 * A set-associative L2 of 128-byte lines whose addresses are hashed to sets, as a GPU's L2
 * hashes them, simulated line by line on a sample of the sets, for whole-tile accesses (as
 * gpu/tilelru.h). Replacement: LRU, SRRIP (2-bit re-reference prediction: a line comes in as
 * "distant", a hit makes it "near", the victim is a distant one, aging all when none is), or
 * random. An optional cap on the dirty lines of a set cleans its oldest dirty line (writes it,
 * keeps it) when a store would pass the cap: the H100 writes dirty lines back while keeping
 * them (03313eb:docs/gpu-run/l2-policy/).
 *
 * Notes: line o of tile id is line key (id, o), hashed. Set sampling: with sample k, only the
 * lines whose hash falls in 1 set of k are simulated, in sets of the same size as the whole
 * cache's, and the counts are multiplied by k: an estimate whose error falls as tiles have
 * more lines (k = 1 simulates every line, exactly). Loads fetch the bytes of missing lines;
 * stores allocate without fetching (write-validate) and make the lines dirty; evicting or
 * cleaning a dirty line writes its bytes. Nothing is flushed at the end (ncu's counters).
 */

#include <stdbool.h>
#include <stdint.h>

#include "gpu/tilelru.h"

enum l2sets_policy {
	L2SETS_LRU = 0,
	L2SETS_SRRIP,
	L2SETS_RANDOM,
};

#define L2SETS_LINE 128 /* bytes */
#define L2SETS_WAYS_MAX 64

struct l2sets_config {
	uint64_t capacity_bytes;
	uint32_t ways;       /* 1 .. L2SETS_WAYS_MAX */
	uint32_t sample;     /* simulate 1 set in sample (a power of two; 0 or 1: all) */
	uint32_t dirty_ways; /* dirty lines a set keeps at most; 0: no cap */
	uint32_t partitions; /* 0 or 1: one; 2: two halves, a line homed in one (below) */
	enum l2sets_policy policy;
	uint64_t seed; /* the hash of lines to sets and random replacement */
	/* Lines by address (l2sets_access_at()), hashed by 2 MiB page as the H100's eviction sets
	 * show (03313eb:docs/gpu-run/l2-evict/): a partition's sets are n x 512 (n >= 16: 25 on the
	 * H100), a line's set (x, y) has y a linear function of its bits within the page, x its
	 * page's colour plus its address bits 17 to 20, mod n; colours and the partition's page
	 * term are drawn from the seed per page (physical pages are not known). */
	bool by_page;
};

struct l2sets;

/* "lru", "srrip" or "random" into *out; -EINVAL for anything else. */
int l2sets_policy_parse(const char *text, enum l2sets_policy *out);

/* The policy's name, as l2sets_policy_parse() reads it. */
const char *l2sets_policy_str(enum l2sets_policy p);

/* NULL with a static message in *why (when why is not NULL) when the config is out of range:
 * fewer sets than sample x 1, ways out of range, dirty_ways above ways; NULL with *why NULL
 * when memory is short. Caller frees with l2sets_destroy(). */
struct l2sets *l2sets_create(const struct l2sets_config *c, const char **why);
void l2sets_destroy(struct l2sets *s);

/* Loads (write false) or stores (write true) all of tile id, bytes long (1 .. 8 MiB; the same
 * every time for one id), counted to class cls (< TILELRU_CLASSES), from an SM on side `side`
 * (0 or 1; with two partitions, the partition it is wired to: the A100 and H100 whitepapers
 * say each partition caches the data the SMs of its GPCs read, so a line read from the far
 * side is kept twice, in its home partition and as a copy in the near one). */
void l2sets_access(struct l2sets *s, uint64_t id, uint32_t bytes, unsigned cls, bool write,
		   unsigned side);

/* As l2sets_access() for the bytes at addr (by_page caches only): each 128-byte line keyed by
 * its address and hashed to its set by page (above). */
void l2sets_access_at(struct l2sets *s, uint64_t addr, uint32_t bytes, unsigned cls, bool write,
		      unsigned side);

/* DRAM traffic so far (scaled by the sample), of class cls, or of all with TILELRU_CLASSES. */
struct tilelru_traffic l2sets_dram(const struct l2sets *s, unsigned cls);

/* Load bytes so far (scaled by the sample), of class cls or of all with TILELRU_CLASSES, whose
 * line the first partition looked in lacked: the SM's own (near) partition with two, the
 * cache with one. What ncu counts as lts__t_sectors_srcunit_tex_op_read_lookup_miss: with
 * two partitions a miss is served by the other partition (its home) or by DRAM. */
uint64_t l2sets_read_lookup_misses(const struct l2sets *s, unsigned cls);

/* Lines the sets hold now, dirty ones in *dirty (not scaled). */
uint64_t l2sets_held_lines(const struct l2sets *s, uint64_t *dirty);
