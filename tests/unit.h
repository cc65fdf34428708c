#pragma once

/* cmocka's header needs these first; the block is kept out of include sorting. */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* True when the tests run from a sanitized build (tests/meson.build sets MEMSIM_SANITIZED=1
 * there): valgrind cannot run a program built with ASan, so what would run one skips. */
static inline bool
test_sanitized(void)
{
	const char *s = getenv("MEMSIM_SANITIZED");

	return s && strcmp(s, "1") == 0;
}

/* For a test program whose every case runs valgrind: in a sanitized run prints TAP's skip of
 * the whole plan and returns true, and main() returns 0. (cmocka 1.1.5 writes a skipped case
 * as "not ok # SKIP", which meson counts as a failure.) */
static inline bool
test_skip_all_if_sanitized(void)
{
	if (!test_sanitized())
		return false;
	printf("1..0 # SKIP valgrind cannot run a sanitized build\n");
	return true;
}

/* Whether the shell line command (its output discarded) exits 0 here: "valgrind --version",
 * "command -v gnuplot". */
static inline bool
test_can_run(const char *command)
{
	char line[512];

	snprintf(line, sizeof(line), "%s >/dev/null 2>&1", command);
	return system(line) == 0;
}

/* The reason the last case was left out (why given), for a plan left empty. */
static inline const char *
test_left_out_reason(const char *why)
{
	static char reason[256];

	if (why)
		snprintf(reason, sizeof(reason), "%s", why);
	return reason;
}

/* Leaves case fn out of tests[0 .. *n) (a case that cannot run here: no gnuplot, chromium or
 * valgrind), saying why on a TAP comment line. cmocka 1.1.5 writes a skip() as
 * "not ok # SKIP", which meson counts as a failure: such a case is not planned at all. */
static inline void
test_leave_out(struct CMUnitTest *tests, size_t *n, CMUnitTestFunction fn, const char *why)
{
	for (size_t i = 0; i < *n; i++) {
		if (tests[i].test_func != fn)
			continue;
		printf("# %s left out: %s\n", tests[i].name, why);
		test_left_out_reason(why);
		memmove(&tests[i], &tests[i + 1], (*n - i - 1) * sizeof(*tests));
		(*n)--;
		return;
	}
}

/* Runs the n cases planned. With none left, prints TAP's skip of the whole plan ("1..0 # SKIP
 * why"), which meson reports as SKIP, and returns 0: under protocol 'tap' meson takes exit
 * status 77, its skip code for plain tests, as an ERROR. */
static inline int
test_run_planned(const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
		 CMFixtureFunction teardown)
{
	if (n == 0) {
		printf("1..0 # SKIP %s\n", test_left_out_reason(NULL));
		return 0;
	}
	return _cmocka_run_group_tests("tests", tests, n, setup, teardown);
}
