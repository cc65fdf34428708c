#include "kernels/simulate.h"

#include <stdio.h>
#include <string.h>

#include "sim/trace.h"
#include "sim/util.h"

/* sim_kernel(), or with trace_only sim_kernel_trace_only() (check is then false), on the
 * model `model` when given (a one-pass model; out->cache is then it too), else a fresh one. */
static int
simulate(const struct attn_config *cfg, const struct spec *spec, bool flush, uint64_t seed,
	 bool check, bool trace_only, struct cache *model, struct sim_result *out, char *err,
	 size_t errlen)
{
	struct attn_data *d;
	struct trace_ctx *t;
	double t0;

	memset(out, 0, sizeof(*out));
	d = trace_only ? attn_data_create_trace_only(cfg, err, errlen)
		       : attn_data_create(cfg, err, errlen);
	if (!d)
		return -1;
	out->cache = model ? model : cache_create(&spec->cache);
	if (!out->cache) {
		snprintf(err, errlen, "invalid cache configuration");
		attn_data_destroy(d);
		return -1;
	}
	attn_data_fill(d, seed);
	if (check)
		attn_data_poison(d);
	t = trace_ctx_create(out->cache, NULL, spec->tiles_in_scratch);
	t0 = now_seconds();
	attn_run_traced(d, t);
	out->seconds = now_seconds() - t0;
	trace_ctx_destroy(t);
	if (flush)
		cache_flush(out->cache);
	cache_sample_scale(out->cache); /* set sampling's estimate; nothing otherwise */
	if (check) {
		out->checked = true;
		out->error = attn_check(d);
	}
	attn_data_destroy(d);
	return 0;
}

int
sim_kernel(const struct attn_config *cfg, const struct spec *spec, bool flush, uint64_t seed,
	   bool check, struct sim_result *out, char *err, size_t errlen)
{
	return simulate(cfg, spec, flush, seed, check, false, NULL, out, err, errlen);
}

int
sim_kernel_trace_only(const struct attn_config *cfg, const struct spec *spec, bool flush,
		      struct sim_result *out, char *err, size_t errlen)
{
	return simulate(cfg, spec, flush, 0, false, true, NULL, out, err, errlen);
}

int
sim_kernel_onepass(const struct attn_config *cfg, const struct spec *spec, unsigned level,
		   const uint64_t *sizes, unsigned n, enum cache_onepass how, bool flush,
		   uint64_t seed, bool trace_only, struct sim_result *outs, char *err,
		   size_t errlen)
{
	struct cache *model = cache_create_onepass(&spec->cache, level, sizes, n, how);
	struct sim_result one;

	if (!model) {
		snprintf(err, errlen, "one pass (%s) does not apply to these sizes of L%u",
			 cache_onepass_str(how), level + 1);
		return -1;
	}
	if (simulate(cfg, spec, flush, trace_only ? 0 : seed, false, trace_only, model, &one, err,
		     errlen)) {
		cache_destroy(model);
		return -1;
	}
	for (unsigned k = 0; k < n; k++) {
		memset(&outs[k], 0, sizeof(outs[k]));
		outs[k].cache = cache_onepass_take(model, k);
		outs[k].seconds = one.seconds;
	}
	cache_destroy(model);
	return 0;
}

void
sim_result_finish(struct sim_result *r)
{
	cache_destroy(r->cache);
	memset(r, 0, sizeof(*r));
}
