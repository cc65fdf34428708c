/*
 * The cache model against Cachegrind on the same program and geometry: the program's accesses
 * are recorded with `valgrind --tool=lackey --trace-mem=yes` and replayed with the
 * `cachegrind` preset; `valgrind --tool=cachegrind --cache-sim=yes` runs it with the same
 * --I1/--D1/--LL given explicitly. D1 and LL data misses and I1 misses must agree.
 * The cachegrind preset counts an access over two lines as Cachegrind does (straddle=once);
 * a program of random unaligned loads and stores, where many accesses span two missing lines,
 * checks that rule: per line the misses differ by several percent, once they agree within
 * 0.5%.
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

static double
d1_misses(struct cache *c)
{
	const struct cache_level_stats *l1 = cache_level_stats(c, 0);

	return (double)(l1->read_misses + l1->write_misses);
}

static double
ll_data_misses(struct cache *c)
{
	const struct cache_level_stats *l2 = cache_level_stats(c, 1);

	return (double)(l2->read_misses - l2->ifetch_misses);
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

/* The straddle program: D1 and LL data misses of a lackey replay under the cachegrind preset
 * (straddle=once) against Cachegrind's, within 0.5%; the same replay counting per line must
 * differ by more than 2% (the trace really is full of accesses over two lines). */
static void
test_straddles(void **state)
{
	uint64_t v[6];
	static const char *const names[] = { "I1mr", "ILmr", "D1mr", "D1mw", "DLmr", "DLmw" };
	struct vg_counts counts;
	char cmd[2048], trace[512], cgout[512], err[512];
	struct spec once, per_line;
	struct replay_result a, b;
	double cg_d1, cg_ll;

	(void)state;
	snprintf(trace, sizeof(trace), "%s/straddle.lackey", tmpdir);
	snprintf(cgout, sizeof(cgout), "%s/straddle.cg", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "valgrind --tool=lackey --trace-mem=yes --log-file=%s %s >/dev/null 2>&1", trace,
		 STRADDLE_PROG);
	assert_int_equal(run(cmd), 0);
	snprintf(cmd, sizeof(cmd),
		 "valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 "
		 "--LL=1048576,16,64 --cachegrind-out-file=%s %s >/dev/null 2>&1",
		 cgout, STRADDLE_PROG);
	assert_int_equal(run(cmd), 0);
	if (vg_cachegrind_read(cgout, NULL, NULL, &counts, err, sizeof(err)))
		fail_msg("%s", err);
	for (int i = 0; i < 6; i++)
		assert_true(vg_counts_get(&counts, names[i], &v[i]));
	cg_d1 = (double)(v[2] + v[3]);
	cg_ll = (double)(v[4] + v[5]);
	assert_int_equal(spec_parse("cachegrind", &once, err, sizeof(err)), 0);
	assert_int_equal(spec_parse("I1=32K:8:64,L1=32K:8:64,L2=1M:16:64:quietwb", &per_line, err,
				    sizeof(err)),
			 0);
	if (replay_file(trace, TRACE_FORMAT_LACKEY, &once, false, &a, err, sizeof(err)) ||
	    replay_file(trace, TRACE_FORMAT_LACKEY, &per_line, false, &b, err, sizeof(err)))
		fail_msg("%s", err);
	check("straddle=once D1", d1_misses(a.cache), cg_d1, 0.005);
	check("straddle=once LL data", ll_data_misses(a.cache), cg_ll, 0.005);
	print_message("# per line: D1 %+.2f%%, LL data %+.2f%% against Cachegrind\n",
		      100 * (d1_misses(b.cache) / cg_d1 - 1),
		      100 * (ll_data_misses(b.cache) / cg_ll - 1));
	assert_true(d1_misses(b.cache) > cg_d1 * 1.02);
	replay_result_finish(&a);
	replay_result_finish(&b);
}

int
main(void)
{
	struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_cachegrind),
		cmocka_unit_test(test_straddles),
	};
	size_t n = sizeof(tests) / sizeof(tests[0]);

	if (test_skip_all_if_sanitized())
		return 0;
	/* Every case runs valgrind: without it the plan is empty, a skip. */
	if (!HAVE_VALGRIND || !test_can_run("valgrind --version")) {
		test_leave_out(tests, &n, test_against_cachegrind, "valgrind is not installed");
		test_leave_out(tests, &n, test_straddles, "valgrind is not installed");
	}
	return test_run_planned(tests, n, tmpdir_setup, tmpdir_teardown);
}
