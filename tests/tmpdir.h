#pragma once

/*
 * A test program's scratch directory, made before its cases and removed after them: define
 * TMPDIR_NAME ("cli", "traces", ...) before including; pass tmpdir_setup and tmpdir_teardown
 * to cmocka_run_group_tests(). The cases find it in tmpdir.
 */

#include <stdio.h>
#include <stdlib.h>

static char tmpdir[] = "/tmp/memsim-test-" TMPDIR_NAME "-XXXXXX";

static int
tmpdir_setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int
tmpdir_teardown(void **state)
{
	char cmd[sizeof(tmpdir) + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}
