#pragma once

/*
 * A test program's scratch directory, made before its cases and removed after them: define
 * TMPDIR_NAME ("cli", "traces", ...) before including; pass tmpdir_setup and tmpdir_teardown
 * to cmocka_run_group_tests(). The cases find it in tmpdir. It is made in $TMPDIR (an absolute
 * path), else /tmp: tests/run.sh gives the suite a private $TMPDIR and fails on anything left
 * in it. XDG_CACHE_HOME is set to tmpdir/cache, so that no test writes into the user's cache
 * (memsim ceilings and --bandwidth measured keep their measurement there).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmpdir[256]; /* small: the tests build paths on it in buffers of 600 */

static int
tmpdir_setup(void **state)
{
	const char *base = getenv("TMPDIR");
	char cache[sizeof(tmpdir) + 8];

	(void)state;
	if (!base || base[0] != '/' || strlen(base) > 200 || strchr(base, '\''))
		base = "/tmp";
	snprintf(tmpdir, sizeof(tmpdir), "%s/memsim-test-%s-XXXXXX", base, TMPDIR_NAME);
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(cache, sizeof(cache), "%s/cache", tmpdir);
	return setenv("XDG_CACHE_HOME", cache, 1);
}

static int
tmpdir_teardown(void **state)
{
	char cmd[sizeof(tmpdir) + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}
