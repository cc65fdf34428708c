/*
 * The public API's recording (api/trace_api.c, issue 19 item 4): a trace made with
 * memsim_trace_create(h, path) counts into h and records every access; the recording replayed
 * under h's cache gives h's counters, counter for counter, per array and per phase, with tiles
 * in memory and in scratch. A path that cannot be created gets NULL and a message.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit.h"

#define MEMSIM_NO_TR_MACROS
#include "memsim/memsim.h"

#include "api/api.h"
#include "tests/counters.h"
#include "traces/replay.h"

#define TMPDIR_NAME "api-record"
#include "tests/tmpdir.h"

/* A small tiled kernel: rows of x through a tile into y, with strided reads that miss. */
static void
small_kernel(struct memsim_trace *t, float *x, float *tile, float *y, unsigned n)
{
	assert_int_equal(memsim_array(t, "x", x, n * sizeof(float), MEMSIM_SPACE_DRAM), 0);
	assert_int_equal(memsim_array(t, "tile", tile, 64 * sizeof(float), MEMSIM_SPACE_TILE), 0);
	assert_int_equal(memsim_array(t, "y", y, n * sizeof(float), MEMSIM_SPACE_DRAM), 0);
	for (unsigned r = 0; r < n / 64; r++) {
		assert_int_equal(memsim_phase(t, "load"), 0);
		for (unsigned k = 0; k < 64; k++) {
			memsim_load(t, &x[r * 64 + k], sizeof(float));
			memsim_store(t, &tile[k], sizeof(float));
		}
		assert_int_equal(memsim_phase(t, "store"), 0);
		for (unsigned k = 0; k < 64; k++) {
			memsim_load(t, &tile[(k * 7) % 64], sizeof(float));
			memsim_load(t, &x[(k * 17 + r) % n], sizeof(float));
			memsim_store(t, &y[r * 64 + k], sizeof(float));
		}
	}
	memsim_load(t, y, n * sizeof(float)); /* a span */
}

static void
record_and_replay(const char *spec)
{
	enum { N = 4096 };
	float *x = calloc(N, sizeof(float)), *y = calloc(N, sizeof(float)), tile[64];
	struct memsim_hierarchy *h;
	struct memsim_trace *t;
	struct replay_result res;
	char err[512], path[600];

	assert_non_null(x);
	assert_non_null(y);
	snprintf(path, sizeof(path), "%s/api.mt", tmpdir);
	h = memsim_hierarchy_create(spec, err, sizeof(err));
	assert_non_null(h);
	t = memsim_trace_create(h, path, err, sizeof(err));
	assert_non_null(t);
	small_kernel(t, x, tile, y, N);
	assert_int_equal(memsim_trace_finish(t, err, sizeof(err)), 0);
	memsim_trace_destroy(t);
	if (replay_file(path, TRACE_FORMAT_MEMSIM, &h->spec, true, &res, err, sizeof(err)))
		fail_msg("replay: %s", err);
	assert_string_equal(res.recorded_command, "libmemsim");
	assert_int_equal(cache_array_count(res.cache), cache_array_count(h->cache));
	assert_true(cache_array_count(res.cache) >= 3);
	assert_true(same_counters(h->cache, res.cache));
	replay_result_finish(&res);
	memsim_hierarchy_destroy(h);
	free(x);
	free(y);
}

static void
test_api_record_replay(void **state)
{
	(void)state;
	record_and_replay("L1=1K:2:64,L2=4K:4:64");
	record_and_replay("L1=1K:4:64:fifo,tiles=scratch");
	record_and_replay("L1=2K:full:128:lru:wb:wv");
}

static void
test_api_record_unwritable(void **state)
{
	struct memsim_trace *t;
	char err[512];

	(void)state;
	t = memsim_trace_create(NULL, tmpdir, err, sizeof(err));
	assert_null(t);
	assert_non_null(strstr(err, "Is a directory"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api_record_replay),
		cmocka_unit_test(test_api_record_unwritable),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
