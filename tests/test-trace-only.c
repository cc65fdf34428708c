/*
 * The kernels' trace-only forms against their computing traced runs: every counter the model
 * keeps must be equal, bit for bit (every level's counts, DRAM traffic in total, per array,
 * per phase and per phase and array, every phase's level counts, the processor's operations
 * and bytes, scratch bytes per array). Every kernel, causal and not, grouped-query heads,
 * batch 2, each dtype, sizes that are not powers of two with partial tiles, on caches that
 * take each path of the tracing layer: tiles in memory and in scratch, the inline fast path,
 * merging off it (a fully associative L1), write-validate (granules of 2 and 4 bytes),
 * write-through, no-write-allocate, 2 ways (TR_ZIP reports elements), tree-PLRU, random,
 * FIFO with an inclusive L2, no cache; flash2 with paged K/V. Also: the trace-only arena commits no
 * memory.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/attn.h"
#include "run/simulate.h"
#include "sim/spec.h"
#include "tests/counters.h"
#include "tests/unit.h"

struct shape {
	uint64_t N, d, heads, kv_heads, batch, Br, Bc;
	uint64_t N_kv; /* 0: N */
};

static const struct shape shapes[] = {
	{ 100, 24, 4, 2, 2, 16, 48, 0 }, /* GQA 2:1, batch 2, partial tiles both ways */
	{ 160, 40, 4, 2, 1, 48, 16, 0 }, /* B_r > B_c */
	{ 300, 64, 1, 1, 1, 64, 80, 0 }, /* d of whole lines, B_c not dividing N */
	{ 130, 40, 2, 1, 1, 80, 64, 0 }, /* multi-query, B_r past the last block */
	/* queries and keys of different lengths, for the kernels that take them: decode, a
	 * chunked prefill, fewer keys than queries (not causal) */
	{ 3, 24, 4, 2, 2, 16, 48, 290 },
	{ 70, 40, 2, 1, 1, 32, 16, 200 },
	{ 90, 24, 2, 2, 1, 32, 48, 50 },
	/* grouped-query decode, which flashdecode packs (g query heads as g rows): g = 4 below
	 * B_r, g = 8 equal to it, g = 12 past it (blocks of 5, 5, 2) */
	{ 1, 24, 8, 2, 2, 16, 48, 290 },
	{ 1, 40, 8, 1, 1, 8, 16, 200 },
	{ 1, 16, 12, 1, 1, 5, 32, 130 },
};

/* The kernels and settings each shape runs. */
static const struct variant {
	enum attn_kernel kernel;
	bool causal, separate;
	uint64_t splits;  /* flashdecode */
	uint64_t kv_page; /* paged K/V */
} variants[] = {
	{ ATTN_NAIVE, false, false, 0, 0 },
	{ ATTN_NAIVE, true, false, 0, 0 },
	{ ATTN_NAIVE, true, true, 0, 0 },
	{ ATTN_FLASH1, false, false, 0, 0 },
	{ ATTN_FLASH1, true, false, 0, 0 },
	{ ATTN_FLASH2, false, false, 0, 0 },
	{ ATTN_FLASH2, true, false, 0, 0 },
	{ ATTN_PROJ, false, false, 0, 0 },
	/* S = 1; S not dividing the key blocks; every block a split (clamped) */
	{ ATTN_FLASHDECODE, true, false, 1, 0 },
	{ ATTN_FLASHDECODE, false, false, 3, 0 },
	{ ATTN_FLASHDECODE, true, false, 1000, 0 },
	/* paged K/V: pages of 16 (not dividing N_kv), of one token, of 7 across key blocks;
	 * flashdecode's at S = 1 and 3 */
	{ ATTN_FLASH2, false, false, 0, 16 },
	{ ATTN_FLASH2, true, false, 0, 1 },
	{ ATTN_FLASH2, true, false, 0, 7 },
	{ ATTN_FLASHDECODE, true, false, 1, 16 },
	{ ATTN_FLASHDECODE, false, false, 3, 7 },
};

/* Caches, and whether one is slow enough (tiles in memory, every element reported off the fast
 * path) to run the first shape only. With tiles in memory the trace-only form makes the very
 * reports of the computing one, whatever the cache does with them. */
