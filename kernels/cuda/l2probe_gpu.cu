/*
 * The L2 microbenchmarks: see l2probe_gpu.h. Data moves as uint4 (16 bytes a thread, 4 KiB a
 * block of 256 threads per round), loads with __ldcg (L2 only: a block's own re-reads must
 * not hit its L1), integer sums so that nothing is optimised away and no value can trap. Each
 * block's first thread counts the block on its SM; the host checks that every SM held exactly
 * the blocks meant for it, so that "2 per SM" and "one on each side" are facts, not hopes.
 */

#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "kernels/cuda/l2probe_gpu.h"

#define THREADS 256
#define MAX_SMS 1024

static __device__ __forceinline__ unsigned
sm_id(void)
{
	unsigned s;

	asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
	return s;
}

static __device__ __forceinline__ unsigned
mix(uint4 v)
{
	return v.x ^ v.y ^ v.z ^ v.w;
}

/* The block's sum to sink[block] (one word a block) and its SM counted. */
static __device__ void
finish(unsigned acc, unsigned *sink, unsigned *per_sm)
{
	for (int o = 16; o; o >>= 1)
		acc += __shfl_xor_sync(0xffffffffu, acc, o);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(&sink[blockIdx.x], acc);
	if (threadIdx.x == 0) {
		unsigned s = sm_id();

		atomicAdd(&per_sm[s < MAX_SMS ? s : MAX_SMS], 1u);
	}
}

/* Step t's fresh output of the block: out16 uint4s written once each. */
static __device__ __forceinline__ void
write_out(uint4 *outs, size_t out16, size_t t, unsigned acc)
{
	uint4 *op = outs + (t * gridDim.x + blockIdx.x) * out16;

	for (size_t i = threadIdx.x; i < out16; i += THREADS)
		op[i] = make_uint4(acc, (unsigned)t, (unsigned)i, blockIdx.x);
}

static __global__ void
probe_rewrite(const uint4 *stream, uint4 *region, size_t tile16, size_t region16, size_t steps,
	      uint4 *outs, size_t out16, unsigned *sink, unsigned *per_sm)
{
	uint4 *mine = region + blockIdx.x * region16;
	unsigned acc = 0;

	for (size_t t = 0; t < steps; t++) {
		const uint4 *tp = stream + (t * gridDim.x + blockIdx.x) * tile16;

		for (size_t i = threadIdx.x; i < tile16; i += THREADS)
			acc += mix(__ldcg(tp + i));
		for (size_t i = threadIdx.x; i < region16; i += THREADS) {
			uint4 r = t ? __ldcg(mine + i) : make_uint4(0, 0, 0, 0);

			r.x += acc;
			r.y ^= acc;
			r.z += (unsigned)t;
			r.w ^= (unsigned)i;
			mine[i] = r;
		}
		write_out(outs, out16, t, acc);
	}
	finish(acc, sink, per_sm);
}

/* The region as W words of local memory a thread (256 W 4 bytes a block), as a spill is:
 * indexed by off (0, but not known when compiling) so that it cannot live in registers, and
 * volatile so that every access is a local load or store. */
template <int W>
static __global__ void
probe_rewrite_local(const uint4 *stream, size_t tile16, size_t steps, unsigned off, uint4 *outs,
		    size_t out16, unsigned *sink, unsigned *per_sm)
{
	volatile unsigned spill[W < 2 ? 2 : W]; /* a one-word array would be a register */
	unsigned acc = 0;

	for (size_t t = 0; t < steps; t++) {
		const uint4 *tp = stream + (t * gridDim.x + blockIdx.x) * tile16;

		for (size_t i = threadIdx.x; i < tile16; i += THREADS)
			acc += mix(__ldcg(tp + i));
		for (unsigned j = 0; j < W; j++) {
			unsigned k = j ^ off;

			spill[k] = (t ? spill[k] : 0u) + acc + j;
		}
		write_out(outs, out16, t, acc);
	}
	for (unsigned j = 0; j < W; j++)
		acc += spill[j ^ off];
	finish(acc, sink, per_sm);
}

