/*
 * The attention kernels on an NVIDIA GPU: see attn_gpu.h. Plain CUDA C++ (no library), fp32
 * compute, storage fp32, fp16 or bf16; N queries against N_kv keys, the causal mask aligned at
 * the end as the CPU kernels' (query row i sees keys j <= i + N_kv - N). Simple on purpose:
 * tiled products through shared memory and a row softmax for naive, one fused kernel for
 * flash2; what is measured is the bytes they move.
 *
 * Notes:
 * - Index arithmetic is 64-bit: N = 16384 with 16 heads has 2^32 scores.
 * - The naive products use 16 x 16 tiles: every Q, K (or P, V) element a block needs is read
 *   from global memory once per block; the L2 (50 MiB on an H100) absorbs the re-reads
 *   between blocks, which is what the DRAM counters and memsim's h100 preset compare.
 * - flash2 keeps its tiles (Q, K, V, S, O: fp32) in dynamic shared memory: 82 KiB at d = 64,
 *   148 KiB at d = 128 (the most this build allows).
 */

#include "gpu/cuda/attn_gpu.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TS 16	      /* naive tile edge */
#define FL_BR 64      /* flash2 query rows per block */
#define FL_BC 64      /* flash2 key rows per tile */
#define FL_THREADS 256
#define D_MAX 128

static __device__ __forceinline__ float
ld(const float *p)
{
	return *p;
}

static __device__ __forceinline__ float
ld(const __half *p)
{
	return __half2float(*p);
}

static __device__ __forceinline__ float
ld(const __nv_bfloat16 *p)
{
	return __bfloat162float(*p);
}

/* A load the compiler may not drop when its value is masked away. */
static __device__ __forceinline__ float
ld_all(const float *p)
{
	return *(const volatile float *)p;
}

static __device__ __forceinline__ float
ld_all(const __half *p)
{
	return __half2float(__ushort_as_half(*(const volatile unsigned short *)p));
}

static __device__ __forceinline__ float
ld_all(const __nv_bfloat16 *p)
{
	return __bfloat162float(__ushort_as_bfloat16(*(const volatile unsigned short *)p));
}

static __device__ __forceinline__ void
st(float *p, float v)
{
	*p = v;
}

static __device__ __forceinline__ void
st(__half *p, float v)
{
	*p = __float2half_rn(v);
}

static __device__ __forceinline__ void
st(__nv_bfloat16 *p, float v)
{
	*p = __float2bfloat16_rn(v);
}

/* Where a head's rows start: [batch][nh][N][d]. */
static __device__ __forceinline__ size_t
head_off(int b, int h, int nh, int N, int d)
{
	return (((size_t)b * nh + h) * N) * d;
}

/* S = Q K^T * scale, one 16 x 16 tile of S per block; blockIdx.z = batch * heads + head. */
template <typename T>
static __global__ void
scores_kernel(const T *Q, const T *K, T *S, int N, int Nk, int d, int heads, int kv_heads,
	      float scale)
{
	__shared__ float qs[TS][TS + 1], ks[TS][TS + 1];
	const int bh = blockIdx.z, b = bh / heads, h = bh % heads;
	const int kvh = h / (heads / kv_heads);
	const T *Qh = Q + head_off(b, h, heads, N, d), *Kh = K + head_off(b, kvh, kv_heads, Nk, d);
	T *Sh = S + ((size_t)bh * N) * Nk;
	const int tx = threadIdx.x, ty = threadIdx.y;
	const int row = blockIdx.y * TS + ty, col = blockIdx.x * TS + tx;
	const int krow = blockIdx.x * TS + ty; /* the K row this thread loads */
	float acc = 0;

	for (int k0 = 0; k0 < d; k0 += TS) {
		qs[ty][tx] = row < N && k0 + tx < d ? ld(Qh + (size_t)row * d + k0 + tx) : 0.0f;
		ks[ty][tx] = krow < Nk && k0 + tx < d ? ld(Kh + (size_t)krow * d + k0 + tx) : 0.0f;
		__syncthreads();
		for (int kk = 0; kk < TS; kk++)
			acc += qs[ty][kk] * ks[tx][kk];
		__syncthreads();
	}
	if (row < N && col < Nk)
		st(Sh + (size_t)row * Nk + col, acc * scale);
}

/* P = softmax(S) row by row, in place; causal: keys past the query's position (row + N_kv - N)
 * get 0. One block a row: it reads the row (all of it), then its visible part again for the
 * sum, then writes it. */
