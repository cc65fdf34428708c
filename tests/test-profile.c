/*
 * The profile module: quantiles, the timing loop's bookkeeping (no time is asserted: this is
 * a shared VM), the configuration checks, and a small profile whose rows carry the phases'
 * FLOPs and the DRAM bytes of the same traced run made by hand.
 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/profile.h"
#include "run/simulate.h"
#include "tests/unit.h"

static void
test_quantiles(void **state)
{
	static const double x[] = { 1, 2, 3, 4, 5 };
	static const struct {
		size_t n;
		double q, want;
	} cases[] = {
		{ 5, 0.0, 1 },  { 5, 0.5, 3 },   { 5, 0.95, 4.8 },  { 5, 0.99, 4.96 },
		{ 5, 1.0, 5 },  { 4, 0.5, 2.5 }, { 2, 0.95, 1.95 }, { 1, 0.5, 1 },
		{ 1, 0.99, 1 }, { 0, 0, 0 },
	};

	(void)state;
	for (int i = 0; cases[i].n; i++) {
		double got = profile_quantile(x, cases[i].n, cases[i].q);

		if (fabs(got - cases[i].want) > 1e-12)
			fail_msg("quantile %.2f of %zu values: %g, expected %g", cases[i].q,
				 cases[i].n, got, cases[i].want);
	}
}

static void
count_call(void *arg)
{
	volatile unsigned long *n = arg;

	*n = *n + 1;
}

static void
test_timing(void **state)
{
	volatile unsigned long calls = 0;
	struct profile_timing t;

	(void)state;
	assert_int_equal(profile_time(count_call, (void *)&calls, 0.001, 5, &t), 0);
	assert_int_equal(t.repetitions, 5);
	assert_true(t.calls >= 1);
	/* warm-up, calibration, then exactly reps x calls */
	assert_true(calls >= 1 + 1 + 5 * t.calls);
	assert_true(t.p50 > 0);
	assert_true(t.p50 <= t.p95 && t.p95 <= t.p99);
	assert_true(t.mean > 0);
	assert_int_equal(profile_time(count_call, (void *)&calls, 0, 5, &t), -EINVAL);
	assert_int_equal(profile_time(count_call, (void *)&calls, 0.001, 0, &t), -EINVAL);
}

static void
test_config_check(void **state)
{
	static const struct {
		const char *what;
		const char *message;
	} cases[] = {
		{ "T0", "--T: sequence lengths must be at least 1" },
		{ "noT", "--T: give 1 to 64" },
		{ "heads3", "--heads 3 does not divide --d-model 64" },
		{ "heads0", "--heads must be at least 1" },
		{ "dmodel0", "--d-model must be at least 1" },
		{ "proj", "always profiled" },
		{ "nokernel", "--kernel: give at least one" },
		{ "time0", "--min-time: 0 is not a time" },
		{ "time61", "--min-time: 61 is not a time" },
		{ "timenan", "--min-time: nan is not a time" },
		{ "reps0", "--reps: 0 is not 1 to 100000" },
		{ "huge", "the arrays and tiles need" },
		{ NULL, NULL },
	};
	struct profile_config c;
	char err[512];

	(void)state;
	profile_config_init(&c);
	assert_int_equal(profile_config_check(&c, err, sizeof(err)), 0);
	assert_int_equal(c.nT, 4);
	assert_int_equal(c.T[3], 512);
	assert_int_equal(c.nkernels, 2);
	for (int i = 0; cases[i].what; i++) {
		const char *w = cases[i].what;

		profile_config_init(&c);
		if (!strcmp(w, "T0"))
			c.T[2] = 0;
		else if (!strcmp(w, "noT"))
			c.nT = 0;
		else if (!strcmp(w, "heads3"))
			c.heads = 3;
		else if (!strcmp(w, "heads0"))
			c.heads = 0;
		else if (!strcmp(w, "dmodel0"))
			c.d_model = 0;
		else if (!strcmp(w, "proj"))
			c.kernels[1] = ATTN_PROJ;
		else if (!strcmp(w, "nokernel"))
			c.nkernels = 0;
		else if (!strcmp(w, "time0"))
			c.min_time = 0;
		else if (!strcmp(w, "time61"))
			c.min_time = 61;
		else if (!strcmp(w, "timenan"))
			c.min_time = NAN;
		else if (!strcmp(w, "reps0"))
			c.reps = 0;
		else if (!strcmp(w, "huge"))
			c.T[0] = 1000000;
		err[0] = '\0';
		assert_int_not_equal(profile_config_check(&c, err, sizeof(err)), 0);
		if (!strstr(err, cases[i].message))
			fail_msg("%s: message '%s' lacks '%s'", w, err, cases[i].message);
	}
}

