/*
 * The ceilings module: array sizes against the LLC and the memory available (with the notes
 * that say what was shrunk), the JSON document read back, bad documents named by key, and
 * both measurements run small (positive numbers; no timing is asserted).
 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "measure/ceilings.h"
#include "tests/unit.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

struct size_case {
	uint64_t llc, mem;
	bool quick;
	uint64_t bytes;
	const char *note; /* substring of the note; "" for an empty note */
};

static void
test_array_bytes(void **state)
{
	static const struct size_case cases[] = {
		/* this VM: 256 MiB L3 in the host preset, 23 GiB available */
		{ 256 * MiB, 23 * GiB, false, 1088 * MiB, "" },
		{ 6 * MiB, 16 * GiB, false, 51 * MiB / 2, "" },
		/* three arrays at most half the memory */
		{ 256 * MiB, 3 * GiB, false, 512 * MiB,
		  "memory is short: MemAvailable is 3.0 GiB" },
		/* quick: 256 MiB for the three */
		{ 256 * MiB, 23 * GiB, true, (256 * MiB / 3) & ~UINT64_C(4095),
		  "not a DRAM bandwidth" },
		{ 8 * MiB, 23 * GiB, true, 32 * MiB, "quick: arrays of 32.0 MiB (4.00x" },
		{ 0, 23 * GiB, false, 4096, "" },
		{ 0, 0, false, 0, NULL },
	};
	char note[512];

	(void)state;
	for (const struct size_case *c = cases; c->note; c++) {
		uint64_t b = ceilings_array_bytes(c->llc, c->mem, c->quick, note, sizeof(note));

		if (b != c->bytes)
			fail_msg("llc %llu mem %llu quick %d: %llu bytes, expected %llu",
				 (unsigned long long)c->llc, (unsigned long long)c->mem, c->quick,
				 (unsigned long long)b, (unsigned long long)c->bytes);
		if (c->note[0] ? !strstr(note, c->note) : note[0] != '\0')
			fail_msg("llc %llu quick %d: note '%s', expected '%s'",
				 (unsigned long long)c->llc, c->quick, note, c->note);
		assert_int_equal(b % 4096, 0);
		assert_true(b * 3 <= c->mem / 2 || b == 4096);
	}
	/* A NULL note is allowed. */
	assert_int_equal(ceilings_array_bytes(256 * MiB, 23 * GiB, false, NULL, 0), 1088 * MiB);
}

static struct ceilings
sample(void)
{
	struct ceilings c = { .cores = 2,
			      .quick = true,
			      .array_bytes = 89477120,
			      .bw_repetitions = 3,
			      .bw_threads = 2,
			      .one_core_bytes_per_s = 1.25e10,
			      .all_cores_bytes_per_s = 2.5e10,
			      .flops_threads = 2,
			      .one_core_flops_per_s = 9.5e10,
			      .all_cores_flops_per_s = 1.9e11 };

	snprintf(c.memsim_version, sizeof(c.memsim_version), "0.1.0");
	snprintf(c.date, sizeof(c.date), "2026-11-22T12:00:00Z");
	snprintf(c.cpu, sizeof(c.cpu), "Intel(R) Xeon(R) Processor");
	snprintf(c.bw_method, sizeof(c.bw_method), "triad");
	snprintf(c.flops_method, sizeof(c.flops_method), "fma");
	snprintf(c.isa, sizeof(c.isa), "avx2+fma");
	return c;
}