template <typename T>
static __global__ void
softmax_kernel(T *S, int N, int Nk, int causal)
{
	__shared__ float red[FL_THREADS];
	const int row = blockIdx.x, bh = blockIdx.y, tid = threadIdx.x;
	T *r = S + ((size_t)bh * N + row) * Nk;
	const int lim = causal ? row + (Nk - N) + 1 : Nk;
	float mx = -INFINITY, sum = 0;

	/* the whole row, masked keys too, as memsim's CPU kernel reads it (a framework's softmax
	 * over a masked S reads every element); the volatile load keeps the compiler from
	 * skipping the masked ones */
	for (int j = tid; j < Nk; j += blockDim.x) {
		const float v = ld_all(r + j);

		mx = fmaxf(mx, j < lim ? v : -INFINITY);
	}
	red[tid] = mx;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s /= 2) {
		if (tid < s)
			red[tid] = fmaxf(red[tid], red[tid + s]);
		__syncthreads();
	}
	mx = red[0];
	__syncthreads();
	for (int j = tid; j < lim; j += blockDim.x)
		sum += expf(ld(r + j) - mx);
	red[tid] = sum;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s /= 2) {
		if (tid < s)
			red[tid] += red[tid + s];
		__syncthreads();
	}
	sum = red[0];
	for (int j = tid; j < Nk; j += blockDim.x)
		st(r + j, j < lim ? expf(ld(r + j) - mx) / sum : 0.0f);
}

/* O = P V, one 16 x 16 tile of O per block. */
template <typename T>
static __global__ void
av_kernel(const T *P, const T *V, T *O, int N, int Nk, int d, int heads, int kv_heads)
{
	__shared__ float ps[TS][TS + 1], vs[TS][TS + 1];
	const int bh = blockIdx.z, b = bh / heads, h = bh % heads;
	const int kvh = h / (heads / kv_heads);
	const T *Ph = P + ((size_t)bh * N) * Nk, *Vh = V + head_off(b, kvh, kv_heads, Nk, d);
	T *Oh = O + head_off(b, h, heads, N, d);
	const int tx = threadIdx.x, ty = threadIdx.y;
	const int row = blockIdx.y * TS + ty, col = blockIdx.x * TS + tx;
	float acc = 0;

	for (int j0 = 0; j0 < Nk; j0 += TS) {
		ps[ty][tx] = row < N && j0 + tx < Nk ? ld(Ph + (size_t)row * Nk + j0 + tx) : 0.0f;
		vs[ty][tx] = j0 + ty < Nk && col < d ? ld(Vh + (size_t)(j0 + ty) * d + col) : 0.0f;
		__syncthreads();
		for (int jj = 0; jj < TS; jj++)
			acc += ps[ty][jj] * vs[jj][tx];
		__syncthreads();
	}
	if (row < N && col < d)
		st(Oh + (size_t)row * d + col, acc);
}

