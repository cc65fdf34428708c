#pragma once

/*
 * `memsim bench --onepass`: 12 sizes of an 8-way L2 in one pass, by the stack pass and by
 * fan-out, over one run of one size (the mean of the twelve run separately), measured in one
 * process and repeated, each repeat's ratios printed and their median.
 */

#include <stdint.h>

/* Runs the comparison `repeat` times for kernel at N, prints the table (to stdout, or stderr
 * when json_path is "-") and writes the figures to json_path when given. Returns an exit status:
 * EXIT_RUNTIME after a message when a run fails or a one pass's counters differ. */
int bench_onepass(const char *kernel, uint64_t N, unsigned repeat, const char *json_path, int argc,
		  char **argv);
