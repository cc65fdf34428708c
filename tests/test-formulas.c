/*
 * The formulas: the lab formulas against the lab's own numbers, the regime verdicts, and the
 * exact formulas against simulation, every array within 5%, over a grid small enough for
 * every test run (the main job runs the full one): every kernel, fully associative
 * caches from 8 KiB to 4 MiB around the crossovers, with causal, grouped-query attention,
 * batch, fp16 and partial tiles; then the no-cache (lab) preset, where they are exact.
 */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/compare.h"
#include "analysis/formula_kernels.h"
#include "analysis/formulas.h"
#include "run/simulate.h"
#include "tests/unit.h"

static void
test_lab_formulas(void **state)
{
	struct attn_config c = { ATTN_NAIVE, 1024,  64,    1, 1, 1, ATTN_FP32, 64,
				 64,         false, false, 0, 0, 0, 0,         0 };

	(void)state;
	/* The lab: bytes_naive(N, d, 4) = 12 N d + 16 N^2; bytes_flash = 8 N d (1 + N/B_r). */
	assert_true(formula_lab(&c) == 12.0 * 1024 * 64 + 16.0 * 1024 * 1024);
	c.dtype = ATTN_FP16;
	assert_true(formula_lab(&c) == (12.0 * 1024 * 64 + 16.0 * 1024 * 1024) / 2);
	c.kernel = ATTN_FLASH2;
	c.dtype = ATTN_FP32;
	assert_true(formula_lab(&c) == 8.0 * 1024 * 64 * (1 + 1024.0 / 64));
	c.heads = 8;
	c.batch = 2;
	assert_true(formula_lab(&c) == 16 * 8.0 * 1024 * 64 * (1 + 1024.0 / 64));
	c.kernel = ATTN_FLASH1;
	assert_true(formula_lab(&c) == 0);
	/* The decode form: N queries against N_kv keys, the lab's at N_kv = N. */
	c.kernel = ATTN_FLASH2;
	c.N = 4;
	c.N_kv = 8192;
	assert_true(formula_lab(&c) == 16 * 8.0 * 64 * (4 + 8192 * 4.0 / 64));
	c.kernel = ATTN_NAIVE;
	assert_true(formula_lab(&c) == 16 * (4.0 * 4 * 64 + 8.0 * 8192 * 64 + 16.0 * 4 * 8192));
	c.N_kv = 4;
	assert_true(formula_lab(&c) == 16 * (12.0 * 4 * 64 + 16.0 * 4 * 4));
}

static struct formula_result
eval(const struct attn_config *c, const char *spec_text)
{
	struct spec s;
	struct formula_machine m;
	struct formula_result f;
	char err[256];

	assert_int_equal(spec_parse(spec_text, &s, err, sizeof(err)), 0);
	formula_machine_from_spec(&s, true, &m);
	assert_int_equal(formula_eval(c, &m, &f), 0);
	return f;
}

static void
test_regimes(void **state)
{
	struct attn_config naive = { ATTN_NAIVE, 4096,  64,    1, 1, 1, ATTN_FP32, 64,
				     64,         false, false, 0, 0, 0, 0,         0 };
	struct attn_config flash = naive;
	struct formula_result f;

	(void)state;
	flash.kernel = ATTN_FLASH2;
	/* 6 MiB holds K and V (2 MiB) but not S (64 MiB): the naive formula's regime. */
	f = eval(&naive, "i5-8250u");
	assert_true(f.regime.within_assumptions);
	/* With no cache K and V are re-read; with 64 MiB... S (64 MiB) fits with nothing else? */
	f = eval(&naive, "lab");
	assert_false(f.regime.within_assumptions);
	assert_non_null(strstr(f.regime.text, "K/V fit in cache fails"));
	f = eval(&naive, "L1=1G:16:64");
	assert_non_null(strstr(f.regime.text, "S spills to DRAM fails"));
	naive.softmax_separate = true;
	f = eval(&naive, "i5-8250u");
	assert_non_null(strstr(f.regime.text, "no read-for-ownership fails"));
	/* flash: the lab preset is its regime; a cache holding K and V is not; causal is not. */
	f = eval(&flash, "lab");
	assert_true(f.regime.within_assumptions);
	f = eval(&flash, "i5-8250u");
	assert_non_null(strstr(f.regime.text, "K/V re-read per query block fails"));
	flash.causal = true;
	f = eval(&flash, "lab");
	assert_non_null(strstr(f.regime.text, "causal"));
}

/* The regimes count everything live and name the machine's own departures from the lab's. */
static void
test_regimes_held_out(void **state)
{
	struct attn_config big = { ATTN_NAIVE, 1000,  128,   1, 1, 1, ATTN_FP32, 128,
				   128,        false, false, 0, 0, 0, 0,         0 };
	struct attn_config small = { ATTN_NAIVE, 300,   64,    1, 1, 1, ATTN_FP32, 16,
				     16,         false, false, 0, 0, 0, 0,         0 };
	struct attn_config gqa = { ATTN_NAIVE, 4096,  64,    4, 2, 1, ATTN_FP32, 64,
				   64,         false, false, 0, 0, 0, 0,         0 };
	struct attn_config flash = { ATTN_FLASH2, 1000,  64,    1, 1, 1, ATTN_FP32, 128,
				     128,         false, false, 0, 0, 0, 0,         0 };
	struct formula_result f;

	(void)state;
	/* K and V (1 MiB) fit in 1224 KiB, but not with S's rows, Q, O and the tiles. */
	f = eval(&big, "L1=1224K:full:64");
	assert_false(f.regime.within_assumptions);
	assert_non_null(strstr(f.regime.text, "K/V fit in cache fails"));
	/* S (352 KiB) just over 352 KiB: it spills, every pass. */
	f = eval(&small, "L1=352K:full:64,tiles=scratch");
	assert_true(f.regime.within_assumptions);
	assert_non_null(strstr(f.regime.text, "S spills to DRAM"));
	/* Grouped-query heads share K and V, which the lab counts per query head. */
	f = eval(&gqa, "i5-8250u");
	assert_non_null(strstr(f.regime.text, "one K/V head per query head fails"));
	/* Not the lab's cache: two ways, random or FIFO replacement. */
	f = eval(&small, "L1=8M:2:64");
	assert_false(f.regime.within_assumptions);
	assert_non_null(strstr(f.regime.text, "a 2-way cache"));
	f = eval(&small, "L1=8M:16:64:random");
	assert_non_null(strstr(f.regime.text, "random replacement"));
	f = eval(&small, "L1=8M:full:64:fifo");
	assert_non_null(strstr(f.regime.text, "FIFO replacement"));
	/* T_r, not N/B_r, where they differ; a short last block the lab does not see. */
	f = eval(&flash, "lab");
	assert_true(f.regime.within_assumptions);
	assert_non_null(strstr(f.regime.text, "T_r = 8 (the lab's N/B_r = 7.81)"));
	flash.N = 100;
	flash.Br = 64;
	f = eval(&flash, "lab");
	assert_false(f.regime.within_assumptions);
	assert_non_null(strstr(f.regime.text, "T_r = 2 query blocks, the last one short"));
}

