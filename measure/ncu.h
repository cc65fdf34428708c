#pragma once

/*
 * Reading Nsight Compute's CSV (`ncu --csv --page raw --print-units base --metrics ...`): a
 * header row naming the columns ("ID", "Kernel Name", then one per metric), a row of units,
 * then one row per profiled kernel launch. Columns are found by their header name; numbers may
 * carry thousands separators. Lines before the header (ncu's ==PROF== messages, the program's
 * own output) are skipped.
 */

#include <stdbool.h>
#include <stddef.h>

#define NCU_METRICS_MAX 8
#define NCU_KERNELS_MAX 16

struct ncu_kernel {
	char name[128];
	double value[NCU_METRICS_MAX]; /* in the order the metrics were asked for */
};

struct ncu_result {
	unsigned nkernels;
	struct ncu_kernel kernels[NCU_KERNELS_MAX];
};

/* Parses the CSV text for the given metric names. Returns 0, or -1 with a one-line message in
 * err (no header, a metric column missing, a value that is not a number, no kernel row). */
int ncu_parse(const char *text, const char *const *metrics, unsigned nmetrics,
	      struct ncu_result *out, char *err, size_t errlen);
