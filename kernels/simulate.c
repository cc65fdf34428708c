#include "kernels/simulate.h"

#include <stdio.h>
#include <string.h>

#include "sim/trace.h"
#include "sim/util.h"

/* sim_kernel(), or with trace_only sim_kernel_trace_only() (check is then false). */
static int
simulate(const struct attn_config *cfg, const struct spec *spec, bool flush, uint64_t seed,
	 bool check, bool trace_only, struct sim_result *out, char *err, size_t errlen)
{
	struct attn_data *d;
	struct trace_ctx *t;
	double t0;

	memset(out, 0, sizeof(*out));
	d = trace_only ? attn_data_create_trace_only(cfg, err, errlen)
		       : attn_data_create(cfg, err, errlen);
	if (!d)
		return -1;
	out->cache = cache_create(&spec->cache);
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
	return simulate(cfg, spec, flush, seed, check, false, out, err, errlen);
}

int
sim_kernel_trace_only(const struct attn_config *cfg, const struct spec *spec, bool flush,
		      struct sim_result *out, char *err, size_t errlen)
{
	return simulate(cfg, spec, flush, 0, false, true, out, err, errlen);
}

void
sim_result_finish(struct sim_result *r)
{
	cache_destroy(r->cache);
	memset(r, 0, sizeof(*r));
}
