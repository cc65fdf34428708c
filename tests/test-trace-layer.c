/*
 * The tracing layer: the native build of a kernel computes the same result with no context at
 * all; the traced build gives the same counters live (with same-line merging), unmerged
 * (one cache_access per element, written out by hand here), and recorded then replayed.
 */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/spec.h"
#include "sim/trace.h"
#include "tests/trace-kernel.h"
#include "tests/unit.h"
#include "traces/mtrace.h"
#include "traces/replay.h"

#define N 24

static float a[N * N], b[N * N], c_native[N * N], c_traced[N * N], tile[N];

/* A model of spec text; "SPEC@K" samples 1 set in K. */
static struct cache *
make(const char *text, bool *tiles_scratch)
{
	struct spec s;
	char err[256], spec[256];
	const char *at = strchr(text, '@');

	snprintf(spec, sizeof(spec), "%.*s", at ? (int)(at - text) : (int)strlen(text), text);
	assert_int_equal(spec_parse(spec, &s, err, sizeof(err)), 0);
	if (at)
		s.cache.sample_sets = (uint32_t)strtoul(at + 1, NULL, 10);
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

/*
 * TR_ZIP against touching every element in the loop's order, on caches small enough to evict
 * all the time: the loops of the kernels' helpers (dot: two loads; axpy: load, load, store; an
 * fp16 row into a tile; a tile row stored as fp16), every row length from 1 to 130 elements,
 * rows at every offset in their lines. Every counter must be equal on every cache: TR_ZIP
 * reports each element, and skips work only where the skipped accesses are hits that change
 * nothing. The 32-byte lines of 8 ways are those where it once reported a line at a time
 * (a replay then differed from the live run: model revision 1, docs/schema.md).
 */
static void
test_zip_equals_elements(void **state)
{
	static const char *const caches[] = {
		"L1=2K:4:64,L2=8K:8:64",
		"L1=2048B:8:32",
		"L1=512B:4:32:fifo",
		"L1=4K:8:64:wt",
		"L1=2K:4:64:fifo,L2=8K:8:64:incl",
		"L1=4K:8:64:wv",
		"L1=1K:16:32:wv,L2=8K:8:32:excl",
		"L1=4K:8:64:random",
		"L1=1K:2:64,L2=4K:4:64",
		"L1=512:1:64",
		"L1=2K:4:64:plru,L2=8K:8:64:fifo",
		"L1=1K:2:32:wt:nwa",
		"L1=2K:8:32:nwa",
		"L1=4K:full:64",
		"L1=4K:64:64", /* the same cache spelled with its ways */
		/* sampled: the repeats of a set sampling leaves out are dropped, the others
		 * looked at as unsampled */
		"L1=2K:4:64,L2=8K:8:64@2",
		"L1=4K:8:64:plru@2",
		"L1=2K:8:32:nwa,L2=8K:4:64:wv@2",
		"L1=4K:4:256:plru,L2=16K:1:256@2",
	};
	static float x[64 * 130 + 16] __attribute__((aligned(64))),
		y[64 * 130 + 16] __attribute__((aligned(64)));
	static uint16_t h[64 * 130 + 32] __attribute__((aligned(64)));

	(void)state;
	for (size_t sp = 0; sp < sizeof(caches) / sizeof(caches[0]); sp++) {
		for (uint64_t n = 1; n <= 130; n++) {
			struct cache *cz = make(caches[sp], NULL), *ce = make(caches[sp], NULL);
			struct trace_ctx *tz = trace_ctx_create(cz, NULL, 0);
			struct trace_ctx *te = trace_ctx_create(ce, NULL, 0);
			uint64_t shift = n % 5; /* rows that start inside a line */

			for (uint64_t r = 0; r < 64; r++) {
				float *xr = x + shift + r * n, *yr = y + ((r * 7) % 64) * n;
				uint16_t *hr = h + 3 * shift + ((r * 13) % 64) * n;

				TR_ZIP(tz, n, TR_IN(xr), TR_IN(yr));
				TR_ZIP(tz, n, TR_IN(yr), TR_IN(xr), TR_OUT(yr));
				TR_ZIP(tz, n, TR_IN_N(hr, 2), TR_OUT(xr));
				TR_ZIP(tz, n, TR_IN(xr), TR_OUT_N(hr, 2));
				for (uint64_t k = 0; k < n; k++) {
					TR_LOAD_ELEM(te, &xr[k]);
					TR_LOAD_ELEM(te, &yr[k]);
				}
				for (uint64_t k = 0; k < n; k++) {
					TR_LOAD_ELEM(te, &yr[k]);
					TR_LOAD_ELEM(te, &xr[k]);
					TR_STORE_ELEM(te, &yr[k]);
				}
				for (uint64_t k = 0; k < n; k++) {
					TR_LOAD_ELEM(te, &hr[k]);
					TR_STORE_ELEM(te, &xr[k]);
				}
				for (uint64_t k = 0; k < n; k++) {
					TR_LOAD_ELEM(te, &xr[k]);
					TR_STORE_ELEM(te, &hr[k]);
				}
			}
			trace_ctx_destroy(tz);
			trace_ctx_destroy(te);
			cache_flush(cz);
			cache_flush(ce);
			if (!same(cz, ce))
				fail_msg("%s, rows of %llu: TR_ZIP differs from its elements",
					 caches[sp], (unsigned long long)n);
			cache_destroy(cz);
			cache_destroy(ce);
		}
	}
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
	struct trace_sink sink;
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
	sink = mtrace_writer_sink(w);
	t = trace_ctx_create(live, &sink, 1);
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

/* Phases are found again by name (cut to CACHE_NAME_MAX - 1 bytes, as the model keeps them)
 * and capped at CACHE_MAX_PHASES: the next declaration fails, the current phase stays. */
static void
test_phases(void **state)
{
	struct spec spec;
	char err[256], name[64];
	struct cache *c;
	struct trace_ctx *t;
	static float x[16];

	(void)state;
	assert_int_equal(spec_parse("L1=1K:2:64", &spec, err, sizeof(err)), 0);
	c = cache_create(&spec.cache);
	t = trace_ctx_create(c, NULL, 0);
	for (int i = 0; i < CACHE_MAX_PHASES; i++) {
		snprintf(name, sizeof(name),
			 "%d: a phase whose name is longer than the model keeps", i);
		assert_int_equal(trace_phase(t, i == 7 ? "seven" : name), 0);
	}
	assert_int_equal(trace_phase(t, "one more"), -ENOSPC);
	assert_int_equal(trace_phase(t, "seven"), 0);
	TR_LOAD(t, &x[0], 4);
	trace_flush(t);
	assert_int_equal(cache_phase_count(c), CACHE_MAX_PHASES + 1);
	assert_string_equal(cache_phase_name(c, 8), "seven");
	assert_int_equal(cache_phase_traffic(c, 8)->read_bytes, 64);
	trace_ctx_destroy(t);
	cache_destroy(c);
}

/* The L1s the tracing layer treats apart (see test_run_equals_elements()). */
static const char *const run_specs[] = {
	"L1=2K:4:64,L2=8K:8:64",
	"L1=2K:4:64:nwa,L2=8K:8:64",
	"L1=4K:4:128:wv,L2=16K:8:128",
	"L1=8K:4:256:wv",
	"L1=2K:4:64:plru",
	"L1=4K:full:64",
	"L1=2K:4:64:wt,L2=8K:8:64",
	"L1=4K:4:128:wt:wv",
	"none",
	/* inclusive levels whose back-invalidations take the line an access brought in */
	"L1=256B:1:128:plru:wb:wv,L2=5632B:11:256:fifo:wb:wa:incl",
	"L1=512B:2:128:wv,L2=4K:8:256:incl",
	"L1=256B:1:64,L2=512B:1:128:incl",
};

/* Array a (16 KiB of DRAM at mem) and scratch array t after it, and phase p, on both. */
static void
pair_arrays(struct trace_ctx *tr, struct trace_ctx *te, char *mem)
{
	assert_int_equal(trace_array(tr, "a", mem, 16384, TRACE_SPACE_DRAM), 0);
	assert_int_equal(trace_array(te, "a", mem, 16384, TRACE_SPACE_DRAM), 0);
	assert_int_equal(trace_array(tr, "t", mem + 16384, 8192, TRACE_SPACE_TILE), 0);
	assert_int_equal(trace_array(te, "t", mem + 16384, 8192, TRACE_SPACE_TILE), 0);
	assert_int_equal(trace_phase(tr, "p"), 0);
	assert_int_equal(trace_phase(te, "p"), 0);
}

/* Ends both contexts (on models cr and ce) and flushes the models, which must count the
 * same (else `what`). */
static void
pair_end(struct cache *cr, struct cache *ce, struct trace_ctx *tr, struct trace_ctx *te,
	 const char *spec, const char *what)
{
	trace_ctx_destroy(tr);
	trace_ctx_destroy(te);
	cache_flush(cr);
	cache_flush(ce);
	if (!same(cr, ce))
		fail_msg("%s: %s", spec, what);
	for (unsigned i = 0; i < cache_array_count(cr); i++)
		assert_memory_equal(cache_array_scratch(cr, i), cache_array_scratch(ce, i),
				    2 * sizeof(uint64_t));
	cache_destroy(cr);
	cache_destroy(ce);
}

/* A run of element accesses interleaved with other traffic: through trace_run() on tr, one
 * trace_access() per element on te. */
static void
run_pair(struct trace_ctx *tr, struct trace_ctx *te, const char *base, uint64_t off, uint32_t elem,
	 uint64_t n, enum cache_op op)
{
	const char *p = base + off;

	trace_run(tr, p, elem, n, op);
	for (uint64_t k = 0; k < n; k++)
		trace_access(te, p + k * elem, elem, op);
	/* Other lines between runs, so that the next run meets lines present and absent. */
	trace_access(tr, base + 4096 + off * 7 % 8192, 4, CACHE_OP_LOAD);
	trace_access(te, base + 4096 + off * 7 % 8192, 4, CACHE_OP_LOAD);
}

/*
 * trace_run() against one report per element, on every kind of L1 it treats apart: the fast
 * path (write-back, write-allocate), no-write-allocate on the fast path, write-validate with
 * granules an fp16 store covers (128-byte lines) and does not (256-byte lines), merging off
 * the fast path (tree-PLRU, a fully associative L1), write-through (with write-allocate and
 * with write-validate), no cache; elements of 2, 4 and 8 bytes, runs that start mid-line, span
 * lines or lie in one, loads and stores, a run in a scratch array.
 */
static void
test_run_equals_elements(void **state)
{
	static char mem[3 * 8192] __attribute__((aligned(4096)));
	static const uint64_t offs[] = { 0, 2, 8, 56, 120, 1000 };
	static const uint64_t lens[] = { 1, 3, 16, 33, 64, 200 };

	(void)state;
	for (size_t sp = 0; sp < sizeof(run_specs) / sizeof(run_specs[0]); sp++) {
		struct cache *cr = make(run_specs[sp], NULL), *ce = make(run_specs[sp], NULL);
		struct trace_ctx *tr = trace_ctx_create(cr, NULL, 1);
		struct trace_ctx *te = trace_ctx_create(ce, NULL, 1);

		pair_arrays(tr, te, mem);
		for (uint32_t elem = 2; elem <= 8; elem *= 2)
			for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++)
				for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
					uint64_t off = offs[o] / elem * elem;

					run_pair(tr, te, mem, off, elem, lens[l], CACHE_OP_STORE);
					run_pair(tr, te, mem, off + 2048, elem, lens[l],
						 CACHE_OP_LOAD);
					run_pair(tr, te, mem, off, elem, lens[l], CACHE_OP_LOAD);
					run_pair(tr, te, mem + 16384, off, elem, lens[l],
						 CACHE_OP_STORE);
				}
		pair_end(cr, ce, tr, te, run_specs[sp],
			 "trace_run() differs from one access per element");
	}
}

