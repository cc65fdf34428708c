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
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/proc.h"
#include "tests/slurp.h"
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

/* The row of source under model. */
static const cJSON *
row_of(const cJSON *root, const char *source, const char *model)
{
	const cJSON *r;

	cJSON_ArrayForEach (r, cJSON_GetObjectItem(root, "rows"))
		if (strcmp(cJSON_GetObjectItem(r, "source")->valuestring, source) == 0 &&
		    strcmp(cJSON_GetObjectItem(r, "model")->valuestring, model) == 0)
			return r;
	fail_msg("no row '%s' under '%s'", source, model);
	return NULL;
}

/* Quantity q of a tool (Cachegrind or Callgrind) against memsim's under the same model, within
 * limit: the ratio computed here from the two counts, not read from memsim's verdict. Both
 * must have counted something, unless both say zero. */
static void
tool_within(const cJSON *root, const char *args, const char *tool, const char *q, double limit)
{
	char model[64];
	double t, m;

	snprintf(model, sizeof(model), "%s's", tool);
	t = cJSON_GetNumberValue(cJSON_GetObjectItem(row_of(root, tool, model), q));
	m = cJSON_GetNumberValue(cJSON_GetObjectItem(row_of(root, "memsim", model), q));
	if (isnan(t) || isnan(m) || t < 0 || m < 0)
		fail_msg("%s: %s or memsim has no %s", args, tool, q);
	print_message("# %-28s %-11s %-10s %10.0f vs memsim %10.0f (limit %.0f%%)\n", args, tool, q,
		      t, m, limit * 100);
	if (t == 0 && m == 0)
		return;
	if (m == 0 || fabs(t / m - 1) > limit)
		fail_msg("%s: %s %s %.0f vs memsim %.0f: outside %.0f%%", args, tool, q, t, m,
			 limit * 100);
}

/* The exact formula's DRAM bytes against memsim's, within limit. */
static void
formula_within(const cJSON *root, const char *args, double limit)
{
	const cJSON *r = row_of(root, "exact formula", "LL fully assoc. LRU");
	double ratio = cJSON_GetNumberValue(cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(r, "ratios"), "dram_bytes"), "ratio"));

	print_message("# %-28s exact formula / memsim %.4f (limit %.0f%%)\n", args, ratio,
		      limit * 100);
	if (isnan(ratio) || fabs(ratio - 1) > limit)
		fail_msg("%s: exact formula / memsim %.4f outside %.0f%%", args, ratio,
			 limit * 100);
}

static void
check_case(const char *args, bool d1)
{
	cJSON *root = xcheck(args);

	if (d1) {
		tool_within(root, args, "Cachegrind", "d1_misses", 0.05);
		tool_within(root, args, "Callgrind", "d1_misses", 0.05);
	}
	tool_within(root, args, "Cachegrind", "ll_misses", 0.02);
	tool_within(root, args, "Callgrind", "ll_misses", 0.02);
	tool_within(root, args, "Callgrind", "writebacks", 0.02);
	formula_within(root, args, 0.05);
	if (!d1) {
		const cJSON *note = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "notes"), 0);

		assert_non_null(note);
		assert_non_null(strstr(note->valuestring, "fills the 32 KiB D1"));
	}
	if (strstr(args, "--N 1024"))
		assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(
				    row_of(root, "Callgrind", "Callgrind's"), "writebacks")) > 0);
	cJSON_Delete(root);
}

static void
test_smallest_case(void **state)
{
	(void)state;
	check_case("--kernel naive --N 256", true);
	check_case("--kernel flash1 --N 256 --Bc 32", true);
	check_case("--kernel flash2 --N 256 --Bc 32", true);
	check_case("--kernel flash2 --N 256", false);
	/* Write-backs happen only once S outgrows the 1 MiB LL. */
	check_case("--kernel naive --N 1024", true);
}

/* xcheck interrupted (SIGINT) while Cachegrind runs: valgrind is stopped with it, not left
 * running, and the temporary directory is removed; exit 1 with one line saying so. */
static void
test_interrupted(void **state)
{
	char dir[700], err[700], line[1600];
	pid_t m, vg = 0;
	char *text;
	int status;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/xt", tmpdir);
	snprintf(err, sizeof(err), "%s/xt.err", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	fflush(NULL);
	m = fork();
	assert_true(m >= 0);
	if (m == 0) {
		/* The private TMPDIR: anything xcheck or valgrind leaves shows there. */
		setenv("TMPDIR", dir, 1);
		if (!freopen("/dev/null", "w", stdout) || !freopen(err, "w", stderr))
			_exit(99);
		execl(MEMSIM_BIN, "memsim", "xcheck", "--kernel", "naive", "--N", "1024", "--with",
		      "cachegrind", (char *)NULL);
		_exit(98);
	}
	for (int i = 0; i < 2000 && !(vg = proc_child_of(m)); i++)
		sleep_ms(10);
	assert_true(vg > 0);
	sleep_ms(500); /* valgrind under way */
	assert_true(proc_running(vg));
	kill(m, SIGINT);
	assert_int_equal(waitpid(m, &status, 0), m);
	text = slurp(err, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 ||
	    !strstr(text, "xcheck: interrupted by signal 2: removed "))
		fail_msg("xcheck interrupted: status %d, stderr '%s'", status, text);
	free(text);
	for (int i = 0; i < 100 && proc_running(vg); i++)
		sleep_ms(10);
	if (proc_running(vg)) {
		kill(vg, SIGKILL);
		fail_msg("valgrind (pid %ld) was left running", (long)vg);
	}
	snprintf(line, sizeof(line), "test -z \"$(ls -A '%s')\"", dir);
	if (system(line) != 0)
		fail_msg("xcheck left files in its TMPDIR %s", dir);
}

int
main(void)
{
	struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smallest_case),
		cmocka_unit_test(test_interrupted),
	};
	size_t n = sizeof(tests) / sizeof(tests[0]);

	if (test_skip_all_if_sanitized())
		return 0;
	/* Every case runs valgrind: without it the plan is empty, a skip. */
	if (!HAVE_VALGRIND || !test_can_run("valgrind --version")) {
		test_leave_out(tests, &n, test_smallest_case, "valgrind is not installed");
		test_leave_out(tests, &n, test_interrupted, "valgrind is not installed");
	}
	return test_run_planned(tests, n, tmpdir_setup, tmpdir_teardown);
}