static void
test_json_round_trip(void **state)
{
	struct ceilings c = sample(), back;
	cJSON *o = ceilings_json(&c);
	char err[256];

	(void)state;
	assert_int_equal(ceilings_from_json(o, &back, err, sizeof(err)), 0);
	assert_string_equal(back.cpu, c.cpu);
	assert_string_equal(back.date, c.date);
	assert_string_equal(back.isa, c.isa);
	assert_string_equal(back.bw_method, "triad");
	assert_int_equal(back.cores, 2);
	assert_true(back.quick);
	assert_int_equal(back.array_bytes, c.array_bytes);
	assert_true(back.all_cores_bytes_per_s == c.all_cores_bytes_per_s);
	assert_true(back.one_core_flops_per_s == c.one_core_flops_per_s);
	assert_int_equal(back.flops_threads, 2);
	/* Exactly the documented keys. */
	{
		static const char *const top[] = { "memsim_version", "date",  "cpu",
						   "cores",          "quick", "bandwidth",
						   "peak_flops",     NULL };
		static const char *const bw[] = { "method",
						  "array_bytes",
						  "repetitions",
						  "one_core_bytes_per_s",
						  "all_cores_bytes_per_s",
						  "threads",
						  NULL };
		static const char *const fl[] = {
			"method",  "isa", "one_core_flops_per_s", "all_cores_flops_per_s",
			"threads", NULL
		};
		int n = 0;

		for (const char *const *k = top; *k; k++, n++)
			assert_non_null(cJSON_GetObjectItemCaseSensitive(o, *k));
		assert_int_equal(cJSON_GetArraySize(o), n);
		n = 0;
		for (const char *const *k = bw; *k; k++, n++)
			assert_non_null(cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItem(o, "bandwidth"), *k));
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "bandwidth")), n);
		n = 0;
		for (const char *const *k = fl; *k; k++, n++)
			assert_non_null(cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItem(o, "peak_flops"), *k));
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "peak_flops")), n);
	}
	cJSON_Delete(o);
}

static void
test_json_damaged(void **state)
{
	static const struct {
		const char *remove, *from; /* key removed from object `from` (NULL: top) */
		const char *message;
	} cases[] = {
		{ "cpu", NULL, "'cpu' is missing" },
		{ "quick", NULL, "'quick' is missing" },
		{ "array_bytes", "bandwidth", "'bandwidth.array_bytes' is missing" },
		{ "isa", "peak_flops", "'peak_flops.isa' is missing" },
		{ "peak_flops", NULL, "'peak_flops' is missing" },
		{ NULL, NULL, NULL },
	};
	struct ceilings c = sample(), back;
	char err[256];

	(void)state;
	for (int i = 0; cases[i].remove; i++) {
		cJSON *o = ceilings_json(&c);
		cJSON *from = cases[i].from ? cJSON_GetObjectItem(o, cases[i].from) : o;

		cJSON_DeleteItemFromObject(from, cases[i].remove);
		assert_int_equal(ceilings_from_json(o, &back, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i].message))
			fail_msg("message '%s' lacks '%s'", err, cases[i].message);
		cJSON_Delete(o);
	}
	/* A string where a number goes. */
	{
		cJSON *o = ceilings_json(&c);

		cJSON_ReplaceItemInObject(o, "cores", cJSON_CreateString("two"));
		assert_int_equal(ceilings_from_json(o, &back, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "'cores'"));
		cJSON_Delete(o);
	}
}

static void
test_measure_small(void **state)
{
	double one = 0, all = 0;
	char err[256];
	const char *isa = ceilings_isa();

	(void)state;
	assert_int_equal(ceilings_bandwidth(1 * MiB, 2, 2, &one, &all, err, sizeof(err)), 0);
	assert_true(one > 0 && isfinite(one));
	assert_true(all > 0 && isfinite(all));
	/* an array that is not a whole number of pages or of thread slices */
	assert_int_equal(ceilings_bandwidth(12345 * 8, 1, 3, &one, &all, err, sizeof(err)), 0);
	assert_int_equal(ceilings_bandwidth(1 * MiB, 0, 2, &one, &all, err, sizeof(err)), -EINVAL);
	assert_int_equal(ceilings_peak_flops(0.001, 2, 2, &one, &all, err, sizeof(err)), 0);
	assert_true(one > 0 && isfinite(one));
	assert_true(all > 0 && isfinite(all));
	assert_int_equal(ceilings_peak_flops(0, 2, 2, &one, &all, err, sizeof(err)), -EINVAL);
	assert_true(strcmp(isa, "avx2+fma") == 0 || strcmp(isa, "sse2") == 0 ||
		    strcmp(isa, "c") == 0);
	assert_true(ceilings_cores() >= 1);
	assert_true(ceilings_mem_available() > 0);
	{
		char cpu[256];

		assert_true(strlen(ceilings_cpu_model(cpu, sizeof(cpu))) > 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_array_bytes),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_json_damaged),
		cmocka_unit_test(test_measure_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