/* One tile's rows, by trace_run_rows() on tr and row by row on te (by trace_run(), or a
 * TR_ZIP of one stream with zip), then a line elsewhere. */
static void
rows_pair(struct trace_ctx *tr, struct trace_ctx *te, const char *p, uint32_t elem, uint64_t n,
	  uint64_t rows, uint64_t stride, enum cache_op op, bool zip)
{
	trace_run_rows(tr, p, elem, n, rows, stride, op);
	for (uint64_t k = 0; k < rows; k++) {
		const struct trace_stream st = { p + k * stride, elem, (uint32_t)op };

		if (zip)
			trace_zip(te, n, &st, 1);
		else
			trace_run(te, p + k * stride, elem, n, op);
	}
	trace_access(tr, p + 40000 % 8192, 4, CACHE_OP_LOAD);
	trace_access(te, p + 40000 % 8192, 4, CACHE_OP_LOAD);
}

/*
 * trace_run_rows() against its rows one by one, on
 * test_run_equals_elements()'s L1s (the rows go to the model as one run where it is neither fast
 * nor recording): rows of 1 to 64 elements of 1 to 8 bytes (and 3, which straddle), 1 to 5 rows
 * strided by less and more than a line, loads and stores, rows in a scratch array and rows that run
 * into one.
 */
