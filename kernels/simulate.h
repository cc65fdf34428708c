#pragma once

/*
 * Running a kernel through the cache model (the traced build, live): allocate and fill the
 * arrays, feed every access to a fresh model, flush unless asked not to.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/attn.h"
#include "sim/cache.h"
#include "sim/spec.h"

struct sim_result {
	struct cache *cache; /* owned; freed by sim_result_finish() */
	double seconds;      /* wall time of the traced run */
	bool checked;
	struct attn_error error; /* when checked */
};

/* Simulates cfg on spec with inputs from seed; check also compares the outputs with the
 * double-precision reference. Returns 0, or -1 with a one-line message in err. */
int sim_kernel(const struct attn_config *cfg, const struct spec *spec, bool flush, uint64_t seed,
	       bool check, struct sim_result *out, char *err, size_t errlen);

/* As sim_kernel() through the kernel's trace-only form (attn_data_create_trace_only()): the
 * same counters with no values computed, for arrays far larger than memory. Nothing to check
 * and no inputs, so no seed (random replacement takes spec's). */
int sim_kernel_trace_only(const struct attn_config *cfg, const struct spec *spec, bool flush,
			  struct sim_result *out, char *err, size_t errlen);

/* One run of cfg for every size sizes[0 .. n) of cache level `level` (0 for L1) of spec, with
 * one-pass method how (sim/cache.h cache_create_onepass()); outs[k] is what sim_kernel() (or,
 * with trace_only, sim_kernel_trace_only()) gives for spec with that size, counter for
 * counter (seconds: the one run's). Returns 0, or -1 with a one-line message in err. Each
 * outs[k] is freed with sim_result_finish(). */
int sim_kernel_onepass(const struct attn_config *cfg, const struct spec *spec, unsigned level,
		       const uint64_t *sizes, unsigned n, enum cache_onepass how, bool flush,
		       uint64_t seed, bool trace_only, struct sim_result *outs, char *err,
		       size_t errlen);

void sim_result_finish(struct sim_result *r);
