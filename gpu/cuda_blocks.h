#pragma once

/*
 * memsim's CUDA kernels (gpu/cuda/attn_gpu.cu) as their thread blocks run on a GPU, for
 * `memsim gpucheck --model blocks`: the grid issued in launch order (x fastest, then y, then z)
 * to the SMs' block slots; every resident block does one step a round (flash2: a K/V tile;
 * the naive products: a 16-wide slice of the inner dimension; softmax: one pass over its
 * row); a finished block's slot goes to the next block in grid order. Every load and store
 * goes through one cache model (the GPU preset's L2, fully associative: a GPU hashes addresses
 * to its sets), so blocks that run at the same time share what they read, as on the GPU: the
 * query heads of a grouped-query decode read their KV head's tiles together, and 1056 softmax
 * rows in flight can overflow the L2.
 *
 * The sequential model (the traced CPU kernels, `--model sequential`) runs the same loads and
 * stores one block after another.
 */

#include <stddef.h>
#include <stdint.h>

#include "gpu/l2sets.h"
#include "kernels/attn.h"
#include "sim/cache.h"

/* The GPU's resources that set how many blocks an SM holds (H100 SXM5: CUDA programming guide,
 * compute capability 9.0). */
struct cuda_blocks_gpu {
	uint32_t sms;
	uint32_t regs_per_sm;     /* 32-bit registers */
	uint32_t smem_per_sm;     /* bytes */
	uint32_t threads_per_sm;
	uint32_t smem_per_block_reserved; /* the driver's share of each block's shared memory */
};

extern const struct cuda_blocks_gpu cuda_blocks_h100;

struct cuda_blocks_result {
	uint64_t read_bytes, write_bytes; /* DRAM, during the launch */
	uint64_t flush_write_bytes;       /* what a final flush writes back */
	uint64_t blocks;                  /* the launch's grid */
	uint32_t slots;                   /* blocks resident at once */
};

/* Launches of c's kernel: naive 3 (scores, softmax, av), flash2 1; 0 for other kernels. */
unsigned cuda_blocks_launches(const struct attn_config *c);

/* Blocks an SM holds for launch `launch` of c on g: the least of the thread, register and
 * shared memory limits (registers per thread as ptxas allocated them for sm_90, measured by
 * ncu: 03313eb:docs/gpu-run/grid/occupancy.csv). */
uint32_t cuda_blocks_per_sm(const struct attn_config *c, unsigned launch,
			    const struct cuda_blocks_gpu *g);

/* Simulates launch `launch` of c on a fresh cache built from cfg (every level taken fully
 * associative), or, where hashed is not NULL, on that hashed L2 (gpu/l2sets.h: the H100's L2
 * as its microbenchmarks show it; a slot's SM on side slot % 2). Returns 0, or -1 with a
 * one-line message in err (the model cannot be allocated, or hashed is out of range). */
int cuda_blocks_simulate(const struct attn_config *c, unsigned launch,
			 const struct cache_config *cfg, const struct l2sets_config *hashed,
			 const struct cuda_blocks_gpu *g, struct cuda_blocks_result *out, char *err,
			 size_t errlen);