static void
test_rows_equal_row_by_row(void **state)
{
	static char mem[3 * 8192] __attribute__((aligned(4096)));
	static const uint32_t elems[] = { 1, 2, 3, 4, 8 };
	static const uint64_t strides[] = { 64, 200, 256, 1000, 4096 };

	(void)state;
	for (size_t sp = 0; sp < sizeof(run_specs) / sizeof(run_specs[0]); sp++) {
		struct cache *cr = make(run_specs[sp], NULL), *ce = make(run_specs[sp], NULL);
		struct trace_ctx *tr = trace_ctx_create(cr, NULL, 1);
		struct trace_ctx *te = trace_ctx_create(ce, NULL, 1);
		uint64_t x = 3;

		pair_arrays(tr, te, mem);
		for (int k = 0; k < 600; k++) {
			uint32_t elem;
			uint64_t n, rows, stride, off;

			x = x * 6364136223846793005ull + 1442695040888963407ull;
			elem = elems[(x >> 33) % 5];
			n = 1 + (x >> 40) % 64;
			rows = 1 + (x >> 48) % 5;
			stride = strides[(x >> 52) % 5] / elem * elem;
			off = (x >> 20) % (16384 - 4 * stride - n * elem) / elem * elem;
			if (k % 7 == 6) /* in scratch, or from DRAM into it */
				off = k % 2 ? 16384 + off % 2048 / elem * elem
					    : (16384 - 2 * stride) / elem * elem;
			rows_pair(tr, te, mem + off, elem, n, rows, stride,
				  (x >> 60) & 1 ? CACHE_OP_STORE : CACHE_OP_LOAD, (x >> 61) & 1);
		}
		pair_end(cr, ce, tr, te, run_specs[sp], "rows at once differ from rows one by one");
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phases),
		cmocka_unit_test(test_native_matches_traced),
		cmocka_unit_test(test_live_equals_by_hand),
		cmocka_unit_test(test_record_replay),
		cmocka_unit_test(test_zip_equals_elements),
		cmocka_unit_test(test_run_equals_elements),
		cmocka_unit_test(test_rows_equal_row_by_row),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
