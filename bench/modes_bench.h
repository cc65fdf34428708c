#pragma once

/*
 * The timings of `memsim bench --modes` (bench/bench_modes.c): a kernel's trace-only run
 * against a sampled one, and 12 sizes of L2 run separately against one pass.
 */

#include <stdbool.h>
#include <stddef.h>

#include "kernels/attn.h"
#include "sim/cache.h"
#include "sim/spec.h"

/* The L1 above the swept L2. */
#define MODES_BENCH_L1 "L1=32K:8:64"
/* The swept L2's sizes: SWEEP_SIZES of them, doubling from MODES_BENCH_L2_FIRST bytes. */
#define SWEEP_SIZES 12
#define MODES_BENCH_L2_FIRST UINT64_C(65536)

/* One mode's figures: a row of the table. */
struct mode_row {
	const char *mode;
	double seconds;
	double vs_one;      /* seconds over one exact trace-only run, or -1 */
	double vs_separate; /* seconds over the runs it replaces, or -1 */
	double error;       /* largest relative error of DRAM bytes against exact, or -1 */
	const char *target;
};

/* 12 sizes of L2 in spec l2 (a spec's L2 with its size left to each run): separately, then in
 * one pass with each method hows[0 .. nhow). Fills rows[0] (separate) and rows[1 ..] (one
 * pass each); same[i] says whether every size's counters agree for hows[i]. -1 with a message
 * in err if a run fails. */
int modes_bench_sweep(const struct attn_config *cfg, const char *l2, const enum cache_onepass *hows,
		      unsigned nhow, struct mode_row *rows, bool *same, char *err, size_t errlen);

/* Whether models a and b counted alike: level counters and DRAM traffic, word for word. */
bool modes_bench_same_totals(struct cache *a, struct cache *b);

/* One exact trace-only run and one sampled run (1 set in 8) of cfg on spec: times and the
 * error. */
int modes_bench_sample(const struct attn_config *cfg, const struct spec *spec,
		       struct mode_row *full, struct mode_row *est, char *err, size_t errlen);
