#pragma once

/*
 * The GPU model of FlashAttention's SDPA kernels (kernels/sdpa_plan.h): thread blocks issued
 * in grid order to the SMs' block slots, every resident block advancing one K/V tile step per
 * round, a finished block's slot taken by the next block in grid order; all their tile loads
 * and stores go through one L2 model, and DRAM bytes are its misses and dirty evictions during
 * the kernel (no final flush: what Nsight Compute counts, which flushes between kernels). The
 * split-KV combine kernel runs on a cold L2 of its own.
 */

#include <stddef.h>
#include <stdint.h>

#include "kernels/sdpa_plan.h"

enum sdpa_backend {
	SDPA_BACKEND_TILES = 0, /* sim/tilelru.h: fully associative LRU, one step per tile */
	SDPA_BACKEND_LINES,     /* sim/cache.c: fully associative LRU of 128-byte lines */
};

struct sdpa_model {
	uint64_t l2_bytes; /* 0: the GPU's l2_model_bytes */
	uint32_t slots;    /* resident blocks; 0: SMs x the plan's blocks per SM */
	enum sdpa_backend backend;
};

struct sdpa_traffic {
	uint64_t read_bytes, write_bytes;
	uint64_t read[SDPA_ARRAYS], write[SDPA_ARRAYS];
};

struct sdpa_result {
	struct sdpa_traffic main;    /* flash_fwd_kernel or flash_fwd_splitkv_kernel */
	struct sdpa_traffic combine; /* flash_fwd_splitkv_combine_kernel; zero without splits */
	uint32_t slots;
	uint64_t l2_bytes;
};

/* Simulates plan p on gpu g. Returns 0, or -ENOMEM with a one-line message in err when the
 * model's memory cannot be allocated. */
int sdpa_simulate(const struct sdpa_plan *p, const struct sdpa_gpu *g, const struct sdpa_model *m,
		  struct sdpa_result *out, char *err, size_t errlen);
