/*
 * One configuration end to end, for a built-in kernel or a plugin. What differs between the
 * two is the run (a built-in kernel's through run/simulate.c, a plugin's through its own
 * arrays) and the formulas (a built-in kernel's analysis/formulas.c with their comparison; a
 * plugin's own formula() per array, where it gives one); the rest is shared.
 */

#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "analysis/report.h"
#include "base/util.h"
#include "run/evaluate.h"

/* ev for job on spec, nothing run yet. */
static void
start(struct evaluation *ev, const struct evaluation_job *job, const struct spec *spec)
{
	memset(ev, 0, sizeof(*ev));
	ev->plugin = job->plugin;
	ev->params = job->params;
	ev->cfg = *job->cfg;
	ev->spec = *spec;
	ev->flush = job->flush;
	ev->seed = job->seed;
	ev->simulated = job->mode != EVALUATION_FORMULA;
	ev->trace_only = job->mode == EVALUATION_TRACE_ONLY;
}

/* The plugin's configuration and its arrays, mapped. Returns as plugin_arrays_create(). */
static int
plugin_arrays(struct evaluation *ev, char *err, size_t errlen)
{
	if (plugin_config(ev->plugin, &ev->cfg, ev->params, &ev->kc, err, errlen))
		return -EINVAL;
	return plugin_arrays_create(ev->plugin, &ev->kc, &ev->pa, err, errlen);
}

/* A plugin's run of ev, recorded first where rec is given. */
static int
run_plugin(struct evaluation *ev, const struct sim_record *rec, char *err, size_t errlen)
{
	int rc = plugin_arrays(ev, err, errlen);

	if (rc)
		return rc == -EINVAL ? -EINVAL : -EIO;
	ev->sim.cache = cache_create(&ev->spec.cache);
	if (!ev->sim.cache) {
		snprintf(err, errlen, "cannot allocate the cache model (%.1f MiB)",
			 (double)cache_model_bytes(&ev->spec.cache) / 1048576.0);
		return -ENOMEM;
	}
	/* The recording first, a pass of its own, then the live run as without it. */
	if (rec && (plugin_record(ev->plugin, &ev->kc, &ev->pa, rec, err, errlen) ||
		    plugin_arrays_zero(&ev->pa, err, errlen)))
		return -EIO;
	if (plugin_simulate(ev->plugin, &ev->kc, &ev->pa, ev->sim.cache, &ev->spec, ev->flush,
			    &ev->sim.seconds, err, errlen))
		return -EIO;
	return 0;
}

/* Whether the cache is the one plugin formulas describe (include/memsim/plugin.h): one fully
 * associative LRU write-back write-allocate level, tiles in scratch, flushed. */
static const char *
plugin_formula_unfit(const struct spec *s, bool flush)
{
	const struct cache_level_config *l = &s->cache.level[0];

	if (s->cache.levels != 1)
		return "the formula models one cache level";
	if (!l->fully_assoc)
		return "the cache is not fully associative";
	if (l->repl != CACHE_REPL_LRU)
		return "the cache is not LRU";
	if (l->write != CACHE_WRITE_BACK || l->alloc != CACHE_ALLOC_FETCH)
		return "the cache is not write-back write-allocate";
	if (!s->tiles_in_scratch)
		return "tiles are not in scratch";
	if (!flush)
		return "the run is not flushed";
	if (s->cache.sample_sets > 1)
		return "set sampling";
	return NULL;
}

/* The DRAM bytes the run measured of each of the plugin's arrays (cache arrays: "other"
 * first). */
static void
plugin_measure(struct evaluation *ev)
{
	struct cache *c = ev->sim.cache;

	for (unsigned i = 0; i < ev->pa.n; i++)
		for (unsigned k = 1; k < cache_array_count(c); k++)
			if (strcmp(cache_array_name(c, k), ev->pa.a[i].name) == 0) {
				ev->measured[i].read_bytes = cache_array_traffic(c, k)->read_bytes;
				ev->measured[i].write_bytes =
					cache_array_traffic(c, k)->write_bytes;
				break;
			}
}

