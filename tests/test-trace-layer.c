/*
 * The tracing layer: the native build of a kernel computes the same result with no context at
 * all; the traced build gives the same counters live (with same-line merging), unmerged
 * (one cache_access per element, written out by hand here), and recorded then replayed.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/replay.h"
#include "sim/spec.h"
#include "sim/trace.h"
#include "tests/trace-kernel.h"
#include "tests/unit.h"

#define N 24

static float a[N * N], b[N * N], c_native[N * N], c_traced[N * N], tile[N];

static struct cache *
make(const char *text, bool *tiles_scratch)
{
	struct spec s;
	char err[256];

	assert_int_equal(spec_parse(text, &s, err, sizeof(err)), 0);
	if (tiles_scratch)
		*tiles_scratch = s.tiles_in_scratch;
	return cache_create(&s.cache);
}

static void
fill(void)
{
	for (int i = 0; i < N * N; i++) {
		a[i] = (float)((i * 7) % 13) - 6.0f;
		b[i] = (float)((i * 5) % 11) - 5.0f;
	}
}

static bool
same(struct cache *x, struct cache *y)
{
	for (unsigned i = 0; i < cache_level_count(x); i++)
		if (memcmp(cache_level_stats(x, i), cache_level_stats(y, i),
			   sizeof(struct cache_level_stats))) {
			const uint64_t *p = (const uint64_t *)cache_level_stats(x, i);
			const uint64_t *q = (const uint64_t *)cache_level_stats(y, i);

			for (size_t k = 0; k < sizeof(struct cache_level_stats) / 8; k++)
				if (p[k] != q[k])
					print_message("level %u field %zu: %llu vs %llu\n", i, k,
						      (unsigned long long)p[k],
						      (unsigned long long)q[k]);
			return false;
		}
	if (memcmp(cache_dram(x), cache_dram(y), sizeof(struct cache_traffic)) ||
	    memcmp(cache_cpu(x), cache_cpu(y), sizeof(struct cache_cpu_stats)) ||
	    cache_array_count(x) != cache_array_count(y) ||
	    cache_phase_count(x) != cache_phase_count(y))
		return false;
	for (unsigned i = 0; i < cache_array_count(x); i++)
		if (memcmp(cache_array_traffic(x, i), cache_array_traffic(y, i),
			   sizeof(struct cache_traffic)))
			return false;
	for (unsigned p = 0; p < cache_phase_count(x); p++)
		if (memcmp(cache_phase_traffic(x, p), cache_phase_traffic(y, p),
			   sizeof(struct cache_traffic)))
			return false;
	return true;
}

static void
test_native_matches_traced(void **state)
{
	struct cache *c = make("L1=1K:2:64,L2=8K:4:64", NULL);
	struct trace_ctx *t = trace_ctx_create(c, NULL, 0);

	(void)state;
	fill();
	tk_matmul_native(NULL, a, b, c_native, tile, N); /* no context: nothing is traced */
	tk_matmul_traced(t, a, b, c_traced, tile, N);
	trace_ctx_destroy(t);
	assert_memory_equal(c_native, c_traced, sizeof(c_native));
	assert_true(cache_cpu(c)->ops[CACHE_OP_LOAD] > 0);
	cache_destroy(c);
}

/* The same accesses, one cache_access() each, in the kernel's order. */
static void
by_hand(struct cache *c, bool tiles_scratch)
{
	uint64_t A = (uintptr_t)a, B = (uintptr_t)b, C = (uintptr_t)c_traced, T = (uintptr_t)tile;
	int mm, wo;

	cache_add_array(c, "A", A, sizeof(a), false);
	cache_add_array(c, "B", B, sizeof(b), false);
	cache_add_array(c, "C", C, sizeof(c_traced), false);
	cache_add_array(c, "tile", T, sizeof(tile), tiles_scratch);
	mm = cache_add_phase(c, "matmul");
	wo = cache_add_phase(c, "writeout");
	cache_set_phase(c, mm);
	for (uint64_t i = 0; i < N; i++) {
		for (uint64_t j = 0; j < N; j++)
			cache_access(c, T + 4 * j, 4, CACHE_OP_STORE, 1);
		for (uint64_t k = 0; k < N; k++) {
			cache_access(c, A + 4 * (i * N + k), 4, CACHE_OP_LOAD, 1);
			for (uint64_t j = 0; j < N; j++) {
				cache_access(c, B + 4 * (k * N + j), 4, CACHE_OP_LOAD, 1);
				cache_access(c, T + 4 * j, 4, CACHE_OP_LOAD, 1);
				cache_access(c, T + 4 * j, 4, CACHE_OP_STORE, 1);
			}
		}
		cache_set_phase(c, wo);
		cache_access(c, T, 4 * N, CACHE_OP_LOAD, 1);
		cache_access(c, C + 4 * i * N, 4 * N, CACHE_OP_STORE, 1);
		cache_set_phase(c, mm);
	}
}

static void
test_live_equals_by_hand(void **state)
{
	static const char *specs[] = { "L1=1K:2:64,L2=8K:4:64",
				       "L1=512B:4:32:plru,L2=4K:4:64:incl",
				       "L1=1K:2:64:wt:nwa,L2=8K:4:64",
				       "L1=1K:2:64:wv",
				       "L1=1K:2:64,tiles=scratch",
				       "lab",
				       NULL };

	(void)state;
	fill();
	for (int s = 0; specs[s]; s++) {
		bool ts;
		struct cache *live = make(specs[s], &ts), *hand = make(specs[s], NULL);
		struct trace_ctx *t = trace_ctx_create(live, NULL, ts);

		tk_matmul_traced(t, a, b, c_traced, tile, N);
		trace_ctx_destroy(t);
		by_hand(hand, ts);
		cache_flush(live);
		cache_flush(hand);
		if (!same(live, hand))
			fail_msg("%s: merged live tracing differs from one access at a time",
				 specs[s]);
		if (ts)
			assert_true(cache_cpu(live)->scratch_read_bytes > 0);
		cache_destroy(live);
		cache_destroy(hand);
	}
}

static void
test_record_replay(void **state)
{
	char path[] = "/tmp/memsim-test-trace-XXXXXX";
	int fd = mkstemp(path);
	char err[256];
	struct mtrace_writer *w;
	struct trace_ctx *t;
	struct cache *live;
	struct spec spec;
	struct replay_result res;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	fill();
	assert_int_equal(spec_parse("L1=1K:2:64,L2=8K:4:64,tiles=scratch", &spec, err, sizeof(err)),
			 0);
	live = cache_create(&spec.cache);
	w = mtrace_writer_open(path, "test-trace-layer", err, sizeof(err));
	assert_non_null(w);
	/* Recording and simulating at once: the recorded stream is unmerged. */
	t = trace_ctx_create(live, w, 1);
	tk_matmul_traced(t, a, b, c_traced, tile, N);
	trace_ctx_destroy(t);
	assert_int_equal(mtrace_writer_close(w, err, sizeof(err)), 0);
	assert_int_equal(
		replay_file(path, TRACE_FORMAT_MEMSIM, &spec, true, &res, err, sizeof(err)), 0);
	cache_flush(live);
	assert_true(same(live, res.cache));
	replay_result_finish(&res);
	cache_destroy(live);
	unlink(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native_matches_traced),
		cmocka_unit_test(test_live_equals_by_hand),
		cmocka_unit_test(test_record_replay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
