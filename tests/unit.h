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