/* FlashAttention-2 order: one block per FL_BR query rows of one head (blockIdx.y). */
template <typename T>
static __global__ void
flash2_kernel(const T *Q, const T *K, const T *V, T *O, float *lse, int N, int Nk, int d,
	      int heads, int kv_heads, int causal, float scale)
{
	extern __shared__ float sm[];
	float *Qs = sm, *Ks = Qs + FL_BR * d, *Vs = Ks + FL_BC * d, *Ss = Vs + FL_BC * d;
	float *Os = Ss + FL_BR * FL_BC, *m = Os + FL_BR * d, *l = m + FL_BR, *alpha = l + FL_BR;
	const int bh = blockIdx.y, b = bh / heads, h = bh % heads;
	const int kvh = h / (heads / kv_heads), tid = threadIdx.x;
	const int r0 = blockIdx.x * FL_BR, nr = min(FL_BR, N - r0);
	const int off = Nk - N; /* keys before the first query's position */
	const int kend = causal ? r0 + nr + off : Nk;
	const T *Qh = Q + head_off(b, h, heads, N, d) + (size_t)r0 * d;
	const T *Kh = K + head_off(b, kvh, kv_heads, Nk, d);
	const T *Vh = V + head_off(b, kvh, kv_heads, Nk, d);

	for (int i = tid; i < nr * d; i += blockDim.x) {
		Qs[i] = ld(Qh + i);
		Os[i] = 0;
	}
	for (int r = tid; r < nr; r += blockDim.x) {
		m[r] = -INFINITY;
		l[r] = 0;
	}
	for (int c0 = 0; c0 < kend; c0 += FL_BC) {
		const int nc = min(FL_BC, Nk - c0);

		__syncthreads();
		for (int i = tid; i < nc * d; i += blockDim.x) {
			Ks[i] = ld(Kh + (size_t)c0 * d + i);
			Vs[i] = ld(Vh + (size_t)c0 * d + i);
		}
		__syncthreads();
		for (int i = tid; i < nr * FL_BC; i += blockDim.x) {
			const int r = i / FL_BC, c = i % FL_BC;
			float v = -INFINITY;

			if (c < nc && (!causal || c0 + c <= r0 + r + off)) {
				float acc = 0;

				for (int k = 0; k < d; k++)
					acc += Qs[r * d + k] * Ks[c * d + k];
				v = acc * scale;
			}
			Ss[i] = v;
		}
		__syncthreads();
		for (int r = tid; r < nr; r += blockDim.x) {
			float rmax = -INFINITY, mnew, a, psum = 0;

			for (int c = 0; c < nc; c++)
				rmax = fmaxf(rmax, Ss[r * FL_BC + c]);
			mnew = fmaxf(m[r], rmax);
			if (mnew == -INFINITY) { /* every key so far masked */
				alpha[r] = 1;
				for (int c = 0; c < FL_BC; c++)
					Ss[r * FL_BC + c] = 0;
				continue;
			}
			a = expf(m[r] - mnew);
			for (int c = 0; c < nc; c++) {
				float p = expf(Ss[r * FL_BC + c] - mnew);

				Ss[r * FL_BC + c] = p;
				psum += p;
			}
			for (int c = nc; c < FL_BC; c++)
				Ss[r * FL_BC + c] = 0;
			l[r] = l[r] * a + psum;
			m[r] = mnew;
			alpha[r] = a;
		}
		__syncthreads();
		for (int i = tid; i < nr * d; i += blockDim.x) {
			const int r = i / d, k = i % d;
			float acc = Os[i] * alpha[r];

			for (int c = 0; c < nc; c++)
				acc += Ss[r * FL_BC + c] * Vs[c * d + k];
			Os[i] = acc;
		}
	}
	__syncthreads();
	{
		T *Oh = O + head_off(b, h, heads, N, d) + (size_t)r0 * d;
		float *L = lse + ((size_t)bh * N) + r0;

		for (int i = tid; i < nr * d; i += blockDim.x)
			st(Oh + i, Os[i] / l[i / d]);
		for (int r = tid; r < nr; r += blockDim.x)
			L[r] = m[r] + logf(l[r]);
	}
}

struct attn_gpu {
	struct attn_gpu_config cfg;
	size_t s, q_bytes, kv_bytes, s_bytes, lse_bytes;
	void *Q, *K, *V, *O, *S;
	float *lse;
	size_t smem;
};

static bool
ok(cudaError_t e, const char *what, char *err, size_t errlen)
{
	if (e == cudaSuccess)
		return true;
	snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e));
	return false;
}

extern "C" bool
attn_gpu_available(char *err, size_t errlen)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess) {
		snprintf(err, errlen, "no usable CUDA device: %s", cudaGetErrorString(e));
		return false;
	}
	if (n == 0) {
		snprintf(err, errlen, "no CUDA device on this machine");
		return false;
	}
	return true;
}

