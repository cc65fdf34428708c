#pragma once

/*
 * The tables `memsim table` and `memsim study` print from a results directory: the lab
 * formulas against memsim run by run, the crossover N from which flash2 moves fewer bytes
 * than naive, the exactness summary per kernel, and the summary of a directory of
 * `memsim xcheck --json` reports.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The settings of a run besides kernel, dtype, cache and N, in the order a label lists them. */
enum table_setting {
	TABLE_N_KV,
	TABLE_D,
	TABLE_HEADS,
	TABLE_KV_HEADS,
	TABLE_BATCH,
	TABLE_BR,
	TABLE_BC,
	TABLE_CAUSAL,
	TABLE_SEPARATE,
	TABLE_FLUSH,
	TABLE_SEED,
	TABLE_TRACE_ONLY,
	TABLE_KV_PAGE,
	TABLE_SETTINGS
};

/* One simulated run of a sweep, as the tables use it. */
struct table_row {
	char kernel[16], dtype[8], cache[256], regime[320], why_not[320];
	double setting[TABLE_SETTINGS];
	/* The settings that differ between the rows of the table ("d=128 Br=32"), and
	 * "sampled 1/K" for an estimate: what tells apart rows of one kernel, dtype, cache and N. */
	char config[160];
	char params[96];      /* a plugin's config.params, "window=64 ostore=span" */
	unsigned sample_sets; /* > 1: the counts are estimates by set sampling (1 set in K) */
	double N, measured, lab, exact, lab_measured, lab_ratio, exact_ratio, intensity;
	bool lab_within, exact_within, arrays_within, in_regime;
	bool has_lab;         /* the run was compared with the lab formula (lab_*) */
	bool has_measured;    /* the row holds DRAM counts: not a --formula-only row */
	bool has_exact;       /* an exact formula's bytes (a built-in kernel's, a plugin's) */
	bool has_lab_formula; /* the lab has a formula for the kernel (lab) */
	/* Every array's read and write bytes equal to its exact formula's; never for an
	 * estimate. */
	bool byte_equal;
	char worst_array[32]; /* the array furthest from its exact formula */
	double worst_ratio;
};

struct table_rows {
	struct table_row *rows; /* sorted by cache, kernel, dtype, config, N */
	size_t n, cap;
	bool labelled;    /* some row has a config label */
	size_t estimates; /* rows that are estimates */
};

/* Reads DIR/results.json (analysis/results.h), rows with an "error" left out. Returns 0, or a
 * negative errno with "path:line: what" in err. Free with tables_finish(). */
int tables_read(const char *dir, struct table_rows *out, char *err, size_t errlen);
void tables_finish(struct table_rows *t);

/* Every run with its lab verdict and regime; "-" for a value the row has not. */
void tables_print_lab(FILE *out, const struct table_rows *t);
/* Per cache and dtype, the smallest N from which flash2 moves fewer bytes than naive, where
 * both were measured. */
void tables_print_crossover(FILE *out, const struct table_rows *t);
/* Per kernel: runs whose every array is within 5%, and the worst array; rows without a
 * measurement (--formula-only) left out. Returns true when every array of every run is within
 * 5% (and there are runs measured). */
bool tables_print_exact(FILE *out, const struct table_rows *t);

/* The summary of DIR's xcheck reports (*.json), one line per configuration. Returns 0, or -1
 * with the first problem in err (the table then shows the reports that could be read). */
int tables_print_xcheck(FILE *out, const char *dir, char *err, size_t errlen);
