/*
 * `memsim profile`'s measurements: the semantics (timing, quantiles, which bytes) are in the
 * Notes of run/profile.h. Per T, the proj kernel's data and traced run come first (its two
 * rows go into every layer row), then each attention kernel's, freed before the next.
 */

#include "run/profile.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/progress.h"
#include "base/util.h"
#include "measure/ceilings.h"
#include "run/simulate.h"

void
profile_config_init(struct profile_config *c)
{
	static const uint64_t T[] = { 64, 128, 256, 512 };

	memset(c, 0, sizeof(*c));
	memcpy(c->T, T, sizeof(T));
	c->nT = 4;
	c->d_model = 64;
	c->heads = 4;
	c->kernels[0] = ATTN_NAIVE;
	c->kernels[1] = ATTN_FLASH2;
	c->nkernels = 2;
	c->min_time = 0.05;
	c->reps = 30;
	c->seed = 1;
	c->Br = 64;
	c->Bc = 64;
	c->dtype = ATTN_FP32;
}

struct attn_config
profile_attn_config(const struct profile_config *c, uint64_t T, enum attn_kernel k)
{
	struct attn_config a = {
		.kernel = k,
		.N = T,
		.d = c->heads ? c->d_model / c->heads : 0,
		.heads = c->heads,
		.kv_heads = c->heads,
		.batch = 1,
		.dtype = c->dtype,
		.Br = c->Br,
		.Bc = c->Bc,
	};

	return a;
}

int
profile_config_check(const struct profile_config *c, char *err, size_t errlen)
{
	uint64_t tmax = 0;
	int rc;

	if (c->nT == 0 || c->nT > PROFILE_MAX_T) {
		snprintf(err, errlen, "--T: give 1 to %d sequence lengths", PROFILE_MAX_T);
		return -EINVAL;
	}
	for (unsigned i = 0; i < c->nT; i++) {
		if (c->T[i] == 0) {
			snprintf(err, errlen, "--T: sequence lengths must be at least 1");
			return -EINVAL;
		}
		tmax = c->T[i] > tmax ? c->T[i] : tmax;
	}
	if (c->d_model == 0 || c->heads == 0) {
		snprintf(err, errlen, "--%s must be at least 1", c->heads ? "d-model" : "heads");
		return -EINVAL;
	}
	if (c->d_model % c->heads) {
		snprintf(err, errlen, "--heads %llu does not divide --d-model %llu",
			 (unsigned long long)c->heads, (unsigned long long)c->d_model);
		return -EINVAL;
	}
	if (c->nkernels == 0) {
		snprintf(err, errlen, "--kernel: give at least one of naive, flash1, flash2");
		return -EINVAL;
	}
	for (unsigned i = 0; i < c->nkernels; i++) {
		if (c->kernels[i] == ATTN_PROJ || c->kernels[i] == ATTN_FLASHDECODE ||
		    (unsigned)c->kernels[i] >= ATTN_KERNEL_COUNT) {
			snprintf(err, errlen,
				 "--kernel: the attention kernels are naive, flash1, "
				 "flash2 (proj's qkv_proj and out_proj are always profiled)");
			return -EINVAL;
		}
	}
	if (!(c->min_time > 0 && c->min_time <= 60)) {
		snprintf(err, errlen,
			 "--min-time: %g is not a time of more than 0 and at most 60 s",
			 c->min_time);
		return -EINVAL;
	}
	if (c->reps < 1 || c->reps > 100000) {
		snprintf(err, errlen, "--reps: %u is not 1 to 100000", c->reps);
		return -EINVAL;
	}
	for (unsigned i = 0; i <= c->nkernels; i++) {
		struct attn_config a =
			profile_attn_config(c, tmax, i < c->nkernels ? c->kernels[i] : ATTN_PROJ);

		if ((rc = attn_config_check(&a, err, errlen)))
			return rc;
	}
	return 0;
}

double
profile_quantile(const double *sorted, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)h;

	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

