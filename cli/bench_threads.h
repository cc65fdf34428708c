#pragma once

/*
 * `memsim bench --threads T`: what T threads gain on one run (issue 24), measured in one
 * process: naive and flash2, computing and trace-only, on one thread and on T; wall and
 * processor time, the speedup, the speedup per core next to its target, and whether the
 * counters are one thread's.
 */

#include <stdint.h>

struct bench_threads_args {
	unsigned threads;
	uint64_t N, heads, repeat;
	const char *cache; /* a spec or preset */
	const char *json_path;
};

/* Runs the comparison, prints the table (stdout, or stderr when json_path is "-") and writes
 * the figures to json_path when given. Returns an exit status after a one-line message on
 * failure; EXIT_RUNTIME when a run's counters differ from one thread's. */
int bench_threads(const struct bench_threads_args *a, int argc, char **argv);
