#pragma once

/*
 * The per-operation profile of an attention layer (`memsim profile`): for each sequence
 * length T, the layer's operations timed natively (the proj kernel's qkv_proj and out_proj,
 * the naive kernel's scores, softmax and av one phase at a time, each flash kernel whole as
 * "attention"), each next to its FLOPs and the DRAM bytes the simulator gives that phase in
 * one traced run of the kernel, plus one "layer" row per T and attention kernel.
 *
 * Notes:
 * - Timing: one warm-up call, then a calibration that finds k, the calls that take at least
 *   min_time (with 10% to spare), once per operation; then each repetition times k calls and
 *   keeps the time per call. Quantiles are over the repetitions, interpolated linearly between
 *   order statistics (numpy's default). Warm runs: the operation's arrays stay wherever the
 *   previous call left them, as in a layer run over and over.
 * - A phase run alone works on whatever the arrays hold: the kernel runs whole once first, so
 *   softmax and av see real scores and probabilities. softmax rewrites S in place (P over S),
 *   so each repeated call takes the softmax of the last call's probabilities: the same loads,
 *   stores and exp calls.
 * - DRAM bytes: dram read + write bytes of the phase in one traced run from cold caches
 *   (inputs filled, then the kernel), the final flush counted in no phase; "attention" sums
 *   the kernel's phases. The bytes of one cold run, not of the warm timed ones: on caches that
 *   hold the arrays the timed calls move fewer.
 * - Layer rows: p50, p95, p99 and mean are the sums of the operations' (the operations are
 *   timed apart, so the sum of p95s bounds, not estimates, the layer's p95); FLOPs and bytes
 *   are sums; calls_per_repetition is 0.
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/attn.h"
#include "sim/spec.h"

#define PROFILE_MAX_T 64

struct profile_config {
	uint64_t T[PROFILE_MAX_T]; /* sequence lengths, in order */
	unsigned nT;
	uint64_t d_model; /* heads x d_head */
	uint64_t heads;
	enum attn_kernel kernels[ATTN_KERNEL_COUNT]; /* attention kernels: naive, flash1, flash2 */
	unsigned nkernels;
	struct spec spec;      /* cache of the traced runs */
	double min_time;       /* seconds of work per repetition */
	unsigned reps;         /* repetitions per operation */
	uint64_t seed;         /* inputs */
	uint64_t Br, Bc;       /* tiles [64, 64] */
	enum attn_dtype dtype; /* [fp32] */
};

struct profile_timing {
	double p50, p95, p99, mean; /* seconds per call */
	unsigned repetitions;
	uint64_t calls; /* per repetition */
};

struct profile_row {
	uint64_t T;
	enum attn_kernel kernel; /* ATTN_PROJ for qkv_proj and out_proj */
	const char *op;          /* a phase name, "attention" or "layer"; static */
	struct profile_timing time;
	double flops;
	uint64_t dram_bytes;
};

/* Defaults: T 64,128,256,512, d_model 64, 4 heads, naive and flash2, min_time 0.05 s, 30
 * repetitions, seed 1, B_r = B_c = 64, fp32. The spec is left zero: set it. */
void profile_config_init(struct profile_config *c);

/* Validates c: T values, heads dividing d_model, kernels, min_time in (0, 60], reps 1 to
 * 100000, and memory for the largest T. Returns 0, or -EINVAL (-ENOMEM for memory) with a
 * one-line message naming the option in err. */
int profile_config_check(const struct profile_config *c, char *err, size_t errlen);

/* The kernel configuration of one of c's runs at T. */
struct attn_config profile_attn_config(const struct profile_config *c, uint64_t T,
				       enum attn_kernel k);

/* Quantile q (0 to 1) of sorted[0 .. n), n >= 1, interpolated between order statistics. */
double profile_quantile(const double *sorted, size_t n, double q);

/* Times fn(arg) as the notes above say: warm-up, calibration to min_time, reps
 * repetitions. Returns 0, or -EINVAL for min_time <= 0 or reps == 0. */
int profile_time(void (*fn)(void *arg), void *arg, double min_time, unsigned reps,
		 struct profile_timing *out);

/* Profiles every T of c, calling emit(row, ctx) for each row as soon as it is measured; a
 * nonzero return from emit stops the run and is returned. Returns 0, emit's value, or -1
 * with a one-line message in err (allocation or simulation failed). */
int profile_run(const struct profile_config *c,
		int (*emit)(const struct profile_row *row, void *ctx), void *ctx, char *err,
		size_t errlen);

/* A row as the JSON object of docs/profile.md. Caller frees with cJSON_Delete(). */
cJSON *profile_row_json(const struct profile_config *c, const struct profile_row *row);

/* Adds what a manifest says of c: "seed", "hardware" (CPU model and cores) and "config" with the
 * cache as parsed. The common part comes from the caller (analysis/report.h's
 * report_manifest_create()). */
void profile_add_manifest(cJSON *m, const struct profile_config *c);
