/*
 * Set sampling (cache_config.sample_sets) against full runs: the DRAM bytes and each level's
 * misses of the estimate, on several kernels, sizes and caches with 4 and 8 as the factor,
 * must lie within SAMPLING_BOUND and SAMPLING_MISS_BOUND of the full run's (relative errors;
 * the largest measured are printed). Also: the estimate is labelled in the model's config, and the counts not sampled
 * (the processor's) stay exact.
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/attn.h"
#include "kernels/simulate.h"
#include "sim/spec.h"
#include "tests/unit.h"

/* The bounds the README states (relative error of DRAM bytes, of each level's misses); the
 * printed maxima are what this run measured. */
#define SAMPLING_BOUND 0.10
#define SAMPLING_MISS_BOUND 0.15

static const char *caches[] = {
	"L1=32K:8:64,L2=256K:8:64",
	"L1=16K:4:64,L2=1M:16:64",
	"L1=64K:8:64",
	"L1=32K:8:64,L2=512K:8:128",
};

static const struct attn_config configs[] = {
	{ .kernel = ATTN_NAIVE, .N = 384, .d = 64, .heads = 2, .kv_heads = 2, .batch = 1,
	  .dtype = ATTN_FP32, .Br = 64, .Bc = 64 },
	{ .kernel = ATTN_FLASH2, .N = 512, .d = 64, .heads = 2, .kv_heads = 1, .batch = 1,
	  .dtype = ATTN_FP32, .Br = 64, .Bc = 64, .causal = true },
	{ .kernel = ATTN_FLASH1, .N = 512, .d = 32, .heads = 1, .kv_heads = 1, .batch = 1,
	  .dtype = ATTN_FP16, .Br = 32, .Bc = 64 },
};

static double
rel_err(double est, double full)
{
	return full > 0 ? fabs(est - full) / full : (est > 0 ? 1 : 0);
}

static double
dram_total(struct cache *c)
{
	const struct cache_traffic *t = cache_dram(c);

	return (double)t->read_bytes + (double)t->write_bytes;
}

static void
test_error_bound(void **state)
{
	static const uint32_t factors[] = { 4, 8 };
	double worst = 0, worst_miss = 0, sum = 0;
	unsigned runs = 0;

	(void)state;
	for (size_t ci = 0; ci < sizeof(caches) / sizeof(caches[0]); ci++) {
		struct spec spec;
		char err[256];

		assert_int_equal(spec_parse(caches[ci], &spec, err, sizeof(err)), 0);
		for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
			struct sim_result full;

			assert_int_equal(sim_kernel_trace_only(&configs[i], &spec, true, &full, err,
							       sizeof(err)),
					 0);
			for (size_t f = 0; f < sizeof(factors) / sizeof(factors[0]); f++) {
				struct spec s = spec;
				struct sim_result est;
				double e;

				s.cache.sample_sets = factors[f];
				assert_int_equal(sim_kernel_trace_only(&configs[i], &s, true, &est,
								       err, sizeof(err)),
						 0);
				assert_int_equal(cache_get_config(est.cache)->sample_sets,
						 factors[f]);
				assert_memory_equal(cache_cpu(est.cache), cache_cpu(full.cache),
						    sizeof(struct cache_cpu_stats));
				e = rel_err(dram_total(est.cache), dram_total(full.cache));
				print_message("# %s %s 1/%u: DRAM bytes off by %.2f%%\n",
					      caches[ci], attn_kernel_name(configs[i].kernel),
					      factors[f], 100 * e);
				if (e > worst)
					worst = e;
				sum += e;
				runs++;
				for (unsigned l = 0; l < cache_level_count(full.cache); l++) {
					const struct cache_level_stats *a =
						cache_level_stats(est.cache, l);
					const struct cache_level_stats *b =
						cache_level_stats(full.cache, l);
					double m = rel_err((double)(a->read_misses + a->write_misses),
							   (double)(b->read_misses + b->write_misses));

					if (m > worst_miss)
						worst_miss = m;
				}
				assert_true(e < SAMPLING_BOUND);
				sim_result_finish(&est);
			}
			sim_result_finish(&full);
		}
	}
	print_message("# %u estimates: DRAM bytes off by %.2f%% at most, %.2f%% on average; "
		      "level misses off by %.2f%% at most (bounds %.0f%%, %.0f%%)\n",
		      runs, 100 * worst, 100 * sum / runs, 100 * worst_miss, 100 * SAMPLING_BOUND,
		      100 * SAMPLING_MISS_BOUND);
	assert_true(worst_miss < SAMPLING_MISS_BOUND);
}

/* Sampling is refused where a level has no sets to sample, with a one-line reason. */
static void
test_refused(void **state)
{
	static const char *bad[] = { "L1=32K:full:64", "L1=32K:8:64,L2=1M:full:64", "L1=1K:8:64",
				     "none", NULL };
	struct spec spec;
	char err[256];

	(void)state;
	for (int i = 0; bad[i]; i++) {
		assert_int_equal(spec_parse(bad[i], &spec, err, sizeof(err)), 0);
		spec.cache.sample_sets = 4;
		assert_int_not_equal(cache_config_validate(&spec.cache, err, sizeof(err)), 0);
		assert_null(strchr(err, '\n'));
		assert_non_null(strstr(err, "--sample-sets 4"));
		assert_null(cache_create(&spec.cache));
	}
	assert_int_equal(spec_parse("L1=32K:8:64", &spec, err, sizeof(err)), 0);
	spec.cache.sample_sets = 3;
	assert_int_not_equal(cache_config_validate(&spec.cache, err, sizeof(err)), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_bound),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
