/*
 * Which lines share an L2 set with a given line on the H100? (issue 22)
 *
 * docs/gpu-run/l2-reread found which of the two L2 partitions a line of the arena belongs to
 * (NEAR() below, for SM 124, where a one-block kernel runs): this program only uses lines of
 * the near partition, read from one SM, so one partition's sets are all that is at play.
 *
 * test(x, S): the block reads x, then every line of S (one word each, __ldcg), then x again,
 * timed: x evicted means S holds at least `ways` lines of x's set. For a target x, a pool of
 * near lines that evicts it is cut down by group testing (Vila et al., "Theory and practice of
 * finding eviction sets", 2019: drop any of ways + 1 groups while the rest still evicts) to a
 * minimal eviction set E, whose size is the associativity. Then every candidate line y of a
 * region is tested with x, E less one line, and y: x evicted means y is in x's set. Each
 * answer is asked twice and must agree.
 *
 *   nvcc -O2 -arch=sm_90 -o evict evict.cu
 *   ./evict TARGET_MIB... > evict.txt
 *
 * For each target (a line TARGET MiB into the arena, moved to the next near line), prints
 * "target OFF", "ways W", "set OFF..." (E), "congruent OFF..." (every near line of the first
 * 64 MiB in x's set, from a scan), all offsets in bytes from the arena, and the SM.
 */

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA ((size_t)1 << 30)
#define POOL_BYTES ((size_t)128 << 20)
#define SCAN_BYTES ((size_t)64 << 20)
#define THREADS 1024
#define HIT_BELOW 450

static int
bit(size_t a, int b)
{
	return (int)((a >> b) & 1);
}

/* The partition of arena offset a, relative to SM 124 (0: near), docs/gpu-run/l2-reread. */
static int
near_of(size_t a)
{
	int p = bit(a, 12) ^ bit(a, 13) ^ bit(a, 16) ^ bit(a, 17) ^ bit(a, 19) ^ bit(a, 23) ^
		bit(a, 26) ^ (bit(a, 25) & !bit(a, 24));

	return p == 0;
}

static __global__ void
test_kernel(const unsigned *arena, size_t x, const size_t *lines, size_t n, unsigned *out)
{
	__shared__ volatile unsigned seen[THREADS];
	unsigned acc = 0;

	if (threadIdx.x == 0) {
		seen[0] = __ldcg(arena + x / 4);
		unsigned sm;
		asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
		out[1] = sm;
	}
	__syncthreads();
	for (size_t i = threadIdx.x; i < n; i += THREADS)
		acc += __ldcg(arena + lines[i] / 4);
	seen[threadIdx.x] = acc;
	__syncthreads();
	if (threadIdx.x == 0) {
		long long t0 = clock64();
		unsigned v = __ldcg(arena + x / 4);
		seen[0] = v;
		long long t1 = clock64();
		out[0] = (unsigned)(t1 - t0);
	}
}

/* One warp, one lane: for each candidate, x, the set less its first line, the candidate, x
 * again timed; out[i] the latency. */
static __global__ void
scan_kernel(const unsigned *arena, size_t x, const size_t *set, int ways, const size_t *cand,
	    size_t n, unsigned *out)
{
	__shared__ volatile unsigned seen[2];

	if (threadIdx.x)
		return;
	for (size_t i = 0; i < n; i++) {
		seen[0] = __ldcg(arena + x / 4);
		unsigned acc = 0;
		for (int j = 1; j < ways; j++)
			acc += __ldcg(arena + set[j] / 4);
		acc += __ldcg(arena + cand[i] / 4);
		seen[1] = acc;
		long long t0 = clock64();
		seen[0] = __ldcg(arena + x / 4);
		long long t1 = clock64();
		out[i] = (unsigned)(t1 - t0);
	}
}

static unsigned *g_arena, *g_out;
static size_t *g_lines;
static unsigned g_sm;

static void
check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "evict: %s: %s\n", what, cudaGetErrorString(e));
		exit(1);
	}
}

static int
evicts_once(size_t x, const size_t *lines, size_t n)
{
	unsigned out[2];

	check(cudaMemcpy(g_lines, lines, n * sizeof(*lines), cudaMemcpyHostToDevice), "copy");
	test_kernel<<<1, THREADS>>>(g_arena, x, g_lines, n, g_out);
	check(cudaMemcpy(out, g_out, sizeof out, cudaMemcpyDeviceToHost), "test");
	g_sm = out[1];
	return out[0] >= HIT_BELOW;
}

