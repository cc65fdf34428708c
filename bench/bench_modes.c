#include "bench/bench_modes.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/formulas.h"
#include "analysis/report.h"
#include "base/util.h"
#include "bench/modes_bench.h"
#include "cli/commands.h"
#include "run/simulate.h"
#include "sim/spec.h"

#define MISS_SPEC "L1=1M:16:128:wv,tiles=scratch"

enum {
	R_COMPUTING,
	R_TRACE_ONLY,
	R_SEP_SET,
	R_FANOUT,
	R_STACK_SETS,
	R_SEP_FULL,
	R_STACK,
	R_SAMPLED,
	R_TRACE_MISS,
	R_SAMPLED_MISS,
	R_FORMULA,
	R_COUNT
};

/* The comparison's inputs and results. */
struct modes_bench {
	struct attn_config cfg, miss_cfg;
	struct spec spec, miss_spec;
	char base[128];
	struct mode_row rows[R_COUNT];
	bool same_set[2], same_full;
};

/* Times every mode into m->rows; -1 with a message in err if a run fails. */
static int
modes_measure(struct modes_bench *m, char *err, size_t errlen)
{
	static const char *names[R_COUNT] = {
		"computing run (exact)",
		"trace-only run (exact)",
		"12 L2 sizes, 8-way, separately",
		"12 L2 sizes, 8-way, one pass (fanout)",
		"12 L2 sizes, 8-way, one pass (stack)",
		"12 L2 sizes, full, separately",
		"12 L2 sizes, full, one pass (stack)",
		"trace-only, sampled 1 set in 8",
		"miss-bound trace-only (exact)",
		"miss-bound, sampled 1 set in 8",
		"formulas only",
	};
	static const char *targets[R_COUNT] = {
		"", "", "", "", "<= 1.5 x one", "", "<= 1.5 x one", "", "", "< 1 x one", ""
	};
	static const enum cache_onepass set_hows[] = { CACHE_ONEPASS_FANOUT, CACHE_ONEPASS_STACK };
	static const enum cache_onepass full_hows[] = { CACHE_ONEPASS_STACK };
	struct mode_row *rows = m->rows;
	struct formula_machine fm;
	struct formula_result fr;
	struct sim_result r;
	double t0, t_comp, t_fx;

	t0 = cpu_seconds();
	if (sim_kernel(&m->cfg, &m->spec, true, 1, false, &r, err, errlen))
		return -1;
	t_comp = cpu_seconds() - t0;
	sim_result_finish(&r);
	if (modes_bench_sample(&m->cfg, &m->spec, &rows[R_TRACE_ONLY], &rows[R_SAMPLED], err,
			       errlen) ||
	    modes_bench_sweep(&m->cfg, "L2=1M:8:64", set_hows, 2, &rows[R_SEP_SET], m->same_set,
			      err, errlen) ||
	    modes_bench_sweep(&m->cfg, "L2=1M:full:64", full_hows, 1, &rows[R_SEP_FULL],
			      &m->same_full, err, errlen) ||
	    modes_bench_sample(&m->miss_cfg, &m->miss_spec, &rows[R_TRACE_MISS],
			       &rows[R_SAMPLED_MISS], err, errlen))
		return -1;
	rows[R_COMPUTING] =
		(struct mode_row){ NULL, t_comp, t_comp / rows[R_TRACE_ONLY].seconds, -1, 0, "" };
	formula_machine_from_spec(&m->spec, true, &fm);
	t0 = cpu_seconds();
	formula_eval(&m->cfg, &fm, &fr);
	t_fx = cpu_seconds() - t0;
	rows[R_FORMULA] =
		(struct mode_row){ NULL, t_fx, t_fx / rows[R_TRACE_ONLY].seconds, -1, -1, "" };
	for (int i = 0; i < R_COUNT; i++) {
		rows[i].mode = names[i];
		rows[i].target = targets[i];
	}
	return 0;
}