/* Simulates c on spec and compares with the formulas. */
static void
simulate(const struct attn_config *c, const char *spec_text, struct formula_result *f,
	 struct comparison *cmp)
{
	struct spec s;
	struct sim_result res;
	struct formula_machine m;
	char err[256];

	assert_int_equal(spec_parse(spec_text, &s, err, sizeof(err)), 0);
	assert_int_equal(sim_kernel(c, &s, true, 3, false, &res, err, sizeof(err)), 0);
	formula_machine_from_spec(&s, true, &m);
	formula_eval(c, &m, f);
	compare_build(res.cache, c, f, cmp);
	sim_result_finish(&res);
}

/* Near a crossover an 8-way cache is 0.67 of the fully associative answer, inside the bound of
 * the formula at C +- 5 lines per set (flash2's runs), in total and per array, with no
 * tolerance; on a fully associative cache there is no interval. */
static void
test_set_associative_interval(void **state)
{
	struct attn_config c = { ATTN_FLASH2, 112,   32,    2, 1, 1, ATTN_FP32, 16,
				 16,          false, false, 0, 0, 0, 0,         0 };
	struct formula_result f;
	struct comparison cmp;

	(void)state;
	simulate(&c, "L1=32K:8:64,tiles=scratch", &f, &cmp);
	assert_int_equal(f.scope, FORMULA_SCOPE_INTERVAL);
	assert_true(f.interval && cmp.exact.interval);
	assert_int_equal(f.interval_runs, 5);
	assert_true(cmp.exact.ratio < 0.95);
	assert_true(f.low_bytes < f.high_bytes);
	assert_true(cmp.exact.measured >= f.low_bytes && cmp.exact.measured <= f.high_bytes);
	assert_true(cmp.exact.within && cmp.arrays_within);
	assert_true(cmp.exact.tolerance == 0);
	simulate(&c, "L1=32K:full:64,tiles=scratch", &f, &cmp);
	assert_false(f.interval || cmp.exact.interval);
	assert_true(f.low_bytes == f.high_bytes);
}

/* A why_not names only causes the configuration has. */
static void
test_why_not_causes(void **state)
{
	struct attn_config c = { ATTN_FLASH2, 256,   64,    1, 1, 1, ATTN_FP32, 64,
				 64,          false, false, 0, 0, 0, 0,         0 };
	struct formula_result f;
	struct comparison cmp;

	(void)state;
	simulate(&c, "L1=128K:4:64,tiles=scratch", &f, &cmp);
	assert_non_null(strstr(f.scope_why, "a 4-way cache: its conflict misses"));
	assert_null(strstr(f.scope_why, "replacement"));
	assert_null(strstr(f.scope_why, "levels"));
	simulate(&c, "L1=64K:full:64:random,tiles=scratch", &f, &cmp);
	assert_false(cmp.exact.within);
	assert_non_null(strstr(cmp.exact.why_not, "random replacement"));
	assert_null(strstr(cmp.exact.why_not, "conflict"));
	assert_null(strstr(cmp.exact.why_not, "please report"));
}

/* Sizes no run takes: N = 10^6, d = 128, several heads, with no cache (the closed forms,
 * instantly), and N = 16384 on h100 (a set-associative cache's evaluation walks rows: naive's
 * takes seconds at N = 10^6). */