int
profile_time(void (*fn)(void *arg), void *arg, double min_time, unsigned reps,
	     struct profile_timing *out)
{
	uint64_t k = 1;
	double t0, dt, sum = 0, *t;

	memset(out, 0, sizeof(*out));
	if (!(min_time > 0) || reps == 0)
		return -EINVAL;
	fn(arg); /* warm-up */
	/* Calibration: grow k until k calls take half of min_time, then scale (10% to spare). */
	for (;;) {
		t0 = now_seconds();
		for (uint64_t i = 0; i < k; i++)
			fn(arg);
		dt = now_seconds() - t0;
		if (dt >= min_time / 2 || k >= (UINT64_C(1) << 40))
			break;
		k *= dt < min_time / 64 ? 8 : 2;
	}
	k = (uint64_t)ceil((double)k * 1.1 * min_time / (dt > 0 ? dt : 1e-9));
	k = k ? k : 1;
	t = xzalloc(reps * sizeof(*t));
	for (unsigned r = 0; r < reps; r++) {
		t0 = now_seconds();
		for (uint64_t i = 0; i < k; i++)
			fn(arg);
		t[r] = (now_seconds() - t0) / (double)k;
		sum += t[r];
	}
	sort_doubles(t, reps);
	out->p50 = profile_quantile(t, reps, 0.50);
	out->p95 = profile_quantile(t, reps, 0.95);
	out->p99 = profile_quantile(t, reps, 0.99);
	out->mean = sum / reps;
	out->repetitions = reps;
	out->calls = k;
	free(t);
	return 0;
}

/* One operation to time: a phase of d's kernel, or (phase NULL) the whole kernel. */
struct op {
	struct attn_data *d;
	const char *phase;
};

static void
run_op(void *arg)
{
	struct op *o = arg;

	if (o->phase)
		attn_run_native_phase(o->d, o->phase);
	else
		attn_run_native(o->d);
}

/* DRAM bytes (read + write) of phase in c, or of every phase but the final flush when phase
 * is NULL. */
static uint64_t
phase_bytes(struct cache *c, const char *phase)
{
	uint64_t sum = 0;

	for (unsigned p = 0; p < cache_phase_count(c); p++) {
		const char *name = cache_phase_name(c, p);
		const struct cache_traffic *t;

		if (phase ? strcmp(name, phase) != 0 : strcmp(name, "flush") == 0)
			continue;
		t = cache_phase_traffic(c, p);
		sum += t->read_bytes + t->write_bytes;
	}
	return sum;
}

/* The state of one kernel at one T: native data, run whole once, and one traced run. */
struct kernel_run {
	struct attn_config cfg;
	struct attn_data *d;
	struct sim_result sim;
};

static int
kernel_run_init(struct kernel_run *k, const struct profile_config *c, uint64_t T,
		enum attn_kernel kernel, char *err, size_t errlen)
{
	memset(k, 0, sizeof(*k));
	k->cfg = profile_attn_config(c, T, kernel);
	/* The traced run: cold caches, no flush (it would count in no phase anyway). */
	if (sim_kernel(&k->cfg, &c->spec, false, c->seed, false, &k->sim, err, errlen))
		return -1;
	k->d = attn_data_create(&k->cfg, err, errlen);
	if (!k->d) {
		sim_result_finish(&k->sim);
		return -1;
	}
	attn_data_fill(k->d, c->seed);
	attn_run_native(k->d);
	return 0;
}

static void
kernel_run_finish(struct kernel_run *k)
{
	attn_data_destroy(k->d);
	sim_result_finish(&k->sim);
}

/* Times one operation of k and fills row. */
static void
measure(const struct profile_config *c, struct kernel_run *k, uint64_t T, const char *phase,
	const char *op, struct profile_row *row)
{
	struct op o = { k->d, phase };

	memset(row, 0, sizeof(*row));
	row->T = T;
	row->kernel = k->cfg.kernel;
	row->op = op;
	profile_time(run_op, &o, c->min_time, c->reps, &row->time);
	row->flops = phase ? attn_phase_flops(&k->cfg, phase) : attn_flops(&k->cfg);
	row->dram_bytes = phase_bytes(k->sim.cache, phase);
}

