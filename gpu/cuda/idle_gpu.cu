/*
 * The idle kernel: see idle_gpu.h. Every block's first thread reads the GPU's nanosecond
 * global timer until the time is up; the other threads leave at once. The one store per block
 * keeps the compiler from removing the wait.
 */

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdio.h>

#include "gpu/cuda/idle_gpu.h"

static __device__ __forceinline__ unsigned long long
global_ns(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

static __global__ void
idle_kernel(unsigned long long ns, unsigned long long *done)
{
	unsigned long long t0, t;

	if (threadIdx.x)
		return;
	t0 = global_ns();
	do
		t = global_ns();
	while (t - t0 < ns);
	done[blockIdx.x] = t - t0;
}

static int
ok(cudaError_t e, const char *what, char *err, size_t errlen)
{
	if (e == cudaSuccess)
		return 1;
	snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e));
	return 0;
}

extern "C" int
idle_gpu_run(double ms, char *err, size_t errlen)
{
	unsigned long long *done = NULL;
	cudaDeviceProp prop;
	int rc = -1;

	if (!(ms > 0 && ms <= 600000)) {
		snprintf(err, errlen, "idle time must be in (0, 600000] ms");
		return -1;
	}
	if (!ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties", err, errlen) ||
	    !ok(cudaMalloc(&done, prop.multiProcessorCount * sizeof(*done)), "cudaMalloc", err,
		errlen))
		return -1;
	idle_kernel<<<prop.multiProcessorCount, 32>>>((unsigned long long)(ms * 1e6), done);
	if (ok(cudaGetLastError(), "idle launch", err, errlen) &&
	    ok(cudaDeviceSynchronize(), "idle kernel", err, errlen))
		rc = 0;
	cudaFree(done);
	return rc;
}
