/*
 * memsim against Cachegrind and Callgrind on the native build of the same kernels, the
 * smallest case of the cross-check table (docs/xcheck.md) (N = 256, d = 64, fp32, the cachegrind
 * geometry): `memsim xcheck --json` is run and its ratios are held to the tolerances.
 *
 *  - naive at B_r = B_c = 64, flash1 and flash2 at B_c = 32: D1 misses within 5%, LL misses
 *    and write-backs within 2%, for both tools;
 *  - flash2 at B_c = 64, where the tiles fill D1: LL misses and write-backs still within 2%,
 *    and the table says why D1 differs.
 */

#include "config.h"

#include <cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/unit.h"

#define TMPDIR_NAME "xcheck"
#include "tests/tmpdir.h"

static cJSON *
xcheck(const char *args)
{
	char cmd[2048], path[700];
	FILE *f;
	char *text;
	long n;
	cJSON *root;
	int rc;

	snprintf(path, sizeof(path), "%s/xcheck.json", tmpdir);
	snprintf(cmd, sizeof(cmd), "%s xcheck %s --with cachegrind,callgrind --json %s >%s/out.txt",
		 MEMSIM_BIN, args, path, tmpdir);
	rc = system(cmd);
	if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
		fail_msg("memsim xcheck %s failed (%d)", args, rc);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	root = cJSON_Parse(text);
	free(text);
	assert_non_null(root);
	return root;
}

static const cJSON *
row(const cJSON *root, const char *source)
{
	const cJSON *r;

	cJSON_ArrayForEach (r, cJSON_GetObjectItem(root, "rows"))
		if (strcmp(cJSON_GetObjectItem(r, "source")->valuestring, source) == 0)
			return r;
	fail_msg("no row '%s'", source);
	return NULL;
}

/* The ratio of quantity q in row source must be within its tolerance. */
static void
within(const cJSON *root, const char *args, const char *source, const char *q)
{
	const cJSON *rt = cJSON_GetObjectItem(cJSON_GetObjectItem(row(root, source), "ratios"), q);
	double ratio, tol;

	if (!rt)
		fail_msg("%s: %s has no %s ratio", args, source, q);
	ratio = cJSON_GetObjectItem(rt, "ratio")->valuedouble;
	tol = cJSON_GetObjectItem(rt, "tolerance")->valuedouble;
	print_message("# %-28s %-11s %-10s ratio %.4f (tolerance %.0f%%)\n", args, source, q, ratio,
		      tol * 100);
	if (!cJSON_IsTrue(cJSON_GetObjectItem(rt, "within")))
		fail_msg("%s: %s %s ratio %.4f outside %.0f%%", args, source, q, ratio, tol * 100);
}

static void
check_case(const char *args, bool d1)
{
	cJSON *root = xcheck(args);

	if (d1) {
		within(root, args, "Cachegrind", "d1_misses");
		within(root, args, "Callgrind", "d1_misses");
	}
	within(root, args, "Cachegrind", "ll_misses");
	within(root, args, "Callgrind", "ll_misses");
	within(root, args, "Callgrind", "writebacks");
	within(root, args, "exact formula", "dram_bytes");
	if (!d1) {
		const cJSON *note = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "notes"), 0);

		assert_non_null(note);
		assert_non_null(strstr(note->valuestring, "fills the 32 KiB D1"));
	}
	cJSON_Delete(root);
}

static void
test_smallest_case(void **state)
{
	(void)state;
	if (!HAVE_VALGRIND || system("valgrind --version >/dev/null 2>&1") != 0)
		skip();
	check_case("--kernel naive --N 256", true);
	check_case("--kernel flash1 --N 256 --Bc 32", true);
	check_case("--kernel flash2 --N 256 --Bc 32", true);
	check_case("--kernel flash2 --N 256", false);
	/* Write-backs happen only once S outgrows the 1 MiB LL. */
	check_case("--kernel naive --N 1024", true);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smallest_case),
	};

	if (test_skip_all_if_sanitized())
		return 0;
	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
