#pragma once

/*
 * PyTorch's flash SDPA on a GPU, laid out as FlashAttention-2 launches it (the version PyTorch
 * 2.11 vendors; csrc/flash_attn/src/flash_api.cpp and flash_fwd_launch_template.h of
 * Dao-AILab/flash-attention): which kernel runs (flash_fwd_kernel, or
 * flash_fwd_splitkv_kernel + flash_fwd_splitkv_combine_kernel), its tiles, grid and splits, and
 * what each thread block loads and stores, tile by tile.
 *
 * Shapes are PyTorch's [batch, heads, seq, d], stored contiguous; fp16 or bf16 (the flash
 * backend refuses fp32).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/attn.h"

/* Arrays, as tile classes (gpu/tilelru.h). */
enum sdpa_array {
	SDPA_Q = 0,
	SDPA_K,
	SDPA_V,
	SDPA_O,
	SDPA_LSE,
	SDPA_OACC, /* split-KV: each split's partial O, float */
	SDPA_LSEACC,
	SDPA_SPILL, /* local memory: spilled registers, one frame per block slot */
	SDPA_ARRAYS,
};

const char *sdpa_array_name(enum sdpa_array a);

struct sdpa_shape {
	uint32_t batch, heads, kv_heads;
	uint64_t n_q, n_kv;
	uint32_t d;
	bool causal;
	bool bf16; /* else fp16; both 2 bytes */
};

/* The GPU: what the launch heuristics and the occupancy need. */
struct sdpa_gpu {
	const char *name;
	uint32_t sms;
	uint32_t regs_per_sm;    /* 32-bit registers */
	uint32_t smem_per_sm;    /* bytes a kernel may use */
	uint64_t l2_model_bytes; /* the L2 as one LRU */
	uint32_t l2_ways;        /* K/V tiles a set holds; 0: fully associative */
	/* the L2 as hashed sets of 128-byte lines (SDPA_BACKEND_HASHED), from microbenchmarks */
	uint64_t l2_hashed_bytes;
	uint32_t l2_hashed_ways, l2_hashed_dirty_ways, l2_hashed_partitions;
	double hbm_bytes_per_s;  /* peak */
	const char *hbm_source;  /* the peak's: a datasheet */
	const char *source;      /* where the numbers come from */
};

/* The GPU named name ("h100", "h200"), or NULL. */
const struct sdpa_gpu *sdpa_gpu_find(const char *name);

/* How the default model (memsim sdpa's) compared with Nsight Compute on the measured shapes of
 * one kind (03313eb:docs/gpu-run/sdpa/, docs/gpu.md "Against Nsight Compute"): the model's bytes
 * read and written over ncu's, at their extremes. test-sdpa checks them against the measurements.
 */
struct sdpa_validation {
	const char
		*kind;   /* "decode, one query row", "prefill, batch 1", "prefill, batch above 1" */
	unsigned shapes; /* measured shapes of that kind */
	double lo, hi;   /* the smallest and largest model / ncu */
	const char *note; /* what the model misses on that kind, or NULL */
};

/* The validation of shape s's kind on gpu g, or NULL where g's SDPA was not measured. */
const struct sdpa_validation *sdpa_validation_of(const struct sdpa_shape *s,
						 const struct sdpa_gpu *g);

struct sdpa_plan {
	struct sdpa_shape shape; /* as asked */
	/* What the kernel sees: with one query and grouped heads, FlashAttention packs the
	 * query heads of a KV head into the sequence (seqlenq_ngroups_swapped). */
	bool swapped;
	uint32_t b, h, hk;
	uint64_t nq, nkv;
	bool causal; /* one query row: FlashAttention drops the mask */
	uint32_t block_m, block_n, warps;
	uint32_t m_blocks, n_blocks;
	uint32_t splits; /* 1: flash_fwd_kernel */
	uint32_t grid[3];
	uint32_t blocks_per_sm;
	uint32_t d_rounded; /* the float accumulator's row */
	uint32_t combine_block_m;
	uint64_t combine_grid;
	uint64_t tiles[SDPA_ARRAYS]; /* tiles per array in the main kernel (spill: two per slot) */
	bool even_mn;                /* FlashAttention's Is_even_MN: no partial tiles, d <= 128 */
	/* local memory (spilled registers) a block stores: once, outside its K/V loop (cold), and
	 * every K/V step (hot); each slot's frame is the two side by side */
	uint32_t spill_cold, spill_hot;
};

/* Checks a shape: NULL if FlashAttention runs it, else a one-line reason. */
const char *sdpa_shape_check(const struct sdpa_shape *s);

/* The launch for a checked shape on gpu. */
void sdpa_plan_make(const struct sdpa_shape *s, const struct sdpa_gpu *gpu, struct sdpa_plan *p);

/* FlashAttention's num_splits_heuristic(): splits for batch x heads x m-blocks blocks on sms
 * slots (it passes twice the SMs), n_blocks K/V blocks, at most max_splits. */
uint32_t sdpa_num_splits(uint64_t batch_nheads_mblocks, uint32_t sms, uint32_t n_blocks,
			 uint32_t max_splits);

/* flashdecode's S where --splits is not given, and where it comes from: on a GPU preset
 * (h100, h100-50m: 132 SMs) FlashAttention's num_splits_heuristic() over batch x heads x
 * query blocks on twice the SMs and the T_c key blocks, at most 128 (sdpa_num_splits(), with
 * c's B_r and B_c as the tiles; packed grouped-query decode counts kv_heads heads of g
 * rows, attn_decode_view()); 1 on a CPU preset, lab or an explicit spec. */
uint64_t sdpa_default_splits(const struct attn_config *c, const char *preset,
			     enum attn_splits_source *source);

/* One tile access: array, tile index in it (below plan->tiles[array]), bytes (rounded up to
 * 32-byte sectors), byte offset in the array, load or store. */
struct sdpa_access {
	enum sdpa_array array;
	uint64_t tile;
	uint32_t bytes;
	uint64_t offset;
	bool store;
};

/* Blocks in the main kernel's grid. */
uint64_t sdpa_blocks(const struct sdpa_plan *p);
/* Steps of block idx (grid order, x fastest): one K/V tile each, at least one. */
uint32_t sdpa_block_steps(const struct sdpa_plan *p, uint64_t idx);
/* The steps of all the main kernel's blocks: the simulation's work (sdpa_simulate() runs one
 * step of a block at a time). A double, as it may pass 2^64; it walks the query blocks and
 * splits of one batch and head (up to 2^24 of them). */
double sdpa_steps(const struct sdpa_plan *p);
/* The accesses of step `step` of block idx into out[0 .. SDPA_STEP_MAX), in the kernel's
 * order (Q, then K and V, then the outputs); returns how many. */
#define SDPA_STEP_MAX 5
unsigned sdpa_block_step(const struct sdpa_plan *p, uint64_t idx, uint32_t step,
			 struct sdpa_access out[SDPA_STEP_MAX]);
/* Bytes the main kernel's blocks store to local memory: each block's cold part once and its
 * hot part every K/V step (what ncu counts as local store sectors). */
uint64_t sdpa_spill_store_bytes(const struct sdpa_plan *p);
/* Bytes of array a (the main kernel's arrays and the split accumulators). */
uint64_t sdpa_array_bytes(const struct sdpa_plan *p, enum sdpa_array a);
