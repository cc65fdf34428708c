#pragma once

/*
 * A test program's scratch directory, made before its cases and removed after them: define
 * TMPDIR_NAME ("cli", "traces", ...) before including; pass tmpdir_setup and tmpdir_teardown
 * to cmocka_run_group_tests(). The cases find it in tmpdir. It is made in $TMPDIR (an absolute
 * path), else /tmp: tests/run.sh gives the suite a private $TMPDIR and fails on anything left
 * in it.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmpdir[256]; /* small: the tests build paths on it in buffers of 600 */

static int
tmpdir_setup(void **state)
{
	const char *base = getenv("TMPDIR");

	(void)state;
	if (!base || base[0] != '/' || strlen(base) > 200 || strchr(base, '\''))
		base = "/tmp";
	snprintf(tmpdir, sizeof(tmpdir), "%s/memsim-test-%s-XXXXXX", base, TMPDIR_NAME);
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
