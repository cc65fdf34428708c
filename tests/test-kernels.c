/*
 * Every kernel, dtype, causal and grouped-query setting against the double-precision
 * reference, on fresh random inputs (the seed is printed; MEMSIM_TEST_SEED repeats a run),
 * with outputs poisoned first so an element a kernel never writes fails. Sizes are not powers
 * of two and the tiles do not divide them, so partial tiles are exercised. The traced build
 * must compute exactly what the native build computes.
 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernels/attn.h"
#include "kernels/exp.h"
#include "run/simulate.h"
#include "sim/spec.h"
#include "tests/unit.h"

static uint64_t seed;

struct shape {
	uint64_t N, d, heads, kv_heads, batch, Br, Bc;
};

static const struct shape shapes[] = {
	{ 77, 24, 2, 2, 1, 16, 24 },  /* partial tiles both ways */
	{ 130, 40, 4, 2, 2, 32, 16 }, /* GQA 2:1, batch 2 */
	{ 64, 64, 3, 1, 1, 64, 64 },  /* multi-query, one tile */
	{ 33, 16, 2, 1, 1, 8, 40 },   /* B_c larger than N */
	{ 0 },
};

static bool
outputs_equal(const struct attn_data *a, const struct attn_data *b)
{
	const struct attn_config *c = &a->cfg;
	uint64_t s = dtype_bytes(c->dtype);
	uint64_t q = c->batch * c->heads * c->N * c->d * s;
	uint64_t kv = c->batch * c->kv_heads * attn_nkv(c) * c->d * s;

	if (c->kernel == ATTN_PROJ)
		return !memcmp(a->Q, b->Q, q) && !memcmp(a->K, b->K, kv) &&
		       !memcmp(a->V, b->V, kv) &&
		       !memcmp(a->y, b->y, c->batch * c->N * c->heads * c->d * s);
	return !memcmp(a->O, b->O, q);
}

static void
run_case(const struct attn_config *cfg)
{
	char err[256];
	struct attn_data *nat = attn_data_create(cfg, err, sizeof(err));
	struct attn_data *tr = attn_data_create(cfg, err, sizeof(err));
	struct attn_error e;
	struct spec spec;
	struct cache *c;
	struct trace_ctx *t;

	assert_non_null(nat);
	assert_non_null(tr);
	attn_data_fill(nat, seed);
	attn_data_fill(tr, seed);
	attn_data_poison(nat);
	attn_data_poison(tr);
	attn_run_native(nat);
	e = attn_check(nat);
	print_message(
		"# %-6s %s N=%-3llu N_kv=%-3llu d=%-2llu h=%llu/%llu b=%llu Br=%llu Bc=%llu S=%llu%s%s: "
		"max err %.2e (bound %.2e, max |ref| %.2f)\n",
		attn_kernel_name(cfg->kernel), attn_dtype_name(cfg->dtype),
		(unsigned long long)cfg->N, (unsigned long long)attn_nkv(cfg),
		(unsigned long long)cfg->d, (unsigned long long)cfg->heads,
		(unsigned long long)cfg->kv_heads, (unsigned long long)cfg->batch,
		(unsigned long long)cfg->Br, (unsigned long long)cfg->Bc,
		(unsigned long long)attn_splits(cfg), cfg->causal ? " causal" : "",
		cfg->softmax_separate ? " separate-P" : "", e.max_abs, e.bound, e.max_ref);
	if (!e.pass)
		fail_msg("%s %s N=%llu N_kv=%llu S=%llu: max error %.3e over bound %.3e, %llu "
			 "non-finite, %llu lse off (seed %llu)",
			 attn_kernel_name(cfg->kernel), attn_dtype_name(cfg->dtype),
			 (unsigned long long)cfg->N, (unsigned long long)attn_nkv(cfg),
			 (unsigned long long)attn_splits(cfg), e.max_abs, e.bound,
			 (unsigned long long)e.nonfinite, (unsigned long long)e.lse_bad,
			 (unsigned long long)seed);
	if (cfg->dtype == ATTN_FP32 && e.max_abs >= 1e-5)
		fail_msg("fp32 error %.3e is not under 1e-5", e.max_abs);
	/* The traced build, through a small cache with tiles in memory. */
	assert_int_equal(spec_parse("L1=4K:4:64,L2=64K:8:64", &spec, err, sizeof(err)), 0);
	c = cache_create(&spec.cache);
	t = trace_ctx_create(c, NULL, 0);
	attn_run_traced(tr, t);
	trace_ctx_destroy(t);
	if (!outputs_equal(nat, tr))
		fail_msg("%s %s: the traced build computed something else than the native build",
			 attn_kernel_name(cfg->kernel), attn_dtype_name(cfg->dtype));
	assert_true(cache_cpu(c)->ops[CACHE_OP_LOAD] > 0);
	cache_destroy(c);
	attn_data_destroy(nat);
	attn_data_destroy(tr);
}

