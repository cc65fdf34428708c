#pragma once

/*
 * Whole-process measurements of child runs (memsim bench --kernels): a program's wall time,
 * the figures of a `memsim run --json` report, the instructions callgrind counted.
 */

/* Runs argv (argv[0] a path, or a name on $PATH) with stdout and stderr to /dev/null; returns
 * its wall time, or a negative value if it could not run, failed or was interrupted. */
double child_run_time(char *const argv[]);

/* What bench takes from one child run: its wall time, and from its `memsim run --json` report
 * the figures below (-1 where the report lacks them). */
struct child_run_figures {
	double seconds;       /* the whole process: start, allocate, fill, run, report */
	double model_seconds; /* the report's traced_seconds: the kernel through the model */
	double peak_rss;      /* bytes */
	double accesses;      /* loads, stores and instruction fetches */
	double l1_misses;
};

/* Fills f's report figures from the run report at path and removes the file. */
void child_run_report(const char *path, struct child_run_figures *f);

/* The instructions callgrind counted, from the "totals:" line of its output file at path
 * (removed after); -1 if there is none. */
double child_run_callgrind_totals(const char *path);