static const struct cache_case {
	const char *spec;
	bool small;
} caches[] = {
	{ "L1=8K:4:64,L2=64K:8:64", false },                      /* tiles in memory, fast path */
	{ "L1=8K:4:64,L2=64K:8:64,tiles=scratch", false },        /* fast path, scratch tiles */
	{ "L1=8K:full:64,tiles=scratch", false },                 /* indexed L1: merging only */
	{ "h100", false },                                        /* write-validate, 128-B lines */
	{ "L1=16K:4:128:wv,L2=64K:8:128,tiles=scratch", false },  /* write-validate that evicts */
	{ "L1=16K:8:256:wv,tiles=scratch", false },               /* 4-byte granules */
	{ "L1=512K:8:256:wv,tiles=scratch", false },              /* the same, S stays */
	{ "L1=8K:4:64:wt,L2=64K:8:64,tiles=scratch", false },     /* write-through */
	{ "L1=8K:4:64:nwa,L2=64K:8:64,tiles=scratch", false },    /* no-write-allocate */
	{ "L1=4K:2:64,L2=32K:4:64", true },                       /* 2 ways: elements reported */
	{ "L1=4K:2:64,L2=32K:4:64,tiles=scratch", false },        /* the same, scratch tiles */
	{ "L1=8K:4:64:plru,L2=64K:8:64", true },                  /* tree-PLRU */
	{ "L1=8K:4:64:random,L2=64K:8:64,tiles=scratch", false }, /* random */
	{ "L1=8K:4:64:fifo,L2=64K:8:64:fifo:incl", false },       /* FIFO, inclusive L2 */
	{ "lab", false },                                         /* no cache */
};

/* Every shape and variant on one cache, each dtype in turn. */
static void
run_cache(const struct cache_case *cc)
{
	const char *text = cc->spec;
	struct spec spec;
	char err[256];
	unsigned runs = 0;

	assert_int_equal(spec_parse(text, &spec, err, sizeof(err)), 0);
	for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++) {
		if (cc->small && si > 0)
			break;
		for (size_t vi = 0; vi < sizeof(variants) / sizeof(variants[0]); vi++) {
			const struct shape *s = &shapes[si];
			const struct variant *v = &variants[vi];
			struct attn_config cfg = {
				.kernel = v->kernel,
				.N = s->N,
				.d = s->d,
				.heads = s->heads,
				.kv_heads = s->kv_heads,
				.batch = s->batch,
				.dtype = (enum attn_dtype)((si + vi) % 3),
				.Br = s->Br,
				.Bc = s->Bc,
				.causal = v->causal,
				.softmax_separate = v->separate,
				.N_kv = s->N_kv,
				.splits = v->splits,
				.kv_page = v->kv_page,
				.kv_seed = 5,
			};
			struct sim_result a, b;

			/* N_kv != N where the kernel refuses it, N > N_kv causal */
			if (attn_config_check_trace_only(&cfg, err, sizeof(err)))
				continue;
			assert_int_equal(
				sim_kernel(&cfg, &spec, true, 7, false, &a, err, sizeof(err)), 0);
			assert_int_equal(
				sim_kernel_trace_only(&cfg, &spec, true, &b, err, sizeof(err)), 0);
			if (!same_counters(a.cache, b.cache))
				fail_msg("%s %s N=%llu N_kv=%llu d=%llu h=%llu/%llu b=%llu Br=%llu "
					 "Bc=%llu%s%s P=%llu on %s: trace-only counters differ",
					 attn_kernel_name(cfg.kernel), attn_dtype_name(cfg.dtype),
					 (unsigned long long)cfg.N,
					 (unsigned long long)attn_nkv(&cfg),
					 (unsigned long long)cfg.d, (unsigned long long)cfg.heads,
					 (unsigned long long)cfg.kv_heads,
					 (unsigned long long)cfg.batch, (unsigned long long)cfg.Br,
					 (unsigned long long)cfg.Bc, cfg.causal ? " causal" : "",
					 cfg.softmax_separate ? " separate" : "",
					 (unsigned long long)cfg.kv_page, text);
			sim_result_finish(&a);
			sim_result_finish(&b);
			runs++;
		}
	}
	print_message("# %s: %u configurations equal\n", text, runs);
}

static void
test_caches(void **state)
{
	run_cache(*state);
}