static void
test_kernel(enum attn_kernel k)
{
	for (const struct shape *s = shapes; s->N; s++)
		for (int dt = ATTN_FP32; dt <= ATTN_BF16; dt++)
			for (int causal = 0; causal <= (k == ATTN_PROJ ? 0 : 1); causal++) {
				struct attn_config cfg = {
					.kernel = k,
					.N = s->N,
					.d = s->d,
					.heads = s->heads,
					.kv_heads = s->kv_heads,
					.batch = s->batch,
					.dtype = (enum attn_dtype)dt,
					.Br = s->Br,
					.Bc = s->Bc,
					.causal = causal,
				};

				run_case(&cfg);
				if (k == ATTN_NAIVE && s == shapes) {
					cfg.softmax_separate = true;
					run_case(&cfg);
				}
			}
}

static void
test_naive(void **state)
{
	(void)state;
	test_kernel(ATTN_NAIVE);
}

static void
test_flash1(void **state)
{
	(void)state;
	test_kernel(ATTN_FLASH1);
}

static void
test_flash2(void **state)
{
	(void)state;
	test_kernel(ATTN_FLASH2);
}

static void
test_proj(void **state)
{
	(void)state;
	test_kernel(ATTN_PROJ);
}

/* Queries and keys of different lengths against the double-precision reference, the causal
 * mask aligned at the end (row i sees keys up to i + N_kv - N): decode (N = 1 and 3 over
 * more keys than a block), a chunked prefill, N > N_kv without the mask. */
static void
test_kernel_nkv(enum attn_kernel k)
{
	static const struct {
		uint64_t N, N_kv, d, heads, kv_heads, batch, Br, Bc;
	} nkv[] = {
		{ 1, 150, 16, 4, 1, 1, 16, 32 },
		{ 3, 77, 24, 4, 2, 2, 2, 16 },
		{ 40, 100, 16, 2, 2, 1, 16, 24 },
		{ 50, 20, 16, 2, 1, 1, 16, 8 },
	};

	for (size_t i = 0; i < sizeof(nkv) / sizeof(nkv[0]); i++)
		for (int dt = ATTN_FP32; dt <= ATTN_BF16; dt++)
			for (int causal = 0; causal <= (nkv[i].N <= nkv[i].N_kv); causal++) {
				struct attn_config cfg = {
					.kernel = k,
					.N = nkv[i].N,
					.N_kv = nkv[i].N_kv,
					.d = nkv[i].d,
					.heads = nkv[i].heads,
					.kv_heads = nkv[i].kv_heads,
					.batch = nkv[i].batch,
					.dtype = (enum attn_dtype)dt,
					.Br = nkv[i].Br,
					.Bc = nkv[i].Bc,
					.causal = causal,
				};

				run_case(&cfg);
			}
}

/* flashdecode against the reference: S = 1 (no partial arrays), S dividing the key blocks or
 * not (a last split left empty: T_c = 5, S = 4 splits 2, 2, 1, 0), S past them (clamped);
 * every shape, dtype and mask. */
static void
test_flashdecode(void **state)
{
	static const uint64_t splits[] = { 1, 2, 4, 1000 };

	(void)state;
	for (const struct shape *s = shapes; s->N; s++)
		for (int dt = ATTN_FP32; dt <= ATTN_BF16; dt++)
			for (int causal = 0; causal <= 1; causal++)
				for (size_t i = 0; i < sizeof(splits) / sizeof(splits[0]); i++) {
					struct attn_config cfg = {
						.kernel = ATTN_FLASHDECODE,
						.N = s->N,
						.d = s->d,
						.heads = s->heads,
						.kv_heads = s->kv_heads,
						.batch = s->batch,
						.dtype = (enum attn_dtype)dt,
						.Br = s->Br,
						.Bc = s->Bc,
						.causal = causal,
						.splits = splits[i],
					};

					run_case(&cfg);
				}
}

