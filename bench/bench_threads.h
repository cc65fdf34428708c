#pragma once

/*
 * `memsim bench --threads T[,T...]`: what threads gain on one run (issue 24), measured in one
 * process: naive and flash2, computing and trace-only, on one thread and on each T; wall and
 * processor time, the speedup, the speedup per core next to its target and to what as many
 * independent one-thread runs at once get a core, and whether the counters are one thread's.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_THREADS_MAX 8 /* thread counts in one run */
#define BENCH_THREADS_COPIES_MAX 65 /* copies at once: 64 threads and the caller's */

struct bench_threads_args {
	unsigned threads[BENCH_THREADS_MAX]; /* each 2 to 64 */
	unsigned nthreads;
	bool trace_only; /* the trace-only runs alone */
	uint64_t N, heads, repeat;
	const char *cache; /* a spec or preset */
	const char *json_path;
};

/* Reads "2,4,8" into a->threads; 0, or -1 with a message in err. */
int bench_threads_parse(const char *text, struct bench_threads_args *a, char *err, size_t errlen);

/* Runs the comparison, prints the table (stdout, or stderr when json_path is "-") and writes
 * the figures to json_path when given. Returns an exit status after a one-line message on
 * failure; EXIT_RUNTIME when a run's counters differ from one thread's. */
int bench_threads(const struct bench_threads_args *a, int argc, char **argv);
