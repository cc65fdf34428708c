/*
 * Which lines of a re-read buffer does the H100's L2 lose? (issue 22)
 *
 * The PyTorch reductions of stride.sh measure how many bytes a second pass misses, but their
 * kernels change the order and the SMs with the layout. Here one kernel reads a buffer of W
 * MiB stored as pieces of P KiB every S KiB (S = P: contiguous) line by line, in the same
 * order and from the same warps twice, after a 256 MiB flush, and times every line's load
 * (__ldcg: L2 only; the value stored to shared memory before the clock is read again, so the
 * time covers the load). The first pass's mode "one": one block of 32 warps on one SM, so
 * every line goes through one SM's partition; "all": one such block per SM, warp g reading
 * lines g, g + G ... The second pass is one warp reading the lines in order, one at a time:
 * its latencies are not inflated by queueing, and tell a near-partition hit, a far-partition
 * hit and a DRAM read apart.
 *
 *   nvcc -O2 -arch=sm_90 -o reread reread.cu
 *   ./reread OUTDIR W,P,S,one|all[,OFF] ...
 *
 * OFF (KiB, default 0) moves the buffer that far into the arena. Prints one line a case, and
 * writes OUTDIR/lat-I.bin for the I-th case (from 0): the first pass's latency of every line
 * in cycles (uint16, clamped; lines in the layout's order), then the second pass's; and
 * OUTDIR/base with the arena's device address and the SM count.
 */

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARPS 32
#define ARENA ((size_t)1 << 30)
#define FLUSH ((size_t)256 << 20)

static __global__ void
flush_l2(const uint4 *buf, size_t n, unsigned *sink)
{
	unsigned acc = 0;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint4 a = __ldcg(buf + i);
		acc += a.x ^ a.w;
	}
	if (acc == 0x9e3779b9u)
		sink[0] = acc;
}

/* Line i of the layout lies at word (i / lines_a_piece) * stride_words + (i % lines_a_piece) * 32. */
static __global__ void
read_lines(const unsigned *buf, size_t nlines, size_t lines_a_piece, size_t stride_words,
	   unsigned short *lat, unsigned char *sm_of_block, unsigned *sink)
{
	__shared__ volatile unsigned seen[WARPS];
	unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32, acc = 0, sm;
	size_t g = (size_t)blockIdx.x * WARPS + warp, nwarps = (size_t)gridDim.x * blockDim.x / 32;

	asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
	if (threadIdx.x == 0)
		sm_of_block[blockIdx.x] = (unsigned char)sm;
	for (size_t i = g; i < nlines; i += nwarps) {
		const unsigned *p = buf + (i / lines_a_piece) * stride_words + (i % lines_a_piece) * 32;
		long long t0 = clock64();
		unsigned v = __ldcg(p + lane);
		seen[warp] = v;
		long long t1 = clock64();
		acc += v;
		if (lane == 0)
			lat[i] = (unsigned short)(t1 - t0 > 65535 ? 65535 : t1 - t0);
	}
	if (acc == 0x9e3779b9u)
		sink[0] = acc;
}

static void
check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "reread: %s: %s\n", what, cudaGetErrorString(e));
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	unsigned *arena, *sink;
	uint4 *flush;
	unsigned short *lat1, *lat2;
	unsigned char *sm1, *sm2;
	int nsm;
	char path[512];

	if (argc < 3) {
		fprintf(stderr, "usage: reread OUTDIR W,P,S,one|all ...\n");
		return 2;
	}
	check(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0), "SM count");
	check(cudaMalloc(&arena, ARENA), "arena");
	check(cudaMemset(arena, 0, ARENA), "memset");
	check(cudaMalloc(&flush, FLUSH), "flush buffer");
	check(cudaMemset(flush, 0, FLUSH), "memset");
	check(cudaMalloc(&sink, 4), "sink");
	check(cudaMalloc(&lat1, (ARENA / 128) * 2), "latencies");
	check(cudaMalloc(&lat2, (ARENA / 128) * 2), "latencies");
	check(cudaMalloc(&sm1, 1024), "SMs");
	check(cudaMalloc(&sm2, 1024), "SMs");
	snprintf(path, sizeof path, "%s/base", argv[1]);
	FILE *fb = fopen(path, "w");
	if (!fb) {
		perror(path);
		return 1;
	}
	fprintf(fb, "%p %d\n", (void *)arena, nsm);
	fclose(fb);
	for (int c = 2; c < argc; c++) {
		unsigned w, p, s, off = 0;
		char mode[4];
		int n = sscanf(argv[c], "%u,%u,%u,%3[a-z],%u", &w, &p, &s, mode, &off);

		if (n < 4 || p == 0 || s < p || (strcmp(mode, "one") && strcmp(mode, "all"))) {
			fprintf(stderr, "reread: bad case '%s' (want W,P,S,one|all[,OFF])\n", argv[c]);
			return 2;
		}
		size_t nlines = ((size_t)w << 20) / 128, per = (size_t)p * 8;
		size_t span = ((nlines + per - 1) / per) * (size_t)s * 1024 + (size_t)off * 1024;
		if (span > ARENA) {
			fprintf(stderr, "reread: case '%s' spans %zu bytes, over the arena\n", argv[c], span);
			return 2;
		}
		int blocks = strcmp(mode, "one") ? nsm : 1;
		flush_l2<<<nsm * 4, 512>>>(flush, FLUSH / 16, sink);
		const unsigned *buf = arena + (size_t)off * 256;
		read_lines<<<blocks, WARPS * 32>>>(buf, nlines, per, (size_t)s * 256, lat1, sm1, sink);
		read_lines<<<1, 32>>>(buf, nlines, per, (size_t)s * 256, lat2, sm2, sink);
		check(cudaDeviceSynchronize(), "kernels");

		unsigned short *h = (unsigned short *)malloc(nlines * 4);
		unsigned char hs1[1024], hs2[1];
		check(cudaMemcpy(h, lat1, nlines * 2, cudaMemcpyDeviceToHost), "copy");
		check(cudaMemcpy(h + nlines, lat2, nlines * 2, cudaMemcpyDeviceToHost), "copy");
		check(cudaMemcpy(hs1, sm1, blocks, cudaMemcpyDeviceToHost), "copy");
		check(cudaMemcpy(hs2, sm2, 1, cudaMemcpyDeviceToHost), "copy");
		snprintf(path, sizeof path, "%s/lat-%d.bin", argv[1], c - 2);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(h, 4, nlines, f) != nlines || fclose(f)) {
			perror(path);
			return 1;
		}
		printf("case %d %u %u %u %s %u lines %zu blocks %d sm0 %u probe_sm %u\n", c - 2, w, p, s,
		       mode, off, nlines, blocks, hs1[0], hs2[0]);
		fflush(stdout);
		free(h);
	}
	return 0;
}