/*
 * gpucheck's launches: each phase alone on a fresh cache, trace-only against computing.
 */
static void
test_phases(void **state)
{
	struct spec spec;
	char err[256];

	(void)state;
	assert_int_equal(spec_parse("L1=16K:4:128:wv,tiles=scratch", &spec, err, sizeof(err)), 0);
	for (int k = 0; k < ATTN_KERNEL_COUNT; k++) {
		struct attn_config cfg = { .kernel = (enum attn_kernel)k,
					   .N = 130,
					   .d = 40,
					   .heads = 2,
					   .kv_heads = 1,
					   .batch = 1,
					   .dtype = ATTN_FP16,
					   .Br = 48,
					   .Bc = 32,
					   .causal = k != ATTN_PROJ,
					   .splits = k == ATTN_FLASHDECODE ? 3 : 0 };
		struct attn_data *full = attn_data_create(&cfg, err, sizeof(err));
		struct attn_data *addr = attn_data_create_trace_only(&cfg, err, sizeof(err));

		assert_non_null(full);
		assert_non_null(addr);
		attn_data_fill(full, 3);
		for (unsigned i = 0; attn_phase_name(cfg.kernel, i); i++) {
			struct cache *x = cache_create(&spec.cache), *y = cache_create(&spec.cache);
			struct trace_ctx *tx = trace_ctx_create(x, NULL, spec.tiles_in_scratch);
			struct trace_ctx *ty = trace_ctx_create(y, NULL, spec.tiles_in_scratch);

			assert_int_equal(attn_run_traced_phase(full, tx, i), 0);
			assert_int_equal(attn_run_traced_phase(addr, ty, i), 0);
			trace_ctx_destroy(tx);
			trace_ctx_destroy(ty);
			if (!same_counters(x, y))
				fail_msg("%s phase %s: trace-only counters differ",
					 attn_kernel_name(cfg.kernel),
					 attn_phase_name(cfg.kernel, i));
			cache_destroy(x);
			cache_destroy(y);
		}
		attn_data_destroy(full);
		attn_data_destroy(addr);
	}
}

/* Arrays far past this machine's memory (naive at N = 65536 with 32 heads: 256 GiB of S) are
 * address space only: the config passes the trace-only check, not the computing one, and the
 * arena maps; nothing is read or written, so the process does not grow. */
static void
test_no_memory(void **state)
{
	struct attn_config cfg = { .kernel = ATTN_NAIVE,
				   .N = 65536,
				   .d = 128,
				   .heads = 32,
				   .kv_heads = 32,
				   .batch = 1,
				   .dtype = ATTN_FP16,
				   .Br = 64,
				   .Bc = 64 };
	struct attn_data *d;
	char err[256];

	(void)state;
	assert_int_equal(attn_config_check_trace_only(&cfg, err, sizeof(err)), 0);
	assert_int_not_equal(attn_config_check(&cfg, err, sizeof(err)), 0);
	d = attn_data_create_trace_only(&cfg, err, sizeof(err));
	if (!d)
		fail_msg("%s", err);
	assert_true(d->trace_only);
	assert_true(d->arena_bytes >= attn_array_bytes(&cfg));
	assert_int_equal((uintptr_t)d->arena % (UINT64_C(1) << 30), 0);
	attn_data_fill(d, 1); /* nothing: there are no values */
	attn_data_poison(d);
	attn_data_destroy(d);
	/* Past 2^64 bytes is refused in both modes. */
	cfg.N = UINT64_C(1) << 40;
	assert_int_not_equal(attn_config_check_trace_only(&cfg, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "more than 2^64 bytes"));
}

int
main(void)
{
	enum { NCACHES = sizeof(caches) / sizeof(caches[0]) };
	struct CMUnitTest tests[NCACHES + 2];

	for (size_t i = 0; i < NCACHES; i++)
		tests[i] = (struct CMUnitTest){ caches[i].spec, test_caches, NULL, NULL,
						(void *)&caches[i] };
	tests[NCACHES] = (struct CMUnitTest)cmocka_unit_test(test_phases);
	tests[NCACHES + 1] = (struct CMUnitTest)cmocka_unit_test(test_no_memory);
	return _cmocka_run_group_tests("trace-only", tests, NCACHES + 2, NULL, NULL);
}
