#pragma once

/*
 * L2 microbenchmarks as CUDA kernels (kernels/cuda/l2probe_gpu.cu), for the questions the
 * SDPA model of docs/gpu.md leaves open (issue 22 item 5); tools/gpu-l2/probe.sh runs them
 * under Nsight Compute, each kernel cold. Every kernel keeps a fixed number of blocks per SM
 * resident for its whole run (shared memory sized so that no more fit) and loops over steps:
 *
 *   rewrite    2 blocks per SM; each step a block reads the next tile of a stream read once
 *              (step t, block b: tile t * blocks + b) and rewrites its own region of `region`
 *              bytes (read back from step 1 on, as a register spill is): do lines rewritten
 *              every step reach DRAM while the stream passes? With `local`, the region is
 *              each thread's local memory (a volatile array: the spills' own path, through
 *              the L1), 1 to 16 KiB a block; otherwise global memory read with __ldcg.
 *   tiles      2 blocks per SM; `total` bytes of output in disjoint tiles, each written once,
 *              optionally after reading its share of a stream of `stream` bytes: does the L2
 *              write dirty lines to DRAM during the kernel?
 *   crossread  1 block per SM; a buffer of `buffer` bytes in chunks, each chunk read by a
 *              first reader at step t and by its partner at step t + lag (a grid barrier per
 *              step keeps the steps in line); partners on the two halves of the SM ids
 *              (cross) or on the same half: does a re-read across the halves miss more?
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum l2probe_kind { L2PROBE_REWRITE, L2PROBE_TILES, L2PROBE_CROSSREAD };

struct l2probe_config {
	enum l2probe_kind kind;
	uint64_t tile;   /* bytes: rewrite's stream tile, tiles' output tile, crossread's chunk */
	uint64_t region; /* rewrite: bytes rewritten per block per step (0: none) */
	uint64_t steps;  /* rewrite: steps */
	uint64_t total;  /* tiles: output bytes */
	uint64_t stream; /* tiles: stream bytes (0 or a multiple of total) */
	uint64_t buffer; /* crossread: buffer bytes */
	uint64_t lag;    /* crossread: steps between a chunk's two reads */
	bool cross;      /* crossread: partners on different halves of the SM ids */
	bool local;      /* rewrite: the region in local memory (1 to 128 KiB, a power of two) */
	uint64_t out_tile; /* rewrite: bytes of fresh output a block writes each step (0: none),
			      as finished blocks' O tiles keep dirty lines coming */
};

/* What ran: the bytes the kernel asks for once each (its compulsory DRAM traffic) and more. */
struct l2probe_result {
	char device[256];
	unsigned sms, blocks;
	uint64_t steps;          /* steps each block loops over */
	uint64_t read_bytes;     /* distinct bytes read (every one from DRAM at least once) */
	uint64_t write_bytes;    /* distinct bytes written (at most this reaches DRAM, at the end) */
	uint64_t rewritten;      /* rewrite: bytes stored to the regions over all steps */
	uint64_t reread;         /* crossread: bytes read a second time */
	uint64_t reuse_distance; /* crossread: distinct bytes read between a chunk's two reads */
};

/* "rewrite", "tiles" or "crossread". */
const char *l2probe_kind_name(enum l2probe_kind k);

/* The host-side check of a configuration (no GPU needed): 0, or -1 with one line in err. */
int l2probe_config_check(const struct l2probe_config *c, char *err, size_t errlen);

/* Runs the kernel once and waits; 0, or -1 with one line in err. */
int l2probe_gpu_run(const struct l2probe_config *c, struct l2probe_result *r, char *err,
		    size_t errlen);

#ifdef __cplusplus
}
#endif