extern "C" int
attn_gpu_create(const struct attn_gpu_config *c, struct attn_gpu **out, char *name,
		size_t namelen, char *err, size_t errlen)
{
	struct attn_gpu *g;
	cudaDeviceProp prop;
	const size_t Nk = c->N_kv ? c->N_kv : c->N;

	*out = NULL;
	if (c->d == 0 || c->d > D_MAX || c->N == 0 || c->heads == 0 || c->kv_heads == 0 ||
	    c->heads % c->kv_heads || c->batch == 0 || Nk < c->N || Nk > INT_MAX ||
	    c->storage < 0 || c->storage > 2) {
		snprintf(err, errlen, "the GPU kernels take 0 < d <= %d, 0 < N <= N_kv < 2^31, "
				      "kv_heads dividing heads, fp32, fp16 or bf16",
			 D_MAX);
		return -1;
	}
	if (!attn_gpu_available(err, errlen) ||
	    !ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties", err, errlen))
		return -1;
	snprintf(name, namelen, "%s", prop.name);
	g = (struct attn_gpu *)calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "out of host memory");
		return -1;
	}
	g->cfg = *c;
	g->cfg.N_kv = Nk;
	g->s = c->storage ? 2 : 4;
	g->q_bytes = c->batch * c->heads * c->N * c->d * g->s;
	g->kv_bytes = c->batch * c->kv_heads * Nk * c->d * g->s;
	g->s_bytes = !c->flash2 ? c->batch * c->heads * c->N * Nk * g->s : 0;
	g->lse_bytes = c->batch * c->heads * c->N * sizeof(float);
	g->smem = (size_t)(3 * FL_BR * c->d + FL_BC * c->d + FL_BR * FL_BC + 3 * FL_BR) *
		  sizeof(float);
	if (!ok(cudaMalloc(&g->Q, g->q_bytes), "cudaMalloc Q", err, errlen) ||
	    !ok(cudaMalloc(&g->K, g->kv_bytes), "cudaMalloc K", err, errlen) ||
	    !ok(cudaMalloc(&g->V, g->kv_bytes), "cudaMalloc V", err, errlen) ||
	    !ok(cudaMalloc(&g->O, g->q_bytes), "cudaMalloc O", err, errlen) ||
	    (g->s_bytes && !ok(cudaMalloc(&g->S, g->s_bytes), "cudaMalloc S", err, errlen)) ||
	    !ok(cudaMalloc((void **)&g->lse, g->lse_bytes), "cudaMalloc lse", err, errlen)) {
		attn_gpu_destroy(g);
		return -1;
	}
	if (c->flash2) {
		const cudaFuncAttribute a = cudaFuncAttributeMaxDynamicSharedMemorySize;
		cudaError_t e =
			c->storage == 2 ? cudaFuncSetAttribute(flash2_kernel<__nv_bfloat16>, a,
							       (int)g->smem)
			: c->storage == 1 ? cudaFuncSetAttribute(flash2_kernel<__half>, a,
								 (int)g->smem)
					  : cudaFuncSetAttribute(flash2_kernel<float>, a, (int)g->smem);

		if (!ok(e, "shared memory for flash2", err, errlen)) {
			attn_gpu_destroy(g);
			return -1;
		}
	}
	*out = g;
	return 0;
}

extern "C" void
attn_gpu_destroy(struct attn_gpu *g)
{
	if (!g)
		return;
	cudaFree(g->Q);
	cudaFree(g->K);
	cudaFree(g->V);
	cudaFree(g->O);
	cudaFree(g->S);
	cudaFree(g->lse);
	free(g);
}

extern "C" int
attn_gpu_upload(struct attn_gpu *g, const void *Q, const void *K, const void *V, char *err,
		size_t errlen)
{
	if (!ok(cudaMemcpy(g->Q, Q, g->q_bytes, cudaMemcpyHostToDevice), "copy Q", err, errlen) ||
	    !ok(cudaMemcpy(g->K, K, g->kv_bytes, cudaMemcpyHostToDevice), "copy K", err, errlen) ||
	    !ok(cudaMemcpy(g->V, V, g->kv_bytes, cudaMemcpyHostToDevice), "copy V", err, errlen) ||
	    /* all-ones bit patterns are NaN in fp32, fp16 and bf16 */
	    !ok(cudaMemset(g->O, 0xff, g->q_bytes), "poison O", err, errlen) ||
	    (g->S && !ok(cudaMemset(g->S, 0xff, g->s_bytes), "poison S", err, errlen)) ||
	    !ok(cudaMemset(g->lse, 0xff, g->lse_bytes), "poison lse", err, errlen) ||
	    !ok(cudaDeviceSynchronize(), "upload", err, errlen))
		return -1;
	return 0;
}

