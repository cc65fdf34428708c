/*
 * The cache model against Cachegrind on the same program and geometry: the program's accesses
 * are recorded with `valgrind --tool=lackey --trace-mem=yes` and replayed with the
 * `cachegrind` preset; `valgrind --tool=cachegrind --cache-sim=yes` runs it with the same
 * --I1/--D1/--LL given explicitly. D1 and LL data misses and I1 misses must agree.
 * Differences come only from accesses that straddle two lines: Cachegrind counts such an access
 * once (and sends both lines to LL on a D1 miss), memsim once per line.
 */

#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "measure/vgout.h"
#include "sim/spec.h"
#include "tests/unit.h"
#include "traces/replay.h"

#define TMPDIR_NAME "cg"
#include "tests/tmpdir.h"

static int
run(const char *cmd)
{
	int rc = system(cmd);

	return rc == -1 ? -1 : WEXITSTATUS(rc);
}

static void
check(const char *what, double memsim, double cg, double tol)
{
	double rel = cg ? (memsim - cg) / cg : 0;

	print_message("# %-20s memsim %10.0f  cachegrind %10.0f  diff %+.4f%% (tolerance %.1f%%)\n",
		      what, memsim, cg, 100 * rel, 100 * tol);
	if (rel > tol || rel < -tol)
		fail_msg("%s: memsim %.0f vs Cachegrind %.0f", what, memsim, cg);
}

static void
test_against_cachegrind(void **state)
{
	static const char *const names[] = { "I1mr", "ILmr", "D1mr", "D1mw", "DLmr", "DLmw" };
	uint64_t v[6];
	struct vg_counts counts;
	char cmd[2048], trace[512], cgout[512], err[512];
	struct spec spec;
	struct replay_result res;
	const struct cache_level_stats *l1, *l2, *i1;

	(void)state;
	if (!HAVE_VALGRIND || run("valgrind --version >/dev/null 2>&1") != 0)
		skip();
	snprintf(trace, sizeof(trace), "%s/lackey.txt", tmpdir);
	snprintf(cgout, sizeof(cgout), "%s/cachegrind.out", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "valgrind --tool=lackey --trace-mem=yes --log-file=%s %s >/dev/null 2>&1", trace,
		 XCHECK_PROG);
	assert_int_equal(run(cmd), 0);
	/* The cachegrind preset's geometry, passed explicitly (the auto-detected LL is wrong
	 * on these machines). */
	snprintf(cmd, sizeof(cmd),
		 "valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 "
		 "--LL=1048576,16,64 --cachegrind-out-file=%s %s >/dev/null 2>&1",
		 cgout, XCHECK_PROG);
	assert_int_equal(run(cmd), 0);
	if (vg_cachegrind_read(cgout, NULL, NULL, &counts, err, sizeof(err)))
		fail_msg("%s", err);
	for (int i = 0; i < 6; i++)
		assert_true(vg_counts_get(&counts, names[i], &v[i]));

	assert_int_equal(spec_parse("cachegrind", &spec, err, sizeof(err)), 0);
	if (replay_file(trace, TRACE_FORMAT_LACKEY, &spec, false, &res, err, sizeof(err)))
		fail_msg("%s", err);
	l1 = cache_level_stats(res.cache, 0);
	l2 = cache_level_stats(res.cache, 1);
	i1 = cache_level_stats(res.cache, 2);
	check("D1 misses", (double)(l1->read_misses + l1->write_misses), (double)(v[2] + v[3]),
	      0.005);
	check("LL data misses", (double)(l2->read_misses - l2->ifetch_misses),
	      (double)(v[4] + v[5]), 0.005);
	check("I1 misses", (double)i1->read_misses, (double)v[0], 0.03);
	check("LL instr misses", (double)l2->ifetch_misses, (double)v[1], 0.03);
	replay_result_finish(&res);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_cachegrind),
	};

	if (test_skip_all_if_sanitized())
		return 0;
	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
