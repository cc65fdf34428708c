/*
 * measure/replay_bench.c: the synthetic trace's size and the replays' agreement with the
 * generator fed straight into the model (what `memsim bench` checks at 50M accesses).
 */

#include <stdio.h>

#include "measure/replay_bench.h"
#include "tests/unit.h"

#define TMPDIR_NAME "replay-bench"
#include "tests/tmpdir.h"

#define STEP 137u /* accesses of one (i, j): 64 Q, 64 K, 8 V^T loads and the store */

/* Whole blocks of 64 key rows (blocked) or whole rows of 4096 (unblocked), never fewer than
 * asked for. */
static void
test_generate_counts(void **state)
{
	struct replay_sink none = { 0 };

	(void)state;
	assert_int_equal(replay_bench_generate(&none, 1, 16, true), 64 * STEP);
	assert_int_equal(replay_bench_generate(&none, 200000, 16, true), 23 * 64 * STEP);
	assert_int_equal(replay_bench_generate(&none, 1, 0, false), 4096 * STEP);
	assert_int_equal(replay_bench_generate(&none, 4096 * STEP + 1, 0, false), 2 * 4096 * STEP);
}

/* The accesses written to both files and replayed count what the direct run counted. */
static void
test_replays_match_direct(void **state)
{
	struct replay_timing direct = { "direct", 0, 0, 0, 0 }, mt = { "mt", 0, 0, 0, 0 },
			     din = { "din", 0, 0, 0, 0 };
	struct cache *model = NULL, *from_mt = NULL, *from_din = NULL;
	struct replay_sink files = { 0 };
	struct spec spec;
	char err[512], mt_path[600], din_path[600];

	(void)state;
	assert_int_equal(spec_parse("L1=4K:4:64,L2=64K:8:64", &spec, err, sizeof(err)), 0);
	assert_int_equal(replay_bench_direct(&spec.cache, 30000, 0, true, &direct, &model), 0);
	assert_int_equal(direct.accesses, 4 * 64 * STEP);
	snprintf(mt_path, sizeof(mt_path), "%s/t.mtr", tmpdir);
	snprintf(din_path, sizeof(din_path), "%s/t.din", tmpdir);
	files.mt = mtrace_writer_open(mt_path, "test", err, sizeof(err));
	assert_non_null(files.mt);
	files.din = fopen(din_path, "w");
	assert_non_null(files.din);
	assert_int_equal(replay_bench_generate(&files, 30000, 0, true), direct.accesses);
	assert_int_equal(mtrace_writer_close(files.mt, err, sizeof(err)), 0);
	assert_int_equal(fclose(files.din), 0);
	assert_true(replay_bench_file_size(mt_path) > 0);
	assert_true(replay_bench_file_size(din_path) > replay_bench_file_size(mt_path));
	assert_int_equal(replay_bench_time(mt_path, TRACE_FORMAT_MEMSIM, &spec, 2, &mt, &from_mt,
					   err, sizeof(err)),
			 0);
	assert_int_equal(replay_bench_time(din_path, TRACE_FORMAT_DIN, &spec, 1, &din, &from_din,
					   err, sizeof(err)),
			 0);
	assert_int_equal(mt.accesses, direct.accesses);
	assert_int_equal(din.accesses, direct.accesses);
	assert_true(mt.best <= mt.worst);
	assert_true(cache_level_stats(model, 0)->read_misses > 0);
	assert_true(replay_bench_same_counters(model, from_mt));
	assert_true(replay_bench_same_counters(model, from_din));
	cache_destroy(model);
	cache_destroy(from_mt);
	cache_destroy(from_din);
}

/* A file that is not there: an error, no model. */
static void
test_replay_missing_file(void **state)
{
	struct replay_timing t = { "x", 0, 0, 0, 0 };
	struct cache *c = NULL;
	struct spec spec;
	char err[512], path[600];

	(void)state;
	assert_int_equal(spec_parse("L1=4K:4:64", &spec, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/absent.din", tmpdir);
	assert_int_equal(
		replay_bench_time(path, TRACE_FORMAT_DIN, &spec, 1, &t, &c, err, sizeof(err)), -1);
	assert_null(c);
	assert_true(err[0] != '\0');
	assert_int_equal(replay_bench_file_size(path), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generate_counts),
		cmocka_unit_test(test_replays_match_direct),
		cmocka_unit_test(test_replay_missing_file),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