/* Adds row's timing, FLOPs and bytes to the layer row sum. */
static void
add_to_layer(struct profile_row *sum, const struct profile_row *row)
{
	sum->time.p50 += row->time.p50;
	sum->time.p95 += row->time.p95;
	sum->time.p99 += row->time.p99;
	sum->time.mean += row->time.mean;
	sum->flops += row->flops;
	sum->dram_bytes += row->dram_bytes;
}

static int
profile_one_T(const struct profile_config *c, uint64_t T,
	      int (*emit)(const struct profile_row *row, void *ctx), void *ctx, char *err,
	      size_t errlen)
{
	static const char *const naive_ops[] = { "scores", "softmax", "av" };
	struct kernel_run proj, k;
	struct profile_row qkv, out, row, layer;
	int rc = 0;

	if (kernel_run_init(&proj, c, T, ATTN_PROJ, err, errlen))
		return -1;
	measure(c, &proj, T, "qkv_proj", "qkv_proj", &qkv);
	if ((rc = emit(&qkv, ctx)))
		goto out_proj;
	measure(c, &proj, T, "out_proj", "out_proj", &out);
	if ((rc = emit(&out, ctx)))
		goto out_proj;
	for (unsigned i = 0; i < c->nkernels; i++) {
		if (kernel_run_init(&k, c, T, c->kernels[i], err, errlen)) {
			rc = -1;
			goto out_proj;
		}
		memset(&layer, 0, sizeof(layer));
		layer.T = T;
		layer.kernel = c->kernels[i];
		layer.op = "layer";
		layer.time.repetitions = c->reps;
		add_to_layer(&layer, &qkv);
		if (c->kernels[i] == ATTN_NAIVE) {
			for (unsigned p = 0; p < 3 && !rc; p++) {
				measure(c, &k, T, naive_ops[p], naive_ops[p], &row);
				add_to_layer(&layer, &row);
				rc = emit(&row, ctx);
			}
		} else {
			measure(c, &k, T, NULL, "attention", &row);
			add_to_layer(&layer, &row);
			rc = emit(&row, ctx);
		}
		add_to_layer(&layer, &out);
		if (!rc)
			rc = emit(&layer, ctx);
		kernel_run_finish(&k);
		if (rc)
			break;
	}
out_proj:
	kernel_run_finish(&proj);
	return rc;
}

/* emit() as the caller gave it, counting the rows for the progress line. */
struct counted {
	int (*emit)(const struct profile_row *row, void *ctx);
	void *ctx;
	unsigned done, total;
};

static int
emit_counted(const struct profile_row *row, void *arg)
{
	struct counted *k = arg;

	k->done++;
	progress_report((double)k->done / k->total, k->done, k->total, "rows");
	return k->emit(row, k->ctx);
}

int
profile_run(const struct profile_config *c, int (*emit)(const struct profile_row *row, void *ctx),
	    void *ctx, char *err, size_t errlen)
{
	/* per T: qkv_proj and out_proj, each kernel's operations (naive's three) and its
	 * layer */
	struct counted k = { emit, ctx, 0, 2 };
	int rc = 0;

	for (unsigned i = 0; i < c->nkernels; i++)
		k.total += c->kernels[i] == ATTN_NAIVE ? 4 : 2;
	k.total *= c->nT;
	progress_begin("profile");
	for (unsigned i = 0; i < c->nT && !rc; i++)
		rc = profile_one_T(c, c->T[i], emit_counted, &k, err, errlen);
	progress_end();
	return rc;
}