static const void *
rewrite_local_fn(uint64_t region)
{
	switch (region >> 10) {
	case 1:
		return (const void *)probe_rewrite_local<1>;
	case 2:
		return (const void *)probe_rewrite_local<2>;
	case 4:
		return (const void *)probe_rewrite_local<4>;
	case 8:
		return (const void *)probe_rewrite_local<8>;
	case 16:
		return (const void *)probe_rewrite_local<16>;
	case 32:
		return (const void *)probe_rewrite_local<32>;
	case 64:
		return (const void *)probe_rewrite_local<64>;
	default:
		return (const void *)probe_rewrite_local<128>;
	}
}

static __global__ void
probe_tiles(const uint4 *stream, uint4 *out, size_t tile16, size_t ntiles, size_t stream16,
	    unsigned *sink, unsigned *per_sm)
{
	unsigned acc = 0;

	for (size_t k = blockIdx.x; k < ntiles; k += gridDim.x) {
		const uint4 *sp = stream + k * stream16;
		uint4 *op = out + k * tile16;

		for (size_t i = threadIdx.x; i < stream16; i += THREADS)
			acc += mix(__ldcg(sp + i));
		for (size_t i = threadIdx.x; i < tile16; i += THREADS)
			op[i] = make_uint4(acc, (unsigned)k, (unsigned)i, acc ^ (unsigned)i);
	}
	finish(acc, sink, per_sm);
}

static __device__ __forceinline__ unsigned long long
global_ns(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* All blocks resident (one per SM): a counter in global memory (bar[0]), polled with a pause.
 * Blocks not all resident would wait for ever: after 2 s bar[1] is set and every barrier
 * gives way, and the host reports it. */
static __device__ void
grid_barrier(unsigned *bar, unsigned target)
{
	__syncthreads();
	if (threadIdx.x == 0) {
		unsigned long long t0 = global_ns();

		__threadfence();
		atomicAdd(bar, 1u);
		while (*(volatile unsigned *)bar < target && !*(volatile unsigned *)(bar + 1)) {
			if (global_ns() - t0 > 2000000000ull)
				atomicExch(bar + 1, 1u);
			__nanosleep(200);
		}
	}
	__syncthreads();
}

/* The rank of this block's SM among the SMs of the grid (one block each): %smid need not
 * run 0 to SMs - 1, so every block marks its id in a bitmap and counts the ids below it. */
static __device__ unsigned
sm_rank(unsigned s, unsigned *map, unsigned *bar)
{
	__shared__ unsigned rank;

	if (threadIdx.x == 0 && s < MAX_SMS)
		atomicOr(&map[s / 32], 1u << (s % 32));
	grid_barrier(bar, gridDim.x);
	if (threadIdx.x == 0) {
		rank = 0;
		for (unsigned w = 0; w < MAX_SMS / 32 && w <= s / 32; w++) {
			unsigned m = *(volatile unsigned *)(map + w);

			if (w == s / 32)
				m &= (1u << (s % 32)) - 1;
			rank += __popc(m);
		}
	}
	__syncthreads();
	return rank;
}

/*
 * Pair p's first reader reads chunk t * pairs + p at step t, its second reader the same chunk
 * at step t + lag. SMs ranked by id, ranks 0 to half - 1 the first half: cross, rank r < half
 * is first reader of pair r and rank r + half its partner; same half, within each half the
 * first half/2 ranks read first and the next half/2 second.
 */
static __global__ void
probe_crossread(const uint4 *buf, size_t chunk16, size_t nchunks, size_t lag, int cross,
		unsigned *bar, unsigned *map, unsigned *sink, unsigned *per_sm)
{
	unsigned s = sm_rank(sm_id(), map, bar), half = gridDim.x / 2, q = half / 2;
	unsigned h = s / half, r = s % half, pairs = cross ? half : 2 * q;
	bool idle = s >= 2 * half || (!cross && r >= 2 * q);
	bool first = cross ? h == 0 : r < q;
	size_t p = cross ? r : h * q + r % q;
	size_t steps = (nchunks + pairs - 1) / pairs + lag;
	unsigned acc = 0;

	for (size_t t = 0; t < steps; t++) {
		size_t c = (first ? t : t - lag) * pairs + p;

		if (!idle && (first || t >= lag) && c < nchunks)
			for (size_t i = threadIdx.x; i < chunk16; i += THREADS)
				acc += mix(__ldcg(buf + c * chunk16 + i));
		grid_barrier(bar, (unsigned)((t + 2) * gridDim.x));
	}
	finish(acc, sink, per_sm);
}

static int
ok(cudaError_t e, const char *what, char *err, size_t errlen)
{
	if (e == cudaSuccess)
		return 1;
	snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e));
	return 0;
}

