#include "config.h"

#include <string.h>
#include <sys/resource.h>

#include "analysis/evaluate.h"
#include "analysis/report.h"

int
study_run(struct study *st, const struct attn_config *cfg, const struct spec *spec, bool flush,
	  uint64_t seed, bool simulate, char *err, size_t errlen)
{
	struct formula_machine m;

	memset(st, 0, sizeof(*st));
	st->cfg = *cfg;
	st->spec = *spec;
	st->flush = flush;
	st->seed = seed;
	st->simulated = simulate;
	formula_machine_from_spec(spec, flush, &m);
	formula_eval(cfg, &m, &st->f);
	if (!simulate)
		return 0;
	if (sim_kernel(cfg, spec, flush, seed, false, &st->sim, err, errlen))
		return -1;
	compare_build(st->sim.cache, cfg, &st->f, &st->cmp);
	return 0;
}

void
study_finish(struct study *st)
{
	if (st->simulated)
		sim_result_finish(&st->sim);
	memset(st, 0, sizeof(*st));
}

cJSON *
study_json(struct study *st, int argc, char **argv)
{
	cJSON *root = cJSON_CreateObject();
	double bytes;

	if (argv)
		report_add_header(root, argc, argv);
	else
		cJSON_AddStringToObject(root, "memsim_version", MEMSIM_VERSION);
	report_add_config(root, &st->cfg, &st->spec, st->flush, st->seed);
	cJSON_AddStringToObject(root, "mode", st->simulated ? "simulated" : "formula");
	if (st->simulated) {
		struct rusage ru;

		report_add_cache(root, st->sim.cache);
		compare_add_json(root, &st->f, &st->cmp);
		bytes = st->cmp.exact.measured;
		cJSON_AddNumberToObject(root, "traced_seconds", st->sim.seconds);
		/* Peak memory of the process so far: the arrays plus the cache model; nothing in
		 * it grows with the number of accesses. */
		if (getrusage(RUSAGE_SELF, &ru) == 0)
			cJSON_AddNumberToObject(root, "peak_rss_bytes",
						(double)ru.ru_maxrss * 1024);
	} else {
		struct comparison none;

		memset(&none, 0, sizeof(none));
		compare_add_json(root, &st->f, &none);
		cJSON_DeleteItemFromObject(root, "compare");
		bytes = st->f.read_bytes + st->f.write_bytes;
	}
	cJSON_AddNumberToObject(root, "flops", st->f.flops);
	cJSON_AddNumberToObject(root, "intensity", bytes > 0 ? st->f.flops / bytes : 0);
	return root;
}