struct collected {
	struct profile_row rows[64];
	int n;
	int stop_after; /* emit returns 7 after this many rows; 0: never */
};

static int
collect(const struct profile_row *r, void *ctx)
{
	struct collected *c = ctx;

	c->rows[c->n++] = *r;
	return c->stop_after && c->n >= c->stop_after ? 7 : 0;
}

/* DRAM bytes of phase (NULL: all but the flush) in a traced run of k made here. */
static uint64_t
simulated(const struct profile_config *p, uint64_t T, enum attn_kernel k, const char *phase)
{
	struct attn_config cfg = profile_attn_config(p, T, k);
	struct sim_result r;
	uint64_t sum = 0;
	char err[256];

	assert_int_equal(sim_kernel(&cfg, &p->spec, true, p->seed, false, &r, err, sizeof(err)), 0);
	for (unsigned i = 0; i < cache_phase_count(r.cache); i++) {
		const char *name = cache_phase_name(r.cache, i);

		if (phase ? strcmp(name, phase) == 0 : strcmp(name, "flush") != 0)
			sum += cache_phase_traffic(r.cache, i)->read_bytes +
			       cache_phase_traffic(r.cache, i)->write_bytes;
	}
	sim_result_finish(&r);
	return sum;
}

static void
test_run(void **state)
{
	static const char *const want[] = { "proj qkv_proj",    "proj out_proj", "naive scores",
					    "naive softmax",    "naive av",      "naive layer",
					    "flash1 attention", "flash1 layer",  NULL };
	struct profile_config p;
	struct collected *got = calloc(1, sizeof(*got));
	char err[512];
	double layer_flops = 0;
	uint64_t layer_bytes = 0;

	(void)state;
	profile_config_init(&p);
	p.T[0] = 48;
	p.nT = 1;
	p.d_model = 32;
	p.heads = 2;
	p.kernels[0] = ATTN_NAIVE;
	p.kernels[1] = ATTN_FLASH1;
	p.min_time = 0.0005;
	p.reps = 3;
	assert_int_equal(spec_parse("L1=4K:4:64,L2=32K:8:64", &p.spec, err, sizeof(err)), 0);
	assert_int_equal(profile_config_check(&p, err, sizeof(err)), 0);
	assert_int_equal(profile_run(&p, collect, got, err, sizeof(err)), 0);
	assert_int_equal(got->n, 8);
	for (int i = 0; i < got->n; i++) {
		const struct profile_row *r = &got->rows[i];
		struct attn_config cfg = profile_attn_config(&p, 48, r->kernel);
		char name[64];

		snprintf(name, sizeof(name), "%s %s", attn_kernel_name(r->kernel), r->op);
		assert_string_equal(name, want[i]);
		assert_int_equal(r->T, 48);
		assert_true(r->time.p50 > 0 && r->time.p50 <= r->time.p95);
		assert_int_equal(r->time.repetitions, 3);
		if (!strcmp(r->op, "layer")) {
			/* qkv_proj + the kernel's ops + out_proj */
			double f = got->rows[0].flops + got->rows[1].flops + layer_flops;
			uint64_t b =
				got->rows[0].dram_bytes + got->rows[1].dram_bytes + layer_bytes;

			assert_true(r->flops == f);
			assert_int_equal(r->dram_bytes, b);
			assert_int_equal(r->time.calls, 0);
			layer_flops = 0;
			layer_bytes = 0;
			continue;
		}
		assert_true(r->time.calls >= 1);
		if (!strcmp(r->op, "attention")) {
			assert_true(r->flops == attn_flops(&cfg));
			assert_int_equal(r->dram_bytes, simulated(&p, 48, r->kernel, NULL));
		} else {
			assert_true(r->flops == attn_phase_flops(&cfg, r->op));
			assert_int_equal(r->dram_bytes, simulated(&p, 48, r->kernel, r->op));
		}
		assert_true(r->dram_bytes > 0);
		if (r->kernel != ATTN_PROJ) {
			layer_flops += r->flops;
			layer_bytes += r->dram_bytes;
		}
	}
	/* emit's nonzero answer stops the run. */
	memset(got, 0, sizeof(*got));
	got->stop_after = 3;
	assert_int_equal(profile_run(&p, collect, got, err, sizeof(err)), 7);
	assert_int_equal(got->n, 3);
	free(got);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantiles),
		cmocka_unit_test(test_timing),
		cmocka_unit_test(test_config_check),
		cmocka_unit_test(test_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
