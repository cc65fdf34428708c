#pragma once

/*
 * Formulas next to measured bytes: per array (measured vs the exact formula) and in total
 * (vs the exact and the lab formula), each with its ratio, tolerance, verdict and, where the
 * verdict is no, the reason. Used by `memsim run`, `sweep` and the report.
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "analysis/formulas.h"
#include "sim/cache.h"

#define COMPARE_LAB_TOLERANCE 0.30
#define COMPARE_EXACT_TOLERANCE 0.05
/* Arrays that move less than this share of the run's bytes are judged by absolute
 * difference against that share, so a 64-byte flush of a small array cannot fail a run. */
#define COMPARE_NEGLIGIBLE 0.001

struct compare_array {
	char name[32];
	double measured_read, measured_write, exact_read, exact_write;
	double ratio; /* measured / exact, total bytes */
	bool within;
};

struct compare_total {
	const char *formula; /* "lab" or "exact" */
	double predicted, measured, ratio, tolerance;
	bool within;
	bool applicable; /* false: no lab formula for this kernel */
	char basis[160];
	char why_not[320];
};

struct comparison {
	struct compare_array arrays[FORMULA_MAX_ARRAYS + 8];
	unsigned narrays;
	struct compare_total lab, exact;
	bool arrays_within; /* every array within COMPARE_EXACT_TOLERANCE */
	char regime[256];
	bool in_regime;
};

/* Compares a simulated run (model c after the kernel, flushed or not as f was computed) with
 * the formulas f. */
void compare_build(struct cache *c, const struct attn_config *cfg, const struct formula_result *f,
		   struct comparison *out);

/* Adds "formulas" and "compare" (the keys of docs/results.md) to obj. */
void compare_add_json(cJSON *obj, const struct formula_result *f, const struct comparison *cmp);

/* Prints the per-array table and the two verdicts. */
void compare_print(FILE *out, const struct formula_result *f, const struct comparison *cmp);
