#pragma once

/*
 * One configuration end to end: simulate the kernel (or only evaluate the formulas), compare,
 * and build its report, the JSON object of docs/schema.md. `memsim run` prints it; `memsim sweep`
 * writes one per line.
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "analysis/compare.h"
#include "analysis/formulas.h"
#include "kernels/attn.h"
#include "run/simulate.h"
#include "sim/spec.h"

/* What evaluation_run() does beside the formulas: nothing, or run the kernel through the model,
 * computing or trace-only (the same counters with no values: kernels/trace_only.h). The
 * first two are false and true, as callers of a bool simulate pass them. */
enum evaluation_mode {
	EVALUATION_FORMULA = 0,
	EVALUATION_SIMULATE = 1,
	EVALUATION_TRACE_ONLY = 2,
};

struct evaluation {
	struct attn_config cfg;
	struct spec spec;
	bool flush;
	uint64_t seed;
	bool simulated;
	bool trace_only;       /* simulated by the kernel's trace-only form */
	struct sim_result sim; /* when simulated */
	struct formula_result f;
	struct comparison cmp; /* when simulated */
	double bandwidth_gbps; /* for per_token's bound; 0: the preset's, if any */
	const char *bandwidth_source; /* bandwidth_gbps's; NULL: "--bandwidth" */
};

/* Runs one configuration as mode says. Returns 0, or -1 with a one-line message in err. Free
 * with evaluation_finish(). */
int evaluation_run(struct evaluation *ev, const struct attn_config *cfg, const struct spec *spec,
		   bool flush, uint64_t seed, enum evaluation_mode mode, char *err, size_t errlen);
/* As evaluation_run() (mode simulating) that also records the run's accesses into rec when not
 * NULL (see sim_kernel_record()) and simulates on up to `threads` threads (sim_kernel_split();
 * 0 or 1: one); the counters are the same. Returns 0, or -1 with a one-line message (the run's
 * or the recording's). */
int evaluation_run_recorded(struct evaluation *ev, const struct attn_config *cfg,
			    const struct spec *spec, bool flush, uint64_t seed,
			    enum evaluation_mode mode, const struct sim_record *rec,
			    unsigned threads, char *err, size_t errlen);
/* As evaluation_run() for a run already simulated (one size of a one-pass run): the formulas
 * and the comparison for sim, which ev takes over (evaluation_finish() frees it). */
void evaluation_of_sim(struct evaluation *ev, const struct attn_config *cfg,
		       const struct spec *spec, bool flush, uint64_t seed, bool trace_only,
		       struct sim_result *sim);
void evaluation_finish(struct evaluation *ev);

/* The report object: header (if argv given), config (with "trace_only"), levels, dram,
 * scratch, arrays, phases, formulas, compare, regime, flops, intensity, timing. Caller frees
 * with cJSON_Delete(). */
cJSON *evaluation_json(struct evaluation *ev, int argc, char **argv);
