/*
 * `memsim sweep --slurm`: the memory a task asks for (#SBATCH --mem).
 */

#include "kernels/attn.h"
#include "run/sweep_slurm.h"
#include "sim/cache.h"
#include "sim/spec.h"

/* The bytes the model of plan cache c takes in a run: with a --cache-sweep that runs in one
 * pass, the pass's models of all the group's sizes (a worker splits it where memory is short,
 * so this is the most it takes). */
static uint64_t
model_bytes(const struct sweep_plan *p, unsigned c, bool *onepass)
{
	int g = sweep_plan_group_of(p, c);
	const struct sweep_cache_group *gr = g >= 0 ? &p->groups[g] : NULL;
	uint64_t sizes[SWEEP_CACHES_MAX];
	struct spec spec, first;
	char err[512];

	*onepass = false;
	if (spec_parse(p->caches[c], &spec, err, sizeof(err)))
		return 0;
	spec.cache.sample_sets = p->sample_sets > 1 ? p->sample_sets : 0;
	if (!gr || gr->method == CACHE_ONEPASS_SEPARATE || p->separate_runs || p->sample_sets > 1 ||
	    spec_parse(p->caches[gr->first], &first, err, sizeof(err)))
		return cache_model_bytes(&spec.cache);
	for (unsigned k = 0; k < gr->n; k++) {
		struct spec one;

		sizes[k] = spec_parse(p->caches[gr->first + k], &one, err, sizeof(err))
				   ? 0
				   : one.cache.level[gr->level].size_bytes;
	}
	*onepass = true;
	return cache_onepass_bytes(&first.cache, gr->level, sizes, gr->n, gr->method);
}

uint64_t
sweep_slurm_task_mem_mib(const struct sweep_plan *p, const struct sweep_item *items, size_t n,
			 unsigned jobs)
{
	uint64_t model[SWEEP_CACHES_MAX] = { 0 }, most = 0, total;

	/* With --threads, each slice thread holds a model of its own, besides the caller's,
	 * where the sets split (trace-only runs, one-pass groups, plugins); a computing run
	 * keeps one model and computes its values on the threads (run/attn_split.h). */
	if (p->simulate)
		for (unsigned c = 0; c < p->ncaches; c++) {
			bool onepass;
			uint64_t bytes = model_bytes(p, c, &onepass);
			bool split = p->trace_only || p->plugin.p || onepass;

			model[c] = bytes * (p->threads > 1 && split ? p->threads + 1 : 1);
		}
	for (size_t i = 0; i < n && p->simulate; i++) {
		struct plugin_params pp;
		uint64_t arrays;

		sweep_plan_item_params(p, &items[i], &pp);
		arrays = p->plugin.p     ? plugin_arrays_bytes(&p->plugin, &items[i].cfg, &pp,
							       UINT64_MAX / 4)
			 : p->trace_only ? 0 /* address space, not memory */
					 : attn_data_bytes(&items[i].cfg);

		if (arrays > UINT64_MAX / 8)
			arrays = UINT64_MAX / 8;
		if (arrays + model[items[i].cache] > most)
			most = arrays + model[items[i].cache];
	}
	/* An eighth more, and 256 MiB for the executable and what a run keeps besides. */
	total = (most + most / 8) / (1u << 20) * jobs + 256;
	return total;
}