cJSON *
profile_row_json(const struct profile_config *c, const struct profile_row *r)
{
	cJSON *o = cJSON_CreateObject(), *s;
	char buf[1024];

	cJSON_AddNumberToObject(o, "T", (double)r->T);
	cJSON_AddNumberToObject(o, "d_model", (double)c->d_model);
	cJSON_AddNumberToObject(o, "heads", (double)c->heads);
	cJSON_AddNumberToObject(o, "d_head", (double)(c->d_model / c->heads));
	cJSON_AddStringToObject(o, "dtype", attn_dtype_name(c->dtype));
	cJSON_AddStringToObject(o, "kernel", attn_kernel_name(r->kernel));
	cJSON_AddStringToObject(o, "op", r->op);
	s = cJSON_AddObjectToObject(o, "seconds");
	cJSON_AddNumberToObject(s, "p50", r->time.p50);
	cJSON_AddNumberToObject(s, "p95", r->time.p95);
	cJSON_AddNumberToObject(s, "p99", r->time.p99);
	cJSON_AddNumberToObject(s, "mean", r->time.mean);
	cJSON_AddNumberToObject(o, "repetitions", r->time.repetitions);
	cJSON_AddNumberToObject(o, "calls_per_repetition", (double)r->time.calls);
	cJSON_AddNumberToObject(o, "flops", r->flops);
	cJSON_AddNumberToObject(o, "dram_bytes", (double)r->dram_bytes);
	if (r->dram_bytes)
		cJSON_AddNumberToObject(o, "intensity", r->flops / (double)r->dram_bytes);
	else
		cJSON_AddNullToObject(o, "intensity");
	cJSON_AddNumberToObject(o, "gflops", r->flops / r->time.p50 / 1e9);
	cJSON_AddNumberToObject(o, "tokens_per_s", (double)r->T / r->time.p50);
	cJSON_AddStringToObject(o, "cache", spec_format(&c->spec, buf, sizeof(buf)));
	cJSON_AddStringToObject(o, "preset", c->spec.preset);
	return o;
}

void
profile_add_manifest(cJSON *m, const struct profile_config *c)
{
	cJSON *hw, *cfg, *list;
	char cpu[256], buf[1024];

	cJSON_AddNumberToObject(m, "seed", (double)c->seed);
	hw = cJSON_AddObjectToObject(m, "hardware");
	cJSON_AddStringToObject(hw, "cpu_model", ceilings_cpu_model(cpu, sizeof(cpu)));
	cJSON_AddNumberToObject(hw, "cores", ceilings_cores());
	cfg = cJSON_AddObjectToObject(m, "config");
	cJSON_AddNumberToObject(cfg, "d_model", (double)c->d_model);
	cJSON_AddNumberToObject(cfg, "heads", (double)c->heads);
	cJSON_AddNumberToObject(cfg, "d_head", (double)(c->d_model / c->heads));
	list = cJSON_AddArrayToObject(cfg, "T");
	for (unsigned i = 0; i < c->nT; i++)
		cJSON_AddItemToArray(list, cJSON_CreateNumber((double)c->T[i]));
	list = cJSON_AddArrayToObject(cfg, "kernels");
	for (unsigned i = 0; i < c->nkernels; i++)
		cJSON_AddItemToArray(list, cJSON_CreateString(attn_kernel_name(c->kernels[i])));
	cJSON_AddStringToObject(cfg, "dtype", attn_dtype_name(c->dtype));
	cJSON_AddNumberToObject(cfg, "Br", (double)c->Br);
	cJSON_AddNumberToObject(cfg, "Bc", (double)c->Bc);
	cJSON_AddStringToObject(cfg, "cache", spec_format(&c->spec, buf, sizeof(buf)));
	cJSON_AddStringToObject(cfg, "preset", c->spec.preset);
	cJSON_AddStringToObject(cfg, "cache_note", c->spec.note);
	cJSON_AddStringToObject(cfg, "cache_source", c->spec.source);
	cJSON_AddNumberToObject(cfg, "min_time", c->min_time);
	cJSON_AddNumberToObject(cfg, "reps", c->reps);
}