template <typename T>
static cudaError_t
launch(struct attn_gpu *g, int part)
{
	const struct attn_gpu_config *c = &g->cfg;
	const int N = (int)c->N, Nk = (int)c->N_kv, d = (int)c->d, H = (int)c->heads;
	const int KH = (int)c->kv_heads;
	const int BH = (int)(c->batch * c->heads);
	const float scale = 1.0f / sqrtf((float)d);
	T *Q = (T *)g->Q, *K = (T *)g->K, *V = (T *)g->V, *O = (T *)g->O, *S = (T *)g->S;

	if (c->flash2) {
		dim3 grid((unsigned)((N + FL_BR - 1) / FL_BR), (unsigned)BH);

		flash2_kernel<T><<<grid, FL_THREADS, g->smem>>>(Q, K, V, O, g->lse, N, Nk, d, H,
								  KH, c->causal ? 1 : 0, scale);
		return cudaGetLastError();
	}
	if (part < 0 || part == 0) {
		dim3 grid((unsigned)((Nk + TS - 1) / TS), (unsigned)((N + TS - 1) / TS),
			  (unsigned)BH);

		scores_kernel<T><<<grid, dim3(TS, TS)>>>(Q, K, S, N, Nk, d, H, KH, scale);
		if (cudaPeekAtLastError() != cudaSuccess)
			return cudaGetLastError();
	}
	if (part < 0 || part == 1) {
		softmax_kernel<T><<<dim3((unsigned)N, (unsigned)BH), FL_THREADS>>>(
			S, N, Nk, c->causal ? 1 : 0);
		if (cudaPeekAtLastError() != cudaSuccess)
			return cudaGetLastError();
	}
	if (part < 0 || part == 2) {
		dim3 grid((unsigned)((d + TS - 1) / TS), (unsigned)((N + TS - 1) / TS), (unsigned)BH);

		av_kernel<T><<<grid, dim3(TS, TS)>>>(S, V, O, N, Nk, d, H, KH);
	}
	return cudaGetLastError();
}

static cudaError_t
launch_any(struct attn_gpu *g, int part)
{
	switch (g->cfg.storage) {
	case 1:
		return launch<__half>(g, part);
	case 2:
		return launch<__nv_bfloat16>(g, part);
	default:
		return launch<float>(g, part);
	}
}

extern "C" int
attn_gpu_run(struct attn_gpu *g, char *err, size_t errlen)
{
	if (!ok(launch_any(g, -1), "launch", err, errlen) ||
	    !ok(cudaDeviceSynchronize(), "kernel", err, errlen))
		return -1;
	return 0;
}

extern "C" int
attn_gpu_download(struct attn_gpu *g, void *O, float *lse, char *err, size_t errlen)
{
	if (!ok(cudaMemcpy(O, g->O, g->q_bytes, cudaMemcpyDeviceToHost), "copy O", err, errlen))
		return -1;
	if (g->cfg.flash2 && lse &&
	    !ok(cudaMemcpy(lse, g->lse, g->lse_bytes, cudaMemcpyDeviceToHost), "copy lse", err,
		errlen))
		return -1;
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median over reps of the time of launch part (-1: the whole sequence). */
static int
time_part(struct attn_gpu *g, int part, int warmup, int reps, double *ms, char *err,
	  size_t errlen)
{
	cudaEvent_t a, b;
	double *t = (double *)calloc((size_t)reps, sizeof(double));
	int rc = -1;

	if (!t || !ok(cudaEventCreate(&a), "event", err, errlen) ||
	    !ok(cudaEventCreate(&b), "event", err, errlen)) {
		free(t);
		return -1;
	}
	for (int i = 0; i < warmup; i++)
		if (!ok(launch_any(g, part), "launch", err, errlen))
			goto out;
	for (int i = 0; i < reps; i++) {
		float f;

		if (!ok(cudaEventRecord(a), "event", err, errlen) ||
		    !ok(launch_any(g, part), "launch", err, errlen) ||
		    !ok(cudaEventRecord(b), "event", err, errlen) ||
		    !ok(cudaEventSynchronize(b), "kernel", err, errlen) ||
		    !ok(cudaEventElapsedTime(&f, a, b), "event time", err, errlen))
			goto out;
		t[i] = f;
	}
	qsort(t, (size_t)reps, sizeof(*t), cmp_double);
	*ms = t[reps / 2];
	rc = 0;
out:
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	free(t);
	return rc;
}

extern "C" int
attn_gpu_time(struct attn_gpu *g, int warmup, int reps, double *ms, double *ms_each, char *err,
	      size_t errlen)
{
	if (reps < 1)
		reps = 1;
	if (time_part(g, -1, warmup, reps, ms, err, errlen))
		return -1;
	if (ms_each && !g->cfg.flash2)
		for (int p = 0; p < 3; p++)
			if (time_part(g, p, warmup, reps, &ms_each[p], err, errlen))
				return -1;
	return 0;
}
