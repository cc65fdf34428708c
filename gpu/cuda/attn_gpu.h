#pragma once

/*
 * The attention kernels on an NVIDIA GPU (gpu/cuda/attn_gpu.cu), for the hardware check:
 * the same layout as the CPU kernels ([batch][heads][N][d], fp32, fp16 or bf16 storage, fp32
 * compute), so the CPU double-precision reference checks them and memsim's traced kernels
 * predict their traffic.
 *
 *  naive   three kernels, as a framework launches them: a tiled matrix product S = Q K^T /
 *          sqrt(d) (S stored in the storage type), a row softmax over S in place (the causal
 *          mask applied there), a tiled matrix product O = P V.
 *  flash2  one fused kernel in FlashAttention-2's order: a thread block per block of B_r
 *          query rows of one head, the K and V tiles of B_c rows streamed through shared
 *          memory, the online softmax, O and the logsumexp written once; causal skips fully
 *          masked key blocks.
 *
 * C interface; every function returns 0 or -1 with a one-line message in err.
 */

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct attn_gpu;

/* What to run; kept free of kernels/attn.h (C only) so CUDA C++ can include it. */
struct attn_gpu_config {
	int flash2; /* 0: naive, 1: flash2 */
	size_t N, d, heads, kv_heads, batch;
	size_t N_kv; /* key and value rows (decode: N < N_kv); 0 means N */
	int storage;  /* 0 fp32, 1 fp16, 2 bf16 */
	int causal;
};

/* Whether a CUDA device can be used here; the reason in err when not. */
bool attn_gpu_available(char *err, size_t errlen);

/* Device buffers for c; the name of the device in name. */
int attn_gpu_create(const struct attn_gpu_config *c, struct attn_gpu **out, char *name,
		    size_t namelen, char *err, size_t errlen);
void attn_gpu_destroy(struct attn_gpu *g);

/* Copies Q, K, V (host arrays in the layout and storage type) to the device and sets every
 * output on the device to NaN (so an element a kernel fails to write is caught). */
int attn_gpu_upload(struct attn_gpu *g, const void *Q, const void *K, const void *V, char *err,
		    size_t errlen);

/* Launches the kernel(s) once and waits; checks every launch. */
int attn_gpu_run(struct attn_gpu *g, char *err, size_t errlen);

/* Copies O (and flash2's logsumexp, when lse is not NULL) back to the host. */
int attn_gpu_download(struct attn_gpu *g, void *O, float *lse, char *err, size_t errlen);

/* Median time of reps runs after warm-up runs, in milliseconds (CUDA events), whole kernel
 * sequence; per launch in ms_each[0..2] for naive (scores, softmax, av) when not NULL. */
int attn_gpu_time(struct attn_gpu *g, int warmup, int reps, double *ms, double *ms_each, char *err,
		  size_t errlen);

#ifdef __cplusplus
}
#endif
