/*
 * A plugin's configuration end to end: its run through the cache model, its own formula
 * beside the counters, and the report `memsim run` and `memsim sweep` write.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analysis/report.h"
#include "run/plugin.h"

/* Whether the cache is the one plugin formulas describe (include/memsim/plugin.h): one fully
 * associative LRU write-back write-allocate level, tiles in scratch, flushed. */
static const char *
formula_unfit(const struct spec *s, bool flush)
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

/* The plugin's formula for ev's run on spec. */
static void
eval_formula(struct plugin_eval *ev, const struct plugin *pl, const struct spec *spec, bool flush)
{
	const struct cache_level_config *last;
	const char *why;

	if (!pl->p->formula || !spec->cache.levels)
		return;
	last = &spec->cache.level[spec->cache.levels - 1];
	ev->have_formula = plugin_formula(pl, &ev->kc, last->size_bytes, last->line_bytes,
					  ev->formula, ev->pa.n) == 0;
	why = formula_unfit(spec, flush);
	ev->exact = !why;
	snprintf(ev->scope_why, sizeof(ev->scope_why), "%s", why ? why : "");
}

int
plugin_eval_onepass(struct plugin_eval *outs, const struct plugin *pl, const struct attn_config *c,
		    const struct plugin_params *pp, const struct spec *specs, unsigned level,
		    const uint64_t *sizes, unsigned n, enum cache_onepass how, bool flush,
		    char *err, size_t errlen)
{
	struct plugin_eval one;
	int rc;

	memset(outs, 0, n * sizeof(*outs));
	if (how == CACHE_ONEPASS_SEPARATE ||
	    cache_onepass_method(&specs[0].cache, level, sizes, n, NULL) < how) {
		snprintf(err, errlen, "one pass (%s) does not apply to these sizes of L%u",
			 cache_onepass_str(how), level + 1);
		return -EINVAL;
	}
	memset(&one, 0, sizeof(one));
	if (plugin_config(pl, c, pp, &one.kc, err, errlen))
		return -EINVAL;
	rc = plugin_arrays_create(pl, &one.kc, &one.pa, err, errlen);
	if (rc)
		return rc;
	one.cache = cache_create_onepass(&specs[0].cache, level, sizes, n, how);
	if (!one.cache) {
		snprintf(err, errlen, "cannot allocate the one-pass model of %u sizes", n);
		plugin_eval_finish(&one);
		return -ENOMEM;
	}
	if (plugin_simulate(pl, &one.kc, &one.pa, one.cache, &specs[0], flush, &one.seconds, err,
			    errlen)) {
		plugin_eval_finish(&one);
		return -EINVAL;
	}
	if (cache_onepass_failed(one.cache)) {
		snprintf(err, errlen, "memory ran out during the one pass of %u sizes", n);
		plugin_eval_finish(&one);
		return -ENOMEM;
	}
	for (unsigned k = 0; k < n; k++) {
		outs[k].kc = one.kc;
		outs[k].pa = one.pa;
		outs[k].pa.arena = NULL; /* the arrays are one's */
		outs[k].cache = cache_onepass_take(one.cache, k);
		outs[k].seconds = one.seconds;
		eval_formula(&outs[k], pl, &specs[k], flush);
	}
	plugin_eval_finish(&one);
	return 0;
}

int
plugin_eval_run(struct plugin_eval *ev, const struct plugin *pl, const struct attn_config *c,
		const struct plugin_params *pp, const struct spec *spec, bool flush,
		const struct sim_record *rec, char *err, size_t errlen)
{
	int rc;

	memset(ev, 0, sizeof(*ev));
	if (plugin_config(pl, c, pp, &ev->kc, err, errlen))
		return -EINVAL;
	rc = plugin_arrays_create(pl, &ev->kc, &ev->pa, err, errlen);
	if (rc)
		return rc == -EINVAL ? -EINVAL : -EIO;
	ev->cache = cache_create(&spec->cache);
	if (!ev->cache) {
		snprintf(err, errlen, "cannot allocate the cache model (%.1f MiB)",
			 (double)cache_model_bytes(&spec->cache) / 1048576.0);
		plugin_arrays_destroy(&ev->pa);
		return -ENOMEM;
	}
	/* The recording first, a pass of its own, then the live run as without it. */
	if (rec && (plugin_record(pl, &ev->kc, &ev->pa, rec, err, errlen) ||
		    plugin_arrays_zero(&ev->pa, err, errlen))) {
		plugin_eval_finish(ev);
		return -EIO;
	}
	if (plugin_simulate(pl, &ev->kc, &ev->pa, ev->cache, spec, flush, &ev->seconds, err,
			    errlen)) {
		plugin_eval_finish(ev);
		return -EIO;
	}
	eval_formula(ev, pl, spec, flush);
	return 0;
}

void
plugin_eval_finish(struct plugin_eval *ev)
{
	cache_destroy(ev->cache);
	ev->cache = NULL;
	plugin_arrays_destroy(&ev->pa);
}

