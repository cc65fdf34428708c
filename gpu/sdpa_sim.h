#pragma once

/*
 * The GPU model of FlashAttention's SDPA kernels (gpu/sdpa_plan.h): thread blocks issued
 * in grid order to the SMs' block slots, every resident block advancing one K/V tile step per
 * round, a finished block's slot taken by the next block in grid order; all their tile loads
 * and stores go through one L2 model, and DRAM bytes are its misses and dirty evictions during
 * the kernel (no final flush: what Nsight Compute counts, which flushes between kernels). The
 * split-KV combine kernel runs on a cold L2 of its own.
 */

#include <stddef.h>
#include <stdint.h>

#include "gpu/l2sets.h"
#include "gpu/sdpa_plan.h"

enum sdpa_backend {
	SDPA_BACKEND_TILES = 0, /* gpu/tilelru.h: fully associative LRU, one step per tile */
	SDPA_BACKEND_LINES,     /* sim/cache.c: fully associative LRU of 128-byte lines */
	/* two L2 partitions of l2_bytes / 2 each, every tile's halves homed one in each; a
	 * block's side is its SM's; a load looks in its side's partition, then in the home
	 * one, then DRAM, and keeps a copy in its side's (A100/H100 whitepapers: each
	 * partition caches data for the SMs of the GPCs directly connected to it); stores go
	 * to the home partition only; consecutive slots alternate sides */
	SDPA_BACKEND_PARTITIONS,
	/* gpu/l2expect.h: LRU in sets of line_ways 128-byte lines, in expectation over a
	 * uniform hash of lines to sets (one partition, no dirty cap) */
	SDPA_BACKEND_SETS,
	/* gpu/l2sets.h: hashed sets of line_ways 128-byte lines, simulated line by line on a
	 * sample of the sets, policy and dirty cap below */
	SDPA_BACKEND_HASHED,
};

/* sdpa_model.ways: the GPU's associativity */
#define SDPA_WAYS_GPU UINT32_MAX

struct sdpa_model {
	uint64_t l2_bytes; /* 0: the GPU's l2_model_bytes */
	uint32_t slots;    /* resident blocks; 0: SMs x the plan's blocks per SM */
	/* K/V tiles a set holds: sets = l2_bytes / (ways x K tile bytes), tiles hashed to sets
	 * (gpu/tilelru.h); 0: fully associative; SDPA_WAYS_GPU: the GPU's l2_ways */
	uint32_t ways;
	uint64_t random_seed;      /* 0: LRU; else random replacement from this seed */
	/* SDPA_BACKEND_SETS, SDPA_BACKEND_HASHED: 128-byte lines a set holds; 0: the GPU's */
	uint32_t line_ways;
	uint32_t dirty_ways;       /* SDPA_BACKEND_HASHED: 0: the GPU's; UINT32_MAX: none */
	uint32_t sample;           /* SDPA_BACKEND_HASHED: 1 set in sample; 0: 16 */
	enum l2sets_policy policy; /* SDPA_BACKEND_HASHED */
	uint32_t partitions;       /* SDPA_BACKEND_HASHED: 1 or 2; 0: the GPU's */
	/* SDPA_BACKEND_HASHED: lines by address, hashed by 2 MiB page (gpu/l2sets.h by_page),
	 * each array in pages of its own as PyTorch's allocator gives them; page_seed draws
	 * the pages' colours */
	bool by_page;
	uint64_t page_seed;
	bool no_spill;             /* leave out the spilled registers (gpu/sdpa_plan.h) */
	enum sdpa_backend backend; /* SDPA_BACKEND_LINES: fully associative LRU only */
};

struct sdpa_traffic {
	uint64_t read_bytes, write_bytes;
	uint64_t read[SDPA_ARRAYS], write[SDPA_ARRAYS];
	/* Load bytes the SM's own L2 partition lacked (ncu's
	 * lts__t_sectors_srcunit_tex_op_read_lookup_miss): with the hashed L2 only, whose two
	 * partitions serve some of them from the other one; the one-cache models' equal
	 * read_bytes. lookup_known false: a tile model of two partitions, not counted. */
	uint64_t read_lookup_miss_bytes;
	bool lookup_known;
};

/* sdpa_model.line_ways's default with by_page: the H100's sets are 16-way
 * (03313eb:docs/gpu-run/l2-evict/) */
#define SDPA_PAGE_WAYS 16

/* sdpa_model.sample's default: 1 set in 16 (test-sdpa checks it against all sets) */
#define SDPA_SAMPLE_DEFAULT 16

struct sdpa_result {
	struct sdpa_model model;     /* the model run, the GPU's values in place of zeros */
	struct sdpa_traffic main;    /* flash_fwd_kernel or flash_fwd_splitkv_kernel */
	struct sdpa_traffic combine; /* flash_fwd_splitkv_combine_kernel; zero without splits */
	uint32_t slots;
	uint64_t l2_bytes;
	uint32_t ways, sets;
};

/* The sets of the tile L2 for plan p: l2_bytes / (ways x K tile bytes), at least 1; 1 when
 * ways is 0. */
uint32_t sdpa_l2_sets(const struct sdpa_plan *p, uint64_t l2_bytes, uint32_t ways);

/* Simulates plan p on gpu g. Returns 0, or -ENOMEM with a one-line message in err when the
 * model's memory cannot be allocated, or -EINVAL with one when the hashed L2's geometry is
 * impossible (fewer sets than the sample). */
int sdpa_simulate(const struct sdpa_plan *p, const struct sdpa_gpu *g, const struct sdpa_model *m,
		  struct sdpa_result *out, char *err, size_t errlen);