static void
test_huge(void **state)
{
	struct attn_config c = { ATTN_FLASH2, 1000000, 128,   16, 4, 2, ATTN_BF16, 64,
				 64,          true,    false, 0,  0, 0, 0,         0 };
	static const struct {
		uint64_t N;
		const char *cache;
	} at[] = { { 1000000, "lab" }, { 16384, "h100" } };
	struct formula_result f;

	(void)state;
	for (unsigned i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		for (int k = 0; k < ATTN_KERNEL_COUNT; k++) {
			c.N = c.N_kv = at[i].N;
			c.kernel = (enum attn_kernel)k;
			c.causal = k != ATTN_PROJ;
			f = eval(&c, at[i].cache);
			assert_true(isfinite(f.read_bytes) && f.read_bytes > 0);
			assert_true(isfinite(f.flops) && f.flops > 0);
		}
}

struct grid {
	const char *name;
	uint64_t N, d, heads, kv_heads, batch, Br, Bc;
	enum attn_dtype dtype;
	bool causal, separate;
};

/* Kinds, not sizes: rows that are not whole lines (N = 100, 33; d = 24, 3, 8: rows of 12 or
 * 32 bytes, S rows of 132 or 400), B_r != B_c with causal grouped-query attention, tiles of a
 * few rows, batches. */
static const struct grid grids[] = {
	{ "plain", 256, 64, 1, 1, 1, 64, 64, ATTN_FP32, false, false },
	{ "causal", 256, 64, 1, 1, 1, 64, 64, ATTN_FP32, true, false },
	{ "gqa", 128, 32, 4, 2, 2, 32, 32, ATTN_FP16, true, false },
	{ "partial", 160, 40, 1, 1, 1, 48, 80, ATTN_FP32, false, false },
	{ "separate", 128, 64, 1, 1, 1, 64, 64, ATTN_FP32, true, true },
	{ "odd rows", 100, 24, 1, 1, 1, 64, 64, ATTN_FP32, false, false },
	{ "gqa causal Br!=Bc", 130, 72, 4, 2, 1, 32, 16, ATTN_BF16, true, false },
	{ "tiny tiles", 33, 3, 2, 1, 2, 5, 3, ATTN_FP32, false, false },
	{ "two rows a line", 100, 8, 2, 2, 1, 16, 48, ATTN_FP32, true, true },
	{ NULL, 0, 0, 0, 0, 0, 0, 0, ATTN_FP32, false, false },
};

/* Every grid kind, every kernel, on each cache: exact (byte for byte, every array, for the
 * kernels `exact` lists) or within the verdict's limits. */
static void
check_grid(const char *const *caches, bool flush, const bool exact[ATTN_KERNEL_COUNT])
{
	for (const struct grid *g = grids; g->name; g++)
		for (int k = 0; k < ATTN_KERNEL_COUNT; k++)
			for (int ci = 0; caches[ci]; ci++) {
				/* flashdecode at S = 1 is flash2: checked where exact only (its own
				 * test covers the rest), to keep the slow grids as they were */
				if (k == ATTN_FLASHDECODE && !exact[k])
					continue;
				struct attn_config c = { (enum attn_kernel)k,
							 g->N,
							 g->d,
							 g->heads,
							 g->kv_heads,
							 g->batch,
							 g->dtype,
							 g->Br,
							 g->Bc,
							 g->causal && k != ATTN_PROJ,
							 g->separate && k == ATTN_NAIVE,
							 0,
							 0,
							 0,
							 0,
							 0 };
				struct spec s;
				struct sim_result res;
				struct formula_machine m;
				struct formula_result f;
				struct comparison cmp;
				char err[256];

				assert_int_equal(spec_parse(caches[ci], &s, err, sizeof(err)), 0);
				assert_int_equal(
					sim_kernel(&c, &s, flush, 3, false, &res, err, sizeof(err)),
					0);
				formula_machine_from_spec(&s, flush, &m);
				formula_eval(&c, &m, &f);
				compare_build(res.cache, &c, &f, &cmp);
				for (unsigned a = 0; a < cmp.narrays; a++) {
					const struct compare_array *x = &cmp.arrays[a];
					bool ok = exact[k] ? x->measured_read == x->exact_read &&
								     x->measured_write ==
									     x->exact_write
							   : x->within;

					if (!ok)
						fail_msg("%s %s on %s%s: %s measured %.0f + %.0f, "
							 "formula %.0f + %.0f",
							 g->name, attn_kernel_name(c.kernel),
							 caches[ci], flush ? "" : " (no flush)",
							 x->name, x->measured_read,
							 x->measured_write, x->exact_read,
							 x->exact_write);
				}
				assert_true(cmp.exact.within);
				sim_result_finish(&res);
			}
}

/* Every kernel held byte for byte (flashdecode at S = 1, the grid's: flash2's formula). */
static const bool every_kernel[ATTN_KERNEL_COUNT] = {
	[ATTN_NAIVE] = true, [ATTN_FLASH1] = true,      [ATTN_FLASH2] = true,
	[ATTN_PROJ] = true,  [ATTN_FLASHDECODE] = true,
};

/* Fully associative LRU: the exact formulas count lines as the model does. */
static void
test_exact_vs_simulation(void **state)
{
	static const char *caches[] = {
		"L1=8K:full:64,tiles=scratch",
		"L1=32K:full:64,tiles=scratch",
		"L1=128K:full:64,tiles=scratch",
		"L1=512K:full:64,tiles=scratch",
		"L1=4M:full:64,tiles=scratch",
		"L1=256K:full:128:wv,tiles=scratch",
		"L1=2K:full:64:wv,tiles=scratch", /* write-validate loads after missed stores */
		NULL,
	};

	(void)state;
	check_grid(caches, true, every_kernel);
	check_grid((const char *const[]){ "L1=32K:full:64,tiles=scratch", NULL }, false,
		   every_kernel);
}

/* Write-validate lines of 256 bytes and more, whose granules (line / 64 bytes) are wider than
 * an fp16 store from 256 bytes on and an fp32 one from 512: a store validates nothing, so a
 * load of a line that came in by stores reads it even where it hits (flash1's O, m and l
 * after init). Byte for byte, every kernel, caches from a few blocks to all of it. */
static void
test_exact_wide_granules(void **state)
{
	static const char *caches[] = {
		"L1=64K:full:256:wv,tiles=scratch",
		"L1=1M:full:256:wv,tiles=scratch",
		"L1=128K:full:512:wv,tiles=scratch",
		"L1=2M:full:512:wv,tiles=scratch",
		"L1=256K:full:4096:wv,tiles=scratch",
		"L1=4M:full:4096:wv,tiles=scratch",
		NULL,
	};

	(void)state;
	check_grid(caches, true, every_kernel);
	check_grid((const char *const[]){ "L1=256K:full:512:wv,tiles=scratch", NULL }, false,
		   every_kernel);
}

/* Tiles in memory take lines of their own: within the limits. */
static void
test_exact_tiles_in_memory(void **state)
{
	static const char *caches[] = { "L1=1M:full:64", "L1=4M:full:64", NULL };
	static const bool exact[ATTN_KERNEL_COUNT] = { false };

	(void)state;
	check_grid(caches, true, exact);
}

/* Queries and keys of different lengths: decode (N = 1, 4, 16 against thousands of keys),
 * chunked prefill (a query block at the end of the cache), causal (end-aligned) and not,
 * grouped-query, caches around the working sets (one K head, K and V of a kv head, all of
 * them) and no cache at all (lab). Byte for byte on every array; the sanitized build runs every
 * fourth shape. */
struct nkv_case {
	enum attn_kernel kernel;
	uint64_t N, N_kv, d, heads, kv_heads, batch, Br, Bc;
	enum attn_dtype dtype;
	bool causal;
};

static void
check_nkv(const struct nkv_case *cases, size_t n, const char *const *caches, bool flush)
{
	/* the sanitized build: every fourth shape, both kernels */
	size_t step = getenv("MEMSIM_SANITIZED") ? 4 : 1;

	for (size_t i = 0; i < n; i += step)
		for (int ci = 0; caches[ci]; ci++) {
			const struct nkv_case *k = &cases[i];
			struct attn_config c = { k->kernel,   k->N,      k->d,     k->heads,
						 k->kv_heads, k->batch,  k->dtype, k->Br,
						 k->Bc,       k->causal, false,    k->N_kv,
						 0,           0,         0,        0 };
			struct spec s;
			struct sim_result res;
			struct formula_machine m;
			struct formula_result f;
			struct comparison cmp;
			char err[256];

			assert_int_equal(spec_parse(caches[ci], &s, err, sizeof(err)), 0);
			assert_int_equal(attn_config_check_trace_only(&c, err, sizeof(err)), 0);
			assert_int_equal(
				sim_kernel(&c, &s, flush, 3, false, &res, err, sizeof(err)), 0);
			formula_machine_from_spec(&s, flush, &m);
			formula_eval(&c, &m, &f);
			compare_build(res.cache, &c, &f, &cmp);
			/* naive on write-validate: the formula says it is not exact there */
			if (c.kernel == ATTN_NAIVE && !m.no_cache && !m.rfo) {
				assert_int_equal(f.scope, FORMULA_SCOPE_ESTIMATE);
				sim_result_finish(&res);
				continue;
			}
			for (unsigned a = 0; a < cmp.narrays; a++) {
				const struct compare_array *x = &cmp.arrays[a];

				if (x->measured_read != x->exact_read ||
				    x->measured_write != x->exact_write)
					fail_msg("%s N=%llu N_kv=%llu%s on %s: %s measured %.0f + "
						 "%.0f, formula %.0f + %.0f",
						 attn_kernel_name(c.kernel),
						 (unsigned long long)c.N,
						 (unsigned long long)c.N_kv,
						 c.causal ? " causal" : "", caches[ci], x->name,
						 x->measured_read, x->measured_write, x->exact_read,
						 x->exact_write);
			}
			sim_result_finish(&res);
		}
}

static const struct nkv_case nkv_cases[] = {
	{ ATTN_FLASH2, 1, 3000, 64, 4, 1, 1, 64, 64, ATTN_FP16, true },   /* decode, MQA */
	{ ATTN_FLASH2, 4, 2000, 64, 4, 2, 2, 64, 128, ATTN_FP16, false }, /* GQA, batch 2 */
	{ ATTN_FLASH2, 16, 4096, 40, 2, 1, 1, 16, 48, ATTN_FP32, true },  /* rows not lines */
	{ ATTN_FLASH2, 4, 1000, 64, 8, 2, 1, 64, 64, ATTN_BF16, true },
	{ ATTN_FLASH2, 16, 5000, 128, 4, 4, 1, 8, 64, ATTN_FP16, true }, /* 2 query blocks */
	{ ATTN_FLASH2, 100, 700, 24, 2, 1, 2, 32, 48, ATTN_FP32, true }, /* chunked prefill */
	{ ATTN_FLASH2, 130, 450, 72, 4, 2, 1, 32, 16, ATTN_BF16, false },
	{ ATTN_FLASH2, 300, 100, 64, 2, 2, 1, 64, 32, ATTN_FP32, false }, /* N > N_kv */
	{ ATTN_NAIVE, 1, 3000, 64, 4, 1, 1, 64, 64, ATTN_FP16, true },
	{ ATTN_NAIVE, 4, 2000, 64, 4, 2, 2, 64, 128, ATTN_FP16, false },
	{ ATTN_NAIVE, 16, 1500, 40, 2, 1, 1, 16, 48, ATTN_FP32, true },
	{ ATTN_NAIVE, 100, 700, 24, 2, 1, 2, 32, 48, ATTN_FP32, true },
	{ ATTN_NAIVE, 130, 45, 72, 4, 2, 1, 32, 16, ATTN_BF16, false },
};

static void
test_exact_nkv(void **state)
{
	static const char *caches[] = {
		"L1=2K:full:64,tiles=scratch",
		"L1=16K:full:64,tiles=scratch",
		"L1=64K:full:64,tiles=scratch",
		"L1=256K:full:64,tiles=scratch",
		"L1=1M:full:64,tiles=scratch",
		"L1=4M:full:64,tiles=scratch",
		"L1=256K:full:128:wv,tiles=scratch",
		"none,tiles=scratch",
		NULL,
	};

	(void)state;
	check_nkv(nkv_cases, sizeof(nkv_cases) / sizeof(nkv_cases[0]), caches, true);
	check_nkv(nkv_cases, sizeof(nkv_cases) / sizeof(nkv_cases[0]),
		  (const char *const[]){ "L1=64K:full:64,tiles=scratch", NULL }, false);
}

/* flashdecode: decode shapes (N = 1 and 16, grouped-query, causal and not) at S = 1 byte for
 * byte on caches around the working sets (one kv head's K, its K and V, everything); at S > 1
 * (S dividing the key blocks and not, a split left empty, every block its own split) byte for
 * byte without a cache and on caches that hold every line the run touches; on smaller ones
 * byte for byte in the line-by-line formula's regime (lru_regime()), else called an estimate.
 * Grouped-query decode (N = 1) runs packed (g query heads as rows: g below, equal to and past
 * B_r), at S = 1 and S > 1. */
struct decode_case {
	uint64_t N, N_kv, d, heads, kv_heads, batch, Br, Bc, S;
	enum attn_dtype dtype;
	bool causal;
};

static const struct decode_case decode_cases[] = {
	{ 1, 3000, 64, 4, 1, 1, 64, 64, 1, ATTN_FP16, true },
	{ 16, 2000, 64, 4, 2, 2, 16, 128, 1, ATTN_FP16, false },
	{ 16, 1000, 40, 2, 1, 1, 8, 48, 1, ATTN_FP32, true },
	{ 1, 700, 24, 2, 2, 1, 64, 64, 4, ATTN_BF16, true },   /* T_c 11, splits 3 x 3 + 2 */
	{ 16, 600, 64, 2, 1, 2, 8, 32, 7, ATTN_FP16, true },   /* query blocks past a split */
	{ 4, 150, 16, 4, 1, 1, 16, 32, 4, ATTN_FP32, false },  /* T_c 5: 2, 2, 1, 0 */
	{ 16, 200, 16, 2, 2, 1, 8, 4, 1000, ATTN_FP32, true }, /* clamped to 50 */
	/* packed grouped-query decode: g = 4 < B_r, g = 8 = B_r, g = 12 > B_r (5, 5, 2) */
	{ 1, 1000, 40, 8, 2, 2, 16, 48, 1, ATTN_FP16, true },
	{ 1, 3000, 64, 8, 1, 1, 8, 64, 1, ATTN_BF16, false },
	{ 1, 777, 24, 12, 1, 1, 5, 32, 1, ATTN_FP32, true },
	{ 1, 1000, 40, 8, 2, 2, 16, 48, 5, ATTN_FP16, false },
	{ 1, 3000, 64, 8, 1, 1, 8, 64, 8, ATTN_BF16, true },
	{ 1, 777, 24, 12, 1, 1, 5, 32, 6, ATTN_FP32, false },
	/* in the line-by-line formula's regime (lru_regime()): heads = kv_heads at N = 1 (batch
	 * 2, T_c 43 in 15, 15, 13), N = 4 causal (T_c 16: 3, 3, 3, 3, 3, 1, 0), N = B_r = 16
	 * with 32 of 64 splits empty; packed g = 4 with 256-byte rows, g = 16 = B_r (and N = 4 over
	 * 4 heads of one kv head above, on 64- and 32-byte lines) */
	{ 1, 2049, 64, 4, 4, 2, 16, 48, 3, ATTN_FP16, false },
	{ 4, 1000, 32, 2, 2, 1, 16, 64, 7, ATTN_FP32, true },
	{ 16, 500, 64, 2, 2, 1, 16, 16, 64, ATTN_FP16, true },
	{ 1, 4097, 128, 16, 4, 1, 64, 64, 5, ATTN_BF16, false },
	{ 1, 300, 64, 32, 2, 1, 16, 32, 4, ATTN_FP16, true },
	/* grouped-query heads not packed (N > 1): a kv head's K and V re-read by each head */
	{ 4, 1000, 64, 8, 2, 2, 16, 48, 7, ATTN_FP16, true },
	{ 16, 600, 32, 4, 1, 1, 16, 32, 3, ATTN_FP32, false },
	/* formula_flashdecode_walk()'s: several query blocks a head (chunked prefill, causal;
	 * packed g = 16 over B_r 8), rows narrower than a line or not a multiple of it (fp16 d 16:
	 * 32 bytes, fp32 d 24: 96, bf16 d 8: 16; partial rows of 64, 96, 32 bytes), batch 2 */
	{ 100, 700, 16, 2, 1, 1, 32, 64, 4, ATTN_FP16, true },
	{ 1, 1000, 24, 32, 2, 1, 8, 48, 3, ATTN_FP32, false },
	{ 40, 513, 8, 3, 1, 2, 16, 16, 5, ATTN_BF16, false },
	{ 130, 300, 40, 1, 1, 1, 64, 48, 2, ATTN_FP32, true },
	{ 3, 400, 24, 4, 4, 1, 16, 32, 6, ATTN_FP16, true },
};

/* flashdecode at S > 1 exact on every fully associative LRU cache (tiles in scratch): line by
 * line in formula_flashdecode_lru()'s closed windows (one query block a head, rows of whole
 * lines up to 256 bytes) or walked (formula_flashdecode_walk(): any query blocks, rows and
 * lines, write-validate granules wider than the 4-byte stores too, paged too: check_paged()'s
 * flashdecode rows). */
static bool
lru_regime(const struct attn_config *c, const struct formula_machine *m)
{
	const struct attn_config v = attn_decode_view(c);

	return m->fully_assoc && m->levels == 1 && m->tiles_in_scratch &&
	       (m->line_bytes <= 256 || formula_flashdecode_walk_fits(&v, m->line_bytes));
}

/* The bytes of every line flashdecode touches at S > 1, each array page-aligned. */
static double
fits_bytes(const struct attn_config *c, double L)
{
	double bh = (double)(c->batch * c->heads * c->N), kv = (double)(c->batch * c->kv_heads);
	double s = dtype_bytes(c->dtype), d = (double)c->d, S = (double)attn_splits(c);
	double b[] = { bh * d * s,
		       bh * d * s,
		       kv * (double)attn_nkv(c) * d * s,
		       kv * (double)attn_nkv(c) * d * s,
		       bh * 4,
		       bh * S * d * 4,
		       bh * S * 4 };
	double lines = 0;

	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		lines += ceil(b[i] / L);
	return lines * L;
}

static void
check_decode(const char *const *caches, bool flush, unsigned *exact_fits, unsigned *exact_lru)
{
	size_t step = getenv("MEMSIM_SANITIZED") ? 3 : 1;

	for (size_t i = 0; i < sizeof(decode_cases) / sizeof(decode_cases[0]); i += step)
		for (int ci = 0; caches[ci]; ci++) {
			const struct decode_case *k = &decode_cases[i];
			struct attn_config c = { .kernel = ATTN_FLASHDECODE,
						 .N = k->N,
						 .N_kv = k->N_kv,
						 .d = k->d,
						 .heads = k->heads,
						 .kv_heads = k->kv_heads,
						 .batch = k->batch,
						 .dtype = k->dtype,
						 .Br = k->Br,
						 .Bc = k->Bc,
						 .causal = k->causal,
						 .splits = k->S };
			struct spec s;
			struct sim_result res;
			struct formula_machine m;
			struct formula_result f;
			struct comparison cmp;
			char err[256];

			assert_int_equal(spec_parse(caches[ci], &s, err, sizeof(err)), 0);
			assert_int_equal(
				sim_kernel_trace_only(&c, &s, flush, &res, err, sizeof(err)), 0);
			formula_machine_from_spec(&s, flush, &m);
			formula_eval(&c, &m, &f);
			compare_build(res.cache, &c, &f, &cmp);
			if (attn_splits(&c) > 1 && !m.no_cache) {
				/* exact where the cache holds every line the run touches */
				bool fits = m.capacity_bytes >= fits_bytes(&c, m.line_bytes);

				if (!fits && lru_regime(&c, &m)) {
					/* line by line on a cache of any size */
					assert_int_equal(f.scope, FORMULA_SCOPE_EXACT);
					(*exact_lru)++;
				} else if (!fits) {
					assert_int_equal(f.scope, FORMULA_SCOPE_ESTIMATE);
					assert_non_null(
						strstr(f.scope_why, "flashdecode with S > 1"));
					sim_result_finish(&res);
					continue;
				}
				assert_int_equal(f.scope, FORMULA_SCOPE_EXACT);
				(*exact_fits)++;
			}
			/* (a 2K cache is under one step: called an estimate, equal all the same) */
			if (m.no_cache)
				assert_int_equal(f.scope, FORMULA_SCOPE_EXACT);
			for (unsigned a = 0; a < cmp.narrays; a++) {
				const struct compare_array *x = &cmp.arrays[a];

				if (x->measured_read != x->exact_read ||
				    x->measured_write != x->exact_write)
					fail_msg("flashdecode N=%llu N_kv=%llu S=%llu%s on %s: %s "
						 "measured %.0f + %.0f, formula %.0f + %.0f",
						 (unsigned long long)c.N,
						 (unsigned long long)c.N_kv,
						 (unsigned long long)attn_splits(&c),
						 c.causal ? " causal" : "", caches[ci], x->name,
						 x->measured_read, x->measured_write, x->exact_read,
						 x->exact_write);
			}
			sim_result_finish(&res);
		}
}

static void
test_exact_flashdecode(void **state)
{
	static const char *caches[] = {
		"L1=2K:full:64,tiles=scratch",
		"L1=16K:full:64,tiles=scratch",
		"L1=64K:full:64,tiles=scratch",
		"L1=256K:full:64,tiles=scratch",
		"L1=1M:full:64,tiles=scratch",
		"L1=256K:full:128:wv,tiles=scratch",
		"L1=16M:full:64,tiles=scratch",
		"L1=16M:full:128:wv,tiles=scratch",
		"L1=8M:full:32,tiles=scratch",
		"lab",
		/* lines over 256 bytes: walked, write-validate granules of 8 and 16 bytes */
		"L1=16K:full:512,tiles=scratch",
		"L1=64K:full:512:wv,tiles=scratch",
		"L1=256K:full:1024:wv,tiles=scratch",
		"L1=16M:full:1024:wv,tiles=scratch",
		NULL,
	};
	unsigned fits = 0, lru = 0;

	(void)state;
	check_decode(caches, true, &fits, &lru);
	check_decode((const char *const[]){ "L1=64K:full:64,tiles=scratch",
					    "L1=16M:full:64:wv,tiles=scratch",
					    "L1=8K:full:32:wv,tiles=scratch",
					    "L1=32K:full:2048:wv,tiles=scratch", NULL },
		     false, &fits, &lru);
	print_message("# flashdecode S > 1: %u runs on caches that hold them, %u on smaller ones "
		      "(line by line), byte-equal\n",
		      fits, lru);
	assert_true(fits > 0);
	assert_true(lru > 0);
	/* lines over 256 bytes: walked, so exact whether the cache holds the run or not, under
	 * write-validate too (granules of 8 to 32 bytes, wider than the 4-byte stores) */
	{
		struct attn_config big = { .kernel = ATTN_FLASHDECODE,
					   .N = 1,
					   .N_kv = 3000,
					   .d = 64,
					   .heads = 8,
					   .kv_heads = 2,
					   .batch = 1,
					   .dtype = ATTN_FP32,
					   .Br = 16,
					   .Bc = 64,
					   .splits = 5 };
		static const char *const big_lines[] = { "L1=64K:full:512:wv,tiles=scratch",
							 "L1=16M:full:1024:wv,tiles=scratch",
							 "L1=16K:full:2048,tiles=scratch",
							 "L1=1M:full:512,tiles=scratch" };

		for (size_t i = 0; i < sizeof(big_lines) / sizeof(big_lines[0]); i++)
			assert_int_equal(eval(&big, big_lines[i]).scope, FORMULA_SCOPE_EXACT);
	}
}

/* Paged K/V (--kv-page P): with rows of whole lines every K and V line is one (page, token,
 * kv head) row, so a fully associative LRU cache sees the unpaged reuse with the block
 * table's lines added: byte for byte on every array, the block table too. P of one token, 16,
 * 256, not dividing N_kv, past B_c; decode N = 1 over a long cache, chunked prefill, GQA,
 * batch 2 (whose table rows share a line), causal and not, fp32, fp16 and bf16; caches from a
 * block to everything. Rows narrower than a line: called an estimate. */
struct paged_case {
	uint64_t N, N_kv, d, heads, kv_heads, batch, Br, Bc, P;
	enum attn_dtype dtype;
	bool causal;
	uint64_t S; /* flashdecode's splits; 0: flash2 */
};

static const struct paged_case paged_cases[] = {
	{ 1, 4000, 64, 4, 1, 1, 64, 64, 16, ATTN_FP16, true, 0 },    /* decode, MQA */
	{ 1, 3000, 32, 8, 2, 2, 64, 64, 1, ATTN_FP32, false, 0 },    /* a token a page, GQA */
	{ 4, 2000, 64, 4, 2, 2, 64, 128, 256, ATTN_FP16, false, 0 }, /* pages past B_c */
	{ 16, 1000, 32, 2, 1, 1, 16, 48, 7, ATTN_FP32, true, 0 },    /* pages across blocks */
	{ 100, 700, 64, 2, 1, 2, 32, 48, 16, ATTN_BF16, true, 0 },   /* chunked prefill */
	{ 130, 450, 128, 4, 2, 1, 32, 16, 5, ATTN_BF16, false, 0 },
	{ 64, 64, 16, 2, 2, 3, 16, 16, 3, ATTN_FP32, true, 0 },   /* N = N_kv, batch 3 */
	{ 1, 9000, 64, 2, 2, 3, 64, 64, 16, ATTN_FP16, true, 0 }, /* table rows share lines */
	/* K and V of 2000 lines re-read by 8 query blocks: on 128K (2048 lines) the table's 63
	 * lines in each window turn hits into misses */
	{ 128, 1000, 16, 1, 1, 1, 16, 64, 1, ATTN_FP32, false, 0 },
	/* flashdecode: S = 1 (flash2's formula, packed grouped-query decode), S = 4 (exact with
	 * no cache and on a cache that holds the run, else an estimate) */
	{ 1, 3000, 64, 8, 2, 2, 64, 64, 16, ATTN_FP16, true, 1 },
	{ 4, 2000, 32, 2, 1, 1, 16, 64, 7, ATTN_FP32, true, 1 },
	{ 1, 1500, 64, 4, 1, 2, 64, 64, 16, ATTN_BF16, false, 4 },
	/* S > 1 line by line: grouped heads not packed, batch 3, a token a page (table lines shared
	 * by blocks, splits and batches; 16K: windows of 255 and 256 lines); packed, P = 7 */
	{ 4, 100, 64, 8, 2, 3, 16, 48, 1, ATTN_FP16, false, 3 },
	{ 1, 2000, 128, 8, 2, 2, 16, 64, 7, ATTN_BF16, true, 5 },
	/* walked: chunked prefill, 4 query blocks a head; rows of 64 bytes (shared by two kv
	 * heads' rows of a page's token on 128-byte lines, the pool placed by the table); rows
	 * of 32 bytes, batch 2, packed g = 4 */
	{ 100, 700, 64, 2, 1, 2, 32, 48, 16, ATTN_BF16, true, 3 },
	{ 20, 300, 16, 2, 2, 1, 8, 32, 7, ATTN_FP32, false, 4 },
	{ 1, 900, 16, 8, 2, 2, 16, 64, 5, ATTN_FP16, true, 6 },
};

static void
check_paged(const char *const *caches, bool flush)
{
	size_t step = getenv("MEMSIM_SANITIZED") ? 3 : 1;
	unsigned bad = 0;

	for (size_t i = 0; i < sizeof(paged_cases) / sizeof(paged_cases[0]); i += step)
		for (int ci = 0; caches[ci]; ci++) {
			const struct paged_case *k = &paged_cases[i];
			struct attn_config c = { .kernel = k->S ? ATTN_FLASHDECODE : ATTN_FLASH2,
						 .splits = k->S,
						 .N = k->N,
						 .N_kv = k->N_kv,
						 .d = k->d,
						 .heads = k->heads,
						 .kv_heads = k->kv_heads,
						 .batch = k->batch,
						 .dtype = k->dtype,
						 .Br = k->Br,
						 .Bc = k->Bc,
						 .causal = k->causal,
						 .kv_page = k->P,
						 .kv_seed = 3 };
			struct spec s;
			struct sim_result res;
			struct formula_machine m;
			struct formula_result f;
			struct comparison cmp;
			char err[256];

			assert_int_equal(spec_parse(caches[ci], &s, err, sizeof(err)), 0);
			assert_int_equal(
				sim_kernel_trace_only(&c, &s, flush, &res, err, sizeof(err)), 0);
			formula_machine_from_spec(&s, flush, &m);
			formula_eval(&c, &m, &f);
			compare_build(res.cache, &c, &f, &cmp);
			/* flashdecode at S > 1 on a cache smaller than the run: exact line by line
			 * in lru_regime(), else an estimate */
			if (k->S > 1 && lru_regime(&c, &m))
				assert_int_equal(f.scope, FORMULA_SCOPE_EXACT);
			if (f.scope == FORMULA_SCOPE_ESTIMATE &&
			    strstr(f.scope_why, "flashdecode")) {
				assert_true(attn_splits(&c) > 1);
				sim_result_finish(&res);
				continue;
			}
			/* flash2's rows narrower than a line: called an estimate (equal for 64
			 * bytes on 128-byte lines; not compared on the lines over 256 bytes, there
			 * for flashdecode's walk) */
			assert_true(m.no_cache || f.scope == FORMULA_SCOPE_EXACT ||
				    strstr(f.scope_why, "one step") ||
				    (c.d * dtype_bytes(c.dtype) % (uint64_t)m.line_bytes &&
				     strstr(f.scope_why, "a paged KV cache with rows of")));
			if (f.scope == FORMULA_SCOPE_ESTIMATE && m.line_bytes > 256) {
				sim_result_finish(&res);
				continue;
			}
			for (unsigned a = 0; a < cmp.narrays; a++) {
				const struct compare_array *x = &cmp.arrays[a];

				if (x->measured_read != x->exact_read ||
				    x->measured_write != x->exact_write)
					bad++, print_message(
						       "%s N=%llu N_kv=%llu P=%llu%s on %s%s: %s "
						       "measured %.0f + %.0f, formula %.0f + %.0f\n",
						       attn_kernel_name(c.kernel),
						       (unsigned long long)c.N,
						       (unsigned long long)c.N_kv,
						       (unsigned long long)c.kv_page,
						       c.causal ? " causal" : "", caches[ci],
						       flush ? "" : " (no flush)", x->name,
						       x->measured_read, x->measured_write,
						       x->exact_read, x->exact_write);
			}
			sim_result_finish(&res);
		}
	if (bad)
		fail_msg("%u arrays differ", bad);
}

static void
test_exact_paged(void **state)
{
	static const char *caches[] = {
		"L1=2K:full:64,tiles=scratch",       "L1=16K:full:64,tiles=scratch",
		"L1=64K:full:64,tiles=scratch",      "L1=256K:full:64,tiles=scratch",
		"L1=1M:full:64,tiles=scratch",       "L1=4M:full:64,tiles=scratch",
		"L1=256K:full:128:wv,tiles=scratch", "lab",
		"L1=128K:full:64,tiles=scratch",     "L1=64K:full:512:wv,tiles=scratch",
		"L1=16K:full:1024,tiles=scratch",    NULL,
	};

	struct attn_config narrow = { .kernel = ATTN_FLASH2,
				      .N = 1,
				      .N_kv = 500,
				      .d = 8,
				      .heads = 2,
				      .kv_heads = 2,
				      .batch = 1,
				      .dtype = ATTN_FP32,
				      .Br = 16,
				      .Bc = 16,
				      .kv_page = 16 };
	struct formula_result f;

	(void)state;
	/* rows of 32 bytes: a line holds both kv heads' rows of a token */
	f = eval(&narrow, "L1=4K:full:64,tiles=scratch");
	assert_int_equal(f.scope, FORMULA_SCOPE_ESTIMATE);
	assert_non_null(strstr(f.scope_why, "a paged KV cache with rows of 32 bytes"));
	narrow.kv_page = 0;
	f = eval(&narrow, "L1=4K:full:64,tiles=scratch");
	assert_int_equal(f.scope, FORMULA_SCOPE_EXACT);
	check_paged(caches, true);
	check_paged((const char *const[]){ "L1=64K:full:64,tiles=scratch", NULL }, false);
}

/* No cache at all: every access moves its own bytes, byte for byte. */
static void
test_exact_no_cache(void **state)
{
	static const char *caches[] = { "lab", NULL };

	(void)state;
	check_grid(caches, true, every_kernel);
}

/* A small array off by 1.88x is not "within" because it is small: its verdict stays strict,
 * it is marked negligible (under 0.1% of the bytes), and the run's verdict names it apart. */
static void
test_negligible_arrays(void **state)
{
	struct spec s;
	struct cache *c;
	struct formula_result f;
	struct comparison cmp;
	struct attn_config cfg = { ATTN_FLASH2, 64,    64,    1, 1, 1, ATTN_FP32, 64,
				   64,          false, false, 0, 0, 0, 0,         0 };
	char err[256];
	int big, small;

	(void)state;
	assert_int_equal(spec_parse("L1=1K:full:64", &s, err, sizeof(err)), 0);
	c = cache_create(&s.cache);
	big = cache_add_array(c, "K", 0x100000, 1 << 20, false);
	small = cache_add_array(c, "lse", 0x400000, 4096, false);
	for (uint64_t a = 0; a < (1 << 20); a += 64)
		cache_access(c, 0x100000 + a, 4, CACHE_OP_LOAD, 1);
	cache_access(c, 0x400000, 4, CACHE_OP_LOAD, 1);
	cache_access(c, 0x400040, 4, CACHE_OP_LOAD, 1);
	memset(&f, 0, sizeof(f));
	f.narrays = 2;
	snprintf(f.arrays[0].name, sizeof(f.arrays[0].name), "K");
	f.arrays[0].read_bytes = 1 << 20;
	snprintf(f.arrays[1].name, sizeof(f.arrays[1].name), "lse");
	f.arrays[1].read_bytes = 68; /* measured 128: 1.88x */
	f.read_bytes = (1 << 20) + 68;
	compare_build(c, &cfg, &f, &cmp);
	assert_true(cmp.arrays[0].within && !cmp.arrays[0].negligible);
	assert_false(cmp.arrays[1].within);
	assert_true(cmp.arrays[1].negligible);
	assert_false(cmp.arrays_within);
	assert_true(cmp.arrays_within_but_negligible);
	assert_true(cmp.exact.within);
	assert_non_null(strstr(cmp.exact.why_not, "lse (under 0.1% of the bytes) is off"));
	/* Not negligible any more: the run says an array disagrees. */
	f.arrays[0].read_bytes = 40000;
	f.read_bytes = 40000 + 68;
	compare_build(c, &cfg, &f, &cmp);
	assert_false(cmp.arrays_within_but_negligible);
	(void)big;
	(void)small;
	cache_destroy(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_negligible_arrays),
		cmocka_unit_test(test_lab_formulas),
		cmocka_unit_test(test_regimes),
		cmocka_unit_test(test_regimes_held_out),
		cmocka_unit_test(test_set_associative_interval),
		cmocka_unit_test(test_why_not_causes),
		cmocka_unit_test(test_huge),
		cmocka_unit_test(test_exact_vs_simulation),
		cmocka_unit_test(test_exact_tiles_in_memory),
		cmocka_unit_test(test_exact_no_cache),
		cmocka_unit_test(test_exact_flashdecode),
		cmocka_unit_test(test_exact_nkv),
		cmocka_unit_test(test_exact_wide_granules),
		cmocka_unit_test(test_exact_paged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