/* The kernel's formulas for ev, compared with its counters where it was simulated. */
static void
compare_formulas(struct evaluation *ev)
{
	const struct cache_level_config *last;
	struct formula_machine m;
	const char *why;

	if (!ev->plugin) {
		formula_machine_from_spec(&ev->spec, ev->flush, &m);
		formula_eval(&ev->cfg, &m, &ev->f);
		if (ev->simulated)
			compare_build(ev->sim.cache, &ev->cfg, &ev->f, &ev->cmp);
		return;
	}
	if (!ev->plugin->p->formula || !ev->spec.cache.levels)
		return;
	last = &ev->spec.cache.level[ev->spec.cache.levels - 1];
	ev->have_formula = plugin_formula(ev->plugin, &ev->kc, last->size_bytes, last->line_bytes,
					  ev->formula, ev->pa.n) == 0;
	why = plugin_formula_unfit(&ev->spec, ev->flush);
	ev->exact = !why;
	snprintf(ev->scope_why, sizeof(ev->scope_why), "%s", why ? why : "");
	plugin_measure(ev);
}

int
evaluation_run(struct evaluation *ev, const struct evaluation_job *job, char *err, size_t errlen)
{
	int rc = 0;

	assert(!job->plugin || job->mode == EVALUATION_SIMULATE);
	start(ev, job, job->spec);
	if (job->plugin)
		rc = run_plugin(ev, job->rec, err, errlen);
	else if (ev->simulated &&
		 sim_kernel_record_split(&ev->cfg, &ev->spec, ev->flush, ev->seed, ev->trace_only,
					 job->rec, job->threads, &ev->sim, err, errlen))
		rc = -EIO; /* the options checked the configuration: what failed is the run */
	if (rc) {
		evaluation_finish(ev);
		return rc;
	}
	compare_formulas(ev);
	return 0;
}

/* A plugin's pass of n sizes into one (specs[0] its spec) and sims[0 .. n). Returns as
 * evaluation_onepass(). */
static int
plugin_onepass(struct evaluation *one, unsigned level, const uint64_t *sizes, unsigned n,
	       enum cache_onepass how, struct sim_result *sims, char *err, size_t errlen)
{
	int rc;

	if (how == CACHE_ONEPASS_SEPARATE ||
	    cache_onepass_method(&one->spec.cache, level, sizes, n, NULL) < how) {
		snprintf(err, errlen, "one pass (%s) does not apply to these sizes of L%u",
			 cache_onepass_str(how), level + 1);
		return -EINVAL;
	}
	if ((rc = plugin_arrays(one, err, errlen)))
		return rc;
	one->sim.cache = cache_create_onepass(&one->spec.cache, level, sizes, n, how);
	if (!one->sim.cache) {
		snprintf(err, errlen, "cannot allocate the one-pass model of %u sizes", n);
		return -ENOMEM;
	}
	if (plugin_simulate(one->plugin, &one->kc, &one->pa, one->sim.cache, &one->spec, one->flush,
			    &one->sim.seconds, err, errlen))
		return -EINVAL;
	if (cache_onepass_failed(one->sim.cache)) {
		snprintf(err, errlen, "memory ran out during the one pass of %u sizes", n);
		return -ENOMEM;
	}
	for (unsigned k = 0; k < n; k++) {
		sims[k].cache = cache_onepass_take(one->sim.cache, k);
		sims[k].seconds = one->sim.seconds;
	}
	return 0;
}

int
evaluation_onepass(struct evaluation *outs, const struct evaluation_job *job,
		   const struct spec *specs, unsigned level, const uint64_t *sizes, unsigned n,
		   enum cache_onepass how, char *err, size_t errlen)
{
	struct sim_result *sims = xzalloc(n * sizeof(*sims));
	struct evaluation one; /* the pass: a plugin's arrays, which outs share */
	int rc;

	memset(outs, 0, n * sizeof(*outs));
	start(&one, job, &specs[0]);
	if (job->plugin)
		rc = plugin_onepass(&one, level, sizes, n, how, sims, err, errlen);
	else
		rc = sim_kernel_onepass_split(job->cfg, &specs[0], level, sizes, n, how, job->flush,
					      job->seed, one.trace_only, job->threads, sims, err,
					      errlen);
	for (unsigned k = 0; k < n && !rc; k++) {
		start(&outs[k], job, &specs[k]);
		outs[k].sim = sims[k];
		outs[k].kc = one.kc;
		outs[k].pa = one.pa;
		outs[k].pa.arena = NULL; /* the arrays are one's */
		compare_formulas(&outs[k]);
	}
	evaluation_finish(&one);
	free(sims);
	return rc;
}

