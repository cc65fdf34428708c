#pragma once

/*
 * `memsim report DIR`: the labs' questions answered from the results in DIR (a `memsim study`
 * directory): where flash starts to win in DRAM bytes, the flash/naive intensity ratio at
 * N = 8192, d = 128, B_r = B_c = 64 with the working, which operations are memory-bound at
 * which T and how far below the roofline, how far each formula is from the simulated and the
 * cross-checked bytes and why. Sections whose inputs are missing say so and are skipped.
 *
 * Writes DIR/report.md, DIR/report.html (self-contained, plots inlined), DIR/manifest.json (the
 * labs' manifest: experiment, date, seed, versions, config, hardware, results summary) and
 * DIR/report-numbers.json: every number and results text the report prints, with its sources,
 * so tests/test-report.c can check that nothing was typed in.
 */

#include <stddef.h>

/* Returns 0, or -1 with a one-line message in err (no results at all, an unwritable file). */
int lab_report(const char *dir, char *err, size_t errlen);
