#pragma once

/*
 * One configuration end to end, the kernel a built-in one or a plugin (run/plugin.h): the
 * cache model, the kernel's traced run through it (or for a built-in kernel only its
 * formulas), the comparison with the formulas where the kernel has some, and the report, the
 * JSON object of docs/schema.md. `memsim run` prints one, `memsim sweep` writes one per line,
 * `memsim xcheck` reads the model's counters.
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/compare.h"
#include "analysis/formulas.h"
#include "kernels/attn.h"
#include "run/plugin.h"
#include "run/simulate.h"
#include "sim/spec.h"

/* What evaluation_run() does beside the formulas: nothing, or run the kernel through the model,
 * computing or trace-only (the same counters with no values: kernels/trace_only.h). The
 * first two are false and true, as callers of a bool simulate pass them. A plugin is only
 * simulated (its callers refuse the others). */
enum evaluation_mode {
	EVALUATION_FORMULA = 0,
	EVALUATION_SIMULATE = 1,
	EVALUATION_TRACE_ONLY = 2,
};

/* What to evaluate: the kernel, its configuration, the cache and how to run it. */
struct evaluation_job {
	const struct plugin *plugin;        /* NULL: cfg's built-in kernel */
	const struct plugin_params *params; /* the plugin's --param options */
	const struct attn_config *cfg;
	const struct spec *spec;
	bool flush;
	uint64_t seed;
	enum evaluation_mode mode;
	const struct sim_record *rec; /* where not NULL, the accesses recorded first */
	unsigned threads;             /* a built-in kernel's (sim_kernel_split()); 0 or 1: one */
};

struct evaluation {
	const struct plugin *plugin; /* NULL: a built-in kernel */
	const struct plugin_params *params;
	struct attn_config cfg;
	struct spec spec;
	bool flush;
	uint64_t seed;
	bool simulated;
	bool trace_only;       /* simulated by the kernel's trace-only form */
	struct sim_result sim; /* when simulated: the model, the run's time and threads */
	/* A built-in kernel's formulas and their comparison with the run: */
	struct formula_result f;
	struct comparison cmp;        /* when simulated */
	double bandwidth_gbps;        /* for per_token's bound; 0: the preset's, if any */
	const char *bandwidth_source; /* bandwidth_gbps's; NULL: "--bandwidth" */
	/* A plugin's configuration, arrays and own formula (include/memsim/plugin.h): */
	struct memsim_kernel_config kc;
	struct plugin_arrays pa;
	bool have_formula;
	struct memsim_array_bytes formula[PLUGIN_MAX_ARRAYS];
	struct memsim_array_bytes measured[PLUGIN_MAX_ARRAYS]; /* by the run, beside formula */
	bool exact;          /* the formula's model is the cache's: byte-equal is claimed */
	char scope_why[160]; /* why not, where not exact */
};

/* Runs job. Returns 0, or with a one-line message in err -EINVAL where the configuration or
 * the parameters are not the plugin's (a usage error), -ENOMEM where the model cannot be
 * allocated, -EIO where the run or its recording failed. Free with evaluation_finish() (on
 * failure there is nothing to free). */
int evaluation_run(struct evaluation *ev, const struct evaluation_job *job, char *err,
		   size_t errlen);
/* evaluation_run() for n sizes of cache level `level` in one pass of method how
 * (cache_create_onepass()): outs[k] as a run of job on specs[k] (specs[0] the pass's base;
 * job->spec unused) would give, counter for counter. Returns 0, or with a one-line message in
 * err -ENOMEM when the pass's models cannot be allocated or memory ran out (fewer sizes may
 * fit), -EINVAL for anything else (each size may still run alone). */
int evaluation_onepass(struct evaluation *outs, const struct evaluation_job *job,
		       const struct spec *specs, unsigned level, const uint64_t *sizes, unsigned n,
		       enum cache_onepass how, char *err, size_t errlen);
void evaluation_finish(struct evaluation *ev);

/* The report object: header (where argv is given), config (a built-in kernel's with
 * "trace_only"; a plugin's with "kernel" its name, "plugin" its path and "params"), mode,
 * levels, dram, scratch, arrays, phases, then a built-in kernel's formulas, compare, regime,
 * flops, intensity, per_token, or a plugin's "formulas" {"exact"} where it has a formula,
 * flops and intensity where it counts flops, timing. Caller frees with cJSON_Delete(). */
cJSON *evaluation_json(const struct evaluation *ev, int argc, char **argv);
/* A simulated run's cache counters and comparison with the formulas as text (a built-in
 * kernel's with the per-token bound). */
void evaluation_print(FILE *out, const struct evaluation *ev);