/* Decode shapes: N = 1 and 16 over long caches, grouped-query, S from 1 to every block its own
 * split. With the causal mask, split 6 of T_c = 7 (N = 16, N_kv = 200, B_r 8, B_c 32) holds no
 * key the first query block sees (FlashAttention's early exit: 0 and -inf), and with B_c = 4
 * the first rows of a query block see none of a split its later rows see (a row of O 0,
 * logsumexp -inf, weighted 0 by the combine). */
static void
test_flashdecode_nkv(void **state)
{
	static const struct {
		uint64_t N, N_kv, d, heads, kv_heads, batch, Br, Bc, S;
	} cases[] = {
		{ 1, 150, 16, 4, 1, 1, 16, 32, 4 },  { 1, 150, 16, 4, 2, 2, 16, 32, 5 },
		{ 1, 300, 24, 2, 1, 1, 64, 64, 3 },  { 3, 77, 24, 4, 2, 2, 2, 16, 2 },
		{ 16, 200, 16, 2, 1, 1, 8, 32, 7 },  { 16, 200, 16, 2, 2, 1, 8, 4, 50 },
		{ 16, 200, 16, 2, 2, 1, 16, 4, 13 }, { 40, 100, 16, 2, 2, 1, 16, 24, 3 },
		{ 50, 20, 16, 2, 1, 1, 16, 8, 2 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (int dt = ATTN_FP32; dt <= ATTN_BF16; dt++)
			for (int causal = 0; causal <= (cases[i].N <= cases[i].N_kv); causal++) {
				struct attn_config cfg = {
					.kernel = ATTN_FLASHDECODE,
					.N = cases[i].N,
					.N_kv = cases[i].N_kv,
					.d = cases[i].d,
					.heads = cases[i].heads,
					.kv_heads = cases[i].kv_heads,
					.batch = cases[i].batch,
					.dtype = (enum attn_dtype)dt,
					.Br = cases[i].Br,
					.Bc = cases[i].Bc,
					.causal = causal,
					.splits = cases[i].S,
				};

				run_case(&cfg);
			}
}

/* Grouped-query decode (N = 1, heads > kv_heads): FlashAttention's packing runs a KV head's
 * g query heads as g query rows (attn_decode_view()); against the reference with g below B_r
 * (one partial query block), equal to it and past it (two blocks, the last partial), batch
 * 2, several splits (an empty last one), multi-query, causal and not (one query sees every
 * key either way). */
static void
test_flashdecode_gqa(void **state)
{
	static const struct {
		uint64_t N_kv, d, heads, kv_heads, batch, Br, Bc, S;
	} cases[] = {
		{ 150, 16, 8, 2, 2, 16, 32, 4 }, /* g = 4 < B_r */
		{ 200, 24, 16, 2, 1, 8, 16, 5 }, /* g = 8 = B_r */
		{ 130, 16, 12, 1, 1, 5, 32, 2 }, /* MQA, g = 12 > B_r: blocks of 5, 5, 2 */
		{ 77, 8, 6, 2, 2, 2, 16, 1 },    /* S = 1: O and lse written by the split */
		{ 100, 16, 6, 3, 1, 4, 16, 4 },  /* T_c = 7 in 4 splits: 2, 2, 2, 1 */
		{ 6, 16, 8, 1, 1, 16, 2, 2 },    /* N_kv = 6 below g = 8 */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (int dt = ATTN_FP32; dt <= ATTN_BF16; dt++)
			for (int causal = 0; causal <= 1; causal++) {
				struct attn_config cfg = {
					.kernel = ATTN_FLASHDECODE,
					.N = 1,
					.N_kv = cases[i].N_kv,
					.d = cases[i].d,
					.heads = cases[i].heads,
					.kv_heads = cases[i].kv_heads,
					.batch = cases[i].batch,
					.dtype = (enum attn_dtype)dt,
					.Br = cases[i].Br,
					.Bc = cases[i].Bc,
					.causal = causal,
					.splits = cases[i].S,
				};
				struct attn_config v = attn_decode_view(&cfg);

				assert_true(attn_decode_packed(&cfg));
				assert_int_equal(v.N, cfg.heads / cfg.kv_heads);
				assert_int_equal(v.heads, cfg.kv_heads);
				assert_false(v.causal);
				run_case(&cfg);
			}
}

/* Packing only where FlashAttention packs: one query row, grouped heads, flashdecode. */
static void
test_flashdecode_packed_when(void **state)
{
	struct attn_config c = { .kernel = ATTN_FLASHDECODE,
				 .N = 1,
				 .N_kv = 64,
				 .d = 16,
				 .heads = 4,
				 .kv_heads = 1,
				 .batch = 1,
				 .Br = 16,
				 .Bc = 16 };
	struct attn_config v;

	(void)state;
	assert_true(attn_decode_packed(&c));
	c.N = 2; /* N > 1: FlashAttention does not swap */
	assert_false(attn_decode_packed(&c));
	v = attn_decode_view(&c);
	assert_true(v.N == c.N && v.heads == c.heads && v.N_kv == c.N_kv && v.causal == c.causal);
	c.N = 1;
	c.kv_heads = 4; /* MHA: nothing to pack */
	assert_false(attn_decode_packed(&c));
	c.kv_heads = 1;
	c.kernel = ATTN_FLASH2; /* flash2 runs the heads in turn */
	assert_false(attn_decode_packed(&c));
}

/* S = 1 is FlashAttention's Split = false: O and lse written by the split, no partial arrays,
 * no combine phase; S > 1 has both arrays, sized [batch][heads][S][N][d] and [..][N]. */
static void
test_flashdecode_arrays(void **state)
{
	struct attn_config c = { .kernel = ATTN_FLASHDECODE,
				 .N = 4,
				 .N_kv = 640,
				 .d = 32,
				 .heads = 2,
				 .kv_heads = 1,
				 .batch = 3,
				 .dtype = ATTN_FP16,
				 .Br = 64,
				 .Bc = 64,
				 .splits = 1 };
	struct attn_config f2 = c;
	char err[256];
	struct attn_data *d;

	(void)state;
	f2.kernel = ATTN_FLASH2;
	f2.splits = 0;
	assert_true(attn_array_bytes(&c) == attn_array_bytes(&f2));
	d = attn_data_create(&c, err, sizeof(err));
	assert_non_null(d);
	assert_null(d->Oacc);
	assert_null(d->lseacc);
	attn_data_destroy(d);
	c.splits = 3;
	assert_true(attn_array_bytes(&c) == attn_array_bytes(&f2) + 3 * 2 * 3 * 4 * (32 + 1) * 4);
	d = attn_data_create(&c, err, sizeof(err));
	assert_non_null(d);
	assert_non_null(d->Oacc);
	assert_non_null(d->lseacc);
	attn_data_destroy(d);
	/* clamped to the T_c = 10 key blocks */
	c.splits = 11;
	assert_int_equal(attn_splits(&c), 10);
	assert_int_equal(attn_split_blocks(&c), 1);
	c.splits = 4;
	assert_int_equal(attn_split_blocks(&c), 3); /* 3, 3, 3, 1 */
	c.splits = 0;
	assert_int_equal(attn_splits(&c), 1);
}

static void
test_naive_nkv(void **state)
{
	(void)state;
	test_kernel_nkv(ATTN_NAIVE);
}

static void
test_flash2_nkv(void **state)
{
	(void)state;
	test_kernel_nkv(ATTN_FLASH2);
}

/* Paged K/V (--kv-page P): against the reference, traced = native, and bit for bit the
 * unpaged run's O and logsumexp on the same inputs (attn_data_fill() draws the same keys and
 * values); the block table a permutation of the pool, not the identity. P of one token, not
 * dividing N_kv, past B_c, past N_kv; grouped-query, batch 2, decode, causal, each dtype. */
static void
check_paged(enum attn_kernel kernel, uint64_t splits)
{
	static const struct {
		uint64_t N, N_kv, d, heads, kv_heads, batch, Br, Bc, P;
	} pg[] = {
		{ 1, 150, 16, 4, 1, 1, 16, 32, 16 }, /* decode, MQA, a last page of 6 */
		{ 3, 77, 24, 4, 2, 2, 2, 16, 1 },    /* a token a page, GQA, batch 2 */
		{ 40, 100, 16, 2, 2, 1, 16, 24, 7 }, /* pages across key blocks */
		{ 50, 50, 16, 2, 1, 2, 16, 8, 32 },  /* pages past B_c */
		{ 5, 20, 8, 1, 1, 1, 4, 8, 64 },     /* one page past N_kv */
	};
	char err[256];

	for (size_t i = 0; i < sizeof(pg) / sizeof(pg[0]); i++)
		for (int dt = ATTN_FP32; dt <= ATTN_BF16; dt++)
			for (int causal = 0; causal <= 1; causal++) {
				struct attn_config cfg = {
					.kernel = kernel,
					.splits = splits,
					.N = pg[i].N,
					.N_kv = pg[i].N_kv,
					.d = pg[i].d,
					.heads = pg[i].heads,
					.kv_heads = pg[i].kv_heads,
					.batch = pg[i].batch,
					.dtype = (enum attn_dtype)dt,
					.Br = pg[i].Br,
					.Bc = pg[i].Bc,
					.causal = causal,
					.kv_page = pg[i].P,
					.kv_seed = seed + i,
				};
				struct attn_config flat = cfg;
				struct attn_data *a, *b;
				uint64_t n = cfg.batch * attn_pages(&cfg), identity = 0;
				bool *seen = calloc(n, 1);

				run_case(&cfg);
				flat.kv_page = 0;
				a = attn_data_create(&cfg, err, sizeof(err));
				b = attn_data_create(&flat, err, sizeof(err));
				assert_non_null(a);
				assert_non_null(b);
				for (uint64_t p = 0; p < n; p++) {
					assert_true(a->block_table[p] >= 0 &&
						    (uint64_t)a->block_table[p] < n);
					assert_false(seen[a->block_table[p]]);
					seen[a->block_table[p]] = true;
					identity += (uint64_t)a->block_table[p] == p;
				}
				if (n >= 8)
					assert_true(identity < n);
				attn_data_fill(a, seed);
				attn_data_fill(b, seed);
				attn_run_native(a);
				attn_run_native(b);
				if (memcmp(a->O, b->O,
					   cfg.batch * cfg.heads * cfg.N * cfg.d *
						   dtype_bytes(cfg.dtype)) ||
				    memcmp(a->lse, b->lse, cfg.batch * cfg.heads * cfg.N * 4))
					fail_msg(
						"paged P=%llu N_kv=%llu %s%s: O or lse differ from the "
						"unpaged run's",
						(unsigned long long)cfg.kv_page,
						(unsigned long long)cfg.N_kv,
						attn_dtype_name(cfg.dtype),
						causal ? " causal" : "");
				attn_data_destroy(a);
				attn_data_destroy(b);
				free(seen);
			}
}

static void
test_flash2_paged(void **state)
{
	(void)state;
	check_paged(ATTN_FLASH2, 0);
}

/* flashdecode paged: S = 1 (flash2's loop), S = 3 (partial rows and a combine); grouped-query
 * decode (N = 1) runs packed. */
static void
test_flashdecode_paged(void **state)
{
	(void)state;
	check_paged(ATTN_FLASHDECODE, 1);
	check_paged(ATTN_FLASHDECODE, 3);
}

/* Every phase run alone, in order, computes what the whole kernel computes (outputs and, for
 * naive, S/P bit for bit); the traced build names the phases attn_phase_name() lists. */
static void
test_phases(void **state)
{
	char err[256];

	(void)state;
	for (int k = 0; k < ATTN_KERNEL_COUNT; k++)
		for (const struct shape *s = shapes; s->N; s++)
			for (int causal = 0; causal <= (k == ATTN_PROJ ? 0 : 1); causal++) {
				struct attn_config cfg = {
					.kernel = (enum attn_kernel)k,
					.N = s->N,
					.d = s->d,
					.heads = s->heads,
					.kv_heads = s->kv_heads,
					.batch = s->batch,
					.dtype = s == shapes ? ATTN_FP16 : ATTN_FP32,
					.Br = s->Br,
					.Bc = s->Bc,
					.causal = causal,
					.splits = k == ATTN_FLASHDECODE ? 2 : 0,
				};
				struct attn_data *whole = attn_data_create(&cfg, err, sizeof(err));
				struct attn_data *parts = attn_data_create(&cfg, err, sizeof(err));
				struct spec spec;
				struct cache *c;
				struct trace_ctx *t;
				const char *name;
				unsigned i, j;

				assert_non_null(whole);
				assert_non_null(parts);
				attn_data_fill(whole, seed);
				attn_data_fill(parts, seed);
				attn_data_poison(whole);
				attn_data_poison(parts);
				attn_run_native(whole);
				for (i = 0; (name = attn_phase_name(cfg.kernel, i)); i++)
					assert_int_equal(attn_run_native_phase(parts, name), 0);
				assert_true(i > 0);
				if (!outputs_equal(whole, parts))
					fail_msg("%s: the phases run one by one computed something "
						 "else than the whole kernel",
						 attn_kernel_name(cfg.kernel));
				if (k == ATTN_NAIVE)
					assert_memory_equal(whole->S, parts->S,
							    cfg.batch * cfg.heads * cfg.N * cfg.N *
								    dtype_bytes(cfg.dtype));
				assert_int_equal(attn_run_native_phase(parts, "no-such-phase"),
						 -EINVAL);
				assert_int_equal(attn_run_native_phase(parts, k == ATTN_PROJ
										      ? "scores"
										      : "qkv_proj"),
						 -EINVAL);

				/* The traced build's phases, in order (0 is the unnamed one). */
				assert_int_equal(spec_parse("L1=4K:4:64", &spec, err, sizeof(err)),
						 0);
				c = cache_create(&spec.cache);
				t = trace_ctx_create(c, NULL, 0);
				attn_run_traced(parts, t);
				trace_ctx_destroy(t);
				/* flashdecode at S = 1 (one key block here) runs no combine */
				if (k == ATTN_FLASHDECODE && attn_splits(&cfg) == 1)
					i--;
				assert_int_equal(cache_phase_count(c), i + 1);
				for (j = 0; j < i; j++)
					assert_string_equal(cache_phase_name(c, j + 1),
							    attn_phase_name(cfg.kernel, j));
				cache_destroy(c);
				attn_data_destroy(whole);
				attn_data_destroy(parts);
			}
}

/* The phases' FLOPs add up to the kernel's, exactly; unknown phases are NAN. */
static void
test_phase_flops(void **state)
{
	(void)state;
	for (int k = 0; k < ATTN_KERNEL_COUNT; k++)
		for (const struct shape *s = shapes; s->N; s++)
			for (int causal = 0; causal <= 1; causal++) {
				struct attn_config cfg = {
					.kernel = (enum attn_kernel)k,
					.N = s->N,
					.d = s->d,
					.heads = s->heads,
					.kv_heads = s->kv_heads,
					.batch = s->batch,
					.dtype = ATTN_FP32,
					.Br = s->Br,
					.Bc = s->Bc,
					.causal = causal,
				};
				double sum = 0;
				const char *name;

				for (unsigned i = 0; (name = attn_phase_name(cfg.kernel, i)); i++) {
					double f = attn_phase_flops(&cfg, name);

					assert_false(isnan(f));
					assert_true(f >= 0);
					sum += f;
				}
				if (sum != attn_flops(&cfg))
					fail_msg(
						"%s: phases sum to %.0f FLOPs, attn_flops says %.0f",
						attn_kernel_name(cfg.kernel), sum,
						attn_flops(&cfg));
				assert_true(isnan(attn_phase_flops(&cfg, "no-such-phase")));
			}
	/* The lab's counts, T = 64, d_model = 64, 4 heads of 16. */
	{
		struct attn_config c = { ATTN_PROJ, 64,    16,    4, 4, 1, ATTN_FP32, 64,
					 64,        false, false, 0, 0, 0, 0,         0 };

		assert_true(attn_phase_flops(&c, "qkv_proj") == 3 * 2.0 * 64 * 64 * 64);
		assert_true(attn_phase_flops(&c, "out_proj") == 2.0 * 64 * 64 * 64);
		c.kernel = ATTN_NAIVE;
		assert_true(attn_phase_flops(&c, "scores") == 4 * 2.0 * 64 * 64 * 16);
		assert_true(attn_phase_flops(&c, "softmax") == 4 * 5.0 * 64 * 64);
		assert_true(attn_phase_flops(&c, "av") == 4 * 2.0 * 64 * 64 * 16);
		/* N_kv keys: N N_kv scores, N (N + 1) / 2 + N (N_kv - N) under the end-aligned
		 * mask */
		c.N = 4;
		c.N_kv = 100;
		assert_true(attn_phase_flops(&c, "softmax") == 4 * 5.0 * 4 * 100);
		c.causal = true;
		assert_true(attn_phase_flops(&c, "softmax") == 4 * 5.0 * (4 * 5 / 2 + 4 * 96));
		c.kernel = ATTN_FLASH2;
		assert_true(attn_flops(&c) == 4 * (4.0 * 16 + 5) * (4 * 5 / 2 + 4 * 96));
		c.causal = false;
		c.N = 64;
		c.N_kv = 0;
		c.kernel = ATTN_FLASH1;
		assert_true(attn_phase_flops(&c, "init") == 0);
	}
}

/* A kernel that skipped an output element would leave the poison: check the check. */
static void
test_poison_is_caught(void **state)
{
	struct attn_config cfg = { ATTN_FLASH2, 40,    16,    1, 1, 1, ATTN_FP32, 16,
				   16,          false, false, 0, 0, 0, 0,         0 };
	char err[256];
	struct attn_data *d = attn_data_create(&cfg, err, sizeof(err));
	struct attn_error e;

	(void)state;
	attn_data_fill(d, seed);
	attn_data_poison(d);
	attn_run_native(d);
	((float *)d->O)[37] = NAN;
	e = attn_check(d);
	assert_false(e.pass);
	assert_int_equal(e.nonfinite, 1);
	attn_data_destroy(d);
}

/* The kernels' inline exp against exp() in double: within one ulp of fp32 (2^-23 relative)
 * over the softmax's range, 0 for masked scores and underflow. */
static void
test_exp(void **state)
{
	double worst = 0;

	(void)state;
	for (long i = 0; i <= 8700000; i++) {
		float x = -(float)i * 1e-5f;
		double e = exp((double)x), rel = fabs(attn_exp(x) - e) / e;

		worst = rel > worst ? rel : worst;
	}
	printf("# attn_exp: worst relative error %.3e over [-87, 0]\n", worst);
	assert_true(worst < 1.2e-7);
	assert_true(attn_exp(0.0f) == 1.0f);
	assert_true(attn_exp(-INFINITY) == 0.0f);
	assert_true(attn_exp(-100.0f) == 0.0f);
	assert_true(attn_exp(-87.0f) > 0.0f);
}

static void
test_bad_configs(void **state)
{
	static const struct {
		struct attn_config cfg;
		const char *msg;
	} bad[] = {
		{ { ATTN_NAIVE, 0, 64, 1, 1, 1, ATTN_FP32, 64, 64, false, false, 0, 0, 0, 0, 0 },
		  "--N must be" },
		{ { ATTN_NAIVE, 64, 0, 1, 1, 1, ATTN_FP32, 64, 64, false, false, 0, 0, 0, 0, 0 },
		  "--d must be" },
		{ { ATTN_NAIVE, 64, 64, 4, 3, 1, ATTN_FP32, 64, 64, false, false, 0, 0, 0, 0, 0 },
		  "--kv-heads 3 does not divide --heads 4" },
		{ { ATTN_FLASH2, 64, 64, 1, 1, 1, ATTN_FP32, 0, 64, false, false, 0, 0, 0, 0, 0 },
		  "--Br must be" },
		{ { ATTN_FLASH2, 64, 64, 1, 1, 1, ATTN_FP32, 64, 0, false, false, 0, 0, 0, 0, 0 },
		  "--Bc must be" },
		{ { ATTN_NAIVE, 1000000, 64, 1, 1, 1, ATTN_FP32, 64, 64, false, false, 0, 0, 0, 0,
		    0 },
		  "the arrays and tiles need 37" },
		{ { ATTN_NAIVE, UINT64_C(1) << 40, 64, 1, 1, 1, ATTN_FP32, 64, 64, false, false, 0,
		    0, 0, 0, 0 },
		  "more than 2^64 bytes" },
		/* S and P of 2^63 bytes each: their sum is past 2^64, not small. */
		{ { ATTN_NAIVE, UINT64_C(1) << 31, 1, 1, 1, 1, ATTN_FP16, 64, 64, false, true, 0, 0,
		    0, 0, 0 },
		  "more than 2^64 bytes" },
		/* Small arrays, tiles of 256 GiB. */
		{ { ATTN_FLASH2, 64, 65536, 1, 1, 1, ATTN_FP32, 1 << 20, 1 << 20, false, false, 0,
		    0, 0, 0, 0 },
		  "the arrays and tiles need" },
		{ { ATTN_FLASHDECODE, 64, 64, 1, 1, 1, ATTN_FP32, 64, 64, false, true, 0, 0, 0, 0,
		    0 },
		  "--softmax-separate is for --kernel naive, not flashdecode" },
		{ { ATTN_FLASH2, 64, 64, 1, 1, 1, ATTN_FP32, 64, 64, false, false, 0, 2, 0, 0, 0 },
		  "--splits is for --kernel flashdecode, not flash2" },
		{ { ATTN_FLASH1, 64, 64, 1, 1, 1, ATTN_FP32, 64, 64, false, false, 0, 0, 0, 16, 1 },
		  "--kv-page is for --kernel flash2 or flashdecode, not flash1" },
		{ { ATTN_NAIVE, 64, 64, 1, 1, 1, ATTN_FP32, 64, 64, false, false, 0, 0, 0, 16, 1 },
		  "--kv-page is for --kernel flash2 or flashdecode, not naive" },
		/* 2^31 pages of one token: past the int32 table */
		{ { ATTN_FLASH2, 1, 1, 1, 1, 2, ATTN_FP32, 1, 1, false, false, UINT64_C(1) << 30, 0,
		    0, 1, 1 },
		  "past the int32 block table's 2^31 pages" },
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_not_equal(attn_config_check(&bad[i].cfg, err, sizeof(err)), 0);
		if (!strstr(err, bad[i].msg))
			fail_msg("message '%s' lacks '%s'", err, bad[i].msg);
	}
}

/* The same configuration gives the same counters whatever the process did before: the arrays
 * sit at the same addresses modulo 2^30 (kernels/attn.c's arena), so a set-associative
 * hierarchy maps them to the same sets after other runs and allocations of any size. */
static void
test_counters_reproducible(void **state)
{
	static const struct attn_config cfgs[] = {
		{ ATTN_NAIVE, 300, 48, 2, 1, 1, ATTN_FP32, 32, 48, false, false, 0, 0, 0, 0, 0 },
		{ ATTN_FLASH2, 512, 64, 1, 1, 1, ATTN_FP16, 64, 32, true, false, 0, 0, 0, 0, 0 },
	};
	struct spec spec;
	char err[256];
	void *junk[16];

	(void)state;
	assert_int_equal(spec_parse("L1=32K:8:64,L2=256K:4:64,L3=2M:8:64", &spec, err, sizeof(err)),
			 0);
	for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++) {
		struct sim_result a, b;

		assert_int_equal(sim_kernel(&cfgs[k], &spec, true, 5, false, &a, err, sizeof(err)),
				 0);
		/* Other runs and allocations of odd sizes move the heap and the mappings. */
		for (int i = 0; i < 16; i++) {
			junk[i] = malloc((size_t)(4096 * 37 * (i + 1) + 1234 * i));
			assert_non_null(junk[i]);
			memset(junk[i], i, 100);
		}
		assert_int_equal(
			sim_kernel(&cfgs[1 - k], &spec, true, 5, false, &b, err, sizeof(err)), 0);
		sim_result_finish(&b);
		assert_int_equal(sim_kernel(&cfgs[k], &spec, true, 5, false, &b, err, sizeof(err)),
				 0);
		for (int i = 0; i < 16; i += 2)
			free(junk[i]);
		for (unsigned i = 0; i < cache_level_count(a.cache); i++)
			assert_memory_equal(cache_level_stats(a.cache, i),
					    cache_level_stats(b.cache, i),
					    sizeof(struct cache_level_stats));
		assert_memory_equal(cache_dram(a.cache), cache_dram(b.cache),
				    sizeof(struct cache_traffic));
		for (int i = 1; i < 16; i += 2)
			free(junk[i]);
		sim_result_finish(&a);
		sim_result_finish(&b);
	}
}

int
main(void)
{
	const char *env = getenv("MEMSIM_TEST_SEED");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_naive),
		cmocka_unit_test(test_flash1),
		cmocka_unit_test(test_flash2),
		cmocka_unit_test(test_flash2_nkv),
		cmocka_unit_test(test_flash2_paged),
		cmocka_unit_test(test_flashdecode_paged),
		cmocka_unit_test(test_flashdecode),
		cmocka_unit_test(test_flashdecode_nkv),
		cmocka_unit_test(test_flashdecode_arrays),
		cmocka_unit_test(test_flashdecode_gqa),
		cmocka_unit_test(test_flashdecode_packed_when),
		cmocka_unit_test(test_naive_nkv),
		cmocka_unit_test(test_proj),
		cmocka_unit_test(test_phases),
		cmocka_unit_test(test_phase_flops),
		cmocka_unit_test(test_poison_is_caught),
		cmocka_unit_test(test_exp),
		cmocka_unit_test(test_bad_configs),
		cmocka_unit_test(test_counters_reproducible),
	};

	seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	printf("# inputs from seed %llu (MEMSIM_TEST_SEED=%llu repeats this run)\n",
	       (unsigned long long)seed, (unsigned long long)seed);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