extern "C" const char *
l2probe_kind_name(enum l2probe_kind k)
{
	return k == L2PROBE_REWRITE ? "rewrite" : k == L2PROBE_TILES ? "tiles" : "crossread";
}

extern "C" int
l2probe_config_check(const struct l2probe_config *c, char *err, size_t errlen)
{
	const uint64_t KiB = 1024, MiB = KiB * KiB, GiB = KiB * MiB;

	if (c->tile < 4 * KiB || c->tile > 4 * MiB || c->tile % (4 * KiB))
		snprintf(err, errlen, "--tile: a multiple of 4 KiB from 4 KiB to 4 MiB");
	else if (c->kind == L2PROBE_REWRITE && (c->region > 4 * MiB || c->region % 512))
		snprintf(err, errlen, "--region: a multiple of 0.5 KiB up to 4 MiB");
	else if (c->kind == L2PROBE_REWRITE && c->local &&
		 (c->region < KiB || c->region > 128 * KiB || (c->region & (c->region - 1))))
		snprintf(err, errlen, "--local: --region 1, 2, 4, 8, 16, 32, 64 or 128 (KiB)");
	else if (c->kind == L2PROBE_REWRITE && (c->steps == 0 || c->steps > 100000))
		snprintf(err, errlen, "--steps: 1 to 100000");
	else if (c->kind == L2PROBE_REWRITE && (c->out_tile > 1024 * KiB || c->out_tile % 512))
		snprintf(err, errlen, "--out-tile: a multiple of 0.5 KiB up to 1 MiB");
	else if (c->kind == L2PROBE_TILES &&
		 (c->total == 0 || c->total > 16 * GiB || c->total % c->tile))
		snprintf(err, errlen, "--total: a multiple of the tile up to 16 GiB");
	else if (c->kind == L2PROBE_TILES &&
		 (c->stream % c->total || c->stream / c->total > 16))
		snprintf(err, errlen, "--stream: 0 or 1 to 16 times --total");
	else if (c->kind == L2PROBE_CROSSREAD &&
		 (c->buffer == 0 || c->buffer > 16 * GiB || c->buffer % c->tile))
		snprintf(err, errlen, "--buffer: a multiple of the tile up to 16 GiB");
	else if (c->kind == L2PROBE_CROSSREAD && (c->lag == 0 || c->lag > 100000))
		snprintf(err, errlen, "--lag: 1 to 100000 steps");
	else
		return 0;
	return -1;
}

/* Shared memory a block asks for so that no more than per_sm blocks fit on an SM. */
static int
occupancy(const void *fn, unsigned per_sm, const cudaDeviceProp *p, size_t *smem, char *err,
	  size_t errlen)
{
	size_t s = p->sharedMemPerMultiprocessor / per_sm - p->reservedSharedMemPerBlock - 1024;
	int n = 0;

	if (s > p->sharedMemPerBlockOptin)
		s = p->sharedMemPerBlockOptin;
	*smem = s;
	if (!ok(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)s),
		"cudaFuncSetAttribute", err, errlen) ||
	    !ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, THREADS, s),
		"cudaOccupancyMaxActiveBlocksPerMultiprocessor", err, errlen))
		return -1;
	if ((unsigned)n != per_sm) {
		snprintf(err, errlen, "%d blocks fit on an SM with %zu bytes of shared memory, not %u",
			 n, s, per_sm);
		return -1;
	}
	return 0;
}