static void
modes_print(FILE *out, const struct modes_bench *m, const char *kernel)
{
	const struct mode_row *rows = m->rows;

	fprintf(out,
		"memsim bench --modes: %s N=%llu d=64 fp32, B_r = B_c = 64; cache %s; L2 sizes "
		"64K to 128M (x2)\n\n",
		kernel, (unsigned long long)m->cfg.N, m->base);
	fprintf(out, "%-40s %10s %10s %12s %12s   %s\n", "mode", "CPU s", "x one run",
		"x separate", "DRAM error", "target");
	for (int i = 0; i < R_COUNT; i++) {
		char vs[16] = "", err_s[16] = "exact";

		if (rows[i].vs_separate >= 0)
			snprintf(vs, sizeof(vs), "%.3f", rows[i].vs_separate);
		if (rows[i].error > 0)
			snprintf(err_s, sizeof(err_s), "%.2f%%", 100 * rows[i].error);
		else if (i == R_FORMULA)
			snprintf(err_s, sizeof(err_s), "model");
		else if (i == R_SAMPLED || i == R_SAMPLED_MISS)
			snprintf(err_s, sizeof(err_s), "0.00%%");
		fprintf(out, "%-40s %10.4f %10.3f %12s %12s   %s\n", rows[i].mode, rows[i].seconds,
			rows[i].vs_one, vs, err_s, rows[i].target);
	}
	fprintf(out,
		"\nTimes are this process's processor time (one thread), which other programs on the\n"
		"machine do not move as they move wall time.\n"
		"\"x one run\": over one exact trace-only run of the same cache (for the sweeps, "
		"the mean\nof their twelve separate runs; for the computing run, over trace-only). "
		"One-pass\ncounters equal to the separate runs': 8-way fanout %s, 8-way stack %s, "
		"full stack %s.\nEach one pass is timed once here; memsim bench --onepass times them "
		"between\nthe separate runs, repeatedly, for ratios a shared machine moves less.\n"
		"Miss-bound rows: N = %llu, 4 heads, fp16 on %s.\nThe formulas: byte "
		"for byte on a fully associative LRU cache, a bound on a\nset-associative one "
		"where derived (docs/formulas.md).\n",
		m->same_set[0] ? "yes" : "NO", m->same_set[1] ? "yes" : "NO",
		m->same_full ? "yes" : "NO", (unsigned long long)m->miss_cfg.N, MISS_SPEC);
}

static int
modes_json(const struct modes_bench *m, const char *kernel, const char *json_path, int argc,
	   char **argv)
{
	cJSON *root = cJSON_CreateObject(), *list;
	char err[512];
	int rc = EXIT_OK;

	report_add_header(root, argc, argv);
	cJSON_AddStringToObject(root, "kernel", kernel);
	cJSON_AddNumberToObject(root, "N", (double)m->cfg.N);
	cJSON_AddStringToObject(root, "cache", m->base);
	cJSON_AddBoolToObject(root, "onepass_counters_equal",
			      m->same_set[0] && m->same_set[1] && m->same_full);
	list = cJSON_AddArrayToObject(root, "modes");
	for (int i = 0; i < R_COUNT; i++) {
		const struct mode_row *row = &m->rows[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "mode", row->mode);
		cJSON_AddNumberToObject(o, "seconds", row->seconds);
		cJSON_AddStringToObject(o, "clock", "process cpu");
		cJSON_AddNumberToObject(o, "x_one_run", row->vs_one);
		if (row->vs_separate >= 0)
			cJSON_AddNumberToObject(o, "x_separate", row->vs_separate);
		if (row->error >= 0)
			cJSON_AddNumberToObject(o, "dram_error", row->error);
		cJSON_AddItemToArray(list, o);
	}
	if (report_write_json(json_path, root, err, sizeof(err)))
		rc = print_error("%s", err);
	cJSON_Delete(root);
	return rc;
}

int
bench_modes(const char *kernel, uint64_t N, const char *json_path, int argc, char **argv)
{
	struct modes_bench m;
	char err[512];
	FILE *out = text_stream(json_path);
	int rc;

	memset(&m, 0, sizeof(m));
	m.cfg = (struct attn_config){ ATTN_NAIVE, N,     64,    1, 1, 1, ATTN_FP32, 64,
				      64,         false, false, 0, 0, 0, 0,         0 };
	if (!attn_kernel_parse(kernel, &m.cfg.kernel))
		return usage_error("bench", "--kernel: unknown kernel '%s'", kernel);
	if (attn_config_check(&m.cfg, err, sizeof(err)))
		return usage_error("bench", "%s", err);
	snprintf(m.base, sizeof(m.base), "%s,L2=1M:16:64", MODES_BENCH_L1);
	spec_parse(m.base, &m.spec, err, sizeof(err));
	/* Where sampling pays: 8 N, 4 heads, fp16 on one level with the tiles in scratch, so K
	 * and V (2 MiB a head at N = 8192) miss on every query block and the model's miss path,
	 * not the tracing, is the time. */
	spec_parse(MISS_SPEC, &m.miss_spec, err, sizeof(err));
	m.miss_cfg = m.cfg;
	m.miss_cfg.N = 8 * N;
	m.miss_cfg.heads = m.miss_cfg.kv_heads = 4;
	m.miss_cfg.dtype = ATTN_FP16;
	if (modes_measure(&m, err, sizeof(err)))
		return print_error("bench: %s", err);
	modes_print(out, &m, kernel);
	rc = m.same_set[0] && m.same_set[1] && m.same_full ? EXIT_OK : EXIT_RUNTIME;
	if (json_path && modes_json(&m, kernel, json_path, argc, argv))
		rc = EXIT_RUNTIME;
	return rc;
}
