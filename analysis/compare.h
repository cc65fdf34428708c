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
/* An array that moves less than this share of the run's bytes is marked negligible: its own
 * verdict stays strict (within 5% or not), and the summary says apart which arrays are off
 * but negligible, so a small array off by 2x is never passed off as agreeing. */
#define COMPARE_NEGLIGIBLE 0.001

struct compare_array {
	char name[32];
	double measured_read, measured_write, exact_read, exact_write;
	double exact_low, exact_high; /* the set-associative interval, read + write */
	double ratio;                 /* measured / exact, total bytes */
	bool within;     /* read, write and total each within COMPARE_EXACT_TOLERANCE, or the total
			    inside the bound (exact_low .. exact_high) where the formula has one */
	bool negligible; /* under COMPARE_NEGLIGIBLE of the run's bytes, both sides */
};

struct compare_total {
	const char *formula; /* "lab" or "exact" */
	double predicted, measured, ratio, tolerance;
	bool within;
	bool applicable; /* false: no lab formula for this kernel */
	bool interval;   /* exact, scope interval: within means low .. high, tolerance 0 */
	double low, high;
	unsigned runs;            /* the bound is the formula at C +- runs lines per set */
	enum formula_scope scope; /* exact only */
	char basis[256];
	char why_not[448];
};

struct comparison {
	struct compare_array arrays[FORMULA_MAX_ARRAYS + 8];
	unsigned narrays;
	struct compare_total lab, exact;
	bool arrays_within; /* every array within COMPARE_EXACT_TOLERANCE */
	/* every array within, or off but negligible; the off ones named in off_negligible */
	bool arrays_within_but_negligible;
	char off_negligible[160];
	char regime[384];
	bool in_regime;
};

/* The verdict "within tol": measured / predicted in [1 - tol, 1 + tol] (nothing predicted is
 * matched only by nothing measured), so "within 30%" passes 1.30 and not 1.43. */
bool compare_within(double measured, double predicted, double tol);
/* measured in [(1 - tol) low, (1 + tol) high]: an interval widened as a point is. */
bool compare_within_interval(double measured, double low, double high, double tol);

/* Compares a simulated run (model c after the kernel, flushed or not as f was computed) with
 * the formulas f. */
void compare_build(struct cache *c, const struct attn_config *cfg, const struct formula_result *f,
		   struct comparison *out);

/* Adds "formulas" and "compare" (the keys of docs/schema.md) to obj. */
void compare_add_json(cJSON *obj, const struct formula_result *f, const struct comparison *cmp);

/* Prints the per-array table and the two verdicts. */
void compare_print(FILE *out, const struct formula_result *f, const struct comparison *cmp);