struct bufs {
	void *in, *out;
	unsigned *sink, *per_sm, *bar, *map; /* bar: the barrier's count and its time-out flag */
};

static int
alloc(struct bufs *b, size_t in, size_t out, unsigned blocks, char *err, size_t errlen)
{
	size_t words = blocks + (MAX_SMS + 1) + 2 + MAX_SMS / 32;

	if (!ok(cudaMalloc(&b->in, in ? in : 16), "cudaMalloc (input)", err, errlen) ||
	    !ok(cudaMalloc(&b->out, out ? out : 16), "cudaMalloc (output)", err, errlen) ||
	    !ok(cudaMalloc(&b->sink, words * sizeof(unsigned)), "cudaMalloc (counters)", err,
		errlen) ||
	    !ok(cudaMemset(b->in, 1, in ? in : 16), "cudaMemset", err, errlen) ||
	    !ok(cudaMemset(b->out, 0, out ? out : 16), "cudaMemset", err, errlen) ||
	    !ok(cudaMemset(b->sink, 0, words * sizeof(unsigned)), "cudaMemset", err, errlen) ||
	    !ok(cudaDeviceSynchronize(), "cudaMemset", err, errlen))
		return -1;
	b->per_sm = b->sink + blocks;
	b->bar = b->per_sm + MAX_SMS + 1;
	b->map = b->bar + 2;
	return 0;
}

/* Every SM held per_sm blocks of the kernel, what the occupancy was set up to give, and no
 * grid barrier timed out. */
static int
spread(const struct bufs *b, unsigned sms, unsigned per_sm, char *err, size_t errlen)
{
	unsigned n[MAX_SMS + 1], bar[2], used = 0;

	if (!ok(cudaMemcpy(n, b->per_sm, sizeof(n), cudaMemcpyDeviceToHost), "cudaMemcpy", err,
		errlen) ||
	    !ok(cudaMemcpy(bar, b->bar, sizeof(bar), cudaMemcpyDeviceToHost), "cudaMemcpy", err,
		errlen))
		return -1;
	if (bar[1]) {
		snprintf(err, errlen, "a grid barrier timed out: the blocks were not all resident");
		return -1;
	}
	if (n[MAX_SMS]) {
		snprintf(err, errlen, "%u blocks ran on an SM id of %d or more", n[MAX_SMS], MAX_SMS);
		return -1;
	}
	for (unsigned s = 0; s < MAX_SMS; s++) {
		if (n[s] && n[s] != per_sm) {
			snprintf(err, errlen, "SM %u ran %u blocks, not %u: blocks not spread evenly",
				 s, n[s], per_sm);
			return -1;
		}
		used += n[s] != 0;
	}
	if (used != sms) {
		snprintf(err, errlen, "the blocks ran on %u SMs, not %u", used, sms);
		return -1;
	}
	return 0;
}

static int
launch(const struct l2probe_config *c, struct l2probe_result *r, const cudaDeviceProp *p,
       struct bufs *b, char *err, size_t errlen)
{
	const void *fn = c->kind == L2PROBE_REWRITE && c->local ? rewrite_local_fn(c->region)
			 : c->kind == L2PROBE_REWRITE ? (const void *)probe_rewrite
			 : c->kind == L2PROBE_TILES ? (const void *)probe_tiles
						    : (const void *)probe_crossread;
	unsigned per_sm = c->kind == L2PROBE_CROSSREAD ? 1 : 2, half = r->sms / 2;
	size_t smem, tile16 = c->tile / 16;