void
evaluation_finish(struct evaluation *ev)
{
	sim_result_finish(&ev->sim);
	plugin_arrays_destroy(&ev->pa);
	memset(ev, 0, sizeof(*ev));
}

/* The DRAM bytes per-token bounds and intensity count: measured, or the formulas' without a
 * run. */
static double
dram_bytes(const struct evaluation *ev)
{
	return ev->simulated ? ev->cmp.exact.measured : ev->f.read_bytes + ev->f.write_bytes;
}

/* A formula row's "formulas" and "regime": the regime is the formula's own (the lab's
 * assumptions are judged on the formula, as memsim formula does); nothing was measured, so
 * no comparison, and no verdict of the arrays against one. */
static void
formula_only_json(cJSON *root, const struct formula_result *f)
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

/* A built-in kernel's report after the cache: formulas and comparison, flops, per token. */
static void
builtin_json(cJSON *root, const struct evaluation *ev)
{
	double bytes = dram_bytes(ev);
	struct per_token pt;

	if (ev->simulated) {
		struct rusage ru;

		compare_add_json(root, &ev->f, &ev->cmp);
		cJSON_AddNumberToObject(root, "traced_seconds", ev->sim.seconds);
		/* Peak memory of the process so far: the arrays plus the cache model; nothing in
		 * it grows with the number of accesses. */
		if (getrusage(RUSAGE_SELF, &ru) == 0)
			cJSON_AddNumberToObject(root, "peak_rss_bytes",
						(double)ru.ru_maxrss * 1024);
	} else {
		formula_only_json(root, &ev->f);
	}
	cJSON_AddNumberToObject(root, "flops", ev->f.flops);
	cJSON_AddNumberToObject(root, "intensity", bytes > 0 ? ev->f.flops / bytes : 0);
	report_per_token(&pt, &ev->cfg, &ev->spec, bytes, ev->bandwidth_gbps, ev->bandwidth_source);
	report_add_per_token(root, &pt);
}

static void
add_u64(cJSON *o, const char *key, uint64_t v)
{
	cJSON_AddNumberToObject(o, key, (double)v);
}

/* A plugin's formula beside the counters, per array and in all. */
static cJSON *
plugin_formula_json(const struct evaluation *ev)
{
	cJSON *f = cJSON_CreateObject(), *arrays = cJSON_AddArrayToObject(f, "arrays");
	uint64_t pred = 0, meas = 0;
	bool all_equal = true, arrays_within = true;

	cJSON_AddStringToObject(f, "scope", ev->exact ? "exact" : "estimate");
	if (!ev->exact)
		cJSON_AddStringToObject(f, "scope_why", ev->scope_why);
	for (unsigned i = 0; i < ev->pa.n; i++) {
		uint64_t mr = ev->measured[i].read_bytes, mw = ev->measured[i].write_bytes;
		uint64_t fr = ev->formula[i].read_bytes, fw = ev->formula[i].write_bytes;
		cJSON *a = cJSON_CreateObject();

		cJSON_AddStringToObject(a, "name", ev->pa.a[i].name);
		add_u64(a, "read_bytes", fr);
		add_u64(a, "write_bytes", fw);
		add_u64(a, "measured_read_bytes", mr);
		add_u64(a, "measured_write_bytes", mw);
		if (ev->exact)
			cJSON_AddBoolToObject(a, "byte_equal", mr == fr && mw == fw);
		all_equal = all_equal && mr == fr && mw == fw;
		arrays_within = arrays_within &&
				compare_within((double)mr, (double)fr, COMPARE_EXACT_TOLERANCE) &&
				compare_within((double)mw, (double)fw, COMPARE_EXACT_TOLERANCE);
		pred += fr + fw;
		meas += mr + mw;
		cJSON_AddItemToArray(arrays, a);
	}
	/* bytes: the formula's total under the name a built-in kernel's report gives it */
	add_u64(f, "bytes", pred);
	add_u64(f, "predicted_bytes", pred);
	add_u64(f, "measured_bytes", meas);
	if (pred)
		cJSON_AddNumberToObject(f, "ratio", (double)meas / (double)pred);
	else
		cJSON_AddNullToObject(f, "ratio");
	if (ev->exact)
		cJSON_AddBoolToObject(f, "byte_equal", all_equal);
	/* the verdicts a built-in kernel's exact formula gives, at its tolerance, so that a
	 * table or a results.csv reads both alike; byte_equal is the claim of scope exact */
	cJSON_AddNumberToObject(f, "tolerance", COMPARE_EXACT_TOLERANCE);
	cJSON_AddBoolToObject(f, "within",
			      compare_within((double)meas, (double)pred, COMPARE_EXACT_TOLERANCE));
	cJSON_AddBoolToObject(f, "arrays_within", arrays_within);
	return f;
}

