#pragma once

/*
 * The cross-check table of `memsim xcheck`: one row per source (the formulas, memsim under
 * each tool's model, Cachegrind, Callgrind, PAPI), the quantities each one measures, and each
 * measured row's ratio to the memsim row it is compared with, against a tolerance.
 *
 * Quantities are counts of misses and bytes; a negative value means "not measured by this
 * source". Ratios are source / memsim.
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stdio.h>

enum xcheck_source {
	XCHECK_LAB = 0,      /* the lab formula */
	XCHECK_EXACT,        /* the exact per-array formulas */
	XCHECK_MEMSIM_CG,    /* memsim under Cachegrind's model */
	XCHECK_CACHEGRIND,   /* Cachegrind, the kernel's functions */
	XCHECK_MEMSIM_CLG,   /* memsim under Callgrind's --simulate-wb model */
	XCHECK_CALLGRIND,    /* Callgrind, the client-request region */
	XCHECK_CALLGRIND_PF, /* Callgrind with --simulate-hwpref=yes */
	XCHECK_MEMSIM_HOST,  /* memsim on the host preset */
	XCHECK_PAPI,         /* hardware counters on the native run */
	XCHECK_SOURCES,
};

enum xcheck_quantity {
	XCHECK_D1_MISSES = 0,
	XCHECK_LL_MISSES,
	XCHECK_WRITEBACKS, /* dirty lines the last level evicted during the run */
	XCHECK_DRAM_BYTES, /* fills and write-backs, in bytes */
	XCHECK_QUANTITIES,
};

/* Tolerances, as |ratio - 1|. */
#define XCHECK_D1_TOLERANCE 0.05
#define XCHECK_LL_TOLERANCE 0.02
#define XCHECK_WB_TOLERANCE 0.02
#define XCHECK_BYTES_TOLERANCE 0.30

struct xcheck_row {
	bool shown;
	char source[48];
	char model[48];              /* the cache model or machine it describes */
	double q[XCHECK_QUANTITIES]; /* < 0: not measured */
	double seconds;              /* < 0: not timed */
	int ref;                     /* the memsim row it is compared with; -1 for none */
	/* When >= 0, what the row is compared with instead of the ref row's value (a formula's
	 * basis leaves some of memsim's bytes out), and the tolerance instead of the default. */
	double basis[XCHECK_QUANTITIES];
	double tolerance;
	char note[1024]; /* what it counts, what it leaves out, or why it is empty */
};

struct xcheck_ratio {
	double ratio; /* row / ref */
	double tolerance;
	bool within;
};

struct xcheck {
	char config[160];   /* the kernel configuration, in words */
	char geometry[160]; /* I1, D1, LL as the tools were given them */
	char valgrind_args[256];
	struct xcheck_row rows[XCHECK_SOURCES];
	char notes[4][640]; /* printed under the table */
	unsigned nnotes;
};

/* Initializes every row as not shown, every quantity as not measured. */
void xcheck_init(struct xcheck *x);

/* Row r's ratio to its reference for quantity q; false when either side is not measured. */
bool xcheck_ratio(const struct xcheck *x, enum xcheck_source r, enum xcheck_quantity q,
		  struct xcheck_ratio *out);

/* Tolerance used for quantity q between rows of the same model. */
double xcheck_tolerance(enum xcheck_quantity q);

/* Prints the table, one row per shown source, ratios under each measured column, then the
 * rows' notes and the table's notes. */
void xcheck_print(FILE *out, const struct xcheck *x);

/* The table as JSON: geometry, rows (with ratios, tolerance and verdict per quantity) and
 * notes. Adds to obj. */
void xcheck_add_json(cJSON *obj, const struct xcheck *x);

/* A summary of many xcheck reports (their JSON, as xcheck_add_json() wrote it next to the
 * report's "config"): one line per report with the ratio of each tool's D1 and LL misses,
 * write-backs and the formulas to memsim's; "OUT" marks a ratio outside its tolerance, "-" one
 * not measured. xcheck_summary_line() returns false when a tool's or the exact formula's ratio
 * is outside (the lab formula has its regimes: not counted). */
void xcheck_summary_header(FILE *out);
bool xcheck_summary_line(FILE *out, const cJSON *report);
