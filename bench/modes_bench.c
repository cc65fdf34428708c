/*
 * The timings of `memsim bench --modes` (bench/modes_bench.h).
 */

#include "bench/modes_bench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "run/simulate.h"

#define SAMPLE_SETS 8


static double
dram_bytes(struct cache *c)
{
	const struct cache_traffic *t = cache_dram(c);

	return (double)t->read_bytes + (double)t->write_bytes;
}

bool
modes_bench_same_totals(struct cache *a, struct cache *b)
{
	if (cache_level_count(a) != cache_level_count(b) ||
	    memcmp(cache_dram(a), cache_dram(b), sizeof(struct cache_traffic)))
		return false;
	for (unsigned i = 0; i < cache_level_count(a); i++)
		if (memcmp(cache_level_stats(a, i), cache_level_stats(b, i),
			   sizeof(struct cache_level_stats)))
			return false;
	return true;
}

/* 12 sizes of L2 in spec l2 (a spec's L2 with its size left to each run): separately, then in
 * one pass with each method hows[0 .. nhow). Fills rows[0] (separate) and rows[1 ..] (one
 * pass each); same[i] says whether every size's counters agree for hows[i]. */
int
modes_bench_sweep(const struct attn_config *cfg, const char *l2, const enum cache_onepass *hows,
		  unsigned nhow, struct mode_row *rows, bool *same, char *err, size_t errlen)
{
	struct sim_result sep[SWEEP_SIZES], pass[SWEEP_SIZES];
	uint64_t sizes[SWEEP_SIZES];
	struct spec spec;
	char text[256];
	double t0, t_sep, t_pass;
	int rc = -1;

	snprintf(text, sizeof(text), "%s,%s", MODES_BENCH_L1, l2);
	if (spec_parse(text, &spec, err, errlen))
		return -1;
	for (unsigned k = 0; k < SWEEP_SIZES; k++)
		sizes[k] = MODES_BENCH_L2_FIRST << k;
	for (unsigned h = 0; h < nhow; h++)
		if (cache_onepass_method(&spec.cache, 1, sizes, SWEEP_SIZES, NULL) < hows[h]) {
			snprintf(err, errlen, "one pass (%s) does not apply to %s",
				 cache_onepass_str(hows[h]), text);
			return -1;
		}
	t0 = cpu_seconds();
	for (unsigned k = 0; k < SWEEP_SIZES; k++) {
		struct spec one = spec;

		if (cache_config_resize(&spec.cache, 1, sizes[k], &one.cache, err, errlen) ||
		    sim_kernel_trace_only(cfg, &one, true, &sep[k], err, errlen))
			return -1; /* a bench of a valid config: never reached */
	}
	t_sep = cpu_seconds() - t0;
	/* "one run": the mean of the twelve separate runs. */
	rows[0] = (struct mode_row){ NULL, t_sep, SWEEP_SIZES, -1, 0, "" };
	for (unsigned h = 0; h < nhow; h++) {
		t0 = cpu_seconds();
		if (sim_kernel_onepass(cfg, &spec, 1, sizes, SWEEP_SIZES, hows[h], true, 1, true,
				       pass, err, errlen))
			goto out_sep;
		t_pass = cpu_seconds() - t0;
		same[h] = true;
		for (unsigned k = 0; k < SWEEP_SIZES; k++) {
			if (!modes_bench_same_totals(sep[k].cache, pass[k].cache))
				same[h] = false;
			sim_result_finish(&pass[k]);
		}
		rows[1 + h] =
			(struct mode_row){ NULL,           t_pass, t_pass / (t_sep / SWEEP_SIZES),
					   t_pass / t_sep, 0,      "" };
	}
	rc = 0;
out_sep:
	for (unsigned k = 0; k < SWEEP_SIZES; k++)
		sim_result_finish(&sep[k]);
	return rc;
}

/* One exact trace-only run and one sampled run of cfg on spec: times and the error. */
int
modes_bench_sample(const struct attn_config *cfg, const struct spec *spec, struct mode_row *full,
		   struct mode_row *est, char *err, size_t errlen)
{
	struct sim_result a, b;
	struct spec s = *spec;
	double t0 = cpu_seconds(), ta, tb;

	if (sim_kernel_trace_only(cfg, spec, true, &a, err, errlen))
		return -1;
	ta = cpu_seconds() - t0;
	s.cache.sample_sets = SAMPLE_SETS;
	t0 = cpu_seconds();
	if (sim_kernel_trace_only(cfg, &s, true, &b, err, errlen)) {
		sim_result_finish(&a);
		return -1;
	}
	tb = cpu_seconds() - t0;
	*full = (struct mode_row){ NULL, ta, 1, -1, 0, "" };
	*est = (struct mode_row){
		NULL,
		tb,
		tb / ta,
		-1,
		fabs(dram_bytes(b.cache) - dram_bytes(a.cache)) / dram_bytes(a.cache),
		""
	};
	sim_result_finish(&a);
	sim_result_finish(&b);
	return 0;
}
