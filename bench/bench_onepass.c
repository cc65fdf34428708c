/*
 * `memsim bench --onepass` (bench/bench_onepass.h): one pass against one run, repeated.
 */

#include "bench/bench_onepass.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report.h"
#include "base/util.h"
#include "bench/modes_bench.h"
#include "cli/commands.h"
#include "run/simulate.h"

#define ONEPASS_REPEAT_MAX 100

/* The methods timed, in the order of their rows, and the most each may cost over one run. */
static const enum cache_onepass hows[] = { CACHE_ONEPASS_STACK, CACHE_ONEPASS_FANOUT };
static const double targets[] = { 1.5, 2.0 };
#define NHOW (sizeof(hows) / sizeof(hows[0]))

/* Each repeat's one run (seconds) and each method's time over it. */
struct onepass_bench {
	double one[ONEPASS_REPEAT_MAX];
	double ratio[NHOW][ONEPASS_REPEAT_MAX];
	double median[NHOW], worst[NHOW];
	bool same;
};

/* The median of v[0 .. n), n >= 1 (v is left as it was). */
static double
median_of(const double *v, unsigned n)
{
	double s[ONEPASS_REPEAT_MAX];

	memcpy(s, v, n * sizeof(*v));
	sort_doubles(s, n);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* The twelve sizes' separate runs of one repeat in ROUNDS groups, one pass by each method
 * timed around each group: the machine's drift during the repeat falls on both alike. */
#define ROUNDS 3

/* One round's one passes: their times into t[h]; where the separate runs are all done
 * (sep), whether each method's counters equal theirs into *same. */
static int
time_passes(const struct attn_config *cfg, const struct spec *spec, const uint64_t *sizes,
	    struct sim_result *sep, double t[NHOW], bool *same, char *err, size_t errlen)
{
	for (unsigned h = 0; h < NHOW; h++) {
		struct sim_result out[SWEEP_SIZES];
		double t0 = cpu_seconds();

		if (sim_kernel_onepass(cfg, spec, 1, sizes, SWEEP_SIZES, hows[h], true, 1, true,
				       out, err, errlen))
			return -1;
		t[h] = cpu_seconds() - t0;
		for (unsigned k = 0; k < SWEEP_SIZES; k++) {
			if (sep)
				*same &= modes_bench_same_totals(sep[k].cache, out[k].cache);
			sim_result_finish(&out[k]);
		}
	}
	return 0;
}

/* One repeat: one run's time (the mean of the separate runs) into *one, each method's over it
 * (the median of its rounds) into ratio[h]; *same false where a one pass's counters differ.
 * The rounds' passes go before each group of separate runs, and once more after the last,
 * whose counters are compared. */
static int
onepass_repeat(const struct attn_config *cfg, const struct spec *spec, const uint64_t *sizes,
	       double *one, double ratio[NHOW], bool *same, char *err, size_t errlen)
{
	struct sim_result sep[SWEEP_SIZES];
	double t[NHOW][ROUNDS + 1], t_sep = 0;
	unsigned done = 0;
	int rc = -1;

	for (unsigned r = 0; r <= ROUNDS; r++) {
		double tr[NHOW];

		if (time_passes(cfg, spec, sizes, r == ROUNDS ? sep : NULL, tr, same, err, errlen))
			goto out;
		for (unsigned h = 0; h < NHOW; h++)
			t[h][r] = tr[h];
		for (; r < ROUNDS && done < SWEEP_SIZES * (r + 1) / ROUNDS; done++) {
			struct spec one_spec = *spec;
			double t0 = cpu_seconds();

			if (cache_config_resize(&spec->cache, 1, sizes[done], &one_spec.cache, err,
						errlen) ||
			    sim_kernel_trace_only(cfg, &one_spec, true, &sep[done], err, errlen))
				goto out;
			t_sep += cpu_seconds() - t0;
		}
	}
	*one = t_sep / SWEEP_SIZES;
	for (unsigned h = 0; h < NHOW; h++)
		ratio[h] = median_of(t[h], ROUNDS + 1) / *one;
	rc = 0;
out:
	for (unsigned k = 0; k < done; k++)
		sim_result_finish(&sep[k]);
	return rc;
}

static int
onepass_measure(const struct attn_config *cfg, unsigned repeat, struct onepass_bench *b)
{
	uint64_t sizes[SWEEP_SIZES];
	struct spec spec;
	char err[512];

	if (spec_parse(MODES_BENCH_L1 ",L2=1M:8:64", &spec, err, sizeof(err)))
		return print_error("bench: %s", err);
	for (unsigned k = 0; k < SWEEP_SIZES; k++)
		sizes[k] = MODES_BENCH_L2_FIRST << k;
	b->same = true;
	for (unsigned r = 0; r < repeat; r++) {
		double ratio[NHOW];

		if (onepass_repeat(cfg, &spec, sizes, &b->one[r], ratio, &b->same, err,
				   sizeof(err)))
			return print_error("bench: %s", err);
		for (unsigned h = 0; h < NHOW; h++)
			b->ratio[h][r] = ratio[h];
		fprintf(stderr, "bench: repeat %u of %u done\n", r + 1, repeat);
	}
	for (unsigned h = 0; h < NHOW; h++) {
		b->median[h] = median_of(b->ratio[h], repeat);
		b->worst[h] = 0;
		for (unsigned r = 0; r < repeat; r++)
			if (b->ratio[h][r] > b->worst[h])
				b->worst[h] = b->ratio[h][r];
	}
	return EXIT_OK;
}

static void
onepass_print(FILE *out, const struct onepass_bench *b, const char *kernel, uint64_t N,
	      unsigned repeat)
{
	fprintf(out,
		"memsim bench --onepass: %s N=%llu d=64 fp32, cache %s,L2=8-way; 12 L2 sizes 64K to "
		"128M (x2)\n\n%-8s %12s %14s %14s\n",
		kernel, (unsigned long long)N, MODES_BENCH_L1, "repeat", "one run s", "stack/one",
		"fanout/one");
	for (unsigned r = 0; r < repeat; r++)
		fprintf(out, "%-8u %12.4f %14.3f %14.3f\n", r + 1, b->one[r], b->ratio[0][r],
			b->ratio[1][r]);
	fprintf(out, "%-8s %12s %14.3f %14.3f\n", "median", "", b->median[0], b->median[1]);
	for (unsigned h = 0; h < NHOW; h++)
		fprintf(out,
			"\none pass (%s) / one run: median %.3f, worst %.3f; target <= %.1f "
			"in every run: %s",
			cache_onepass_str(hows[h]), b->median[h], b->worst[h], targets[h],
			b->worst[h] <= targets[h] ? "met" : "MISSED");
	fprintf(out,
		"\n\nProcessor time of this process (one thread). One run: one L2 size run alone, "
		"trace-only,\nthe mean of the twelve sizes run separately in the repeat. One pass: "
		"the median of\n%d, timed before, between and after three groups of those runs. "
		"Counters of both\none passes equal to the separate runs': %s.\n",
		ROUNDS + 1, b->same ? "yes" : "NO");
}

static int
onepass_json(const struct onepass_bench *b, const char *kernel, uint64_t N, unsigned repeat,
	     const char *json_path, int argc, char **argv)
{
	cJSON *root = cJSON_CreateObject();
	char err[512];
	int rc = EXIT_OK;

	report_add_header(root, argc, argv);
	cJSON_AddStringToObject(root, "kernel", kernel);
	cJSON_AddNumberToObject(root, "N", (double)N);
	cJSON_AddBoolToObject(root, "onepass_counters_equal", b->same);
	cJSON_AddItemToObject(root, "one_run_seconds",
			      cJSON_CreateDoubleArray(b->one, (int)repeat));
	for (unsigned h = 0; h < NHOW; h++) {
		cJSON *o = cJSON_AddObjectToObject(root, cache_onepass_str(hows[h]));

		cJSON_AddItemToObject(o, "x_one_run",
				      cJSON_CreateDoubleArray(b->ratio[h], (int)repeat));
		cJSON_AddNumberToObject(o, "median", b->median[h]);
		cJSON_AddNumberToObject(o, "worst", b->worst[h]);
		cJSON_AddNumberToObject(o, "target", targets[h]);
	}
	if (report_write_json(json_path, root, err, sizeof(err)))
		rc = print_error("%s", err);
	cJSON_Delete(root);
	return rc;
}

int
bench_onepass(const char *kernel, uint64_t N, unsigned repeat, const char *json_path, int argc,
	      char **argv)
{
	struct attn_config cfg = { ATTN_NAIVE, N,     64,    1, 1, 1, ATTN_FP32, 64,
				   64,         false, false, 0, 0, 0, 0,         0 };
	struct onepass_bench b;
	char err[512];
	int rc;

	if (!attn_kernel_parse(kernel, &cfg.kernel))
		return usage_error("bench", "--kernel: unknown kernel '%s'", kernel);
	if (attn_config_check(&cfg, err, sizeof(err)))
		return usage_error("bench", "%s", err);
	if (repeat > ONEPASS_REPEAT_MAX)
		return usage_error("bench", "--repeat: at most %d", ONEPASS_REPEAT_MAX);
	rc = onepass_measure(&cfg, repeat, &b);
	if (rc)
		return rc;
	onepass_print(text_stream(json_path), &b, kernel, N, repeat);
	rc = b.same ? EXIT_OK : EXIT_RUNTIME;
	if (json_path && onepass_json(&b, kernel, N, repeat, json_path, argc, argv))
		rc = EXIT_RUNTIME;
	return rc;
}
