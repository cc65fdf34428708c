/*
 * bench/replay_bench.c: the synthetic traces' sizes, the replays' agreement with the
 * generator fed straight into the model (what `memsim bench` checks at 50M accesses), the
 * naive trace's miss rate, and the floor's count.
 */

#include <stdio.h>

#include "bench/replay_bench.h"
#include "tests/unit.h"

#define TMPDIR_NAME "replay-bench"
#include "tests/tmpdir.h"

#define STEP 137u /* accesses of one (i, j): 64 Q, 64 K, 8 V^T loads and the store */
/* Accesses of one naive query row (N = 512, d = 64): scores, softmax, P V. */
#define NAIVE_ROW (512u * 129 + 5 * 512 + 64 * 1025)

/* Whole blocks of 64 key rows (blocked) or whole rows of 4096 (unblocked), never fewer than
 * asked for. */
static void
test_generate_counts(void **state)
{
	struct replay_sink none = { 0 };

	(void)state;
	assert_int_equal(replay_bench_generate(&none, 1, 16, REPLAY_SHAPE_BLOCKED), 64 * STEP);
	assert_int_equal(replay_bench_generate(&none, 200000, 16, REPLAY_SHAPE_BLOCKED),
			 23 * 64 * STEP);
	assert_int_equal(replay_bench_generate(&none, 1, 0, REPLAY_SHAPE_UNBLOCKED), 4096 * STEP);
	assert_int_equal(replay_bench_generate(&none, 4096 * STEP + 1, 0, REPLAY_SHAPE_UNBLOCKED),
			 2 * 4096 * STEP);
	/* naive: whole query rows */
	assert_int_equal(replay_bench_generate(&none, 1, 0, REPLAY_SHAPE_NAIVE), NAIVE_ROW);
	assert_int_equal(replay_bench_generate(&none, 3 * NAIVE_ROW, 0, REPLAY_SHAPE_NAIVE),
			 3 * NAIVE_ROW);
	assert_int_equal(replay_bench_generate(&none, 3 * NAIVE_ROW + 1, 0, REPLAY_SHAPE_NAIVE),
			 4 * NAIVE_ROW);
}

/* The shapes' names both ways; anything else refused. */
static void
test_shape_names(void **state)
{
	enum replay_shape sh;

	(void)state;
	assert_true(replay_shape_parse("naive", &sh));
	assert_int_equal(sh, REPLAY_SHAPE_NAIVE);
	assert_string_equal(replay_shape_name(sh), "naive");
	assert_true(replay_shape_parse("unblocked", &sh));
	assert_string_equal(replay_shape_name(sh), "unblocked");
	assert_false(replay_shape_parse("Naive", &sh));
	assert_false(replay_shape_parse("", &sh));
}

/* The accesses written to both files and replayed count what the direct run counted. */
static void
test_replays_match_direct(void **state)
{
	struct replay_timing direct = { .name = "direct" }, mt = { .name = "mt" },
			     din = { .name = "din" };
	struct cache *model = NULL, *from_mt = NULL, *from_din = NULL;
	struct replay_sink files = { 0 };
	struct spec spec;
	char err[512], mt_path[600], din_path[600];

	(void)state;
	assert_int_equal(spec_parse("L1=4K:4:64,L2=64K:8:64", &spec, err, sizeof(err)), 0);
	assert_int_equal(
		replay_bench_direct(&spec.cache, 30000, 0, REPLAY_SHAPE_BLOCKED, &direct, &model),
		0);
	assert_int_equal(direct.accesses, 4 * 64 * STEP);
	snprintf(mt_path, sizeof(mt_path), "%s/t.mtr", tmpdir);
	snprintf(din_path, sizeof(din_path), "%s/t.din", tmpdir);
	files.mt = mtrace_writer_open(mt_path, "test", err, sizeof(err));
	assert_non_null(files.mt);
	files.din = fopen(din_path, "w");
	assert_non_null(files.din);
	assert_int_equal(replay_bench_generate(&files, 30000, 0, REPLAY_SHAPE_BLOCKED),
			 direct.accesses);
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
	/* The din file read without the model, and its bytes alone. */
	assert_int_equal(replay_bench_floor(din_path, TRACE_FORMAT_DIN, 1, &din, err, sizeof(err)),
			 0);
	assert_int_equal(din.accesses, direct.accesses);
	assert_int_equal(replay_bench_raw_read(din_path, 2, &din, err, sizeof(err)), 0);
	assert_true(din.best > 0 && din.best <= din.worst);
	cache_destroy(model);
	cache_destroy(from_mt);
	cache_destroy(from_din);
}

