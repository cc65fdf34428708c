#pragma once

/*
 * The machine's ceilings for a roofline, measured natively: memory bandwidth with a
 * STREAM-like triad and peak FLOP/s with an FMA-bound micro-kernel, each on one core and on
 * all cores (POSIX threads). `memsim ceilings` runs them and keeps the result in
 * DIR/ceilings.json (ceilings_json() gives its schema).
 *
 * Notes:
 * - Bandwidth counts bytes the STREAM way: 24 per triad element (read b[i] and c[i], write
 *   a[i]); the read for ownership a write-allocate cache does on a[i] is not counted, so the
 *   DRAM traffic is 32 bytes per element and the number is what a kernel can stream, not what
 *   the memory bus carries.
 * - Each array is at least 4x the last-level cache, so no repetition finds its data in cache;
 *   the total is capped at half of MemAvailable (the arrays shrink, with a note, when memory is
 *   short). Quick runs use arrays that may fit in the cache: not a DRAM measurement.
 * - Peak FLOP/s is for fp32, the kernels' compute type: 8-lane AVX2 FMAs where the CPU has
 *   AVX2 and FMA, 2 FLOPs per lane; else 4-lane SSE2 multiplies and adds, 1 FLOP per lane each.
 *   Wider units (AVX-512) are not used: the kernels are not compiled for them either.
 * - Each number is the best of its repetitions (STREAM's rule: the least disturbed run).
 * - All cores slower than one, or repetitions far apart, mean something else ran meanwhile:
 *   ceilings_consistent() judges that, and ceilings_measure() measures again a few times.
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* All cores slower than one core by more than this fraction: inconsistent. */
#define CEILINGS_SLOWER_MAX 0.05
/* A series whose slowest repetition takes more than this fraction longer than its fastest:
 * inconsistent. */
#define CEILINGS_SPREAD_MAX 0.25
/* Measurements made at most, the first included, while they are inconsistent. */
#define CEILINGS_ROUNDS 3

struct ceilings {
	char memsim_version[32];
	char date[32];  /* "YYYY-MM-DDTHH:MM:SSZ", UTC */
	char cpu[256];  /* model name from /proc/cpuinfo */
	unsigned cores; /* online processors */
	bool quick;
	/* bandwidth */
	char bw_method[512];  /* one sentence */
	uint64_t array_bytes; /* each of the three arrays */
	unsigned bw_repetitions;
	unsigned bw_threads; /* of the all-cores run */
	double one_core_bytes_per_s, all_cores_bytes_per_s;
	/* peak FLOP/s */
	char flops_method[512];
	char isa[16]; /* "avx2+fma" or "sse2" */
	unsigned flops_repetitions;
	unsigned flops_threads;
	double one_core_flops_per_s, all_cores_flops_per_s;
	/* Each series' spread: (slowest - fastest) / fastest of its repetitions' times; -1 where
	 * unknown (a document of an older memsim). */
	double bw_one_core_spread, bw_all_cores_spread;
	double flops_one_core_spread, flops_all_cores_spread;
	/* consistency: judged when measured (false for an older memsim's document), the rounds
	 * measured, and why the last is inconsistent ("" when consistent) */
	bool checked, consistent;
	unsigned rounds;
	char inconsistency[512];
	char note[512]; /* adjustments made (arrays shrunk, quick run); "" if none */
};

/* The CPU's model name from /proc/cpuinfo ("unknown" if there is none) into buf; returns buf. */
char *ceilings_cpu_model(char *buf, size_t len);

/* Online processors (at least 1). */
unsigned ceilings_cores(void);

/* MemAvailable from /proc/meminfo, in bytes; the physical memory if it cannot be read. */
uint64_t ceilings_mem_available(void);

/* Bytes of each triad array for a last-level cache of llc_bytes: 4.25x the LLC (the host
 * preset may model a sliced LLC a little smaller than it is; 4.25x keeps each array at least
 * 4x the real one), the three at most half of mem_available; quick: at most 256 MiB for the
 * three. A multiple of 4 KiB. Says in note (may be NULL) what was shrunk, if anything. */
uint64_t ceilings_array_bytes(uint64_t llc_bytes, uint64_t mem_available, bool quick, char *note,
			      size_t notelen);

/* Triad a[i] = b[i] + s c[i] over three arrays of array_bytes, first touched by `threads`
 * threads; the best of reps repetitions on one thread, then on `threads` threads, in bytes per
 * second (24 per element), and their spreads (one core, all cores; spread may be NULL).
 * Returns 0, or a negative errno with a message in err (memory, threads, a wrong result). */
int ceilings_bandwidth(uint64_t array_bytes, unsigned reps, unsigned threads, double *one_core,
		       double *all_cores, double spread[2], char *err, size_t errlen);

/* The instruction set the FLOP kernel uses here: "avx2+fma" or "sse2" (or "c" off x86). */
const char *ceilings_isa(void);

/* FMA-bound kernel, calibrated to run at least min_seconds, best of reps, on one thread and
 * on `threads` threads, in FLOP/s, and the spreads as ceilings_bandwidth()'s. Returns 0, or a
 * negative errno with a message in err. */
int ceilings_peak_flops(double min_seconds, unsigned reps, unsigned threads, double *one_core,
			double *all_cores, double spread[2], char *err, size_t errlen);

/* Whether c's numbers hold together: all cores no more than CEILINGS_SLOWER_MAX slower than
 * one core, in bandwidth and in FLOP/s, and no known spread over CEILINGS_SPREAD_MAX. Says
 * why not in why (may be NULL): every check that fails, "; " between; "" when they hold. */
bool ceilings_consistent(const struct ceilings *c, char *why, size_t len);

/* Round `round` (from 0; the last one given stands for those after it) of the numbers the
 * test knob text gives, into c's rates and spreads: rounds separated by ';', each "BW1,BWN,
 * FL1,FLN[,SPREAD]", the bandwidth on one core and on all in GB/s, the FLOP rate in GFLOP/s
 * (positive), and every series' spread (at least 0; 0 when left out). Returns 0, or -EINVAL
 * with what is wrong in err. */
int ceilings_injected(const char *text, unsigned round, struct ceilings *c, char *err,
		      size_t errlen);

/* Measures everything into *out (date, CPU, cores, version filled in) for a last-level cache
 * of llc_bytes; quick: small arrays, fewer repetitions. Measures again while the numbers are
 * inconsistent, CEILINGS_ROUNDS times at most (out says how many and why). With
 * MEMSIM_TEST_CEILINGS set, its numbers stand for the measurements. Returns 0, or a negative
 * errno with a message in err. */
int ceilings_measure(uint64_t llc_bytes, bool quick, struct ceilings *out, char *err,
		     size_t errlen);

/* The JSON document of c (the schema in docs/profile.md), with "consistency": consistent,
 * rounds, why, and the limits. Caller frees with cJSON_Delete(). */
cJSON *ceilings_json(const struct ceilings *c);

/* Reads a document written by ceilings_json() back; one of an older memsim, without spreads
 * and consistency, reads with checked false and spreads -1. Returns 0, or -EINVAL with the
 * missing or mistyped key named in err. */
int ceilings_from_json(const cJSON *obj, struct ceilings *out, char *err, size_t errlen);

/* Adds "hardware" to obj: this machine's CPU model and cores, its caches as the host preset
 * reads them (or why not), and the CPU frequency governor now. */
void ceilings_add_hardware(cJSON *obj);