/* The measured DRAM traffic of the plugin's array i (cache arrays: "other" first). */
static const struct cache_traffic *
measured(const struct plugin_eval *ev, unsigned i)
{
	unsigned n = cache_array_count(ev->cache);

	for (unsigned k = 1; k < n; k++)
		if (strcmp(cache_array_name(ev->cache, k), ev->pa.a[i].name) == 0)
			return cache_array_traffic(ev->cache, k);
	return NULL;
}

static void
add_u64(cJSON *o, const char *key, uint64_t v)
{
	cJSON_AddNumberToObject(o, key, (double)v);
}

static cJSON *
formula_json(const struct plugin_eval *ev)
{
	cJSON *f = cJSON_CreateObject(), *arrays = cJSON_AddArrayToObject(f, "arrays");
	uint64_t pred = 0, meas = 0;
	bool all_equal = true;

	cJSON_AddStringToObject(f, "scope", ev->exact ? "exact" : "estimate");
	if (!ev->exact)
		cJSON_AddStringToObject(f, "scope_why", ev->scope_why);
	for (unsigned i = 0; i < ev->pa.n; i++) {
		const struct cache_traffic *t = measured(ev, i);
		uint64_t mr = t ? t->read_bytes : 0, mw = t ? t->write_bytes : 0;
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
	return f;
}

void
plugin_config_json(cJSON *cfg, const struct plugin *pl, const struct plugin_params *pp)
{
	cJSON *params;

	cJSON_ReplaceItemInObjectCaseSensitive(cfg, "kernel", cJSON_CreateString(pl->p->name));
	cJSON_DeleteItemFromObjectCaseSensitive(cfg, "softmax_separate");
	cJSON_AddStringToObject(cfg, "plugin", pl->path);
	params = cJSON_AddObjectToObject(cfg, "params");
	for (unsigned i = 0; i < pp->n; i++)
		cJSON_AddStringToObject(params, pp->keys[i], pp->values[i]);
}

cJSON *
plugin_eval_json(const struct plugin_eval *ev, const struct plugin *pl, const struct attn_config *c,
		 const struct plugin_params *pp, const struct spec *spec, bool flush, uint64_t seed,
		 int argc, char **argv)
{
	cJSON *root = cJSON_CreateObject();
	const struct cache_traffic *dram;
	double flops;

	if (argv)
		report_add_header(root, argc, argv);
	report_add_config(root, c, spec, flush, seed);
	plugin_config_json(cJSON_GetObjectItemCaseSensitive(root, "config"), pl, pp);
	cJSON_AddStringToObject(root, "mode", "simulated");
	report_add_cache(root, ev->cache);
	if (ev->have_formula) {
		cJSON *formulas = cJSON_AddObjectToObject(root, "formulas");

		cJSON_AddItemToObject(formulas, "exact", formula_json(ev));
	}
	if (plugin_flops(pl, &ev->kc, &flops)) {
		dram = cache_dram(ev->cache);
		cJSON_AddNumberToObject(root, "flops", flops);
		if (dram->read_bytes + dram->write_bytes)
			cJSON_AddNumberToObject(
				root, "intensity",
				flops / (double)(dram->read_bytes + dram->write_bytes));
	}
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(root, "timing"), "traced_seconds",
				ev->seconds);
	return root;
}

void
plugin_eval_print(FILE *out, const struct plugin_eval *ev, const struct plugin *pl)
{
	uint64_t pred = 0, meas = 0;

	if (!ev->have_formula)
		return;
	fprintf(out, "\n%s's formula (%s%s%s):\n", pl->p->name, ev->exact ? "exact" : "estimate",
		ev->exact ? "" : ": ", ev->scope_why);
	fprintf(out, "  %-16s %16s %16s %16s %16s\n", "array", "read", "formula read", "write",
		"formula write");
	for (unsigned i = 0; i < ev->pa.n; i++) {
		const struct cache_traffic *t = measured(ev, i);
		uint64_t mr = t ? t->read_bytes : 0, mw = t ? t->write_bytes : 0;

		fprintf(out, "  %-16s %16llu %16llu %16llu %16llu%s\n", ev->pa.a[i].name,
			(unsigned long long)mr, (unsigned long long)ev->formula[i].read_bytes,
			(unsigned long long)mw, (unsigned long long)ev->formula[i].write_bytes,
			!ev->exact ? ""
			: mr == ev->formula[i].read_bytes && mw == ev->formula[i].write_bytes
				? "  equal"
				: "  DIFFERS");
		pred += ev->formula[i].read_bytes + ev->formula[i].write_bytes;
		meas += mr + mw;
	}
	fprintf(out, "  total: %llu bytes measured, %llu by the formula%s\n",
		(unsigned long long)meas, (unsigned long long)pred,
		!ev->exact     ? " (an estimate)"
		: meas == pred ? ": byte-equal"
			       : ": they differ");
}
