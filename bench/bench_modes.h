#pragma once

/*
 * `memsim bench --modes`: what each way of getting a kernel's counters costs and how far it
 * is from the exact run, measured in one process: the computing run, trace-only, 12 sizes of
 * L2 run separately and in one pass (fan-out on a set-associative L2, the LRU stack pass on a
 * fully associative one), set sampling, and the formulas alone.
 */

#include <stdint.h>

/* Runs the comparison for kernel (naive, flash1, flash2, proj) at N, prints the table (to
 * stdout, or stderr when json_path is "-") and writes the figures to json_path when given.
 * Returns an exit status after a one-line message on failure. */
int bench_modes(const char *kernel, uint64_t N, const char *json_path, int argc, char **argv);