	r->blocks = per_sm * r->sms;
	if (occupancy(fn, per_sm, p, &smem, err, errlen))
		return -1;
	if (c->kind == L2PROBE_REWRITE) {
		r->steps = c->steps;
		r->read_bytes = c->tile * r->blocks * c->steps;
		size_t regions = c->local ? 0 : c->region * r->blocks, out16 = c->out_tile / 16;
		uint4 *outs;

		r->rewritten = c->region * r->blocks * c->steps;
		r->write_bytes = regions + c->out_tile * r->blocks * c->steps;
		if (alloc(b, r->read_bytes, r->write_bytes, r->blocks, err, errlen))
			return -1;
		outs = (uint4 *)((char *)b->out + regions);
		if (c->local) {
			unsigned off = 0;
			void *args[] = { &b->in,    &tile16,  (void *)&c->steps, &off, &outs, &out16,
					 &b->sink, &b->per_sm };

			if (!ok(cudaLaunchKernel(fn, r->blocks, THREADS, args, smem, 0),
				"cudaLaunchKernel", err, errlen))
				return -1;
		} else {
			probe_rewrite<<<r->blocks, THREADS, smem>>>(
				(const uint4 *)b->in, (uint4 *)b->out, tile16, c->region / 16,
				c->steps, outs, out16, b->sink, b->per_sm);
		}
	} else if (c->kind == L2PROBE_TILES) {
		size_t ntiles = c->total / c->tile;

		r->steps = (ntiles + r->blocks - 1) / r->blocks;
		r->read_bytes = c->stream;
		r->write_bytes = c->total;
		if (alloc(b, c->stream, c->total, r->blocks, err, errlen))
			return -1;
		probe_tiles<<<r->blocks, THREADS, smem>>>((const uint4 *)b->in, (uint4 *)b->out,
							   tile16, ntiles, c->stream / ntiles / 16,
							   b->sink, b->per_sm);
	} else {
		size_t nchunks = c->buffer / c->tile;
		unsigned pairs = c->cross ? half : 2 * (half / 2);

		if (r->sms % 2 || r->sms > MAX_SMS || pairs == 0) {
			snprintf(err, errlen, "crossread needs an even number of SMs, not %u",
				 r->sms);
			return -1;
		}
		r->steps = (nchunks + pairs - 1) / pairs + c->lag;
		r->read_bytes = c->buffer;
		r->reread = c->buffer;
		r->reuse_distance = c->lag * pairs * c->tile;
		if (r->reuse_distance > c->buffer)
			r->reuse_distance = c->buffer;
		if (alloc(b, c->buffer, 0, r->blocks, err, errlen))
			return -1;
		probe_crossread<<<r->blocks, THREADS, smem>>>((const uint4 *)b->in, tile16,
							       nchunks, c->lag, c->cross, b->bar,
							       b->map, b->sink, b->per_sm);
	}
	if (!ok(cudaGetLastError(), "l2probe launch", err, errlen) ||
	    !ok(cudaDeviceSynchronize(), "l2probe kernel", err, errlen))
		return -1;
	return spread(b, r->sms, per_sm, err, errlen);
}

extern "C" int
l2probe_gpu_run(const struct l2probe_config *c, struct l2probe_result *r, char *err,
		size_t errlen)
{
	struct bufs b = { NULL, NULL, NULL, NULL, NULL, NULL };
	cudaDeviceProp p;
	int rc;

	memset(r, 0, sizeof(*r));
	if (l2probe_config_check(c, err, errlen) ||
	    !ok(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties", err, errlen))
		return -1;
	snprintf(r->device, sizeof(r->device), "%s", p.name);
	r->sms = (unsigned)p.multiProcessorCount;
	rc = launch(c, r, &p, &b, err, errlen);
	cudaFree(b.in);
	cudaFree(b.out);
	cudaFree(b.sink);
	return rc;
}
