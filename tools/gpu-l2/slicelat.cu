/*
 * Which L2 slice holds each line? Hit latencies seen from many SMs (issue 22).
 *
 * An L2 hit takes longer the farther the slice that holds the line lies from the SM that asks
 * (the L40 shows it across all its SMs: Alpay and Basaran, "Non-Uniform L2 Cache Latency
 * Across the Streaming Multiprocessors of an NVIDIA L40", 2026). Lines the same slice holds
 * then have the same latency from every SM: a fingerprint. For each SM in the list, one block
 * on it reads the lines twice (so that they are in its partition: its own lines at home, the
 * other partition's as copies) and then times every line's load, one at a time, four passes
 * over all lines, keeping each line's fastest.
 *
 *   nvcc -O2 -arch=sm_90 -o slicelat slicelat.cu
 *   ./slicelat OUTFILE OFFSET_KIB LINES SM...   (MEMSIM_SLICELAT_PASSES=N: N timed passes, 4)
 *
 * OUTFILE: a header line "lines N sms K base 0x..." then, per SM asked, a line "sm S" and N
 * latencies in cycles (uint16, binary, the lines in address order: OFFSET_KIB into a 1 GiB
 * arena, 128 bytes apart). An SM no block ran on is written with latencies 0.
 */

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define ARENA ((size_t)1 << 30)

/* The clock once v has arrived: read under a predicate computed from v, so that it cannot
 * issue before the load that gives v completes. */
static __device__ __forceinline__ long long
clock_after(unsigned v)
{
	long long t = 0;

	asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0x9e3779b9;\n\t"
		     "@p mov.u64 %0, %%clock64;\n\t}"
		     : "+l"(t)
		     : "r"(v)
		     : "memory");
	return t;
}

/* A load through L2 the compiler may neither hoist nor merge: each one reaches the L2. */
static __device__ __forceinline__ unsigned
load_cg(const unsigned *p)
{
	unsigned v;

	asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

static __global__ void
fingerprint(const unsigned *lines, unsigned n, unsigned want_sm, int passes, unsigned short *lat,
	    unsigned *ran)
{
	__shared__ volatile unsigned seen[2];
	unsigned sm;

	asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
	if (sm != want_sm || threadIdx.x)
		return;
	*ran = 1;
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < n; i++)
			seen[0] = load_cg(lines + (size_t)i * 32);
	/* The repeats over all lines, not line by line: the same load twice in a row is one
	 * load to the compiler, whatever its qualifiers. */
	for (unsigned i = 0; i < n; i++)
		lat[i] = 65535;
	for (int r = 0; r < passes; r++)
		for (unsigned i = 0; i < n; i++) {
			long long t0 = clock64();
			unsigned v = load_cg(lines + (size_t)i * 32);
			long long t1 = clock_after(v);

			seen[1] = v;
			if (t1 - t0 < lat[i])
				lat[i] = (unsigned short)(t1 - t0);
		}
}

static void
check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "slicelat: %s: %s\n", what, cudaGetErrorString(e));
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	unsigned *arena, *ran;
	const char *env = getenv("MEMSIM_SLICELAT_PASSES");
	int passes = env ? atoi(env) : 4;
	unsigned short *dlat, *lat;
	int nsm;

	if (argc < 5) {
		fprintf(stderr, "usage: slicelat OUTFILE OFFSET_KIB LINES SM...\n");
		return 2;
	}
	size_t off = strtoull(argv[2], NULL, 0) << 10;
	unsigned n = (unsigned)strtoul(argv[3], NULL, 0);
	if (n == 0 || off + (size_t)n * 128 > ARENA) {
		fprintf(stderr, "slicelat: OFFSET_KIB and LINES must lie in the 1 GiB arena\n");
		return 2;
	}
	FILE *out = fopen(argv[1], "wb");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	check(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0), "SM count");
	check(cudaMalloc(&arena, ARENA), "arena");
	check(cudaMemset(arena, 0, ARENA), "memset");
	check(cudaMalloc(&dlat, n * sizeof(*dlat)), "latencies");
	check(cudaMalloc(&ran, sizeof(*ran)), "flag");
	lat = (unsigned short *)malloc(n * sizeof(*lat));
	fprintf(out, "lines %u sms %d base %p\n", n, argc - 4, (void *)arena);
	for (int a = 4; a < argc; a++) {
		unsigned sm = (unsigned)atoi(argv[a]), did = 0;

		check(cudaMemset(ran, 0, sizeof(*ran)), "flag");
		check(cudaMemset(dlat, 0, n * sizeof(*dlat)), "latencies");
		/* one block an SM, 32 threads: the block on `sm` does the work */
		fingerprint<<<nsm, 32>>>(arena + off / 4, n, sm, passes < 1 ? 1 : passes, dlat, ran);
		check(cudaDeviceSynchronize(), "kernel");
		check(cudaMemcpy(&did, ran, sizeof(did), cudaMemcpyDeviceToHost), "flag");
		check(cudaMemcpy(lat, dlat, n * sizeof(*lat), cudaMemcpyDeviceToHost), "copy");
		fprintf(out, "sm %u ran %u\n", sm, did);
		fwrite(lat, sizeof(*lat), n, out);
		fprintf(stderr, "sm %u ran %u\n", sm, did);
	}
	fclose(out);
	return 0;
}
