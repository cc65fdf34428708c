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

/* One simulated run of a sweep, as the tables use it. */
struct table_row {
	char kernel[16], dtype[8], cache[256], regime[320], why_not[320];
	double N, measured, lab, exact, lab_measured, lab_ratio, exact_ratio, intensity;
	bool lab_within, exact_within, arrays_within, in_regime, has_lab;
	bool byte_equal; /* every array's read and write bytes equal to its exact formula's */
	char worst_array[32]; /* the array furthest from its exact formula */
	double worst_ratio;
};

struct table_rows {
	struct table_row *rows; /* sorted by cache, kernel, dtype, N */
	size_t n, cap;
};

/* Reads DIR/results.json (analysis/results.h), rows with an "error" left out. Returns 0, or a
 * negative errno with "path:line: what" in err. Free with tables_finish(). */
int tables_read(const char *dir, struct table_rows *out, char *err, size_t errlen);
void tables_finish(struct table_rows *t);

/* Every run with its lab verdict and regime. */
void tables_print_lab(FILE *out, const struct table_rows *t);
/* Per cache and dtype, the smallest N from which flash2 moves fewer bytes than naive. */
void tables_print_crossover(FILE *out, const struct table_rows *t);
/* Per kernel: runs whose every array is within 5%, and the worst array. Returns true when
 * every array of every run is within 5% (and there are runs). */
bool tables_print_exact(FILE *out, const struct table_rows *t);

/* The summary of DIR's xcheck reports (*.json), one line per configuration. Returns 0, or -1
 * with the first problem in err (the table then shows the reports that could be read). */
int tables_print_xcheck(FILE *out, const char *dir, char *err, size_t errlen);
