#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "analysis/report.h"
#include "run/evaluate.h"

int
evaluation_run(struct evaluation *ev, const struct attn_config *cfg, const struct spec *spec,
	       bool flush, uint64_t seed, enum evaluation_mode mode, char *err, size_t errlen)
{
	return evaluation_run_recorded(ev, cfg, spec, flush, seed, mode, NULL, 1, err, errlen);
}

int
evaluation_run_recorded(struct evaluation *ev, const struct attn_config *cfg,
			const struct spec *spec, bool flush, uint64_t seed,
			enum evaluation_mode mode, const struct sim_record *rec, unsigned threads,
			char *err, size_t errlen)
{
	struct formula_machine m;
	int rc;

	memset(ev, 0, sizeof(*ev));
	ev->cfg = *cfg;
	ev->spec = *spec;
	ev->flush = flush;
	ev->seed = seed;
	ev->simulated = mode != EVALUATION_FORMULA;
	ev->trace_only = mode == EVALUATION_TRACE_ONLY;
	formula_machine_from_spec(spec, flush, &m);
	formula_eval(cfg, &m, &ev->f);
	if (!ev->simulated)
		return 0;
	if (threads > 1)
		rc = sim_kernel_record_split(cfg, spec, flush, seed, ev->trace_only, rec, threads,
					     &ev->sim, err, errlen);
	else if (rec)
		rc = sim_kernel_record(cfg, spec, flush, seed, ev->trace_only, rec, &ev->sim, err,
				       errlen);
	else
		rc = ev->trace_only
			     ? sim_kernel_trace_only(cfg, spec, flush, &ev->sim, err, errlen)
			     : sim_kernel(cfg, spec, flush, seed, false, &ev->sim, err, errlen);
	if (rc)
		return -1;
	compare_build(ev->sim.cache, cfg, &ev->f, &ev->cmp);
	return 0;
}

void
evaluation_of_sim(struct evaluation *ev, const struct attn_config *cfg, const struct spec *spec,
		  bool flush, uint64_t seed, bool trace_only, struct sim_result *sim)
{
	struct formula_machine m;

	memset(ev, 0, sizeof(*ev));
	ev->cfg = *cfg;
	ev->spec = *spec;
	ev->flush = flush;
	ev->seed = seed;
	ev->simulated = true;
	ev->trace_only = trace_only;
	formula_machine_from_spec(spec, flush, &m);
	formula_eval(cfg, &m, &ev->f);
	ev->sim = *sim;
	memset(sim, 0, sizeof(*sim));
	compare_build(ev->sim.cache, cfg, &ev->f, &ev->cmp);
}

void
evaluation_finish(struct evaluation *ev)
{
	if (ev->simulated)
		sim_result_finish(&ev->sim);
	memset(ev, 0, sizeof(*ev));
}

/* A formula row's "formulas" and "regime": the regime is the formula's own (the lab's
 * assumptions are judged on the formula, as memsim formula does); nothing was measured, so
 * no comparison, and no verdict of the arrays against one. */
static void
formula_json(cJSON *root, const struct formula_result *f)
{
	cJSON *exact;
	struct comparison none;

	memset(&none, 0, sizeof(none));
	none.in_regime = f->regime.within_assumptions;
	snprintf(none.regime, sizeof(none.regime), "%s", f->regime.text);
	compare_add_json(root, f, &none);
	cJSON_DeleteItemFromObject(root, "compare");
	exact = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "formulas"), "exact");
	cJSON_DeleteItemFromObject(exact, "arrays_within");
	cJSON_DeleteItemFromObject(exact, "arrays_within_but_negligible");
	cJSON_DeleteItemFromObject(exact, "off_but_negligible");
}

cJSON *
evaluation_json(struct evaluation *ev, int argc, char **argv)
{
	cJSON *root = cJSON_CreateObject();
	double bytes;

	if (argv)
		report_add_header(root, argc, argv);
	else
		cJSON_AddStringToObject(root, "memsim_version", MEMSIM_VERSION);
	report_add_config(root, &ev->cfg, &ev->spec, ev->flush, ev->seed);
	/* The counters are the same either way; only the timing differs. */
	cJSON_AddBoolToObject(cJSON_GetObjectItem(root, "config"), "trace_only", ev->trace_only);
	cJSON_AddStringToObject(root, "mode", ev->simulated ? "simulated" : "formula");
	if (ev->simulated) {
		struct rusage ru;

		report_add_cache(root, ev->sim.cache);
		compare_add_json(root, &ev->f, &ev->cmp);
		bytes = ev->cmp.exact.measured;
		cJSON_AddNumberToObject(root, "traced_seconds", ev->sim.seconds);
		/* Peak memory of the process so far: the arrays plus the cache model; nothing in
		 * it grows with the number of accesses. */
		if (getrusage(RUSAGE_SELF, &ru) == 0)
			cJSON_AddNumberToObject(root, "peak_rss_bytes",
						(double)ru.ru_maxrss * 1024);
	} else {
		formula_json(root, &ev->f);
		bytes = ev->f.read_bytes + ev->f.write_bytes;
	}
	cJSON_AddNumberToObject(root, "flops", ev->f.flops);
	cJSON_AddNumberToObject(root, "intensity", bytes > 0 ? ev->f.flops / bytes : 0);
	{
		struct per_token pt;

		report_per_token(&pt, &ev->cfg, &ev->spec, bytes, ev->bandwidth_gbps,
				 ev->bandwidth_source);
		report_add_per_token(root, &pt);
	}
	return root;
}
