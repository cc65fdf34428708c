#pragma once

/*
 * An idle kernel for the GPU check (gpu/cuda/idle_gpu.cu): one block per SM that waits for
 * a given time and touches no memory but one word per block at the end. Under Nsight Compute
 * it shows the DRAM and L2 traffic that a kernel of that length gets without asking for any:
 * the background that the attention kernels' counters include.
 */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the idle kernel for ms milliseconds (the GPU's global timer) and waits; 0 or -1 with a
 * one-line message in err. */
int idle_gpu_run(double ms, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