/* A file that is not there: an error, no model. */
static void
test_replay_missing_file(void **state)
{
	struct replay_timing t = { .name = "x" };
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
	err[0] = '\0';
	assert_int_equal(replay_bench_floor(path, TRACE_FORMAT_DIN, 1, &t, err, sizeof(err)), -1);
	assert_true(err[0] != '\0');
	err[0] = '\0';
	assert_int_equal(replay_bench_raw_read(path, 1, &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "absent.din"));
}

/* The naive trace on the default cache: a quarter of its accesses miss L1 (every V access
 * down a column), its file replays to the direct run's counters, per array and phase too, and
 * the floor reads the same number of accesses. */
static void
test_naive_trace(void **state)
{
	struct replay_timing direct = { .name = "direct" }, mt = { .name = "mt" },
			     floor = { .name = "floor" };
	struct cache *model = NULL, *from_mt = NULL;
	struct replay_sink files = { 0 };
	const struct cache_level_stats *l1;
	struct spec spec;
	char err[512], path[600];
	double rate;

	(void)state;
	assert_int_equal(spec_parse("L1=32K:8:64,L2=1M:16:64", &spec, err, sizeof(err)), 0);
	assert_int_equal(replay_bench_direct(&spec.cache, 40 * NAIVE_ROW, 0, REPLAY_SHAPE_NAIVE,
					     &direct, &model),
			 0);
	assert_int_equal(direct.accesses, 40 * NAIVE_ROW);
	l1 = cache_level_stats(model, 0);
	rate = (double)(l1->read_misses + l1->write_misses) / (double)direct.accesses;
	if (rate < 0.22 || rate > 0.30)
		fail_msg("naive trace: L1 miss rate %.4f, not about a quarter", rate);
	snprintf(path, sizeof(path), "%s/naive.mtr", tmpdir);
	files.mt = mtrace_writer_open(path, "test", err, sizeof(err));
	assert_non_null(files.mt);
	assert_int_equal(replay_bench_generate(&files, 40 * NAIVE_ROW, 0, REPLAY_SHAPE_NAIVE),
			 direct.accesses);
	assert_int_equal(mtrace_writer_close(files.mt, err, sizeof(err)), 0);
	assert_int_equal(replay_bench_time(path, TRACE_FORMAT_MEMSIM, &spec, 1, &mt, &from_mt, err,
					   sizeof(err)),
			 0);
	assert_int_equal(mt.accesses, direct.accesses);
	assert_true(replay_bench_same_counters(model, from_mt));
	/* Q, K, V, S, O and "other"; the unnamed phase, scores, softmax, pv and flush */
	assert_int_equal(cache_array_count(from_mt), 6);
	assert_int_equal(cache_phase_count(from_mt), cache_phase_count(model));
	assert_string_equal(cache_phase_name(from_mt, 3), "pv");
	for (unsigned p = 0; p < cache_phase_count(model); p++)
		for (unsigned a = 0; a < 6; a++)
			assert_memory_equal(cache_phase_array_traffic(model, p, a),
					    cache_phase_array_traffic(from_mt, p, a),
					    sizeof(struct cache_traffic));
	assert_true(cache_phase_array_traffic(model, 3, 3)->read_bytes > 0); /* V during pv */
	assert_int_equal(replay_bench_floor(path, TRACE_FORMAT_MEMSIM, 2, &floor, err, sizeof(err)),
			 0);
	assert_int_equal(floor.accesses, direct.accesses);
	assert_true(floor.best <= floor.worst);
	cache_destroy(model);
	cache_destroy(from_mt);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generate_counts),
		cmocka_unit_test(test_replays_match_direct),
		cmocka_unit_test(test_replay_missing_file),
		cmocka_unit_test(test_shape_names),
		cmocka_unit_test(test_naive_trace),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