/* A plugin's report after the cache: its formula, flops where it counts them, timing. */
static void
plugin_json(cJSON *root, const struct evaluation *ev)
{
	const struct cache_traffic *dram = cache_dram(ev->sim.cache);
	uint64_t bytes = dram->read_bytes + dram->write_bytes;
	double flops;

	if (ev->have_formula)
		cJSON_AddItemToObject(cJSON_AddObjectToObject(root, "formulas"), "exact",
				      plugin_formula_json(ev));
	if (plugin_flops(ev->plugin, &ev->kc, &flops)) {
		cJSON_AddNumberToObject(root, "flops", flops);
		if (bytes)
			cJSON_AddNumberToObject(root, "intensity", flops / (double)bytes);
	}
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(root, "timing"), "traced_seconds",
				ev->sim.seconds);
}

cJSON *
evaluation_json(const struct evaluation *ev, int argc, char **argv)
{
	cJSON *root = cJSON_CreateObject(), *config;

	if (argv)
		report_add_header(root, argc, argv);
	else if (!ev->plugin) /* a plugin's sweep row names no version */
		cJSON_AddStringToObject(root, "memsim_version", MEMSIM_VERSION);
	report_add_config(root, &ev->cfg, &ev->spec, ev->flush, ev->seed);
	config = cJSON_GetObjectItemCaseSensitive(root, "config");
	if (ev->plugin)
		plugin_config_json(config, ev->plugin, ev->params);
	else /* The counters are the same either way; only the timing differs. */
		cJSON_AddBoolToObject(config, "trace_only", ev->trace_only);
	cJSON_AddStringToObject(root, "mode", ev->simulated ? "simulated" : "formula");
	if (ev->simulated)
		report_add_cache(root, ev->sim.cache);
	if (ev->plugin)
		plugin_json(root, ev);
	else
		builtin_json(root, ev);
	return root;
}

/* A plugin's formula beside the counters as text (nothing without a formula). */
static void
plugin_formula_print(FILE *out, const struct evaluation *ev)
{
	uint64_t pred = 0, meas = 0;

	if (!ev->have_formula)
		return;
	fprintf(out, "\n%s's formula (%s%s%s):\n", ev->plugin->p->name,
		ev->exact ? "exact" : "estimate", ev->exact ? "" : ": ", ev->scope_why);
	fprintf(out, "  %-16s %16s %16s %16s %16s\n", "array", "read", "formula read", "write",
		"formula write");
	for (unsigned i = 0; i < ev->pa.n; i++) {
		uint64_t mr = ev->measured[i].read_bytes, mw = ev->measured[i].write_bytes;
		uint64_t fr = ev->formula[i].read_bytes, fw = ev->formula[i].write_bytes;

		fprintf(out, "  %-16s %16llu %16llu %16llu %16llu%s\n", ev->pa.a[i].name,
			(unsigned long long)mr, (unsigned long long)fr, (unsigned long long)mw,
			(unsigned long long)fw,
			!ev->exact             ? ""
			: mr == fr && mw == fw ? "  equal"
					       : "  DIFFERS");
		pred += fr + fw;
		meas += mr + mw;
	}
	fprintf(out, "  total: %llu bytes measured, %llu by the formula%s\n",
		(unsigned long long)meas, (unsigned long long)pred,
		!ev->exact     ? " (an estimate)"
		: meas == pred ? ": byte-equal"
			       : ": they differ");
}

void
evaluation_print(FILE *out, const struct evaluation *ev)
{
	struct per_token pt;

	report_print_cache(out, ev->sim.cache);
	if (ev->plugin) {
		plugin_formula_print(out, ev);
		return;
	}
	compare_print(out, &ev->f, &ev->cmp);
	/* the same bytes as the JSON's */
	report_per_token(&pt, &ev->cfg, &ev->spec, dram_bytes(ev), ev->bandwidth_gbps,
			 ev->bandwidth_source);
	report_print_per_token(out, &pt);
}