static int
evicts(size_t x, const size_t *lines, size_t n)
{
	int a = evicts_once(x, lines, n), b = evicts_once(x, lines, n);

	return a == b ? a : evicts_once(x, lines, n);
}

/* Cuts pool (n lines) down to a minimal eviction set of x; returns its size, 0 if the pool
 * does not evict x. */
static size_t
reduce(size_t x, size_t *pool, size_t n, size_t *tmp)
{
	if (!evicts(x, pool, n))
		return 0;
	for (;;) {
		size_t groups = 33, removed = 0;
		if (n <= 64)
			groups = n;
		for (size_t g = 0; g < groups && !removed; g++) {
			size_t lo = n * g / groups, hi = n * (g + 1) / groups, m = 0;
			for (size_t i = 0; i < n; i++)
				if (i < lo || i >= hi)
					tmp[m++] = pool[i];
			if (evicts(x, tmp, m)) {
				memcpy(pool, tmp, m * sizeof(*pool));
				removed = n - m;
				n = m;
			}
		}
		if (!removed)
			return n;
	}
}

int
main(int argc, char **argv)
{
	size_t npool = 0, *pool = (size_t *)malloc((POOL_BYTES / 128) * sizeof(size_t));
	size_t *tmp = (size_t *)malloc((POOL_BYTES / 128) * sizeof(size_t));
	size_t *cand = (size_t *)malloc((SCAN_BYTES / 128) * sizeof(size_t)), ncand = 0;
	size_t *dcand, *dset;
	unsigned *dlat, *lat = (unsigned *)malloc((SCAN_BYTES / 128) * sizeof(unsigned));

	if (argc < 2) {
		fprintf(stderr, "usage: evict TARGET_MIB...\n");
		return 2;
	}
	check(cudaMalloc(&g_arena, ARENA), "arena");
	check(cudaMemset(g_arena, 0, ARENA), "memset");
	check(cudaMalloc(&g_out, 16), "out");
	check(cudaMalloc(&g_lines, (POOL_BYTES / 128) * sizeof(size_t)), "lines");
	check(cudaMalloc(&dcand, (SCAN_BYTES / 128) * sizeof(size_t)), "candidates");
	check(cudaMalloc(&dset, 256 * sizeof(size_t)), "set");
	check(cudaMalloc(&dlat, (SCAN_BYTES / 128) * sizeof(unsigned)), "latencies");
	printf("base %p\n", (void *)g_arena);
	for (size_t a = 0; a < SCAN_BYTES; a += 128)
		if (near_of(a))
			cand[ncand++] = a;
	for (int t = 1; t < argc; t++) {
		size_t x = (size_t)atoi(argv[t]) << 20;
		while (!near_of(x))
			x += 128;
		npool = 0;
		/* the pool: near lines of 128 MiB past the scanned region, away from x */
		for (size_t a = SCAN_BYTES; a < SCAN_BYTES + POOL_BYTES; a += 128)
			if (near_of(a) && a != x)
				pool[npool++] = a;
		size_t ways = reduce(x, pool, npool, tmp);
		printf("target %zu sm %u\nways %zu\nset", x, g_sm, ways);
		for (size_t i = 0; i < ways; i++)
			printf(" %zu", pool[i]);
		printf("\n");
		fflush(stdout);
		if (ways < 2 || ways > 256)
			continue;
		check(cudaMemcpy(dset, pool, ways * sizeof(size_t), cudaMemcpyHostToDevice), "copy");
		check(cudaMemcpy(dcand, cand, ncand * sizeof(size_t), cudaMemcpyHostToDevice), "copy");
		int first[2] = { 0 };
		printf("congruent");
		for (int pass = 0; pass < 2; pass++) {
			scan_kernel<<<1, 32>>>(g_arena, x, dset, (int)ways, dcand, ncand, dlat);
			check(cudaMemcpy(lat, dlat, ncand * sizeof(unsigned), cudaMemcpyDeviceToHost),
			      "scan");
			for (size_t i = 0; i < ncand; i++) {
				int ev = lat[i] >= HIT_BELOW;
				if (pass == 0)
					tmp[i] = ev;
				else if (ev && tmp[i])
					printf(" %zu", cand[i]);
				else if (ev != (int)tmp[i])
					first[1]++;
			}
		}
		printf("\ndisagree %d\n", first[1]);
		fflush(stdout);
	}
	return 0;
}
